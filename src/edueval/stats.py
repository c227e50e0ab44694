"""Shared statistics: the intervals and tests every protocol uses, in one place.

The bottom layer of the package: it imports numpy and scipy only, never another edueval module,
so any protocol can call it. Each function is checked against statsmodels or scipy in
``tests/test_stats.py``.

* **Proportions**: :func:`wilson_interval` (Wilson score interval, as statsmodels'
  ``proportion_confint(method="wilson")``), :func:`binomial_test` (exact, as
  ``scipy.stats.binomtest``) and :func:`sign_test` (exact sign test / exact McNemar on the
  discordant counts ``b`` and ``c``).
* **Clustered means**: :func:`cluster_totals` (per-cluster sums and sizes of row values),
  :func:`cr1_mean` (the mean of the rows with the cluster-robust CR1 standard error of Liang &
  Zeger, ``SE² = G/(G−1) · Σ_g E_g² / N²`` with ``E_g = Z_g − n_g z̄``, and ``G − 1`` degrees of
  freedom: statsmodels' ``OLS(z, 1).fit(cov_type="cluster")``) and
  :func:`clustered_proportion_interval` (its t interval for a pooled proportion, with the
  small-group fallback). A paired difference with clusters is the mean of the per-row
  differences: pass their cluster sums.
* **Means over a few values**: :func:`t_interval` (``mean ± t(1 − α/2, n − 1) · s / √n``) and
  :func:`paired_difference` (mean difference, its t interval and the one-sample t test of 0,
  as ``scipy.stats.ttest_rel``).
* **Correlation**: :func:`pearson` and :func:`point_biserial` (the same coefficient with a 0/1
  variable), NaN when either variable is constant.
* **Paired comparisons** (two models on the same items): :func:`paired_proportion_interval`
  (Tango's score interval of a difference of paired proportions),
  :func:`clustered_paired_difference` (a mean paired difference over rows in clusters, CR1 with
  t on G − 1 df, as statsmodels' OLS with cluster-robust SEs on the stacked differences),
  :func:`holm` (Holm's step-down adjusted p-values, as ``multipletests(method="holm")``),
  :func:`mcnemar_detectable_difference` and :func:`mcnemar_items_needed` (Connor's 1987 normal
  approximation of McNemar's test's power).

Every function accepts arrays and broadcasts (leading axes are a batch) unless its docstring
says it takes one sample; given Python scalars it returns Python floats.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

__all__ = [
    "MIN_CLUSTERS",
    "ClusteredInterval",
    "ClusteredMean",
    "PairedDifference",
    "ClusteredDifference",
    "binomial_test",
    "cluster_totals",
    "clustered_paired_difference",
    "holm",
    "mcnemar_detectable_difference",
    "mcnemar_items_needed",
    "paired_proportion_interval",
    "clustered_proportion_interval",
    "cr1_mean",
    "paired_difference",
    "pearson",
    "point_biserial",
    "sign_test",
    "t_interval",
    "wilson_interval",
]

#: fewest clusters for :func:`clustered_proportion_interval`'s CR1 interval: with fewer, the
#: sandwich variance rests on too few clusters (2 questions of 3 choices each gave an interval
#: of width 0; at 10 a 95% interval covered 93% by simulation), and Wilson's interval on one
#: observation per cluster is used instead
MIN_CLUSTERS = 20

_ALTERNATIVES = ("two-sided", "greater", "less")


def _out(x: np.ndarray, scalar: bool):
    """``x`` as a Python float when every input was a scalar, else as an array."""
    return float(x) if scalar else x


# --- proportions ---------------------------------------------------------------------------------


def wilson_interval(k, n, alpha: float = 0.05):
    """Wilson score ``1 − alpha`` interval of a proportion ``k / n``: ``(low, high)``.

    Computed as statsmodels' ``proportion_confint(k, n, alpha, method="wilson")`` (the same
    operations, so the same floats), clipped to [0, 1]; NaN where ``n == 0``. ``k`` need not be
    an integer (a share times a count, as in :func:`clustered_proportion_interval`)."""
    scalar = np.isscalar(k) and np.isscalar(n)
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    crit = sps.norm.isf(alpha / 2.0)
    crit2 = crit**2
    with np.errstate(divide="ignore", invalid="ignore"):
        q = k / n
        denom = 1 + crit2 / n
        center = (q + crit2 / (2 * n)) / denom
        dist = crit * np.sqrt(q * (1.0 - q) / n + crit2 / (4.0 * n**2))
        dist /= denom
    low = np.where(n > 0, np.clip(center - dist, 0, 1), np.nan)
    high = np.where(n > 0, np.clip(center + dist, 0, 1), np.nan)
    return _out(low, scalar), _out(high, scalar)


def _check_alternative(alternative: str) -> None:
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"alternative must be one of {_ALTERNATIVES}, got {alternative!r}")


def binomial_test(k, n, p: float = 0.5, alternative: str = "two-sided"):
    """Exact binomial test of ``H0: success probability = p`` from ``k`` successes in ``n``.

    The p-value of ``scipy.stats.binomtest(k, n, p, alternative)``: ``"greater"`` is
    ``P(X ≥ k)``, ``"less"`` ``P(X ≤ k)`` and ``"two-sided"`` sums the outcomes no more likely
    than ``k``, for ``X ~ Binomial(n, p)``. NaN where ``n == 0`` (no observation, no test)."""
    _check_alternative(alternative)
    scalar = np.isscalar(k) and np.isscalar(n)
    k, n = np.broadcast_arrays(np.asarray(k, dtype=np.int64), np.asarray(n, dtype=np.int64))
    if (k < 0).any() or (k > n).any():
        raise ValueError("binomial_test needs 0 <= k <= n")
    if alternative == "greater":  # binomtest's own formulas, vectorised
        pval = sps.binom.sf(k - 1, n, p)
    elif alternative == "less":
        pval = sps.binom.cdf(k, n, p)
    else:
        pval = np.full(k.shape, np.nan)
        for i in np.ndindex(k.shape):
            if n[i] > 0:
                pval[i] = sps.binomtest(int(k[i]), int(n[i]), p).pvalue
    return _out(np.where(n > 0, pval, np.nan), scalar)


def sign_test(b, c, alternative: str = "greater"):
    """Exact sign test (exact McNemar) on ``b`` pairs favouring the first of two and ``c`` the
    second, with ``X ~ Binomial(b + c, ½)``:

    * ``"greater"``: ``P(X ≥ b)`` (the first is better), :func:`binomial_test`'s p-value;
    * ``"less"``: ``P(X ≤ b)``;
    * ``"two-sided"``: ``min(1, 2·P(X ≤ min(b, c)))``, statsmodels'
      ``mcnemar(table, exact=True)``.

    1.0 where ``b + c == 0``: without a discordant pair there is nothing to reject."""
    _check_alternative(alternative)
    scalar = np.isscalar(b) and np.isscalar(c)
    b = np.asarray(b, dtype=float)
    c = np.asarray(c, dtype=float)
    n = b + c
    if alternative == "greater":
        pval = sps.binom.sf(b - 1, n, 0.5)
    elif alternative == "less":
        pval = sps.binom.cdf(b, n, 0.5)
    else:
        pval = np.minimum(1.0, 2.0 * sps.binom.cdf(np.minimum(b, c), n, 0.5))
    return _out(np.where(n > 0, pval, 1.0), scalar)


# --- cluster-robust means ------------------------------------------------------------------------


def cluster_totals(values, clusters) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums and sizes of row ``values``, clusters in sorted order of their labels
    (as a pandas ``groupby``): the input of :func:`cr1_mean`."""
    values = np.asarray(values, dtype=float)
    _, codes = np.unique(np.asarray(clusters), return_inverse=True)
    codes = codes.reshape(-1)
    sums = np.bincount(codes, weights=values.reshape(-1))
    sizes = np.bincount(codes).astype(float)
    return sums, sizes


