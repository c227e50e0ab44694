"""Issue 36 point 6: 2PL on 100,000 examinees x 100 items with 20% missing, edueval vs girth.

Each fit runs in its own process (peak memory = that process's max RSS, data included), with
BLAS limited to ``--threads`` threads (default 2).  The timed edueval fit is the whole ``fit``:
estimates, crossprod standard errors and EAP/MAP scores for every examinee (no M2/S-X2); girth's
``twopl_mml`` returns estimates only.  Run (the machine is shared: nice):

    nice -n 10 python benchmarks/irt_speed.py [--persons 100000] [--items 100] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys


def _threads() -> str:
    return sys.argv[sys.argv.index("--threads") + 1] if "--threads" in sys.argv else "2"


for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = _threads()

CHILD = r"""
import json, resource, sys, time
import numpy as np
sys.path.insert(0, "src")
from edueval.items.irt import IRT, simulate_irt
n, J, who = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(36)
a = rng.lognormal(0.0, 0.3, J); b = rng.normal(0, 1, J); d = -a * b
df, _ = simulate_irt(a, d, n_persons=n, missing=0.2, seed=36)
X = df.to_numpy()
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
if who == "edueval":
    m = IRT("2pl", se="crossprod", fit_stats=False).fit(X)
    a_hat, b_hat = m.items_["a"].to_numpy(), m.items_["b"].to_numpy()
    extra = {"loglik": m.loglik_}
else:
    import girth
    data = girth.tag_missing_data(np.where(np.isnan(X), -1, X).T.astype(int), [0, 1])
    res = girth.twopl_mml(data)
    a_hat, b_hat = np.asarray(res["Discrimination"]), np.asarray(res["Difficulty"])
    extra = {}
secs = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"who": who, "seconds": secs, "peak_MiB": peak, "data_MiB": base / 1024,
                  "rmse_a": float(np.sqrt(np.mean((a_hat - a) ** 2))),
                  "rmse_b": float(np.sqrt(np.mean((b_hat - b) ** 2))), **extra}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--persons", type=int, default=100_000)
    ap.add_argument("--items", type=int, default=100)
    ap.add_argument("--threads", default="2")
    ap.add_argument("--skip-girth", action="store_true")
    args = ap.parse_args()
    rows = []
    for who in ("edueval",) if args.skip_girth else ("edueval", "girth"):
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(args.persons), str(args.items), who],
            capture_output=True, text=True, check=False, timeout=3600,
        )  # fmt: skip
        if out.returncode != 0:
            print(who, "failed:", out.stderr.strip().splitlines()[-1:], file=sys.stderr)
            continue
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]))
    if len(rows) == 2:
        print(f"girth / edueval time: {rows[1]['seconds'] / rows[0]['seconds']:.2f}")


if __name__ == "__main__":
    main()
