"""End to end from a file: ``edueval kt fit`` / ``kt predict`` against pyBKT's ``fit`` / ``predict``.

Where ``kt_vs_pybkt.py`` times the library calls on data already in memory, this times what a
user waits for: a fresh process that starts Python, imports the tool, reads the CSV, fits (or
predicts) and writes its output.  edueval runs its command line (run directory, report and, for
predict, every row's predictions as CSV); pyBKT runs a short script calling ``Model.fit`` /
``Model.predict`` on the file and writing its parameters (or predictions) as CSV.  Both get the
same ASSISTments-style file (see ``kt_vs_pybkt.py``) and 5 restarts; best of ``--repeats``.

Usage::

    PYBKT_PYTHON=pybkt-venv/bin/python python benchmarks/kt_cli_vs_pybkt.py --repeats 5
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from kt_vs_pybkt import assistments_style, machine  # noqa: E402

from edueval.seeding import rng  # noqa: E402

PYBKT_SCRIPT = textwrap.dedent(
    """
    import sys
    from pyBKT.models import Model
    what, data, params_or_out, out = sys.argv[1:5]
    m = Model(seed=1, num_fits=5, parallel=True)
    m.fit(data_path=data)
    if what == "fit":
        m.params().to_csv(out)
    else:
        m.predict(data_path=data).to_csv(out)
    """
)


def best_wall(cmd: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--pybkt-python", default=os.environ.get("PYBKT_PYTHON", "pybkt-venv/bin/python")
    )
    ap.add_argument("--skills", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    df, _ = assistments_style(args.skills, rng(args.seed), 0)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        data = tmp / "data.csv"
        df.rename(columns={"student": "user_id", "skill": "skill_name"})[
            ["order_id", "user_id", "skill_name", "correct"]
        ].to_csv(data, index=False)
        script = tmp / "pybkt_run.py"
        script.write_text(PYBKT_SCRIPT)
        edueval = [sys.executable, "-m", "edueval", "kt"]
        # warm caches (numba's compiled kernels, the file in the page cache) before timing
        subprocess.run([*edueval, "fit", str(data), "--out", str(tmp / "fit")], check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        params = tmp / "fit" / "params.csv"
        load = os.getloadavg()[0]
        ours_fit = best_wall([*edueval, "fit", str(data), "--out", str(tmp / "f")], args.repeats)
        ours_pred = best_wall(
            [*edueval, "predict", str(data), "--params", str(params), "--out", str(tmp / "p")],
            args.repeats,
        )
        pb = [args.pybkt_python, str(script)]
        pb_fit = best_wall([*pb, "fit", str(data), "-", str(tmp / "pb.csv")], args.repeats)
        pb_fit_pred = best_wall([*pb, "predict", str(data), "-", str(tmp / "pb.csv")], args.repeats)
        empty = best_wall([sys.executable, "-c", "pass"], args.repeats)
    rows = {
        "machine": machine(),
        "loadavg_before_after": f"{load:.2f}, {os.getloadavg()[0]:.2f}",
        "n_responses": len(df),
        "python_start_s": empty,
        "edueval_kt_fit_s": ours_fit,
        "pybkt_fit_script_s": pb_fit,
        "fit_ratio": pb_fit / ours_fit,
        "edueval_kt_predict_s": ours_pred,
        "pybkt_fit_then_predict_script_s": pb_fit_pred,
        "pybkt_predict_part_s": pb_fit_pred - pb_fit,
    }
    width = max(map(len, rows))
    for k, v in rows.items():
        print(f"{k:<{width}}  {v:.3f}" if isinstance(v, float) else f"{k:<{width}}  {v}")


if __name__ == "__main__":
    main()
