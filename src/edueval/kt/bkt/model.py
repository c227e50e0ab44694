"""Bayesian Knowledge Tracing: simulation, forward filtering and maximum-likelihood fitting.

The model (Corbett & Anderson 1995; notation of Pardos & Yudelson, Sec. 2) is a two-state hidden
Markov model per skill: the student starts in the known state with probability ``prior``; answers
correctly with probability ``1 - slip`` when the skill is known and ``guess`` when it is not; after
each opportunity moves from unknown to known with probability ``learn`` and, optionally, from known
to unknown with probability ``forget``.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

try:  # the estimator protocol of scikit-learn (clone, get_params, set_params, tags)
    from sklearn.base import BaseEstimator
    from sklearn.exceptions import NotFittedError as _SklearnNotFittedError
except ImportError:  # pragma: no cover - scikit-learn not installed: the same protocol, minimal
    import inspect

    class _SklearnNotFittedError(ValueError, AttributeError):  # type: ignore[no-redef]
        """Stands in for ``sklearn.exceptions.NotFittedError``."""

    class BaseEstimator:  # type: ignore[no-redef]
        """``get_params`` / ``set_params`` as scikit-learn's, for use without it."""

        @classmethod
        def _get_param_names(cls) -> list[str]:
            params = inspect.signature(cls.__init__).parameters.values()
            return sorted(p.name for p in params if p.name != "self" and p.kind != p.VAR_KEYWORD)

        def get_params(self, deep: bool = True) -> dict[str, Any]:
            return {name: getattr(self, name) for name in self._get_param_names()}

        def set_params(self, **params: Any) -> Any:
            valid = self._get_param_names()
            for name, value in params.items():
                if name not in valid:
                    raise ValueError(f"invalid parameter {name!r} for estimator {self!r}")
                setattr(self, name, value)
            return self


from ...defaults import SEED
from ...results import RunResults
from ...seeding import rng as make_rng
from ...tables import takes_tables
from ..data import RESPONSES, Columns, Sequences, pack, read_responses, skill_sizes, time_major
from . import _kernels as K
from .params import PARAM_NAMES, BKTParams, params_frame, params_matrix

__all__ = [
    "BKT",
    "FitResult",
    "NotFittedError",
    "forward",
    "forward_sequences",
    "simulate",
    "simulate_arrays",
]


class NotFittedError(_SklearnNotFittedError, RuntimeError):
    """A model used (``predict``, ``score``, ``summary``...) before ``fit``.

    A :class:`sklearn.exceptions.NotFittedError` (so a ``ValueError`` and an ``AttributeError``,
    what scikit-learn's tools catch) and still a :class:`RuntimeError`, as these models raised
    before."""


def check_choice(name: str, value: Any, kind: str) -> None:
    """Refuse a parameter that is not of ``kind``: ``"bool"``, ``"int"`` (not a bool),
    ``"real"`` (finite, not a bool), ``"str"`` or ``"str|None"``; messages name ``name=``."""
    ok = {
        "bool": isinstance(value, (bool, np.bool_)),
        "int": isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)),
        "real": isinstance(value, numbers.Real)
        and not isinstance(value, (bool, np.bool_))
        and bool(np.isfinite(float(value))),
        "str|None": value is None or (isinstance(value, str) and value != ""),
    }[kind]
    if not ok:
        what = {"bool": "True or False", "int": "an integer", "real": "a finite number",
                "str|None": "a column name or None"}[kind]  # fmt: skip
        raise ValueError(f"{name}= must be {what}, got {_shown(value)}")


def check_range(name: str, value: Any, low: float, high: float | None, *, open_low: bool) -> None:
    """Refuse a number outside ``(low, high]`` (``open_low``) or ``[low, high]``; ``high`` None
    is no upper bound.  Messages name the Python parameter (``guess_max=``)."""
    check_choice(name, value, "real")
    below = value <= low if open_low else value < low
    if below or (high is not None and value > high):
        left = "(" if open_low else "["
        right = "" if high is None else f", {high:g}]"
        shape = f"in {left}{low:g}{right}" if high is not None else (
            f"> {low:g}" if open_low else f">= {low:g}")  # fmt: skip
        raise ValueError(f"{name}= must be {shape}, got {_shown(value)}")


