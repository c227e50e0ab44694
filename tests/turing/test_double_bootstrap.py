"""``boot``'s double bootstrap (issue 34): the fast double bootstrap of Davidson & MacKinnon
(2007) and the full one, each p-value of ``boot`` the largest of the t table's, the bootstrap-t's
and the double bootstrap's.

Checked against direct loops written from the definitions (each resample's rows gathered one by
one, the statistics recomputed from them, the p-values counted), for its level in a small
simulation, and for reproducibility by seed."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from edueval.turing.power import design_counts
from edueval.turing.stats import (
    BootBlock,
    F,
    batch_tests,
    boot_mean,
    boot_weights,
    floored_cr3,
    hall,
    inner_draws,
)

ALPHA, EPS, DELTA = 0.05, 0.10, 0.05


def _class() -> list[np.ndarray]:
    """Seven students' paired scores (AI - human per MCQ), unequal sheets, one far off."""
    rng = np.random.default_rng(4)
    sizes = (8, 6, 10, 5, 7, 12, 9)
    rows = [rng.choice([-1.0, 0.0, 1.0], size=k, p=[0.3, 0.4, 0.3]) for k in sizes]
    rows[2] = np.array([1.0] * 8 + [0.0] * 2)  # the one who strongly prefers the AI
    return rows


def _stat(rows: list[np.ndarray], centre: float, n0: np.ndarray, big_n0: float) -> float:
    """hall((m - centre)/se, skew) of a resample given as its clusters' score lists, from the
    definitions: se² = Σ_k E_k² / (1 − n_k/N₀)² / N² (CR3's jackknife factors at the sample's
    leverages), skew = scipy's bias-corrected skewness of the residual sums over √G; NaN when
    every cluster has the same mean."""
    n = np.array([len(r) for r in rows], float)
    z = np.array([r.sum() for r in rows])
    m = z.sum() / n.sum()
    e = z - n * m
    if np.allclose(e, 0.0, atol=1e-12):
        return np.nan
    se = np.sqrt((e**2 / (1 - n / big_n0) ** 2).sum()) / n.sum()
    skew = sps.skew(e, bias=False) / np.sqrt(len(rows))
    return float(hall((m - centre) / se, skew))


def _pick(rows: list[np.ndarray], w: np.ndarray) -> list[np.ndarray]:
    return [rows[k] for k in range(len(rows)) for _ in range(int(w[k]))]


def _data(rows):
    z = np.array([r.sum() for r in rows])[None]
    n = np.array([len(r) for r in rows], float)[None]
    sq = np.array([(r**2).sum() for r in rows])[None]
    return z, n, sq


def test_fast_double_bootstrap_equals_a_direct_loop():
    """Davidson & MacKinnon's (2007) p-value, computed by a loop over the draws: p* = share of
    first-level statistics at least as extreme as the data's, Q** the (1 − p*) quantile of
    the second-level statistics (the p* quantile for a lower-tail test), p** = (1 + #{τ*
    beyond Q**})/(B + 1); boot's p-value is the largest of the t table's, (1 + k)/(B + 1) and
    p**."""
    rows = _class()
    g = len(rows)
    z, n, sq = _data(rows)
    (blk,) = boot_weights(np.random.default_rng(8), 1, g, 199, double="fast")
    est = boot_mean(z, n, sq, [blk], score=False)
    big_n0, m = n.sum(), z.sum() / n.sum()
    first, second = [], []
    for b in range(blk.w.shape[0]):
        picked = _pick(rows, blk.w[b])
        first.append(_stat(picked, m, n, big_n0))
        m_star = sum(r.sum() for r in picked) / sum(len(r) for r in picked)
        second.append(_stat(_pick(rows, blk.w2[b]), m_star, n, big_n0))
    t1 = np.array([x for x in first if not np.isnan(x)])
    t2 = np.sort([x for x in second if not np.isnan(x)])
    np.testing.assert_allclose(est.tss[0][~np.isnan(est.tss[0])], t2, rtol=1e-9, atol=1e-9)
    b1, b2 = len(t1), len(t2)
    table = floored_cr3(z, n, sq.sum()[None])
    for theta in (-0.2, 0.0, 0.1, 0.3, 0.5):
        t0 = _stat(rows, theta, n, big_n0)
        # H0: mean >= theta, rejected when the statistic is small
        k = int((t1 <= t0).sum())
        r = int(np.ceil(k / b1 * b2 - 1e-9))
        q = t2[r] if r < b2 else np.inf
        fdb = (1 + (t1 < q).sum()) / (b1 + 1)
        want = max(table.p_lower(theta)[0], (1 + k) / (b1 + 1), fdb)
        assert est.p_lower(theta)[0] == pytest.approx(want, rel=1e-12), theta
        # H0: mean <= theta, rejected when it is large
        k = int((t1 >= t0).sum())
        r = int(np.ceil(k / b1 * b2 - 1e-9))
        q = t2[b2 - r - 1] if b2 - r - 1 >= 0 else -np.inf
        fdb = (1 + (t1 > q).sum()) / (b1 + 1)
        want = max(table.p_upper(theta)[0], (1 + k) / (b1 + 1), fdb)
        assert est.p_upper(theta)[0] == pytest.approx(want, rel=1e-12), theta


