"""``to_frame()`` of every pairwise results object: tidy rows whose values are the attributes'."""

from __future__ import annotations

import numpy as np
import pytest

from edueval.pairwise import BradleyTerry, HierarchicalBradleyTerry, RaterModel, summarize

from .reference import simulate
from .test_hierarchical import simulate_pooled
from .test_raters import simulate_raters
from .test_summary import make_abilities

QUICK = {"chains": 2, "warmup": 100, "draws": 100}
TIDY = ["measure", "value", "ci_low", "ci_high"]


def _one(frame, **where):
    mask = np.ones(len(frame), bool)
    for k, v in where.items():
        mask &= (frame[k] == v).to_numpy()
    (row,) = np.nonzero(mask)[0]
    return frame.iloc[row]


def test_bradley_terry_to_frame():
    df, _ = simulate(4, 15, seed=2)
    res = BradleyTerry(df, ties="drop", seed=1).fit(**QUICK)
    t = res.to_frame()
    assert list(t.columns) == ["item", "attribute", "agent", *TIDY]
    assert len(t) == 3 * len(res.abilities) + len(res.groups)
    ab = res.abilities.iloc[3]
    row = _one(t, item=ab["item"], attribute=ab["attribute"], agent=ab["agent"], measure="alpha")
    assert row["value"] == ab["alpha_mean"]
    assert (row["ci_low"], row["ci_high"]) == (ab["alpha_hdi_low"], ab["alpha_hdi_high"])
    assert _one(t, item=ab["item"], agent=ab["agent"], measure="prob")["value"] == ab["prob_mean"]
    g = res.groups.iloc[0]
    row = _one(t, item=g["item"], attribute=g["attribute"], measure="alpha0")
    assert row["value"] == g["alpha0_mean"] and row["agent"] is None


def test_rater_results_to_frame():
    df = simulate_raters(n_raters=6, n_items=6, seed=1)
    res = RaterModel(df, per="rater", ties="drop", seed=2).fit(**QUICK)
    t = res.to_frame()
    assert list(t.columns) == ["rater", *TIDY]
    assert len(t) == 12 * len(res.raters)  # alpha0, 6 counts and flags, infit/outfit (+ t), misfit
    r = res.raters.iloc[2]
    assert _one(t, rater=r["rater"], measure="infit")["value"] == r["infit"]
    row = _one(t, rater=r["rater"], measure="alpha0")
    assert row["value"] == r["alpha0_mean"] and row["ci_high"] == r["alpha0_hdi_high"]
    assert _one(t, rater=r["rater"], measure="flagged")["value"] == float(r["flagged"])
    assert _one(t, rater=r["rater"], measure="n_comparisons")["value"] == r["n_comparisons"]


def test_hierarchical_results_to_frame():
    df, _ = simulate_pooled({"T": 0.5, "B": 0.0, "G": -0.3}, n_items=5, n_per_item=15, seed=3)
    res = HierarchicalBradleyTerry(df, ties="drop", seed=1, agent_order=["T", "B", "G"]).fit(
        **QUICK
    )
    t = res.to_frame()
    assert list(t.columns) == ["table", "attribute", "item", "agent", *TIDY]
    assert len(t) == 2 * len(res.differences) + len(res.agents) + len(res.sigma) + len(res.items)
    d = res.differences.iloc[0]
    row = _one(t, table="differences", attribute=d["attribute"], agent="T - B", measure="diff")
    assert row["value"] == d["diff_mean"] and row["ci_low"] == d["diff_hdi_low"]
    s = res.sigma.iloc[1]
    assert _one(t, table="sigma", attribute=s["attribute"])["value"] == s["sigma_mean"]
    it = res.items.iloc[4]
    row = _one(t, table="items", item=it["item"], attribute=it["attribute"], agent=it["agent"])
    assert row["value"] == it["alpha_centred_mean"]


@pytest.mark.parametrize("with_scores", [False, True])
def test_summary_results_to_frame(with_scores):
    ab = make_abilities()
    scores = ab[["item", "agent"]].drop_duplicates().assign(score=lambda t: np.arange(len(t)) % 7)
    res = summarize(ab, scores=scores if with_scores else None, score_column="score")
    t = res.to_frame()
    assert list(t.columns) == ["table", "attribute", "agent", *TIDY]
    n_t3 = len(res.table3) * (len(res.table3.columns) - 2)
    n_corr = 5 * len(res.correlation) if with_scores else 0
    assert len(t) == 6 * len(res.anova) + 2 * len(res.tukey) + n_t3 + n_corr
    tk = res.tukey.iloc[1]
    row = _one(t, table="tukey", attribute=tk["attribute"], agent=f"{tk['agent_a']} - "
               f"{tk['agent_b']}", measure="diff")  # fmt: skip
    assert (row["value"], row["ci_low"], row["ci_high"]) == (
        tk["diff"],
        tk["ci_low"],
        tk["ci_high"],
    )
    assert _one(t, table="anova", attribute="x", measure="F")["value"] == res.anova.iloc[0]["F"]
    assert (
        _one(t, table="table3", attribute="y", agent="T", measure="pct_alpha_positive")["value"]
        == res.table3.set_index(["attribute", "agent"]).loc[("y", "T"), "pct_alpha_positive"]
    )
    if with_scores:
        c = res.correlation.iloc[0]
        row = _one(t, table="correlation", attribute=c["attribute"], measure="r")
        assert (row["value"], row["ci_low"]) == (c["r"], c["r_ci_low"])
