"""``kt fit`` on a log larger than a worker's memory: the command on a Dask LocalCluster, with
the peak memory of every process, the time split, and a check of every skill against an
in-memory fit of that skill alone.

1. ``edueval kt fit DATA --cluster local:N:MEMORY --out OUT`` runs as a subprocess; every 0.2 s
   the resident memory of it and of each process below it (the Dask nannies and workers) is read
   with psutil, and the peak of each is printed.
2. ``results.json``'s ``timing`` gives the wall time of the counting pass and of the regroup +
   fit pass, and the task seconds spent reading, shuffling, packing and in EM.
3. With ``--verify``, the skills are read back from the dataset in batches (pyarrow filters), and
   each skill's rows are fitted alone in memory (:class:`edueval.kt.BKT`, same settings and
   seed); the largest difference from the cluster's parameters is printed (0 = identical).

Usage: python benchmarks/kt_outofcore.py DATA [--cluster local:2:3GB] [--out /tmp/kt-ooc]
       [--verify] [--batch 25]

DATA is a folder of Parquet files, e.g. from
``edueval kt simulate --format parquet --students 25000 --skills 200 --opportunities 20``
(100 M responses, 100 files of 1 M rows in time order).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import psutil


def run_sampled(cmd: list[str], every: float = 0.2) -> tuple[int, float, dict]:
    """Run ``cmd``; return its exit code, wall time and peak RSS (bytes) per process."""
    peaks: dict[int, tuple[int, str]] = {}
    start = time.perf_counter()
    proc = subprocess.Popen(cmd)
    root = psutil.Process(proc.pid)
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            try:
                procs = [root, *root.children(recursive=True)]
            except psutil.NoSuchProcess:
                break
            for p in procs:
                try:
                    rss = p.memory_info().rss
                    name = " ".join(p.cmdline()[:4])[-70:]
                except psutil.Error:
                    continue
                if rss > peaks.get(p.pid, (0, ""))[0]:
                    peaks[p.pid] = (rss, name)
            stop.wait(every)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    code = proc.wait()
    wall = time.perf_counter() - start
    stop.set()
    t.join()
    return code, wall, peaks


def verify(data: Path, params: pd.DataFrame, batch: int, restarts: int, seed: int) -> dict:
    """Fit each skill alone in memory; the largest parameter difference from ``params``."""
    import pyarrow.compute as pc
    import pyarrow.dataset as pads

    from edueval.kt import BKT

    names = ["prior", "learn", "guess", "slip", "forget"]
    ds = pads.dataset(str(data), format="parquet")
    skills = params["skill"].astype(str).tolist()
    worst, n_identical, seconds = 0.0, 0, 0.0
    for lo in range(0, len(skills), batch):
        chunk = skills[lo : lo + batch]
        t0 = time.perf_counter()
        table = ds.to_table(
            columns=["student", "skill", "correct", "order"],
            filter=pc.field("skill").isin(chunk),
        ).to_pandas()
        for skill, rows in table.groupby("skill", sort=True):
            alone = BKT(n_restarts=restarts, seed=seed).fit(rows.reset_index(drop=True))
            mine = alone.params_.loc[str(skill), names].to_numpy(float)
            theirs = params.set_index("skill").loc[str(skill), names].to_numpy(float)
            diff = float(np.max(np.abs(mine - theirs)))
            worst = max(worst, diff)
            n_identical += diff == 0.0
        seconds += time.perf_counter() - t0
        print(f"  verified {min(lo + batch, len(skills))}/{len(skills)} skills, "
              f"max |diff| so far {worst:.3g}", flush=True)  # fmt: skip
    return {"n_skills": len(skills), "max_abs_diff": worst, "n_identical": int(n_identical),
            "seconds": round(seconds, 1)}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--cluster", default="local:2:3GB")
    ap.add_argument("--out", type=Path, default=Path("/tmp/kt-ooc"))
    ap.add_argument("--restarts", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--verify", action="store_true")
    ap.add_argument("--batch", type=int, default=25)
    a = ap.parse_args()
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    exe = Path(sys.executable).with_name("edueval")
    cmd = [str(exe), "kt", "fit", str(a.data), "--cluster", a.cluster, "--out", str(a.out),
           "--overwrite", "--restarts", str(a.restarts), "--seed", str(a.seed)]  # fmt: skip
    print("$", " ".join(cmd), flush=True)
    code, wall, peaks = run_sampled(cmd)
    if code != 0:
        sys.exit(f"kt fit exited {code}")
    res = json.loads((a.out / "results.json").read_text())
    print(f"wall time {wall:.1f} s; {res['n_responses']:,} responses, {res['n_skills']} skills")
    print("timing (results.json):", json.dumps(res["timing"]))
    print("partitions:", json.dumps(res["partitions"]))
    print("peak resident memory per process:")
    for pid, (rss, name) in sorted(peaks.items(), key=lambda kv: -kv[1][0]):
        print(f"  pid {pid:>7}  {rss / 2**30:6.2f} GiB  {name}")
    if a.verify:
        params = pd.read_csv(a.out / "params.csv", dtype={"skill": str})
        print("verify:", json.dumps(verify(a.data, params, a.batch, a.restarts, a.seed)))


if __name__ == "__main__":
    main()
