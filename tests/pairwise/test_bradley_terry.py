"""The vectorised Bayesian Bradley-Terry fit against independent computations."""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
import pytest
from scipy.special import log_expit

from edueval.pairwise import BradleyTerry, resolve_ties
from edueval.pairwise.bradley_terry import _bt_model, build_design, helmert, model_args

from .reference import log_posterior, posterior_mean_is, simulate

FAST = {"chains": 4, "warmup": 500, "draws": 1000}


def test_helmert_is_orthonormal_with_constant_first_row():
    for k in (2, 3, 5):
        h = helmert(k)
        np.testing.assert_allclose(h @ h.T, np.eye(k), atol=1e-12)
        np.testing.assert_allclose(h[0], np.full(k, 1 / np.sqrt(k)))
        np.testing.assert_allclose(h[1:].sum(axis=1), 0, atol=1e-12)


def test_model_log_density_equals_direct_log_posterior():
    """numpyro's log joint of our rotated model over the observed pairs equals the paper's model
    written over single comparisons (up to the constant of the normal priors)."""
    from numpyro.infer.util import log_density

    df, _ = simulate(5, 12, seed=3)
    df.loc[df.index[::7], "outcome"] = "tie"
    res = resolve_ties(df, "half")
    des = build_design(res, ("item", "attribute"))
    k = len(des.agents)
    rng = np.random.default_rng(1)
    theta = rng.normal(size=(des.n_groups, k + 1))
    model = partial(_bt_model, n_groups=des.n_groups, n_agents=k)
    ours, _ = log_density(model, model_args(des), {}, {"theta": theta})
    alpha = theta[:, :k] @ helmert(k)
    a_index = {a: q for q, a in enumerate(des.agents)}
    direct = 0.0
    for g, (item, _) in enumerate(des.keys.itertuples(index=False)):
        sub = res[res["item"] == item]
        direct += log_posterior(
            np.r_[alpha[g], theta[g, k]],
            sub["first"].map(a_index).to_numpy(),
            sub["second"].map(a_index).to_numpy(),
            sub["w_first"].to_numpy(),
            sub["w_second"].to_numpy(),
            k,
        )[0]
    const = -0.5 * np.log(2 * np.pi) * theta.size
    np.testing.assert_allclose(float(ours), direct + const, rtol=1e-5)


def test_half_ties_are_half_a_win_each():
    df = pd.DataFrame(
        {
            "item": ["i"] * 3,
            "attribute": ["q"] * 3,
            "rater": ["a", "b", "c"],
            "first": ["X", "X", "Y"],
            "second": ["Y", "Y", "X"],
            "outcome": ["first", "tie", "tie"],
        }
    )
    res = resolve_ties(df, "half")
    des = build_design(res, ("item", "attribute"))
    x_ix, y_ix = list(des.agents).index("X"), list(des.agents).index("Y")
    assert des.w1[0, x_ix, y_ix] == 1.5 and des.w2[0, x_ix, y_ix] == 0.5
    assert des.w1[0, y_ix, x_ix] == 0.5 and des.w2[0, y_ix, x_ix] == 0.5
    # the log-likelihood of a half tie at x: 0.5 log s(x) + 0.5 log s(-x)
    x = 0.7
    ll = 0.5 * log_expit(x) + 0.5 * log_expit(-x)
    assert ll == pytest.approx(-np.logaddexp(0, -x) * 1.0 - 0.5 * x)


@pytest.fixture(scope="module")
def small_fit():
    df, truth = simulate(12, 25, seed=11)
    res = BradleyTerry(df, ties="drop", seed=5).fit(**FAST, keep_draws=True)
    return df, truth, res


def test_posterior_means_match_importance_sampling(small_fit):
    """NUTS means agree with an independent importance-sampling computation, group by group."""
    df, _, res = small_fit
    agents = list(res.design.agents)
    k = len(agents)
    deltas = []
    for item, sub in df.groupby("item"):
        f = sub["first"].map(agents.index).to_numpy()
        s = sub["second"].map(agents.index).to_numpy()
        w1 = (sub["outcome"] == "first").to_numpy(float)
        mean, ess = posterior_mean_is(f, s, w1, 1 - w1, k, n=60_000, seed=1)
        assert ess > 5_000
        ab = res.abilities[res.abilities["item"] == item].set_index("agent")
        for q, a in enumerate(agents):
            deltas.append(ab.loc[a, "alpha_mean"] - mean[q])
        a0 = res.groups.loc[res.groups["item"] == item, "alpha0_mean"].iloc[0]
        deltas.append(a0 - mean[k])
    deltas = np.abs(deltas)
    assert deltas.mean() < 0.02, deltas.mean()
    assert deltas.max() < 0.08, deltas.max()


