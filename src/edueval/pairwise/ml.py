"""Maximum-likelihood Bradley-Terry (with the order effect), all groups at once, in seconds.

The same model as :mod:`.bradley_terry` -- per group ``g``,
``P(first preferred) = logistic(alpha0_g + alpha_{g,first} - alpha_{g,second})`` -- fitted by
Newton-Raphson on the log-likelihood instead of sampled (Hunter 2004 for the MM view; the
log-likelihood is concave, so Newton with step halving converges from zero).

Identification and regularisation (stated because estimates and SEs depend on them):

* **sum-to-zero**: within each group the abilities of the agents present sum to 0 (as choix's
  estimates, which are centred).  The likelihood only sees differences, so the optimiser adds
  ``(sum of the present abilities)^2 / (2 K)`` to the objective -- zero at the optimum, it only
  removes the flat direction.
* ``ridge`` (default 0: plain ML) adds ``ridge / 2 * (sum alpha^2 + alpha0^2)``: the MAP under
  ``N(0, 1/ridge)`` priors.  ``ridge = 1`` is the posterior mode of the Bayesian model of
  :mod:`.bradley_terry`.  **choix's** ``alpha`` penalises ``alpha * sum(params^2)``, so choix's
  ``alpha`` equals ``ridge / 2`` (choix has no order effect: fit with ``order_effect=False``).
* **standard errors** from the observed information (equal to the expected one for the logistic
  link), ``I = -Hessian`` of the (penalised) log-likelihood; the covariance of the sum-to-zero
  estimates is ``P (I + e e^T)^{-1} P`` with ``e`` the unit vector over the present agents and
  ``P = 1 - e e^T`` the projection onto sum-zero abilities (the Moore-Penrose inverse of ``I``
  when ``ridge = 0``).  ``alpha0`` is not touched by the projection.

Plain ML does not exist when an agent wins (or loses) all its comparisons, or more generally when
the graph "i beat j" of a group is not strongly connected (Zermelo 1929; Ford 1957): such a group
gets ``ml_exists = False`` and NaN estimates; a small ``ridge`` gives finite (MAP) estimates.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit, log_expit

from .design import Design

__all__ = [
    "MLEstimates",
    "estimate_table",
    "fit_ml_design",
    "strongly_connected",
]

#: largest |estimate| (logits) of a converged plain-ML fit before we call it diverging
DIVERGED = 25.0
#: cells of the batched Hessians held at once (groups x (agents + 1)^2)
_CELLS = 4_000_000


class MLEstimates:
    """Arrays of an ML fit: ``alpha`` and ``se`` (G, K) (NaN where the agent is absent),
    ``alpha0`` and ``alpha0_se`` (G,), ``loglik`` (G,), ``iterations``, ``converged`` and
    ``ml_exists`` (G,)."""

    def __init__(self, **arrays: np.ndarray) -> None:
        self.alpha = arrays["alpha"]
        self.se = arrays["se"]
        self.alpha0 = arrays["alpha0"]
        self.alpha0_se = arrays["alpha0_se"]
        self.loglik = arrays["loglik"]
        self.iterations = arrays["iterations"]
        self.converged = arrays["converged"]
        self.ml_exists = arrays["ml_exists"]


def strongly_connected(design: Design) -> np.ndarray:
    """Per group: is the directed graph ``winner -> loser`` over the present agents strongly
    connected (the condition for finite plain-ML abilities)?  One graph over all (group, agent)
    nodes, whose strong components never cross groups."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    K = len(design.agents)
    g = design.pair_group.astype(np.int64)
    f, s = g * K + design.pair_first, g * K + design.pair_second
    w1, w2 = design.pair_w1 > 0, design.pair_w2 > 0
    src = np.concatenate([f[w1], s[w2]])  # winner -> loser
    dst = np.concatenate([s[w1], f[w2]])
    n = design.n_groups * K
    m = coo_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
    _, labels = connected_components(m, directed=True, connection="strong")
    labels = labels.reshape(design.n_groups, K).astype(float)
    present = design.present
    lab = np.where(present, labels, np.nan)
    lo, hi = np.nanmin(lab, axis=1, initial=np.inf), np.nanmax(lab, axis=1, initial=-np.inf)
    return (present.sum(axis=1) >= 2) & (lo == hi)


