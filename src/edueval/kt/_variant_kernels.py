"""Compiled EM and forward filter of the BKT variants (numba), on the packed layout of data.py.

Responses of a skill are contiguous in ``obs`` (sequence ``s`` is ``obs[starts[s]:starts[s+1]]``).
Each skill ``k`` has one flat parameter vector ``theta[lo_k : lo_k + m_k]`` laid out as

    [prior (n_p) | learn (n_t) | forget (n_t) | guess (n_e) | slip (n_e)]

and three group index arrays hold *local* positions within those blocks:

* ``pg[s]``  -- prior group of sequence ``s``;
* ``tg[i]``  -- transition group of the move *after* response ``i`` (unused at a sequence's end);
* ``eg[i]``  -- emission (guess/slip) group of response ``i``.

``dims[k] = (lo_k, n_p, n_t, n_e)``.  The recursions are those of ``_kernels.py`` (filtered
known/unknown probabilities carried separately, backward smoother without emission terms), with
each step's parameters looked up through the group indices.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ._kernels import TINY, _clip, _observe

_FM = {"reassoc", "contract", "arcp", "nsz"}


@njit(cache=True, fastmath=_FM)
def e_step(obs, starts, s_lo, s_hi, pg, tg, eg, th, n_p, n_t, n_e, num, den, a_buf, b_buf):
    """One E-step over sequences ``s_lo..s_hi`` of a skill; returns the log-likelihood.

    Fills ``num``/``den`` (length m) with the expected counts whose ratio is each parameter's
    M-step (see :func:`m_step`):

    * prior_c:  sum of P(known at 1 | y) over sequences of class c  /  number of them;
    * learn_j:  sum of xi(unknown -> known) over moves of group j  /  sum of P(unknown) before them;
    * forget_j: sum of xi(known -> unknown) over moves of group j  /  sum of P(known) before them;
    * guess_e:  sum of P(unknown | y) * y over responses of group e  /  sum of P(unknown | y);
    * slip_e:   sum of P(known | y) * (1 - y) over responses of group e  /  sum of P(known | y).
    """
    o_l = n_p
    o_f = n_p + n_t
    o_g = n_p + 2 * n_t
    o_s = n_p + 2 * n_t + n_e
    for j in range(num.shape[0]):
        num[j] = 0.0
        den[j] = 0.0
    ll = 0.0
    for s in range(s_lo, s_hi):
        lo = starts[s]
        n = starts[s + 1] - lo
        L = th[pg[s]]
        U = 1.0 - L
        prod = 1.0
        for i in range(n):
            r = lo + i
            e = eg[r]
            lik, a, b = _observe(L, U, obs[r], th[o_g + e], th[o_s + e])
            prod *= lik
            if i % 16 == 15:
                ll += math.log(max(prod, TINY))
                prod = 1.0
            a_buf[i] = a
            b_buf[i] = b
            j = tg[r]
            lr = th[o_l + j]
            fg = th[o_f + j]
            L = a * (1.0 - fg) + b * lr
            U = a * fg + b * (1.0 - lr)
        ll += math.log(max(prod, TINY))
        gk = a_buf[n - 1]
        gu = b_buf[n - 1]
        r = lo + n - 1
        e = eg[r]
        y = float(obs[r])
        num[o_g + e] += gu * y
        den[o_g + e] += gu
        num[o_s + e] += gk * (1.0 - y)
        den[o_s + e] += gk
        for i in range(n - 2, -1, -1):
            r = lo + i
            a = a_buf[i]
            b = b_buf[i]
            j = tg[r]
            lr = th[o_l + j]
            fg = th[o_f + j]
            pn = a * (1.0 - fg) + b * lr
            qn = a * fg + b * (1.0 - lr)
            rg = gk / pn if pn > TINY else 0.0
            rq = gu / qn if qn > TINY else 0.0
            x11 = a * (1.0 - fg) * rg
            x01 = b * lr * rg
            x10 = a * fg * rq
            x00 = b * (1.0 - lr) * rq
            num[o_l + j] += x01
            den[o_l + j] += x00 + x01
            num[o_f + j] += x10
            den[o_f + j] += x11 + x10
            gk = x11 + x10
            gu = x00 + x01
            e = eg[r]
            y = float(obs[r])
            num[o_g + e] += gu * y
            den[o_g + e] += gu
            num[o_s + e] += gk * (1.0 - y)
            den[o_s + e] += gk
        c = pg[s]
        num[c] += gk
        den[c] += 1.0
    return ll


@njit(cache=True)
def m_step(num, den, th_old, free, lo, hi, th_new):
    """Each free parameter = its expected-count ratio clipped to its bounds.

    The expected complete-data log-likelihood is a sum of one Bernoulli term per parameter
    (``num log p + (den - num) log(1 - p)``), each concave in its own parameter, so the ratio
    clipped to [lo, hi] is the exact constrained maximiser and EM stays monotone.  Held
    (``free = False``) parameters and parameters without data keep their value.
    """
    for j in range(th_old.shape[0]):
        if free[j] and den[j] > TINY:
            th_new[j] = _clip(num[j] / den[j], lo[j], hi[j])
        else:
            th_new[j] = th_old[j]


@njit(cache=True)
def _em_skill(obs, starts, s_lo, s_hi, pg, tg, eg, n_p, n_t, n_e, init, free, lo, hi,
              max_iter, tol, accelerate, out):  # fmt: skip
    """EM (with SQUAREM, as ``_kernels._em_one``) from ``init``; returns (loglik, E-steps,
    converged) and leaves the parameters in ``out``."""
    m = init.shape[0]
    n_max = 1
    for s in range(s_lo, s_hi):
        n_max = max(n_max, starts[s + 1] - starts[s])
    a_buf = np.empty(n_max)
    b_buf = np.empty(n_max)
    num = np.empty(m)
    den = np.empty(m)
    p0 = np.empty(m)
    for j in range(m):
        p0[j] = _clip(init[j], lo[j], hi[j])
    p1 = np.empty(m)
    p2 = np.empty(m)
    p3 = np.empty(m)
    n0 = np.empty(m)
    d0 = np.empty(m)
    n3 = np.empty(m)
    d3 = np.empty(m)
    ll0 = e_step(obs, starts, s_lo, s_hi, pg, tg, eg, p0, n_p, n_t, n_e, n0, d0, a_buf, b_buf)
    n_e_steps = 1
    converged = 0.0
    while n_e_steps < max_iter:
        m_step(n0, d0, p0, free, lo, hi, p1)
        ll1 = e_step(obs, starts, s_lo, s_hi, pg, tg, eg, p1, n_p, n_t, n_e, num, den, a_buf,
                     b_buf)  # fmt: skip
        n_e_steps += 1
        if not accelerate:
            gain = ll1 - ll0
            p0[:] = p1
            n0[:] = num
            d0[:] = den
            ll0 = ll1
            if gain < tol * abs(ll0):
                converged = 1.0
                break
            continue
        m_step(num, den, p1, free, lo, hi, p2)
        ll2 = e_step(obs, starts, s_lo, s_hi, pg, tg, eg, p2, n_p, n_t, n_e, num, den, a_buf,
                     b_buf)  # fmt: skip
        n_e_steps += 1
        best_ll = ll2
        use3 = False
        rr = 0.0
        vv = 0.0
        for j in range(m):
            r = p1[j] - p0[j]
            v = p2[j] - 2.0 * p1[j] + p0[j]
            rr += r * r
            vv += v * v
        if vv > 0.0:
            alpha = -math.sqrt(rr / vv)
            if alpha < -1.0:
                for j in range(m):
                    r = p1[j] - p0[j]
                    v = p2[j] - 2.0 * p1[j] + p0[j]
                    p3[j] = _clip(p0[j] - 2.0 * alpha * r + alpha * alpha * v, lo[j], hi[j])
                ll3 = e_step(obs, starts, s_lo, s_hi, pg, tg, eg, p3, n_p, n_t, n_e, n3, d3,
                             a_buf, b_buf)  # fmt: skip
                n_e_steps += 1
                if ll3 > ll2 and math.isfinite(ll3):
                    best_ll = ll3
                    use3 = True
        gain = best_ll - ll0
        if use3:
            p0[:] = p3
            n0[:] = n3
            d0[:] = d3
        else:
            p0[:] = p2
            n0[:] = num
            d0[:] = den
        ll0 = best_ll
        if gain < tol * abs(ll0):
            converged = 1.0
            break
    out[:] = p0
    return ll0, n_e_steps, converged


@njit(cache=True, parallel=True)
def em_jobs(obs, starts, skill_starts, pg, tg, eg, dims, job_skill, job_restart, inits, free, lo,
            hi, max_iter, tol, accelerate):  # fmt: skip
    """Independent EM runs in parallel: job ``j`` fits skill ``k = job_skill[j]`` from
    ``inits[job_restart[j], lo_k : lo_k + m_k]`` (``inits`` has one full parameter row per
    restart).

    Returns ``(theta, info)``: ``theta`` is ``inits`` with each job's skill block replaced by its
    fit, ``info[j] = (loglik, E-steps, converged)``.
    """
    n_jobs = job_skill.shape[0]
    theta = inits.copy()
    info = np.empty((n_jobs, 3))
    for j in prange(n_jobs):
        k = job_skill[j]
        r = job_restart[j]
        t_lo = dims[k, 0]
        n_p = dims[k, 1]
        n_t = dims[k, 2]
        n_e = dims[k, 3]
        t_hi = t_lo + n_p + 2 * n_t + 2 * n_e
        ll, n_it, conv = _em_skill(
            obs, starts, skill_starts[k], skill_starts[k + 1], pg, tg, eg, n_p, n_t, n_e,
            inits[r, t_lo:t_hi], free[t_lo:t_hi], lo[t_lo:t_hi], hi[t_lo:t_hi],
            max_iter, tol, accelerate, theta[r, t_lo:t_hi],
        )  # fmt: skip
        info[j, 0] = ll
        info[j, 1] = n_it
        info[j, 2] = conv
    return theta, info


@njit(cache=True, parallel=True)
def loglik_skills(obs, starts, skill_starts, pg, tg, eg, dims, theta):
    """Log-likelihood of each skill under the flat parameters ``theta``."""
    n_skills = dims.shape[0]
    out = np.empty(n_skills)
    for k in prange(n_skills):
        t_lo = dims[k, 0]
        n_p = dims[k, 1]
        n_t = dims[k, 2]
        n_e = dims[k, 3]
        m = n_p + 2 * n_t + 2 * n_e
        th = theta[t_lo : t_lo + m]
        o_l, o_f, o_g, o_s = n_p, n_p + n_t, n_p + 2 * n_t, n_p + 2 * n_t + n_e
        ll = 0.0
        for s in range(skill_starts[k], skill_starts[k + 1]):
            L = th[pg[s]]
            U = 1.0 - L
            for r in range(starts[s], starts[s + 1]):
                e = eg[r]
                lik, a, b = _observe(L, U, obs[r], th[o_g + e], th[o_s + e])
                ll += math.log(max(lik, TINY))
                j = tg[r]
                L = a * (1.0 - th[o_f + j]) + b * th[o_l + j]
                U = a * th[o_f + j] + b * (1.0 - th[o_l + j])
        out[k] = ll
    return out


@njit(cache=True, parallel=True)
def forward(obs, starts, seq_skill, pg, tg, eg, dims, theta, p_correct, p_known):
    """Forward filter: P(correct) before and P(known) after every response (packed order)."""
    n_seq = starts.shape[0] - 1
    for s in prange(n_seq):
        k = seq_skill[s]
        t_lo = dims[k, 0]
        n_p = dims[k, 1]
        n_t = dims[k, 2]
        n_e = dims[k, 3]
        o_l = t_lo + n_p
        o_f = o_l + n_t
        o_g = o_f + n_t
        o_s = o_g + n_e
        L = theta[t_lo + pg[s]]
        U = 1.0 - L
        for r in range(starts[s], starts[s + 1]):
            g = theta[o_g + eg[r]]
            sl = theta[o_s + eg[r]]
            p_correct[r] = L * (1.0 - sl) + U * g
            _, a, b = _observe(L, U, obs[r], g, sl)
            p_known[r] = a
            j = tg[r]
            L = a * (1.0 - theta[o_f + j]) + b * theta[o_l + j]
            U = a * theta[o_f + j] + b * (1.0 - theta[o_l + j])