@dataclass(frozen=True)
class ClusteredMean:
    """A mean of rows in clusters with its CR1 standard error; arrays of the batch shape.

    ``df`` is ``G − 1`` (``G`` = clusters of size > 0); ``se`` is NaN with fewer than 2."""

    mean: np.ndarray
    se: np.ndarray
    df: np.ndarray
    n_clusters: np.ndarray


def cr1_mean(cluster_sums, sizes) -> ClusteredMean:
    """Mean ``z̄ = Σ_g Z_g / N`` with the CR1 cluster-robust standard error, batched.

    ``cluster_sums[..., g]`` is ``Z_g``, the sum of cluster ``g``'s row values, and
    ``sizes[..., g]`` its rows ``n_g`` (clusters of size 0 are padding). With
    ``E_g = Z_g − n_g z̄``: ``SE² = G/(G−1) · Σ_g E_g² / N²`` on ``G − 1`` degrees of freedom
    (Liang & Zeger 1986 with the usual small-sample factor), equal to statsmodels'
    ``OLS(z, ones).fit(cov_type="cluster", cov_kwds={"groups": g}, use_t=True)``: its default
    ``use_correction=True`` factor ``G/(G−1) · (N−1)/(N−k)`` is ``G/(G−1)`` for the
    intercept-only model (k = 1), and its t inference is on ``df_resid_inference = G − 1``.
    A mean of paired differences ``x − y`` is the mean of the rows ``d = x − y``."""
    z = np.asarray(cluster_sums, dtype=float)
    sizes = np.asarray(sizes, dtype=float)
    n = sizes.sum(axis=-1)
    g = (sizes > 0).sum(axis=-1).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = z.sum(axis=-1) / n
        resid = z - sizes * mean[..., None]
        var = g / (g - 1) * (resid**2).sum(axis=-1) / n**2
        se = np.sqrt(var)
    return ClusteredMean(mean, np.where(g >= 2, se, np.nan), g - 1, g.astype(int))


