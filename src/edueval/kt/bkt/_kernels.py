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

import numba
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
    # the whole skill as one block: the same loops, in the same order, as a block of
    # :func:`em_together` (the block-local scratch is then the full-length one)
    return e_step_block(obs, bs, T, 0, bs[0], p, a_buf, b_buf, L, U, prod, g, h, stats)


@njit(cache=True, inline="always")
def _squarem_point(p0, p1, p2, bounds, p3):
    """SQUAREM's extrapolated point from three EM iterates into ``p3`` (clipped to ``bounds``);
    False, and ``p3`` untouched, when the step length would not extrapolate (alpha >= -1)."""
    rr = 0.0
    vv = 0.0
    for j in range(5):
        r = p1[j] - p0[j]
        v = p2[j] - 2.0 * p1[j] + p0[j]
        rr += r * r
        vv += v * v
    if vv <= 0.0:
        return False
    alpha = -math.sqrt(rr / vv)
    if alpha >= -1.0:
        return False
    for j in range(5):
        r = p1[j] - p0[j]
        v = p2[j] - 2.0 * p1[j] + p0[j]
        p3[j] = _clip(p0[j] - 2.0 * alpha * r + alpha * alpha * v, bounds[j, 0], bounds[j, 1])
    return True


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
        best_ll = ll2
        use3 = False
        if _squarem_point(p0, p1, p2, bounds, p3):
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


# -- EM with the restarts streaming a skill's data together -------------------------------------
#
# ``em_jobs`` above runs each restart's EM on its own: every E-step streams the whole skill
# through memory (the responses, and the filtered pair written in the forward pass and read back
# in the backward pass, 34 bytes per response), so a skill larger than the caches runs at memory
# speed, once per restart.  ``em_together`` instead cuts each skill's sequences (time-major,
# longest first) into blocks of about ``BLOCK_RESPONSES`` responses and, in one pass over the
# skill, runs the forward-backward of every restart still going on each block while the block is
# in cache: the filtered pair lives in a block-local scratch, and only the responses (one byte
# each) come from memory, once per pass for all restarts.  Each restart's recursions are the
# same as ``e_step_tm``'s.  A skill of one block is summed by the same loops as in
# ``e_step_tm`` (the same fit, to the last bit in the tests, bar an ulp of the log-likelihood
# that even ``em_jobs`` gains or loses with the order in which numba compiles its kernels); a
# larger skill's sums are block partial sums added in block order, whatever the threads --
# nearer the exact sums than ``e_step_tm``'s running sums (5 M responses: 1e-15 relative
# against 7e-13), so on a ridge, where EM's path amplifies rounding, a restart can end
# elsewhere in the digits below the tolerance, as ``em_jobs`` does when only the order of the
# students changes (benchmarks/kt_em_streaming.py --accuracy).

#: Responses per block: its scratch (17 bytes a response, 40 a sequence: about 300 kB) stays in
#: L2; narrower blocks cost more (more loop set-ups and remainders per response).
BLOCK_RESPONSES = 16384


@njit(cache=True)
def block_plan(bs_all, bs_lo, skill_T, budget):
    """Blocks of consecutive (time-major, longest-first) sequences of each skill, about
    ``budget`` responses each (a longer sequence is a block of its own; a block of up to
    twice the budget if that makes its width a multiple of 16).  Returns (n_blocks, 4): skill,
    first sequence, one past the last, responses; in skill order."""
    n_skills = skill_T.shape[0]
    total = 0
    for k in range(n_skills):
        if skill_T[k] > 0:
            total += bs_all[bs_lo[k]]
    blocks = np.empty((total, 4), dtype=np.int64)
    nb = 0
    for k in range(n_skills):
        T = skill_T[k]
        if T == 0:
            continue
        bs = bs_all[bs_lo[k] : bs_lo[k] + T]
        length = T  # length of sequence i: the number of steps t with bs[t] > i
        i0 = 0
        acc = 0
        for i in range(bs[0]):
            while length > 0 and bs[length - 1] <= i:
                length -= 1
            acc += length
            # widths in multiples of 16 sequences: the vectorised loops over a step's sequences
            # then have no scalar remainder (unless a block would grow past twice the budget)
            full = acc >= budget and ((i + 1 - i0) % 16 == 0 or acc >= 2 * budget)
            if full or i + 1 == bs[0]:
                blocks[nb, 0] = k
                blocks[nb, 1] = i0
                blocks[nb, 2] = i + 1
                blocks[nb, 3] = acc
                nb += 1
                i0 = i + 1
                acc = 0
    return blocks[:nb]


