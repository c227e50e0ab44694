"""Cross-validation of knowledge-tracing models: held-out RMSE, AUC, accuracy and
log-likelihood per fold and skill.

Folds are by student by default: every student's responses are in exactly one test fold, so a
model is always scored on students it has not seen (what a tutor meets when a new class
starts).  Students are dealt to folds in a seeded random order (sizes differ by at most one
student).  Folds by row (``by="row"``) hold out single responses instead: the model is fitted
on the other rows, then run over every row of the held-out response's student (the held-out
responses are predicted before they are seen, as always) and scored on the held-out rows.

A test response whose skill does not occur in its training fold cannot be predicted by any
model; it is left out of the scores and counted (``n_unscored``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...defaults import SEED
from ...io import InputError, binary_column
from ...results import RunResults
from ...seeding import rng
from ...tables import takes_tables
from .. import metrics as M
from ..data import RESPONSES, Columns

__all__ = [
    "CVResult",
    "FOLD_METRICS",
    "cross_validate",
    "fold_scores",
    "heldout_predictions",
    "make_folds",
    "mean_sd",
]

#: metrics computed per fold (and per skill); higher is better for all but RMSE
FOLD_METRICS = ("rmse", "auc", "accuracy", "loglik")


@takes_tables(df=RESPONSES)
def make_folds(
    df: pd.DataFrame, n_folds: int, *, by: str = "student", seed: int | None = None,
    columns: Columns | None = None,
) -> np.ndarray:  # fmt: skip
    """Fold number (0 .. n_folds - 1) of every row, by student (default) or by row; seeded."""
    if by not in ("student", "row"):
        raise InputError(f"by= must be 'student' or 'row', got {by!r}")
    gen = rng(seed)
    if by == "row":
        return _deal(len(df), n_folds, gen, "responses")
    cols = (columns or Columns()).resolve(df)
    codes, names = pd.factorize(df[cols.student].astype(str), sort=True)
    return _deal(len(names), n_folds, gen, "students")[codes]


def _deal(n: int, n_folds: int, gen: np.random.Generator, what: str) -> np.ndarray:
    """Fold of each of ``n`` units: a seeded permutation dealt round-robin."""
    if n_folds < 2:
        raise InputError(f"n_folds= must be at least 2, got {n_folds}")
    if n < n_folds:
        raise InputError(f"n_folds= {n_folds} needs at least {n_folds} {what}, the data has {n}")
    fold = np.empty(n, dtype=np.int64)
    fold[gen.permutation(n)] = np.arange(n) % n_folds
    return fold


def heldout_predictions(
    df: pd.DataFrame,
    make_model: Callable[[], Any],  # a model with fit(df) -> itself and predict(df)
    folds: np.ndarray,
    *,
    by: str = "student",
    columns: Columns | None = None,
) -> np.ndarray:
    """P(correct) of every row predicted by a model fitted without that row's fold (NaN where
    the row's skill is absent from its training fold)."""
    cols = (columns or Columns()).resolve(df)
    codes, names = skill_codes(df, cols)
    out = np.full(len(df), np.nan)
    for f in range(int(folds.max()) + 1):
        train = folds != f
        model = make_model().fit(df[train])
        known = (np.bincount(codes[train], minlength=len(names)) > 0)[codes]
        scored = known if by == "row" else known & ~train
        test = ~train & known
        if not test.any():
            continue
        p = np.asarray(model.predict(df[scored])["p_correct"], dtype=float)
        out[test] = p[test[scored]]
    return out


def skill_codes(df: pd.DataFrame, cols: Columns) -> tuple[np.ndarray, np.ndarray]:
    """Integer code of every row's skill and the sorted skill names (as text): comparing and
    sorting codes instead of strings (a million object-string comparisons per fold cost
    seconds)."""
    codes, names = pd.factorize(df[cols.skill].astype(str).to_numpy(), sort=True)
    return codes.astype(np.int64), np.asarray(names, dtype=object)


def fold_scores(
    y: np.ndarray,
    p: np.ndarray,
    folds: np.ndarray,
    skill: np.ndarray | tuple[np.ndarray, np.ndarray],
) -> pd.DataFrame:
    """One row per fold and scope (``all``, then each skill in sorted order): n, n_unscored
    and the metrics.  ``skill`` holds names, or ``(codes, names)`` from :func:`skill_codes`."""
    codes, names = skill if isinstance(skill, tuple) else pd.factorize(skill, sort=True)
    rows = []
    for f in range(int(folds.max()) + 1):
        in_fold = np.flatnonzero(folds == f)
        by_skill = in_fold[np.argsort(codes[in_fold], kind="stable")]
        bounds = np.searchsorted(codes[by_skill], np.arange(len(names) + 1))
        scopes = [("all", in_fold)] + [
            (names[k], by_skill[bounds[k] : bounds[k + 1]]) for k in range(len(names))
        ]
        for scope, rows_of in scopes:
            scored = ~np.isnan(p[rows_of])
            ok = rows_of[scored]
            row = {"fold": f, "scope": scope, "n": len(ok), "n_unscored": int((~scored).sum())}
            row.update(_metrics(y[ok], p[ok]))
            rows.append(row)
    return pd.DataFrame(rows)


