"""Issue 36 point 3: IRT against the values mirt's own tests assert on its data sets.

mirt (R, philchalmers/mirt), tests/testthat/test-01-mirtOne.R and test-15-IRTpars.R: LSAT7 and
LSAT6 (tests/fixtures/mirt/, converted by the script there).  ``expect_equal(x, y, tolerance)`` in
testthat is R's ``all.equal``: the mean relative difference sum|x - y| / sum|y| must be below the
tolerance; ``closeEnough(x - y, -tol, tol)`` is an absolute bound.  Where mirt's EM stops at its
TOL = 1e-4 before the maximum (flat directions: the Rasch latent variance, the 3PL asymptotes),
this engine goes on to the maximum; those tests assert that our log-likelihood is at least the one
at mirt's published estimates and the agreement we reach (documented in the comments).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import approx_fprime
from sklearn.base import clone

from edueval.io import InputError
from edueval.items import IRT, compare_irt, simulate_irt
from edueval.items.irt import engine as E
from edueval.kt.bkt.model import NotFittedError

MIRT = Path(__file__).parents[1] / "fixtures" / "mirt"
Z = 1.959964


def expand(name: str) -> np.ndarray:
    """mirt's ``expand.table``: one row per person from the pattern-frequency table."""
    df = pd.read_csv(MIRT / f"{name}.csv")
    f = df.columns[-1]
    return np.repeat(df.drop(columns=f).to_numpy(float), df[f].to_numpy(int), axis=0)


