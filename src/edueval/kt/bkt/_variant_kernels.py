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


@njit(cache=True)
def _gather(idx, src, offset, out):
    for r in range(idx.shape[0]):
        out[r] = src[offset + idx[r]]


@njit(cache=True, fastmath=_FM)
def _accumulate(obs, eg, gk, gu, o_g, o_s, n_e, num, den):
    """Guess and slip expected counts per emission group (a plain sum with one group)."""
    if n_e == 1:
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        for r in range(obs.shape[0]):
            y = float(obs[r])
            s0 += gu[r] * y
            s1 += gu[r]
            s2 += gk[r] * (1.0 - y)
            s3 += gk[r]
        num[o_g] += s0
        den[o_g] += s1
        num[o_s] += s2
        den[o_s] += s3
        return
    for r in range(obs.shape[0]):
        e = eg[r]
        y = float(obs[r])
        num[o_g + e] += gu[r] * y
        den[o_g + e] += gu[r]
        num[o_s + e] += gk[r] * (1.0 - y)
        den[o_s + e] += gk[r]


@njit(cache=True, fastmath=_FM)
def _accumulate_moves(tg, x01, x10, tu, tk, o_l, o_f, n_t, num, den):
    """Learn and forget expected counts per transition group."""
    if n_t == 1:
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        for r in range(tg.shape[0]):
            s0 += x01[r]
            s1 += tu[r]
            s2 += x10[r]
            s3 += tk[r]
        num[o_l] += s0
        den[o_l] += s1
        num[o_f] += s2
        den[o_f] += s3
        return
    for r in range(tg.shape[0]):
        j = tg[r]
        num[o_l + j] += x01[r]
        den[o_l + j] += tu[r]
        num[o_f + j] += x10[r]
        den[o_f + j] += tk[r]


@njit(cache=True, fastmath=_FM)
def e_step(obs, bs, T, pg, tg, eg, th, n_p, n_t, n_e, num, den, a_buf, b_buf, x01, x10, lr_a,
           fr_a, tu, tk, L, U, prod, g, h):  # fmt: skip
    """One E-step over a skill's sequences in the time-major layout of ``data.TimeMajor``
    (``obs``, ``tg``, ``eg`` time-major, ``pg`` in the layout's sequence order); returns the
    log-likelihood.

    Consecutive iterations of every inner loop belong to different students, so they do not
    wait on each other (a per-sequence loop is bound by the latency of its divisions).  Fills
    ``num``/``den`` (length m) with the expected counts whose ratio is each parameter's M-step
    (see :func:`m_step`):

    * prior_c:  sum of P(known at 1 | y) over sequences of class c  /  number of them;
    * learn_j:  sum of xi(unknown -> known) over moves of group j  /  sum of P(unknown) before them;
    * forget_j: sum of xi(known -> unknown) over moves of group j  /  sum of P(known) before them;
    * guess_e:  sum of P(unknown | y) * y over responses of group e  /  sum of P(unknown | y);
    * slip_e:   sum of P(known | y) * (1 - y) over responses of group e  /  sum of P(known | y).

    Known and unknown probabilities are carried separately (neither is formed as 1 - the other).
    The backward smoother is :func:`_backward_smoother`.  The forward filter stays here: its
    log-likelihood sum, moved into a helper of its own, differed in the last bit once loaded
    from numba's cache.
    """
    o_l = n_p
    o_f = n_p + n_t
    o_g = n_p + 2 * n_t
    o_s = n_p + 2 * n_t + n_e
    for j in range(num.shape[0]):
        num[j] = 0.0
        den[j] = 0.0
    n_seq = bs[0]
    for i in range(n_seq):
        L[i] = th[pg[i]]
        U[i] = 1.0 - L[i]
        prod[i] = 1.0
    # each response's parameters, gathered once: the loops below then vectorise across students
    # (x01 and x10 hold guess and slip until the backward pass reuses them)
    _gather(eg, th, o_g, x01)
    _gather(eg, th, o_s, x10)
    _gather(tg, th, o_l, lr_a)
    _gather(tg, th, o_f, fr_a)
    ll = 0.0
    pos = 0
    for t in range(T):
        n_t_ = bs[t]
        ob = obs[pos : pos + n_t_]
        ab = a_buf[pos : pos + n_t_]
        bb = b_buf[pos : pos + n_t_]
        gt = x01[pos : pos + n_t_]
        st = x10[pos : pos + n_t_]
        lt = lr_a[pos : pos + n_t_]
        ft = fr_a[pos : pos + n_t_]
        for i in range(n_t_):
            lik, a, b = _observe(L[i], U[i], ob[i], gt[i], st[i])
            prod[i] *= lik
            ab[i] = a
            bb[i] = b
            L[i] = a * (1.0 - ft[i]) + b * lt[i]
            U[i] = a * ft[i] + b * (1.0 - lt[i])
        if t % 16 == 15:
            for i in range(n_t_):
                ll += math.log(max(prod[i], TINY))
                prod[i] = 1.0
        pos += n_t_
    for i in range(n_seq):
        ll += math.log(max(prod[i], TINY))
    _backward_smoother(bs, T, a_buf, b_buf, lr_a, fr_a, x01, x10, tu, tk, g, h)
    n_obs = 0
    for t in range(T):
        n_obs += bs[t]
    _accumulate(obs[:n_obs], eg[:n_obs], a_buf[:n_obs], b_buf[:n_obs], o_g, o_s, n_e, num, den)
    _accumulate_moves(tg[:n_obs], x01[:n_obs], x10[:n_obs], tu[:n_obs], tk[:n_obs], o_l, o_f,
                      n_t, num, den)  # fmt: skip
    for i in range(n_seq):
        c = pg[i]
        num[c] += g[i]
        den[c] += 1.0
    return ll


