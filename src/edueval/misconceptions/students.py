"""Simulated students who hold mal-rules (P4's synthetic classroom, P5's ``turing simulate``).

A :class:`Student` has an ability ``θ`` (logits, the IRT scale) and a set of mal-rules. How they
answer is set by a :class:`ResponseModel` with two parameters, ``p_rule`` (consistency: the
probability of acting on a held, relevant mal-rule) and ``discrimination`` ``a``.

Multiple choice (:func:`choose_answer`, :func:`simulate_responses`; closed form in
:func:`choice_probabilities`). Let ``H`` be the item's distractors whose ``malrule_X`` the student
holds (usually zero or one of them).

1. If ``H`` is not empty, with probability ``p_rule`` the student picks a letter of ``H``
   (uniformly if several): systematic errors are applied consistently, whatever the ability.
2. Otherwise the student solves the item correctly with the 2PL probability
   ``σ(a (θ − b))``, ``σ`` the logistic function and ``b`` the item's ``difficulty``;
3. and otherwise guesses among the three distractors uniformly.

So ``P(X) = p_rule·[X ∈ H]/|H| + (1 − p_rule·[H ≠ ∅])·(σ·[X = key] + (1 − σ)/3·[X ≠ key])``.

Open-ended answers (:func:`open_answer`, P5's Phase 1): the same three steps on a problem - a
held rule that errs on the problem is applied with probability ``p_rule``; otherwise the answer is
correct with probability ``σ(a (θ − b))``; otherwise it is a careless *slip* - a nearby wrong
number that no mal-rule of the family produces (so it does not look like a misconception).

Populations (:func:`sample_students`): abilities are normal, and each student holds each rule
``r`` independently with probability ``rule_frequencies[r]`` - the known population frequencies
that P5's test must recover.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit

from ..tables import Table, takes_tables
from .items import LETTERS
from .library import RULES, applicable_rules, correct_answer, get_family, rule_answer
from .model import Problem
from .values import format_value, parse_value

__all__ = [
    "ResponseModel",
    "Student",
    "choice_probabilities",
    "choose_answer",
    "open_answer",
    "sample_students",
    "simulate_responses",
    "slip_answer",
]


@dataclass(frozen=True)
class Student:
    """A simulated student: id, ability θ (logits) and the mal-rules they hold."""

    id: str
    ability: float
    malrules: tuple[str, ...] = ()


@dataclass(frozen=True)
class ResponseModel:
    """How simulated students answer (see the module docstring).

    ``p_rule``: probability of acting on a held mal-rule that bears on the question (default
    0.9). ``discrimination``: the 2PL slope ``a`` of ``P(correct) = σ(a (θ − b))``.
    """

    p_rule: float = 0.9
    discrimination: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.p_rule <= 1.0:
            raise ValueError("p_rule must be in [0, 1]")
        if self.discrimination <= 0:
            raise ValueError("discrimination must be positive")

    def p_solve(self, ability: float | np.ndarray, difficulty: float) -> float | np.ndarray:
        """``σ(a (θ − b))``: probability of solving when no held mal-rule intervenes."""
        return expit(self.discrimination * (np.asarray(ability, dtype=float) - difficulty))


def sample_students(
    n: int,
    rng: np.random.Generator,
    rule_frequencies: Mapping[str, float],
    *,
    ability_mean: float = 0.0,
    ability_sd: float = 1.0,
) -> list[Student]:
    """``n`` students: ability ``N(ability_mean, ability_sd²)``; rule ``r`` held independently
    with probability ``rule_frequencies[r]`` (rules not listed are never held). Ids are ``s0``,
    ``s1``, ... zero-padded to equal width; each student's rules are in catalogue order."""
    for r, f in rule_frequencies.items():
        if r not in RULES:
            raise ValueError(f"unknown mal-rule {r!r} in rule_frequencies")
        if not 0.0 <= float(f) <= 1.0:
            raise ValueError(f"frequency of {r!r} must be in [0, 1], got {f}")
    rules = [r for r in RULES if r in rule_frequencies]
    freqs = np.array([float(rule_frequencies[r]) for r in rules])
    ability = rng.normal(ability_mean, ability_sd, size=n)
    holds = rng.random((n, len(rules))) < freqs
    width = len(str(max(n - 1, 0)))
    return [
        Student(
            id=f"s{i:0{width}d}",
            ability=float(ability[i]),
            malrules=tuple(r for r, h in zip(rules, holds[i], strict=True) if h),
        )
        for i in range(n)
    ]


