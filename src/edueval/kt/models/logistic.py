"""Logistic knowledge-component models reported beside BKT: AFM and PFA.

Both are logistic regressions on a sparse design built from the same response tables as
:class:`~edueval.kt.bkt.model.BKT` (columns as in :class:`~edueval.kt.data.Columns`; one knowledge
component (KC) per row, the skill column).  Practice counts follow the ordering rules of
:func:`~edueval.kt.data.pack`: the ``order`` column, or file order, within student x skill.

- **AFM**, the Additive Factor Model (Cen, Koedinger & Junker 2006; DataShop's "Model Values"):
  ``logit P(correct) = theta_student + beta_k + gamma_k * T``, with ``T`` the student's prior
  opportunities on KC ``k``.  As in DataShop, the student terms are penalised towards 0 (an L2
  penalty ``penalty / 2 * sum theta^2``, i.e. a N(0, 1 / penalty) prior on proficiency, a
  random-effect reading; default ``penalty = 1.0``) and the learning slopes are kept >= 0
  (``nonnegative_slopes``).  With ``penalty = 0`` the model is identified by fixing the first
  student's (in sorted name order) proficiency at 0.
- **PFA**, Performance Factors Analysis (Pavlik, Cen & Koedinger 2009):
  ``logit P(correct) = beta_k + gamma_k * S + rho_k * F`` with ``S`` and ``F`` the student's
  prior successes and failures on KC ``k``; no student term.  ``penalty`` (default 0) is an L2
  penalty on every coefficient (scikit-learn's ``LogisticRegression(C=1/penalty)`` without
  intercept gives the same fit).

The penalised log-likelihood is maximised with scipy's L-BFGS-B (the solver behind
scikit-learn's ``lbfgs``) on a ``scipy.sparse`` design with its exact gradient: scikit-learn
penalises every coefficient alike and cannot leave the KC terms free as DataShop does.

Predictions for a student the model has not seen use proficiency 0 (the population mean under
the penalty); a KC the model has not seen is an error.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import scipy.optimize
import scipy.sparse as sp
from scipy.special import expit
from threadpoolctl import threadpool_limits

from ...io import InputError
from ..bkt.model import BaseEstimator, NotFittedError, check_choice, check_range
from ..data import Columns, Sequences, pack
from . import _logistic_kernels as LK

__all__ = ["AFM", "PFA", "practice_counts"]

#: Gradient tolerance of L-BFGS-B (largest projected gradient component).
GTOL = 1e-9
POLISH = True
XTOL = 1e-8
NEWTON_STEPS = 2


@dataclass
class Counts:
    """Per packed response: codes of its student and KC and the student's prior practice on the
    KC.  ``student[i]`` indexes ``student_names``, ``skill[i]`` indexes ``skill_names``."""

    student: np.ndarray
    skill: np.ndarray
    opportunities: np.ndarray  # prior opportunities (0 at the first)
    successes: np.ndarray  # prior correct responses
    failures: np.ndarray  # prior incorrect responses
    student_names: np.ndarray  # sorted
    skill_names: np.ndarray  # sorted

    def take(self, rows: np.ndarray) -> Counts:
        per_row = ("student", "skill", "opportunities", "successes", "failures")
        return replace(self, **{name: getattr(self, name)[rows] for name in per_row})


def practice_counts(seqs: Sequences) -> Counts:
    """Prior opportunities, successes and failures of every response, in packed order."""
    lengths = np.diff(seqs.starts)
    first = np.repeat(seqs.starts[:-1], lengths)
    cum = np.concatenate([[0], np.cumsum(seqs.obs, dtype=np.int64)])
    successes = cum[:-1] - cum[first]
    opportunities = seqs.opportunity - 1
    student_codes, student_names = pd.factorize(seqs.students, sort=True)
    return Counts(
        student=np.repeat(student_codes, lengths),
        skill=np.repeat(seqs.seq_skill, lengths),
        opportunities=opportunities.astype(float),
        successes=successes.astype(float),
        failures=(opportunities - successes).astype(float),
        student_names=np.asarray(student_names, dtype=str),
        skill_names=np.asarray(seqs.skills, dtype=str),
    )


def _codes(names: np.ndarray, vocabulary: np.ndarray) -> np.ndarray:
    """Position of each name in the sorted ``vocabulary``; -1 where absent."""
    pos = np.searchsorted(vocabulary, names)
    pos = np.minimum(pos, len(vocabulary) - 1)
    return np.where(vocabulary[pos] == names, pos, -1)


def _sparse(n: int, blocks: list[tuple[np.ndarray, np.ndarray, int]]) -> sp.csr_matrix:
    """A CSR design from column blocks ``(column index per row, value per row, width)``; rows
    whose index is -1 get no entry in that block."""
    offsets = np.cumsum([0] + [width for _, _, width in blocks])
    cols = np.stack([index + off for (index, _, _), off in zip(blocks, offsets, strict=False)], 1)
    vals = np.stack([value for _, value, _ in blocks], 1).astype(float)
    present = np.stack([index >= 0 for index, _, _ in blocks], 1)
    indptr = np.concatenate([[0], np.cumsum(present.sum(axis=1))])
    return sp.csr_matrix((vals[present], cols[present], indptr), shape=(n, offsets[-1]))


class _Loss:
    """The penalised negative log-likelihood of aggregated rows, its gradient and Hessian-vector
    products (compiled, :mod:`._logistic_kernels`), for scipy's optimisers."""

    def __init__(self, X: sp.csr_matrix, y: np.ndarray, n: np.ndarray, lam: np.ndarray):
        self.csr = LK.csr_arrays(X)
        self.y = np.ascontiguousarray(y, dtype=float)
        self.n = np.ascontiguousarray(n, dtype=float)
        self.lam = np.ascontiguousarray(lam, dtype=float)
        self.scale, self.shift = 1.0, 0.0
        self._weights_at: np.ndarray | None = None  # the point of the cached Hessian weights

    def __call__(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        grad = np.empty_like(w)
        val = LK.loss_grad(*self.csr, self.y, self.n, w, self.lam, grad)
        return (val - self.shift) * self.scale, grad * self.scale

    def hessp(self, w: np.ndarray, v: np.ndarray) -> np.ndarray:
        if self._weights_at is None or not np.array_equal(self._weights_at, w):
            self._weights = np.empty(len(self.n))
            LK.hess_weights(*self.csr, self.n, w, self._weights)
            self._weights_at = w.copy()
        out = np.empty_like(w)
        LK.hess_vec(*self.csr, self._weights, self.lam, np.ascontiguousarray(v), out)
        return out * self.scale


def _polish(loss: _Loss, w: np.ndarray, bounds: list) -> np.ndarray:
    """Newton-CG (scipy) on the coefficients not held at a bound, from L-BFGS-B's answer:
    L-BFGS-B stops on a relative reduction of the loss, some 1e-6 short of the optimum on
    ill-conditioned designs; Newton steps with the exact Hessian-vector product close that."""
    free = ~np.array([lo is not None and w[j] <= lo for j, (lo, _) in enumerate(bounds)])
    base = w.copy()
    loss.scale, loss.shift = 1.0, 0.0
    loss.shift = loss(w)[0]  # near the optimum the loss is then ~0: absolute, not relative

    def full(v):
        out = base.copy()
        out[free] = v
        return out

    def fun(v):
        val, grad = loss(full(v))
        return val, grad[free]

    def hessp(v, d):
        step = np.zeros_like(base)
        step[free] = d
        return loss.hessp(full(v), step)[free]

    res = scipy.optimize.minimize(
        fun,
        base[free],
        jac=True,
        hessp=hessp,
        method="Newton-CG",
        options={"xtol": XTOL, "maxiter": NEWTON_STEPS},
    )
    lows = np.array([-np.inf if lo is None else lo for lo, _ in bounds])
    return np.maximum(full(res.x), lows)


def fit_logistic(
    X: sp.csr_matrix, y: np.ndarray, lam: np.ndarray, bounds: list, n: np.ndarray | None = None
) -> np.ndarray:
    """Coefficients maximising sum log-likelihood - sum lam_j w_j^2 / 2 within ``bounds``
    (lower bounds of 0 only, or a coefficient fixed at 0).  Row ``i`` of ``X`` stands for
    ``n[i]`` responses (default 1) with ``y[i]`` correct.

    L-BFGS-B then a Newton polish, on columns scaled to a unit Hessian diagonal at the start
    (Jacobi preconditioning: a student's column has a few hundred responses, a KC's tens of
    thousands, an opportunity count runs to the hundreds; unscaled, L-BFGS needs ~5x the
    iterations).  Scaling by positive factors keeps the bounds as they are.
    """
    n = np.ones(X.shape[0]) if n is None else np.asarray(n, dtype=float)
    diag = (X.multiply(X)).T @ n * 0.25 + lam
    d = 1.0 / np.sqrt(np.where(diag > 0, diag, 1.0))
    Xs = (X @ sp.diags(d)).tocsr()
    loss = _Loss(Xs, y, n, lam * d * d)
    loss.scale = 1.0 / float(n.sum())
    with threadpool_limits(1, user_api="blas"):  # L-BFGS-B's BLAS calls are tiny: threads
        res = scipy.optimize.minimize(  # only add overhead (100x on a busy machine)
            loss,
            np.zeros(X.shape[1]),
            jac=True,
            method="L-BFGS-B",
            bounds=bounds,
            options={"maxiter": 20000, "maxfun": 40000, "gtol": GTOL, "ftol": 1e-13},
        )
        return (_polish(loss, res.x, bounds) if POLISH else res.x) * d


def aggregate(keys: list[np.ndarray], y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows with equal ``keys`` merged: (a row of each group, its size, its number correct),
    groups in lexicographic order of the keys."""
    order = _key_order(keys)
    new = np.ones(len(order), dtype=bool)
    same = np.ones(len(order) - 1, dtype=bool)
    for k in keys:
        ks = k[order]
        same &= ks[1:] == ks[:-1]
    new[1:] = ~same
    group = np.cumsum(new) - 1
    first = order[new]
    size = np.bincount(group).astype(float)
    correct = np.bincount(group, weights=y[order].astype(float))
    return first, size, correct


def _key_order(keys: list[np.ndarray]) -> np.ndarray:
    """The stable lexicographic order of ``keys``; small non-negative integer keys (codes and
    practice counts) are packed into one int64 and sorted once, several times faster than
    ``np.lexsort`` on a million rows."""
    ints = [np.asarray(k) for k in keys]
    span = 1.0
    for k in ints:
        span *= float(k.max()) + 1 if len(k) else 1.0
    integral = all(len(k) == 0 or (k.min() >= 0 and np.all(k == np.floor(k))) for k in ints)
    if not integral or span >= 2.0**62:
        return np.lexsort(keys[::-1])
    packed = np.zeros(len(ints[0]), dtype=np.int64)
    for k in ints:
        packed = packed * (int(k.max()) + 1 if len(k) else 1) + k.astype(np.int64)
    return np.argsort(packed, kind="stable")


class _KCLogistic(BaseEstimator):
    """Shared fit / predict / score of the two models (scikit-learn estimators, as
    :class:`~edueval.kt.bkt.model.BKT`: ``X`` is the response table, ``y`` is ignored,
    :meth:`score` is the mean log-likelihood per response); subclasses define the design."""

    penalty: float
    columns: Columns | None

    def _check_params(self) -> None:
        """Refuse bad parameters (``ValueError`` naming ``penalty=``...), at ``fit``."""
        check_range("penalty", self.penalty, 0, None, open_low=False)
        if self.columns is not None and not isinstance(self.columns, Columns):
            raise ValueError(f"columns= must be a Columns or None, got {self.columns!r}")

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True  # student and skill names; X is a response DataFrame
        tags.input_tags.categorical = True
        tags.target_tags.required = False  # y is ignored: the correct column is the target
        return tags

    def _counts(self, data: pd.DataFrame) -> tuple[Sequences, Counts]:
        seqs, _ = pack(data, self.columns)
        return seqs, practice_counts(seqs)

    def fit(self, X: pd.DataFrame, y: Any = None):
        """Estimate the coefficients from a response table ``X`` (``y`` is ignored: the
        ``correct`` column is the target; it is accepted for scikit-learn's API)."""
        self._check_params()
        seqs, c = self._counts(X)
        self.skills_ = c.skill_names
        self._learn_vocabulary(c)
        key = self._row_key(c)
        lam, bounds = self._penalty_and_bounds()
        if key is None:
            self.coef_ = fit_logistic(self._design(c), seqs.obs, lam, bounds)
        else:
            rows, n, y = aggregate(key, seqs.obs)
            self.coef_ = fit_logistic(self._design(c.take(rows)), y, lam, bounds, n)
        self.n_params_ = int(sum(lo is None or lo != hi for lo, hi in bounds))
        return self

    def _learn_vocabulary(self, c: Counts) -> None:
        """Remember the names behind the design's columns (students for AFM)."""

    def _row_key(self, c: Counts) -> list[np.ndarray] | None:
        """Arrays that together determine a response's row of the design: responses with
        equal keys are fitted as one binomial row (exactly the same likelihood, fewer rows).
        None when (nearly) every response has a row of its own."""
        return None

    def _check_fitted(self) -> None:
        if not hasattr(self, "coef_"):
            raise NotFittedError(f"this {type(self).__name__} model is not fitted yet; call fit()")

    def _kc_codes(self, c: Counts) -> np.ndarray:
        known = _codes(c.skill_names, self.skills_)
        if (known < 0).any():
            raise InputError(
                f"skill {str(c.skill_names[np.flatnonzero(known < 0)[0]])!r} was not in the data the "
                f"{type(self).__name__} model was fitted on"
            )
        return known[c.skill]

    def _packed_proba(self, data: pd.DataFrame) -> tuple[Sequences, np.ndarray]:
        self._check_fitted()
        seqs, c = self._counts(data)
        return seqs, expit(self._design(c) @ self.coef_)

    def predict(self, data: pd.DataFrame) -> pd.DataFrame:
        """``data`` (same row order) with ``p_correct`` added."""
        seqs, p = self._packed_proba(data)
        out = data.copy()
        out["p_correct"] = seqs.unpack(p)
        return out

    def predict_proba(self, data: pd.DataFrame) -> np.ndarray:
        """P(correct) for every row of ``data``, in row order."""
        seqs, p = self._packed_proba(data)
        return seqs.unpack(p)

    def score(self, X: pd.DataFrame, y: Any = None) -> float:
        """Mean log-likelihood per response of ``X`` under the fitted coefficients (higher is
        better; what ``GridSearchCV`` maximises when given no scorer).  ``y`` is ignored."""
        return self.log_likelihood(X) / len(X)

    def log_likelihood(self, data: pd.DataFrame) -> float:
        """Total log-likelihood of ``data`` under the fitted coefficients."""
        seqs, p = self._packed_proba(data)
        y = seqs.obs.astype(bool)
        return float(np.sum(np.log(np.where(y, p, 1.0 - p))))


class AFM(_KCLogistic):
    """Additive Factor Model (see the module docstring).

    Attributes after ``fit``: ``students_`` (sorted names), ``skills_``, ``theta_`` (Series of
    proficiencies), ``params_`` (DataFrame per skill: ``easiness``, ``slope``), ``coef_`` (the
    raw vector: students, then easiness, then slopes) and ``n_params_``.
    """

    def __init__(
        self,
        *,
        penalty: float = 1.0,
        nonnegative_slopes: bool = True,
        columns: Columns | None = None,
    ) -> None:
        self.penalty = penalty
        self.nonnegative_slopes = nonnegative_slopes
        self.columns = columns

    def _check_params(self) -> None:
        super()._check_params()
        check_choice("nonnegative_slopes", self.nonnegative_slopes, "bool")

    def _learn_vocabulary(self, c: Counts) -> None:
        self.students_ = c.student_names

    def _design(self, c: Counts) -> sp.csr_matrix:
        n, ns, nk = len(c.skill), len(self.students_), len(self.skills_)
        k = self._kc_codes(c)
        s = _codes(c.student_names, self.students_)[c.student]  # -1: unseen, theta 0
        return _sparse(n, [(s, np.ones(n), ns), (k, np.ones(n), nk), (k, c.opportunities, nk)])

    def _penalty_and_bounds(self) -> tuple[np.ndarray, list]:
        ns, nk = len(self.students_), len(self.skills_)
        lam = np.concatenate([np.full(ns, float(self.penalty)), np.zeros(2 * nk)])
        slope = (0.0, None) if self.nonnegative_slopes else (None, None)
        bounds: list[tuple[float | None, float | None]] = [(None, None)] * (ns + nk) + [slope] * nk
        if self.penalty == 0:
            bounds[0] = (0.0, 0.0)  # identified: first student's proficiency is 0
        return lam, bounds

    @property
    def theta_(self) -> pd.Series:
        self._check_fitted()
        return pd.Series(self.coef_[: len(self.students_)], index=self.students_, name="theta")

    @property
    def params_(self) -> pd.DataFrame:
        self._check_fitted()
        ns, nk = len(self.students_), len(self.skills_)
        return pd.DataFrame(
            {"easiness": self.coef_[ns : ns + nk], "slope": self.coef_[ns + nk :]},
            index=pd.Index(self.skills_, name="skill"),
        )

    def __repr__(self) -> str:
        return f"AFM(penalty={self.penalty}, nonnegative_slopes={self.nonnegative_slopes})"


class PFA(_KCLogistic):
    """Performance Factors Analysis (see the module docstring).

    Attributes after ``fit``: ``skills_``, ``params_`` (DataFrame per skill: ``easiness``,
    ``success``, ``failure``), ``coef_`` and ``n_params_`` (3 per skill).
    """

    def __init__(self, *, penalty: float = 0.0, columns: Columns | None = None) -> None:
        self.penalty = penalty
        self.columns = columns

    def _design(self, c: Counts) -> sp.csr_matrix:
        n, nk = len(c.skill), len(self.skills_)
        k = self._kc_codes(c)
        return _sparse(n, [(k, np.ones(n), nk), (k, c.successes, nk), (k, c.failures, nk)])

    def _row_key(self, c: Counts) -> list[np.ndarray]:
        return [c.skill, c.successes, c.failures]

    def _penalty_and_bounds(self) -> tuple[np.ndarray, list]:
        nk = len(self.skills_)
        return np.full(3 * nk, float(self.penalty)), [(None, None)] * (3 * nk)

    @property
    def params_(self) -> pd.DataFrame:
        self._check_fitted()
        nk = len(self.skills_)
        w = self.coef_.reshape(3, nk)
        return pd.DataFrame(
            {"easiness": w[0], "success": w[1], "failure": w[2]},
            index=pd.Index(self.skills_, name="skill"),
        )

    def __repr__(self) -> str:
        return f"PFA(penalty={self.penalty})"
