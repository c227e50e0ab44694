"""edueval.stats against statsmodels and scipy, function by function."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from edueval import stats

RNG = np.random.default_rng(20240519)


# --- Wilson --------------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.01])
def test_wilson_equals_statsmodels_bit_for_bit(alpha):
    n = np.repeat(np.arange(1, 60), np.arange(2, 61))
    k = np.concatenate([np.arange(m + 1) for m in range(1, 60)])
    lo, hi = stats.wilson_interval(k, n, alpha)
    ref_lo, ref_hi = proportion_confint(k, n, alpha=alpha, method="wilson")
    assert np.array_equal(lo, ref_lo) and np.array_equal(hi, ref_hi)
    for kk, nn in [(0, 1), (3, 7), (7, 7), (120, 300)]:  # scalars: Python floats, same values
        got = stats.wilson_interval(kk, nn, alpha)
        assert got == proportion_confint(kk, nn, alpha=alpha, method="wilson")
        assert all(type(x) is float for x in got)


def test_wilson_takes_a_non_integer_count_and_is_nan_without_observations():
    got = stats.wilson_interval(0.4 * 7, 7)  # a share counted once per cluster
    assert got == proportion_confint(0.4 * 7, 7, alpha=0.05, method="wilson")
    assert all(np.isnan(stats.wilson_interval(0, 0)))
    lo, hi = stats.wilson_interval(np.array([0, 2]), np.array([0, 4]))
    assert np.isnan(lo[0]) and np.isnan(hi[0]) and 0 < lo[1] < 0.5 < hi[1] < 1


# --- binomial and sign tests ---------------------------------------------------------------------


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("p", [0.5, 0.25, 1 / 3])
def test_binomial_test_equals_scipy_binomtest(alternative, p):
    for n in (1, 2, 7, 30, 101):
        for k in range(n + 1):
            got = stats.binomial_test(k, n, p, alternative)
            ref = sps.binomtest(k, n, p, alternative=alternative).pvalue
            assert type(got) is float and got == ref, (k, n, got, ref)


def test_binomial_test_is_vectorised_and_nan_without_observations():
    k, n = np.array([[0, 3], [5, 0]]), np.array([[0, 9], [5, 4]])
    got = stats.binomial_test(k, n, 0.25, "greater")
    assert got.shape == (2, 2) and np.isnan(got[0, 0])
    assert got[0, 1] == sps.binomtest(3, 9, 0.25, alternative="greater").pvalue
    assert got[1, 1] == 1.0
    two = stats.binomial_test(k, n, 0.25)
    assert two[1, 0] == sps.binomtest(5, 5, 0.25).pvalue
    with pytest.raises(ValueError):
        stats.binomial_test(4, 3)
    with pytest.raises(ValueError):
        stats.binomial_test(1, 3, alternative="larger")


def test_sign_test_one_sided_equals_binomtest():
    for b in range(15):
        for c in range(15):
            n = b + c
            for alt in ("greater", "less"):
                got = stats.sign_test(b, c, alt)
                ref = sps.binomtest(b, n, 0.5, alternative=alt).pvalue if n else 1.0
                assert got == ref, (b, c, alt)
    assert stats.sign_test(0, 0) == 1.0  # default one-sided "the first is better"


def test_sign_test_two_sided_equals_statsmodels_exact_mcnemar():
    b = RNG.integers(0, 30, 200)
    c = RNG.integers(0, 30, 200)
    got = stats.sign_test(b, c, "two-sided")
    for i in range(len(b)):
        ref = mcnemar([[5, b[i]], [c[i], 5]], exact=True).pvalue
        assert got[i] == pytest.approx(ref, rel=1e-12, abs=0), (b[i], c[i])
    assert stats.sign_test(0, 0, "two-sided") == 1.0


# --- CR1 clustered mean --------------------------------------------------------------------------


def _clustered_rows(g: int, rng: np.random.Generator, binary: bool = False):
    sizes = rng.integers(1, 8, g)
    cluster = np.repeat(rng.permutation(g) * 7 + 3, sizes)  # unsorted, non-contiguous labels
    effect = rng.normal(size=g)
    if binary:
        y = (rng.random(len(cluster)) < np.repeat(sps.norm.cdf(effect), sizes)).astype(float)
    else:
        y = np.repeat(effect, sizes) + rng.normal(size=len(cluster))
    return y, cluster


def _ols_cluster(y, cluster):
    ones = np.ones(len(y))
    return sm.OLS(y, ones).fit(cov_type="cluster", cov_kwds={"groups": cluster}, use_t=True)


@pytest.mark.parametrize("g", [2, 3, 10, 40])
def test_cr1_mean_equals_statsmodels_ols_cluster(g):
    """statsmodels' default cluster correction G/(G-1)·(N-1)/(N-k) is CR1's G/(G-1) for an
    intercept-only model (k = 1), and its t inference is on G - 1 df."""
    y, cluster = _clustered_rows(g, RNG)
    fit = _ols_cluster(y, cluster)
    est = stats.cr1_mean(*stats.cluster_totals(y, cluster))
    assert est.mean == pytest.approx(fit.params[0], rel=1e-12)
    assert est.se == pytest.approx(fit.bse[0], rel=1e-10)
    assert est.df == fit.df_resid_inference == g - 1 and est.n_clusters == g
    t = sps.t.ppf(0.975, est.df)
    assert np.allclose(fit.conf_int()[0], [est.mean - t * est.se, est.mean + t * est.se])


def test_cr1_mean_is_batched_with_padding_and_takes_paired_differences():
    rows = [_clustered_rows(g, RNG) for g in (4, 9, 6)]
    width = 12
    sums = np.zeros((3, width))
    sizes = np.zeros((3, width))
    for i, (y, cluster) in enumerate(rows):
        s, n = stats.cluster_totals(y, cluster)
        sums[i, : len(s)], sizes[i, : len(n)] = s, n  # the rest: size-0 padding
    est = stats.cr1_mean(sums, sizes)
    for i, (y, cluster) in enumerate(rows):
        fit = _ols_cluster(y, cluster)
        assert est.se[i] == pytest.approx(fit.bse[0], rel=1e-10)
        assert est.df[i] == len(np.unique(cluster)) - 1
    # a paired difference x - y: the CR1 mean of the per-row differences
    x, cluster = _clustered_rows(15, RNG)
    y = x + RNG.normal(0.2, 1.0, len(x))
    est = stats.cr1_mean(*stats.cluster_totals(x - y, cluster))
    assert est.se == pytest.approx(_ols_cluster(x - y, cluster).bse[0], rel=1e-10)
    assert np.isnan(stats.cr1_mean([3.0], [5.0]).se)  # one cluster: no clustered SE


def test_cluster_totals_equal_a_pandas_groupby():
    y, cluster = _clustered_rows(25, RNG)
    sums, sizes = stats.cluster_totals(y, cluster.astype(str))
    ref = pd.DataFrame({"y": y, "g": cluster.astype(str)}).groupby("g")["y"].agg(["sum", "count"])
    assert np.allclose(sums, ref["sum"]) and np.array_equal(sizes, ref["count"])


def test_clustered_proportion_interval_is_the_cr1_t_interval_from_min_clusters_on():
    y, cluster = _clustered_rows(stats.MIN_CLUSTERS + 5, RNG, binary=True)
    ci = stats.clustered_proportion_interval(*stats.cluster_totals(y, cluster))
    fit = _ols_cluster(y, cluster)
    lo, hi = fit.conf_int(alpha=0.05)[0]
    assert ci.method == "cr1" and ci.df == stats.MIN_CLUSTERS + 4
    assert ci.estimate == pytest.approx(y.mean(), rel=1e-12)
    assert ci.se == pytest.approx(fit.bse[0], rel=1e-10)
    assert (ci.low, ci.high) == pytest.approx((max(0.0, lo), min(1.0, hi)), rel=1e-10)


def test_clustered_proportion_interval_falls_back_to_wilson_per_cluster():
    y, cluster = _clustered_rows(stats.MIN_CLUSTERS - 1, RNG, binary=True)
    sums, sizes = stats.cluster_totals(y, cluster)
    ci = stats.clustered_proportion_interval(sums, sizes)
    g = stats.MIN_CLUSTERS - 1
    ref = proportion_confint(y.mean() * g, g, alpha=0.05, method="wilson")
    assert ci.method == "few_clusters" and ci.n_clusters == g
    assert (ci.low, ci.high) == pytest.approx(ref, rel=1e-12)
    # every cluster at the same rate: a clustered SE of exactly 0 is no evidence of precision
    ci = stats.clustered_proportion_interval(np.full(30, 1.0), np.full(30, 3.0))
    assert ci.method == "zero_se" and ci.high - ci.low > 0.2
    assert ci.low == pytest.approx(proportion_confint(10, 30, method="wilson")[0], rel=1e-12)
    # a lower threshold and another level
    ci = stats.clustered_proportion_interval(sums, sizes, alpha=0.1, min_clusters=5)
    assert ci.method == "cr1" and ci.high - ci.low < 0.9
    empty = stats.clustered_proportion_interval(np.array([]), np.array([]))
    assert empty.method == "empty" and np.isnan(empty.low)


# --- t interval and paired differences -----------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 5, 10, 40])
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_t_interval_equals_scipy(n, level):
    v = RNG.normal(size=n)
    mean, lo, hi = stats.t_interval(v, level)
    ref = sps.t.interval(level, n - 1, loc=v.mean(), scale=sps.sem(v))
    assert mean == v.mean() and (lo, hi) == pytest.approx(ref, rel=1e-12)
    assert all(type(x) is float for x in (mean, lo, hi))


def test_t_interval_is_batched_along_an_axis_and_nan_for_one_value():
    v = RNG.normal(size=(4, 6))
    mean, lo, hi = stats.t_interval(v, axis=1)
    for i in range(4):
        assert (mean[i], lo[i], hi[i]) == pytest.approx(stats.t_interval(v[i]), rel=1e-14)
    mean, lo, hi = stats.t_interval(v, axis=0)
    assert mean.shape == (6,)
    mean, lo, hi = stats.t_interval([2.0])
    assert mean == 2.0 and np.isnan(lo) and np.isnan(hi)


def test_paired_difference_equals_scipy_ttest_rel():
    x = RNG.normal(size=8)
    y = x - 0.3 + RNG.normal(scale=0.5, size=8)
    d = stats.paired_difference(x, y)
    ref = sps.ttest_rel(x, y)
    assert d.t == pytest.approx(ref.statistic, rel=1e-12)
    assert d.p == pytest.approx(ref.pvalue, rel=1e-12)
    assert (d.low, d.high) == pytest.approx(tuple(ref.confidence_interval(0.95)), rel=1e-12)
    assert d.mean == pytest.approx(np.mean(x - y), rel=1e-14) and d.n == 8
    assert stats.paired_difference(x - y) == d  # differences given directly


# --- correlation ---------------------------------------------------------------------------------


def test_pearson_equals_scipy_and_is_nan_when_undefined():
    for n in (2, 3, 10, 200):
        x, y = RNG.normal(size=n), RNG.normal(size=n)
        assert stats.pearson(x, y) == pytest.approx(sps.pearsonr(x, y).statistic, abs=1e-12)
    assert np.isnan(stats.pearson([1, 1, 1], [1, 2, 3]))
    assert np.isnan(stats.pearson([1, 2, 3], [4, 4, 4]))
    assert np.isnan(stats.pearson([1.0], [2.0]))


def test_point_biserial_equals_scipy():
    for n in (5, 30, 300):
        item = RNG.integers(0, 2, n)
        item[:2] = [0, 1]
        total = item * 2 + RNG.integers(0, 10, n)
        ref = sps.pointbiserialr(item, total).statistic
        assert stats.point_biserial(item, total) == pytest.approx(ref, abs=1e-12)


# --- the bottom layer ----------------------------------------------------------------------------


def test_stats_imports_only_numpy_and_scipy():
    tree = ast.parse(Path(stats.__file__).read_text(encoding="utf-8"))
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "edueval.stats imports no other edueval module"
            roots.add(node.module.split(".")[0])
    assert roots <= {"__future__", "dataclasses", "numpy", "scipy"}, roots
