"""The comparison's statistics against independent computations: the exact McNemar p-value
(statsmodels' ``mcnemar(exact=True)``), the question-clustered paired difference (statsmodels'
OLS with cluster-robust SEs on the stacked differences), Holm (``multipletests``), Tango's
interval (its McNemar boundary and its coverage), and Connor's sample size."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from edueval import stats
from edueval.compare import Arm, compare


def _arm(name, rows):
    return Arm(name, pd.DataFrame(rows))


def _binary_arms(rng, n, probs, k=3):
    """``k`` arms on ``n`` items with per-arm accuracies ``probs``, correlated via the item."""
    ease = rng.normal(size=n)
    arms = []
    for i in range(k):
        x = (0.7 * ease + 0.7 * rng.normal(size=n) < sps.norm.ppf(probs[i]) * 1.0).astype(int)
        arms.append(_arm(f"m{i}", {"metric": "mcq", "unit": [str(j) for j in range(n)],
                                   "cluster": [str(j) for j in range(n)], "correct": x,
                                   "status": "ok"}))  # fmt: skip
    return arms


@pytest.mark.parametrize("b,c", [(0, 0), (0, 1), (1, 0), (5, 2), (2, 5), (13, 8), (18, 10),
                                 (0, 7), (30, 31), (40, 12)])  # fmt: skip
def test_mcnemar_exact_equals_statsmodels(b, c):
    table = [[11, b], [c, 7]]
    assert stats.sign_test(b, c, "two-sided") == pytest.approx(
        mcnemar(table, exact=True).pvalue, abs=1e-15)  # fmt: skip


def test_compare_p_values_equal_statsmodels_mcnemar_and_holm():
    rng = np.random.default_rng(3)
    arms = _binary_arms(rng, 80, [0.55, 0.7, 0.6, 0.5], k=4)
    res = compare(arms, reference="m0")
    x = {a.name: a.units["correct"].to_numpy() for a in arms}
    ps = []
    for d in res.differences.to_dict("records"):
        a, r = x[d["run"]], x["m0"]
        table = [
            [int(((a == 1) & (r == 1)).sum()), int(((a == 1) & (r == 0)).sum())],
            [int(((a == 0) & (r == 1)).sum()), int(((a == 0) & (r == 0)).sum())],
        ]
        assert (d["run_only"], d["reference_only"]) == (table[0][1], table[1][0])
        assert d["p"] == pytest.approx(mcnemar(table, exact=True).pvalue, abs=1e-15)
        assert d["difference"] == pytest.approx(a.mean() - r.mean(), abs=1e-15)
        ps.append(d["p"])
    want = multipletests(ps, method="holm")[1]
    np.testing.assert_allclose(res.differences["p_holm"], want, rtol=0, atol=1e-15)


def test_holm_equals_multipletests():
    rng = np.random.default_rng(0)
    for m in (1, 2, 5, 12):
        p = rng.uniform(0, 0.2, size=m)
        p[: m // 3] = p[0]  # ties
        np.testing.assert_allclose(stats.holm(p), multipletests(p, method="holm")[1], atol=1e-15)
    assert np.isnan(stats.holm([0.01, np.nan])[1])
    assert stats.holm([0.01, np.nan])[0] == pytest.approx(0.01)


def _ols_cluster(d, groups, alpha=0.05):
    fit = sm.OLS(d, np.ones((len(d), 1))).fit(cov_type="cluster", cov_kwds={"groups": groups},
                                              use_t=True)  # fmt: skip
    lo, hi = fit.conf_int(alpha)[0]
    return fit.params[0], fit.bse[0], lo, hi, fit.pvalues[0]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clustered_paired_difference_equals_statsmodels_ols(seed):
    rng = np.random.default_rng(seed)
    g = 25
    sizes = rng.integers(1, 5, size=g)  # unequal clusters too
    groups = np.repeat(np.arange(g), sizes)
    rate = rng.beta(2, 2, size=g)[groups]
    x = (rng.random(len(groups)) < rate).astype(float)
    y = (rng.random(len(groups)) < rate * 0.8).astype(float)
    sums, n = stats.cluster_totals(x - y, groups)
    r = stats.clustered_paired_difference(sums, n)
    mean, se, lo, hi, p = _ols_cluster(x - y, groups)
    assert r.method == "cr1" and r.df == g - 1
    np.testing.assert_allclose([r.mean, r.se, r.low, r.high, r.p], [mean, se, lo, hi, p],
                               rtol=1e-10, atol=1e-13)  # fmt: skip


def test_compare_mia_difference_equals_statsmodels_ols():
    rng = np.random.default_rng(5)
    g = 30
    arms = []
    ease = rng.normal(size=(g, 3))
    for name, shift in (("a", 0.0), ("b", 0.4)):
        x = (ease + rng.normal(size=(g, 3)) + shift > 0).astype(int).ravel()
        arms.append(_arm(name, {"metric": "mia",
                                "unit": [f"{q}:{c}" for q in range(g) for c in "ABC"],
                                "cluster": [str(q) for q in range(g) for _ in "ABC"],
                                "correct": x, "status": "ok"}))  # fmt: skip
    res = compare(arms, reference="b")
    d = res.differences.iloc[0]
    diff = arms[0].units["correct"].to_numpy() - arms[1].units["correct"].to_numpy()
    mean, se, lo, hi, p = _ols_cluster(diff.astype(float), np.repeat(np.arange(g), 3))
    np.testing.assert_allclose([d["difference"], d["se"], d["ci_low"], d["ci_high"], d["p"]],
                               [mean, se, lo, hi, p], rtol=1e-10, atol=1e-13)  # fmt: skip
    assert d["test"].startswith("paired t, clustered by question") and d["df"] == g - 1
    # the MIA estimate's interval is the question-clustered one of edueval.stats
    e = res.estimates[res.estimates["run"] == "a"].iloc[0]
    sums, n = stats.cluster_totals(arms[0].units["correct"].to_numpy(), np.repeat(np.arange(g), 3))
    ci = stats.clustered_proportion_interval(sums, n)
    assert (e["ci_low"], e["ci_high"]) == (ci.low, ci.high)


def test_clustered_difference_with_zero_se_falls_back_to_the_sign_test():
    sums = np.array([1.0] * 6)  # every question one prompt better: SE 0, no precision
    r = stats.clustered_paired_difference(sums, np.full(6, 3.0))
    assert r.method == "sign test" and r.p == pytest.approx(2 * 0.5**6)
    same = stats.clustered_paired_difference(np.zeros(6), np.full(6, 3.0))
    assert same.p == 1.0 and same.mean == 0.0


def test_tango_interval_excludes_zero_exactly_when_asymptotic_mcnemar_rejects():
    z = sps.norm.isf(0.025)
    for b in range(0, 15):
        for c in range(0, 15):
            lo, hi = stats.paired_proportion_interval(20, b, c, 20)
            if b + c == 0:
                assert lo < 0 < hi
                continue
            rejects = abs(b - c) / np.sqrt(b + c) > z + 1e-9
            keeps = abs(abs(b - c) / np.sqrt(b + c) - z) < 1e-6
            if not keeps:
                assert (not lo <= 0 <= hi) == rejects, (b, c, lo, hi)
            assert -1 <= lo <= (b - c) / (40 + b + c) <= hi <= 1


def test_tango_interval_covers():
    rng = np.random.default_rng(11)
    for n, probs in ((40, [0.5, 0.15, 0.05, 0.3]), (100, [0.4, 0.1, 0.1, 0.4])):
        delta = probs[1] - probs[2]
        tables = rng.multinomial(n, probs, size=600)
        hits = sum(lo <= delta <= hi for lo, hi in
                   (stats.paired_proportion_interval(*t) for t in tables))  # fmt: skip
        assert hits / 600 >= 0.95 - 3 * np.sqrt(0.05 * 0.95 / 600), (n, hits)


def test_connor_sample_size_and_detectable_difference_agree():
    for psi, delta in ((0.3, 0.1), (0.2, 0.05), (0.5, 0.2)):
        n = stats.mcnemar_items_needed(delta, psi)
        za, zb = sps.norm.isf(0.025), sps.norm.ppf(0.8)
        assert n == int(np.ceil((za * np.sqrt(psi) + zb * np.sqrt(psi - delta**2)) ** 2 / delta**2))
        assert stats.mcnemar_detectable_difference(psi, n) <= delta
        assert stats.mcnemar_detectable_difference(psi, n - 1) > delta
    assert np.isnan(stats.mcnemar_detectable_difference(0.0, 100))
    assert np.isnan(stats.mcnemar_detectable_difference(0.02, 20))  # n·ψ < z²: out of reach


def test_connor_power_holds_by_simulation():
    """At the Connor sample size, the asymptotic McNemar test has about 80% power."""
    rng = np.random.default_rng(2)
    psi, delta = 0.3, 0.1
    n = stats.mcnemar_items_needed(delta, psi)
    t = rng.multinomial(n, [0.5, (psi + delta) / 2, (psi - delta) / 2, 0.5 - psi], size=4000)
    b, c = t[:, 1], t[:, 2]
    power = np.mean(np.abs(b - c) / np.sqrt(b + c) > sps.norm.isf(0.025))
    assert 0.77 <= power <= 0.84, power


def test_clustered_difference_interval_stays_within_minus_one_and_one():
    """With 3 questions the t(2) quantile is 4.30: the CR1 interval of an MIA difference of
    0.78 reaches past 1; the comparison's interval is clipped to the differences possible, and
    equals statsmodels' inside."""
    cluster = np.repeat(np.arange(3), 3)
    d = np.array([1, 1, 1, 1, 1, 1, 0, 1, 0], dtype=float)
    mean, se, lo, hi, p = _ols_cluster(d, cluster)
    assert hi > 1  # the unclipped interval
    x, y = d.astype(int), np.zeros(9, int)
    arms = [
        _arm(name, {"metric": "mia", "unit": [f"{q}:{c}" for q in range(3) for c in "ABC"],
                    "cluster": [str(q) for q in cluster], "correct": v, "status": "ok"})
        for name, v in (("a", x), ("b", y))
    ]  # fmt: skip
    row = compare(arms, reference="b").differences.iloc[0]
    assert row["ci_high"] == 1.0 and row["ci_low"] == pytest.approx(lo, rel=1e-10)
    assert row["difference"] == pytest.approx(mean) and row["p"] == pytest.approx(p)
    neg = compare(arms, reference="a").differences.iloc[0]
    assert neg["ci_low"] == -1.0 and neg["ci_high"] == pytest.approx(-lo, rel=1e-10)
