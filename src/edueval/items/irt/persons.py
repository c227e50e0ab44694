"""Person scores: EAP (posterior mean and SD on the quadrature grid) and MAP (posterior mode by
Newton-Raphson, SE from the observed posterior information), and empirical reliability."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .engine import Layout, Patterns, _posterior

__all__ = ["empirical_reliability", "person_scores"]


def _map(pat: Patterns, layout: Layout, x: np.ndarray, start: np.ndarray, iters: int = 50):
    """Posterior modes by Fisher scoring, all patterns at once (items x patterns layout);
    the SE from the observed second derivative (central differences of the exact first)."""
    pars, var = layout.unpack(x)
    it = layout.itype
    y1 = np.ascontiguousarray(pat.y1.T)  # J x patterns
    obs = np.ascontiguousarray(pat.obs.T)

    def deriv(t: np.ndarray, cols: np.ndarray | slice) -> tuple[np.ndarray, np.ndarray]:
        P = np.clip(it.prob(pars, t[None, :]), 1e-12, 1 - 1e-12)  # J x patterns
        dP = it.dtheta(pars, t[None, :], P)
        u, o = y1[:, cols], obs[:, cols]
        g = (dP * (u - o * P) / (P * (1 - P))).sum(0) - t / var
        info = (o * dP**2 / (P * (1 - P))).sum(0) + 1 / var  # expected (Fisher scoring)
        return g, info

    t = start.astype(float).copy()
    active = np.arange(len(t))
    for _ in range(iters):  # only the patterns not yet converged take another step
        g, info = deriv(t[active], active)
        step = np.clip(g / info, -1.0, 1.0)
        t[active] += step
        active = active[np.abs(step) > 1e-10]
        if not len(active):
            break
    every = slice(None)
    if it.observed_equals_expected:
        d2 = -deriv(t, every)[1]
    else:
        h = 1e-5
        d2 = (deriv(t + h, every)[0] - deriv(t - h, every)[0]) / (2 * h)  # observed
    return t, 1.0 / np.sqrt(np.maximum(-d2, 1e-12))


def person_scores(
    pat: Patterns, layout: Layout, theta: np.ndarray, x: np.ndarray, index: pd.Index
) -> pd.DataFrame:
    """EAP and MAP estimates with standard errors for every row of the input (by pattern)."""
    _, post, _, _ = _posterior(pat, layout, theta, x)
    eap = post @ theta
    sd = np.sqrt(np.maximum(post @ theta**2 - eap**2, 0.0))
    mp, mse = _map(pat, layout, x, eap)
    inv = pat.inverse
    return pd.DataFrame(
        {
            "EAP": eap[inv],
            "SE_EAP": sd[inv],
            "MAP": mp[inv],
            "SE_MAP": mse[inv],
            "n_answered": pat.obs.sum(1)[inv].astype(int),
            "score": pat.y1.sum(1)[inv].astype(int),
        },
        index=index,
    )


def empirical_reliability(est: np.ndarray, se: np.ndarray) -> float:
    """var(theta-hat) / (var(theta-hat) + mean(SE^2)) (mirt's ``empirical_rxx``)."""
    v = float(np.var(est, ddof=1))
    return v / (v + float(np.mean(se**2)))
