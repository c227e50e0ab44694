"""ANOVA, Tukey HSD, Table 3 and correlations against independent computations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from statsmodels.formula.api import ols

from edueval.io import InputError
from edueval.pairwise import read_scores, summarize


def make_abilities(seed=0, n_items=20) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    shift = {"T": 0.6, "B": -0.2, "G": -0.3}
    for attr in ("x", "y"):
        for it in range(n_items):
            for agent in ("T", "B", "G"):
                m = shift[agent] + rng.normal(scale=0.5)
                half = abs(rng.normal(scale=0.8)) + 0.2
                rows.append((f"i{it}", attr, agent, m, m - half, m + half))
    return pd.DataFrame(
        rows,
        columns=["item", "attribute", "agent", "alpha_mean", "alpha_hdi_low", "alpha_hdi_high"],
    )


def test_anova_matches_statsmodels_ols():
    ab = make_abilities()
    res = summarize(ab)
    for attr in ("x", "y"):
        sub = ab[ab["attribute"] == attr]
        table = sm.stats.anova_lm(ols("alpha_mean ~ C(agent)", data=sub).fit())
        row = res.anova.set_index("attribute").loc[attr]
        assert row["F"] == pytest.approx(table.loc["C(agent)", "F"], rel=1e-10)
        assert row["p"] == pytest.approx(table.loc["C(agent)", "PR(>F)"], rel=1e-8)
        assert (row["df_between"], row["df_within"]) == (2, 57)


def test_tukey_differences_are_a_minus_b_with_symmetric_intervals():
    ab = make_abilities()
    res = summarize(ab, agent_order=["T", "B", "G"])
    t = res.tukey[res.tukey["attribute"] == "x"]
    assert list(zip(t["agent_a"], t["agent_b"], strict=True)) == [
        ("T", "B"),
        ("T", "G"),
        ("B", "G"),
    ]
    sub = ab[ab["attribute"] == "x"]
    means = sub.groupby("agent")["alpha_mean"].mean()
    for _, r in t.iterrows():
        assert r["diff"] == pytest.approx(means[r["agent_a"]] - means[r["agent_b"]], abs=1e-12)
        assert r["ci_low"] < r["diff"] < r["ci_high"]
        assert (r["diff"] - r["ci_low"]) == pytest.approx(r["ci_high"] - r["diff"])
    # Tukey's interval half-width from the studentised range distribution, by hand
    from scipy.stats import studentized_range

    resid = sub["alpha_mean"] - sub.groupby("agent")["alpha_mean"].transform("mean")
    mse = (resid**2).sum() / (len(sub) - 3)
    q = studentized_range.ppf(0.95, 3, len(sub) - 3)
    half = q * np.sqrt(mse / 2 * (2 / 20))
    assert t["ci_high"].iloc[0] - t["diff"].iloc[0] == pytest.approx(half, rel=1e-3)


def test_table3_percentages():
    ab = pd.DataFrame(
        {
            "item": ["a", "b", "c", "d"],
            "attribute": "q",
            "agent": "T",
            "alpha_mean": [0.5, -0.1, 0.2, 1.0],
            "alpha_hdi_low": [0.1, -0.9, -0.5, -0.2],
            "alpha_hdi_high": [0.9, 0.7, 0.9, 2.0],
        }
    )
    t3 = summarize(ab).table3.iloc[0]
    assert t3["pct_alpha_positive"] == 75.0 and t3["pct_hdi_excludes_0"] == 25.0
    assert t3["n_items"] == 4


def test_correlation_with_external_scores(write):
    ab = make_abilities(n_items=15)
    rng = np.random.default_rng(5)
    sc = ab[ab["attribute"] == "x"][["item", "agent"]].copy()
    sc["uptake"] = ab[ab["attribute"] == "x"]["alpha_mean"].to_numpy() + rng.normal(size=len(sc))
    path = write("scores.csv", sc.to_csv(index=False))
    res = summarize(ab, scores=read_scores(path, "uptake"), score_column="uptake")
    row = res.correlation.set_index("attribute").loc["x"]
    x = ab[ab["attribute"] == "x"]["alpha_mean"].to_numpy()
    r = np.corrcoef(x, sc["uptake"])[0, 1]
    n = len(x)
    assert row["r"] == pytest.approx(r, rel=1e-10)
    assert row["df"] == n - 2
    assert row["t"] == pytest.approx(r * np.sqrt(n - 2) / np.sqrt(1 - r * r), rel=1e-10)
    from scipy import stats

    assert row["p"] == pytest.approx(2 * stats.t.sf(abs(row["t"]), n - 2), rel=1e-8)
    assert row["r_ci_low"] < r < row["r_ci_high"]


def test_scores_that_match_nothing_are_an_error(write):
    ab = make_abilities(n_items=3)
    path = write("s.csv", "item,agent,score\nzz,T,1\nyy,B,2\n")
    with pytest.raises(InputError, match="no \\(item, agent\\)"):
        summarize(ab, scores=read_scores(path, "score"), score_column="score")
    with pytest.raises(InputError, match="duplicate item and agent"):
        read_scores(write("d.csv", "item,agent,score\na,T,1\na,T,2\n"), "score")
