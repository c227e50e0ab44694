"""Scores of pairwise question judgements (Nguyen et al., QG-SMS, §4.3 and Appendix A.2).

Each pair is judged twice, in both orders. For a method and a dimension over ``N`` pairs:

* **Average Accuracy** AA = (number of correct judgements) / (2N) -- the mean over the two orders;
* **Consistent Accuracy** CA = (pairs judged correctly in *both* orders) / N.

A failed judgement (a step still malformed after its retries, or a failed call) and a tie count as
wrong, and are counted; a judgement a method cannot make by design (``direct`` on TC, status
``n/a``) removes the pair from that method's scores.

Significance (the paper's Table 6): a one-sided exact sign test -- the exact McNemar test -- of a
method against Vanilla on the *same* pairs.  Both methods judged every pair, so their successes
are paired; only the discordant pairs carry information: ``b`` = pairs the method gets right and
Vanilla wrong, ``c`` = the reverse.  Under H0 (equally good) each discordant pair is a fair coin,
so p = P(X >= b), X ~ Binomial(b + c, 1/2) (H1: the method is better).  For CA the unit is the
pair ("right" = right in both orders); for AA it is the judgement, one per pair and order, as
the paper counts AA.  With b = c = 0 there is no evidence either way and p = 1.

This reproduces the paper's Table 6: a cell whose CA differs from Vanilla's by one pair has
p = 0.500 (b = 1, c = 0), and (b, c) = (5, 2), (13, 8) give 0.227, 0.192 to the paper's three
places. (18, 10) gives 0.092467: 0.0925 to four places, printed as 0.093 in the paper -- the
four-place value rounded half up again; to three places it is 0.092.
An earlier version tested the method's CA count against Vanilla's *estimated* CA as if it were
a known constant (one-sample binomial); that ignores both the pairing and the baseline's own
sampling error, and rejected a true H0 in about 12% of simulated studies at nominal 5%.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..stats import sign_test  # one-sided exact: P(X >= b), X ~ Bin(b + c, 1/2)
from ..tables import Table, takes_tables

__all__ = [
    "pair_table",
    "accuracy_table",
    "sign_test",
    "binomial_tests",
    "alpha_curve",
    "ALPHA_STEP",
]

ALPHA_STEP = {"DF": 0.05, "DC": 0.05, "DE": 1.0, "TC": 1.0}


#: The gate of the per-pair scores (:func:`pair_table`'s table).
PAIR_SCORES = Table("pair scores", ("method", "dimension", "pair_id", "correct_1", "correct_2",
                    "consistent"), ("failed", "ties", "diff"), paths=False)  # fmt: skip


@takes_tables(
    judgements=Table(
        "judgements",
        ("method", "dimension", "pair_id", "order", "correct", "status"),
        ("diff",),
        paths=False,
    )
)
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


@takes_tables(pairs=replace(PAIR_SCORES, depends=lambda a: ("failed", "ties")))
def accuracy_table(pairs: pd.DataFrame) -> pd.DataFrame:
    """AA, CA (and counts) per method and dimension, plus ``all`` (every pair of the method)."""
    rows = []
    for method, gm in pairs.groupby("method", sort=False):
        for dim, g in gm.groupby("dimension", sort=True):
            rows.append({"method": method, "dimension": dim, **_scores(g)})
        rows.append({"method": method, "dimension": "all", **_scores(gm)})
    return pd.DataFrame(rows)


def _units(pairs: pd.DataFrame, measure: str) -> pd.DataFrame:
    """Per method: 0/1 success of each unit -- a pair (CA) or a pair in one order (AA)."""
    keys = ["method", "dimension", "pair_id"]
    if measure == "CA":
        return pairs[keys].assign(order=0, right=pairs["consistent"].astype(int))
    long = pairs.melt(id_vars=keys, value_vars=["correct_1", "correct_2"], var_name="order",
                      value_name="right")  # fmt: skip
    return long.assign(right=long["right"].astype(int))


def _discordant(units: pd.DataFrame, method: str, baseline: str) -> pd.DataFrame:
    """b and c per dimension (and ``all``) on the units both methods judged."""
    on = ["dimension", "pair_id", "order"]
    both = units[units["method"] == method].merge(
        units[units["method"] == baseline], on=on, suffixes=("", "_base")
    )
    both = both.assign(b=(both["right"] > both["right_base"]).astype(int),
                       c=(both["right"] < both["right_base"]).astype(int))  # fmt: skip
    per = both.groupby("dimension", sort=True).agg(
        units=("b", "size"), b=("b", "sum"), c=("c", "sum"), right=("right", "mean"),
        right_base=("right_base", "mean"),
    )  # fmt: skip
    total = pd.DataFrame({"units": [len(both)], "b": [both["b"].sum()], "c": [both["c"].sum()],
                          "right": [both["right"].mean()], "right_base": [both["right_base"].mean()]},
                         index=pd.Index(["all"], name="dimension"))  # fmt: skip
    return pd.concat([per, total]).reset_index()


@takes_tables(pairs=PAIR_SCORES)
def binomial_tests(pairs: pd.DataFrame, baseline: str = "vanilla") -> pd.DataFrame:
    """Exact one-sided sign tests (exact McNemar) of every method against ``baseline``, per
    dimension and measure (CA on pairs, AA on pair-orders): ``b``, ``c`` and the p-value."""
    cols = ["method", "measure", "dimension", "units", "b", "c", "accuracy",
            f"accuracy_{baseline}", "p_value"]  # fmt: skip
    rows = []
    methods = [m for m in pairs["method"].unique() if m != baseline]
    for measure in ("CA", "AA"):
        units = _units(pairs, measure)
        for method in methods:
            for r in _discordant(units, method, baseline).to_dict("records"):
                if not r["units"]:
                    continue
                rows.append({"method": method, "measure": measure, "dimension": r["dimension"],
                             "units": int(r["units"]), "b": int(r["b"]), "c": int(r["c"]),
                             "accuracy": float(r["right"]),
                             f"accuracy_{baseline}": float(r["right_base"]),
                             "p_value": sign_test(int(r["b"]), int(r["c"]))})  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


@takes_tables(pairs=replace(PAIR_SCORES, depends=lambda a: ("diff",)))
def alpha_curve(pairs: pd.DataFrame, alpha: dict[str, float]) -> pd.DataFrame:
    """AA and CA on the pairs whose measure differs by at least α, for a grid of α from each
    dimension's threshold upwards (steps of 0.05 for DF/DC, 1 for DE) -- the paper's Figure 3."""
    rows = []
    for (method, dim), g in pairs.groupby(["method", "dimension"], sort=False):
        g = g[g["diff"].notna()]  # a pairs file without the measures (optional) has no curve
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