def _chunk_fit(
    design: Design,
    lo_g: int,
    hi_g: int,
    ridge: float,
    order_effect: bool,
    max_iter: int,
    tol: float,
    skip: np.ndarray,
    init: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Newton on groups ``lo_g:hi_g`` together: parameters (Gc, K + 1), the last one alpha0;
    groups with ``skip`` (no finite ML) are left at 0."""
    K = len(design.agents)
    Gc = hi_g - lo_g
    lo, hi = np.searchsorted(design.pair_group, [lo_g, hi_g])
    g = design.pair_group[lo:hi] - lo_g
    i, j = design.pair_first[lo:hi], design.pair_second[lo:hi]
    w1, w2 = design.pair_w1[lo:hi], design.pair_w2[lo:hi]
    n = w1 + w2
    present = design.present[lo_g:hi_g].astype(float)
    k_present = np.maximum(present.sum(axis=1), 1.0)
    e = np.concatenate([present, np.zeros((Gc, 1))], axis=1) / np.sqrt(k_present)[:, None]
    free = np.concatenate([present, np.full((Gc, 1), float(order_effect))], axis=1)
    a = K  # index of alpha0
    idx = (i, j, np.full_like(i, a))
    signs = (1.0, -1.0, 1.0)
    cell = [g * (K + 1) + col for col in idx]  # (g, col) in the flat (Gc, K + 1) parameters

    def objective(x: np.ndarray) -> np.ndarray:
        eta = x[g, a] + x[g, i] - x[g, j]
        ll = np.bincount(g, w1 * log_expit(eta) + w2 * log_expit(-eta), minlength=Gc)
        s = (e * x).sum(axis=1)
        return -ll + 0.5 * ridge * (x**2).sum(axis=1) + 0.5 * s**2

    def grad_hess(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        eta = x[g, a] + x[g, i] - x[g, j]
        p = expit(eta)
        r = w1 - n * p  # d loglik / d eta
        w = n * p * (1 - p)
        flat_grad = np.zeros(Gc * (K + 1))
        flat_hess = np.zeros(Gc * (K + 1) ** 2)
        for u in range(3):
            flat_grad += np.bincount(cell[u], signs[u] * r, minlength=flat_grad.size)
            for v in range(3):
                flat = cell[u] * (K + 1) + idx[v]  # (g, idx[u], idx[v]) in the flat Hessians
                flat_hess += np.bincount(flat, signs[u] * signs[v] * w, minlength=flat_hess.size)
        hess = flat_hess.reshape(Gc, K + 1, K + 1)
        s = (e * x).sum(axis=1)
        grad = -flat_grad.reshape(Gc, K + 1) + ridge * x + s[:, None] * e  # of the objective
        # + a 1e-9 ridge: a disconnected design (no ML) stays solvable; its groups are reported
        hess = hess + (ridge + 1e-9) * np.eye(K + 1) + e[:, :, None] * e[:, None, :]
        # fixed parameters (absent agents; alpha0 without an order effect): identity rows
        fixed = free == 0
        grad[fixed] = 0.0
        hess[fixed] = 0.0
        hess.transpose(0, 2, 1)[fixed] = 0.0
        gi, ki = np.nonzero(fixed)
        hess[gi, ki, ki] = 1.0
        return grad, hess

    x = np.zeros((Gc, K + 1))
    if init is not None:  # a warm start (abilities only), e.g. the previous round's estimates
        start = np.where(present > 0, np.nan_to_num(init[lo_g:hi_g]), 0.0)
        x[:, :K] = start - (start * present).sum(axis=1, keepdims=True) / k_present[:, None]
    f = objective(x)
    converged = np.zeros(Gc, dtype=bool)
    diverged = skip[lo_g:hi_g].copy()  # no finite optimum (plain ML): stop, reported
    iterations = np.zeros(Gc, dtype=int)
    for _ in range(max_iter):
        iterations += ~(converged | diverged)
        grad, hess = grad_hess(x)
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        step[converged | diverged] = 0.0
        t = np.ones(Gc)
        for _ in range(30):  # step halving where the objective would rise
            new = x - t[:, None] * step
            f_new = objective(new)
            worse = f_new > f + 1e-12 * np.abs(f)
            if not worse.any():
                break
            t[worse] *= 0.5
        gain = f - f_new
        x, f = new, f_new
        size = np.abs(t[:, None] * step).max(axis=1)
        converged |= size < tol
        # moving by whole logits without improving the fit: a direction to infinity (separation)
        stalled = (gain < 1e-9 * (1 + np.abs(f))) & (size > 0.5)
        diverged |= ~converged & ((np.abs(x).max(axis=1) > DIVERGED) | stalled)
        if (converged | diverged).all():
            break
    _, hess = grad_hess(x)
    inv = np.linalg.inv(hess)
    proj = np.eye(K + 1)[None] - e[:, :, None] * e[:, None, :]
    cov = proj @ inv @ proj
    var = np.diagonal(cov, axis1=1, axis2=2).copy()
    var[free == 0] = np.nan
    theta = np.where(present > 0, x[:, :K], np.nan)
    return {
        "alpha": theta,
        "se": np.sqrt(var[:, :K]),
        "alpha0": x[:, a] if order_effect else np.zeros(Gc),
        "alpha0_se": np.sqrt(var[:, a]) if order_effect else np.zeros(Gc),
        "loglik": -(objective(x) - 0.5 * ridge * (x**2).sum(axis=1) - 0.5 * (e * x).sum(1) ** 2),
        "iterations": iterations,
        "converged": converged,
    }


def fit_ml_design(
    design: Design,
    *,
    ridge: float = 0.0,
    order_effect: bool = True,
    max_iter: int = 100,
    tol: float = 1e-10,
    init: np.ndarray | None = None,
) -> MLEstimates:
    """(Penalised) ML estimates of every group of ``design`` (see the module docstring);
    ``init`` (G, K): starting abilities (the optimum is the same; fewer Newton steps)."""
    if not np.isfinite(ridge) or ridge < 0:
        raise ValueError(f"ridge must be a finite number >= 0; got {ridge}")
    K = len(design.agents)
    per = max(1, _CELLS // (K + 1) ** 2)
    connected = strongly_connected(design) if ridge == 0 else np.ones(design.n_groups, bool)
    parts = [
        _chunk_fit(
            design,
            a,
            min(a + per, design.n_groups),
            ridge,
            order_effect,
            max_iter,
            tol,
            ~connected,
            init,
        )
        for a in range(0, design.n_groups, per)
    ]
    out = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    exists = out["converged"].copy()
    if ridge == 0:
        big = np.nanmax(np.abs(out["alpha"]), axis=1, initial=0.0) > DIVERGED
        exists &= connected & ~big & (np.abs(out["alpha0"]) < DIVERGED)
        for k in ("alpha", "se"):
            out[k][~exists] = np.nan
        for k in ("alpha0", "alpha0_se"):
            out[k][~exists] = np.nan
    return MLEstimates(**out, ml_exists=exists)


def estimate_table(design: Design, est: MLEstimates) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The abilities (one row per group and agent present) and groups tables of an ML fit."""
    from scipy import stats

    z = stats.norm.ppf(0.975)
    gi, ki = np.nonzero(design.present)
    ab = design.keys.iloc[gi].reset_index(drop=True)
    ab["agent"] = design.agents[ki]
    ab["n_comparisons"] = design.n_agent[gi, ki]
    ab["wins"] = design.wins[gi, ki]
    ab["alpha_mean"] = est.alpha[gi, ki]
    ab["alpha_se"] = est.se[gi, ki]
    ab["alpha_ci_low"] = ab["alpha_mean"] - z * ab["alpha_se"]
    ab["alpha_ci_high"] = ab["alpha_mean"] + z * ab["alpha_se"]
    ranked = np.where(design.present, np.nan_to_num(est.alpha, nan=-np.inf), -np.inf)
    order = np.argsort(-ranked, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, len(design.agents) + 1)[None], axis=1)
    ab["rank"] = ranks[gi, ki].astype(float)
    ab.loc[ab["alpha_mean"].isna(), "rank"] = np.nan
    gr = design.keys.copy()
    gr["n_comparisons"] = design.n_comparisons
    gr["n_ties"] = design.n_ties
    gr["n_agents"] = design.present.sum(axis=1)
    gr["alpha0"] = est.alpha0
    gr["alpha0_se"] = est.alpha0_se
    gr["alpha0_ci_low"] = est.alpha0 - z * est.alpha0_se
    gr["alpha0_ci_high"] = est.alpha0 + z * est.alpha0_se
    gr["loglik"] = est.loglik
    gr["iterations"] = est.iterations
    gr["converged"] = est.converged
    gr["ml_exists"] = est.ml_exists
    return ab, gr