def test_ranks_probs_and_hdis_are_consistent(small_fit):
    _, _, res = small_fit
    ab = res.abilities
    # ranks 1..3 average to 2 within a group; softmax probabilities sum to 1 (in expectation too)
    g = ab.groupby("item")
    np.testing.assert_allclose(g["rank_mean"].sum(), 6.0, atol=1e-9)
    np.testing.assert_allclose(g["prob_mean"].sum(), 1.0, atol=1e-9)
    assert (ab["alpha_hdi_low"] < ab["alpha_mean"]).all()
    assert (ab["alpha_mean"] < ab["alpha_hdi_high"]).all()
    assert ab["rank_hdi_low"].between(1, 3).all() and ab["rank_hdi_high"].between(1, 3).all()
    # the highest-alpha agent of each group has the lowest mean rank
    best_alpha = ab.loc[g["alpha_mean"].idxmax(), "agent"].to_numpy()
    best_rank = ab.loc[g["rank_mean"].idxmin(), "agent"].to_numpy()
    assert (best_alpha == best_rank).mean() >= 0.9
    # rank mean recomputed from the kept draws
    alpha = res.alpha.reshape(-1, *res.alpha.shape[2:])
    r = 1 + (alpha[:, :, None, :] > alpha[:, :, :, None]).sum(axis=-1)
    gi = res.design.keys["item"].tolist().index(ab["item"].iloc[0])
    ki = list(res.design.agents).index(ab["agent"].iloc[0])
    assert ab["rank_mean"].iloc[0] == pytest.approx(r[:, gi, ki].mean())
    # HDI is the shortest 95% interval: no shorter interval of the draws holds 95%
    x = np.sort(alpha[:, gi, ki])
    m = int(np.floor(0.95 * len(x)))
    widths = x[m:] - x[: len(x) - m]
    assert ab["alpha_hdi_high"].iloc[0] - ab["alpha_hdi_low"].iloc[0] == pytest.approx(
        widths.min(), rel=1e-6
    )
    assert res.max_rhat <= 1.01 and res.n_divergent == 0


def test_ssr_from_the_centred_posterior_sd_is_the_formula_on_the_table(small_fit):
    """Under NUTS, SE = posterior s.d. of (alpha - the group's mean alpha); the reported SSR is
    (var(means, ddof 1) - mean(SE^2)) / var(means) of the abilities table, per group."""
    _, _, res = small_fit
    alpha = res.alpha.reshape(-1, *res.alpha.shape[2:])
    centred = alpha - alpha.mean(axis=-1, keepdims=True)
    for gi, item in enumerate(res.design.keys["item"]):
        ab = res.abilities[res.abilities["item"] == item].set_index("agent")
        ab = ab.loc[list(res.design.agents)]
        np.testing.assert_allclose(ab["alpha_se"], centred[:, gi].std(axis=0, ddof=1), rtol=1e-9)
        assert (ab["alpha_se"] < ab["alpha_sd"]).all()  # the common shift is left out
        v = ab["alpha_mean"].var(ddof=1)
        expect = (v - (ab["alpha_se"] ** 2).mean()) / v
        assert res.groups.loc[gi, "ssr"] == pytest.approx(expect, abs=1e-12)
        assert (ab["ssr"] == res.groups.loc[gi, "ssr"]).all()
    # one rater per comparison index: 25 raters, each with infit/outfit at the posterior means
    assert res.raters is not None and len(res.raters) == 25
    assert {"infit", "infit_t", "outfit", "outfit_t", "misfit"} <= set(res.raters.columns)


def test_same_seed_same_numbers_bit_for_bit():
    df, _ = simulate(4, 15, seed=2)
    df.loc[df.index[::5], "outcome"] = "tie"
    a = BradleyTerry(df, ties="random", seed=9).fit(chains=2, warmup=200, draws=200)
    b = BradleyTerry(df, ties="random", seed=9).fit(chains=2, warmup=200, draws=200)
    c = BradleyTerry(df, ties="random", seed=10).fit(chains=2, warmup=200, draws=200)
    pd.testing.assert_frame_equal(a.abilities, b.abilities)
    assert not a.abilities["alpha_mean"].equals(c.abilities["alpha_mean"])


def test_groups_below_min_comparisons_are_skipped_and_reported():
    df, _ = simulate(3, 10, seed=4)
    extra = df.iloc[:1].assign(item="lonely")
    model = BradleyTerry(pd.concat([df, extra]), ties="drop", min_comparisons=2)
    assert model.skipped["item"].tolist() == ["lonely"]
    assert "lonely" not in set(model.design.keys["item"])


@pytest.mark.slow
def test_hdi_coverage_on_simulated_data():
    """Simulation-based check: with abilities drawn from the prior, 95% HDIs cover the truth in
    about 95% of cases (1000 groups x 3 agents; binomial s.d. ~0.4 points)."""
    df, truth = simulate(1000, 20, seed=2024)
    res = BradleyTerry(df, ties="drop", seed=1).fit(chains=4, warmup=500, draws=500)
    m = res.abilities.merge(truth, on=["item", "agent"])
    assert len(m) == 3000
    cover = ((m["alpha_hdi_low"] <= m["alpha"]) & (m["alpha"] <= m["alpha_hdi_high"])).mean()
    assert 0.93 <= cover <= 0.97, cover
    g = res.groups.merge(truth.drop_duplicates("item"), on="item")
    cover0 = ((g["alpha0_hdi_low"] <= g["alpha0"]) & (g["alpha0"] <= g["alpha0_hdi_high"])).mean()
    assert 0.92 <= cover0 <= 0.98, cover0
    # ArviZ's rank-normalised split R-hat (since issue 20; numpyro's split R-hat gave <= 1.01 for
    # all 4000 parameters): it is stricter, and over 4000 parameters of 4 x 500 draws some pass
    # 1.01 by chance (56 of 4000, max 1.017 seen); the fit warns about them.
    assert res.max_rhat <= 1.03 and res.n_rhat_above <= 100, (res.max_rhat, res.n_rhat_above)
    assert (res.n_rhat_above > 0) == any("R-hat > 1.01" in w for w in res.warnings())
