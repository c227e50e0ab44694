"""Reliability of a test from a score table: Cronbach's alpha (KR-20), its interval, alpha if an
item is deleted, the standard error of measurement and the odd-even split half.

Definitions, for ``k`` items with item variances ``s_i^2``, covariance matrix ``C`` and total
score ``X = sum_i x_i`` (variance ``s_X^2 = sum(C)``):

* **alpha** = k/(k-1) * (1 - sum_i s_i^2 / s_X^2) (Cronbach 1951).  On 0/1 items it is **KR-20**
  = k/(k-1) * (1 - sum_i p_i q_i / s_X^2) (Kuder & Richardson 1937), ``p_i`` the proportion
  correct, with ``s_X^2`` the variance divided by ``n`` (so that KR-20 equals alpha exactly);
  computed on the students who answered every item, and NaN unless every score is 0 or 1.
* **Feldt's interval** (Feldt 1965; Feldt, Woodruff & Salih 1987): (1 - alpha) / (1 - alpha_hat)
  follows an F distribution with ``n - 1`` and ``(n - 1)(k - 1)`` degrees of freedom, so the
  ``1 - gamma`` interval is ``[1 - (1 - alpha_hat) F_{1-gamma/2}, 1 - (1 - alpha_hat) F_{gamma/2}]``.
  It assumes the two-way (persons x items) random model with normal errors; on 0/1 items it is an
  approximation.
* **alpha if item deleted**: alpha of the other ``k - 1`` items.
* **SEM** = s_X * sqrt(1 - alpha), in the units of the total score.
* **split half**: the Pearson correlation ``r`` of the totals over the odd-numbered items (1st,
  3rd, ... in the table's column order) and over the even-numbered ones, stepped up to the whole
  test by Spearman-Brown, 2r / (1 + r).

**Missing responses** (NaN, "not administered").  ``missing="pairwise"`` (the default, as R's
``psych::alpha``): each variance and covariance is computed over the students who answered both
items (available cases); every quantity above is a function of ``C`` and is computed from it; the
``n`` of Feldt's interval is the smallest number of students behind any entry of ``C`` (the
conservative choice).  ``missing="complete"``: only the students who answered every item
(listwise deletion, as SPSS RELIABILITY).  With complete data the two agree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..results import RunResults

__all__ = ["MISSING", "Reliability", "cronbach_alpha", "feldt_interval", "reliability"]

MISSING = ("pairwise", "complete")


def cronbach_alpha(cov: np.ndarray) -> float:
    """Cronbach's alpha from a ``k x k`` covariance matrix (NaN when ``k < 2`` or the total
    has no variance)."""
    k = cov.shape[0]
    total = float(cov.sum())
    if k < 2 or not total > 0:
        return float("nan")
    return k / (k - 1) * (1.0 - float(np.trace(cov)) / total)


def feldt_interval(alpha: float, n: int, k: int, level: float = 0.95) -> tuple[float, float]:
    """Feldt's (1965) ``level`` interval for alpha estimated from ``n`` persons and ``k`` items."""
    from scipy.stats import f

    if not np.isfinite(alpha) or n < 2 or k < 2:
        return float("nan"), float("nan")
    df1, df2 = n - 1, (n - 1) * (k - 1)
    tail = (1.0 - level) / 2.0
    lower = 1.0 - (1.0 - alpha) * float(f.ppf(1.0 - tail, df1, df2))
    upper = 1.0 - (1.0 - alpha) * float(f.ppf(tail, df1, df2))
    return lower, upper


def _alpha_if_deleted(cov: np.ndarray) -> np.ndarray:
    k = cov.shape[0]
    keep = ~np.eye(k, dtype=bool)
    return np.array([cronbach_alpha(cov[np.ix_(keep[i], keep[i])]) for i in range(k)])


def _split_half(cov: np.ndarray) -> tuple[float, float]:
    """Odd-even half correlation and its Spearman-Brown step-up, from the covariance matrix."""
    k = cov.shape[0]
    if k < 2:
        return float("nan"), float("nan")
    odd = np.arange(k) % 2 == 0  # 1st, 3rd, ... items (positions 0, 2, ...)
    var_a = float(cov[np.ix_(odd, odd)].sum())
    var_b = float(cov[np.ix_(~odd, ~odd)].sum())
    cov_ab = float(cov[np.ix_(odd, ~odd)].sum())
    if not (var_a > 0 and var_b > 0):
        return float("nan"), float("nan")
    r = cov_ab / np.sqrt(var_a * var_b)
    return float(r), float(2 * r / (1 + r)) if r != -1 else float("nan")


def _pairwise(x: np.ndarray) -> tuple[np.ndarray, int]:
    """Available-case covariance matrix (ddof 1) and the smallest pair count behind it."""
    seen = (~np.isnan(x)).astype(float)
    z = np.nan_to_num(x)
    n = seen.T @ seen
    sums = z.T @ seen  # sums[i, j] = sum of x_i over students who answered i and j
    prods = z.T @ z
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = (prods - sums * sums.T / n) / (n - 1)
    return cov, int(n.min())