@dataclass(frozen=True)
class ClusteredInterval:
    """A pooled proportion and its interval from :func:`clustered_proportion_interval`.

    ``method``: ``"cr1"`` (the clustered t interval), ``"few_clusters"`` or ``"zero_se"`` (the
    Wilson fallback, see there) or ``"empty"`` (no rows: everything NaN)."""

    estimate: float
    low: float
    high: float
    n_clusters: int
    method: str
    se: float = float("nan")
    df: float = float("nan")


def clustered_proportion_interval(
    cluster_sums, sizes, alpha: float = 0.05, min_clusters: int = MIN_CLUSTERS
) -> ClusteredInterval:
    """``1 − alpha`` interval of a pooled proportion ``p = Σ Z_g / N`` whose 0/1 rows come in
    clusters (one sample; ``cluster_sums`` and ``sizes`` as :func:`cluster_totals` gives them).

    ``"cr1"``: ``p ± t(1 − alpha/2, G − 1) · SE`` with :func:`cr1_mean`'s SE, clipped to [0, 1].
    Fallback: with fewer than ``min_clusters`` clusters (``"few_clusters"``), or a clustered SE
    of exactly 0 (``"zero_se"``: every cluster at the same rate, which is no evidence of
    precision, only too few distinct values), the Wilson interval of ``p`` counting each cluster
    once, ``wilson_interval(p·G, G)``: conservative, since a cluster's rows are not independent
    (for a rate pooled over 3 choices per question, Wilson on the rows covered 87-93% at 2-19
    questions in simulation; this fallback at least 99%)."""
    sums = np.asarray(cluster_sums, dtype=float)
    sizes = np.asarray(sizes, dtype=float)
    n = float(sizes.sum())
    if n == 0:
        return ClusteredInterval(np.nan, np.nan, np.nan, 0, "empty")
    est = cr1_mean(sums, sizes)
    p, g = float(est.mean), int(est.n_clusters)
    se = float(est.se) if g >= 2 else np.nan
    if g < min_clusters or se == 0:
        lo, hi = wilson_interval(p * g, g, alpha)
        method = "few_clusters" if g < min_clusters else "zero_se"
        return ClusteredInterval(p, lo, hi, g, method, se, g - 1)
    t = float(sps.t.ppf(1 - alpha / 2, g - 1))
    return ClusteredInterval(p, max(0.0, p - t * se), min(1.0, p + t * se), g, "cr1", se, g - 1)


# --- means over a few values ---------------------------------------------------------------------


def t_interval(values, level: float = 0.95, axis: int = -1):
    """``(mean, low, high)``: the t interval ``mean ± t(½ + level/2, n − 1) · s / √n`` of the
    mean of ``values`` along ``axis`` (``s`` the sample SD, ddof 1), as
    ``scipy.stats.t.interval(level, n − 1, mean, sem)``. NaN bounds with fewer than 2 values."""
    v = np.asarray(values, dtype=float)
    scalar = v.ndim == 1
    n = v.shape[axis]
    mean = v.mean(axis=axis)
    with np.errstate(divide="ignore", invalid="ignore"):
        sd = v.std(axis=axis, ddof=1) if n > 1 else np.full(np.shape(mean), np.nan)
        half = sps.t.ppf(0.5 + level / 2, n - 1) * sd / np.sqrt(n)
    return _out(mean, scalar), _out(mean - half, scalar), _out(mean + half, scalar)


@dataclass(frozen=True)
class PairedDifference:
    """Mean of paired differences ``x − y`` with its t interval and the two-sided t test of 0."""

    mean: float
    low: float
    high: float
    t: float
    p: float
    n: int


