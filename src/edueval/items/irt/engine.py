"""One marginal-maximum-likelihood engine over fixed quadrature (Bock & Aitkin 1981).

The latent trait is N(0, v) on a fixed grid (mirt's default: 61 points on [-6, 6], weights the
normal density normalised to sum 1).  The marginal log-likelihood of response pattern i is
``log sum_q prod_j P_jq^y_ij (1-P_jq)^(1-y_ij) w_q`` with missing responses left out of the product
(masking, no listwise deletion).  Its gradient is exact by Fisher's identity: the posterior-
expected complete-data score, i.e. the Bock-Aitkin E-step's expected counts ``r_jq`` (correct) and
``n_jq`` (answered) contracted with the item type's ``dlog`` pieces; the M-step is then done on the
marginal likelihood itself by L-BFGS (Nocedal & Wright 2006) with that gradient, which converges
to the maximum (not to an EM tolerance) in far fewer passes than plain EM.

Everything is vectorised over (response patterns x quadrature points); identical rows are
collapsed to one pattern with a frequency weight first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import logit

from .itemtypes import ITEM_TYPES, ItemType

__all__ = ["Layout", "Patterns", "fit_mml", "gradient_rows", "observed_information", "quadrature"]


def quadrature(n: int = 61, lim: float = 6.0) -> np.ndarray:
    """The fixed grid (mirt: ``seq(-6, 6, length.out = 61)`` for one factor)."""
    return np.linspace(-lim, lim, n)


def prior_logw(theta: np.ndarray, var: float) -> np.ndarray:
    """log of the N(0, var) density on the grid, normalised to sum 1 (as mirt's ``Prior``)."""
    lw = -0.5 * theta**2 / var
    return lw - np.logaddexp.reduce(lw)


@dataclass
class Patterns:
    """Response data collapsed to unique patterns: ``y1`` 1 where correct, ``obs`` 1 where
    answered (both 0 where not administered), ``w`` frequencies, ``inverse`` row -> pattern."""

    y1: np.ndarray
    obs: np.ndarray
    w: np.ndarray
    inverse: np.ndarray
    complete: bool
    y1_32: np.ndarray | None = None  # float32 copies for the likelihood products (big data)
    obs_32: np.ndarray | None = None

    @classmethod
    def from_matrix(cls, X: np.ndarray, big: int = 2_000_000) -> Patterns:
        """Collapse identical rows; above ``big`` cells the 0/1 matrices are float32 (exact for
        0/1, and the likelihood products then run at twice the speed; sums stay float64)."""
        X = np.asarray(X, dtype=float)
        code = np.where(np.isnan(X), 2, X).astype(np.int8)
        uniq, inverse, counts = np.unique(code, axis=0, return_inverse=True, return_counts=True)
        obs = (uniq != 2).astype(float)
        y1 = (uniq == 1).astype(float)
        pat = cls(y1, obs, counts.astype(float), inverse.ravel(), bool(obs.all()))
        if uniq.size > big:
            pat.y1_32, pat.obs_32 = y1.astype(np.float32), obs.astype(np.float32)
        return pat

    @property
    def n(self) -> float:
        return float(self.w.sum())


@dataclass
class Layout:
    """Which parameters are free: ``index[j, k]`` is the free-vector position of item j's k-th
    parameter (-1 = fixed at ``fixed[j, k]``); ``var_free`` adds log(latent variance) last."""

    itype: ItemType
    fixed: np.ndarray
    index: np.ndarray
    var_free: bool
    g_prior: tuple[float, float] | None = None

    @property
    def n_item_free(self) -> int:
        return int(self.index.max()) + 1 if (self.index >= 0).any() else 0

    @property
    def n_free(self) -> int:
        return self.n_item_free + int(self.var_free)

    def unpack(self, x: np.ndarray) -> tuple[np.ndarray, float]:
        pars = self.fixed.copy()
        m = self.index >= 0
        pars[m] = x[self.index[m]]
        var = float(np.exp(x[-1])) if self.var_free else 1.0
        return pars, var

    def fold(self, G: np.ndarray) -> np.ndarray:
        """Gradient over all item parameters (items x k) -> over the free ones (sums ties)."""
        m = self.index >= 0
        return np.bincount(self.index[m], weights=G[m], minlength=self.n_item_free)

    @classmethod
    def build(
        cls, model: str, n_items: int, *, rasch_scale: str = "variance", g_prior=None
    ) -> Layout:
        itype = ITEM_TYPES[model]
        k = len(itype.names)
        fixed = np.zeros((n_items, k))
        fixed[:, 0] = 1.0
        index = np.arange(n_items * k).reshape(n_items, k)
        var_free = False
        if model == "rasch":
            index = np.full((n_items, k), -1)
            if rasch_scale == "variance":  # mirt's Rasch: a = 1, latent variance estimated
                index[:, 1] = np.arange(n_items)
                var_free = True
            else:  # a common slope, latent variance 1 (mirt: CONSTRAIN = (1-J, a1))
                index[:, 0] = 0
                index[:, 1] = 1 + np.arange(n_items)
        return cls(itype, fixed, index, var_free, g_prior if model == "3pl" else None)


def _posterior(pat: Patterns, layout: Layout, theta: np.ndarray, x: np.ndarray):
    """log-likelihood, normalised posterior (patterns x Q) and the item-level pieces."""
    pars, var = layout.unpack(x)
    P = np.clip(layout.itype.prob(pars, theta), 1e-15, 1 - 1e-15)
    logP, logQ = np.log(P), np.log1p(-P)
    # big data: the log-likelihood products in float32 (they only weight the posterior; the
    # expected counts, hence the gradient, stay float64)
    y1, obs = (pat.y1, pat.obs) if pat.y1_32 is None else (pat.y1_32, pat.obs_32)
    dt = y1.dtype
    logL = y1 @ (logP - logQ).astype(dt)
    logL += (logQ.sum(0) if pat.complete else obs @ logQ.astype(dt)).astype(dt)
    logL += prior_logw(theta, var).astype(dt)
    mx = logL.max(1, keepdims=True)
    lik = np.exp(logL - mx)
    s = lik.sum(1, keepdims=True)
    ll = float(pat.w @ (mx[:, 0].astype(float) + np.log(s[:, 0].astype(float))))
    lik /= s
    return ll, lik.astype(float, copy=False), pars, var


def _log_prior(layout: Layout, pars: np.ndarray) -> tuple[float, np.ndarray]:
    G = np.zeros_like(pars)
    if layout.g_prior is None:
        return 0.0, G
    mu, sd = layout.g_prior
    z = (pars[:, 2] - mu) / sd
    G[:, 2] = -z / sd
    return float(-0.5 * (z**2).sum()), G


def value_and_grad(pat: Patterns, layout: Layout, theta: np.ndarray, x: np.ndarray):
    """Marginal log-likelihood (+ log prior) and its exact gradient over the free parameters."""
    ll, post, pars, var = _posterior(pat, layout, theta, x)
    wpost = post * pat.w[:, None]
    # Q x J expected counts (correct, answered); written as (J x N) @ (N x Q): OpenBLAS runs the
    # transposed-left form (N x Q).T @ (N x J) up to 100x slower with two threads
    r = (pat.y1.T @ wpost).T
    n = wpost.sum(0)[:, None] if pat.complete else (pat.obs.T @ wpost).T
    dP, dQ = layout.itype.dlog(pars, theta)  # (k, J, Q)
    G = np.einsum("kjq,qj->jk", dP, r) + np.einsum("kjq,qj->jk", dQ, n - r)
    lp, Gp = _log_prior(layout, pars)
    grad = layout.fold(G + Gp)
    if layout.var_free:
        Nq = wpost.sum(0)
        w = np.exp(prior_logw(theta, var))
        grad = np.append(grad, float(Nq @ (theta**2 - w @ theta**2)) / (2 * var))
    return ll + lp, grad


def gradient_rows(pat: Patterns, layout: Layout, theta: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Per-pattern gradient of the marginal log-likelihood (patterns x free), unweighted."""
    _, post, pars, var = _posterior(pat, layout, theta, x)
    dP, dQ = layout.itype.dlog(pars, theta)
    y0 = pat.obs - pat.y1
    m = layout.index >= 0
    out = np.zeros((len(pat.w), layout.n_free))
    for k in range(dP.shape[0]):
        gk = pat.y1 * (post @ dP[k].T) + y0 * (post @ dQ[k].T)  # patterns x J
        js = np.flatnonzero(m[:, k])
        cols = layout.index[js, k]
        if len(np.unique(cols)) == len(cols):
            out[:, cols] += gk[:, js]
        else:  # a parameter shared by several items (the Rasch common slope)
            for c in np.unique(cols):
                out[:, c] += gk[:, js[cols == c]].sum(1)
    if layout.var_free:
        w = np.exp(prior_logw(theta, var))
        out[:, -1] = post @ ((theta**2 - w @ theta**2) / 2.0)
    return out


def observed_information(
    pat: Patterns, layout: Layout, theta: np.ndarray, x: np.ndarray, h: float = 1e-5
) -> np.ndarray:
    """Observed information: minus the Hessian of the marginal log-likelihood (+ log prior), by
    central differences of the exact analytic gradient (the quantity mirt's Oakes / Richardson
    standard errors estimate)."""
    p = len(x)
    H = np.empty((p, p))
    for i in range(p):
        e = np.zeros(p)
        e[i] = h * max(1.0, abs(x[i]))
        gp = value_and_grad(pat, layout, theta, x + e)[1]
        gm = value_and_grad(pat, layout, theta, x - e)[1]
        H[:, i] = (gp - gm) / (2 * e[i])
    H = 0.5 * (H + H.T)
    return -H


def start_values(pat: Patterns, layout: Layout, g_start: float = 0.2) -> np.ndarray:
    """Intercepts from the observed proportions correct, slopes 1, g = ``g_start``."""
    pj = (pat.w @ pat.y1 + 0.5) / (pat.w @ pat.obs + 1.0)
    pars = layout.fixed.copy()
    pars[:, 1] = logit(pj) * 1.2
    if pars.shape[1] == 3:
        pars[:, 2] = logit(g_start)
    x = np.zeros(layout.n_free)
    m = layout.index >= 0
    x[layout.index[m]] = pars[m]
    return x


def _bounds(layout: Layout) -> list[tuple[float, float]]:
    lim = np.tile(np.array([[-20.0, 20.0]]), (layout.n_free, 1))
    if layout.itype.names[-1] == "logit_g":
        lim[layout.index[:, 2][layout.index[:, 2] >= 0]] = (-12.0, 8.0)
    if layout.var_free:
        lim[-1] = (-6.0, 4.0)
    return [tuple(b) for b in lim]


@dataclass
class FitState:
    x: np.ndarray
    loglik: float
    n_eval: int
    converged: bool
    message: str


def fit_mml(
    pat: Patterns,
    layout: Layout,
    theta: np.ndarray,
    x0: np.ndarray,
    *,
    max_iter: int = 2000,
    tol: float = 1e-9,
) -> FitState:
    """Maximise the marginal log-likelihood (+ log prior) from ``x0`` by L-BFGS-B with the exact
    gradient; ``tol`` is on the relative change of the objective per iteration."""
    scale = max(pat.n, 1.0)
    gtol = 1e-10
    if pat.y1_32 is not None:  # float32 likelihood: stop at its resolution (gradient per
        tol, gtol = max(tol, 1e-9), 1e-4  # person < 1e-4: the estimates within ~1e-3 of an SE)

    def f(x):
        v, g = value_and_grad(pat, layout, theta, x)
        return -v / scale, -g / scale

    res = minimize(
        f,
        x0,
        jac=True,
        method="L-BFGS-B",
        bounds=_bounds(layout),
        options={"maxiter": max_iter, "ftol": tol, "gtol": gtol, "maxcor": 20},
    )
    return FitState(res.x, -res.fun * scale, int(res.nfev), bool(res.success), str(res.message))


def newton_polish(
    pat: Patterns, layout: Layout, theta: np.ndarray, st: FitState, steps: int = 3
) -> tuple[FitState, np.ndarray]:
    """A few Newton steps with the observed information (kept only when they raise the
    likelihood): the maximum to machine-level gradient, and the information at it."""
    x, ll = st.x, st.loglik
    lim = np.array(_bounds(layout))
    inner = (x > lim[:, 0] + 0.5) & (x < lim[:, 1] - 0.5)  # parameters not at a bound
    info = observed_information(pat, layout, theta, x)
    for _ in range(steps):
        g = value_and_grad(pat, layout, theta, x)[1]
        step = np.zeros_like(x)
        try:
            step[inner] = np.linalg.solve(info[np.ix_(inner, inner)], g[inner])
        except np.linalg.LinAlgError:
            break
        x_new = np.clip(x + step, lim[:, 0], lim[:, 1])
        ll_new = value_and_grad(pat, layout, theta, x_new)[0]
        if not ll_new >= ll - 1e-10:
            break
        x, ll = x_new, max(ll, ll_new)
        info = observed_information(pat, layout, theta, x)
        if np.abs(step).max() < 1e-9:
            break
    return FitState(x, ll, st.n_eval, st.converged, st.message), info
