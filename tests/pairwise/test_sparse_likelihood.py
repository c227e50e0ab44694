"""Bradley-Terry over the observed pairs (issue 22): the same density as the dense pair basis it
replaced, O(observed pairs) memory, and recovery at the size of an item bank."""

from __future__ import annotations

from dataclasses import fields
from functools import partial

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, log_expit

from edueval.pairwise import BradleyTerry, resolve_ties
from edueval.pairwise.bradley_terry import (
    _bt_model,
    build_design,
    design_block,
    helmert,
    helmert_apply,
    model_args,
)
from edueval.pairwise.hierarchical import _hier_model

from .reference import simulate


def dense_pair_basis(k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The replaced formulation: every ordered pair ``(i, j)``, ``i != j``, and ``B`` ((k + 1) x
    k(k - 1)) with ``(z, alpha0) @ B = alpha0 + alpha_i - alpha_j`` for ``alpha = z @ H``."""
    i, j = np.nonzero(~np.eye(k, dtype=bool))
    d = np.zeros((k, len(i)))
    d[i, np.arange(len(i))] = 1.0
    d[j, np.arange(len(i))] -= 1.0
    return i, j, np.vstack([helmert(k) @ d, np.ones((1, len(i)))])


def dense_weights(res: pd.DataFrame, keys: pd.DataFrame, agents) -> tuple[np.ndarray, np.ndarray]:
    """``(G, K, K)`` wins of the first- and of the second-shown agent, straight from the rows."""
    a_index = {a: k for k, a in enumerate(agents)}
    g_index = {tuple(r): g for g, r in enumerate(keys.itertuples(index=False))}
    w1 = np.zeros((len(keys), len(agents), len(agents)))
    w2 = np.zeros_like(w1)
    for row in res.itertuples(index=False):
        g = g_index[(row.item, row.attribute)]
        w1[g, a_index[row.first], a_index[row.second]] += row.w_first
        w2[g, a_index[row.first], a_index[row.second]] += row.w_second
    return w1, w2


@pytest.fixture(scope="module")
def uneven():
    """Four agents, 7 items on 2 attributes; each group lacks some pairs, one lacks an agent;
    half ties give fractional weights."""
    df, _ = simulate(7, 9, agents=("A", "B", "C", "D"), seed=21)
    df["attribute"] = np.where(np.arange(len(df)) % 3 == 0, "clarity", "quality")
    df = df[~((df["item"] == "item0002") & ((df["first"] == "D") | (df["second"] == "D")))]
    df.loc[df.index[::5], "outcome"] = "tie"
    res = resolve_ties(df, "half")
    return res, build_design(res, ("item", "attribute"))


def test_dense_reference_gives_alpha0_plus_alpha_first_minus_second():
    rng = np.random.default_rng(0)
    k = 5
    i, j, b = dense_pair_basis(k)
    z, a0 = rng.normal(size=k), rng.normal()
    np.testing.assert_allclose(np.r_[z, a0] @ b, a0 + (z @ helmert(k))[i] - (z @ helmert(k))[j])


@pytest.mark.parametrize("k", [1, 2, 3, 4, 17])
def test_helmert_apply_equals_the_matrix_product(k):
    import jax.numpy as jnp

    z = np.random.default_rng(k).normal(size=(2, 3, k))
    np.testing.assert_allclose(helmert_apply(z), z @ helmert(k), atol=1e-12)
    z32 = jnp.asarray(z, jnp.float32)
    np.testing.assert_allclose(np.asarray(helmert_apply(z32, jnp)), z @ helmert(k), atol=1e-5)


def test_helmert_apply_in_float32_at_1000_agents():
    import jax.numpy as jnp

    z = np.random.default_rng(5).normal(size=(1, 1000))
    got = np.asarray(helmert_apply(jnp.asarray(z, jnp.float32), jnp))
    np.testing.assert_allclose(got, z @ helmert(1000), atol=5e-6)


def test_design_keeps_the_observed_pairs_and_their_summed_weights(uneven):
    res, des = uneven
    w1, w2 = dense_weights(res, des.keys, des.agents)
    observed = np.argwhere((w1 + w2) > 0)
    got = np.stack([des.pair_group, des.pair_first, des.pair_second], axis=1)
    np.testing.assert_array_equal(got, observed)  # sorted by group, first, second; no duplicate
    np.testing.assert_allclose(des.pair_w1, w1[tuple(observed.T)])
    np.testing.assert_allclose(des.pair_w2, w2[tuple(observed.T)])
    np.testing.assert_allclose(des.w1, w1)
    np.testing.assert_allclose(des.w2, w2)
    np.testing.assert_allclose(des.wins, w1.sum(axis=2) + w2.sum(axis=1))
    assert des.n_pairs < des.n_groups * 4 * 3  # some pairs unobserved: a real sparse case


def test_log_density_equals_the_dense_pair_basis(uneven):
    """numpyro's log joint over the observed pairs equals the replaced dense formulation
    (every ordered pair, x = theta @ B) at random parameter values."""
    from numpyro.infer.util import log_density

    res, des = uneven
    k, g = len(des.agents), des.n_groups
    w1, w2 = dense_weights(res, des.keys, des.agents)
    i, j, b = dense_pair_basis(k)
    rng = np.random.default_rng(2)
    for _ in range(3):
        theta = rng.normal(scale=1.5, size=(g, k + 1))
        x = theta @ b
        n = (w1 + w2)[:, i, j]
        dense = -np.sum(n * np.logaddexp(0, -x)) - np.sum(w2[:, i, j] * x)
        dense += -0.5 * np.sum(theta**2) - 0.5 * np.log(2 * np.pi) * theta.size
        model = partial(_bt_model, n_groups=g, n_agents=k)
        ours, _ = log_density(model, model_args(des), {}, {"theta": theta.astype(np.float32)})
        np.testing.assert_allclose(float(ours), dense, rtol=2e-6)


def test_hierarchical_log_likelihood_equals_the_dense_pair_basis(uneven):
    """The pooled model's likelihood over the observed pairs equals the dense formulation on
    the Helmert contrasts (rows 1..K-1 of the basis)."""
    import jax.numpy as jnp
    from numpyro.infer.util import log_density

    res, des = uneven
    k, g = len(des.agents), des.n_groups
    attributes = sorted(des.keys["attribute"].unique())
    a_of_g = des.keys["attribute"].map({a: q for q, a in enumerate(attributes)}).to_numpy()
    e = np.eye(len(attributes))[a_of_g]
    w1, w2 = dense_weights(res, des.keys, des.agents)
    i, j, b = dense_pair_basis(k)
    rng = np.random.default_rng(3)
    m = rng.normal(size=(len(attributes), k - 1))
    sigma = np.array([0.7, 1.3])
    z, a0 = rng.normal(size=(g, k - 1)), rng.normal(size=g)
    x = z @ b[1:k] + a0[:, None]
    loglik = -np.sum((w1 + w2)[:, i, j] * np.logaddexp(0, -x)) - np.sum(w2[:, i, j] * x)
    values = {"m": m, "sigma": sigma, "z": z, "alpha0": a0}
    args = (*model_args(des), jnp.asarray(e, jnp.float32))
    model = partial(_hier_model, n_agents=k)
    _, trace = log_density(model, args, {}, {s: v.astype(np.float32) for s, v in values.items()})
    np.testing.assert_allclose(float(trace["loglik"]["fn"].log_factor), loglik, rtol=2e-6)


def test_a_block_of_groups_keeps_its_pairs(uneven):
    _, des = uneven
    block = design_block(des, slice(3, 9))
    np.testing.assert_allclose(block.w1, des.w1[3:9])
    np.testing.assert_allclose(block.w2, des.w2[3:9])
    reordered = des.reorder(["D", "C"])
    perm = [3, 2, 0, 1]
    np.testing.assert_allclose(reordered.w1, des.w1[:, perm][:, :, perm])
    cell = (reordered.pair_group * 4 + reordered.pair_first) * 4 + reordered.pair_second
    assert np.all(np.diff(cell) > 0)  # still sorted, no duplicate


def _bank(n_agents: int, n_comparisons: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """One group of ``n_agents`` (the items of a bank), random ordered pairs."""
    rng = np.random.default_rng(seed)
    alpha = rng.normal(size=n_agents)
    i = rng.integers(n_agents, size=n_comparisons)
    j = (i + rng.integers(1, n_agents, size=n_comparisons)) % n_agents
    won = rng.random(n_comparisons) < expit(0.3 + alpha[i] - alpha[j])
    names = np.array([f"q{k:04d}" for k in range(n_agents)])
    df = pd.DataFrame(
        {
            "item": "bank",
            "attribute": "difficulty",
            "rater": "r",
            "first": names[i],
            "second": names[j],
            "outcome": np.where(won, "first", "second"),
        }
    )
    return df, alpha


def test_a_design_of_1000_agents_is_linear_in_the_comparisons():
    df, _ = _bank(1000, 20_000, seed=4)
    des = BradleyTerry(df, ties="drop").design
    k = len(des.agents)
    distinct = len(df[["first", "second"]].drop_duplicates())
    assert des.n_pairs == distinct
    sizes = {
        f.name: getattr(des, f.name).size
        for f in fields(des)
        if isinstance(getattr(des, f.name), np.ndarray)
    }
    assert max(sizes.values()) <= max(distinct, des.n_groups * k), sizes  # never K^2 = 10^6
    args = model_args(des)
    assert all(a.size == distinct for a in args)


def test_recovers_a_100_item_bank_from_sparse_comparisons():
    """100 items, 1,500 comparisons (30 per item, 15% of the ordered pairs seen once at most)."""
    df, alpha = _bank(100, 1500, seed=8)
    res = BradleyTerry(df, ties="drop", seed=3).fit(chains=2, warmup=400, draws=400)
    est = res.abilities.sort_values("agent")["alpha_mean"].to_numpy()
    truth = alpha - alpha.mean()
    assert np.corrcoef(est, truth)[0, 1] > 0.85
    assert np.mean(np.abs((est - est.mean()) - truth)) < 0.4
    assert res.max_rhat < 1.05
    # order effect 0.3 recovered: within the posterior's 95% HDI
    gr = res.groups.iloc[0]
    assert gr["alpha0_hdi_low"] < 0.3 < gr["alpha0_hdi_high"]


def test_log_factor_matches_single_comparisons_at_the_bank_scale():
    """At 1,000 agents the density over pairs equals the sum over single comparisons."""
    from numpyro.infer.util import log_density

    df, _ = _bank(1000, 5000, seed=9)
    res = resolve_ties(df, "drop")
    des = build_design(res, ("item", "attribute"))
    k = len(des.agents)
    theta = np.random.default_rng(1).normal(size=(1, k + 1)).astype(np.float32).astype(float)
    alpha = theta[0, :k] @ helmert(k)
    a_index = {a: q for q, a in enumerate(des.agents)}
    x = theta[0, k] + alpha[res["first"].map(a_index)] - alpha[res["second"].map(a_index)]
    direct = np.sum(res["w_first"] * log_expit(x) + res["w_second"] * log_expit(-x))
    model = partial(_bt_model, n_groups=1, n_agents=k)
    _, trace = log_density(model, model_args(des), {}, {"theta": theta.astype(np.float32)})
    np.testing.assert_allclose(float(trace["loglik"]["fn"].log_factor), direct, rtol=1e-5)