def all_equal(x, y) -> float:
    """R's all.equal mean relative difference."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = ~np.isnan(y)
    return float(np.abs(x[ok] - y[ok]).sum() / np.abs(y[ok]).sum())


def with_ci(est, se):
    return np.column_stack([est, est - Z * se, est + Z * se]).ravel()


@pytest.fixture(scope="module")
def lsat7_2pl():
    return IRT("2pl").fit(expand("LSAT7"))


@pytest.fixture(scope="module")
def lsat7_rasch():
    return IRT("rasch").fit(expand("LSAT7"))


@pytest.fixture(scope="module")
def lsat6_rasch():
    return IRT("rasch").fit(expand("LSAT6"))


@pytest.fixture(scope="module")
def lsat7_3pl():
    return IRT("3pl").fit(expand("LSAT7"))


def test_lsat7_2pl_coefficients(lsat7_2pl):
    t = lsat7_2pl.items_
    got = np.column_stack([t["a"], t["d"]]).ravel()
    mirt = [0.988, 1.8561, 1.081, 0.808, 1.706, 1.8043, 0.7651, 0.486, 0.7358, 1.8545]
    assert all_equal(got, mirt) < 1e-2
    assert lsat7_2pl.n_params_ == 10 and 31 - 10 == 21  # mirt: df 21


def test_lsat7_2pl_standard_errors(lsat7_2pl):
    """modm2 (SE.type = 'Richardson', the numerical observed information) -- est, CI."""
    t = lsat7_2pl.items_
    got = np.concatenate([np.r_[with_ci(t["a"].iloc[j], t["a_se"].iloc[j]), with_ci(t["d"].iloc[j], t["d_se"].iloc[j])]
                          for j in range(5)])  # fmt: skip
    mirt = [0.988, 0.6406, 1.3354, 1.8561, 1.5984, 2.1138, 1.081, 0.7501, 1.4119, 0.808, 0.6291,
            0.9869, 1.706, 1.0779, 2.334, 1.8043, 1.4036, 2.205, 0.7651, 0.5022, 1.028, 0.486,
            0.3392, 0.6328, 0.7358, 0.4395, 1.032, 1.8545, 1.6302, 2.0787]  # fmt: skip
    assert all_equal(got, mirt) < 1e-2


def test_lsat7_2pl_m2_and_s_x2(lsat7_2pl):
    m2 = lsat7_2pl.results_.m2
    assert abs(m2["M2"] - 11.93841) < 1e-2 and m2["df"] == 5
    t = lsat7_2pl.items_
    assert np.abs(t["S_X2"] - [4.749440, 14.451071, 1.270381, 5.237400, 0.941125]).max() < 1e-2
    assert (t["df_S_X2"] == 2).all()
    assert 0 < m2["RMSEA"] < 0.1 and 0 < m2["p"] < 1
    assert m2["RMSEA_5"] < m2["RMSEA"] < m2["RMSEA_95"]
    from scipy.stats import ncx2  # the interval's ends are the noncentral chi-square quantiles

    lam = m2["RMSEA_95"] ** 2 * 5 * 999
    assert ncx2.cdf(m2["M2"], 5, lam) == pytest.approx(0.05, abs=1e-6)


def test_lsat7_2pl_eap_and_map(lsat7_2pl):
    """fscores(modm1) and fscores(modm2, 'MAP') of the first six response patterns."""
    pats = pd.read_csv(MIRT / "LSAT7.csv").iloc[:6, :5].to_numpy(float)
    sc = lsat7_2pl.transform(pats)
    eap = [-1.8665957, -1.5266920, -1.5134024, -1.1852276, -1.0946830, -0.7666992]
    map_ = [-1.8165552, -1.4946906, -1.4822982, -1.1789899, -1.0958928, -0.7951026]
    assert np.abs(sc["EAP"] - eap).max() < 1e-2
    assert np.abs(sc["MAP"] - map_).max() < 1e-2
    rel = lsat7_2pl.results_.reliability
    assert 0.3 < rel["EAP"] < 0.6


def test_lsat6_rasch_with_standard_errors(lsat6_rasch):
    """modm3 (itemtype = 'Rasch', SE.type = 'SEM'): d with CIs and the latent variance."""
    r = lsat6_rasch.results_
    t = r.items
    got = np.concatenate([with_ci(t["d"], t["d_se"]).reshape(5, 3).ravel(),
                          [r.latent_variance, r.latent_variance - Z * r.latent_variance_se,
                           r.latent_variance + Z * r.latent_variance_se]])  # fmt: skip
    mirt = [2.73, 2.478, 2.983, 0.999, 0.845, 1.152, 0.24, 0.1, 0.38, 1.306, 1.143, 1.47, 2.099,
            1.896, 2.303, 0.57, 0.371, 0.77]  # fmt: skip
    assert all_equal(got, mirt) < 1e-2
    assert (t["a"] == 1).all() and t["a_se"].isna().all()
    assert abs(r.m2["M2"] - 5.291576) < 1e-2 and r.m2["df"] == 9


def test_lsat6_common_slope_scale_is_the_same_model(lsat6_rasch):
    """modm3b (CONSTRAIN = (1-5, a1)): M2 5.292566 (mirt asserts 1e-4 on its EM stop; at the
    maximum both scales give one M2, 5.2913); the common slope is the latent SD."""
    m = IRT("rasch", rasch_scale="slope").fit(expand("LSAT6"))
    assert abs(m.results_.m2["M2"] - 5.292566) < 2e-3 and m.results_.m2["df"] == 9
    assert m.loglik_ == pytest.approx(lsat6_rasch.loglik_, abs=1e-6)
    assert m.items_["a"].iloc[0] ** 2 == pytest.approx(lsat6_rasch.latent_variance_, rel=1e-4)


def test_lsat7_rasch_intercepts_and_se(lsat7_rasch):
    """test-15 mod2/mod3: mirt's EM stops ~1.4e-4 (relative) short of the maximum along the
    latent variance, so the intercepts agree to 2e-4 and our likelihood is the higher."""
    t = lsat7_rasch.items_
    mirt_d = np.array([1.8680155, 0.7908857, 1.4607798, 0.5214175, 1.9927099])
    assert all_equal(t["d"], mirt_d) < 2e-4
    assert all_equal(t["b"], -mirt_d) < 2e-4
    assert all_equal([t["d"].iloc[0], t["d_se"].iloc[0]], [1.868016, 0.100416]) < 2e-4
    assert (
        all_equal(with_ci(t["d"].iloc[0], t["d_se"].iloc[0]), [1.868016, 1.671204, 2.064827]) < 2e-4
    )
    # the log-likelihood at mirt's intercepts (best latent variance) is below ours
    X = expand("LSAT7")
    pat = E.Patterns.from_matrix(X)
    lay = E.Layout.build("rasch", 5)
    at_mirt = max(E.value_and_grad(pat, lay, E.quadrature(), np.r_[mirt_d, lv])[0]
                  for lv in np.linspace(-0.2, 0.2, 401))  # fmt: skip
    assert lsat7_rasch.loglik_ >= at_mirt


def test_lsat7_3pl_is_the_maximum(lsat7_3pl):
    """test-15 mod0/mod1 (3PL, no prior): items 1, 3, 4, 5 agree with mirt's d and b to 5e-4
    (relative); item 2's asymptote lies on a flat ridge (SE of logit g 0.67) where mirt's EM stops
    early: our log-likelihood is above the one at mirt's estimates."""
    t = lsat7_3pl.items_
    d = np.array([1.86562047, 0.09404091, 1.78051762, 0.48189021, 1.86845282])
    b = np.array([-1.85291884, -0.04877029, -1.06840017, -0.65462572, -2.43551721])
    keep = [0, 2, 3, 4]
    assert all_equal(t["d"].to_numpy()[keep], d[keep]) < 5e-4
    assert all_equal(t["b"].to_numpy()[keep], b[keep]) < 5e-4
    assert t["g"].iloc[1] == pytest.approx(0.2950545, abs=0.01)
    assert t["g_se"].iloc[1] == pytest.approx(0.1398565, rel=0.05)
    assert t["d_se"].iloc[0] == pytest.approx(0.1345818, rel=0.01)
    assert t["b_se"].iloc[0] == pytest.approx(0.2600573, rel=0.01)
    X = expand("LSAT7")
    pat = E.Patterns.from_matrix(X)
    lay = E.Layout.build("3pl", 5)
    g = np.array([-14.0, -0.8709602, -14.0, -14.0, -14.0])
    x_mirt = np.column_stack([-d / b, d, g]).ravel()
    assert lsat7_3pl.loglik_ >= E.value_and_grad(pat, lay, E.quadrature(), x_mirt)[0]
    assert lsat7_3pl.loglik_ > IRT("2pl", fit_stats=False, se="none").fit(X).loglik_


