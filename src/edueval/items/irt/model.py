"""``IRT``: Rasch, 2PL and 3PL by marginal maximum likelihood, a scikit-learn estimator.

The shape is mirt's (Chalmers 2012): one engine (:mod:`.engine`, MML over a fixed quadrature
grid) and item types as small pluggable pieces (:mod:`.itemtypes`).  Defaults follow mirt:
61 quadrature points on [-6, 6], N(0, 1) latent trait; the Rasch model fixes every slope at 1 and
estimates the latent variance (``rasch_scale="variance"``, mirt's ``itemtype = "Rasch"``), or
estimates one common slope with the variance fixed at 1 (``rasch_scale="slope"``, mirt's
``CONSTRAIN = (1-J, a1)``) -- the same model, two scales.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit

from ...io import InputError
from ...kt.bkt.model import BaseEstimator, NotFittedError
from ...results import RunResults
from ...tables import Table, takes_tables
from ..scores import read_scores
from . import engine as E
from .fitstats import m2, s_x2
from .persons import empirical_reliability, person_scores

__all__ = ["IRT", "IRTResults", "as_response_matrix"]

MODELS = ("rasch", "2pl", "3pl")
SE_METHODS = ("observed", "crossprod", "none")


def as_response_matrix(data: Any, *, for_fit: bool = True) -> pd.DataFrame:
    """A wide 0/1/NaN frame (students x items) from a score table (path or DataFrame, long or
    wide; see :func:`edueval.items.scores.read_scores`) or a 2-D array."""
    if isinstance(data, np.ndarray):
        if data.ndim != 2:
            raise InputError("responses: a 2-D array (students x items) is needed")
        df = pd.DataFrame(
            data.astype(float), columns=[f"item{j + 1}" for j in range(data.shape[1])]
        )
        df.index = pd.Index([f"s{i + 1}" for i in range(len(df))], name="student")
    elif (
        isinstance(data, pd.DataFrame)
        and data.index.name != "student"
        and ("student" not in data.columns and "item" not in data.columns)
    ):
        df = read_scores(data.rename_axis("student").reset_index(), layout="wide")
    else:
        df = read_scores(data)
    v = df.to_numpy(dtype=float)
    bad = ~np.isnan(v) & (v != 0) & (v != 1)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise InputError(
            f"responses: item {df.columns[j]!r}, student {df.index[i]!r}: score {v[i, j]:g} "
            "is not 0 or 1 (IRT here is for right/wrong items)"
        )
    if not for_fit:
        return df
    p = np.nanmean(v, axis=0)
    const = (p == 0) | (p == 1)
    if const.any():
        raise InputError(
            f"responses: item {df.columns[int(np.flatnonzero(const)[0])]!r} has no variance "
            "(every answer the same); drop it before fitting an IRT model"
        )
    if df.shape[1] < 3:
        raise InputError("responses: an IRT model needs at least 3 items")
    return df


@dataclass
class IRTResults(RunResults):
    """The fitted model: item table (slope-intercept and IRT form with standard errors and S-X2),
    person table (EAP and MAP with SEs), likelihood and M2 fit, information functions."""

    model: str
    items: pd.DataFrame
    persons: pd.DataFrame
    loglik: float
    n_params: int
    n_persons: int
    latent_variance: float
    latent_variance_se: float
    m2: dict
    reliability: dict
    se_method: str
    rasch_scale: str
    g_prior: tuple[float, float] | None
    converged: bool
    theta: np.ndarray = field(repr=False)
    _layout: Any = field(repr=False)
    _x: np.ndarray = field(repr=False)

    @property
    def aic(self) -> float:
        return -2 * self.loglik + 2 * self.n_params

    @property
    def bic(self) -> float:
        return -2 * self.loglik + np.log(self.n_persons) * self.n_params

    def item_information(self, theta: np.ndarray | None = None) -> pd.DataFrame:
        """Fisher information of each item (columns) at ``theta`` (rows; default -4..4)."""
        t = np.linspace(-4, 4, 81) if theta is None else np.asarray(theta, float)
        pars, _ = self._layout.unpack(self._x)
        info = self._layout.itype.info(pars, t)
        return pd.DataFrame(info.T, index=pd.Index(t, name="theta"), columns=self.items.index)

    def test_information(self, theta: np.ndarray | None = None) -> pd.Series:
        """Sum of the item informations; its inverse square root is the SE of measurement."""
        return self.item_information(theta).sum(axis=1).rename("information")

    def icc(self, theta: np.ndarray | None = None) -> pd.DataFrame:
        """P(correct | theta) per item (the item characteristic curves)."""
        t = np.linspace(-4, 4, 81) if theta is None else np.asarray(theta, float)
        pars, _ = self._layout.unpack(self._x)
        P = self._layout.itype.prob(pars, t)
        return pd.DataFrame(P.T, index=pd.Index(t, name="theta"), columns=self.items.index)

    def to_frame(self) -> pd.DataFrame:
        """The item table (one row per item)."""
        return self.items.copy()

    _writer = "edueval.items.irt_pipeline:save_irt"

    def headline(self) -> dict:
        return self.fit_dict()

    def fit_dict(self) -> dict:
        return {
            "model": self.model,
            "loglik": self.loglik,
            "AIC": self.aic,
            "BIC": self.bic,
            "n_params": self.n_params,
            "n_persons": self.n_persons,
            "n_items": len(self.items),
            "latent_variance": self.latent_variance,
            "latent_variance_se": self.latent_variance_se,
            "M2": self.m2,
            "reliability": self.reliability,
            "se_method": self.se_method,
            "rasch_scale": self.rasch_scale if self.model == "rasch" else None,
            "g_prior": list(self.g_prior) if self.g_prior else None,
            "converged": self.converged,
        }

    def summary(self) -> str:
        m = self.m2
        head = [
            f"IRT {self.model.upper()} by MML ({len(self.theta)}-point quadrature E-step, L-BFGS), "
            f"{self.n_persons} persons x {len(self.items)} items",
            f"log-likelihood {self.loglik:.4f}, AIC {self.aic:.2f}, BIC {self.bic:.2f}, "
            f"{self.n_params} free parameters",
            f"latent variance {self.latent_variance:.4f}"
            + (
                f" (SE {self.latent_variance_se:.4f})"
                if self.latent_variance_se > 0
                else " (fixed)"
            ),
            f"M2 = {m.get('M2', float('nan')):.4f}, df {m.get('df')}, p {m.get('p', float('nan')):.4f},"
            f" RMSEA {m.get('RMSEA', float('nan')):.4f}"
            f" [{m.get('RMSEA_5', float('nan')):.4f}, {m.get('RMSEA_95', float('nan')):.4f}]"
            if m
            else "M2 not computed",
            f"empirical reliability: EAP {self.reliability.get('EAP', float('nan')):.4f}, "
            f"MAP {self.reliability.get('MAP', float('nan')):.4f}; SEs: {self.se_method}",
        ]
        cols = [c for c in ("a", "a_se", "d", "d_se", "g", "g_se", "b", "b_se", "S_X2",
                            "df_S_X2", "p_S_X2") if c in self.items.columns]  # fmt: skip
        table = self.items[cols].to_string(float_format=lambda v: f"{v:.4f}")
        return "\n".join([*head, table])


def _item_table(layout: E.Layout, x: np.ndarray, cov: np.ndarray | None, names) -> pd.DataFrame:
    """Slope-intercept (a, d, logit_g) and IRT form (b = -d/a, g) with delta-method SEs."""
    pars, _ = layout.unpack(x)
    J, k = pars.shape
    idx = layout.index
    P = len(x)
    C = np.zeros((P, P)) if cov is None else cov

    def se_of(grad_rows: np.ndarray) -> np.ndarray:  # grad_rows: J x P
        v = np.einsum("jp,pq,jq->j", grad_rows, C, grad_rows)
        return np.sqrt(np.maximum(v, 0.0)) if cov is not None else np.full(J, np.nan)

    def grad_of(col: int) -> np.ndarray:
        G = np.zeros((J, P))
        ok = idx[:, col] >= 0
        G[np.flatnonzero(ok), idx[ok, col]] = 1.0
        return G

    Ga, Gd = grad_of(0), grad_of(1)
    a, d = pars[:, 0], pars[:, 1]
    out = {"a": a, "a_se": se_of(Ga), "d": d, "d_se": se_of(Gd)}
    if k == 3:
        Gl = grad_of(2)
        g = expit(pars[:, 2])
        out.update(logit_g=pars[:, 2], logit_g_se=se_of(Gl), g=g)
        out["g_se"] = out["logit_g_se"] * g * (1 - g)
    else:
        out.update(g=np.zeros(J), g_se=np.full(J, np.nan))
    out["b"] = -d / a
    out["b_se"] = se_of(Ga * (d / a**2)[:, None] - Gd / a[:, None])
    for key in ("a_se", "d_se"):  # fixed parameters have no standard error
        col = 0 if key == "a_se" else 1
        out[key] = np.where(idx[:, col] >= 0, out[key], np.nan)
    return pd.DataFrame(out, index=pd.Index(names, name="item"))


#: The gate of a score table given to :class:`IRT` (a 2-D array: a students x items matrix).
SCORE_MATRIX = Table("scores", ("student",), ("item", "correct", "score"), self_checked=True,
                     matrix=True)  # fmt: skip


class IRT(BaseEstimator):
    """Unidimensional IRT for right/wrong items by marginal maximum likelihood (Bock & Aitkin
    1981), the scikit-learn estimator contract: hyper-parameters here, :meth:`fit` learns, the
    fitted state is in attributes ending in ``_`` (``items_``, ``persons_``, ``loglik_``,
    ``results_``).

    Parameters
    ----------
    model : ``"rasch"``, ``"2pl"`` or ``"3pl"``.
    rasch_scale : the Rasch model's scale: ``"variance"`` (slopes fixed at 1, latent variance
        estimated -- mirt's Rasch) or ``"slope"`` (one common slope, latent variance 1).
    g_prior : 3PL only: ``(mean, sd)`` of a normal prior on logit(g), as mirt's
        ``parprior = list(c(..., "norm", mean, sd))``; the default ``None`` is mirt's default 3PL
        (no prior: plain maximum likelihood).  ``(-1.386, 0.5)`` centres g on 0.2.
    quadpts, theta_lim : the quadrature grid (mirt: 61 points on [-6, 6]).
    se : ``"observed"`` (the observed information, minus the Hessian of the marginal
        log-likelihood by central differences of its exact gradient: what mirt's Oakes and
        Richardson SEs estimate; costs two likelihood passes per parameter), ``"crossprod"``
        (the cross-product of the per-person scores, Louis-type, mirt's ``SE.type =
        "crossprod"``; one pass) or ``"none"``.
    fit_stats : compute M2 and S-X2.
    max_iter, tol : L-BFGS iterations at most, and its relative-change tolerance.
    blas_threads : BLAS threads while fitting (``None``: leave the library's setting).  One by
        default: the products here are tall and thin, and on a shared machine OpenBLAS's threads
        made some of them 10-100x slower (benchmarks/RESULTS.md, IRT section).
    """

    def __init__(
        self,
        model: str = "2pl",
        *,
        rasch_scale: str = "variance",
        g_prior: tuple[float, float] | None = None,
        quadpts: int = 61,
        theta_lim: float = 6.0,
        se: str = "observed",
        fit_stats: bool = True,
        max_iter: int = 2000,
        tol: float = 1e-10,
        blas_threads: int | None = 1,
    ) -> None:
        self.model = model
        self.rasch_scale = rasch_scale
        self.g_prior = g_prior
        self.quadpts = quadpts
        self.theta_lim = theta_lim
        self.se = se
        self.fit_stats = fit_stats
        self.max_iter = max_iter
        self.tol = tol
        self.blas_threads = blas_threads

    def _check_params(self) -> None:
        if self.model not in MODELS:
            raise InputError(f"model= must be one of {', '.join(MODELS)} (got {self.model!r})")
        if self.rasch_scale not in ("variance", "slope"):
            raise InputError("rasch_scale= must be 'variance' or 'slope'")
        if self.se not in SE_METHODS:
            raise InputError(f"se= must be one of {', '.join(SE_METHODS)} (got {self.se!r})")
        if int(self.quadpts) < 5 or not float(self.theta_lim) > 0:
            raise InputError("quadpts= must be >= 5 and theta_lim= > 0")
        if self.g_prior is not None and (len(self.g_prior) != 2 or not self.g_prior[1] > 0):
            raise InputError("g_prior= must be (mean, sd > 0) of logit(g)")

    def _fit_x(self, pat: E.Patterns, layout: E.Layout, theta: np.ndarray) -> E.FitState:
        starts = [E.start_values(pat, layout)]
        if self.model == "3pl":  # two starting guesses for the lower asymptotes; keep the best
            starts.append(E.start_values(pat, layout, g_start=0.02))
        best = None
        for x0 in starts:
            st = E.fit_mml(pat, layout, theta, x0, max_iter=self.max_iter, tol=self.tol)
            if best is None or st.loglik > best.loglik:
                best = st
        assert best is not None
        return best

    def _covariance(self, pat, layout, theta, st) -> tuple[E.FitState, np.ndarray | None]:
        if self.se == "none":
            return st, None
        if self.se == "observed":
            st, info = E.newton_polish(pat, layout, theta, st)
        else:
            rows = E.gradient_rows(pat, layout, theta, st.x)
            info = (rows * pat.w[:, None]).T @ rows
            if layout.g_prior is not None:
                gi = layout.index[:, 2]
                info[gi, gi] += 1.0 / layout.g_prior[1] ** 2
        try:
            return st, np.linalg.inv(info)
        except np.linalg.LinAlgError:
            return st, np.linalg.pinv(info)

    @takes_tables(X=SCORE_MATRIX)
    def fit(self, X: Any, y: Any = None) -> IRT:
        """Estimate the item parameters from a score table ``X`` (a path or a DataFrame, long or
        wide, or a students x items 0/1/NaN array; NaN = not administered, kept out of the
        likelihood).  ``y`` is ignored (scikit-learn's API)."""
        self._check_params()
        df = as_response_matrix(X)
        if self.blas_threads is None:
            return self._fit(df)
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=int(self.blas_threads), user_api="blas"):
            return self._fit(df)

    def _fit(self, df: pd.DataFrame) -> IRT:
        Xv = df.to_numpy(dtype=float)
        pat = E.Patterns.from_matrix(Xv)
        layout = E.Layout.build(
            self.model, Xv.shape[1], rasch_scale=self.rasch_scale, g_prior=self.g_prior
        )
        theta = E.quadrature(int(self.quadpts), float(self.theta_lim))
        st = self._fit_x(pat, layout, theta)
        st, cov = self._covariance(pat, layout, theta, st)
        items = _item_table(layout, st.x, cov, df.columns)
        m2_stat: dict = {}
        if self.fit_stats:
            items = items.join(s_x2(Xv, layout, theta, st.x).set_index(items.index))
            m2_stat = m2(Xv, layout, theta, st.x)
        persons = person_scores(pat, layout, theta, st.x, df.index)
        rel = {
            "EAP": empirical_reliability(persons["EAP"].to_numpy(), persons["SE_EAP"].to_numpy()),
            "MAP": empirical_reliability(persons["MAP"].to_numpy(), persons["SE_MAP"].to_numpy()),
        }
        var = float(np.exp(st.x[-1])) if layout.var_free else 1.0
        var_se = float(var * np.sqrt(cov[-1, -1])) if (layout.var_free and cov is not None) else 0.0
        loglik = E.value_and_grad(pat, layout, theta, st.x)[0]
        if layout.g_prior is not None:  # report the log-likelihood, not the log-posterior
            loglik -= E._log_prior(layout, layout.unpack(st.x)[0])[0]
        self.results_ = IRTResults(
            self.model, items, persons, loglik, layout.n_free, int(pat.n), var, var_se, m2_stat,
            rel, self.se, self.rasch_scale, self.g_prior, st.converged, theta, layout, st.x,
        )  # fmt: skip
        self.items_ = items
        self.persons_ = persons
        self.loglik_ = loglik
        self.aic_ = self.results_.aic
        self.bic_ = self.results_.bic
        self.n_params_ = layout.n_free
        self.latent_variance_ = var
        self.vcov_ = cov
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "results_"):
            raise NotFittedError("this IRT model is not fitted yet; call fit() first")

    def _patterns(self, X: Any) -> tuple[pd.DataFrame, E.Patterns]:
        self._check_fitted()
        df = as_response_matrix(X, for_fit=False)
        if list(df.columns) != list(self.items_.index):
            raise InputError("responses: the items (columns) differ from the fitted model's")
        return df, E.Patterns.from_matrix(df.to_numpy(dtype=float))

    @takes_tables(X=SCORE_MATRIX)
    def transform(self, X: Any) -> pd.DataFrame:
        """EAP and MAP person scores (with SEs) of ``X`` under the fitted item parameters."""
        df, pat = self._patterns(X)
        r = self.results_
        return person_scores(pat, r._layout, r.theta, r._x, df.index)

    @takes_tables(X=SCORE_MATRIX)
    def score(self, X: Any, y: Any = None) -> float:
        """Mean marginal log-likelihood per person of ``X`` (higher is better)."""
        _, pat = self._patterns(X)
        r = self.results_
        return E.value_and_grad(pat, r._layout, r.theta, r._x)[0] / pat.n

    def summary(self) -> str:
        self._check_fitted()
        return self.results_.summary()

    def to_frame(self) -> pd.DataFrame:
        """The fitted item table (:meth:`IRTResults.to_frame`)."""
        self._check_fitted()
        return self.results_.to_frame()

    def results(self) -> dict[str, Any]:
        """``results.json`` of ``items irt`` (:meth:`IRTResults.results`)."""
        self._check_fitted()
        return self.results_.results()

    def save(self, folder: Any, *, overwrite: bool = False) -> Any:
        """The run folder ``items irt`` writes (:meth:`IRTResults.save`)."""
        self._check_fitted()
        return self.results_.save(folder, overwrite=overwrite)

    def __repr__(self) -> str:
        return f"IRT(model={self.model!r}, rasch_scale={self.rasch_scale!r}, se={self.se!r})"
