"""The likelihood of BKT with first-response classes (``multiprior=True``) and its maximisation.

With first-response classes (KT-PPS's heuristic, Pardos & Heffernan 2010; pyBKT's default
``multiprior``) the class ``c`` of a student's sequence on a skill is the correctness ``y1`` of
its first response, and class ``c`` has its own prior ``pi_c``.  Scoring the whole sequence
under its class's prior, ``log P(y_1..T; pi_{y1})`` (KT-PPS's and pyBKT's likelihood), is
circular: the first response picks the prior that then scores it.  It is not a probability
model -- summed over all sequences it gives ``sum_{y1} P(y1; pi_{y1}) = 1 + (pi_1 - pi_0)
(1 - slip - guess) > 1`` as soon as ``pi_1 > pi_0`` -- so maximising it drives ``pi_0`` to 0
and ``pi_1`` up, and its maximum is inflated: AIC and BIC built on it prefer the variant even
on data simulated with one prior (2 skills x 200 students x 30 opportunities: in 30 of 30 data
sets, by a likelihood ratio of ~150 per skill).

edueval's likelihood is that of the predictions it makes (``kt predict``, ``Roster``): the first
response is predicted before its class is known, under the prior mixed over the classes by their
training shares ``w_c`` (the ``share`` rows), and the rest of the sequence follows the class's
filter after it::

    P(y) = P(y1; pibar) * P(y_2..T | y1; pi_{y1}),   pibar = sum_c w_c pi_c,
    P(y_2..T | y1; pi_c) = P(y_1..T; pi_c) / P(y1; pi_c),

so ``log P(y) = log P(y_1..T; pi_c) + Delta`` with ``Delta = log P(y1; pibar) - log P(y1; pi_c)``,
a function of the first responses only.  This is a probability distribution over sequences
(the first factor sums to one over ``y1``, the second over the rest), and with equal class
priors it is classic BKT's likelihood, so classic BKT is nested in it and AIC, BIC and
likelihood ratios compare the two properly.  (The shares are the data's class frequencies, held
like a design, not counted as free parameters.)

It is maximised directly: each restart first runs classic EM with the class priors tied (the
nested model, :func:`edueval.kt.bkt.variants.fit_variant`'s machinery), then L-BFGS-B (scipy) from
there on the proper likelihood, whose exact gradient is Fisher's identity on one E-step
(:func:`._variant_kernels.estep_skill`) plus the derivative of ``Delta``.  So the fitted log-
likelihood is never below that of the tied (classic) fit it starts from.

Why maximise this likelihood rather than keep KT-PPS's / pyBKT's estimates and only report it:
AIC, BIC and likelihood ratios are defined at the maximum of the likelihood they use (at the
pseudo-likelihood's estimates the proper likelihood is tens of units below classic BKT's), and
the predictions are made with the mixture, so fitting it is what gives the best held-out
likelihood.  On one-prior data the likelihood ratio against classic BKT is then chi-square(1)
per skill (measured: mean 1.03, KS p = 0.89 over 200 skills) and the class priors estimate
the prior; the price is that the estimates are not pyBKT's ``multiprior`` values.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from . import _variant_kernels as VK
from .variant_design import _run_em, _time_major_groups, design_for_fit

__all__ = [
    "LIKELIHOOD_NOTE",
    "FirstCounts",
    "first_counts",
    "delta",
    "delta_by_skill",
    "maximise",
    "fit_restarts",
]

_EPS = 1e-9

#: what a fit report says about the likelihood of first-response classes
LIKELIHOOD_NOTE = (
    "Log-likelihoods (per skill, per restart, total) are those of the model's predictions: "
    "each sequence's first response under the prior mixed over the first-response classes by "
    "their training shares, the rest under its class's prior. KT-PPS's pseudo-likelihood "
    "(the first response scored under the prior it selects) is neither maximised nor "
    "reported. Each restart runs EM with the class priors tied (classic BKT), then L-BFGS-B "
    "on this likelihood; n_iter counts E-steps and L-BFGS-B evaluations together."
)


@dataclass(frozen=True)
class FirstCounts:
    """One skill's first responses counted by (class, emission group, answer)."""

    cls: np.ndarray  # local prior slot of the class
    grp: np.ndarray  # local guess/slip group of the first response
    y: np.ndarray  # the first response (0/1)
    n: np.ndarray  # how many sequences
    share: np.ndarray  # (n_p,) each class's share of the skill's sequences


def first_counts(y1: np.ndarray, pg: np.ndarray, eg1: np.ndarray, n_p: int) -> FirstCounts:
    """Aggregate one skill's sequences (first answer ``y1``, class ``pg``, first emission group
    ``eg1``, one entry per sequence) for :func:`delta`."""
    key = np.stack([pg, eg1, y1.astype(np.int64)], axis=1)
    uniq, n = np.unique(key, axis=0, return_counts=True)
    share = np.bincount(pg, minlength=n_p).astype(float) / len(pg)
    return FirstCounts(uniq[:, 0], uniq[:, 1], uniq[:, 2], n.astype(float), share)