def test_full_double_bootstrap_equals_a_direct_loop():
    """The full double bootstrap by a loop: for each first-level resample b its own bootstrap
    p-value p*_b of τ*_b against its n_inner second-level statistics, and p₂ = (1 + #{p*_b ≤
    p₁})/(B + 1) with p₁ the single bootstrap p-value. A second-level statistic can equal its
    first-level one exactly (some draws of some seeds), and rounding in the two computations
    would then decide the tie differently: this seed's draws have none (checked)."""
    rows = _class()
    g = len(rows)
    z, n, sq = _data(rows)
    (blk,) = boot_weights(np.random.default_rng(12), 1, g, 39, double="full", n_inner=19)
    est = boot_mean(z, n, sq, [blk], score=False)
    big_n0, m = n.sum(), z.sum() / n.sum()
    t1, p_lo, p_hi = [], [], []
    for rows_b, w2 in inner_draws(blk):
        for c, b in enumerate(range(rows_b.start, rows_b.stop)):
            picked = _pick(rows, blk.w[b])
            t = _stat(picked, m, n, big_n0)
            if np.isnan(t):
                continue
            m_star = sum(r.sum() for r in picked) / sum(len(r) for r in picked)
            inner = np.array([_stat(_pick(rows, w), m_star, n, big_n0) for w in w2[c]])
            inner = inner[~np.isnan(inner)]
            assert np.abs(inner - t).min() > 1e-6  # no tie
            t1.append(t)
            p_lo.append((1 + (inner <= t).sum()) / (len(inner) + 1))
            p_hi.append((1 + (inner >= t).sum()) / (len(inner) + 1))
    t1, p_lo, p_hi = np.array(t1), np.array(p_lo), np.array(p_hi)
    np.testing.assert_allclose(est.pst_lower[0][: len(p_lo)], np.sort(p_lo), rtol=1e-12)
    b1 = len(t1)
    table = floored_cr3(z, n, sq.sum()[None])
    for theta in (-0.2, 0.1, 0.3, 0.5):
        t0 = _stat(rows, theta, n, big_n0)
        p1 = (1 + (t1 <= t0).sum()) / (b1 + 1)
        p2 = (1 + (p_lo <= p1).sum()) / (b1 + 1)
        assert est.p_lower(theta)[0] == pytest.approx(max(table.p_lower(theta)[0], p1, p2))
        p1 = (1 + (t1 >= t0).sum()) / (b1 + 1)
        p2 = (1 + (p_hi <= p1).sum()) / (b1 + 1)
        assert est.p_upper(theta)[0] == pytest.approx(max(table.p_upper(theta)[0], p1, p2))


@pytest.fixture(scope="module")
def margin_studies():
    """2,000 studies of 10 alike students (25 MCQs each) at d = +ε exactly: a case where the
    bootstrap's theory holds (with skewed students, benchmarks/turing_bootstrap.py)."""
    return design_counts(np.random.default_rng(12), 2000, 10, "homogeneous", diff=EPS)


def test_fast_double_bootstrap_holds_its_level(margin_studies):
    """The one-sided test of H0: d ≥ +ε at its boundary rejects in at most α + 2 Monte-Carlo
    SEs of the studies, by the fast double bootstrap alone (near α: 5.3% here) as by boot as a
    whole (the maximum with the t table, more conservative: 2.4%), B = 99."""
    counts = margin_studies
    reps = counts.shape[0]
    bound = ALPHA + 2 * np.sqrt(ALPHA * (1 - ALPHA) / reps)
    bt = batch_tests(counts, eps=EPS, delta=DELTA, alpha=ALPHA, n_boot=99, seed=3)
    est = bt.est["clustered"]["diff"]
    t0 = est._stat_b(EPS)[..., None]
    k = (est.tstar <= t0).sum(-1)
    fdb_alone = float((est._second_p(k, upper=False) < ALPHA).mean())
    boot = float((bt.tost_p_upper["clustered"] < ALPHA).mean())
    assert ALPHA - 2 * np.sqrt(ALPHA * (1 - ALPHA) / reps) <= fdb_alone <= bound, fdb_alone
    assert 0.01 < boot <= bound, boot  # a test, not a refusal


