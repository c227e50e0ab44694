"""EM whose restarts stream a skill's data together (issue 22): ``_kernels.em_together``.

The reference is the per-restart EM of before (``_kernels.em_jobs``, selected by
``BKT._PER_RESTART``), and for the E-step and a plain EM run, the textbook forward-backward of
``tests/kt/reference.py``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from edueval.kt import BKT, pack, random_params, simulate
from edueval.kt.bkt import _kernels as K
from edueval.kt.data import time_major
from edueval.seeding import rng

from . import reference as ref

PARAMS = ["prior", "learn", "guess", "slip", "forget"]


class PerRestart(BKT):
    """The fit before issue 22: each restart's EM on its own."""

    _PER_RESTART = True


class Together(BKT):
    """Every skill streamed, whatever its size (``BKT`` streams only skills of at least
    ``_STREAM_MIN_RESPONSES`` responses; these tests use small skills)."""

    _STREAM_MIN_RESPONSES = 0


def ragged(n_skills=3, n_students=60, T=15, seed=0, forget=None):
    """Skills simulated from random parameters, sequences cut to random lengths (1..T)."""
    truth = random_params(n_skills, rng(seed), forget=forget)
    df = simulate(truth, n_students, T, seed=seed + 1)
    stop = rng(seed + 2).integers(1, T + 1, size=n_students)
    keep = df["order"].to_numpy() <= stop[df["student"].str[1:].astype(int).to_numpy()]
    return df[keep].sample(frac=1.0, random_state=seed).reset_index(drop=True)


def assert_same_fit(a, b, *, tol=1e-12, accelerated=True):
    """Every restart's parameters (absolute) and log-likelihood (relative) within ``tol``;
    iterations and convergence identical.  (Not bitwise: even the per-restart fit moves by an
    ulp of the log-likelihood with the order in which numba compiles its kernels, e.g. when
    ``e_step_tm`` was called on its own first.)

    With the accelerated EM (``accelerate=True``, the default) the two summation orders' ulps
    are amplified by the extrapolation steps on some CPUs (measured on this project's 2-core VMs
    with numba 0.67 and 0.68: a restart ending near the guess boundary, same iterations, its
    parameters 1.5e-6 apart and its log-likelihood 6e-10): there both paths stop within the EM's
    own tolerance of one optimum, which is what is held -- parameters to 1e-5, log-likelihoods to
    1e-9 (the plain EM stays at ``tol``: 2e-15 found)."""
    if accelerated:
        tol_params, tol_ll = max(tol, 1e-5), max(tol, 1e-9)
    else:
        tol_params, tol_ll = tol, tol
    ra, rb = a.restarts, b.restarts
    assert ra[["skill", "restart"]].equals(rb[["skill", "restart"]])
    np.testing.assert_allclose(ra[PARAMS].to_numpy(), rb[PARAMS].to_numpy(), rtol=0,
                               atol=tol_params)  # fmt: skip
    np.testing.assert_allclose(ra["log_likelihood"], rb["log_likelihood"], rtol=tol_ll, atol=0)
    np.testing.assert_array_equal(ra["n_iter"], rb["n_iter"])
    np.testing.assert_array_equal(ra["converged"], rb["converged"])
    np.testing.assert_allclose(a.params.to_numpy(), b.params.to_numpy(), rtol=0, atol=tol_params)


def fit_both(df, block=None, monkeypatch=None, **kw):
    if block is not None:
        monkeypatch.setattr(K, "BLOCK_RESPONSES", block)
    seqs, _ = pack(df)
    return Together(**kw).fit_sequences(seqs), PerRestart(**kw).fit_sequences(seqs)


def em_kernel_args(seqs, model):
    """``em_together``'s arguments for ``model``'s restarts (all of all skills), to ``model.tol``."""
    tm = time_major(seqs)
    inits = model._initial_points(seqs.skills).reshape(-1, 5)
    job_skill = np.repeat(np.arange(len(seqs.skills), dtype=np.int64), model.n_restarts)
    head = (tm.obs, tm.obs_lo, tm.bs_lo, tm.T, tm.bs)
    tail = (model.forgets, model._bounds(), model.max_iter, model.tol, model.accelerate)
    return head, job_skill, inits, tail


