"""How often five EM restarts miss a skill's best optimum, with and without boundary starts.

Eight ASSISTments-style data sets (``kt_vs_pybkt.py``'s generator, seeds 1-8, 50 skills each:
400 skills) are fitted with 5 restarts under three seeds, by

* ``random``: a neutral start and four random ones (edueval's scheme before boundary starts);
* ``default``: edueval's scheme - a neutral start, one near guess = 0, one near slip = 0, two
  random ones;

and compared with the best of 200 restarts (``max_iter`` 3,000).  A miss is a skill whose
log-likelihood is below the reference by more than 1e-6 (1e-5) relative.  Last, both schemes'
EM time (``fit_sequences``, best of 15, interleaved) on ``kt_vs_pybkt.py``'s default
ASSISTments-style data (20 skills, seed 7).

Usage: python benchmarks/kt_restarts.py [--forgets]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kt_vs_pybkt import assistments_style  # noqa: E402

from edueval.kt import BKT  # noqa: E402
from edueval.kt.data import pack  # noqa: E402
from edueval.seeding import rng  # noqa: E402


class RandomStarts(BKT):
    """edueval's BKT with its earlier starting points: the neutral one, then random ones."""

    BOUNDARY_STARTS = False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--forgets", action="store_true", help="data with forgetting, fit forget")
    args = ap.parse_args()
    frames = []
    for seed in range(1, 9):
        df, _ = assistments_style(50, rng(seed), 0.1 if args.forgets else 0.0)
        df = df[["student", "skill", "correct"]].assign(order=df["order_id"])
        df["skill"] = f"s{seed}_" + df["skill"]
        frames.append(df)
    seqs, _ = pack(pd.concat(frames, ignore_index=True))
    ref = (
        BKT(n_restarts=200, seed=99, forgets=args.forgets, max_iter=3000)
        .fit_sequences(seqs)
        .log_likelihood
    )
    print(f"{len(seqs.skills)} skills, {seqs.n_responses:,} responses, forgets={args.forgets}")
    for name, cls in (("random", RandomStarts), ("default", BKT)):
        counts, worst = [], 0.0
        for s in range(3):
            ll = cls(n_restarts=5, seed=s, forgets=args.forgets).fit_sequences(seqs).log_likelihood
            rel = (ref - ll) / ref.abs()
            counts.append((int((rel > 1e-6).sum()), int((rel > 1e-5).sum())))
            worst = max(worst, float(rel.max()))
        print(
            f"{name:8s} misses > 1e-6 {[c[0] for c in counts]}, > 1e-5 {[c[1] for c in counts]}"
            f" (seeds 0-2); largest gap {worst:.2e}"
        )
    df, _ = assistments_style(20, rng(7), 0.1 if args.forgets else 0.0)
    seqs, _ = pack(df[["student", "skill", "correct"]].assign(order=df["order_id"]))
    best = {"random": np.inf, "default": np.inf}
    steps = {}
    for _ in range(15):
        for name, cls in (("random", RandomStarts), ("default", BKT)):
            t0 = time.perf_counter()
            res = cls(n_restarts=5, seed=7, forgets=args.forgets).fit_sequences(seqs)
            best[name] = min(best[name], time.perf_counter() - t0)
            steps[name] = int(res.restarts["n_iter"].sum())
    for name in best:
        print(f"EM time, 20 skills: {name:8s} {best[name] * 1e3:.1f} ms, {steps[name]} E-steps")


if __name__ == "__main__":
    main()
