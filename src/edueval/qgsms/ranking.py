"""The ranking extension (Nguyen et al., QG-SMS, §5 "questions without significant quality
difference", Tables 3-4): from all pairwise verdicts on a question set to a ranking of the questions.

* **Ranking score** (the paper's): per method, dimension and question, add 1 for every pair in
  which the question is preferred in *both* presentation orders and 0.5 for every pair in which it
  is preferred in only one, then divide by the number of pairs the question appears in. A failed
  or tied judgement prefers neither question.
* **Bradley-Terry** ability: every judgement is a comparison ``first = Output (a)``,
  ``second = Output (b)``; they are fitted with P2's Bayesian Bradley-Terry model with an order
  effect (:class:`edueval.pairwise.BradleyTerry`, NUTS; one group per method and dimension, all
  groups in one run); failed and tied judgements are dropped. ``bt_alpha`` is the posterior mean
  ability, ``bt_rank`` its posterior mean rank (1 = best).
* **Correlations** of the score and of the BT ability with the true measure (the item statistic
  from ``items analyze``: DF, DC or DE; higher = better meets the requirement), Spearman, Kendall
  (tau-b) and Pearson from :mod:`scipy.stats`; NaN when either side is constant.
* **ANOVA**: a one-way ANOVA (``scipy.stats.f_oneway``) of the ranking score over the groups of
  questions with the same true DE (the paper's Table 3), per method; for DF and DC the measure is
  continuous and no ANOVA is made.

TC is left out: its "measure" (covers the target topic, 1/0) is relative to each pair's target
topic, so the questions of a set have no single TC value to rank by. For the ranking to cover all
pairs of a question set, build the pairs with ``items pairs --alpha DE=0`` (every pair whose
measures differ).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats

from ..io import to_numbers
from ..tables import Table, takes_tables

__all__ = [
    "RANKED_DIMENSIONS",
    "true_measures",
    "ranking_scores",
    "bt_abilities",
    "rank_correlations",
    "anova",
]

RANKED_DIMENSIONS = ("DF", "DC", "DE")
SCORE_COLUMNS = ["method", "dimension", "item", "pairs", "score", "measure"]
#: The gates of the ranking tables (:func:`takes_tables`).
SCORES = Table("ranking scores", tuple(SCORE_COLUMNS), paths=False)
MEASURES = Table("true measures", ("dimension", "item", "measure"), paths=False)
#: the judgements the rankings read (a method's verdicts on pairs, in both orders)
VERDICTS = Table("judgements", ("method", "dimension", "a", "b", "chosen", "status"),
                 ("measure_a", "measure_b", "pair_id", "order"), paths=False)  # fmt: skip
BT = Table("Bradley-Terry abilities", ("method", "dimension", "item", "bt_alpha"), paths=False)


def _usable(judgements: pd.DataFrame) -> pd.DataFrame:
    j = judgements[judgements["dimension"].isin(RANKED_DIMENSIONS)]
    return j[j["status"] != "n/a"]


@takes_tables(judgements=VERDICTS)
def true_measures(judgements: pd.DataFrame) -> pd.DataFrame:
    """``dimension, item, measure`` from judgements with ``measure_a``/``measure_b`` (the pairs
    file's ``measure_q1``/``measure_q2``); empty when the pairs carried no measures."""
    cols = ["dimension", "item", "measure"]
    if "measure_a" not in judgements.columns or "measure_b" not in judgements.columns:
        return pd.DataFrame(columns=cols)
    parts = [
        judgements[["dimension", s, f"measure_{s}"]].set_axis(cols, axis=1) for s in ("a", "b")
    ]
    m = pd.concat(parts, ignore_index=True)
    m["measure"] = to_numbers(m["measure"])
    m = m.dropna(subset=["measure"])
    return m.drop_duplicates(["dimension", "item"]).reset_index(drop=True)


@takes_tables(judgements=VERDICTS, measures=MEASURES)
def ranking_scores(judgements: pd.DataFrame, measures: pd.DataFrame | None = None) -> pd.DataFrame:
    """The paper's 1 / 0.5 ranking score per method, dimension and question (with its true
    measure when ``measures`` -- ``dimension, item, measure`` -- is given)."""
    j = _usable(judgements)
    if not len(j):
        return pd.DataFrame(columns=SCORE_COLUMNS)
    wins = j.assign(chosen=j["chosen"].fillna("").astype(str))
    # preferences of each question in each pair: 0, 1 or 2 orders
    rows = []
    for (method, dim, _pid), g in wins.groupby(["method", "dimension", "pair_id"], sort=False):
        q1, q2 = g["a"].iloc[0], g["b"].iloc[0]
        chosen = list(g["chosen"])
        for q in (q1, q2):
            k = chosen.count(q)
            rows.append({"method": method, "dimension": dim, "item": q,
                         "points": 1.0 if k >= 2 else 0.5 if k == 1 else 0.0})  # fmt: skip
    per = pd.DataFrame(rows)
    out = (
        per.groupby(["method", "dimension", "item"], sort=False)["points"]
        .agg(pairs="size", total="sum")
        .reset_index()
    )
    out["score"] = out["total"] / out["pairs"]
    out = out.drop(columns="total")
    if measures is not None and len(measures):
        out = out.merge(measures, on=["dimension", "item"], how="left")
    else:
        out["measure"] = np.nan
    return out[SCORE_COLUMNS].sort_values(["method", "dimension", "item"], ignore_index=True)


@takes_tables(judgements=VERDICTS)
def bt_abilities(
    judgements: pd.DataFrame, *, seed: int = 0, chains: int = 2, warmup: int = 500,
    draws: int = 500,
) -> pd.DataFrame:  # fmt: skip
    """P2's Bayesian Bradley-Terry (order effect, NUTS) per method and dimension: ``method,
    dimension, item, bt_alpha, bt_alpha_sd, bt_rank, bt_rhat`` (empty when nothing to fit)."""
    cols = ["method", "dimension", "item", "bt_alpha", "bt_alpha_sd", "bt_rank", "bt_rhat"]
    j = _usable(judgements)
    j = j[j["verdict"].isin(["a", "b"])]
    if not len(j):
        return pd.DataFrame(columns=cols)
    from ..pairwise import BradleyTerry

    comp = pd.DataFrame(
        {
            "item": j["method"].astype(str),
            "attribute": j["dimension"].astype(str),
            "rater": j["pair_id"].astype(str),
            "first": j["a"].astype(str),
            "second": j["b"].astype(str),
            "outcome": np.where(j["verdict"] == "a", "first", "second"),
        }
    )
    res = BradleyTerry(comp, ties="drop", seed=seed).fit(chains=chains, warmup=warmup, draws=draws)
    ab = res.abilities.rename(
        columns={
            "item": "method",
            "attribute": "dimension",
            "agent": "item",
            "alpha_mean": "bt_alpha",
            "alpha_sd": "bt_alpha_sd",
            "rank_mean": "bt_rank",
            "rhat": "bt_rhat",
        }  # fmt: skip
    )
    return ab[cols].reset_index(drop=True)


def _corr(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    nan = {"spearman": np.nan, "spearman_p": np.nan, "kendall": np.nan, "kendall_p": np.nan,
           "pearson": np.nan, "pearson_p": np.nan}  # fmt: skip
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return nan
    s, k, p = stats.spearmanr(x, y), stats.kendalltau(x, y), stats.pearsonr(x, y)
    return {"spearman": float(s.statistic), "spearman_p": float(s.pvalue),
            "kendall": float(k.statistic), "kendall_p": float(k.pvalue),
            "pearson": float(p.statistic), "pearson_p": float(p.pvalue)}  # fmt: skip


@takes_tables(scores=SCORES, bt=BT)
def rank_correlations(scores: pd.DataFrame, bt: pd.DataFrame | None = None) -> pd.DataFrame:
    """Spearman / Kendall / Pearson of each ranking (``score``; ``bt_alpha`` when given) with the
    true measure, per method and dimension."""
    cols = ["method", "dimension", "ranking", "questions", "spearman", "spearman_p", "kendall",
            "kendall_p", "pearson", "pearson_p"]  # fmt: skip
    if not len(scores):
        return pd.DataFrame(columns=cols)
    df = scores
    if bt is not None and len(bt):
        df = df.merge(bt, on=["method", "dimension", "item"], how="left")
    rows = []
    for (method, dim), g in df.groupby(["method", "dimension"], sort=False):
        y = g["measure"].to_numpy(float)
        for name, col in (("score", "score"), ("bradley_terry", "bt_alpha")):
            if col not in g.columns:
                continue
            x = g[col].to_numpy(float)
            n = int((np.isfinite(x) & np.isfinite(y)).sum())
            rows.append({"method": method, "dimension": dim, "ranking": name, "questions": n,
                         **_corr(x, y)})  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


@takes_tables(scores=SCORES)
def anova(scores: pd.DataFrame, dimension: str = "DE") -> pd.DataFrame:
    """One-way ANOVA of the ranking score across groups of equal true measure (``dimension``'s
    questions), per method; with the groups' mean and s.d. of the score (the paper's Table 3)."""
    cols = ["method", "dimension", "groups", "questions", "F", "p_value", "group_means"]
    rows = []
    sub = scores[(scores["dimension"] == dimension) & scores["measure"].notna()]
    for method, g in sub.groupby("method", sort=False):
        groups = {m: gg["score"].to_numpy(float) for m, gg in g.groupby("measure", sort=True)}
        means = "; ".join(
            f"{dimension}={m:g}: {v.mean():.3f} (sd {v.std(ddof=1) if len(v) > 1 else 0:.3f}, "
            f"n {len(v)})"
            for m, v in groups.items()
        )
        usable = [v for v in groups.values() if len(v)]
        F = p = np.nan
        if len(usable) >= 2 and sum(len(v) for v in usable) > len(usable):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # constant groups: F is inf or NaN, say so as is
                r = stats.f_oneway(*usable)
            F, p = float(r.statistic), float(r.pvalue)
        rows.append({"method": method, "dimension": dimension, "groups": len(usable),
                     "questions": len(g), "F": F, "p_value": p, "group_means": means})  # fmt: skip
    return pd.DataFrame(rows, columns=cols)