def assert_each_restart_as_alone(seqs, model, block):
    """All jobs together (on 1, 2 and 7 threads' worth of units) equal each job run alone,
    bitwise: advancing together, and dropping out, changes nothing in a restart's EM."""
    head, job_skill, inits, tail = em_kernel_args(seqs, model)
    together = K._em_together(*head, job_skill, inits, *tail, block, 1)
    for n_threads in (2, 7):
        split = K._em_together(*head, job_skill, inits, *tail, block, n_threads)
        np.testing.assert_array_equal(split, together)
    for j in range(len(job_skill)):
        alone = K.em_together(*head, job_skill[j : j + 1], inits[j : j + 1], *tail, block)
        np.testing.assert_array_equal(alone[0], together[j])
    return together


def well_identified(n_students, forgets, seed):
    """One skill that EM fits without ridges (every restart reaches the same optimum)."""
    truth = pd.DataFrame([[0.3, 0.15, 0.2, 0.1, 0.05 if forgets else 0.0]], columns=PARAMS,
                         index=["a"])  # fmt: skip
    return simulate(truth, n_students, 20, seed=seed)[["student", "skill", "order", "correct"]]


@pytest.mark.parametrize("forgets", [False, True])
@pytest.mark.parametrize("block", [1, 37, None])
def test_e_step_over_blocks_matches_forward_backward(forgets, block):
    """The blocks' E-steps add up to the textbook forward-backward's statistics, whatever the
    block size (one sequence a block, blocks cutting the ragged skill anywhere, one block)."""
    df = ragged(n_skills=1, n_students=80, T=20, seed=3, forget=(0.0, 0.3) if forgets else None)
    seqs, _ = pack(df)
    tm = time_major(seqs)
    T, bs = int(tm.T[0]), tm.bs[: int(tm.T[0])]
    p = np.array([0.35, 0.2, 0.25, 0.15, 0.1 if forgets else 0.0])
    blocks = K.block_plan(tm.bs, tm.bs_lo, tm.T, block or K.BLOCK_RESPONSES)
    assert blocks[0, 1] == 0 and blocks[-1, 2] == bs[0]
    assert (blocks[1:, 1] == blocks[:-1, 2]).all() and blocks[:, 3].sum() == len(tm.obs)
    width = blocks[:, 2] - blocks[:, 1]
    if block == 1:  # a sequence a block, two of one response each
        assert ((width == 1) | ((width == 2) & (blocks[:, 3] == 2))).all()
    if block == 37:  # widths of 16, or past twice the budget (the longest sequences)
        assert ((width % 16 == 0) | (blocks[:, 3] >= 74))[:-1].all()
    got, ll, st = np.zeros(10), 0.0, np.empty(10)
    width, size = int((blocks[:, 2] - blocks[:, 1]).max()), int(blocks[:, 3].max())
    scratch = [np.empty(size), np.empty(size)] + [np.empty(width) for _ in range(5)]
    for _, i0, i1, _ in blocks:
        ll += K.e_step_block(tm.obs, bs, T, i0, i1, p, *scratch, st)
        got += st
    want, ll_ref = np.zeros(10), 0.0
    for s in range(seqs.n_sequences):
        y = seqs.obs[seqs.starts[s] : seqs.starts[s + 1]].astype(int)
        lls, gamma, xi = ref.forward_backward(y, p)
        ll_ref += lls
        want += [gamma[0, 1], 1, xi[0, 1], xi[0].sum(), xi[1, 0], xi[1].sum(),
                 (gamma[:, 0] * y).sum(), gamma[:, 0].sum(), (gamma[:, 1] * (1 - y)).sum(),
                 gamma[:, 1].sum()]  # fmt: skip
    # the forward-backward's xi rows sum over all steps, the kernel's over steps followed by a
    # transition: equal, as the last step's gamma is outside both
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert ll == pytest.approx(ll_ref, rel=1e-12)


@pytest.mark.parametrize("forgets", [False, True])
@pytest.mark.parametrize("accelerate", [True, False])
def test_skills_of_one_block_fit_as_per_restart(forgets, accelerate):
    """Ragged skills smaller than a block: every restart as the per-restart EM."""
    df = ragged(n_skills=4, n_students=120, T=25, seed=5, forget=(0.0, 0.2) if forgets else None)
    kw = dict(n_restarts=5, seed=2, forgets=forgets, accelerate=accelerate)
    new, old = fit_both(df, **kw)
    assert_same_fit(new, old, accelerated=accelerate)


