"""``kt compare`` at scale: all five models on 1 M responses simulated from BKT-multigs.

Data: ``--skills`` skills x ``--students`` students x ``--opportunities`` opportunities (default
20 x 2,000 x 25 = 1,000,000 responses) from :mod:`edueval.kt.bkt.simulate_items`: at every
opportunity an item is drawn uniformly from the skill's ``--items`` items, and each item has its
own guess and slip (uniform in 0.05-0.40); prior and learn per skill from the paper's ranges.  This is the generative model of
``bkt-multigs:item`` (KT-IDEM), so that model should rank first by held-out log-likelihood.

Runs :func:`edueval.kt.commands.model_runs.compare_run` (exactly what ``edueval kt compare`` runs: 5
student folds plus the full fit for AIC/BIC, per model) and prints the time per model, the total
wall time and the ranking.

Usage: python benchmarks/kt_compare_scale.py [--students 2000] [--skills 20]
       [--opportunities 25] [--items 5] [--restarts 5] [--out /tmp/kt-compare-scale]
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import pandas as pd

from edueval.kt.bkt.params import PAPER_RANGES, random_params
from edueval.kt.bkt.simulate_items import draw_item_params, simulate_items
from edueval.kt.commands.model_runs import compare_run
from edueval.seeding import rng

MODELS = "bkt,bkt-forgets,bkt-multigs:item,afm,pfa"


def simulate_multigs(n_skills, n_students, n_opp, n_items, seed) -> pd.DataFrame:
    """BKT with guess and slip per item, by the library's item simulator (what ``kt simulate
    --items-per-skill`` runs): prior and learn per skill from the paper's ranges, each item's
    guess and slip uniform in 0.05-0.40 (0.225 +- 0.175)."""
    gen = rng(seed)
    skills = random_params(n_skills, gen, PAPER_RANGES)
    skills["guess"] = skills["slip"] = 0.225
    ip = draw_item_params(skills, n_items, gen, spread=0.175)
    return simulate_items(ip, n_students, n_opp, seed=seed + 1).drop(columns="known")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--students", type=int, default=2000)
    ap.add_argument("--skills", type=int, default=20)
    ap.add_argument("--opportunities", type=int, default=25)
    ap.add_argument("--items", type=int, default=5)
    ap.add_argument("--restarts", type=int, default=5)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "kt-compare-scale")
    a = ap.parse_args()
    df = simulate_multigs(a.skills, a.students, a.opportunities, a.items, seed=1)
    data = a.out.with_suffix(".csv")
    df.to_csv(data, index=False)
    print(f"{len(df):,} responses; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores; load {os.getloadavg()[0]:.1f}")  # fmt: skip
    times = {}
    t0 = time.perf_counter()
    res = compare_run(a.out, data, models=MODELS, n_folds=a.folds, seed=1, n_restarts=a.restarts,
                      progress=lambda spec, s: times.__setitem__(spec, s))  # fmt: skip
    wall = time.perf_counter() - t0
    table = pd.DataFrame(res["table"]).set_index("model")
    table["seconds"] = pd.Series(times)
    print(table[["loglik", "auc", "rmse", "n_params", "aic", "seconds"]].to_string())
    print(f"total wall {wall:.1f} s (reading the file included); best by held-out "
          f"log-likelihood: {res['best_by_heldout_loglik']}")  # fmt: skip


if __name__ == "__main__":
    main()