def paired_difference(x, y=None, level: float = 0.95) -> PairedDifference:
    """Paired differences ``d = x − y`` (or ``x`` itself, already differences, when ``y`` is
    None), one sample: mean, :func:`t_interval` and the one-sample t test of mean 0 on ``n − 1``
    df (``scipy.stats.ttest_rel(x, y)``)."""
    d = np.asarray(x, dtype=float)
    if y is not None:
        d = d - np.asarray(y, dtype=float)
    d = d.reshape(-1)
    mean, lo, hi = t_interval(d, level)
    t, p = sps.ttest_1samp(d, 0.0)
    return PairedDifference(mean, lo, hi, float(t), float(p), len(d))


# --- correlation ---------------------------------------------------------------------------------


def pearson(x, y) -> float:
    """Pearson correlation of two samples (one each); NaN when either variable is constant or
    there are fewer than 2 values (``scipy.stats.pearsonr`` warns and returns NaN there)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.size < 2:
        return float("nan")
    dx = x - x.mean()
    dy = y - y.mean()
    sxx = float(dx @ dx)
    syy = float(dy @ dy)
    if sxx <= 0.0 or syy <= 0.0:
        return float("nan")
    return float((dx @ dy) / np.sqrt(sxx * syy))


def point_biserial(binary, y) -> float:
    """Point-biserial correlation of a 0/1 variable with a numeric one: :func:`pearson` of the
    two (``scipy.stats.pointbiserialr``), e.g. an item score against the total score."""
    return pearson(binary, y)


# --- paired comparisons --------------------------------------------------------------------------


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values of one family of tests (one sample, any order): the
    ``i``-th smallest p times ``m − i + 1``, made non-decreasing and capped at 1, as statsmodels'
    ``multipletests(p, method="holm")[1]``.  NaN p-values stay NaN and do not count in ``m``."""
    p = np.asarray(pvalues, dtype=float).reshape(-1)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out[order] = np.minimum(adj, 1.0)
    return out


def paired_proportion_interval(n11, n10, n01, n00, alpha: float = 0.05) -> tuple[float, float]:
    """``1 − alpha`` interval of ``Δ = p1 − p2 = (n10 − n01) / n`` for two 0/1 outcomes on the
    same ``n`` items (``n10``: items only the first gets right, ``n01``: only the second;
    ``n11``, ``n00``: both right, both wrong), one sample.

    Tango's (1998) asymptotic score interval: the ``Δ`` whose score statistic
    ``Z(Δ) = (n10 − n01 − nΔ) / √(n·(2p̃ + Δ(1 − Δ)))`` has ``|Z| ≤ z_{1−α/2}``, with ``p̃`` the
    maximum-likelihood ``p01`` under ``p10 − p01 = Δ``:
    ``p̃ = (√(W² + 8n·n01·Δ(1 − Δ)) − W) / 4n``, ``W = (2n − n10 + n01)Δ − n10 − n01``.  At
    ``Δ = 0``, ``Z`` is McNemar's ``(n10 − n01)/√(n10 + n01)``, so the interval excludes 0 exactly
    when McNemar's asymptotic test rejects (the exact test, more conservative with few
    discordant items, can keep a p-value above alpha there).  Recommended for paired
    proportions by Fagerland, Lydersen & Laake (2014); inside [−1, 1], never empty.  NaN with
    no item."""
    from scipy.optimize import brentq

    b, c = float(n10), float(n01)
    n = float(n11) + b + c + float(n00)
    if n == 0:
        return float("nan"), float("nan")
    z = float(sps.norm.isf(alpha / 2))

    def score(delta: float) -> float:
        w = (2 * n - b + c) * delta - b - c
        root = np.sqrt(max(w * w + 8 * n * c * delta * (1 - delta), 0.0))
        var = n * (2 * (root - w) / (4 * n) + delta * (1 - delta))
        num = b - c - n * delta
        return num / np.sqrt(var) if var > 0 else (0.0 if num == 0 else np.sign(num) * np.inf)

    d, eps = (b - c) / n, 1e-12
    low = -1.0 if score(-1 + eps) <= z else brentq(lambda t: score(t) - z, -1 + eps, d, xtol=1e-14)
    high = 1.0 if score(1 - eps) >= -z else brentq(lambda t: score(t) + z, d, 1 - eps, xtol=1e-14)
    return float(low), float(high)