@njit(cache=True, fastmath=_FM)
def _block_forward(obs, bs, T, i0, i1, p, a_buf, b_buf, L, U, prod):
    """Forward filter of sequences ``i0..i1`` of a time-major skill (as ``e_step_tm``'s, the
    filtered pair into the block-local ``a_buf``, ``b_buf``).  Returns (loglik, steps)."""
    prior, learn, guess, slip, forget = p[0], p[1], p[2], p[3], p[4]
    stay = 1.0 - forget
    keep = 1.0 - learn
    for i in range(i1 - i0):
        L[i] = prior
        U[i] = 1.0 - prior
        prod[i] = 1.0
    ll = 0.0
    pos = 0
    lpos = 0
    T_b = 0
    for t in range(T):
        n_t = min(bs[t], i1) - i0
        if n_t <= 0:
            break
        ob = obs[pos + i0 : pos + i0 + n_t]
        ab = a_buf[lpos : lpos + n_t]
        bb = b_buf[lpos : lpos + n_t]
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
        pos += bs[t]
        lpos += n_t
        T_b = t + 1
    for i in range(i1 - i0):
        ll += math.log(max(prod[i], TINY))
    return ll, T_b


@njit(cache=True, fastmath=_FM)
def e_step_block(obs, bs, T, i0, i1, p, a_buf, b_buf, L, U, prod, g, h, stats):
    """``e_step_tm`` restricted to sequences ``i0..i1`` (time-major order) of one skill.

    ``obs``, ``bs``, ``T`` are the skill's, as for ``e_step_tm``; the scratch is the block's:
    ``a_buf``, ``b_buf`` hold its responses, ``L``... ``h`` its sequences.  Fills ``stats`` with
    the block's share of ``e_step_tm``'s sums and returns its log-likelihood."""
    learn, forget = p[1], p[4]
    stay = 1.0 - forget
    keep = 1.0 - learn
    ll, T_b = _block_forward(obs, bs, T, i0, i1, p, a_buf, b_buf, L, U, prod)
    pos = 0
    lpos = 0
    for t in range(T_b):
        pos += bs[t]
        lpos += min(bs[t], i1) - i0
    x01s = 0.0
    u_s = 0.0
    x10s = 0.0
    k_s = 0.0
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    for t in range(T_b - 1, -1, -1):
        n_t = min(bs[t], i1) - i0
        pos -= bs[t]
        lpos -= n_t
        n_next = min(bs[t + 1], i1) - i0 if t + 1 < T_b else 0
        ob = obs[pos + i0 : pos + i0 + n_t]
        ab = a_buf[lpos : lpos + n_t]
        bb = b_buf[lpos : lpos + n_t]
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
    for i in range(i1 - i0):
        g0 += g[i]
    stats[0] = g0
    stats[1] = i1 - i0
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
def _em_next_cycle(j, P, ST, n_e, phase, active, fit_forget, bounds, max_iter):
    """Start job ``j``'s next EM cycle (an M-step from point 0), or stop it at ``max_iter``."""
    if n_e[j] >= max_iter:
        active[j] = False
        return
    m_step(ST[j, 0], P[j, 0], fit_forget, bounds, P[j, 1])
    phase[j] = 1


