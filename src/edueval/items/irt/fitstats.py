"""Limited-information and item-level fit: M2 (Maydeu-Olivares & Joe 2006) and S-X2 (Orlando &
Thissen 2000), computed as mirt's ``M2()`` and ``itemfit(..., 'S_X2')`` do."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .engine import Layout, prior_logw

__all__ = ["lord_wingersky", "m2", "s_x2"]


def _margins(layout: Layout, theta: np.ndarray, x: np.ndarray) -> np.ndarray:
    pars, var = layout.unpack(x)
    P = layout.itype.prob(pars, theta)
    w = np.exp(prior_logw(theta, var))
    j, k = np.triu_indices(P.shape[0], 1)
    return np.concatenate([P @ w, ((P[j] * P[k]) @ w)])


def _xi(P: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Model-implied first/second-order margins and their covariance matrix (binary items:
    E[m_a m_b] integrates the product of P over the union of the items of a and b)."""
    J = P.shape[0]
    j, k = np.triu_indices(J, 1)
    items = np.concatenate([np.c_[np.arange(J), np.full(J, -1)], np.c_[j, k]])
    M = np.concatenate([P, P[j] * P[k]])
    e = M @ w
    E = (M * w) @ M.T
    # entries whose margins share an item: divide the shared P back out (y^2 = y)
    by_item = [np.flatnonzero((items == i).any(1)) for i in range(J)]
    a = np.concatenate([np.repeat(ix, len(ix)) for ix in by_item])
    b = np.concatenate([np.tile(ix, len(ix)) for ix in by_item])
    ab = np.unique(a * len(items) + b)
    a, b = ab // len(items), ab % len(items)
    D = np.ones((len(a), P.shape[1]))
    for s in (0, 1):
        it = items[a, s]
        shared = (it >= 0) & ((it == items[b, 0]) | (it == items[b, 1]))
        D[shared] *= P[it[shared]]
    E[a, b] = (M[a] * M[b] / D) @ w
    return e, E - np.outer(e, e)


def m2(X: np.ndarray, layout: Layout, theta: np.ndarray, x: np.ndarray) -> dict:
    """M2, its df, p value and RMSEA (mirt's ``M2()``; with missing responses each margin uses
    the rows that answered its items and is weighted by that count, as mirt does)."""
    obs = ~np.isnan(X)
    Y = np.where(obs, X, 0.0)
    N = X.shape[0]
    J = X.shape[1]
    j, k = np.triu_indices(J, 1)
    cN = obs.T.astype(float) @ obs
    cross = Y.T @ Y
    Nstar = np.concatenate([obs.sum(0), cN[j, k]]).astype(float)
    p = np.concatenate([Y.sum(0) / obs.sum(0), cross[j, k] / cN[j, k]])
    pars, var = layout.unpack(x)
    P = layout.itype.prob(pars, theta)
    e, Xi = _xi(P, np.exp(prior_logw(theta, var)))
    h = 1e-5
    delta = np.empty((len(e), len(x)))
    for i in range(len(x)):
        d = np.zeros(len(x))
        d[i] = h
        delta[:, i] = (_margins(layout, theta, x + d) - _margins(layout, theta, x - d)) / (2 * h)
    q, _ = np.linalg.qr(delta, mode="complete")
    dc = q[:, len(x) :]
    df = len(e) - len(x)
    if df < 1:
        return {"M2": float("nan"), "df": df, "p": float("nan"), "RMSEA": float("nan")}
    C2 = dc @ np.linalg.solve(dc.T @ Xi @ dc, dc.T)
    ratio = np.sqrt(Nstar / N)
    C2 = np.outer(ratio, ratio) * C2
    r = np.sqrt(Nstar) * (p - e)
    stat = float(abs(r @ C2 @ r))
    rmsea = float(np.sqrt(max(stat - df, 0.0) / (df * (N - 1))))
    low, high = _rmsea_ci(stat, df, N)
    return {"M2": stat, "df": int(df), "p": float(stats.chi2.sf(stat, df)), "RMSEA": rmsea,
            "RMSEA_5": low, "RMSEA_95": high}  # fmt: skip


