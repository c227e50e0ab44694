"""``boot``'s fourth half (issue 34, round 4): the t-table test with the null-centred ("score")
CR3 variance ``Σ_g a_g (z_g − θ₀ n_g)² / N²``, floored at the t-table half's SE, its p-value the
largest over the composite null, and its interval the exact (Fieller-like) inversion.

Checked against a loop over students written from the definitions (and the composite null's
supremum against a dense grid of null values), the interval against a brute-force grid of θ₀,
and the p-values against the ``boot`` before this half on the same data and seed."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from edueval.turing.power import design_counts
from edueval.turing.stats import batch_tests, boot_mean, boot_weights, floored_cr3, hall

ALPHA, EPS, DELTA = 0.05, 0.10, 0.05


def sheet(n: int, c: int, a: int, h: int, r: int) -> list[float]:
    return [n, c, a, h, r, 0, 0, 0]


def _classes() -> list[np.ndarray]:
    """Counts ``[G, 8]`` of classes that stress the inversion: identical students (no
    between-student variance: the score SE is √A·|θ₀ − m|), a near-degenerate class, 6 and 10
    alike students, and skewed classes of uneven sheets."""
    base = sheet(25, 4, 14, 7, 0)
    out = [np.array([base] * 5, float), np.array([base] * 4 + [sheet(25, 5, 13, 7, 0)], float)]
    out += [np.array([base] * 6, float), np.array([base] * 5 + [sheet(25, 4, 15, 6, 0)], float)]
    rng = np.random.default_rng(4)
    for g, design in ((8, "ability_lengths"), (12, "ability"), (20, "ability_lengths")):
        out += list(design_counts(rng, 3, g, design, diff=EPS))
    return out


def _estimate(counts: np.ndarray):
    z = counts[:, 2] - counts[:, 3]
    n = counts[:, 0]
    sq = counts[:, 2] + counts[:, 3] - 2 * counts[:, 5]
    w = boot_weights(np.random.default_rng(1), 1, len(n), 99)
    return boot_mean(z[None], n[None], sq[None], w), z, n, sq


def _point_p(z, n, sq, theta: np.ndarray, upper: bool) -> np.ndarray:
    """The score half's point p-values at ``theta`` (an array of null values) from the
    definitions, summed student by student."""
    g, big_n = len(n), n.sum()
    m = z.sum() / big_n
    a = [1.0 / (1.0 - n[k] / big_n) ** 2 for k in range(g)]
    e = [(big_n * z[k] - n[k] * z.sum()) / big_n for k in range(g)]  # exact zeros if alike
    cr3 = np.sqrt(sum(a[k] * e[k] ** 2 for k in range(g))) / big_n
    naive = np.sqrt((sq.sum() - big_n * m**2) / (big_n - 1) / big_n)
    se_fl = max(cr3, naive)
    skew = 0.0 if cr3 == 0 else sps.skew(e, bias=False) / np.sqrt(g) * (cr3 / se_fl) ** 3
    s0 = np.sqrt(sum(a[k] * (z[k] - theta * n[k]) ** 2 for k in range(g))) / big_n
    t = hall((m - theta) / np.maximum(s0, se_fl), skew)
    df = float(floored_cr3(z[None], n[None], sq.sum()[None]).df[0])
    return sps.t.sf(t, df) if upper else sps.t.cdf(t, df)


def test_score_p_equals_a_direct_loop_and_the_composite_supremum():
    """For θ₀ on the far side of the mean, the half's p-value is the largest point p-value over
    the composite null (a dense grid of it, ends included)."""
    for counts in _classes():
        est, z, n, sq = _estimate(counts)
        m = float(est.mean[0])
        for theta in (m + 0.01, EPS, 0.3, 0.9):
            if theta < m:
                continue  # H0: mean >= theta, rejected when the mean is below it
            want = _point_p(z, n, sq, np.linspace(theta, 1.0, 2001), False).max()
            assert float(est._score_p(theta, False)[0]) == pytest.approx(want, rel=1e-9, abs=1e-14)
        for theta in (m - 0.01, -EPS, -0.3, -0.9):
            if theta > m:
                continue
            want = _point_p(z, n, sq, np.linspace(-1.0, theta, 2001), True).max()
            assert float(est._score_p(theta, True)[0]) == pytest.approx(want, rel=1e-9, abs=1e-14)


def test_interval_is_the_set_the_score_half_does_not_reject():
    """The exact inversion against a brute-force grid of θ₀ over [−1, 1]: below the score
    half's lower bound its p-value of H0: d ≤ θ₀ is below α, above it not (and the same for
    the upper bound); an infinite bound where no θ₀ on that side is rejected. The reported
    interval (the hull of the four halves') is where the p-values of ``boot`` cross α."""
    grid = np.linspace(-1.0, 1.0, 20001)
    tol = 2e-4
    seen_inf = seen_finite = False
    for counts in _classes():
        est, *_ = _estimate(counts)
        m = float(est.mean[0])
        lo = m - float(est._score_reach(ALPHA, True)[0])
        hi = m + float(est._score_reach(ALPHA, False)[0])
        seen_inf |= np.isinf(lo) or np.isinf(hi)
        seen_finite |= np.isfinite(lo) and np.isfinite(hi)
        p_up, p_lo = est._score_p(grid, True), est._score_p(grid, False)
        assert (p_up[grid < lo - tol] < ALPHA).all() and (p_up[grid > lo + tol] >= ALPHA).all()
        assert (p_lo[grid > hi + tol] < ALPHA).all() and (p_lo[grid < hi - tol] >= ALPHA).all()
        # the whole estimate: every half together
        lo_all, hi_all = (float(x[0]) for x in est.bounds(ALPHA))
        assert lo_all <= lo and hi_all >= hi
        for th in (lo_all - 1e-7, hi_all + 1e-7):
            if np.isfinite(th):
                p = est.p_upper(th) if th < m else est.p_lower(th)
                assert float(p[0]) < ALPHA
        for th in (lo_all + 1e-7, hi_all - 1e-7):
            if np.isfinite(th):
                p = est.p_upper(th) if th < m else est.p_lower(th)
                assert float(p[0]) >= ALPHA
    assert seen_inf and seen_finite  # both kinds of bound were exercised


def test_never_below_the_previous_boot_on_the_same_data_and_seed():
    """The fourth half only adds a part to each maximum: every p-value of the TOST, the
    beyond-margin and the superiority tests is at least the previous ``boot``'s, some larger;
    every interval contains the previous one; a draw now was a draw before."""
    counts = design_counts(np.random.default_rng(3), 400, 20, "ability_lengths", diff=EPS)
    kw = dict(eps=EPS, delta=DELTA, alpha=ALPHA, n_boot=99, seed=7)
    new, old = batch_tests(counts, **kw), batch_tests(counts, **kw, score=False)
    for key in ("tost_p", "beyond_p_ai", "beyond_p_human"):
        assert (getattr(new, key)["clustered"] >= getattr(old, key)["clustered"]).all()
    for src in ("ai", "human"):
        for p in ("p", "p_fail"):
            assert (new.sup["clustered"][src][p] >= old.sup["clustered"][src][p]).all()
    assert (new.tost_p["clustered"] > old.tost_p["clustered"]).any()
    lo, hi = new.diff_ci["clustered"]
    lo0, hi0 = old.diff_ci["clustered"]
    assert (lo <= lo0).all() and (hi >= hi0).all()
    draw_new, draw_old = new.verdict["clustered"] == 0, old.verdict["clustered"] == 0
    assert not (draw_new & ~draw_old).any() and draw_new.sum() < draw_old.sum()
    # the TOST decides on the interval: inside the margin exactly when it rejects
    inside = (lo > -EPS) & (hi < EPS)
    assert (inside == (new.tost_p["clustered"] < ALPHA)).all()
