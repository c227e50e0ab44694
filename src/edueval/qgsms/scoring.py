"""Scores of pairwise question judgements (Nguyen et al., QG-SMS, §4.3 and Appendix A.2).

Each pair is judged twice, in both orders. For a method and a dimension over ``N`` pairs:

* **Average Accuracy** AA = (number of correct judgements) / (2N) -- the mean over the two orders;
* **Consistent Accuracy** CA = (pairs judged correctly in *both* orders) / N.

A failed judgement (a step still malformed after its retries, or a failed call) and a tie count as
wrong, and are counted; a judgement a method cannot make by design (``direct`` on TC, status
``n/a``) removes the pair from that method's scores.

Significance (the paper's Table 6): a one-sided exact binomial test of a method's consistent
successes ``k`` out of ``N`` against Vanilla's consistent accuracy ``p0`` on the same dimension
(H1: the method's CA > p0), ``scipy.stats.binomtest``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import binomtest

__all__ = ["pair_table", "accuracy_table", "binomial_tests", "alpha_curve", "ALPHA_STEP"]

ALPHA_STEP = {"DF": 0.05, "DC": 0.05, "DE": 1.0, "TC": 1.0}


def pair_table(judgements: pd.DataFrame) -> pd.DataFrame:
    """One row per (method, pair): ``correct_1``, ``correct_2``, ``consistent``, failures."""
    j = judgements[judgements["status"] != "n/a"].copy()
    j["correct"] = j["correct"].astype(int)
    wide = j.pivot_table(
        index=["method", "dimension", "pair_id"], columns="order", values="correct", aggfunc="sum"
    )
    wide = wide.reindex(columns=[1, 2]).fillna(0).astype(int)
    wide.columns = ["correct_1", "correct_2"]
    wide["consistent"] = (wide["correct_1"] == 1) & (wide["correct_2"] == 1)
    fails = j.assign(f=(j["status"] == "failed").astype(int), t=(j["status"] == "tie").astype(int))
    agg = fails.groupby(["method", "dimension", "pair_id"])[["f", "t", "diff"]].agg(
        {"f": "sum", "t": "sum", "diff": "first"}
    )
    out = wide.join(agg).rename(columns={"f": "failed", "t": "ties"}).reset_index()
    return out


def _scores(g: pd.DataFrame) -> dict:
    n = len(g)
    return {
        "pairs": n,
        "AA": float((g["correct_1"].sum() + g["correct_2"].sum()) / (2 * n)) if n else np.nan,
        "CA": float(g["consistent"].mean()) if n else np.nan,
        "consistent": int(g["consistent"].sum()),
        "failed": int(g["failed"].sum()),
        "ties": int(g["ties"].sum()),
    }


def accuracy_table(pairs: pd.DataFrame) -> pd.DataFrame:
    """AA, CA (and counts) per method and dimension, plus ``all`` (every pair of the method)."""
    rows = []
    for method, gm in pairs.groupby("method", sort=False):
        for dim, g in gm.groupby("dimension", sort=True):
            rows.append({"method": method, "dimension": dim, **_scores(g)})
        rows.append({"method": method, "dimension": "all", **_scores(gm)})
    return pd.DataFrame(rows)


def binomial_tests(acc: pd.DataFrame, baseline: str = "vanilla") -> pd.DataFrame:
    """One-sided binomial test of each method's CA against the baseline's CA, per dimension."""
    cols = ["method", "dimension", "consistent", "pairs", "CA", "CA_" + baseline, "p_value"]
    base = acc[acc["method"] == baseline].set_index("dimension")
    rows = []
    for r in acc[acc["method"] != baseline].to_dict("records"):
        d = r["dimension"]
        if d not in base.index or not r["pairs"]:
            continue
        p0 = float(base.at[d, "CA"])
        p = binomtest(int(r["consistent"]), int(r["pairs"]), p0, alternative="greater").pvalue
        rows.append(
            {
                "method": r["method"],
                "dimension": d,
                "consistent": r["consistent"],
                "pairs": r["pairs"],
                "CA": r["CA"],
                "CA_" + baseline: p0,
                "p_value": float(p),
            }
        )
    return pd.DataFrame(rows, columns=cols)


def alpha_curve(pairs: pd.DataFrame, alpha: dict[str, float]) -> pd.DataFrame:
    """AA and CA on the pairs whose measure differs by at least α, for a grid of α from each
    dimension's threshold upwards (steps of 0.05 for DF/DC, 1 for DE) -- the paper's Figure 3."""
    rows = []
    for (method, dim), g in pairs.groupby(["method", "dimension"], sort=False):
        if dim == "TC" or not len(g):
            continue
        step = ALPHA_STEP[dim]
        lo = float(alpha.get(dim, g["diff"].min()))
        grid = np.arange(lo, float(g["diff"].max()) + 1e-9, step)
        for a in grid:
            sub = g[g["diff"] >= a - 1e-9]
            if len(sub):
                rows.append(
                    {
                        "method": method,
                        "dimension": dim,
                        "alpha": round(float(a), 6),
                        **_scores(sub),
                    }  # fmt: skip
                )
    return pd.DataFrame(rows)
