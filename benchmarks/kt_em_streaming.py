"""EM restarts streaming a skill's data together (issue 22): before and after, in one run.

One skill of ``--small`` students and one of ``--large`` students, 20 opportunities each (100 k
and 5 M responses by default; the same true parameters: prior 0.3, learn 0.15, guess 0.2, slip
0.1, forget 0), fitted by ``BKT(n_restarts=5, seed=0)``:

* before: each restart's EM on its own (``_kernels.em_jobs``, the code path of the fit before
  issue 22, kept unchanged; ``BKT._PER_RESTART = True`` selects it);
* after: the restarts advance together, one pass over the skill's data per E-step of all of
  them, block by block (``_kernels.em_together``, the default).

Both are timed interleaved (best of ``--repeats``): ``fit`` (the response table, packing
included) and ``fit_sequences`` (the EM, on the packed sequences).  E-steps are counted over all
restarts (the ``n_iter`` column of ``result_.restarts``, which includes the best restart's
polishing), and the EM time is given per response and per response per E-step.  Last, the
parameters, log-likelihood and iterations of every restart, after against before.

With ``--accuracy``: one E-step's sums, before and after, against exact sums (``math.fsum``),
and how far today's per-restart fit itself moves on ridge restarts when only the order of the
students changes (the yardstick for the blocked fit's differences there).

Usage: python benchmarks/kt_em_streaming.py [--small 5000] [--large 250000] [--repeats 3]
           [--forgets] [--accuracy] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

import numpy as np
import pandas as pd

from edueval.kt import BKT, random_params
from edueval.kt.bkt import _kernels as K
from edueval.kt.bkt.model import simulate
from edueval.kt.data import pack, time_major
from edueval.seeding import rng

N_OPPORTUNITIES = 20
TRUE = {"prior": 0.3, "learn": 0.15, "guess": 0.2, "slip": 0.1}


class PerRestart(BKT):
    """The fit before issue 22: every restart's EM on its own (``_kernels.em_jobs``)."""

    _PER_RESTART = True


def skill_table(n_students: int, forgets: bool) -> pd.DataFrame:
    """One simulated skill: ``n_students`` x 20 responses."""
    params = {"s": {**TRUE, "forget": 0.05 if forgets else 0.0}}
    df = simulate(params, n_students, N_OPPORTUNITIES, seed=1)
    return df[["student", "skill", "order", "correct"]]


def timed(fn) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def compare(before, after) -> dict[str, float]:
    """Largest differences over every restart: parameters (absolute), log-likelihood
    (absolute and relative), iterations (count of restarts that differ)."""
    cols = ["prior", "learn", "guess", "slip", "forget"]
    rb, ra = before.restarts, after.restarts
    d_ll = np.abs(ra["log_likelihood"].to_numpy() - rb["log_likelihood"].to_numpy())
    return {
        "params_max_abs": float(np.abs(ra[cols].to_numpy() - rb[cols].to_numpy()).max()),
        "loglik_max_abs": float(d_ll.max()),
        "loglik_max_rel": float((d_ll / np.abs(rb["log_likelihood"].to_numpy())).max()),
        "n_iter_differ": int((ra["n_iter"] != rb["n_iter"]).sum()),
        "converged_differ": int((ra["converged"] != rb["converged"]).sum()),
    }


def measure(n_students: int, forgets: bool, repeats: int) -> dict:
    """Best-of-``repeats`` times of both paths on one skill, interleaved, and their agreement."""
    df = skill_table(n_students, forgets)
    n = len(df)
    seqs, _ = pack(df)
    paths = {"before": PerRestart, "after": BKT}
    best: dict[str, dict[str, float]] = {k: {"fit": np.inf, "em": np.inf} for k in paths}
    results = {}
    for _ in range(repeats):
        for name, cls in paths.items():
            t_fit, model = timed(lambda cls=cls: cls(n_restarts=5, seed=0, forgets=forgets).fit(df))
            t_em, res = timed(
                lambda cls=cls: cls(n_restarts=5, seed=0, forgets=forgets).fit_sequences(seqs)
            )
            best[name]["fit"] = min(best[name]["fit"], t_fit)
            best[name]["em"] = min(best[name]["em"], t_em)
            results[name] = res
    out: dict = {"responses": n, "students": n_students}
    for name in paths:
        e_steps = int(results[name].restarts["n_iter"].sum())
        out[name] = {
            "e_steps": e_steps,
            "fit_ns_per_response": best[name]["fit"] * 1e9 / n,
            "em_ns_per_response": best[name]["em"] * 1e9 / n,
            "em_ns_per_response_per_e_step": best[name]["em"] * 1e9 / n / e_steps,
        }
    out["agreement"] = compare(results["before"], results["after"])
    return out


