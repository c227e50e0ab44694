"""Goodness-of-fit metrics of probabilistic predictions of binary outcomes.

The suite of Pardos & Yudelson (Sec. 6.1), with the standard definitions where the paper has typos
(its FPR denominator and its Efron R-squared without squares):

- accuracy, precision, recall, F1 -- predictions thresholded at 0.5 (p >= 0.5 counts as 1);
  precision is 0 when nothing is predicted positive and F1 is 0 when precision + recall = 0
  (scikit-learn's ``zero_division=0``);
- AUC -- area under the ROC curve, ties at their average rank (predictions rounded to 12
  decimals first, so floating-point noise does not break ties); NaN when only one class occurs;
- RMSE; Efron's pseudo-R^2 = 1 - sum (y - p)^2 / sum (y - mean y)^2;
- log-likelihood (natural log, summed; probabilities clipped to [1e-12, 1 - 1e-12], and the
  number of clipped predictions reported as ``n_clipped``), AIC = -2 LL + 2k, AICc = AIC + 2k(k+1)/(N-k-1),
  BIC = -2 LL + k ln N, with k free parameters and N responses;
- CBD, capped binomial deviance: -mean(y log10 p + (1-y) log10(1-p)) with p clipped to
  [0.001, 0.999].

Every function takes labels ``y`` of shape (n,) and predictions ``p`` of shape (n,) or (m, n) --
``m`` candidate models scored on the same labels at once -- and returns a float or an (m,) array.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import _common_kernels as K

__all__ = [
    "METRICS",
    "HIGHER_IS_BETTER",
    "LABELS",
    "accuracy",
    "precision",
    "recall",
    "f1",
    "auc",
    "rmse",
    "efron_r2",
    "log_likelihood",
    "aic",
    "aicc",
    "bic",
    "capped_binomial_deviance",
    "evaluate",
]

METRICS = (
    "accuracy",
    "precision",
    "recall",
    "f1",
    "auc",
    "rmse",
    "r2",
    "loglik",
    "aic",
    "aicc",
    "bic",
    "cbd",
)
HIGHER_IS_BETTER = {
    "accuracy": True,
    "precision": True,
    "recall": True,
    "f1": True,
    "auc": True,
    "rmse": False,
    "r2": True,
    "loglik": True,
    "aic": False,
    "aicc": False,
    "bic": False,
    "cbd": False,
}
LABELS = {
    "accuracy": "accuracy",
    "precision": "precision",
    "recall": "recall",
    "f1": "F-measure",
    "auc": "AU ROC",
    "rmse": "RMSE",
    "r2": "pseudo R²",
    "loglik": "log-likelihood",
    "aic": "AIC",
    "aicc": "AICc",
    "bic": "BIC",
    "cbd": "CBD",
}

THRESHOLD = 0.5
CBD_CAP = 0.001


def _prep(y, p):
    y = np.asarray(y)
    p = np.asarray(p, dtype=float)
    if y.ndim != 1:
        raise ValueError("y must be one-dimensional")
    if p.shape[-1] != y.shape[0]:
        raise ValueError(f"p has {p.shape[-1]} predictions for {y.shape[0]} labels")
    if y.shape[0] == 0:
        raise ValueError("no observations to score")
    return y.astype(np.int8), np.atleast_2d(p), p.ndim == 1


def _out(values: np.ndarray, single: bool):
    return float(values[0]) if single else values


def _confusion(y, P):
    hit = P >= THRESHOLD
    yb = y.astype(bool)
    tp = (hit & yb).sum(axis=1).astype(float)
    fp = (hit & ~yb).sum(axis=1).astype(float)
    fn = (~hit & yb).sum(axis=1).astype(float)
    tn = (~hit & ~yb).sum(axis=1).astype(float)
    return tp, fp, fn, tn


def _safe_div(a, b):
    return np.divide(a, b, out=np.zeros_like(a), where=b > 0)


def accuracy(y, p):
    y, P, single = _prep(y, p)
    tp, fp, fn, tn = _confusion(y, P)
    return _out((tp + tn) / (tp + fp + fn + tn), single)


def precision(y, p):
    y, P, single = _prep(y, p)
    tp, fp, _, _ = _confusion(y, P)
    return _out(_safe_div(tp, tp + fp), single)


def recall(y, p):
    y, P, single = _prep(y, p)
    tp, _, fn, _ = _confusion(y, P)
    return _out(_safe_div(tp, tp + fn), single)


def f1(y, p):
    y, P, single = _prep(y, p)
    tp, fp, fn, _ = _confusion(y, P)
    return _out(_safe_div(2 * tp, 2 * tp + fp + fn), single)


#: AUC ranks predictions rounded to this many decimals: values equal but for the last bits of
#: floating-point noise (the same probability computed along two paths) count as ties
AUC_DECIMALS = 12


def _auc_rows(y: np.ndarray, P: np.ndarray) -> np.ndarray:
    yb = y.astype(bool)
    P = np.round(P, AUC_DECIMALS)
    pos = np.sort(P[:, yb], axis=1)  # numpy's vectorised sort; labels split first, so no argsort
    neg = np.sort(P[:, ~yb], axis=1)
    return K.auc_sorted(pos, neg)


def auc(y, p):
    y, P, single = _prep(y, p)
    return _out(_auc_rows(y, P), single)


def rmse(y, p):
    y, P, single = _prep(y, p)
    return _out(np.sqrt(np.mean((P - y) ** 2, axis=1)), single)


def efron_r2(y, p):
    y, P, single = _prep(y, p)
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    ss_res = np.sum((P - y) ** 2, axis=1)
    return _out(1.0 - ss_res / ss_tot if ss_tot > 0 else np.full(len(P), np.nan), single)


#: probabilities are clipped to [LL_CLIP, 1 - LL_CLIP] in the log-likelihood: a prediction of
#: exactly 0 or 1 that the outcome contradicts (p_known = 1 for a student who does not know)
#: would give -inf, which JSON cannot hold and which hides every other row's contribution
LL_CLIP = 1e-12


def log_likelihood(y, p):
    y, P, single = _prep(y, p)
    Pc = np.clip(P, LL_CLIP, 1.0 - LL_CLIP)
    ll = np.log(np.where(y == 1, Pc, 1.0 - Pc)).sum(axis=1)
    return _out(ll, single)


def n_clipped(y, p):
    """Predictions that gave the observed outcome a probability below ``LL_CLIP`` (clipped in
    the log-likelihood): reported beside it so a clipped value is never taken at face value."""
    y, P, single = _prep(y, p)
    return _out(np.sum(np.where(y == 1, P, 1.0 - P) < LL_CLIP, axis=1).astype(float), single)


def aic(y, p, k: int = 4):
    return -2.0 * log_likelihood(y, p) + 2 * k


def aicc(y, p, k: int = 4):
    n = np.asarray(y).shape[0]
    if n - k - 1 <= 0:
        return aic(y, p, k) * np.nan
    return aic(y, p, k) + 2 * k * (k + 1) / (n - k - 1)


def bic(y, p, k: int = 4):
    n = np.asarray(y).shape[0]
    return -2.0 * log_likelihood(y, p) + k * np.log(n)


def capped_binomial_deviance(y, p):
    y, P, single = _prep(y, p)
    Pc = np.clip(P, CBD_CAP, 1 - CBD_CAP)
    dev = -np.log10(np.where(y == 1, Pc, 1.0 - Pc)).mean(axis=1)
    return _out(dev, single)


def evaluate(y, p, k: int = 4) -> dict[str, float] | pd.DataFrame:
    """All metrics at once: a dict for one prediction vector, a DataFrame (one row per model) for
    an (m, n) array."""
    y, P, single = _prep(y, p)
    n = y.shape[0]
    tp, fp, fn, tn = _confusion(y, P)
    ll = log_likelihood(y, P)
    out = {
        "accuracy": (tp + tn) / n,
        "precision": _safe_div(tp, tp + fp),
        "recall": _safe_div(tp, tp + fn),
        "f1": _safe_div(2 * tp, 2 * tp + fp + fn),
        "auc": _auc_rows(y, P),
        "rmse": np.sqrt(np.mean((P - y) ** 2, axis=1)),
        "r2": efron_r2(y, P),
        "loglik": ll,
        "aic": -2 * ll + 2 * k,
        "aicc": (-2 * ll + 2 * k + 2 * k * (k + 1) / (n - k - 1)) if n - k - 1 > 0 else ll * np.nan,
        "bic": -2 * ll + k * np.log(n),
        "cbd": capped_binomial_deviance(y, P),
        "n_clipped": n_clipped(y, P),
    }
    if single:
        return {name: float(v[0]) for name, v in out.items()}
    return pd.DataFrame(out)