def test_missing_responses_enter_the_likelihood():
    """data[1,1] <- data[2,2] <- NA (modm6) and data[1,1] <- NA (M2 11.95335, S-X2 4.8448539 by
    mirt's itemfit(na.rm = TRUE), to 5e-4 relative: mirt's EM stop again)."""
    X = expand("LSAT7")
    X[0, 0] = X[1, 1] = np.nan
    m = IRT("2pl").fit(X)
    got = np.column_stack([m.items_["a"], m.items_["d"]]).ravel()
    mirt = [0.969, 1.851, 1.074, 0.808, 1.717, 1.811, 0.763, 0.486, 0.731, 1.852]
    assert all_equal(got, mirt) < 1e-2
    X = expand("LSAT7")
    X[0, 0] = np.nan
    m = IRT("2pl").fit(X)
    assert all_equal([m.results_.m2["M2"]], [11.95335]) < 1e-4
    assert all_equal([m.items_["S_X2"].iloc[0]], [4.8448539]) < 5e-4
    assert m.persons_["n_answered"].iloc[0] == 4 and len(m.persons_) == 1000


def test_masked_likelihood_equals_a_plain_loop():
    """The vectorised, pattern-collapsed likelihood against a per-person loop over the grid."""
    df, _ = simulate_irt([1.0, 1.5, 0.7, 1.2], [0.0, -0.5, 0.8, 0.3], n_persons=40,
                         missing=0.3, seed=3)  # fmt: skip
    X = df.to_numpy()
    lay = E.Layout.build("2pl", 4)
    x = np.array([1.1, 0.1, 1.4, -0.4, 0.8, 0.7, 1.0, 0.2])
    th = E.quadrature(21, 5.0)
    w = np.exp(-0.5 * th**2)
    w /= w.sum()
    total = 0.0
    for row in X:
        lik = np.ones_like(th)
        for j, y in enumerate(row):
            if np.isnan(y):
                continue
            p = 1 / (1 + np.exp(-(x[2 * j] * th + x[2 * j + 1])))
            lik *= p if y == 1 else 1 - p
        total += np.log(lik @ w)
    got = E.value_and_grad(E.Patterns.from_matrix(X), lay, th, x)[0]
    assert got == pytest.approx(total, rel=1e-12)