def _shown(value: Any) -> str:
    """A value as a message shows it: text quoted, numbers as written (``2.0``, not
    ``np.float64(2.0)``)."""
    return repr(value) if isinstance(value, str) or value is None else str(value)


def simulate_arrays(
    P: np.ndarray, n_students: int, n_opportunities: int, gen: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Sample the BKT generative model for parameter rows ``P`` (n_skills, 5).

    Returns ``(known, correct)``, int8 arrays of shape (n_skills, n_students, n_opportunities).
    """
    if n_students < 1 or n_opportunities < 1:
        raise ValueError("n_students and n_opportunities must be at least 1")
    n_skills = P.shape[0]
    shape = (n_skills, n_students, n_opportunities)
    u_init = gen.random(shape[:2])
    u_resp = gen.random(shape)
    u_move = gen.random(shape)
    known = np.empty(shape, dtype=np.int8)
    correct = np.empty(shape, dtype=np.int8)
    prior, learn, guess, slip, forget = (P[:, j, None] for j in range(5))
    state = u_init < prior
    for t in range(n_opportunities):
        known[:, :, t] = state
        correct[:, :, t] = u_resp[:, :, t] < np.where(state, 1.0 - slip, guess)
        state = u_move[:, :, t] < np.where(state, 1.0 - forget, learn)
    return known, correct


def simulate(
    params: pd.DataFrame | Mapping[str, BKTParams],
    n_students: int,
    n_opportunities: int,
    seed: int | None = SEED,
) -> pd.DataFrame:
    """Sample students from the BKT generative model (Pardos & Yudelson, Sec. 5.1).

    For every skill and student: the state at opportunity 1 is known with probability ``prior``;
    the response is correct with probability ``1 - slip`` if known and ``guess`` if not; then the
    state moves unknown -> known with probability ``learn`` and known -> unknown with ``forget``.

    Returns a long table ``student, skill, order, correct, known`` ordered by skill, student, order.
    """
    pf = params_frame(params)
    P = pf[list(PARAM_NAMES)].to_numpy(dtype=float)
    known, correct = simulate_arrays(P, n_students, n_opportunities, make_rng(seed))
    n_skills = P.shape[0]
    width = len(str(max(n_students - 1, 0)))
    students = np.array([f"s{i:0{width}d}" for i in range(n_students)], dtype=object)
    return pd.DataFrame(
        {
            "student": np.tile(np.repeat(students, n_opportunities), n_skills),
            "skill": np.repeat(pf.index.to_numpy(dtype=object), n_students * n_opportunities),
            "order": np.tile(np.arange(1, n_opportunities + 1), n_skills * n_students),
            "correct": correct.reshape(-1),
            "known": known.reshape(-1),
        }
    )


def forward_sequences(seqs: Sequences, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Forward filter packed sequences; ``P`` has one parameter row per skill of ``seqs``.

    Returns ``(p_correct, p_known)`` in packed order: ``p_correct[i]`` is P(correct) predicted
    before response ``i`` is seen, ``p_known[i]`` is P(known) after it is seen.
    """
    p_correct = np.empty(seqs.n_responses)
    p_known = np.empty(seqs.n_responses)
    K.forward_per_sequence(
        seqs.obs,
        seqs.starts,
        np.ascontiguousarray(P, dtype=float),
        seqs.seq_skill,
        p_correct,
        p_known,
    )
    return p_correct, p_known


@takes_tables(data=RESPONSES)
def forward(
    data: pd.DataFrame,
    params: pd.DataFrame | Mapping[str, BKTParams],
    columns: Columns | None = None,
    *,
    params_source: str | None = None,
) -> pd.DataFrame:
    """Predict every response with known parameters (Pardos & Yudelson, Sec. 5.2).

    Returns a copy of ``data`` (same row order) with ``p_correct`` (probability of a correct answer
    predicted before the response is revealed) and ``p_known`` (posterior probability that the
    skill is known after the response is observed) added.
    """
    seqs, _ = pack(data, columns)
    P = params_matrix(params_frame(params), seqs.skills, source=params_source)
    pc, pk = forward_sequences(seqs, P)
    out = data.copy()
    out["p_correct"] = seqs.unpack(pc)
    out["p_known"] = seqs.unpack(pk)
    return out


@dataclass
class FitResult:
    """Per-skill outcome of :meth:`BKT.fit` (also available as the estimator's attributes)."""

    params: pd.DataFrame  # skill -> prior, learn, guess, slip, forget
    log_likelihood: pd.Series
    n_iter: pd.Series
    converged: pd.Series
    restarts: pd.DataFrame  # every restart: skill, restart, params, loglik, iterations


class BKT(RunResults, BaseEstimator):
    """Bayesian Knowledge Tracing fitted by EM (Baum-Welch), a scikit-learn estimator.

    ``clone``, ``get_params`` / ``set_params`` and model selection (``GridSearchCV`` with
    ``GroupKFold`` over students) work as for any scikit-learn estimator: ``X`` is the response
    table, ``y`` is ignored (the ``correct`` column is the target), :meth:`score` is the mean
    log-likelihood per response (higher is better).  The parameters are stored as given and
    checked by :meth:`fit` (a ``ValueError`` naming the parameter, ``guess_max=``).

    Parameters
    ----------
    forgets : also estimate ``forget`` (otherwise it is fixed at 0, classic BKT).
    n_restarts : EM runs per skill; the run with the highest log-likelihood is kept.  The first
        starts from a fixed neutral point, the second and third (with three or more) near
        guess = 0 and near slip = 0, the others from random points (seeded).
    max_iter : E-steps per run at most.
    tol : stop when an iteration raises the log-likelihood by less than ``tol * |loglik|``.
    accelerate : SQUAREM extrapolation of EM (Varadhan & Roland 2008); same fixed points, far
        fewer iterations on the flat likelihood ridges BKT is known for.
    guess_max, slip_max : upper bounds (strict in spirit: the default 0.5 keeps the "known" state
        the one with more correct answers, which removes the label-switching ambiguity).
    seed : seed of the random restarts.
    multigs, multilearn, multiprior, multipair, fixed, init : the BKT variants (guess/slip per
        COLUMN value, learn/forget per COLUMN value or per ordered pair of consecutive values, a
        prior per first-response class or per COLUMN value; long tables of held parameters and
        of starting values).  With any of them set, fitting and prediction go through
        :mod:`edueval.kt.bkt.variants` and ``params_`` is a long table ``skill, parameter, group,
        value, free``; without, the classic path below is used unchanged.

    Examples
    --------
    >>> model = BKT(n_restarts=5, seed=1).fit(df)           # doctest: +SKIP
    >>> model.params_                                        # doctest: +SKIP
    >>> model.predict(df)[["p_correct", "p_known"]]          # doctest: +SKIP
    """

    _EPS = 1e-9
    LOOSE_TOL = 1e-6
    BOUNDARY_STARTS = True  # see _initial_points; benchmarks/kt_restarts.py turns it off
    # The restarts of a skill stream its data together (``_kernels.em_together``); True runs
    # each restart's EM on its own (``_kernels.em_jobs``, the path before issue 22), the
    # reference of tests/kt/test_em_restarts_together.py and benchmarks/kt_em_streaming.py.
    _PER_RESTART = False
    # Skills of at least this many responses stream together; smaller ones stay in cache through
    # every restart anyway, and there the per-restart kernel is as fast or faster (on 2 threads a
    # lone 100 k-response skill took 11.5 ns per response per E-step per restart, 15.9 streamed:
    # benchmarks/RESULTS.md, "EM restarts streaming together"), and gives today's bits exactly.
    _STREAM_MIN_RESPONSES = 1 << 20

    def __init__(
        self,
        *,
        forgets: bool = False,
        n_restarts: int = 5,
        max_iter: int = 500,
        tol: float = 1e-9,
        guess_max: float = 0.5,
        slip_max: float = 0.5,
        seed: int | None = SEED,
        accelerate: bool = True,
        columns: Columns | None = None,
        multigs: str | None = None,
        multilearn: str | None = None,
        multiprior: bool | str = False,
        multipair: str | None = None,
        fixed: pd.DataFrame | None = None,
        init: pd.DataFrame | None = None,
    ) -> None:
        self.forgets = forgets
        self.n_restarts = n_restarts
        self.max_iter = max_iter
        self.tol = tol
        self.guess_max = guess_max
        self.slip_max = slip_max
        self.seed = seed
        self.accelerate = accelerate
        self.columns = columns
        self.multigs = multigs
        self.multilearn = multilearn
        self.multiprior = multiprior
        self.multipair = multipair
        self.fixed = fixed
        self.init = init

    # -- fitting -------------------------------------------------------------------------------
    def _bounds(self) -> np.ndarray:
        e = self._EPS
        upper_forget = 1 - e if self.forgets else 0.0
        return np.array(
            [
                [e, 1 - e],
                [e, 1 - e],
                [e, self.guess_max - e],
                [e, self.slip_max - e],
                [0.0, upper_forget],
            ]
        )

    def _initial_points(self, skills) -> np.ndarray:
        """(n_skills, n_restarts, 5) starting points: a neutral one, one near guess = 0 and one
        near slip = 0 (with three restarts or more), then random ones.

        Maximum-likelihood BKT parameters often lie on the boundary of guess or slip, and EM
        started inside seldom reaches those optima: on 400 ASSISTments-style skills, five
        random-start restarts missed the best of 200 by more than 1e-5 relative in 1-3 skills
        (up to 7.7e-4), these starts in none (benchmarks/RESULTS.md).

        A skill's random starts come from the seed and the skill's name alone
        (:func:`edueval.seeding.keyed_rng`), so its fit does not depend on which other skills
        are in the file or in the same partition of a dataset.
        """
        from ...seeding import keyed_rng

        n_skills = len(skills)
        inits = np.empty((n_skills, self.n_restarts, 5))
        f0 = 0.02 if self.forgets else 0.0
        inits[:, 0] = [0.3, 0.1, 0.2, 0.1, f0]
        if self.n_restarts > 1:
            lo, hi = self._start_ranges()
            for k, name in enumerate(skills):
                u = keyed_rng(self.seed, str(name)).random((self.n_restarts - 1, 5))
                inits[k, 1:] = lo + u * (hi - lo)
        if self.BOUNDARY_STARTS and self.n_restarts >= 3:
            inits[:, 1] = [0.5, 0.2, 0.02, 0.2, f0]
            inits[:, 2] = [0.5, 0.2, 0.2, 0.02, f0]
        return inits

    def _start_ranges(self) -> tuple[np.ndarray, np.ndarray]:
        """Ranges of the random starting points: prior, learn, guess, slip, forget."""
        forget_hi = 0.2 if self.forgets else 0.0
        lo = np.array([0.05, 0.01, 0.01, 0.01, 0.0])
        hi = np.array([0.95, 0.5, min(0.45, self.guess_max), min(0.45, self.slip_max), forget_hi])
        return lo, hi

    def _check_params(self) -> None:
        """Refuse parameters the command line refuses (``ValueError`` naming ``name=``)."""
        check_choice("forgets", self.forgets, "bool")
        check_choice("n_restarts", self.n_restarts, "int")
        check_range("n_restarts", self.n_restarts, 1, None, open_low=False)
        check_choice("max_iter", self.max_iter, "int")
        check_range("max_iter", self.max_iter, 1, None, open_low=False)
        check_range("tol", self.tol, 0, 1, open_low=True)
        check_range("guess_max", self.guess_max, 0, 1, open_low=True)
        check_range("slip_max", self.slip_max, 0, 1, open_low=True)
        if self.seed is not None:
            check_choice("seed", self.seed, "int")
        check_choice("accelerate", self.accelerate, "bool")
        if self.columns is not None and not isinstance(self.columns, Columns):
            raise ValueError(f"columns= must be a Columns or None, got {self.columns!r}")
        for name in ("multigs", "multilearn", "multipair"):
            check_choice(name, getattr(self, name), "str|None")
        if not isinstance(self.multiprior, (bool, np.bool_)):
            check_choice("multiprior", self.multiprior, "str|None")
        for name in ("fixed", "init"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, pd.DataFrame):
                raise ValueError(f"{name}= must be a DataFrame or None, got {type(value).__name__}")

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True  # student and skill names; X is a response DataFrame
        tags.input_tags.categorical = True
        tags.target_tags.required = False  # y is ignored: the correct column is the target
        return tags

    def fit_sequences(self, seqs: Sequences) -> FitResult:
        """Fit packed sequences (see :func:`edueval.kt.data.pack`)."""
        self._check_params()
        n_skills = len(seqs.skills)
        inits = self._initial_points(seqs.skills)
        tm = time_major(seqs)
        bounds = self._bounds()

        cum = np.concatenate([[0], np.cumsum(tm.bs, dtype=np.int64)])
        size = cum[tm.bs_lo + tm.T] - cum[tm.bs_lo]  # responses per skill

        def em_part(job_skill: np.ndarray, starts: np.ndarray, tol: float, stream: bool):
            args = (tm.obs, tm.obs_lo, tm.bs_lo, tm.T, tm.bs, job_skill, starts,
                    bool(self.forgets), bounds, int(self.max_iter), float(tol),
                    bool(self.accelerate))  # fmt: skip
            if stream:
                return K.em_together(*args, K.BLOCK_RESPONSES)
            return K.em_jobs(*args)

        def em(job_skill: np.ndarray, starts: np.ndarray, tol: float) -> np.ndarray:
            big = size[job_skill] >= self._STREAM_MIN_RESPONSES
            if self._PER_RESTART or not big.any():
                return em_part(job_skill, starts, tol, False)
            if big.all():
                return em_part(job_skill, starts, tol, True)
            out = np.empty((len(job_skill), 8))
            for part, stream in ((big, True), (~big, False)):  # masks keep jobs grouped by skill
                out[part] = em_part(job_skill[part], starts[part], tol, stream)
            return out

        # Stage 1: every restart to a loose tolerance; stage 2: the best restart of each skill on
        # to the requested tolerance.  Restarts that end in the same optimum are not polished
        # twice, and the log-likelihood gap between distinct optima is far above the loose
        # tolerance, so the choice of restart is the same as running all to the end.
        loose = max(self.tol, self.LOOSE_TOL) if self.n_restarts > 1 else self.tol
        job_skill = np.repeat(np.arange(n_skills, dtype=np.int64), self.n_restarts)
        out = em(job_skill, inits.reshape(-1, 5), loose).reshape(n_skills, self.n_restarts, 8)
        best = np.argmax(out[:, :, 5], axis=1)
        chosen = out[np.arange(n_skills), best].copy()
        if loose > self.tol:
            polished = em(np.arange(n_skills, dtype=np.int64), chosen[:, :5].copy(), self.tol)
            polished[:, 6] += chosen[:, 6]
            chosen = polished
            out[np.arange(n_skills), best] = polished
        index = pd.Index(seqs.skills.astype(str), name="skill")
        params = pd.DataFrame(chosen[:, :5], index=index, columns=list(PARAM_NAMES))
        restarts = pd.DataFrame(
            {
                "skill": np.repeat(index.to_numpy(), self.n_restarts),
                "restart": np.tile(np.arange(self.n_restarts), n_skills),
                **{name: out[:, :, j].reshape(-1) for j, name in enumerate(PARAM_NAMES)},
                "log_likelihood": out[:, :, 5].reshape(-1),
                "n_iter": out[:, :, 6].reshape(-1).astype(int),
                "converged": out[:, :, 7].reshape(-1).astype(bool),
            }
        )
        return FitResult(
            params=params,
            log_likelihood=pd.Series(chosen[:, 5], index=index, name="log_likelihood"),
            n_iter=pd.Series(chosen[:, 6].astype(int), index=index, name="n_iter"),
            converged=pd.Series(chosen[:, 7].astype(bool), index=index, name="converged"),
            restarts=restarts,
        )

    def variant_spec(self):
        """The variant asked for, or None for classic BKT (the seam into kt/bkt/variants.py)."""
        from .variants import VariantSpec

        spec = VariantSpec(
            forgets=self.forgets,
            multigs=self.multigs,
            multilearn=self.multilearn,
            multiprior=self.multiprior,
            multipair=self.multipair,
        )
        plain = spec == VariantSpec(forgets=self.forgets)
        return None if plain and self.fixed is None and self.init is None else spec

    _writer = "edueval.kt.commands.fit_output:save_fit"

    def _fit_variant(self, data: pd.DataFrame, spec) -> BKT:
        from .variants import VariantFit, fit_variant

        res = fit_variant(self, data, spec)
        self.result_: FitResult | VariantFit = res
        self.params_ = res.params
        self.log_likelihood_ = res.log_likelihood
        self.n_iter_ = res.n_iter
        self.converged_ = res.converged
        self.n_params_ = res.n_params
        return self

    @takes_tables(X=RESPONSES)
    def fit(self, X: pd.DataFrame, y: Any = None) -> BKT:
        """Estimate each skill's parameters from a response table ``X`` (``y`` is ignored: the
        ``correct`` column is the target; it is accepted for scikit-learn's API)."""
        self._check_params()
        df, seqs, cols = read_responses(X, self.columns)
        self.columns_ = cols  # the columns read (pyBKT's names resolved)
        self.skill_sizes_ = skill_sizes(df, cols)
        self.rows_left_out_: dict[str, int] = dict(df.attrs.get("dropped", {}))
        self.skipped_skills_: list[str] = []
        spec = self.variant_spec()
        if spec is not None:
            return self._fit_variant(df, spec)
        res = self.fit_sequences(seqs)
        self.result_ = res
        self.params_ = res.params
        self.log_likelihood_ = res.log_likelihood
        self.n_iter_ = res.n_iter
        self.converged_ = res.converged
        self.n_params_ = (5 if self.forgets else 4) * len(seqs.skills)  # total free parameters
        return self

    # -- prediction ----------------------------------------------------------------------------
    def _check_fitted(self) -> None:
        if not hasattr(self, "params_"):
            raise NotFittedError("this BKT model is not fitted yet; call fit() first")

    @takes_tables(data=RESPONSES)
    def predict(self, data: pd.DataFrame) -> pd.DataFrame:
        """``data`` with ``p_correct`` and ``p_known`` added (see :func:`forward`)."""
        self._check_fitted()
        if "parameter" in self.params_.columns:
            from .variants import forward_long

            return forward_long(data, self.params_, self.columns)
        return forward(data, self.params_, self.columns)

    @takes_tables(data=RESPONSES)
    def predict_proba(self, data: pd.DataFrame) -> np.ndarray:
        """P(correct) for every row of ``data``, in row order."""
        return self.predict(data)["p_correct"].to_numpy()

    @takes_tables(X=RESPONSES)
    def score(self, X: pd.DataFrame, y: Any = None) -> float:
        """Mean log-likelihood per response of ``X`` under the fitted parameters (higher is
        better; what ``GridSearchCV`` maximises when given no scorer).  ``y`` is ignored."""
        return self.log_likelihood(X) / len(X)

    @takes_tables(data=RESPONSES)
    def log_likelihood(self, data: pd.DataFrame) -> float:
        """Total log-likelihood of ``data`` under the fitted parameters."""
        self._check_fitted()
        if "parameter" in self.params_.columns:
            from .variants import score_long

            return float(score_long(data, self.params_, self.columns).sum())
        seqs, _ = pack(data, self.columns)
        P = params_matrix(self.params_, seqs.skills)
        total = 0.0
        for k in range(len(seqs.skills)):
            total += K.loglik(
                seqs.obs,
                seqs.starts,
                int(seqs.skill_starts[k]),
                int(seqs.skill_starts[k + 1]),
                P[k],
            )
        return total

    def fit_table(self) -> pd.DataFrame:
        """One row per skill (index ``skill``): the parameters (classic BKT; a variant's are in
        ``params_``, long) with ``log_likelihood``, ``n_iter``, ``converged``, ``n_responses``
        and ``n_students`` (and a variant's ``n_params``): ``kt fit``'s ``params.csv`` (a
        variant's ``skills.csv``)."""
        self._check_fitted()
        res = self.result_
        stats = {"log_likelihood": res.log_likelihood, "n_iter": res.n_iter,
                 "converged": res.converged}  # fmt: skip
        long = "parameter" in res.params.columns
        table = pd.DataFrame(stats) if long else res.params.assign(**stats)
        if hasattr(self, "skill_sizes_"):
            table = table.join(self.skill_sizes_)
        if long:
            table["n_params"] = res.params.groupby("skill")["free"].sum()
        return table

    def to_frame(self) -> pd.DataFrame:
        """The fitted parameters and fit statistics, one row per skill (:meth:`fit_table`)."""
        return self.fit_table().reset_index()

    def headline(self) -> dict[str, Any]:
        """``kt fit``'s results.json (less ``tables`` and ``status``)."""
        table = self.fit_table()
        converged = table["converged"].to_numpy(dtype=bool)
        return {
            "n_skills": int(len(table)),
            "n_responses": int(table["n_responses"].sum()),
            "rows_left_out": getattr(self, "rows_left_out_", {}),
            "total_log_likelihood": float(table["log_likelihood"].sum()),
            "n_params": int(self.n_params_),
            "n_not_converged": int((~converged).sum()),
            "skipped_skills": getattr(self, "skipped_skills_", []),
            "params": table.reset_index(),
        }

    def summary(self) -> str:
        """A printable table of the fitted parameters per skill with the fit statistics
        (log-likelihood, EM iterations, convergence) when the model has them.  A variant's
        parameters are listed as its long table (``skill, parameter, group, value, free``)."""
        self._check_fitted()
        params = self.params_
        names = ("log_likelihood", "n_iter", "converged")
        stats = [getattr(self, f"{name}_") for name in names if hasattr(self, f"{name}_")]
        fit = pd.concat(stats, axis=1) if stats else pd.DataFrame()
        fit.index = fit.index.astype(str)
        long = "parameter" in params.columns
        n_skills = params["skill"].nunique() if long else len(params)
        head = [repr(self), f"{n_skills} skills, {getattr(self, 'n_params_', '?')} free parameters"]
        if "log_likelihood" in fit.columns:
            head[-1] += f", total log-likelihood {fit['log_likelihood'].sum():.4f}"
        if "converged" in fit.columns and not fit["converged"].all():
            head[-1] += f"; {int((~fit['converged']).sum())} skill(s) did not converge"
        fmt = {"float_format": lambda v: f"{v:.4f}"}
        if not long:
            return "\n".join([*head, params.join(fit).to_string(**fmt)])
        lines = [*head, params.to_string(index=False, **fmt)]
        if len(fit.columns):
            lines += ["", fit.to_string(**fmt)]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"BKT(forgets={self.forgets}, n_restarts={self.n_restarts}, max_iter={self.max_iter}, "
            f"tol={self.tol}, accelerate={self.accelerate}, guess_max={self.guess_max}, slip_max={self.slip_max}, seed={self.seed}"
            + "".join(
                f", {name}={getattr(self, name)!r}"
                for name in ("multigs", "multilearn", "multiprior", "multipair")
                if getattr(self, name)
            )
            + ("" if self.fixed is None else f", fixed=<{len(self.fixed)} rows>")
            + ("" if self.init is None else f", init=<{len(self.init)} rows>")
            + ")"
        )