def _p_answer(prior, y, guess, slip):
    """P(first answer = y) from P(known) = ``prior`` (as ``_kernels._observe``: no 1 - p)."""
    return np.where(y == 1, prior * (1 - slip) + (1 - prior) * guess,
                    prior * slip + (1 - prior) * (1 - guess))  # fmt: skip


def _delta_terms(y, n, prior, pibar, guess, slip):
    """``n * Delta`` per row and its derivatives through P(y1; pibar) (``a``) and through
    P(y1; pi_c) (``b``): d Delta = a dP(y1; pibar) + b dP(y1; pi_c)."""
    q_bar = _p_answer(pibar, y, guess, slip)
    q_c = _p_answer(prior, y, guess, slip)
    return n * (np.log(q_bar) - np.log(q_c)), n / q_bar, -n / q_c


def delta(th: np.ndarray, n_p: int, n_t: int, n_e: int, fc: FirstCounts):
    """``(Delta, gradient)`` of one skill at its parameter vector ``th`` (layout of
    :mod:`._variant_kernels`: prior | learn | forget | guess | slip)."""
    o_g = n_p + 2 * n_t
    o_s = o_g + n_e
    pri, g, s = th[fc.cls], th[o_g + fc.grp], th[o_s + fc.grp]
    pibar = float(fc.share @ th[:n_p])
    d, a, b = _delta_terms(fc.y, fc.n, pri, pibar, g, s)
    sign = 2.0 * fc.y - 1.0  # dP(y)/d prior = sign (1 - s - g), / d guess = sign (1 - prior) ...
    grad = np.zeros_like(th)
    grad[:n_p] += fc.share * float(np.sum(a * sign * (1 - s - g)))
    np.add.at(grad, fc.cls, b * sign * (1 - s - g))
    np.add.at(grad, o_g + fc.grp, sign * (a * (1 - pibar) + b * (1 - pri)))
    np.add.at(grad, o_s + fc.grp, -sign * (a * pibar + b * pri))
    return float(d.sum()), grad


def delta_by_skill(seqs, design, theta: np.ndarray, mixed: np.ndarray) -> np.ndarray:
    """``Delta`` summed per skill of packed sequences, the first response under each skill's
    mixed prior ``mixed[k]`` (:func:`edueval.kt.bkt.variants.mixed_prior`, as predictions use it)."""
    first = seqs.starts[:-1]
    k = seqs.seq_skill
    lo, n_p, n_t, n_e = (design.dims[k, j] for j in range(4))
    y = seqs.obs[first].astype(np.int64)
    g_at = lo + n_p + 2 * n_t + design.eg[first]
    d, _, _ = _delta_terms(y, 1.0, theta[lo + design.pg], mixed[k], theta[g_at],
                           theta[g_at + n_e])  # fmt: skip
    return np.bincount(k, weights=d, minlength=len(seqs.skills))


def maximise(skill, dims, th0, free, lo, hi, fc: FirstCounts, tol: float, max_iter: int):
    """L-BFGS-B on one skill's proper log-likelihood from ``th0``.

    ``skill = (obs, bs, T, pg, tg, eg)`` in the time-major layout, ``dims = (n_p, n_t, n_e)``.
    Returns ``(theta, loglik, evaluations, converged)``.  A free parameter's lower bound is
    raised to 1e-9 where it is 0 (forget): Fisher's gradient ``num / th`` needs ``th > 0``.
    """
    n_p, n_t, n_e = dims
    th = np.clip(th0, lo, hi)
    free_lo = np.where(free, np.maximum(lo, _EPS), lo)
    th[free] = np.clip(th[free], free_lo[free], hi[free])
    count = [0]

    def negll(x):
        th[free] = x
        ll, num, den = VK.estep_skill(*skill, n_p, n_t, n_e, th)
        count[0] += 1
        d, g_delta = delta(th, n_p, n_t, n_e, fc)
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.where(den > 0, num / th - (den - num) / (1 - th), 0.0)
        return -(ll + d), -(g + g_delta)[free]

    if not free.any():
        return th, -negll(th[free])[0], count[0], True
    res = minimize(negll, th[free].copy(), jac=True, method="L-BFGS-B",
                   bounds=list(zip(free_lo[free], hi[free], strict=True)),
                   options={"ftol": tol, "gtol": 1e-10, "maxiter": max_iter, "maxfun": max_iter})  # fmt: skip
    th[free] = res.x
    return th, -float(res.fun), count[0], bool(res.status == 0)  # 0: the ftol/gtol test held