@pytest.mark.parametrize(("model", "kw"), [("3pl", {"g_prior": (-1.4, 0.5)}), ("rasch", {})])
def test_gradient_is_exact(model, kw):
    df, _ = simulate_irt([1.0, 1.5, 0.7], [0.0, -0.5, 0.8], [0.1, 0.2, 0.15], n_persons=60,
                         missing=0.2, seed=1)  # fmt: skip
    pat = E.Patterns.from_matrix(df.to_numpy())
    lay = E.Layout.build(model, 3, **kw)
    th = E.quadrature(31)
    x = E.start_values(pat, lay) + 0.05
    num = approx_fprime(x, lambda v: E.value_and_grad(pat, lay, th, v)[0], 1e-6)
    assert np.allclose(E.value_and_grad(pat, lay, th, x)[1], num, atol=1e-4)


def test_crossprod_standard_errors_are_close_to_observed(lsat7_2pl):
    m = IRT("2pl", se="crossprod", fit_stats=False).fit(expand("LSAT7"))
    ratio = m.items_["d_se"] / lsat7_2pl.items_["d_se"]
    assert ratio.between(0.8, 1.25).all()


def test_estimator_contract(lsat7_2pl):
    est = IRT("3pl", g_prior=(-1.4, 0.5), se="none")
    c = clone(est)
    assert c.get_params() == est.get_params() and c is not est
    assert c.set_params(model="2pl").model == "2pl"
    with pytest.raises(NotFittedError):
        IRT().summary()
    assert not hasattr(IRT(), "items_")
    X = expand("LSAT7")
    assert lsat7_2pl.score(X) == pytest.approx(lsat7_2pl.loglik_ / 1000)
    assert "2PL" in lsat7_2pl.summary() and len(lsat7_2pl.results_.to_frame()) == 5
    info = lsat7_2pl.results_.test_information()
    assert info.idxmax() < 0  # easy items: most information below the mean
    with pytest.raises(InputError, match="model="):
        IRT("4pl").fit(X)
    with pytest.raises(InputError, match="not 0 or 1"):
        IRT().fit(np.array([[0, 1, 2], [1, 0, 1], [0, 0, 1]]))
    with pytest.raises(InputError, match="no variance"):
        IRT().fit(np.c_[X, np.ones(len(X))])


def test_compare_real_and_simulated():
    a = np.linspace(0.6, 1.8, 12)
    d = np.linspace(-1.5, 1.5, 12)
    real, _ = simulate_irt(a, d, n_persons=800, seed=1)
    sim, _ = simulate_irt(a, d, n_persons=800, missing=0.2, seed=2)
    cmp = compare_irt(real, sim, model="2pl", se="crossprod", fit_stats=False)
    b = cmp.correlations.set_index(["parameter", "method"]).loc[("b", "pearson")]
    assert b["r"] > 0.9 and b["low"] < b["r"] < b["high"]
    assert {"b_real", "b_sim_low", "a_sim_high"} <= set(cmp.items.columns)
    with pytest.raises(InputError, match="share 0 items"):
        compare_irt(real, sim.rename(columns=lambda c: "x" + c))


