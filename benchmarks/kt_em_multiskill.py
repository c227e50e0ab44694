"""Multi-skill BKT fit with every skill streamed vs each restart on its own (issue 22).

20 skills x 2,000 students x 30 (1.2 M responses, random true parameters, seed 3),
``BKT(n_restarts=5, seed=0).fit``, best of 3, the two paths interleaved:

* per-restart: ``BKT._PER_RESTART = True`` (each restart's EM on its own, ``em_jobs``);
* streamed: ``_STREAM_MIN_RESPONSES = 0`` (every skill's restarts stream its data together,
  ``em_together``; ``BKT`` itself streams only skills of at least 2^20 responses).

Prints both times and the largest parameter difference.

    python benchmarks/kt_em_multiskill.py [n_skills n_students n_opportunities]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from edueval.kt import BKT, random_params
from edueval.kt.bkt.model import simulate


class PerRestart(BKT):
    _PER_RESTART = True


class Streamed(BKT):
    _STREAM_MIN_RESPONSES = 0


def main(n_skills: int = 20, n_students: int = 2000, n_opportunities: int = 30) -> None:
    df = simulate(random_params(n_skills, np.random.default_rng(3)), n_students, n_opportunities, 1)
    print(f"responses {len(df):,}", flush=True)
    times: dict[str, list[float]] = {"per-restart": [], "streamed": []}
    params = {}
    for _ in range(3):
        for name, cls in (("per-restart", PerRestart), ("streamed", Streamed)):
            t = time.perf_counter()
            model = cls(n_restarts=5, seed=0).fit(df)
            times[name].append(time.perf_counter() - t)
            params[name] = model.params_.select_dtypes("number").to_numpy()
    for name, ts in times.items():
        print(f"{name:12s} best {min(ts):.3f} s  ({', '.join(f'{x:.3f}' for x in ts)})")
    diff = np.max(np.abs(params["per-restart"] - params["streamed"]))
    print(f"largest parameter difference {diff:.2g}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:4]))
