"""P5's decision rule: one interval for d = p_AI - p_Human against +-eps decides the verdict.

The "beyond the margin" tests equal scipy's one-sample t; the rule table is checked case by case;
and by simulation the verdict's limit as students grow is the right one for gaps below, at and
above eps (draw / neither above alpha / human_better)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from edueval.turing import analyze_choices
from edueval.turing.power import gap_rates, verdict_convergence
from edueval.turing.stats import MIN_STUDENTS, VERDICTS, verdicts

ALPHA, EPS = 0.05, 0.10


def _frame(seed: int, n_students: int, m: int, p: tuple[float, float, float, float]):
    rng = np.random.default_rng(seed)
    rows = [
        (f"s{i}", f"q{j}", c)
        for i in range(n_students)
        for j, c in enumerate(rng.choice(["correct", "ai", "human", "random"], size=m, p=p))
    ]
    return pd.DataFrame(rows, columns=["student", "question", "chosen"])


def test_beyond_margin_tests_equal_scipy_one_sample_t():
    df = _frame(3, 40, 15, (0.4, 0.1, 0.4, 0.1))
    res = analyze_choices(df, eps=EPS)
    d = (df["chosen"] == "ai").to_numpy(float) - (df["chosen"] == "human").to_numpy(float)
    t = res.tests[res.tests["se"] == "naive"].set_index("test")["p_value"]
    ai = sps.ttest_1samp(d - EPS, 0.0, alternative="greater").pvalue
    human = sps.ttest_1samp(d + EPS, 0.0, alternative="less").pvalue
    assert t[f"p_AI - p_Human > +{EPS} (ai_better)"] == pytest.approx(ai, rel=1e-9)
    assert t[f"p_AI - p_Human < -{EPS} (human_better)"] == pytest.approx(human, rel=1e-9)
    assert human < ALPHA < ai  # this sample is clearly beyond -eps


@pytest.mark.parametrize(
    ("tost", "beyond_ai", "beyond_h", "sup_ai", "sup_h", "fail", "expected"),
    [
        (0.01, 0.9, 0.9, 0.01, 0.01, 0.9, "draw"),
        (0.01, 0.9, 0.9, 0.01, 0.20, 0.9, "inconclusive"),  # equivalent, human not above random
        (0.9, 0.01, 0.99, 0.01, 0.01, 0.9, "ai_better"),
        (0.9, 0.01, 0.99, 0.20, 0.01, 0.9, "inconclusive"),  # ahead, but not above random
        (0.9, 0.99, 0.01, 0.01, 0.01, 0.9, "human_better"),
        (0.9, 0.9, 0.9, 0.9, 0.9, 0.01, "both_fail"),
        (0.2, 0.3, 0.9, 0.01, 0.01, 0.9, "inconclusive"),  # the CI straddles +eps
    ],
)
def test_rule_table(tost, beyond_ai, beyond_h, sup_ai, sup_h, fail, expected):
    kw = dict(tost_p=tost, beyond_ai_p=beyond_ai, beyond_human_p=beyond_h, sup_ai_p=sup_ai,
              sup_human_p=sup_h, fail_ai_p=fail, fail_human_p=fail, alpha=ALPHA)  # fmt: skip
    assert VERDICTS[verdicts(**kw, n_students=MIN_STUDENTS)] == expected
    assert VERDICTS[verdicts(**kw, n_students=MIN_STUDENTS - 1)] == "inconclusive"


def test_a_real_difference_within_eps_is_reported_not_decisive():
    """2,000 students, the human ahead by ~0.05 < eps: McNemar rejects d = 0, the verdict is a
    draw (the interval lies inside +-eps), and neither is declared better."""
    res = analyze_choices(_frame(4, 2000, 10, (0.4, 0.225, 0.275, 0.1)), eps=EPS)
    mc = res.tests[res.tests["test"].str.startswith("McNemar") & (res.tests["se"] == "cr2")]
    assert bool(mc["reject"].iloc[0])
    lo, hi = res.diff_ci["clustered"]
    assert -EPS < lo < hi < 0
    assert res.verdict == "draw"


def _rates(gap: float, sizes: list[int], reps: int, seed: int) -> pd.DataFrame:
    return verdict_convergence(gaps=[gap], sizes=sizes, eps=EPS, delta=0.05, alpha=ALPHA,
                               rho=0.02, reps=reps, seed=seed).set_index("n_students")  # fmt: skip


def test_gap_below_eps_converges_to_draw():
    """Gap 0.09 < eps: 'human_better' is never declared above alpha, and the draw rate rises
    with the number of students to >= 0.8."""
    reps = 400
    r = _rates(0.09, [40, 640, 2560], reps, seed=1)
    mc = 3 * np.sqrt(ALPHA * (1 - ALPHA) / reps)
    assert (r["human_better"] <= ALPHA + mc).all(), r
    assert r.loc[40, "draw"] < r.loc[640, "draw"] < r.loc[2560, "draw"]
    assert r.loc[2560, "draw"] >= 0.8, r
    assert r.loc[2560, "mcnemar_rejects"] > 0.99  # the point-null test sees the real gap


def test_gap_above_eps_converges_to_human_better():
    """Gap 0.2 > eps: human_better >= 0.8 at large n, and 'draw' at most alpha at every n."""
    reps = 600
    r = _rates(0.20, [MIN_STUDENTS, 10, 40, 160, 640], reps, seed=2)
    mc = 3 * np.sqrt(ALPHA * (1 - ALPHA) / reps)
    assert (r["draw"] <= ALPHA + mc).all(), r
    assert r.loc[160, "human_better"] >= 0.8 and r.loc[640, "human_better"] >= 0.8, r


@pytest.mark.parametrize("students", [MIN_STUDENTS, 10, 40, 160])
def test_gap_at_eps_gives_no_verdict_above_alpha(students):
    """Gap exactly eps: neither 'draw' nor a 'better' verdict in more than alpha of studies,
    from the minimum number of students up."""
    reps = 2000
    r = _rates(EPS, [students], reps, seed=100 + students).iloc[0]
    mc = 3 * np.sqrt(ALPHA * (1 - ALPHA) / reps)
    assert r["draw"] <= ALPHA + mc, r
    assert r["human_better"] + r["ai_better"] <= ALPHA + mc, r


def test_gap_rates_put_the_human_ahead_by_the_gap():
    r = gap_rates(0.09)
    assert r.human - r.ai == pytest.approx(0.09) and r.correct > 0