@njit(cache=True)
def _em_advance(j, P, ST, LL, n_e, phase, active, conv, fit_forget, bounds, max_iter, tol, acc):
    """Move job ``j`` on after the E-step at its point ``phase[j]`` (in ``LL``, ``ST``): exactly
    the steps of ``_em_one`` between two E-steps (points 0-3 are its p0-p3)."""
    ph = phase[j]
    n_e[j] += 1
    if ph == 0:
        _em_next_cycle(j, P, ST, n_e, phase, active, fit_forget, bounds, max_iter)
        return
    if ph == 1:
        if acc:
            m_step(ST[j, 1], P[j, 1], fit_forget, bounds, P[j, 2])
            phase[j] = 2
            return
        best = 1
    elif ph == 2:
        if _squarem_point(P[j, 0], P[j, 1], P[j, 2], bounds, P[j, 3]):
            phase[j] = 3
            return
        best = 2
    else:
        best = 3 if LL[j, 3] > LL[j, 2] and math.isfinite(LL[j, 3]) else 2
    gain = LL[j, best] - LL[j, 0]
    P[j, 0, :] = P[j, best]
    ST[j, 0, :] = ST[j, best]
    LL[j, 0] = LL[j, best]
    if gain < tol * abs(LL[j, 0]):
        conv[j] = 1.0
        active[j] = False
        return
    _em_next_cycle(j, P, ST, n_e, phase, active, fit_forget, bounds, max_iter)


@njit(cache=True)
def _em_group(obs, bs, T, blocks, inits, fit_forget, bounds, max_iter, tol, accelerate, out):
    """EM of the jobs ``inits`` (one skill), advancing together: each pass over the skill's
    ``blocks`` (rows of :func:`block_plan`) computes one E-step of every job still going, the
    sums added block by block in block order; each job then takes its own step of ``_em_one``.
    ``out`` (n_jobs, 8) as ``em_jobs``'s."""
    n_jobs = inits.shape[0]
    size = 1
    width = 1
    for b in range(blocks.shape[0]):
        size = max(size, blocks[b, 3])
        width = max(width, blocks[b, 2] - blocks[b, 1])
    a_buf = np.empty(size)
    b_buf = np.empty(size)
    L = np.empty(width)
    U = np.empty(width)
    prod = np.empty(width)
    g = np.empty(width)
    h = np.empty(width)
    st = np.empty(10)
    P = np.zeros((n_jobs, 4, 5))
    ST = np.zeros((n_jobs, 4, 10))
    LL = np.zeros((n_jobs, 4))
    n_e = np.zeros(n_jobs, dtype=np.int64)
    phase = np.zeros(n_jobs, dtype=np.int64)
    active = np.ones(n_jobs, dtype=np.bool_)
    conv = np.zeros(n_jobs)
    for j in range(n_jobs):
        for m in range(5):
            P[j, 0, m] = _clip(inits[j, m], bounds[m, 0], bounds[m, 1])
    while active.any():
        for j in range(n_jobs):
            if active[j]:
                ST[j, phase[j], :] = 0.0
                LL[j, phase[j]] = 0.0
        for b in range(blocks.shape[0]):  # one pass over the data for all jobs still going
            i0 = blocks[b, 1]
            i1 = blocks[b, 2]
            for j in range(n_jobs):
                if active[j]:
                    ph = phase[j]
                    ll = e_step_block(obs, bs, T, i0, i1, P[j, ph], a_buf, b_buf, L, U, prod,
                                      g, h, st)  # fmt: skip
                    for m in range(10):
                        ST[j, ph, m] += st[m]
                    LL[j, ph] += ll
        for j in range(n_jobs):
            if active[j]:
                _em_advance(j, P, ST, LL, n_e, phase, active, conv, fit_forget, bounds,
                            max_iter, tol, accelerate)  # fmt: skip
    for j in range(n_jobs):
        out[j, :5] = P[j, 0]
        out[j, 5] = LL[j, 0]
        out[j, 6] = n_e[j]
        out[j, 7] = conv[j]