def _tie(design, tied, theta: np.ndarray) -> np.ndarray:
    """Parameters of the full design in the tied one (one prior per skill: the class mean)."""
    out = np.empty((theta.shape[0], tied.n_theta))
    for k in range(len(design.labels)):
        f_lo, n_p = int(design.dims[k, 0]), int(design.dims[k, 1])
        t_lo, f_hi = int(tied.dims[k, 0]), design.block_slice(k, "slip").stop
        out[:, t_lo] = theta[:, f_lo : f_lo + n_p].mean(axis=1)
        out[:, t_lo + 1 : t_lo + 1 + f_hi - f_lo - n_p] = theta[:, f_lo + n_p : f_hi]
    return out


def _untie(design, tied, theta_t: np.ndarray, theta: np.ndarray, free: np.ndarray) -> None:
    """Write the tied fit into ``theta`` (free class priors take the tied prior)."""
    for k in range(len(design.labels)):
        f_lo, n_p = int(design.dims[k, 0]), int(design.dims[k, 1])
        t_lo, f_hi = int(tied.dims[k, 0]), design.block_slice(k, "slip").stop
        pri = slice(f_lo, f_lo + n_p)
        theta[:, pri] = np.where(free[pri], theta_t[:, t_lo : t_lo + 1], theta[:, pri])
        theta[:, f_lo + n_p : f_hi] = theta_t[:, t_lo + 1 : t_lo + 1 + f_hi - f_lo - n_p]


def _tied_bounds(design, tied, free, lo, hi):
    """Bounds of the tied design: the other blocks' as they are; the one prior is free when
    some class prior is, else held at their mean."""
    f_t, lo_t, hi_t = (_tie(design, tied, a[None, :].astype(float))[0] for a in (free, lo, hi))
    for k in range(len(design.labels)):
        f_lo, n_p, t_lo = int(design.dims[k, 0]), int(design.dims[k, 1]), int(tied.dims[k, 0])
        pri = slice(f_lo, f_lo + n_p)
        if free[pri].any():
            f_t[t_lo], lo_t[t_lo], hi_t[t_lo] = 1.0, lo[pri].min(), hi[pri].max()
    return f_t.astype(bool), lo_t, hi_t


def fit_restarts(model, data, seqs, spec, design, inits, free, lo, hi, job_skill, job_restart):
    """Every restart of every skill: classic EM with tied class priors (to a loose tolerance),
    then L-BFGS-B on the proper likelihood (to ``model.tol``).  Returns ``(theta, info)`` as
    :func:`._variant_kernels.em_jobs` does (``info``: loglik, evaluations, converged)."""
    tied = design_for_fit(data, seqs, replace(spec, multiprior=False))
    f_t, lo_t, hi_t = _tied_bounds(design, tied, free, lo, hi)
    layout_t = (*_time_major_groups(seqs, tied), seqs.skill_starts)
    loose = max(model.tol, model.LOOSE_TOL)
    theta_t, info_t = _run_em(model, layout_t, tied, _tie(design, tied, inits), f_t, lo_t, hi_t,
                              job_skill, job_restart, loose)  # fmt: skip
    theta = inits.copy()
    _untie(design, tied, theta_t, theta, free)
    tm, pg, tg, eg = _time_major_groups(seqs, design)
    info = np.empty((len(job_skill), 3))
    with threadpool_limits(1, user_api="blas"):  # L-BFGS-B's BLAS calls are tiny: threads
        for k in range(len(seqs.skills)):  # only contend with numba's (10x on 2 busy cores)
            skill = _skill_arrays(tm, pg, tg, eg, int(seqs.skill_starts[k]), k)
            lo_k, n_p, n_t, n_e = (int(x) for x in design.dims[k])
            n_seq = len(skill[3])
            fc = first_counts(skill[0][:n_seq], skill[3], skill[5][:n_seq], n_p)
            sl = slice(lo_k, design.block_slice(k, "slip").stop)
            for j in np.flatnonzero(job_skill == k):
                r = int(job_restart[j])
                budget = max(1, int(model.max_iter) - int(info_t[j, 1]))  # E-steps left
                th, ll, n_eval, ok = maximise(skill, (n_p, n_t, n_e), theta[r, sl], free[sl],
                                              lo[sl], hi[sl], fc, model.tol, budget)  # fmt: skip
                theta[r, sl] = th
                info[j] = (ll, info_t[j, 1] + n_eval, float(ok))
    return theta, info


def _skill_arrays(tm, pg, tg, eg, seq_lo: int, k: int) -> tuple:
    """Skill ``k``'s ``(obs, bs, T, pg, tg, eg)`` in the time-major layout (its first responses,
    one per sequence in ``pg``'s order, are the first ``bs[0]`` entries)."""
    o, T, b0 = int(tm.obs_lo[k]), int(tm.T[k]), int(tm.bs_lo[k])
    bs = tm.bs[b0 : b0 + T]
    n_obs, n_seq = int(bs.sum()), int(bs[0])
    return (tm.obs[o : o + n_obs], bs, T, pg[seq_lo : seq_lo + n_seq], tg[o : o + n_obs],
            eg[o : o + n_obs])  # fmt: skip
