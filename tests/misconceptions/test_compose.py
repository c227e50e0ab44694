"""Hub items (issue 34): composed malgorithms run the flawed procedure, one-flaw malgorithms are the
family's mal-rules, and the key is the hub of its item a quarter of the time."""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from edueval.misconceptions import compose, generate_items
from edueval.misconceptions.items import ITEM_COLUMNS, LETTERS, problem_from_item
from edueval.misconceptions.library import FAMILIES, build_problem
from edueval.misconceptions.values import parse_value

FAMS = sorted(compose.STEPS)


def _one(family: str, rule: str | None) -> tuple[str | None, ...]:
    st = compose.STEPS[family]
    return tuple(rule if rule in alts else None for alts in st.steps)


@pytest.mark.parametrize("family", FAMS)
def test_one_flaw_malgorithms_are_the_family_rules(family):
    """With no flawed step the procedure is the family's solution; with one, the rule's own
    answer and reasoning (so composing starts from the library's rules, not new ones)."""
    fam, st = FAMILIES[family], compose.STEPS[family]
    rules = [r for alts in st.steps for r in alts]
    assert len(rules) == len(set(rules)) and set(rules) <= set(fam.rules)
    rng = np.random.default_rng(7)
    for _ in range(40):
        grade = fam.grades[int(rng.integers(len(fam.grades)))]
        p = build_problem(family, fam.sample(rng, grade), grade)
        assert compose.run(p, _one(family, None)) == Fraction(fam.solve(p.params))
        assert compose.explain(p, _one(family, None)) == fam.explain(p.params)
        for r in rules:
            want = fam.rules[r].answer(p.params)
            got = compose.run(p, _one(family, r))
            assert got == (None if want is None else Fraction(want)), (r, p.params)
            if want is not None:
                assert compose.explain(p, _one(family, r)) == fam.rules[r].explain(p.params)


# (family, params, flawed steps, answer worked by hand, words of the reasoning)
HAND = [
    # 3x² + 4x at x = 5: doubling instead of squaring (3 × 2 × 5 = 30), then left to right
    # ((30 + 4) × 5 = 170)
    ("evaluate_quadratic", {"a": 4, "n": 5, "var": "x", "k": 3},
     ("square_as_double", "left_to_right"), 170, "((3 × 2 × 5) + 4) × 5"),
    # dropping the exponent (3 × 5 = 15) and reading 4x as 45: 15 + 45 = 60
    ("evaluate_quadratic", {"a": 4, "n": 5, "var": "x", "k": 3},
     ("drop_exponent", "concatenate_coefficient"), 60, "3 × 5 + 45"),
    # 3(4x + 2) at x = 5: reading 4x as 45, then 3 on the first term only: 3 × 45 + 2 = 137
    ("distributive_evaluate", {"a": 3, "b": 4, "c": 2, "n": 5, "var": "x"},
     ("concatenate_coefficient", "distribute_first_only"), 137, "(3 × 45) + 2"),
    # ... and dropping the factor instead: 45 + 2 = 47
    ("distributive_evaluate", {"a": 3, "b": 4, "c": 2, "n": 5, "var": "x"},
     ("concatenate_coefficient", "drop_the_factor"), 47, "(45) + 2"),
    # 3x + 6 = 21: moving 6 without the sign change (27), multiplying by 3: 81
    ("linear_equation", {"a": 3, "b": 6, "c": 21, "plus": True, "var": "x"},
     ("move_term_no_sign_change", "multiply_instead_of_divide"), 81, "x = (21 + 6) × 3"),
    # subtracting in reverse (6 − 21 = −15) and dividing the wrong way: 3 ÷ −15 = −1/5
    ("linear_equation", {"a": 3, "b": 6, "c": 21, "plus": True, "var": "x"},
     ("subtract_in_reverse_order", "divide_the_wrong_way"), Fraction(-1, 5), "3 ÷ (6 − 21)"),
    # 34 × 26 without carrying (34 × 6 -> 184, 34 × 2 -> 68) and no place shift: 184 + 68 = 252
    ("whole_multiplication", {"a": 34, "b": 26, "template": 0},
     ("forget_carry", "place_value_shift"), 252, "34 × 6 = 184. Second row: 34 × 2 = 68"),
    # writing digit products in full (34 × 6 -> "1824", 34 × 2 -> "68") with two zeros: 8624
    ("whole_multiplication", {"a": 34, "b": 26, "template": 0},
     ("write_digit_products", "two_placeholder_zeros"), 1824 + 6800, "34 × 200 = 6800"),
    # diameter 10 not halved (r = 10), then the circumference formula: 2π × 10 = 20π
    ("circle_area", {"given": "diameter", "size": 10, "unit": "cm"},
     ("radius_diameter_swap", "perimeter_area_confusion"), 20, "Take r = 10, and compute 2 × π × 10."),
    # radius 4 taken as d = 8, then cubed: 512π
    ("circle_area", {"given": "radius", "size": 4, "unit": "cm"},
     ("square_the_diameter", "cube_the_radius"), 512, "compute π × 8 × 8 × 8"),
    # a 3 × 4 × 5 box as a cube of its longest edge, adding face areas: 3 × 25 = 75
    ("prism_volume", {"length": 3, "width": 4, "height": 5, "unit": "cm"},
     ("treat_as_cube", "add_face_areas"), 75, "5 × 5 + 5 × 5 + 5 × 5"),
    # only the base's two edges, added: 3 + 4 = 7
    ("prism_volume", {"length": 3, "width": 4, "height": 5, "unit": "cm"},
     ("base_area_for_volume", "add_sides_for_area"), 7, "compute 3 + 4."),
]  # fmt: skip