@dataclass
class Reliability(RunResults):
    """Results of :func:`reliability`: the coefficients, and per item ``items`` (``item, n,
    mean, sd, alpha_if_deleted``).  ``results()`` is ``items reliability``'s results.json (and
    the ``reliability`` entry of ``items analyze``'s); ``save(folder)`` writes the folder
    ``items reliability`` writes."""

    _writer = "edueval.items.reliability_pipeline:save_reliability"

    alpha: float
    alpha_low: float
    alpha_high: float
    kr20: float
    sem: float
    split_half_r: float
    spearman_brown: float
    n_students: int
    n_used: int
    n_items: int
    level: float
    missing: str
    dichotomous: bool
    total_mean: float
    total_sd: float
    items: pd.DataFrame

    def as_dict(self) -> dict[str, float | int | str | bool | None]:
        """The coefficients as ``results.json`` holds them (NaN as None)."""
        keys = ("alpha", "alpha_low", "alpha_high", "kr20", "sem", "split_half_r",
                "spearman_brown", "n_students", "n_used", "n_items", "level", "missing",
                "dichotomous", "total_mean", "total_sd")  # fmt: skip
        out: dict[str, float | int | str | bool | None] = {}
        for key in keys:
            value = getattr(self, key)
            out[key] = None if isinstance(value, float) and not np.isfinite(value) else value
        return out

    def headline(self) -> dict[str, float | int | str | bool | None]:
        """The coefficients of ``items reliability``'s results.json (NaN as None)."""
        return self.as_dict()

    def to_frame(self) -> pd.DataFrame:
        """Tidy rows ``measure, value`` of the coefficients."""
        return pd.DataFrame(
            {"measure": list(self.as_dict()), "value": list(self.as_dict().values())}
        )

    def summary(self) -> str:
        lines = [
            f"Cronbach's alpha {self.alpha:.3f} ({100 * self.level:g}% Feldt interval "
            f"{self.alpha_low:.3f} to {self.alpha_high:.3f}); {self.n_items} items, "
            f"{self.n_used} of {self.n_students} students ({self.missing})",
            f"SEM {self.sem:.3f} (total score SD {self.total_sd:.3f}); odd-even split half "
            f"r {self.split_half_r:.3f}, Spearman-Brown {self.spearman_brown:.3f}",
        ]
        if self.dichotomous:
            lines.append(f"KR-20 {self.kr20:.3f} (0/1 items; students who answered every item)")
        return "\n".join(lines)


def reliability(
    scores: pd.DataFrame, *, missing: str = "pairwise", level: float = 0.95
) -> Reliability:
    """Reliability of the test a wide score frame holds (students x items, NaN = not
    administered; :func:`~edueval.items.scores.read_scores`).  See the module docstring."""
    if missing not in MISSING:
        raise ValueError(f"missing= must be one of {', '.join(MISSING)}, got {missing!r}")
    if not 0 < level < 1:
        raise ValueError(f"level= must be between 0 and 1, got {level!r}")
    x = scores.to_numpy(dtype=float)
    n_students, k = x.shape
    answered = ~np.isnan(x)
    if missing == "complete":
        x = x[answered.all(axis=1)]
        n_used = n_min = x.shape[0]
        cov = (
            np.cov(x, rowvar=False, ddof=1).reshape(k, k) if n_used > 1 else np.full((k, k), np.nan)
        )
    else:
        cov, n_min = _pairwise(x)
        n_used = int(answered.any(axis=1).sum())
    alpha = cronbach_alpha(cov)
    low, high = feldt_interval(alpha, n_min, k, level)
    total_var = float(cov.sum())
    dichotomous = bool(np.isin(x[~np.isnan(x)], (0.0, 1.0)).all())
    kr20 = _kr20(x[~np.isnan(x).any(axis=1)]) if dichotomous else float("nan")
    r, sb = _split_half(cov)
    with np.errstate(invalid="ignore"):
        means = np.nanmean(np.where(answered, scores.to_numpy(dtype=float), np.nan), axis=0)
    items = pd.DataFrame({
        "item": scores.columns.to_numpy(dtype=object),
        "n": answered.sum(axis=0),
        "mean": means,
        "sd": np.sqrt(np.diag(cov)),
        "alpha_if_deleted": _alpha_if_deleted(cov),
    })  # fmt: skip
    sd = float(np.sqrt(total_var)) if total_var >= 0 else float("nan")
    return Reliability(
        alpha=alpha, alpha_low=low, alpha_high=high, kr20=kr20,
        sem=sd * float(np.sqrt(1 - alpha)) if np.isfinite(alpha) and alpha <= 1 else float("nan"),
        split_half_r=r, spearman_brown=sb, n_students=n_students, n_used=n_used, n_items=k,
        level=level, missing=missing, dichotomous=dichotomous,
        total_mean=float(means.sum()),
        total_sd=sd, items=items,
    )  # fmt: skip


def _kr20(x: np.ndarray) -> float:
    """KR-20 on complete 0/1 data: k/(k-1) (1 - sum p q / var(X)), var over ``n``."""
    n, k = x.shape
    if n < 2 or k < 2:
        return float("nan")
    p = x.mean(axis=0)
    var_total = float(x.sum(axis=1).var())
    if not var_total > 0:
        return float("nan")
    return k / (k - 1) * (1.0 - float((p * (1 - p)).sum()) / var_total)