def _rmsea_ci(stat: float, df: int, n: int) -> tuple[float, float]:
    """90% interval of the RMSEA from the noncentral chi-square (Browne & Cudeck 1993), as
    mirt's ``RMSEA.CI``: the noncentralities where P(X <= stat) is 0.95 and 0.05."""
    from scipy.optimize import brentq

    def lam(target: float) -> float:
        f = lambda nc: stats.ncx2.cdf(stat, df, nc) - target  # noqa: E731
        if f(1e-9) < 0:
            return 0.0
        hi = max(stat, 1.0)
        while f(hi) > 0:
            hi *= 2
        return float(brentq(f, 1e-9, hi))

    scale = df * (n - 1)
    return float(np.sqrt(lam(0.95) / scale)), float(np.sqrt(lam(0.05) / scale))


def lord_wingersky(P: np.ndarray) -> np.ndarray:
    """P(summed score = s | theta_q), s = 0..J, by the Lord & Wingersky (1984) recursion."""
    L = np.zeros((P.shape[0] + 1, P.shape[1]))
    L[0] = 1.0
    for j in range(P.shape[0]):
        new = L * (1 - P[j])
        new[1:] += L[:-1] * P[j]
        L = new
    return L


def _collapse(
    obs_t: np.ndarray, exp_t: np.ndarray, mincell: float
) -> tuple[np.ndarray, np.ndarray]:
    """mirt's ``collapseCells`` for a two-column (incorrect, correct) table."""
    keep = obs_t.sum(1) != 0
    obs_t, exp_t = obs_t[keep].copy(), exp_t[keep].copy()
    drop = []
    for j in range(len(obs_t) - 1):
        if obs_t[j].sum() == 1:
            drop.append(j)
            obs_t[j + 1] += obs_t[j]
            exp_t[j + 1] += exp_t[j]
    obs_t, exp_t = np.delete(obs_t, drop, 0), np.delete(exp_t, drop, 0)
    if len(obs_t) > 1 and obs_t[-1].sum() == 1:
        obs_t[-2] += obs_t[-1]
        exp_t[-2] += exp_t[-1]
        obs_t, exp_t = obs_t[:-1], exp_t[:-1]
    while len(exp_t) > 1:
        low = ((exp_t < mincell) & (exp_t != 0)).any(1)
        if not low.any():
            break
        i = int(np.flatnonzero(low)[0])
        if i == 0:
            pick = 1
        elif i == len(exp_t) - 1:
            pick = i - 1
        else:
            up, down = obs_t[i - 1].sum(), obs_t[i + 1].sum()
            pick = i - 1 if up <= down else i + 1
        obs_t[pick] += obs_t[i]
        exp_t[pick] += exp_t[i]
        obs_t, exp_t = np.delete(obs_t, i, 0), np.delete(exp_t, i, 0)
    exp_t = np.where(exp_t == 0, np.nan, exp_t)
    return obs_t, exp_t


def s_x2(
    X: np.ndarray, layout: Layout, theta: np.ndarray, x: np.ndarray, mincell: float = 1.0
) -> pd.DataFrame:
    """Orlando-Thissen S-X2 per item over the summed-score groups 1..J-1 (rows with a missing
    response are left out, as mirt's ``itemfit(na.rm = TRUE)``); df = cells - groups - the
    item's free parameters - the free latent-distribution parameters."""
    X = X[~np.isnan(X).any(1)]
    pars, var = layout.unpack(x)
    P = layout.itype.prob(pars, theta)
    w = np.exp(prior_logw(theta, var))
    J = P.shape[0]
    total = lord_wingersky(P) @ w
    score = X.sum(1).astype(int)
    n_item = (layout.index >= 0).sum(1)
    rows = []
    for i in range(J):
        L = lord_wingersky(np.delete(P, i, 0))
        s = np.arange(1, J)
        e1 = (L[s - 1] * P[i] * w).sum(1) / total[s]
        e0 = (L[s] * (1 - P[i]) * w).sum(1) / total[s]
        obs_t = np.zeros((J - 1, 2))
        for c in (0, 1):
            np.add.at(obs_t[:, c], score[(X[:, i] == c) & (score > 0) & (score < J)] - 1, 1)
        exp_t = np.c_[e0, e1] * obs_t.sum(1, keepdims=True)
        obs_c, exp_c = _collapse(obs_t, exp_t, mincell)
        stat = float(np.nansum((obs_c - exp_c) ** 2 / exp_c))
        df = int((~np.isnan(exp_c)).sum() - len(exp_c) - n_item[i] - int(layout.var_free))
        df = max(df, 0)
        rows.append(
            {
                "S_X2": stat if df > 0 else np.nan,
                "df_S_X2": df,
                "p_S_X2": float(stats.chi2.sf(stat, df)) if df > 0 else np.nan,
            }
        )
    return pd.DataFrame(rows)
