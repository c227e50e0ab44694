"""How close edueval's BKT kernels run to this machine's limits (a small roofline study).

    python benchmarks/kt_forward_roofline.py [--json out.json] [--quick]

Measures, on this machine:

1. memory bandwidth: a large numpy copy, and numba streaming kernels (read-only sum, triad) with
   one thread and with all cores;
2. compute ceilings: fused multiply-add throughput and division throughput of a vectorised numba
   loop on cache-resident data (one core), and the latency of one dependent floating-point add
   (to estimate the clock: Zen 3/4 add latency is 3 cycles);
3. edueval's kernels, in nanoseconds per student-opportunity (one response of one student):
   ``forward_param_sets`` (every sequence x every parameter set, as in a parameter grid) and
   ``forward_per_sequence`` (each sequence with its skill's parameters; what ``predict`` runs),
   and the E-step ``e_step_tm`` (time-major, one skill, single thread; and two skills at once);
4. for comparison, a time-major forward filter written here (vectorised across students, as the
   E-step is), to show what the sequence-major forward leaves on the table.

For each kernel it reports bytes and flops per student-opportunity (counted from the source:
an FMA is 2 flops, divisions are counted apart because they have their own, much lower,
throughput), the bandwidth and compute floors, and which one binds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numba
import numpy as np
from numba import njit, prange

from edueval.kt import random_params, simulate
from edueval.kt.bkt import _kernels as K
from edueval.kt.data import pack, time_major
from edueval.seeding import rng

GB = 1e9

# Work per student-opportunity, counted from src/edueval/kt/bkt/_kernels.py (loop-invariant terms
# such as 1 - slip hoisted).  FMA = 2 flops.
#   _filter_one: P(correct) 3 (mul + fma); _observe: 2 x (fma + mul) + add + 2 mul = 9, 1 div;
#   next L and U: 2 x (mul + fma) = 6.
FORWARD_FLOPS, FORWARD_DIVS = 18, 1
# The same work counted as floating-point instructions per lane (mul, add, FMA, max: 1 each):
# most of it is plain mul/add, which takes a whole FMA-pipe slot for one flop.
FORWARD_OPS = 14
#   e_step_tm forward: _observe 9 + next L, U 6 + running product 1 = 16 flops, 1 div (and one
#   log per 16 steps); backward: pn, qn 6, four xi 8, g and h 2, four xi sums 4, four emission
#   sums 7 = 27 flops, 2 divs.
ESTEP_FLOPS, ESTEP_DIVS = 43, 3
ESTEP_OPS = 36
# Bytes that must move per student-opportunity (arrays that scale with the number of responses;
# the per-sequence state is cache resident): forward: obs (int8) read, p_correct and p_known
# written.  E-step: obs read twice, the filtered pair (a, b) written then read back.
FORWARD_BYTES = 1 + 8 + 8
ESTEP_BYTES = 2 * 1 + 2 * 16


def best_of(fn, repeats: int) -> float:
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


# -- machine ----------------------------------------------------------------------------------
def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@njit(parallel=True, fastmath=True, cache=False)
def _sum(x):
    s = 0.0
    for i in prange(x.shape[0]):
        s += x[i]
    return s


@njit(parallel=True, cache=False)
def _triad(a, b, c, s):
    for i in prange(a.shape[0]):
        a[i] = b[i] + s * c[i]


@njit(cache=False)
def _triad_rep(a, b, c, s, reps):
    for _ in range(reps):
        for i in range(a.shape[0]):
            a[i] = b[i] + s * c[i]
        s = s * 0.5  # keeps the passes from being merged


@njit(fastmath={"contract"}, cache=False)
def _fma_peak(x, out, reps):
    # four independent chains of 8 FMAs per element (64 flops); elements are independent, so the
    # loop is vectorised across them.  Only "contract" (FMA fusion): with reassociation LLVM
    # would fold each chain into one FMA.
    for _ in range(reps):
        for i in range(x.shape[0]):
            a = x[i]
            b = a + 1.0
            c = a + 2.0
            d = a + 3.0
            for _j in range(8):
                a = a * 0.9999999 + 1e-7
                b = b * 0.9999999 + 1e-7
                c = c * 0.9999999 + 1e-7
                d = d * 0.9999999 + 1e-7
            out[i] = a + b + c + d
    return out


@njit(error_model="numpy", cache=False)  # no ZeroDivisionError branch, so it vectorises
def _div_peak(x, y, out, reps):
    for _ in range(reps):
        for i in range(x.shape[0]):
            out[i] = x[i] / y[i]
    return out


@njit(cache=False)
def _add_chain(n, c):
    # strict IEEE adds (no fastmath), so the chain cannot be reassociated: one add latency each
    x = 0.0
    for _ in range(n):
        x = x + c
    return x


def machine_limits(quick: bool) -> dict:
    n = (64 if quick else 512) * 2**20 // 8  # doubles per array
    src = np.random.default_rng(0).random(n)
    dst = np.empty_like(src)
    nbytes = src.nbytes
    reps = 3 if quick else 5
    out: dict = {"array_MiB": nbytes / 2**20}
    t = best_of(lambda: np.copyto(dst, src), reps)
    out["numpy_copy_GBps"] = 2 * nbytes / t / GB  # read + write (not counting write-allocate)
    b, c = src, np.random.default_rng(1).random(n)
    n_cores = os.cpu_count() or 1
    for threads in sorted({1, n_cores}):
        numba.set_num_threads(threads)
        t = best_of(lambda: _sum(src), reps)
        out[f"read_{threads}t_GBps"] = nbytes / t / GB
        t = best_of(lambda: _triad(dst, b, c, 0.5), reps)
        out[f"triad_{threads}t_GBps"] = 3 * nbytes / t / GB
    numba.set_num_threads(1)
    for level, nb in (("L2", 96 * 2**10), ("L3", 4 * 2**20)):  # bytes per array, 3 arrays
        k = nb // 8
        a1, b1, c1 = dst[:k], b[:k], c[:k]
        inner = max(1, (1024 * 2**20) // nb)
        t = best_of(
            lambda a1=a1, b1=b1, c1=c1, inner=inner: _triad_rep(a1, b1, c1, 0.5, inner), reps
        )
        out[f"triad_{level}_1t_GBps"] = 3 * nb * inner / t / GB
    numba.set_num_threads(n_cores)

    m = 2048  # 16 KiB per array: L1 resident
    x = np.random.default_rng(2).random(m) + 0.5
    y = np.random.default_rng(3).random(m) + 0.5
    o = np.empty(m)
    r = 2000 if quick else 20000
    t = best_of(lambda: _fma_peak(x, o, r), 3)
    out["fma_Gflops_1core"] = 64 * m * r / t / 1e9
    t = best_of(lambda: _div_peak(x, y, o, r), 3)
    out["div_per_ns_1core"] = m * r / t / 1e9
    chain = 50_000_000
    t = best_of(lambda: _add_chain(chain, 1e-9), 3)
    out["dependent_add_ns"] = t / chain * 1e9
    out["clock_GHz_if_add_latency_3_cycles"] = 3 / out["dependent_add_ns"]
    return out


# -- edueval's kernels ------------------------------------------------------------------------
def make_data(n_skills: int, n_students: int, n_opp: int, seed: int):
    truth = random_params(n_skills, rng(seed))
    df = simulate(truth, n_students, n_opp, seed=seed + 1)
    seqs, _ = pack(df)
    return seqs, truth


def param_sets(n_sets: int, seed: int, forget: bool = True) -> np.ndarray:
    p = random_params(n_sets, rng(seed), forget=(0.0, 0.1) if forget else None)
    return np.ascontiguousarray(p[["prior", "learn", "guess", "slip", "forget"]].to_numpy())


@njit(parallel=True, fastmath=K._FM, cache=False)
def forward_time_major(obs, obs_lo, bs_all, bs_lo, T_all, skill_p, p_correct, p_known):
    """Forward filter in the time-major layout, vectorised across students (for comparison)."""
    n_skills = T_all.shape[0]
    for k in prange(n_skills):
        T = T_all[k]
        bs = bs_all[bs_lo[k] : bs_lo[k] + T]
        prior, learn, guess, slip, forget = (
            skill_p[k, 0],
            skill_p[k, 1],
            skill_p[k, 2],
            skill_p[k, 3],
            skill_p[k, 4],
        )
        n_seq = bs[0]
        L = np.full(n_seq, prior)
        U = np.full(n_seq, 1.0 - prior)
        pos = obs_lo[k]
        for t in range(T):
            n_t = bs[t]
            ob = obs[pos : pos + n_t]
            pc = p_correct[pos : pos + n_t]
            pk = p_known[pos : pos + n_t]
            for i in range(n_t):
                pc[i] = L[i] * (1.0 - slip) + U[i] * guess
                _, a, b = K._observe(L[i], U[i], ob[i], guess, slip)
                pk[i] = a
                L[i] = a * (1.0 - forget) + b * learn
                U[i] = a * forget + b * (1.0 - learn)
            pos += n_t


@njit(parallel=True, cache=False)
def estep_many(obs_tm, obs_lo, bs_all, bs_lo, T_all, p, ll_out):
    """``e_step_tm`` on every skill, skills in parallel (each call single-threaded)."""
    for k in prange(T_all.shape[0]):
        T = T_all[k]
        bs = bs_all[bs_lo[k] : bs_lo[k] + T]
        n_obs = 0
        for t in range(T):
            n_obs += bs[t]
        n_seq = bs[0]
        obs = obs_tm[obs_lo[k] : obs_lo[k] + n_obs]
        st = np.empty(10)
        ll_out[k] = K.e_step_tm(
            obs,
            bs,
            T,
            p,
            np.empty(n_obs),
            np.empty(n_obs),
            np.empty(n_seq),
            np.empty(n_seq),
            np.empty(n_seq),
            np.empty(n_seq),
            np.empty(n_seq),
            st,
        )


L2_BYTES = 1 * 2**20  # per core on this machine (lscpu: 2 MiB in 2 instances)
L3_BYTES = 32 * 2**20


def floors(
    ns: float,
    nbytes: float,
    flops: float,
    ops: float,
    divs: float,
    lim: dict,
    threads: int,
    working_set: float,
) -> dict:
    """Bandwidth and compute floors (ns per student-opportunity) and the fraction reached.

    The bandwidth floor uses the triad bandwidth of the level the working set fits in (L2, L3
    -- one core -- or memory); the flop floor counts an FMA as 2 flops at the FMA peak (an
    optimistic floor); the FP-op floor puts every mul/add/FMA lane-op on the FMA pipes at half
    that rate (a pessimistic one: the core also has separate add pipes).
    """
    if working_set <= L2_BYTES * threads:
        level, bw = "L2", lim["triad_L2_1t_GBps"] * threads
    elif working_set <= L3_BYTES:
        level, bw = "L3", lim["triad_L3_1t_GBps"] * threads
    else:
        level, bw = "DRAM", lim[f"triad_{threads}t_GBps"]
    f_bw = nbytes / bw  # GB/s = bytes/ns
    f_flop = flops / (lim["fma_Gflops_1core"] * threads)
    f_ops = ops / (lim["fma_Gflops_1core"] / 2 * threads)
    f_div = divs / (lim["div_per_ns_1core"] * threads)
    # divisions run on their own unit, beside the FMA pipes: the compute floor is the larger one
    limit = max(f_bw, f_flop, f_div)
    return {
        "ns": ns,
        "working_set_MiB": working_set / 2**20,
        "bandwidth_level": level,
        "bytes": nbytes,
        "flops": flops,
        "fp_ops": ops,
        "divs": divs,
        "GBps": nbytes / ns,
        "Gflops": flops / ns,
        "floor_bandwidth_ns": f_bw,
        "floor_flops_ns": f_flop,
        "floor_fp_ops_ns": f_ops,
        "floor_divs_ns": f_div,
        "fraction_of_limit": limit / ns,
        "bound_by": max(
            (f_bw, "bandwidth"), (f_flop, "flops"), (f_div, "divisions"), key=lambda z: z[0]
        )[1],
    }


def kernels(lim: dict, quick: bool) -> dict:
    n_cores = os.cpu_count() or 1
    reps = 3 if quick else 7
    res: dict = {}

    # forward over a parameter grid and per sequence: 100 skills x 1000 students x 30
    n_skills, n_students, n_opp, n_sets = (20, 500, 30, 4) if quick else (100, 1000, 30, 16)
    seqs, _ = make_data(n_skills, n_students, n_opp, 11)
    n_obs = seqs.n_responses
    shape = f"{n_skills} skills x {n_students} students x {n_opp}"
    P = param_sets(n_sets, 12)
    pc = np.empty((n_sets, n_obs))
    pk = np.empty((n_sets, n_obs))
    ws = n_obs * (1 + 16 * n_sets)
    for threads in sorted({1, n_cores}):
        numba.set_num_threads(threads)
        t = best_of(lambda: K.forward_param_sets(seqs.obs, seqs.starts, P, pc, pk), reps)
        res[f"forward_param_sets_{threads}t"] = {
            "shape": f"{shape} x {n_sets} parameter sets",
            **floors(
                t / (n_obs * n_sets) * 1e9,
                FORWARD_BYTES,
                FORWARD_FLOPS,
                FORWARD_OPS,
                FORWARD_DIVS,
                lim,
                threads,
                ws,
            ),
        }
    pc = pk = None  # free the grid outputs

    Pk = param_sets(n_skills, 13)
    pc1 = np.empty(n_obs)
    pk1 = np.empty(n_obs)
    tm = time_major(seqs)
    pct = np.empty(n_obs)
    pkt = np.empty(n_obs)
    ws = n_obs * 17
    fwd = (FORWARD_BYTES, FORWARD_FLOPS, FORWARD_OPS, FORWARD_DIVS, lim)
    for threads in sorted({1, n_cores}):
        numba.set_num_threads(threads)
        t = best_of(
            lambda: K.forward_per_sequence(seqs.obs, seqs.starts, Pk, seqs.seq_skill, pc1, pk1),
            reps,
        )
        res[f"forward_per_sequence_{threads}t"] = {
            "shape": shape,
            **floors(t / n_obs * 1e9, *fwd, threads, ws),
        }

        def fwd_tm(tm=tm, pct=pct, pkt=pkt):
            forward_time_major(tm.obs, tm.obs_lo, tm.bs, tm.bs_lo, tm.T, Pk, pct, pkt)

        t = best_of(fwd_tm, reps)
        res[f"forward_time_major_{threads}t"] = {
            "shape": shape + " (data already in time-major order)",
            **floors(t / n_obs * 1e9, *fwd, threads, ws),
        }
    # the time-major forward gives the same numbers, in time-major positions
    res["forward_time_major_maxabs_diff_vs_per_sequence"] = max(
        float(np.abs(pct[tm.position] - pc1).max()), float(np.abs(pkt[tm.position] - pk1).max())
    )

    # serial dependence: one long sequence has nothing to overlap, so its time per step is the
    # latency of one filter step (P(known) at t+1 needs the division of step t)
    numba.set_num_threads(1)
    n_long = min(n_obs, 3_000_000)
    one = np.zeros(1, dtype=np.int64)
    long_starts = np.array([0, n_long], dtype=np.int64)
    pcl = np.empty(n_long)
    pkl = np.empty(n_long)
    t = best_of(
        lambda: K.forward_per_sequence(seqs.obs[:n_long], long_starts, Pk[:1], one, pcl, pkl),
        reps,
    )
    res["forward_one_long_sequence_1t"] = {
        "shape": f"1 sequence x {n_long} steps",
        **floors(t / n_long * 1e9, *fwd, 1, n_long * 17),
    }
    t = best_of(lambda: time_major(seqs), 3)
    res["time_major_layout_numpy_ns"] = t / n_obs * 1e9
    numba.set_num_threads(n_cores)

    # E-step: one skill of several sizes (single thread), then all skills (skills in parallel)
    est = (ESTEP_BYTES, ESTEP_FLOPS, ESTEP_OPS, ESTEP_DIVS, lim)
    p = np.array([0.3, 0.1, 0.2, 0.1, 0.02])
    sizes = [(1000, 30), (2000, 30), (20000, 30)] if not quick else [(1000, 30), (5000, 30)]
    for n_st, n_t in sizes:
        s1, _ = make_data(1, n_st, n_t, 21)
        tm1 = time_major(s1)
        T = int(tm1.T[0])
        bs = tm1.bs[:T]
        m, ns_ = len(tm1.obs), int(bs[0])
        bufs = [np.empty(m), np.empty(m)] + [np.empty(ns_) for _ in range(5)]
        st = np.empty(10)

        def one_estep(tm1=tm1, bs=bs, T=T, bufs=bufs, st=st):
            K.e_step_tm(tm1.obs, bs, T, p, *bufs, st)

        t = best_of(one_estep, 3 * reps)
        res[f"e_step_tm_{n_st}x{n_t}_1t"] = {
            "shape": f"1 skill x {n_st} students x {n_t}",
            **floors(t / m * 1e9, *est, 1, m * 17 + ns_ * 40),
        }
    ll = np.empty(len(tm.T))
    per_skill_ws = n_students * n_opp * 17 + n_students * 40
    for threads in sorted({1, n_cores}):
        numba.set_num_threads(threads)
        t = best_of(lambda: estep_many(tm.obs, tm.obs_lo, tm.bs, tm.bs_lo, tm.T, p, ll), reps)
        res[f"e_step_tm_all_skills_{threads}t"] = {
            "shape": shape + " (skills in parallel)",
            **floors(t / n_obs * 1e9, *est, threads, per_skill_ws * threads),
        }
    numba.set_num_threads(n_cores)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    args = ap.parse_args()
    load_before = os.getloadavg()
    lim = machine_limits(args.quick)
    kern = kernels(lim, args.quick)
    res = {
        "machine": f"{cpu_model()}, {os.cpu_count()} logical CPUs, {platform.platform()}",
        "numba": numba.__version__,
        "numpy": np.__version__,
        "loadavg_before_after": [load_before[0], os.getloadavg()[0]],
        "limits": lim,
        "kernels": kern,
    }
    print(res["machine"], "| numba", res["numba"], "| numpy", res["numpy"])
    print("1-min load average before / after: {:.2f} / {:.2f}".format(*res["loadavg_before_after"]))
    print("\nmachine limits")
    for k, v in lim.items():
        print(f"  {k:<36} {v:10.3f}")
    print("\nkernels, per student-opportunity (floors in ns: bandwidth = bytes / triad GB/s,")
    print("flops / FMA peak, FP ops / (FMA peak / 2), divisions / division rate;")
    print("fraction = largest of the bandwidth, flop and division floors / measured)")
    head = f"  {'kernel':<34} {'ns':>7} {'GB/s':>6} {'Gflop/s':>8} {'bw floor':>13}"
    head += f" {'flop fl.':>8} {'FP-op fl.':>9} {'div fl.':>8} {'fraction':>9}  largest floor"
    print(head)
    for k, v in res["kernels"].items():
        if not isinstance(v, dict):
            print(f"  {k:<34} {v:.4g}")
            continue
        print(
            f"  {k:<34} {v['ns']:7.3f} {v['GBps']:6.2f} {v['Gflops']:8.2f}"
            f" {v['floor_bandwidth_ns']:8.3f} {v['bandwidth_level']:>4}"
            f" {v['floor_flops_ns']:8.3f} {v['floor_fp_ops_ns']:9.3f} {v['floor_divs_ns']:8.3f}"
            f" {v['fraction_of_limit']:9.1%}  {v['bound_by']}"
        )
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n")


if __name__ == "__main__":
    main()