def _rule_of(item: Mapping[str, Any], letter: str) -> str:
    v = item.get(f"malrule_{letter}", "")
    return v if isinstance(v, str) else ""  # NaN from an empty CSV cell


def _key_index(item: Mapping[str, Any]) -> int:
    key = str(item["answer"]).strip().upper()
    if key not in LETTERS:
        raise ValueError(f"item {item.get('id', '?')}: answer must be one of A-D, got {key!r}")
    return LETTERS.index(key)


def _difficulty(item: Mapping[str, Any]) -> float:
    b = item.get("difficulty", 0.0)
    b = 0.0 if b is None or b == "" else float(b)
    return 0.0 if np.isnan(b) else b


def _held_matrix(
    students: Sequence[Student], item: Mapping[str, Any], key: int, problem: Problem | None = None
) -> np.ndarray:
    """``held[i, j]``: distractor ``j`` is one that student ``i``'s mal-rules lead to.

    By label (``malrule_X`` is a rule the student holds, or rules joined by ``+`` that the student
    all holds) or, given the ``problem``, by value (the
    choice equals the answer of a rule the student holds that errs on the problem) - for choices
    written outside the library, such as P5's AI and human distractors.
    """
    if problem is None:
        # a composed distractor (hub items: "rule_a+rule_b") is held by a student holding each
        rules = [set(_rule_of(item, x).split("+")) - {""} for x in LETTERS]
        rows = [
            [j != key and bool(r) and r <= set(s.malrules) for j, r in enumerate(rules)]
            for s in students
        ]
    else:
        kind = get_family(problem.family).kind
        values = [parse_value(str(item[f"choice_{x}"]), kind) for x in LETTERS]
        errs = applicable_rules(problem)
        rule_value = {r: parse_value(rule_answer(problem, r) or "", kind) for r in errs}
        rows = []
        for s in students:
            mine = {rule_value[r] for r in s.malrules if r in rule_value}
            rows.append([j != key and v is not None and v in mine for j, v in enumerate(values)])
    return np.array(rows, dtype=bool).reshape(len(students), len(LETTERS))


def _choose(
    held: np.ndarray,
    key: int,
    p_solve: np.ndarray,
    p_rule: float,
    u: np.ndarray,
) -> np.ndarray:
    """Letters (indices) chosen by ``m`` students; ``u`` holds 4 uniforms per student."""
    m = held.shape[0]
    n_held = held.sum(axis=1)
    # 1. act on a held rule: the floor(u·|H|)-th held letter
    kth = np.minimum((u[:, 1] * np.maximum(n_held, 1)).astype(int), np.maximum(n_held - 1, 0))
    rule_pick = np.argmax(np.cumsum(held, axis=1) > kth[:, None], axis=1)
    use_rule = (n_held > 0) & (u[:, 0] < p_rule)
    # 3. a uniformly chosen distractor: the floor(3u)-th letter other than the key
    d = np.minimum((u[:, 3] * 3).astype(int), 2)
    guess = d + (d >= key)
    out = np.where(u[:, 2] < p_solve, key, guess)  # 2. solve, else guess
    out = np.where(use_rule, rule_pick, out)
    return out.astype(int) if m else np.empty(0, dtype=int)


def choice_probabilities(
    student: Student,
    item: Mapping[str, Any],
    model: ResponseModel = ResponseModel(),
    problem: Problem | None = None,
) -> dict[str, float]:
    """The model's exact probability of each letter for this student and item (``problem`` as in
    :func:`choose_answer`)."""
    key = _key_index(item)
    held = _held_matrix([student], item, key, problem)[0]
    h = int(held.sum())
    sig = float(model.p_solve(student.ability, _difficulty(item)))
    rest = 1.0 - (model.p_rule if h else 0.0)
    return {
        x: (model.p_rule * held[j] / h if h else 0.0)
        + rest * (sig if j == key else (1.0 - sig) / 3.0)
        for j, x in enumerate(LETTERS)
    }