@pytest.mark.parametrize("forgets", [False, True])
@pytest.mark.parametrize("seed", [0, 3])
def test_skill_of_many_blocks_fits_as_per_restart(forgets, seed, monkeypatch):
    """A skill of 20 blocks: the sums are added block by block, in another order than the
    per-restart kernel's, and the fit is the same to 1e-12 (found: 2e-14 at most)."""
    new, old = fit_both(well_identified(1000, forgets, seed), 1000, monkeypatch, n_restarts=5,
                        seed=seed, forgets=forgets)  # fmt: skip
    assert_same_fit(new, old)


@pytest.mark.parametrize("forgets", [False, True])
@pytest.mark.parametrize("block", [16, 200])
def test_restarts_together_as_each_alone(forgets, block):
    """Ragged skills cut into many blocks (ridges where EM's path is sensitive to the order
    of the sums, so that nothing short of bitwise equality would do)."""
    df = ragged(n_skills=4, n_students=120, T=25, seed=5, forget=(0.0, 0.2) if forgets else None)
    assert_each_restart_as_alone(pack(df)[0], BKT(n_restarts=5, seed=2, forgets=forgets), block)


@pytest.mark.parametrize("accelerate", [True, False])
def test_restart_stopping_early_drops_out(accelerate):
    """Restarts stop at different passes (converged, or at ``max_iter`` while others go on):
    the ones left carry on exactly as they would alone, and as before (one block)."""
    df = ragged(n_skills=2, n_students=150, T=20, seed=11)
    kw = dict(
        n_restarts=6, seed=4, accelerate=accelerate, max_iter=25 if accelerate else 30, tol=1e-11
    )
    out = assert_each_restart_as_alone(pack(df)[0], BKT(**kw), 64)
    n_iter = out[:, 6].reshape(2, 6)
    assert (n_iter.min(axis=1) < n_iter.max(axis=1)).all()  # different E-step counts per skill
    assert 0 < out[:, 7].sum() < len(out)  # some stopped at max_iter, others converged before
    new, old = fit_both(df, **kw)
    assert_same_fit(new, old, accelerated=accelerate)


def test_one_restart(monkeypatch):
    new, old = fit_both(ragged(n_skills=2, n_students=90, T=12, seed=7), n_restarts=1, seed=0)
    assert_same_fit(new, old)
    assert len(new.restarts) == 2
    new, old = fit_both(well_identified(800, False, 1), 500, monkeypatch, n_restarts=1, seed=0)
    assert_same_fit(new, old)


def test_many_skills_of_many_shapes(monkeypatch):
    """The multi-skill path: a skill of two responses, one of one sequence of 600 steps, ragged
    ones, in one call: as before with one block a skill; cut into blocks of 100 responses (the
    long sequence a block of its own), each restart bitwise as alone."""
    parts = [ragged(n_skills=3, n_students=70, T=18, seed=13)]
    truth = pd.DataFrame([[0.4, 0.2, 0.2, 0.1, 0.0]], columns=PARAMS, index=["long"])
    parts.append(simulate(truth, 1, 600, seed=3))
    tiny = pd.DataFrame({"student": ["a", "b"], "skill": ["tiny", "tiny"], "order": [1, 1],
                         "correct": [1, 0]})  # fmt: skip
    parts.append(tiny)
    df = pd.concat([p[["student", "skill", "order", "correct"]] for p in parts], ignore_index=True)
    new, old = fit_both(df, n_restarts=4, seed=9)
    assert_same_fit(new, old)
    seqs, _ = pack(df)
    tm = time_major(seqs)
    blocks = K.block_plan(tm.bs, tm.bs_lo, tm.T, 100)
    assert [1, 600] in blocks[:, 2:].tolist()  # the long skill: one block of 600 responses
    assert_each_restart_as_alone(seqs, BKT(n_restarts=4, seed=9), 100)


