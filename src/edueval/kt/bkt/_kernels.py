"""Compiled inner loops of Bayesian Knowledge Tracing (numba).

Data layout: responses of all sequences (one student on one skill) are concatenated in ``obs``
(int8, 0/1) in time order; sequence ``s`` occupies ``obs[starts[s]:starts[s + 1]]``.
Parameter vectors are ``[prior, learn, guess, slip, forget]``.

The recursions are the standard ones for a two-state hidden Markov model (Corbett & Anderson 1995;
Baum-Welch as in Rabiner 1989), written with the filtered probability of the known state and a
forward-filter / backward-smoother pass, which needs no emission terms going backwards and no
rescaling.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

TINY = 1e-300


@njit(cache=True, inline="always")
def _observe(L, U, y, guess, slip):
    """Bayes update on response ``y`` given P(known) = L and P(unknown) = U (L + U = 1).

    Returns (P(y), P(known | y), P(unknown | y)); both posteriors are computed from products of
    non-negative terms, so neither loses precision when the other is close to 1.
    """
    # selects, not arithmetic blends: (1 - g) + y (2g - 1) would lose g's relative precision when
    # g is tiny (EM's lower bound is 1e-9); selects compile to branch-free blends all the same
    k = L * (1.0 - slip) if y == 1 else L * slip
    u = U * guess if y == 1 else U * (1.0 - guess)
    lik = k + u
    inv = 1.0 / max(lik, TINY)
    return lik, k * inv, u * inv


@njit(cache=True, inline="always")
def _filter_one(obs, lo, hi, prior, learn, guess, slip, forget, pc_out, pk_out):
    """Forward filter of one sequence: P(correct) before, P(known) after each response."""
    L = prior
    U = 1.0 - prior
    for i in range(lo, hi):
        pc_out[i] = L * (1.0 - slip) + U * guess
        _, a, b = _observe(L, U, obs[i], guess, slip)
        pk_out[i] = a
        L = a * (1.0 - forget) + b * learn
        U = a * forget + b * (1.0 - learn)


@njit(cache=True, parallel=True)
def forward_per_sequence(obs, starts, params, seq_param, p_correct, p_known):
    """Filter every sequence with its own parameter row ``params[seq_param[s]]``."""
    n_seq = starts.shape[0] - 1
    for s in prange(n_seq):
        k = seq_param[s]
        _filter_one(
            obs,
            starts[s],
            starts[s + 1],
            params[k, 0],
            params[k, 1],
            params[k, 2],
            params[k, 3],
            params[k, 4],
            p_correct,
            p_known,
        )


@njit(cache=True, parallel=True)
def forward_param_sets(obs, starts, params, p_correct, p_known):
    """Filter all sequences once per parameter row: outputs have shape (n_sets, n_obs)."""
    n_seq = starts.shape[0] - 1
    n_sets = params.shape[0]
    for job in prange(n_sets * n_seq):
        k = job // n_seq
        s = job - k * n_seq
        _filter_one(
            obs,
            starts[s],
            starts[s + 1],
            params[k, 0],
            params[k, 1],
            params[k, 2],
            params[k, 3],
            params[k, 4],
            p_correct[k],
            p_known[k],
        )


@njit(cache=True, inline="always")
def _clip(x, lo, hi):
    return lo if x < lo else (hi if x > hi else x)


@njit(cache=True)
def m_step(stats, p_old, fit_forget, bounds, p_new):
    """Maximise the expected complete-data log-likelihood, each parameter within its bounds.

    Each parameter's term is concave and separate from the others, so clipping the unconstrained
    maximiser to the bounds is the exact constrained maximiser (EM stays monotone).
    """
    p_new[0] = _clip(stats[0] / stats[1], bounds[0, 0], bounds[0, 1]) if stats[1] > 0 else p_old[0]
    p_new[1] = (
        _clip(stats[2] / stats[3], bounds[1, 0], bounds[1, 1]) if stats[3] > TINY else p_old[1]
    )
    p_new[2] = (
        _clip(stats[6] / stats[7], bounds[2, 0], bounds[2, 1]) if stats[7] > TINY else p_old[2]
    )
    p_new[3] = (
        _clip(stats[8] / stats[9], bounds[3, 0], bounds[3, 1]) if stats[9] > TINY else p_old[3]
    )
    if fit_forget:
        p_new[4] = (
            _clip(stats[4] / stats[5], bounds[4, 0], bounds[4, 1]) if stats[5] > TINY else p_old[4]
        )
    else:
        p_new[4] = p_old[4]


_FM = {"reassoc", "contract", "arcp", "nsz"}  # reorder sums so they vectorise; NaN/inf kept


@njit(cache=True, fastmath=_FM)
def e_step_tm(obs, bs, T, p, a_buf, b_buf, L, U, prod, g, h, stats):
    """E-step over one skill's sequences in time-major layout (vectorises across students).

    Sequences are sorted by length, longest first; ``bs[t]`` is the number still going at step
    ``t``, and ``obs`` holds step 0 of every sequence, then step 1 of those still going, and so
    on.  Fills ``stats`` with

    [sum P(known at 1), n sequences,
     sum xi(unknown->known), sum P(unknown) at t<T, sum xi(known->unknown), sum P(known) at t<T,
     sum P(unknown)*y, sum P(unknown), sum P(known)*(1-y), sum P(known)]

    and returns the log-likelihood (natural log).  Forward filter, then the backward smoother
    P(s_t, s_t+1 | all) = P(s_t | y_1..t) A(s_t, s_t+1) P(s_t+1 | all) / P(s_t+1 | y_1..t); known
    and unknown probabilities are carried separately so that neither is formed as 1 - the other.
    ``a_buf``, ``b_buf`` (n_obs) and ``L``, ``U``, ``prod``, ``g``, ``h`` (n_seq) are scratch.
    """
    prior, learn, guess, slip, forget = p[0], p[1], p[2], p[3], p[4]
    stay = 1.0 - forget
    keep = 1.0 - learn
    n_seq = bs[0]
    for i in range(n_seq):
        L[i] = prior
        U[i] = 1.0 - prior
        prod[i] = 1.0
    ll = 0.0
    pos = 0
    # Loops run over per-step slices: indexing ``x[pos + i]`` makes numba emit a negative-index
    # wrap-around select, which LLVM turned into gathers/scatters (about 3x slower).
    for t in range(T):
        n_t = bs[t]
        ob = obs[pos : pos + n_t]
        ab = a_buf[pos : pos + n_t]
        bb = b_buf[pos : pos + n_t]
        for i in range(n_t):
            lik, a, b = _observe(L[i], U[i], ob[i], guess, slip)
            prod[i] *= lik
            ab[i] = a
            bb[i] = b
            L[i] = a * stay + b * learn
            U[i] = a * forget + b * keep
        if t % 16 == 15:
            for i in range(n_t):
                ll += math.log(max(prod[i], TINY))
                prod[i] = 1.0
        pos += n_t
    for i in range(n_seq):
        ll += math.log(max(prod[i], TINY))

    x01s = 0.0
    u_s = 0.0
    x10s = 0.0
    k_s = 0.0
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    for t in range(T - 1, -1, -1):
        n_t = bs[t]
        pos -= n_t
        n_next = bs[t + 1] if t + 1 < T else 0
        ob = obs[pos : pos + n_t]
        ab = a_buf[pos : pos + n_t]
        bb = b_buf[pos : pos + n_t]
        # the emission sums (s0..s3) are accumulated in the same pass as the smoothing
        for i in range(n_next):  # sequences that go on to step t + 1: smooth backwards
            a = ab[i]
            b = bb[i]
            pn = a * stay + b * learn
            qn = a * forget + b * keep
            rg = g[i] / pn if pn > TINY else 0.0
            rq = h[i] / qn if qn > TINY else 0.0
            x11 = a * stay * rg
            x01 = b * learn * rg
            x10 = a * forget * rq
            x00 = b * keep * rq
            x01s += x01
            u_s += x00 + x01
            x10s += x10
            k_s += x11 + x10
            gi = x11 + x10
            hi = x00 + x01
            g[i] = gi
            h[i] = hi
            y = float(ob[i])
            s0 += hi * y
            s1 += hi
            s2 += gi * (1.0 - y)
            s3 += gi
        ge = g[n_next:n_t]  # sequences whose last step is t
        he = h[n_next:n_t]
        ae = ab[n_next:]
        be = bb[n_next:]
        oe = ob[n_next:]
        for i in range(n_t - n_next):
            gi = ae[i]
            hi = be[i]
            ge[i] = gi
            he[i] = hi
            y = float(oe[i])
            s0 += hi * y
            s1 += hi
            s2 += gi * (1.0 - y)
            s3 += gi
    g0 = 0.0
    for i in range(n_seq):
        g0 += g[i]
    stats[0] = g0
    stats[1] = n_seq
    stats[2] = x01s
    stats[3] = u_s
    stats[4] = x10s
    stats[5] = k_s
    stats[6] = s0
    stats[7] = s1
    stats[8] = s2
    stats[9] = s3
    return ll


@njit(cache=True)
def _em_one(obs, bs, T, init, fit_forget, bounds, max_iter, tol, accelerate, out):
    """EM from one starting point; out = [5 params, log-likelihood, E-steps, converged].

    With ``accelerate``, SQUAREM (Varadhan & Roland 2008, scheme S3) extrapolates two EM steps
    and keeps the extrapolated point only if it raises the likelihood above the second EM step,
    so every accepted step still increases the likelihood.  Stops when a cycle raises the
    log-likelihood by less than ``tol * |loglik|``.
    """
    n_seq = bs[0]
    n_obs = 0
    for t in range(T):
        n_obs += bs[t]
    a_buf = np.empty(n_obs)
    b_buf = np.empty(n_obs)
    L = np.empty(n_seq)
    U = np.empty(n_seq)
    prod = np.empty(n_seq)
    g = np.empty(n_seq)
    h = np.empty(n_seq)
    st0 = np.empty(10)
    st1 = np.empty(10)
    st2 = np.empty(10)
    st3 = np.empty(10)
    p0 = init.copy()
    for j in range(5):
        p0[j] = _clip(p0[j], bounds[j, 0], bounds[j, 1])
    p1 = np.empty(5)
    p2 = np.empty(5)
    p3 = np.empty(5)
    ll0 = e_step_tm(obs, bs, T, p0, a_buf, b_buf, L, U, prod, g, h, st0)
    n_e = 1
    converged = 0.0
    while n_e < max_iter:
        m_step(st0, p0, fit_forget, bounds, p1)
        ll1 = e_step_tm(obs, bs, T, p1, a_buf, b_buf, L, U, prod, g, h, st1)
        n_e += 1
        if not accelerate:
            gain = ll1 - ll0
            p0[:] = p1
            st0[:] = st1
            ll0 = ll1
            if gain < tol * abs(ll0):
                converged = 1.0
                break
            continue
        m_step(st1, p1, fit_forget, bounds, p2)
        ll2 = e_step_tm(obs, bs, T, p2, a_buf, b_buf, L, U, prod, g, h, st2)
        n_e += 1
        rr = 0.0
        vv = 0.0
        for j in range(5):
            r = p1[j] - p0[j]
            v = p2[j] - 2.0 * p1[j] + p0[j]
            rr += r * r
            vv += v * v
        best_ll = ll2
        use3 = False
        if vv > 0.0:
            alpha = -math.sqrt(rr / vv)
            if alpha < -1.0:
                for j in range(5):
                    r = p1[j] - p0[j]
                    v = p2[j] - 2.0 * p1[j] + p0[j]
                    p3[j] = _clip(
                        p0[j] - 2.0 * alpha * r + alpha * alpha * v, bounds[j, 0], bounds[j, 1]
                    )
                ll3 = e_step_tm(obs, bs, T, p3, a_buf, b_buf, L, U, prod, g, h, st3)
                n_e += 1
                if ll3 > ll2 and math.isfinite(ll3):
                    best_ll = ll3
                    use3 = True
        gain = best_ll - ll0
        if use3:
            p0[:] = p3
            st0[:] = st3
        else:
            p0[:] = p2
            st0[:] = st2
        ll0 = best_ll
        if gain < tol * abs(ll0):
            converged = 1.0
            break
    out[:5] = p0
    out[5] = ll0
    out[6] = n_e
    out[7] = converged


@njit(cache=True, parallel=True)
def em_jobs(
    obs_tm,
    skill_obs_lo,
    skill_bs_lo,
    skill_T,
    bs_all,
    job_skill,
    inits,
    fit_forget,
    bounds,
    max_iter,
    tol,
    accelerate,
):
    """Run independent EM jobs in parallel (one per skill x restart).

    Skill ``k``'s time-major responses start at ``obs_tm[skill_obs_lo[k]]`` and its batch sizes
    at ``bs_all[skill_bs_lo[k]]`` (``skill_T[k]`` of them).  Job ``j`` fits skill ``job_skill[j]``
    from ``inits[j]``.  Returns (n_jobs, 8): prior, learn, guess, slip, forget, loglik, E-steps,
    converged.
    """
    n_jobs = inits.shape[0]
    out = np.empty((n_jobs, 8))
    for j in prange(n_jobs):
        k = job_skill[j]
        T = skill_T[k]
        bs = bs_all[skill_bs_lo[k] : skill_bs_lo[k] + T]
        n_obs = 0
        for t in range(T):
            n_obs += bs[t]
        obs = obs_tm[skill_obs_lo[k] : skill_obs_lo[k] + n_obs]
        _em_one(obs, bs, T, inits[j], fit_forget, bounds, max_iter, tol, accelerate, out[j])
    return out


@njit(cache=True)
def loglik(obs, starts, s_lo, s_hi, p):
    """Log-likelihood of sequences ``s_lo..s_hi`` under parameters ``p``."""
    ll = 0.0
    prior, learn, guess, slip, forget = p[0], p[1], p[2], p[3], p[4]
    for s in range(s_lo, s_hi):
        L = prior
        U = 1.0 - prior
        for i in range(starts[s], starts[s + 1]):
            lik, a, b = _observe(L, U, obs[i], guess, slip)
            ll += math.log(max(lik, TINY))
            L = a * (1.0 - forget) + b * learn
            U = a * forget + b * (1.0 - learn)
    return ll