def test_reproducible_by_seed_and_never_below_the_single_bootstrap(margin_studies):
    """The same seed gives the same draws and p-values; another seed others. The first level is
    the same whatever the double bootstrap, so boot's p-values with it are never below those
    without it (the maximum only adds a part)."""
    counts = margin_studies[:200]
    kw = dict(eps=EPS, delta=DELTA, alpha=ALPHA, n_boot=99)
    a, b = (batch_tests(counts, **kw, seed=5) for _ in range(2))
    c = batch_tests(counts, **kw, seed=6)
    none = batch_tests(counts, **kw, seed=5, double="none")
    for key in ("tost_p", "beyond_p_ai", "beyond_p_human"):
        np.testing.assert_array_equal(getattr(a, key)["clustered"], getattr(b, key)["clustered"])
        assert (getattr(a, key)["clustered"] >= getattr(none, key)["clustered"]).all()
    np.testing.assert_array_equal(a.est["clustered"]["diff"].tss, b.est["clustered"]["diff"].tss)
    assert not np.array_equal(a.tost_p["clustered"], c.tost_p["clustered"])
    np.testing.assert_array_equal(
        a.est["clustered"]["diff"].tstar, none.est["clustered"]["diff"].tstar
    )
    assert (a.tost_p["clustered"] > none.tost_p["clustered"]).any()
    # the verdict's interval is where the p-values cross alpha
    lo, hi = a.diff_ci["clustered"]
    d = a.est["clustered"]["diff"]
    ok = np.isfinite(lo) & np.isfinite(hi)
    assert ok.mean() > 0.5
    # an infinite bound: the test never rejects, however far the null (with B = 99, the fast
    # double bootstrap's p-value stays above alpha when a few tau* lie beyond every tau**)
    assert (d.p_upper(-10.0)[np.isneginf(lo)] >= ALPHA).all()
    assert (d.p_lower(10.0)[np.isposinf(hi)] >= ALPHA).all()
    lo, hi = np.where(ok, lo, 0.0), np.where(ok, hi, 0.0)
    assert (d.p_upper(lo - 1e-9)[ok] < ALPHA).all() and (d.p_upper(lo + 1e-9)[ok] >= ALPHA).all()
    assert (d.p_lower(hi + 1e-9)[ok] < ALPHA).all() and (d.p_lower(hi - 1e-9)[ok] >= ALPHA).all()


def test_bad_double_bootstrap_arguments_are_refused():
    with pytest.raises(ValueError, match="double"):
        boot_weights(np.random.default_rng(0), 1, 5, 9, double="triple")
    with pytest.raises(ValueError, match="n_inner"):
        boot_weights(np.random.default_rng(0), 1, 5, 9, double="full", n_inner=0)
    assert F["n"] == 0 and BootBlock(slice(0, 1), np.ones((1, 5))).w2 is None


def test_cli_double_option(tmp_path, capsys):
    """``turing analyze --double``: recorded in results.json and config.json; the full double
    bootstrap's p-values are never below the single bootstrap's; a bad value is exit 2."""
    import json

    from edueval.cli.main import main

    from .test_bootstrap import sheet, sheet_frame

    rng = np.random.default_rng(2)
    sheets = []
    for _ in range(8):
        a, h, r = rng.integers(2, 9), rng.integers(2, 9), rng.integers(0, 3)
        sheets.append(sheet(25, 25 - a - h - r, int(a), int(h), int(r)))
    path = tmp_path / "p2.csv"
    sheet_frame(sheets).to_csv(path, index=False)
    res = {}
    for kind in ("full", "none"):
        args = ["turing", "analyze", str(path), "--boot", "99", "--double", kind]
        assert main([*args, "--out", str(tmp_path / kind)]) == 0
        res[kind] = json.loads((tmp_path / kind / "results.json").read_text())
        cfg = json.loads((tmp_path / kind / "config.json").read_text())["params"]
        assert res[kind]["double"] == cfg["double"] == kind
    lo = {k: res[k]["diff_ci"]["boot"] for k in res}
    assert lo["full"][0] <= lo["none"][0] and lo["full"][1] >= lo["none"][1]
    capsys.readouterr()
    bad = ["turing", "analyze", str(path), "--double", "triple", "--out", str(tmp_path / "x")]
    assert main(bad) == 2
    assert "double" in capsys.readouterr().err
