"""Question-variant items (``generate_items(..., adversarial="variants")``; issue 34): four
questions over the same numbers whose answers are each other's classic errors, so the option set
does not depend on which variant is asked."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from edueval.malalgo.data import read_questions
from edueval.misconceptions import generate_items, variants
from edueval.misconceptions.items import ITEM_COLUMNS, LETTERS, problem_from_item
from edueval.misconceptions.library import (
    FAMILIES,
    RULES,
    VARIANT_FAMILIES,
    build_problem,
    correct_answer,
    rationale,
    rule_answer,
)
from edueval.misconceptions.students import ResponseModel, Student, choose_answer
from edueval.misconceptions.values import parse_value

#: hand-worked: (family, numbers, the four variants' questions' key words, answers in variant
#: order)
HAND = [
    # radius 10: area 100π, circumference 20π; diameter 10: r = 5, area 25π, circumference 10π
    ("circle_measure", {"size": 10, "unit": "cm"},
     ["radius of 10 cm. What is its area", "diameter of 10 cm. What is its area",
      "radius of 10 cm. What is its circumference", "diameter of 10 cm. What is its circumference"],
     ["100π", "25π", "20π", "10π"]),
    # cylinder r = 6, h = 10: 360π; r = 3: 90π; cones a third: 120π, 30π
    ("cylinder_cone_volume", {"size": 6, "height": 10, "unit": "m"},
     ["A cylinder has a base radius of 6 m", "A cylinder has a base diameter of 6 m",
      "A cone has a base radius of 6 m", "A cone has a base diameter of 6 m"],
     ["360π", "90π", "120π", "30π"]),
    # 3x + 6 = 45: 13; 3x − 6 = 45: 17; 3(x + 6) = 45: 15 − 6 = 9; 3(x − 6) = 45: 21
    ("linear_equation_forms", {"a": 3, "b": 6, "c": 45, "var": "x"},
     ["3x + 6 = 45", "3x − 6 = 45", "3(x + 6) = 45", "3(x − 6) = 45"],
     ["13", "17", "9", "21"]),
    # 12 + 3 × 7 − 4 = 29; (12 + 3) × 7 − 4 = 101; 12 + 3 × (7 − 4) = 21; 15 × 3 = 45
    ("order_of_operations_grouping", {"a": 12, "b": 3, "c": 7, "d": 4},
     ["12 + 3 × 7 − 4?", "(12 + 3) × 7 − 4?", "12 + 3 × (7 − 4)?", "(12 + 3) × (7 − 4)?"],
     ["29", "101", "21", "45"]),
    # 40 -> 50: up 10/40 = 25%; 50 -> 40: down 10/50 = 20%; 50 of 40: 125%; 40 of 50: 80%
    ("percent_compare", {"low": 40, "high": 50, "context": 0},
     ["rose from $40 to $50", "fell from $50 to $40", "What percent of $40 is $50?",
      "What percent of $50 is $40?"],
     ["25%", "20%", "125%", "80%"]),
]  # fmt: skip


def _problem(family: str, numbers: dict, v: int):
    return build_problem(family, {**numbers, "variant": v})


@pytest.mark.parametrize(("family", "numbers", "words", "answers"), HAND)
def test_hand_worked_variants(family, numbers, words, answers):
    for v, (w, a) in enumerate(zip(words, answers, strict=True)):
        p = _problem(family, numbers, v)
        assert w in p.question, (p.question, w)
        assert correct_answer(p) == a
        # every other variant's answer is reached by the rule(s) the label names
        labels = variants.VARIANTS[family].labels[v]
        for j, lab in enumerate(labels):
            if lab and "+" not in lab:
                assert rule_answer(p, lab) == answers[j], (v, j, lab)
                assert rationale(p, lab) == rationale(_problem(family, numbers, j))


@pytest.mark.parametrize(("family", "numbers", "words", "answers"), HAND)
def test_option_set_is_the_same_whichever_variant_is_asked(family, numbers, words, answers):
    rng = np.random.default_rng(0)
    sets, keys, questions = [], [], set()
    for v in range(4):
        row = variants.row(_problem(family, numbers, v), rng, "q")
        opts = {(row[f"choice_{x}"], row[f"rationale_{x}"]) for x in LETTERS}
        sets.append(frozenset(opts))
        keys.append(row[f"choice_{row['answer']}"])
        questions.add(row["question"])
    assert len(set(sets)) == 1 and len(sets[0]) == 4  # same values and reasoning, all distinct
    assert {c for c, _ in sets[0]} == set(answers) and keys == answers
    assert len(questions) == 4  # only the question differs


@pytest.fixture(scope="module")
def items() -> pd.DataFrame:
    return generate_items(240, seed=5, adversarial="variants")


def test_items_keep_every_promise(items):
    assert list(items.columns) == ITEM_COLUMNS and set(items["family"]) == set(VARIANT_FAMILIES)
    for row in items.to_dict("records"):
        problem = problem_from_item(row)
        fam = VARIANT_FAMILIES[row["family"]]
        opts = variants.option_values(problem)
        labels = variants.VARIANTS[row["family"]].labels[problem.params["variant"]]
        choices = [row[f"choice_{x}"] for x in LETTERS]
        texts = [row[f"rationale_{x}"] for x in LETTERS]
        assert len(set(choices)) == 4 and len(set(texts)) == 4
        assert row[f"choice_{row['answer']}"] == correct_answer(problem)
        assert row[f"malrule_{row['answer']}"] == ""
        for x in LETTERS:
            j = texts.index(row[f"rationale_{x}"])
            value, text = next((v, t) for v, t in opts if t == row[f"rationale_{x}"])
            # the option's value is its procedure's, and its label the rule(s) that lead there
            assert parse_value(row[f"choice_{x}"], fam.kind) == value, (row["id"], j)
            k = [t for _, t in opts].index(text)
            assert row[f"malrule_{x}"] == labels[k]
            for rule in filter(None, labels[k].split("+")):
                assert rule in RULES
        # the same numbers under every variant give the same options
        others = [variants.option_values(build_problem(row["family"], {**problem.params,
                  "variant": v})) for v in range(4)]  # fmt: skip
        assert all(o == opts for o in others)


def test_asked_variants_are_herded_to_a_quarter_per_family(items):
    asked = [problem_from_item(r).params["variant"] for r in items.to_dict("records")]
    counts = Counter(zip(items["family"], asked, strict=True))
    for fam in VARIANT_FAMILIES:
        per = [counts[(fam, v)] for v in range(4)]
        m = int((items["family"] == fam).sum())
        assert max(per) - min(per) <= 1 and sum(per) == m, (fam, per)
    # key letters uniform enough: each letter 60 ± 25 of 240
    letters = items["answer"].value_counts()
    assert set(letters.index) == set(LETTERS) and (letters - 60).abs().max() < 25


def test_numbers_do_not_depend_on_the_asked_variant(monkeypatch):
    """The numbers are drawn before the variant is dealt: with every item forced to ask
    variant 0 the numbers are the same, item by item; and all four answers differ."""

    def numbers(df: pd.DataFrame) -> list[dict]:
        out = []
        for row in df.to_dict("records"):
            params = problem_from_item(row).params
            out.append({k: v for k, v in params.items() if k != "variant"})
        return out

    dealt = generate_items(40, seed=6, adversarial="variants")
    monkeypatch.setattr(variants.Herd, "next", lambda self, family, rng: 0)
    forced = generate_items(40, seed=6, adversarial="variants")
    assert numbers(dealt) == numbers(forced)
    assert {problem_from_item(r).params["variant"] for r in forced.to_dict("records")} == {0}
    assert len({problem_from_item(r).params["variant"] for r in dealt.to_dict("records")}) == 4
    for row, nums in zip(dealt.to_dict("records"), numbers(dealt), strict=True):
        fam = VARIANT_FAMILIES[row["family"]]
        assert len({Fraction(fam.solve({**nums, "variant": v})) for v in range(4)}) == 4


def test_reproducible_and_prefix_stable(items):
    pd.testing.assert_frame_equal(
        items.head(30), generate_items(30, seed=5, adversarial="variants")
    )
    assert not items["question"].equals(generate_items(240, seed=6, adversarial="variants")
                                        ["question"])  # fmt: skip


def test_a_student_holding_a_confusion_picks_its_option(items):
    model = ResponseModel(p_rule=1.0)
    rng = np.random.default_rng(1)
    checked = 0
    for row in items.head(60).to_dict("records"):
        problem = problem_from_item(row)
        for x in LETTERS:
            label = row[f"malrule_{x}"]
            if not label:
                continue
            rules = tuple(label.split("+"))
            student = Student("s", -3.0, rules)
            # by label; and, for a single rule, by value from the family's own rule
            picked = choose_answer(student, row, rng, model)
            if len(rules) == 1:
                assert picked == x, (row["id"], label)
                assert choose_answer(student, row, rng, model, problem=problem) == x
            else:  # holding both rules leads to the composed option or to one of its parts
                held = {y for y in LETTERS if row[f"malrule_{y}"] and
                        set(row[f"malrule_{y}"].split("+")) <= set(rules)}  # fmt: skip
                assert x in held and picked in held
            checked += 1
    assert checked == 180


def test_new_rules_are_in_the_library_but_not_in_plain_generation():
    for rule in ("ignore_parentheses", "cone_cylinder_confusion"):
        assert RULES[rule].families == () and RULES[rule].variants
    assert RULES["radius_diameter_swap"].families == ("circle_area",)
    assert set(RULES["radius_diameter_swap"].variants) == {"circle_measure", "cylinder_cone_volume"}
    assert not set(VARIANT_FAMILIES) & set(FAMILIES)


def test_the_csv_reads_back_through_the_audit_reader(items, tmp_path):
    path = tmp_path / "questions.csv"
    items.to_csv(path, index=False)
    back = read_questions(path)
    assert len(back) == len(items)
    assert (back["answer"].to_numpy() == items["answer"].to_numpy()).all()
    assert (back["choice_A"].astype(str).to_numpy() == items["choice_A"].to_numpy()).all()


def test_bad_selection_says_which_families_exist():
    with pytest.raises(ValueError, match="variant items exist for"):
        generate_items(4, seed=1, adversarial="variants", contents=["Data Analysis"])
    with pytest.raises(ValueError, match="unknown content"):
        generate_items(4, seed=1, adversarial="variants", contents=["Poetry"])
    only = generate_items(12, seed=1, adversarial="variants", grades=[5])
    assert set(only["family"]) == {"order_of_operations_grouping"}
