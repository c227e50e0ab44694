"""Benchmark: ``turing simulate`` at the paper's size (100 students x 25 MCQs), 1,000 replications.

Times the vectorised simulation (students, Phase-1 tuples, the three AIs, the human, every choice,
and the batched tests for both SE kinds) and, as the anchor, the same analysis done the ordinary
way - statsmodels ``mcnemar`` + ``ttost_paired`` + scipy t-tests per replication on row-level data
- on a sample of replications, extrapolated to 1,000.

    /work/venv/bin/python benchmarks/turing_simulate.py [--reps 1000] [--anchor-reps 30]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.weightstats import ttost_paired

from edueval.turing.simulate import SimConfig, _chunk, build_bank, simulate_study


def anchor_per_replication(counts_rows: list[np.ndarray], eps: float, delta: float) -> float:
    """Row-level statsmodels/scipy analysis of each replication; returns seconds."""
    t0 = time.perf_counter()
    for choice in counts_rows:
        a = (choice == 1).ravel().astype(float)
        h = (choice == 2).ravel().astype(float)
        r = (choice == 3).ravel().astype(float)
        b, c = np.sum(a * (1 - h)), np.sum((1 - a) * h)
        mcnemar([[0, b], [c, len(a) - b - c]], exact=b + c < 25)
        ttost_paired(a, h, -eps, eps)
        sps.ttest_1samp(a - r - delta, 0, alternative="greater")
        sps.ttest_1samp(h - r - delta, 0, alternative="greater")
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--anchor-reps", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    cfg = SimConfig(n_students=100, n_questions=25, reps=args.reps, seed=1)
    t0 = time.perf_counter()
    bank = build_bank(cfg.frequencies, cfg.pool, np.random.default_rng(0))
    t_bank = time.perf_counter() - t0
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        res = simulate_study(cfg, bank=bank)
        times.append(time.perf_counter() - t0)
    best = min(times)
    rates = (
        res["rates"].query("se == 'clustered'").pivot(index="ai", columns="verdict", values="rate")
    )
    # anchor: per-replication row-level analysis (one AI) on a sample of replications
    out, _ = _chunk(np.random.default_rng(2), bank, cfg, args.anchor_reps, cfg.n_students)
    rows = [out["oracle"]["choice"][i] for i in range(args.anchor_reps)]
    t_anchor = anchor_per_replication(rows, cfg.eps, cfg.delta)
    anchor_1000 = t_anchor / args.anchor_reps * args.reps * 3  # three AIs
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    print(f"bank of (q, q') pairs from the mal-rule library: {t_bank:.2f} s")
    print(
        f"simulate_study, {args.reps} replications x 100 students x 25 MCQs x 3 AIs "
        f"(both SE kinds): best of {args.repeats} {best:.2f} s (all: "
        + ", ".join(f"{t:.2f}" for t in times)
        + ")"
    )
    print(
        f"anchor (statsmodels/scipy per replication, row level, 3 AIs, extrapolated from "
        f"{args.anchor_reps}): {anchor_1000:.1f} s -> ratio {anchor_1000 / best:.0f}x "
        "(analysis only; the anchor does not even simulate)"
    )
    print(rates.round(3).to_string())


if __name__ == "__main__":
    main()