@njit(cache=True)
def em_units(job_skill, n_skills, skill_size, n_threads):
    """Units of work for :func:`em_together`: each a skill and a run of its jobs (rows: skill,
    first job, one past the last), and the thread each runs on.

    A skill's jobs form one unit (all stream its data together) when there are at least as many
    skills as threads; otherwise a skill's jobs are split into up to ``n_threads // n_skills``
    units so that every thread has work.  Units go to threads largest first, each to the least
    loaded (cost: the skill's responses times the unit's jobs).  Jobs must be grouped by skill.
    """
    n_jobs = job_skill.shape[0]
    job_lo = np.zeros(n_skills + 1, dtype=np.int64)
    for j in range(n_jobs):
        if j > 0 and job_skill[j] < job_skill[j - 1]:
            raise ValueError("em_together: jobs must be grouped by skill (job_skill sorted)")
        job_lo[job_skill[j] + 1] += 1
    for k in range(n_skills):
        job_lo[k + 1] += job_lo[k]
    split = max(1, n_threads // max(n_skills, 1))
    units = np.empty((n_jobs, 3), dtype=np.int64)
    n_u = 0
    for k in range(n_skills):
        n_k = job_lo[k + 1] - job_lo[k]
        parts = min(n_k, split)
        for q in range(parts):  # the larger units first (5 jobs in 2: 3 and 2)
            units[n_u, 0] = k
            units[n_u, 1] = job_lo[k] + (n_k * q + parts - 1) // parts
            units[n_u, 2] = job_lo[k] + (n_k * (q + 1) + parts - 1) // parts
            n_u += 1
    units = units[:n_u]
    cost = np.empty(n_u)
    for u in range(n_u):
        cost[u] = skill_size[units[u, 0]] * (units[u, 2] - units[u, 1])
    thread = np.empty(n_u, dtype=np.int64)
    load = np.zeros(n_threads)
    for u in np.argsort(-cost, kind="mergesort"):
        t = np.argmin(load)
        thread[u] = t
        load[t] += cost[u]
    return units, thread


def em_together(*args):
    """``em_jobs`` with the jobs of a skill streaming its data together (the same arguments, the
    jobs grouped by skill, then ``budget``: responses per block, see :func:`block_plan`).

    The jobs of a skill (split in a few units when there are fewer skills than threads, see
    :func:`em_units`) advance together, one pass over the skill's data per E-step of all of them
    (:func:`_em_group`); jobs that stop drop out of later passes.  Each job's results do not
    depend on the units or the threads.  Returns (n_jobs, 8) as ``em_jobs``.
    """
    return _em_together(*args, numba.get_num_threads())


@njit(cache=True, parallel=True)
def _em_together(
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
    budget,
    n_threads,
):
    """:func:`em_together` on ``n_threads`` threads."""
    n_jobs = inits.shape[0]
    n_skills = skill_T.shape[0]
    blocks = block_plan(bs_all, skill_bs_lo, skill_T, budget)
    blk_lo = np.zeros(n_skills + 1, dtype=np.int64)
    size = np.zeros(n_skills)
    for b in range(blocks.shape[0]):
        blk_lo[blocks[b, 0] + 1] += 1
        size[blocks[b, 0]] += blocks[b, 3]
    for k in range(n_skills):
        blk_lo[k + 1] += blk_lo[k]
    units, thread = em_units(job_skill, n_skills, size, n_threads)
    out = np.empty((n_jobs, 8))
    for t in prange(n_threads):
        for u in range(units.shape[0]):
            if thread[u] != t:
                continue
            k = units[u, 0]
            lo = units[u, 1]
            hi = units[u, 2]
            T = skill_T[k]
            bs = bs_all[skill_bs_lo[k] : skill_bs_lo[k] + T]
            _em_group(obs_tm[skill_obs_lo[k] :], bs, T, blocks[blk_lo[k] : blk_lo[k + 1]],
                      inits[lo:hi], fit_forget, bounds, max_iter, tol, accelerate,
                      out[lo:hi])  # fmt: skip
    return out
