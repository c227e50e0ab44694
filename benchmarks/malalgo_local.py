"""P3 with the embedded model: 20 generated questions (80 identification prompts + 20 MCQ),
offline, in both scoring modes, no cache -- wall time and unparseable answers.

    python benchmarks/malalgo_local.py [--questions 20]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from edueval.malalgo.pipeline import run_malalgo
from edueval.misconceptions import generate_items
from edueval.models import get_model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "questions.csv"
        generate_items(args.questions, seed=args.seed).to_csv(path, index=False)
        print(f"machine: {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}")
        for scoring in ("generate", "logprob"):
            t0 = time.perf_counter()
            res = run_malalgo(
                Path(tmp) / scoring,
                path,
                model_name="local",
                scoring=scoring,
                seed=args.seed,
                open_model=lambda log_path: get_model("local", no_cache=True, log_path=log_path),
            )
            dt = time.perf_counter() - t0
            print(
                f"{scoring:9s}: {res['n_prompts']} prompts in {dt:6.1f} s "
                f"({dt / res['n_prompts']:.2f} s/prompt), unparseable {res['n_unparseable']}, "
                f"failed {res['n_failed']}, MCQ {res['mcq']['accuracy']:.2f}, "
                f"AIA {res['aia']['accuracy']:.2f}, MIA {res['mia']['accuracy']:.2f}"
            )


if __name__ == "__main__":
    main()
