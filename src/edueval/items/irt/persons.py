"""Person scores: EAP (posterior mean and SD on the quadrature grid) and MAP (posterior mode by
Newton-Raphson, SE from the observed posterior information), and empirical reliability."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .engine import Layout, Patterns, _posterior

__all__ = ["empirical_reliability", "person_scores"]


def _map(pat: Patterns, layout: Layout, x: np.ndarray, start: np.ndarray, iters: int = 50):
    pars, var = layout.unpack(x)
    it = layout.itype
    y0 = pat.obs - pat.y1

    def deriv(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        P = np.clip(it.prob(pars, t), 1e-12, 1 - 1e-12).T  # patterns x J
        dP = it.dtheta(pars, t).T
        g = (pat.y1 * dP / P - y0 * dP / (1 - P)).sum(1) - t / var
        info = (pat.obs * dP**2 / (P * (1 - P))).sum(1) + 1 / var  # expected (scoring)
        return g, info

    t = start.copy()
    for _ in range(iters):
        g, info = deriv(t)
        step = np.clip(g / info, -1.0, 1.0)
        t = t + step
        if np.abs(step).max() < 1e-10:
            break
    h = 1e-5
    d2 = (deriv(t + h)[0] - deriv(t - h)[0]) / (2 * h)  # observed second derivative
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
