"""Scores of the malgorithm-identification task: MCQ accuracy, AIA and MIA (Sonkar et al.).

- MCQ accuracy: the model answers the question itself.
- AIA (algorithm identification accuracy): over the *correct* choice of each question, the share
  whose rationale the model identifies.
- MIA (malgorithm identification accuracy): the same over the *incorrect* choices.

Unparseable answers and failed calls count as wrong and are reported, never dropped.  95%
intervals: Wilson score intervals; MIA pools three choices per question, which are not
independent, so it also gets a question-clustered (sandwich) interval, the one reported by default
-- from 20 questions on (see :func:`clustered`; with fewer, Wilson's, marked as such).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from .. import stats
from ..tables import Table, takes_tables

#: The gate of a scored response table (``malalgo run``'s ``responses.csv``, one row a prompt).
SCORED = Table("responses", ("question_id", "kind", "is_correct_choice", "answer_label", "target",
                             "status"), ("grade", "content", "dok"), paths=False)  # fmt: skip

__all__ = ["score_table", "summary", "breakdown", "grade_dok_heatmap"]


#: fewest questions for a question-clustered interval: with fewer, the sandwich variance rests
#: on too few clusters (two questions gave "[0.333, 0.333]"; at 10 it covered 93% by simulation)
MIN_CLUSTERS = stats.MIN_CLUSTERS


def clustered(correct: np.ndarray, cluster: np.ndarray) -> tuple[float, float, str]:
    """95% CI of a pooled proportion whose rows come in clusters (the choices of a question).

    :func:`edueval.stats.clustered_proportion_interval`: a cluster-robust (CR1) variance of the
    ratio estimator with a t quantile on G - 1 degrees of freedom, the usual small-sample
    correction.  With fewer than :data:`MIN_CLUSTERS` clusters, or a clustered standard error
    of exactly 0 (every cluster at the same rate: no evidence of precision, just too few
    distinct values), a Wilson interval that counts each question once (its share of right
    answers as one observation) is returned instead, and the third value says so:
    conservative, since a question's choices are not independent (Wilson on the rows covered
    87-93% at 2-19 questions in simulation; this one at least 99%)."""
    sums, sizes = stats.cluster_totals(np.asarray(correct, dtype=float), cluster)
    ci = stats.clustered_proportion_interval(sums, sizes, 0.05, MIN_CLUSTERS)
    how = {
        "empty": "none",
        "few_clusters": f"Wilson, each of {ci.n_clusters} questions counted once (too few "
        "for a clustered interval)",
        "zero_se": "Wilson, each question counted once (clustered SE is 0)",
        "cr1": f"clustered by question, t({ci.n_clusters - 1})",
    }[ci.method]
    return ci.low, ci.high, how


def _rate(sub: pd.DataFrame, cluster: bool = False) -> dict:
    n = len(sub)
    k = int(sub["correct"].sum())
    lo, hi = stats.wilson_interval(k, n, 0.05)
    out = {"n": n, "correct": k, "accuracy": k / n if n else math.nan, "ci_low": lo, "ci_high": hi,
           "failed": int((sub["status"] == "failed").sum()),
           "unparseable": int((sub["status"] == "unparseable").sum())}  # fmt: skip
    if cluster:
        clo, chi, how = clustered(sub["correct"].to_numpy(), sub["question_id"].to_numpy())
        out.update({"ci_low_clustered": clo, "ci_high_clustered": chi, "ci_method": how})
    return out


def score_table(scored: pd.DataFrame) -> pd.DataFrame:
    """Ensure the per-task table has a boolean ``correct`` column (answer == target)."""
    out = scored.copy()
    out["correct"] = (out["answer_label"].fillna("") == out["target"]) & (
        out["status"].isin(["json", "logprob", "json (no logprobs)"])
    )
    return out


@takes_tables(scored=SCORED)
def summary(scored: pd.DataFrame) -> dict:
    """MCQ accuracy, AIA and MIA with 95% CIs, and the counts of unparseable and failed answers."""
    s = score_table(scored)
    ident = s[s["kind"] == "identify"]
    out: dict[str, Any] = {
        "mcq": _rate(s[s["kind"] == "mcq"]),
        "aia": _rate(ident[ident["is_correct_choice"]]),
        "mia": _rate(ident[~ident["is_correct_choice"]], cluster=True),
        "n_questions": int(s["question_id"].nunique()),
        "n_prompts": int(len(s)),
        "n_unparseable": int((s["status"] == "unparseable").sum()),
        "n_failed": int((s["status"] == "failed").sum()),
        "n_logprob_fallback": int((s["status"] == "json (no logprobs)").sum()),
    }
    out["unparseable_rate"] = out["n_unparseable"] / max(out["n_prompts"], 1)
    return out


@takes_tables(
    scored=Table(
        SCORED.name,
        SCORED.required,
        SCORED.optional,
        paths=False,
        depends=lambda a: [a.get("by") or "grade"],
    )
)
def breakdown(scored: pd.DataFrame, by: str) -> pd.DataFrame:
    """AIA and MIA (with CIs and counts) per value of ``by`` (grade, dok or content)."""
    s = score_table(scored)
    s = s[(s["kind"] == "identify") & s[by].notna()]
    rows = []
    for value, g in s.groupby(by, sort=True):
        aia = _rate(g[g["is_correct_choice"]])
        mia = _rate(g[~g["is_correct_choice"]], cluster=True)
        rows.append(
            {
                by: value,
                "n_questions": g["question_id"].nunique(),
                "aia": aia["accuracy"],
                "aia_ci_low": aia["ci_low"],
                "aia_ci_high": aia["ci_high"],
                "mia": mia["accuracy"],
                "mia_ci_low": mia["ci_low_clustered"],
                "mia_ci_high": mia["ci_high_clustered"],
                "mia_ci": mia["ci_method"],
            }
        )
    return pd.DataFrame(rows)


@takes_tables(
    scored=Table(SCORED.name, (*SCORED.required, "grade", "dok"), ("content",), paths=False)
)
def grade_dok_heatmap(scored: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """MIA and the number of questions in each grade x DOK cell."""
    s = score_table(scored)
    s = s[
        (s["kind"] == "identify") & ~s["is_correct_choice"] & s["grade"].notna() & s["dok"].notna()
    ]
    mia = s.pivot_table(index="grade", columns="dok", values="correct", aggfunc="mean")
    count = s.pivot_table(index="grade", columns="dok", values="question_id", aggfunc="nunique")
    return mia, count