def sum_accuracy(n_students: int) -> dict[str, float]:
    """One E-step's sums (the 10 statistics and the log-likelihood) on a skill of
    ``n_students`` x 20, by ``e_step_tm`` (before) and block by block (after), against exact
    sums (``math.fsum`` over each sequence's own sums): the largest relative error."""
    import math

    seqs, _ = pack(skill_table(n_students, False))
    tm = time_major(seqs)
    T, bs, obs = int(tm.T[0]), tm.bs[: int(tm.T[0])], tm.obs
    p = np.array([0.31, 0.13, 0.21, 0.09, 0.0])
    n, m = len(obs), int(bs[0])
    st = np.empty(10)
    scratch_tm = [np.empty(n), np.empty(n)] + [np.empty(m) for _ in range(5)]
    ll = K.e_step_tm(*(obs, bs, T, p, *scratch_tm, st))
    before = np.r_[st, ll]

    def by_blocks(budget: int) -> np.ndarray:
        blocks = K.block_plan(tm.bs, tm.bs_lo, tm.T, budget)
        size, width = int(blocks[:, 3].max()), int((blocks[:, 2] - blocks[:, 1]).max())
        scratch = [np.empty(size), np.empty(size)] + [np.empty(width) for _ in range(5)]
        rows = np.empty((len(blocks), 11))
        for b, (_, i0, i1, _) in enumerate(blocks):
            rows[b, 10] = K.e_step_block(*(obs, bs, T, i0, i1, p, *scratch, st))
            rows[b, :10] = st
        return rows

    exact = np.array([math.fsum(col) for col in by_blocks(1).T])
    after = np.zeros(11)
    for row in by_blocks(K.BLOCK_RESPONSES):  # in block order, as em_together adds them
        after += row
    nz = exact != 0  # forget = 0: no known -> unknown transitions
    rel = {name: np.abs((x - exact)[nz] / exact[nz]).max() for name, x in (("before", before),
           ("after", after))}  # fmt: skip
    return {"responses": n, **{k: float(v) for k, v in rel.items()}}


def reorder_spread() -> dict[str, float]:
    """How far the per-restart EM itself moves when only the order of the sums changes (the
    same responses, students renamed, so that sequences of one length change places), beside
    how far the blocked EM (blocks of 200 responses) is from it; ragged skills with ridges
    (tests/kt/test_em_restarts_together.py's data, with forgetting)."""
    truth = random_params(4, rng(5), forget=(0.0, 0.2))
    df = simulate(truth, 120, 25, seed=6)
    stop = rng(7).integers(1, 26, size=120)
    df = df[df["order"].to_numpy() <= stop[df["student"].str[1:].astype(int).to_numpy()]]
    perm = rng(0).permutation(120)
    renamed = df.assign(student=[f"s{perm[int(s[1:])]:03d}" for s in df["student"]])
    kw: dict[str, Any] = {"n_restarts": 5, "seed": 2, "forgets": True}
    base = PerRestart(**kw).fit_sequences(pack(df)[0]).restarts
    moved = PerRestart(**kw).fit_sequences(pack(renamed)[0]).restarts
    budget, K.BLOCK_RESPONSES = K.BLOCK_RESPONSES, 200
    try:
        blocked = BKT(**kw).fit_sequences(pack(df)[0]).restarts
    finally:
        K.BLOCK_RESPONSES = budget
    cols = ["prior", "learn", "guess", "slip", "forget"]

    def gap(r: pd.DataFrame) -> float:
        return float(np.abs(r[cols].to_numpy() - base[cols].to_numpy()).max())

    return {"per_restart_students_renamed": gap(moved), "blocked_200": gap(blocked)}


def report(small: dict, large: dict) -> None:
    print("| skill | path | E-steps | fit ns/response | EM ns/response | ns/response/E-step |")
    print("|---|---|---|---|---|---|")
    for label, m in (("cache-resident", small), ("memory-resident", large)):
        for name in ("before", "after"):
            r = m[name]
            print(
                f"| {label}, {m['responses']:,} responses | {name} | {r['e_steps']} | "
                f"{r['fit_ns_per_response']:.1f} | {r['em_ns_per_response']:.1f} | "
                f"{r['em_ns_per_response_per_e_step']:.2f} |"
            )
    for name in ("before", "after"):
        fit = large[name]["fit_ns_per_response"] / small[name]["fit_ns_per_response"]
        em = large[name]["em_ns_per_response"] / small[name]["em_ns_per_response"]
        print(f"{name}: per-response cost {large['responses']:,} / {small['responses']:,}: "
              f"fit {fit:.2f}x, EM {em:.2f}x")  # fmt: skip
    for m in (small, large):
        print(f"after vs before, {m['responses']:,} responses: {m['agreement']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", type=int, default=5_000, help="students of the small skill")
    ap.add_argument("--large", type=int, default=250_000, help="students of the large skill")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--forgets", action="store_true", help="data with forgetting, fit forget")
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--accuracy", action="store_true",
                    help="also: the E-step sums against exact sums, and the spread of the "
                    "per-restart fit under a reordering of the students")  # fmt: skip
    args = ap.parse_args()
    load0 = os.getloadavg()
    # compile (or load from numba's cache) both paths before timing
    warm = skill_table(200, args.forgets)
    for cls in (PerRestart, BKT):
        cls(n_restarts=5, seed=0, forgets=args.forgets).fit(warm)
    small = measure(args.small, args.forgets, args.repeats)
    large = measure(args.large, args.forgets, args.repeats)
    load1 = os.getloadavg()
    print(f"load average (1, 5, 15 min) before: {load0}, after: {load1}; "
          f"forgets={args.forgets}, repeats={args.repeats}")  # fmt: skip
    report(small, large)
    extra: dict[str, Any] = {}
    if args.accuracy:
        extra["sum_accuracy"] = [sum_accuracy(args.small), sum_accuracy(args.large)]
        extra["reorder_spread"] = reorder_spread()
        for row in extra["sum_accuracy"]:
            print(f"E-step sums, {row['responses']:,} responses, largest relative error against "
                  f"exact sums: before {row['before']:.1e}, after {row['after']:.1e}")  # fmt: skip
        print(f"parameters moved on ridges (largest, any restart): {extra['reorder_spread']}")
    if args.json:
        with open(args.json, "w") as fh:
            out = {"small": small, "large": large, "load": [load0, load1], **extra}
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
