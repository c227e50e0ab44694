"""``kt compare``: several knowledge-tracing models on the same student folds.

Every model is cross-validated on the same folds (:mod:`edueval.kt.models.crossval`, by student), so
fold ``f`` of one model and fold ``f`` of another are scored on the same held-out students and
their difference is a paired observation.  The table gives, per model, the mean over folds of
held-out RMSE, AUC, accuracy and log-likelihood with a t interval over folds
(mean +- t(0.975, F - 1) SD / sqrt(F)), and AIC = -2 LL + 2k and BIC = -2 LL + k ln N of the
model fitted to all the data (k = ``n_params_``, N = responses).  Paired differences against
the first model: per fold ``d_f = metric(model) - metric(first)``; mean, t interval and
two-sided p of the one-sample t test of mean 0 (scipy), on F - 1 degrees of freedom.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...defaults import SEED
from ...io import binary_column
from ...results import RunResults
from ...stats import paired_difference, t_interval
from ...tables import takes_tables
from ..data import RESPONSES, Columns
from .crossval import FOLD_METRICS, fold_scores, heldout_predictions, make_folds, skill_codes
from .registry import make_model

__all__ = ["CompareResult", "compare_models", "t_interval", "paired_differences"]

CI_LEVEL = 0.95


def paired_differences(per_fold: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Per model other than ``baseline`` and metric: mean per-fold difference, t interval,
    t statistic and two-sided p (:func:`edueval.stats.paired_difference`).  ``per_fold`` has
    columns model, fold and the metrics."""
    base = per_fold[per_fold["model"] == baseline].set_index("fold")
    rows = []
    for model, g in per_fold[per_fold["model"] != baseline].groupby("model", sort=False):
        g = g.set_index("fold")
        for m in FOLD_METRICS:
            d = paired_difference(g[m].to_numpy(), base.loc[g.index, m].to_numpy(), CI_LEVEL)
            rows.append({"model": model, "baseline": baseline, "metric": m, "mean_diff": d.mean,
                         "ci_low": d.low, "ci_high": d.high, "t": d.t, "p": d.p,
                         "n_folds": d.n})  # fmt: skip
    return pd.DataFrame(rows)


def _model_row(model: str, folds: pd.DataFrame, full: dict) -> dict:
    row: dict = {"model": model}
    for m in FOLD_METRICS:
        mean, lo, hi = t_interval(folds[m].to_numpy(), CI_LEVEL)
        row.update({m: mean, f"{m}_ci_low": lo, f"{m}_ci_high": hi})
    return {**row, **full}


def _full_fit(spec: str, df: pd.DataFrame, make) -> dict:
    """AIC / BIC of the model fitted to all the data."""
    t0 = time.perf_counter()
    model = make().fit(df)
    ll = float(model.log_likelihood(df))
    k, n = int(model.n_params_), len(df)
    return {"n_params": k, "loglik_full": ll, "aic": -2 * ll + 2 * k,
            "bic": -2 * ll + k * np.log(n), "seconds_full_fit": time.perf_counter() - t0}  # fmt: skip


@dataclass
class CompareResult(RunResults):
    """Models on the same folds: ``table`` (one row per model), ``paired`` (differences
    against the first model), ``per_fold`` (pooled scores of each model and fold) and
    ``per_skill`` (each model, fold and skill)."""

    models: list[str]
    n_folds: int
    n_responses: int
    table: pd.DataFrame
    paired: pd.DataFrame
    per_fold: pd.DataFrame
    per_skill: pd.DataFrame
    #: the options, as ``kt compare`` records them (``seed`` among them)
    params: dict[str, Any] = field(default_factory=dict)

    _writer = "edueval.kt.commands.model_runs:save_compare"

    def headline(self) -> dict[str, Any]:
        """``kt compare``'s results.json."""
        return {"models": self.models, "folds": self.n_folds, "n_responses": self.n_responses,
                "best_by_heldout_loglik": self.best, "table": self.table.to_dict("records"),
                "paired": self.paired.to_dict("records")}  # fmt: skip

    def to_frame(self) -> pd.DataFrame:
        """One row per model: held-out means with 95% t intervals, AIC, BIC (``table``)."""
        return self.table.copy()

    @property
    def best(self) -> str:
        """The model with the highest mean held-out log-likelihood."""
        return str(self.table.loc[self.table["loglik"].idxmax(), "model"])

    def summary(self) -> str:
        lines = [f"{len(self.models)} models, {self.n_folds} student folds, "
                 f"{self.n_responses} responses",
                 f"{'model':<24}{'RMSE':>8}{'AUC':>8}{'held-out LL':>14}{'k':>8}{'AIC':>14}"
                 f"{'BIC':>14}{'s':>7}"]  # fmt: skip
        for r in self.table.itertuples():
            lines.append(f"{r.model:<24}{r.rmse:>8.4f}{r.auc:>8.4f}{r.loglik:>14.2f}"
                         f"{r.n_params:>8d}{r.aic:>14.1f}{r.bic:>14.1f}{r.seconds:>7.1f}")  # fmt: skip
        if len(self.paired):
            lines.append(f"paired per-fold differences against {self.models[0]} (mean [95% CI] p):")
            for r in self.paired[self.paired["metric"].isin(["auc", "loglik"])].itertuples():
                lines.append(f"  {r.model:<22}{r.metric:<8}{r.mean_diff:+.4f} "
                             f"[{r.ci_low:+.4f}, {r.ci_high:+.4f}]  p = {r.p:.3g}")  # fmt: skip
        lines.append(f"best by held-out log-likelihood: {self.best}")
        return "\n".join(lines)


@takes_tables(df=RESPONSES)
def compare_models(
    df: pd.DataFrame,
    specs: list[str],
    *,
    n_folds: int = 5,
    seed: int | None = SEED,
    n_restarts: int = 5,
    columns: Columns | None = None,
    progress=None,
) -> CompareResult:
    """Cross-validate every model specification on the same student folds and fit each to
    all the data for AIC / BIC.  ``progress(spec, seconds)`` is called after each model."""
    cols = (columns or Columns()).resolve(df)
    folds = make_folds(df, n_folds, by="student", seed=seed, columns=cols)
    y = binary_column(df, cols.correct)
    skill = skill_codes(df, cols)
    rows, per_skill = [], []
    for spec in specs:

        def make(spec=spec):
            return make_model(spec, seed=seed, n_restarts=n_restarts, columns=cols)

        t0 = time.perf_counter()
        p = heldout_predictions(df, make, folds, columns=cols)
        scores = fold_scores(y, p, folds, skill).assign(model=spec)
        full = _full_fit(spec, df, make)
        full["seconds"] = time.perf_counter() - t0
        per_skill.append(scores)
        rows.append(_model_row(spec, scores[scores["scope"] == "all"], full))
        if progress:
            progress(spec, full["seconds"])
    scores = pd.concat(per_skill, ignore_index=True)
    per_fold = scores[scores["scope"] == "all"].drop(columns="scope")
    per_fold = per_fold[["model", "fold", "n", "n_unscored", *FOLD_METRICS]].reset_index(drop=True)
    table = pd.DataFrame(rows)
    params = {"models": list(specs), "folds": n_folds, "by": "student", "n_restarts": n_restarts,
              "columns": asdict(cols), "encoding": "utf-8", "seed": seed}  # fmt: skip
    return CompareResult(list(specs), n_folds, len(df), table,
                         paired_differences(per_fold, specs[0]), per_fold,
                         scores[scores["scope"] != "all"].rename(columns={"scope": "skill"}),
                         params)  # fmt: skip