@pytest.mark.parametrize(("family", "params", "choice", "answer", "words"), HAND)
def test_two_flaw_malgorithms_run_the_flawed_procedure(family, params, choice, answer, words):
    p = build_problem(family, params)
    assert compose.run(p, choice) == Fraction(answer)
    text = compose.explain(p, choice)
    assert words in text
    assert compose.label(choice) == "+".join(choice)


def test_meaningless_combinations_are_left_out():
    box = build_problem("prism_volume", {"length": 3, "width": 4, "height": 5, "unit": "cm"})
    assert compose.run(box, ("base_area_for_volume", "add_face_areas")) is None
    dist = build_problem("distributive_evaluate", {"a": 3, "b": 4, "c": 2, "n": 5, "var": "x"})
    assert compose.run(dist, ("coefficient_as_addend", "distribute_first_only")) is None


def _role(row) -> tuple[int, int]:
    """(index of the hub among A-D, whether the hub is the key), from the malrule labels."""
    steps = compose.STEPS[row["family"]].steps
    choice = [
        tuple(next((r for r in str(row[f"malrule_{x}"] or "").split("+") if r in alts), None)
              for alts in steps)
        for x in LETTERS
    ]  # fmt: skip
    dist = [[sum(a != b for a, b in zip(u, v, strict=True)) for v in choice] for u in choice]
    hubs = [i for i in range(4) if sorted(dist[i]) == [0, 1, 1, 1]]
    assert hubs, row["id"]
    key = LETTERS.index(row["answer"])
    return hubs[0], int(key in hubs)


@pytest.fixture(scope="module")
def hub_items() -> pd.DataFrame:
    return generate_items(240, seed=5, adversarial="hub")


def test_hub_items_keep_every_promise(hub_items):
    df = hub_items
    assert list(df.columns) == ITEM_COLUMNS and len(df) == 240 and df["id"].is_unique
    assert set(df["family"]) == set(FAMS)
    for row in df.to_dict("records"):
        problem = problem_from_item(row)
        kind = FAMILIES[row["family"]].kind
        values = [parse_value(row[f"choice_{x}"], kind) for x in LETTERS]
        assert None not in values and len(set(values)) == 4
        assert len({row[f"rationale_{x}"] for x in LETTERS}) == 4
        assert row[f"malrule_{row['answer']}"] == ""
        for x, v in zip(LETTERS, values, strict=True):
            label = row[f"malrule_{x}"]
            choice = tuple(
                next((r for r in label.split("+") if r in alts), None)
                for alts in compose.STEPS[row["family"]].steps
            )
            assert compose.run(problem, choice) == v  # the value is the malgorithm's
            assert compose.explain(problem, choice) == row[f"rationale_{x}"]
            assert 1 <= len(label.split("+")) <= 2 or label == ""
            # the reasoning never states the result: no "= value" and no trailing value
            shown = row[f"choice_{x}"]  # "7π" is not stated by "r = 7"
            text = row[f"rationale_{x}"]
            assert not re.search(rf"=\s*{re.escape(shown)}(?![\d/.])", text), (x, text)
            assert not text.rstrip(".").endswith(f" {shown}"), (x, text)


def test_key_is_the_hub_a_quarter_of_the_time_and_value_ranks_are_even(hub_items):
    df = hub_items
    roles = np.array([_role(r) for r in df.to_dict("records")])
    from edueval.misconceptions.adversarial import key_value_rank

    rank = key_value_rank(df)
    for fam in FAMS:
        sel = (df["family"] == fam).to_numpy()
        n = int(sel.sum())
        # dealt in blocks of four: the key is the hub in one item of four
        assert abs(int(roles[sel, 1].sum()) - n / 4) <= 1, fam
        counts = np.bincount(rank[sel], minlength=5)[1:]
        assert counts.max() - counts.min() <= 2, (fam, counts)
    # the hub's letter is uniform (chi-square, 3 df, far from the 0.001 critical value 16.3)
    hub_letters = np.bincount(roles[:, 0], minlength=4)
    assert ((hub_letters - 60) ** 2 / 60).sum() < 16.3
    assert (
        (np.bincount([LETTERS.index(a) for a in df["answer"]], minlength=4) - 60) ** 2 / 60
    ).sum() < 16.3


def test_hub_items_are_reproducible_and_prefix_stable(hub_items):
    pd.testing.assert_frame_equal(generate_items(30, seed=5, adversarial="hub"), hub_items.head(30))


def test_bad_mode_and_families_without_steps():
    with pytest.raises(ValueError, match="adversarial"):
        generate_items(4, seed=1, adversarial="star")
    with pytest.raises(ValueError, match="hub items exist for"):
        generate_items(4, seed=1, adversarial="hub", contents=["Data Analysis"])


def test_a_composed_distractor_is_held_by_a_student_holding_both_rules():
    from edueval.misconceptions import ResponseModel, Student, choice_probabilities

    item = {"answer": "A", "difficulty": 0.5, "malrule_A": "", "malrule_B": "square_as_double",
            "malrule_C": "square_as_double+left_to_right", "malrule_D": "left_to_right"}  # fmt: skip
    model = ResponseModel(p_rule=0.8)
    one = choice_probabilities(Student("s", 0.5, ("square_as_double",)), item, model)
    assert one["B"] == pytest.approx(0.8 + 0.2 * 0.5 / 3)  # only the one-flaw distractor
    both = Student("t", 0.5, ("square_as_double", "left_to_right"))
    p = choice_probabilities(both, item, model)  # three held distractors, 0.8 shared
    assert p["B"] == p["C"] == p["D"] == pytest.approx(0.8 / 3 + 0.2 * 0.5 / 3)
