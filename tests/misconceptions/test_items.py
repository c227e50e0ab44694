"""MalAlgoQA-format item generator: invariants, reproducibility, filters."""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from edueval.defaults import SEED
from edueval.misconceptions import (
    FAMILIES,
    ITEM_COLUMNS,
    LETTERS,
    RULES,
    build_problem,
    correct_answer,
    generate_items,
    make_item,
    problem_from_item,
    rationale,
    rule_answer,
)

from .test_library import CANONICAL


def check_item(row: pd.Series | dict) -> None:
    """Every promise the generator makes about one item."""
    choices = [row[f"choice_{x}"] for x in LETTERS]
    rules = [row[f"malrule_{x}"] for x in LETTERS]
    key = row["answer"]
    assert key in LETTERS
    assert len(set(choices)) == 4  # four distinct choices, so no distractor equals the key
    assert rules[LETTERS.index(key)] == ""
    distractor_rules = [r for x, r in zip(LETTERS, rules, strict=True) if x != key]
    assert len(set(distractor_rules)) == 3 and all(r in RULES for r in distractor_rules)
    fam = FAMILIES[row["family"]]
    assert set(distractor_rules) <= set(fam.rules)
    assert row["content"] == fam.content and row["dok"] == fam.dok in (1, 2, 3)
    assert row["grade"] in fam.grades
    problem = problem_from_item(row)
    assert problem.question == row["question"]
    assert row[f"choice_{key}"] == correct_answer(problem)
    assert row[f"rationale_{key}"] == rationale(problem)
    for x, r in zip(LETTERS, rules, strict=True):
        text = row[f"rationale_{x}"]
        assert isinstance(text, str) and len(text) > 20 and "{" not in text
        assert CANONICAL_RE[fam.kind].fullmatch(row[f"choice_{x}"])
        if r:
            assert row[f"choice_{x}"] == rule_answer(problem, r)
            assert text == rationale(problem, r)
    assert len({row[f"rationale_{x}"] for x in LETTERS}) == 4


CANONICAL_RE = {k: re.compile(v) for k, v in CANONICAL.items()}


def test_many_items_keep_every_promise():
    for seed in range(8):
        df = generate_items(60, seed=seed)
        assert list(df.columns) == ITEM_COLUMNS
        assert df["id"].is_unique and len(df) == 60
        for _, row in df.iterrows():
            check_item(row)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 12))
def test_items_property(seed, n):
    df = generate_items(n, seed=seed)
    assert len(df) == n
    for _, row in df.iterrows():
        check_item(row)


def test_reproducible_by_seed_and_prefix_stable():
    a = generate_items(40, seed=123)
    pd.testing.assert_frame_equal(a, generate_items(40, seed=123))
    pd.testing.assert_frame_equal(a.head(15), generate_items(15, seed=123))
    b = generate_items(40, seed=124)
    assert not a["question"].equals(b["question"])
    pd.testing.assert_frame_equal(generate_items(5), generate_items(5, seed=SEED))  # seeded


def test_families_are_balanced_and_rules_all_used():
    df = generate_items(18 * 30, seed=9)
    counts = df["family"].value_counts()
    assert set(counts.index) == set(FAMILIES) and counts.max() - counts.min() <= 1
    used = set(pd.concat([df[f"malrule_{x}"] for x in LETTERS])) - {""}
    assert used == {r for r in RULES if RULES[r].families}  # not the variants' own rules


def test_key_position_is_uniform():
    df = generate_items(2000, seed=4)
    counts = df["answer"].value_counts().reindex(list(LETTERS)).to_numpy()
    assert stats.chisquare(counts).pvalue > 1e-3


def test_dok_levels_are_all_used():
    df = generate_items(200, seed=2)
    assert set(df["dok"]) == {1, 2, 3}


def test_grade_and_content_filters():
    df = generate_items(50, seed=1, grades=[6])
    assert set(df["grade"]) == {6}
    df = generate_items(50, seed=1, contents=["Geometry & Measurement", "Data Analysis"])
    assert set(df["content"]) == {"Geometry & Measurement", "Data Analysis"}
    df = generate_items(40, seed=1, grades=[7, 8], contents=["Algebra"])
    assert set(df["family"]) == {"evaluate_quadratic", "linear_equation", "distributive_evaluate"}
    assert set(df["grade"]) <= {7, 8}
    with pytest.raises(ValueError):
        generate_items(5, seed=1, grades=[1])
    with pytest.raises(ValueError):
        generate_items(-1, seed=1)
    assert len(generate_items(0, seed=1)) == 0


def test_csv_round_trip_keeps_items_usable():
    df = generate_items(20, seed=8)
    back = pd.read_csv(io.StringIO(df.to_csv(index=False)), keep_default_na=False)
    for _, row in back.iterrows():
        check_item(row)


def test_make_item_for_a_given_problem():
    p = build_problem("order_of_operations", {"a": 20, "b": 3, "c": 4, "d": 5, "template": 0})
    item = make_item(p, np.random.default_rng(0), "x1")
    check_item(item)
    assert item["id"] == "x1"
    item = make_item(
        p,
        np.random.default_rng(0),
        rules=["left_to_right", "add_before_multiply", "add_before_subtract"],
    )
    assert sorted(item[f"choice_{x}"] for x in LETTERS) == sorted(["13", "73", "153", "3"])
    with pytest.raises(ValueError):
        make_item(p, np.random.default_rng(0), rules=["left_to_right", "add_before_multiply"])
    # two rules collide on a 3 × 4 × 5 box (3 + 4 + 5 = 3 × 4): they cannot both be distractors
    box = build_problem("prism_volume", {"length": 3, "width": 4, "height": 5, "unit": "cm"})
    with pytest.raises(ValueError):
        make_item(box, np.random.default_rng(0), rules=["add_sides_for_area", "base_area_for_volume",
                                                        "treat_as_cube"])  # fmt: skip
    check_item(make_item(box, np.random.default_rng(0)))  # the other rules still make an item
    # 58 − 23 needs no regrouping: no subtraction bug errs, so there is no item
    easy = build_problem("whole_subtraction", {"a": 58, "b": 23, "template": 0})
    with pytest.raises(ValueError, match="fewer than 3"):
        make_item(easy, np.random.default_rng(0))