def test_cli_irt_run_and_bad_input(cli, write, tmp_path):
    X = expand("LSAT6")
    lines = ["student," + ",".join(f"i{j}" for j in range(5))]
    lines += [f"s{i}," + ",".join(str(int(v)) for v in row) for i, row in enumerate(X)]
    path = write("scores.csv", "\n".join(lines) + "\n")
    out = tmp_path / "run"
    res = cli("items", "irt", path, "--model", "rasch", "--out", out)
    assert res.code == 0, res.err
    for name in ("config.json", "items.csv", "persons.csv", "results.json", "report.html"):
        assert (out / name).exists()
    items = pd.read_csv(out / "items.csv")
    assert items["d"].iloc[0] == pytest.approx(2.73, abs=0.01)
    bad = write("bad.csv", "\n".join([*lines[:3], "s9,1,0,1,x,1"]) + "\n")
    res = cli("items", "irt", bad, "--out", tmp_path / "bad")
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1 and "column 'i3'" in res.err
    res = cli("items", "irt", path, "--model", "4pl", "--out", tmp_path / "bad2")
    assert res.code == 2 and "--model" in res.err


def test_sat12_scored_with_mirts_key():
    """SAT12 scored as mirt's tests do (key2binary; 8 = omitted counts as wrong).  mirt's tests
    assert no unidimensional values on SAT12 (only bifactor, discrete and projection models), so
    this checks a property of the maximum instead: the gradient in each intercept is zero, i.e.
    each item's observed number correct equals its posterior-expected number correct."""
    raw = pd.read_csv(MIRT / "SAT12.csv")
    key = [1, 4, 5, 2, 3, 1, 2, 1, 3, 1, 2, 4, 2, 1, 5, 3, 4, 4, 1, 4, 3, 3, 4, 1, 3, 5, 1, 3, 1,
           5, 4, 5]  # fmt: skip
    X = (raw.to_numpy() == np.array(key)).astype(float)
    m = IRT("2pl", se="none").fit(X)
    r = m.results_
    pat = E.Patterns.from_matrix(X)
    _, post, _, _ = E._posterior(pat, r._layout, r.theta, r._x)
    P = r._layout.itype.prob(r._layout.unpack(r._x)[0], r.theta)
    expected = pat.w @ (post @ P.T)
    assert np.allclose(expected, X.sum(0), atol=0.05)
    assert r.m2["df"] == 32 + 32 * 31 // 2 - 64 and np.isfinite(r.m2["M2"])
    assert (m.items_["df_S_X2"] > 0).all() and m.items_["S_X2"].notna().all()


def test_lsat7_crossprod_standard_errors_common_slope():
    """modm4 (CONSTRAIN = (1-5, a1), SE.type = 'crossprod'): the common slope and intercepts
    with their crossprod intervals."""
    m = IRT("rasch", rasch_scale="slope", se="crossprod", fit_stats=False).fit(expand("LSAT7"))
    t = m.items_
    got = np.concatenate([np.r_[with_ci(t["a"].iloc[j], t["a_se"].iloc[j]),
                                with_ci(t["d"].iloc[j], t["d_se"].iloc[j])] for j in range(5)])  # fmt: skip
    mirt = [1.011, 0.885, 1.138, 1.868, 1.67, 2.067, 1.011, 0.885, 1.138, 0.791, 0.631, 0.951,
            1.011, 0.885, 1.138, 1.461, 1.277, 1.644, 1.011, 0.885, 1.138, 0.521, 0.367, 0.676,
            1.011, 0.885, 1.138, 1.993, 1.793, 2.193]  # fmt: skip
    assert all_equal(got, mirt) < 1e-2