@njit(cache=True, fastmath=_FM)
def _backward_smoother(bs, T, a_buf, b_buf, lr_a, fr_a, x01, x10, tu, tk, g, h):
    """The backward smoother of :func:`e_step`, one step at a time across students (vectorises:
    no scatter here); a_buf/b_buf become the smoothed P(known)/P(unknown), x01/x10 the expected
    moves and tu/tk the smoothed P(unknown)/P(known) before a move (0 at a sequence's last
    response); ``g``/``h`` end as each student's smoothed P(known)/P(unknown) at the first
    response."""
    pos = 0
    for t in range(T):
        pos += bs[t]
    for t in range(T - 1, -1, -1):
        n_t_ = bs[t]
        pos -= n_t_
        n_next = bs[t + 1] if t + 1 < T else 0
        ab = a_buf[pos : pos + n_t_]
        bb = b_buf[pos : pos + n_t_]
        lt = lr_a[pos : pos + n_t_]
        ft = fr_a[pos : pos + n_t_]
        xa = x01[pos : pos + n_t_]
        xb = x10[pos : pos + n_t_]
        ua = tu[pos : pos + n_t_]
        ka = tk[pos : pos + n_t_]
        for i in range(n_next):
            a = ab[i]
            b = bb[i]
            lr = lt[i]
            fg = ft[i]
            pn = a * (1.0 - fg) + b * lr
            qn = a * fg + b * (1.0 - lr)
            rg = g[i] / pn if pn > TINY else 0.0
            rq = h[i] / qn if qn > TINY else 0.0
            v11 = a * (1.0 - fg) * rg
            v01 = b * lr * rg
            v10 = a * fg * rq
            v00 = b * (1.0 - lr) * rq
            gk = v11 + v10
            gu = v00 + v01
            g[i] = gk
            h[i] = gu
            ab[i] = gk
            bb[i] = gu
            xa[i] = v01
            xb[i] = v10
            ua[i] = gu
            ka[i] = gk
        ge = g[n_next:n_t_]
        he = h[n_next:n_t_]
        ae = ab[n_next:]
        be = bb[n_next:]
        xae = xa[n_next:]
        xbe = xb[n_next:]
        uae = ua[n_next:]
        kae = ka[n_next:]
        for i in range(n_t_ - n_next):
            ge[i] = ae[i]
            he[i] = be[i]
            xae[i] = 0.0
            xbe[i] = 0.0
            uae[i] = 0.0
            kae[i] = 0.0


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
def _em_skill(obs, bs, T, pg, tg, eg, n_p, n_t, n_e, init, free, lo, hi, max_iter, tol,
              accelerate, out):  # fmt: skip
    """EM (with SQUAREM, as ``_kernels._em_one``) from ``init``; returns (loglik, E-steps,
    converged) and leaves the parameters in ``out``."""
    m = init.shape[0]
    n_seq = bs[0]
    n_obs = 0
    for t in range(T):
        n_obs += bs[t]
    a_buf = np.empty(n_obs)
    b_buf = np.empty(n_obs)
    x01 = np.empty(n_obs)
    x10 = np.empty(n_obs)
    lr_a = np.empty(n_obs)
    fr_a = np.empty(n_obs)
    tu = np.empty(n_obs)
    tk = np.empty(n_obs)
    L = np.empty(n_seq)
    U = np.empty(n_seq)
    prod = np.empty(n_seq)
    g = np.empty(n_seq)
    h = np.empty(n_seq)
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
    ll0 = e_step(obs, bs, T, pg, tg, eg, p0, n_p, n_t, n_e, n0, d0, a_buf, b_buf, x01, x10, lr_a,
                 fr_a, tu, tk, L, U, prod, g, h)  # fmt: skip
    n_e_steps = 1
    converged = 0.0
    while n_e_steps < max_iter:
        m_step(n0, d0, p0, free, lo, hi, p1)
        ll1 = e_step(obs, bs, T, pg, tg, eg, p1, n_p, n_t, n_e, num, den, a_buf, b_buf, x01, x10,
                     lr_a, fr_a, tu, tk, L, U, prod, g, h)  # fmt: skip
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
        ll2 = e_step(obs, bs, T, pg, tg, eg, p2, n_p, n_t, n_e, num, den, a_buf, b_buf, x01, x10,
                     lr_a, fr_a, tu, tk, L, U, prod, g, h)  # fmt: skip
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
                ll3 = e_step(obs, bs, T, pg, tg, eg, p3, n_p, n_t, n_e, n3, d3, a_buf, b_buf, x01,
                             x10, lr_a, fr_a, tu, tk, L, U, prod, g, h)  # fmt: skip
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
def em_jobs(obs_tm, obs_lo, bs_all, bs_lo, skill_T, seq_lo, pg, tg, eg, dims, job_skill,
            job_restart, inits, free, lo, hi, max_iter, tol, accelerate):  # fmt: skip
    """Independent EM runs in parallel: job ``j`` fits skill ``k = job_skill[j]`` from
    ``inits[job_restart[j], lo_k : lo_k + m_k]`` (``inits`` has one full parameter row per
    restart).  Skill ``k``'s time-major responses (and their ``tg``, ``eg``) start at
    ``obs_lo[k]``, its batch sizes at ``bs_all[bs_lo[k]]`` and its sequences' ``pg`` at
    ``seq_lo[k]``.

    Returns ``(theta, info)``: ``theta`` is ``inits`` with each job's skill block replaced by its
    fit, ``info[j] = (loglik, E-steps, converged)``.
    """
    n_jobs = job_skill.shape[0]
    theta = inits.copy()
    info = np.empty((n_jobs, 3))
    for j in prange(n_jobs):
        k = job_skill[j]
        r = job_restart[j]
        T = skill_T[k]
        bs = bs_all[bs_lo[k] : bs_lo[k] + T]
        n_obs = 0
        for t in range(T):
            n_obs += bs[t]
        o = obs_lo[k]
        t_lo = dims[k, 0]
        n_p = dims[k, 1]
        n_t = dims[k, 2]
        n_e = dims[k, 3]
        t_hi = t_lo + n_p + 2 * n_t + 2 * n_e
        ll, n_it, conv = _em_skill(
            obs_tm[o : o + n_obs], bs, T, pg[seq_lo[k] : seq_lo[k] + bs[0]],
            tg[o : o + n_obs], eg[o : o + n_obs], n_p, n_t, n_e,
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


@njit(cache=True)
def estep_skill(obs, bs, T, pg, tg, eg, n_p, n_t, n_e, th):
    """One E-step of one skill (time-major layout, as :func:`e_step`) with its own buffers;
    returns ``(loglik, num, den)``.

    ``num`` / ``den`` are the expected counts of :func:`e_step`; since the expected
    complete-data log-likelihood is ``sum_j num_j log th_j + (den_j - num_j) log(1 - th_j)``,
    Fisher's identity makes ``num / th - (den - num) / (1 - th)`` the exact gradient of the
    log-likelihood (what :mod:`edueval.kt.bkt.first_response` hands to L-BFGS-B).
    """
    m = th.shape[0]
    n_seq = bs[0]
    n_obs = 0
    for t in range(T):
        n_obs += bs[t]
    num = np.empty(m)
    den = np.empty(m)
    ll = e_step(obs, bs, T, pg, tg, eg, th, n_p, n_t, n_e, num, den, np.empty(n_obs),
                np.empty(n_obs), np.empty(n_obs), np.empty(n_obs), np.empty(n_obs),
                np.empty(n_obs), np.empty(n_obs), np.empty(n_obs), np.empty(n_seq),
                np.empty(n_seq), np.empty(n_seq), np.empty(n_seq), np.empty(n_seq))  # fmt: skip
    return ll, num, den
