"""Mal-rules, the questions they generate, and the simulated students who hold them.

One library shared by three protocols: P3's ``malalgo generate`` (MalAlgoQA-format items whose
distractors and rationales come from mal-rules), P4's synthetic classroom (items plus simulated
students answering them) and P5's ``turing simulate`` (students holding known mal-rules; an
oracle tutor that infers a rule from a Phase-1 error and targets it on a related question).

Vocabulary (:mod:`.model`): a *mal-rule* is a named systematic error; a *family* is a kind of
problem with a seeded generator, a correct solver and, for each mal-rule that applies, the
deterministic wrong answer and the flawed reasoning; a *problem* is one instance. Every family
has at least three mal-rules, so every problem has three distractors from distinct rules; most
have five to seven, from which :mod:`.balance` chooses each item's three so that no surface
feature marks the key over a generated set (issue 18).

Python API::

    from edueval.misconceptions import (
        RULES, FAMILIES, rules_frame,                       # the library
        sample_problem, build_problem,                      # problems
        correct_answer, rule_answer, applicable_rules, rationale, is_correct, diagnose,
        generate_items, make_item, problem_from_item,       # MalAlgoQA-format items
        Student, ResponseModel, sample_students,            # simulated students
        choose_answer, choice_probabilities, simulate_responses, open_answer, slip_answer,
    )

    items = generate_items(200, seed=1, grades=[6, 7])
    rng = np.random.default_rng(1)
    students = sample_students(100, rng, {"add_across": 0.3, "left_to_right": 0.2})
    responses = simulate_responses(students, items, rng)
"""

from .items import ITEM_COLUMNS, LETTERS, generate_items, make_item, problem_from_item
from .library import (
    FAMILIES,
    RULES,
    applicable_rules,
    baseline_difficulty,
    build_problem,
    correct_answer,
    diagnose,
    eligible_families,
    is_correct,
    rationale,
    rule_answer,
    rules_frame,
    sample_problem,
)
from .model import CONTENTS, Family, MalRule, Problem
from .students import (
    ResponseModel,
    Student,
    choice_probabilities,
    choose_answer,
    open_answer,
    sample_students,
    simulate_responses,
    slip_answer,
)
from .values import format_value, parse_value

__all__ = [
    "CONTENTS",
    "FAMILIES",
    "ITEM_COLUMNS",
    "LETTERS",
    "RULES",
    "Family",
    "MalRule",
    "Problem",
    "ResponseModel",
    "Student",
    "applicable_rules",
    "baseline_difficulty",
    "build_problem",
    "choice_probabilities",
    "choose_answer",
    "correct_answer",
    "diagnose",
    "eligible_families",
    "format_value",
    "generate_items",
    "is_correct",
    "make_item",
    "open_answer",
    "parse_value",
    "problem_from_item",
    "rationale",
    "rule_answer",
    "rules_frame",
    "sample_problem",
    "sample_students",
    "simulate_responses",
    "slip_answer",
]