def _metrics(y: np.ndarray, p: np.ndarray) -> dict[str, float]:
    if len(y) == 0:
        return dict.fromkeys(FOLD_METRICS, np.nan)
    return {
        "rmse": M.rmse(y, p),
        "auc": M.auc(y, p),
        "accuracy": M.accuracy(y, p),
        "loglik": M.log_likelihood(y, p),
    }


def mean_sd(scores: pd.DataFrame) -> pd.DataFrame:
    """Mean and SD (n - 1) over folds of each metric, per scope."""
    g = scores.groupby("scope", sort=False)[list(FOLD_METRICS)]
    out = g.mean().add_suffix("_mean").join(g.std(ddof=1).add_suffix("_sd"))
    out.insert(0, "n", scores.groupby("scope", sort=False)["n"].sum())
    return out.reset_index()


@dataclass
class CVResult(RunResults):
    """Cross-validation of one model: per-fold scores, their mean and SD, the held-out
    predictions and the fold of every row; ``data``: the responses cross-validated (for the
    ``heldout`` table), ``params``: the options as ``kt crossvalidate`` records them."""

    model: str
    by: str
    n_folds: int
    scores: pd.DataFrame  # fold, scope, n, n_unscored, metrics
    p_heldout: np.ndarray
    folds: np.ndarray
    data: pd.DataFrame | None = field(default=None, repr=False)
    params: dict[str, Any] = field(default_factory=dict)

    _writer = "edueval.kt.commands.model_runs:save_crossvalidation"

    def heldout(self) -> pd.DataFrame:
        """The responses with each row's ``fold`` and held-out ``p_correct``."""
        if self.data is None:
            raise ValueError("the responses were not kept: cross_validate keeps them")
        return self.data.assign(fold=self.folds, p_correct=self.p_heldout)

    def to_frame(self) -> pd.DataFrame:
        """Mean and SD over folds of each metric, pooled and per skill (:attr:`table`)."""
        return self.table

    def headline(self) -> dict[str, Any]:
        """``kt crossvalidate``'s results.json."""
        overall = self.table[self.table["scope"] == "all"].iloc[0]
        pooled = self.scores.loc[self.scores.scope == "all", "n_unscored"]
        return {"model": self.model, "folds": self.n_folds, "by": self.by,
                "n_responses": len(self.p_heldout), "n_unscored": int(pooled.sum()),
                **{f"{m}_{s}": float(overall[f"{m}_{s}"]) for m in FOLD_METRICS
                   for s in ("mean", "sd")}}  # fmt: skip

    @property
    def table(self) -> pd.DataFrame:
        return mean_sd(self.scores)

    def summary(self) -> str:
        """Plain text: the pooled row's mean ± SD of each metric and the per-fold values."""
        overall = self.scores[self.scores["scope"] == "all"]
        lines = [
            f"Cross-validation of {self.model}: {self.n_folds} folds by {self.by}",
            f"{'metric':<10}{'mean':>11}{'SD':>10}   per fold",
        ]
        for m in FOLD_METRICS:
            v = overall[m].to_numpy()
            lines.append(
                f"{m:<10}{np.mean(v):>11.4f}{np.std(v, ddof=1):>10.4f}   "
                + " ".join(f"{x:.4f}" for x in v)
            )
        lines.append(f"unscored responses (skill absent from training): "
                     f"{int(overall['n_unscored'].sum())}")  # fmt: skip
        return "\n".join(lines)


@takes_tables(df=RESPONSES)
def cross_validate(
    df: pd.DataFrame,
    make_model: Callable[[], Any],  # a model with fit(df) -> itself and predict(df)
    *,
    n_folds: int = 5,
    by: str = "student",
    seed: int | None = SEED,
    columns: Columns | None = None,
    name: str = "model",
) -> CVResult:
    """Fit ``make_model()`` on all folds but one, score the held-out fold, for every fold."""
    cols = (columns or Columns()).resolve(df)
    folds = make_folds(df, n_folds, by=by, seed=seed, columns=cols)
    p = heldout_predictions(df, make_model, folds, by=by, columns=cols)
    y = binary_column(df, cols.correct)
    params = {"model": name, "folds": n_folds, "by": by, "n_restarts": None,
              "columns": asdict(cols), "encoding": "utf-8", "seed": seed}  # fmt: skip
    return CVResult(name, by, n_folds, fold_scores(y, p, folds, skill_codes(df, cols)), p, folds,
                    df, params)  # fmt: skip
