"""Where edueval's fit and predict time goes: packing, EM, the forward filter.

Times ``pack`` (table -> sequences), ``BKT.fit`` and ``BKT.fit_sequences`` (EM on packed data),
``BKT.predict`` and ``forward_sequences`` (the filter alone) on the two data sets of
``kt_vs_pybkt.py`` (ASSISTments-style and simulated, seed 7, 5 restarts); best of 7 each.

Usage: python benchmarks/kt_time_breakdown.py
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kt_vs_pybkt import assistments_style  # noqa: E402

from edueval.kt import BKT, random_params, simulate  # noqa: E402
from edueval.kt.bkt.model import forward_sequences  # noqa: E402
from edueval.kt.bkt.params import params_matrix  # noqa: E402
from edueval.kt.data import pack  # noqa: E402
from edueval.seeding import rng  # noqa: E402


def best_ms(f, n: int = 7) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times) * 1e3


def main() -> None:
    a, _ = assistments_style(20, rng(7), 0)
    a = a[["student", "skill", "correct"]].assign(order=a["order_id"])
    s = simulate(random_params(20, rng(7)), 2000, 30, seed=8)
    s = s[["student", "skill", "correct"]].assign(order=np.arange(len(s)))
    print(f"load average {os.getloadavg()[0]:.2f}")
    for name, df in (("assistments-style", a), ("simulated", s)):
        report(name, df)


def report(name: str, df) -> None:
    model = BKT(n_restarts=5, seed=7).fit(df)
    seqs, _ = pack(df)
    P = params_matrix(model.params_, seqs.skills)
    print(
        f"{name:<18} {len(df):>9,} rows  "
        f"pack {best_ms(lambda: pack(df)):6.1f} ms  "
        f"fit {best_ms(lambda: model.fit(df)):6.1f} ms  "
        f"(EM {best_ms(lambda: model.fit_sequences(seqs)):6.1f} ms)  "
        f"predict {best_ms(lambda: model.predict(df)):6.1f} ms  "
        f"(filter {best_ms(lambda: forward_sequences(seqs, P)):5.1f} ms)"
    )


if __name__ == "__main__":
    main()