@dataclass(frozen=True)
class ClusteredDifference:
    """A mean paired difference over rows in clusters from :func:`clustered_paired_difference`.

    ``method``: ``"cr1"`` (t on ``df = G − 1``), ``"sign test"`` (every cluster's difference the
    same, so the clustered SE is 0: the exact sign test on the clusters' signs and no interval
    beyond the point) or ``"empty"`` (fewer than 2 clusters: NaN)."""

    mean: float
    se: float
    df: float
    low: float
    high: float
    t: float
    p: float
    n_clusters: int
    method: str


def clustered_paired_difference(cluster_sums, sizes, alpha: float = 0.05) -> ClusteredDifference:
    """Mean of paired row differences ``d = x − y`` whose rows come in clusters (one sample;
    ``cluster_sums`` the clusters' sums of ``d``, ``sizes`` their rows, as :func:`cluster_totals`
    gives them) with the CR1 standard error of :func:`cr1_mean`, its ``1 − alpha`` t interval on
    ``G − 1`` df and the two-sided t test of 0: statsmodels'
    ``OLS(d, ones).fit(cov_type="cluster", cov_kwds={"groups": g}, use_t=True)`` (``params``,
    ``bse``, ``conf_int``, ``pvalues``).  With every cluster of the same size this is the paired
    t test on the clusters' mean differences.  A clustered SE of 0 (every cluster's mean
    difference equal) is no evidence of precision: the exact two-sided :func:`sign_test` on the
    clusters' signs is used instead (``p = 1`` when every difference is 0)."""
    sums = np.asarray(cluster_sums, dtype=float)
    sizes = np.asarray(sizes, dtype=float)
    est = cr1_mean(sums, sizes)
    g = int(est.n_clusters)
    mean, se = float(est.mean), float(est.se)
    if g < 2:
        nan = float("nan")
        return ClusteredDifference(mean, nan, nan, nan, nan, nan, nan, g, "empty")
    if se == 0 or not np.isfinite(se):
        pos, neg = int((sums[sizes > 0] > 0).sum()), int((sums[sizes > 0] < 0).sum())
        p = sign_test(pos, neg, "two-sided")
        return ClusteredDifference(mean, 0.0, g - 1, mean, mean, float("nan"), p, g, "sign test")
    t = mean / se
    q = float(sps.t.ppf(1 - alpha / 2, g - 1))
    p = float(2 * sps.t.sf(abs(t), g - 1))
    return ClusteredDifference(mean, se, g - 1, mean - q * se, mean + q * se, t, p, g, "cr1")


def _z(alpha: float, power: float) -> tuple[float, float]:
    return float(sps.norm.isf(alpha / 2)), float(sps.norm.ppf(power))


def mcnemar_detectable_difference(
    discordance: float, n: int, alpha: float = 0.05, power: float = 0.8
) -> float:
    """The smallest difference ``δ = p10 − p01`` that McNemar's two-sided level-``alpha`` test on
    ``n`` items detects with probability ``power`` when a share ``discordance = p10 + p01`` of
    the items is discordant (one sample): the root of Connor's (1987) normal approximation
    ``n·δ² = (z_{1−α/2}·√ψ + z_{power}·√(ψ − δ²))²``.  NaN when there is no discordance or when
    even ``δ = ψ`` (every discordant item favouring one side) is out of reach (``n·ψ < z²``)."""
    from scipy.optimize import brentq

    psi = float(discordance)
    za, zb = _z(alpha, power)
    if not (psi > 0 and n > 0):
        return float("nan")

    def gap(delta: float) -> float:
        return n * delta**2 - (za * np.sqrt(psi) + zb * np.sqrt(max(psi - delta**2, 0.0))) ** 2

    if gap(psi) < 0:
        return float("nan")
    return float(brentq(gap, 1e-12, psi, xtol=1e-12))


def mcnemar_items_needed(
    difference: float, discordance: float, alpha: float = 0.05, power: float = 0.8
) -> int:
    """Items McNemar's two-sided level-``alpha`` test needs to detect ``difference = p10 − p01``
    with probability ``power`` at a discordance rate ``ψ = p10 + p01`` (Connor 1987):
    ``⌈(z_{1−α/2}·√ψ + z_{power}·√(ψ − δ²))² / δ²⌉``.  A difference needs at least as much
    discordance: ``ψ`` below ``|δ|`` is raised to ``|δ|``."""
    delta = abs(float(difference))
    if delta <= 0:
        raise ValueError("the difference to detect must be non-zero")
    psi = max(float(discordance), delta)
    za, zb = _z(alpha, power)
    return int(np.ceil((za * np.sqrt(psi) + zb * np.sqrt(psi - delta**2)) ** 2 / delta**2))