def plain_em(seqs, init, bounds, n_iter):
    """EM without acceleration on one skill, ``n_iter`` M-steps from ``init``: the textbook
    forward-backward, the closed-form M-step clipped to the bounds."""
    p = np.clip(init, bounds[:, 0], bounds[:, 1])
    for _ in range(n_iter):
        num, den = np.zeros(5), np.zeros(5)
        for s in range(seqs.n_sequences):
            y = seqs.obs[seqs.starts[s] : seqs.starts[s + 1]].astype(int)
            _, gamma, xi = ref.forward_backward(y, p)
            num += [gamma[0, 1], xi[0, 1], (gamma[:, 0] * y).sum(), (gamma[:, 1] * (1 - y)).sum(),
                    xi[1, 0]]  # fmt: skip
            den += [1, xi[0].sum(), gamma[:, 0].sum(), gamma[:, 1].sum(), xi[1].sum()]
        p = np.clip(num / den, bounds[:, 0], bounds[:, 1])
    return p


@pytest.mark.parametrize("forgets", [False, True])
def test_plain_em_reference(forgets):
    """``em_together`` without acceleration follows an independent EM step for step."""
    df = ragged(n_skills=1, n_students=40, T=10, seed=21, forget=(0.0, 0.2) if forgets else None)
    seqs, _ = pack(df)
    tm = time_major(seqs)
    model = BKT(forgets=forgets)
    bounds = model._bounds()
    init = np.array([[0.3, 0.1, 0.2, 0.1, 0.02 if forgets else 0.0]])
    n_iter = 12
    out = K.em_together(tm.obs, tm.obs_lo, tm.bs_lo, tm.T, tm.bs, np.zeros(1, np.int64), init,
                        forgets, bounds, n_iter, 1e-300, False, 8)  # fmt: skip
    assert out[0, 6] == n_iter and out[0, 7] == 0.0  # ran to max_iter
    # the kernel reports the point of its last E-step: n_iter - 1 M-steps from the start
    p = plain_em(seqs, init[0], bounds, n_iter - 1)
    ll = ref_loglik(seqs, p)
    np.testing.assert_allclose(out[0, :5], p, rtol=0, atol=1e-12)
    assert out[0, 5] == pytest.approx(ll, rel=1e-12)


def ref_loglik(seqs, p):
    return sum(
        ref.forward_backward(seqs.obs[seqs.starts[s] : seqs.starts[s + 1]].astype(int), p)[0]
        for s in range(seqs.n_sequences)
    )


def test_jobs_must_be_grouped_by_skill():
    df = ragged(n_skills=2, n_students=10, T=5, seed=1)
    tm = time_major(pack(df)[0])
    inits = np.tile([0.3, 0.1, 0.2, 0.1, 0.0], (2, 1))
    with pytest.raises(ValueError, match="grouped by skill"):
        K.em_together(tm.obs, tm.obs_lo, tm.bs_lo, tm.T, tm.bs, np.array([1, 0]), inits, False,
                      BKT()._bounds(), 10, 1e-9, True, 64)  # fmt: skip


def test_which_skills_stream(monkeypatch):
    """``BKT`` streams only skills of at least ``_STREAM_MIN_RESPONSES`` responses: below it
    every restart is today's per-restart fit bit for bit; a threshold between the skills' sizes
    streams the large skill (cut into blocks) and not the small one, in one fit, as before."""
    big = well_identified(400, False, 2)
    small = well_identified(150, False, 3).assign(skill="b")
    seqs, _ = pack(pd.concat([big, small], ignore_index=True))
    old = PerRestart(n_restarts=4, seed=1).fit_sequences(seqs)
    same = BKT(n_restarts=4, seed=1).fit_sequences(seqs)
    assert len(big) < BKT._STREAM_MIN_RESPONSES
    np.testing.assert_array_equal(same.restarts[PARAMS].to_numpy(), old.restarts[PARAMS].to_numpy())
    calls = []
    together, per_restart = K.em_together, K.em_jobs
    monkeypatch.setattr(K, "em_together", lambda *a: calls.append(("t", a[5])) or together(*a))
    monkeypatch.setattr(K, "em_jobs", lambda *a: calls.append(("j", a[5])) or per_restart(*a))
    monkeypatch.setattr(K, "BLOCK_RESPONSES", 500)

    class Mixed(BKT):
        _STREAM_MIN_RESPONSES = len(small) + 1

    mixed = Mixed(n_restarts=4, seed=1).fit_sequences(seqs)
    assert_same_fit(mixed, old)
    a, b = (list(seqs.skills).index(s) for s in ("a", "b"))
    assert {int(k) for kind, js in calls if kind == "t" for k in js} == {a}
    assert {int(k) for kind, js in calls if kind == "j" for k in js} == {b}