def choose_answer(
    student: Student,
    item: Mapping[str, Any],
    rng: np.random.Generator,
    model: ResponseModel = ResponseModel(),
    problem: Problem | None = None,
) -> str:
    """The letter a student picks on an item: a row of :func:`~.items.generate_items`, or any
    mapping with ``answer``, ``choice_A..D``, ``malrule_A..D`` and optionally ``difficulty``
    (missing: 0).

    Which distractors the student's rules lead to is read from the ``malrule_X`` labels, or - when
    the item's ``problem`` is given - found by value: a choice equal to the answer of a rule the
    student holds. Pass the problem when distractors come from elsewhere (P5's AI, human and
    random distractors). Uses exactly four uniforms from ``rng`` per call."""
    key = _key_index(item)
    held = _held_matrix([student], item, key, problem)
    p = np.atleast_1d(model.p_solve(student.ability, _difficulty(item)))
    return LETTERS[int(_choose(held, key, p, model.p_rule, rng.random((1, 4)))[0])]


@takes_tables(
    items=Table(
        "items", ("id", "answer"), ("difficulty", *(f"malrule_{x}" for x in "ABCD")), paths=False
    )
)
def simulate_responses(
    students: Sequence[Student],
    items: pd.DataFrame,
    rng: np.random.Generator,
    model: ResponseModel = ResponseModel(),
) -> pd.DataFrame:
    """Every student answers every item: a long table ``student, item, choice, correct, malrule``
    (``malrule`` = the rule behind the chosen distractor, empty if correct), item by item in the
    given order, vectorised over students."""
    ability = np.array([s.ability for s in students], dtype=float)
    ids = np.array([s.id for s in students], dtype=object)
    frames = []
    for item in items.to_dict("records"):
        key = _key_index(item)
        held = _held_matrix(students, item, key)
        p = model.p_solve(ability, _difficulty(item))
        picks = _choose(held, key, np.atleast_1d(p), model.p_rule, rng.random((len(students), 4)))
        letters = np.array(LETTERS, dtype=object)[picks]
        rules = np.array([_rule_of(item, x) for x in LETTERS], dtype=object)[picks]
        frames.append(
            pd.DataFrame(
                {
                    "student": ids,
                    "item": item["id"],
                    "choice": letters,
                    "correct": (picks == key).astype(int),
                    "malrule": rules,
                }
            )
        )
    cols = ["student", "item", "choice", "correct", "malrule"]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=cols)


def slip_answer(problem: Problem, rng: np.random.Generator) -> str:
    """A careless wrong answer near the correct one that no rule of the family produces (a
    different listed number for "which is greatest"): the slip of :func:`open_answer`, and a
    plausible "random" distractor that targets no misconception (P5)."""
    fam = get_family(problem.family)
    right = correct_answer(problem)
    taken = {right} | {rule_answer(problem, r) for r in fam.rules} - {None}
    if fam.slip is not None:
        return format_value(fam.slip(problem.params, rng), fam.kind)
    value = parse_value(right, fam.kind)
    assert value is not None
    if fam.kind == "fraction" and value.denominator != 1:
        steps = [Fraction(s, value.denominator) for s in (1, -1, 2, -2)]
    elif fam.kind in ("decimal", "money"):
        text = right.split(".")
        unit = Fraction(1, 10 ** len(text[1])) if len(text) == 2 else Fraction(1)
        steps = [unit * s for s in (1, -1, 10, -10, 2, -2)]
    else:
        steps = [Fraction(s) for s in (1, -1, 10, -10, 2, -2)]
    candidates = []
    for s in steps:
        v = value + s
        if v > 0 or value <= 0:
            txt = format_value(v, fam.kind)
            if txt not in taken:
                candidates.append(txt)
    if not candidates:  # pragma: no cover - six nearby numbers cannot all be rule answers
        candidates = [format_value(value + 100, fam.kind)]
    return candidates[int(rng.integers(len(candidates)))]


def open_answer(
    student: Student,
    problem: Problem,
    rng: np.random.Generator,
    model: ResponseModel = ResponseModel(),
) -> str:
    """A student's free-response answer to a problem (P5 Phase 1), in canonical form.

    With probability ``p_rule`` the answer of one of the student's rules that errs on this problem
    (uniformly if several), otherwise correct with probability ``σ(a (θ − b))``, otherwise a slip.
    Uses exactly three uniforms from ``rng`` per call, plus one for a slip.
    """
    held = [r for r in applicable_rules(problem) if r in student.malrules]
    u = rng.random(3)
    if held and u[0] < model.p_rule:
        rule = held[min(int(u[1] * len(held)), len(held) - 1)]
        answer = rule_answer(problem, rule)
        assert answer is not None
        return answer
    if u[2] < float(model.p_solve(student.ability, problem.difficulty)):
        return correct_answer(problem)
    return slip_answer(problem, rng)
