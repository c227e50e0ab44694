"""edueval's BKT against pyBKT on the same simulated data: speed and agreement.

    python benchmarks/kt_vs_pybkt.py --pybkt-python /path/to/pybkt-venv/bin/python

pyBKT runs in its own environment (see benchmarks/setup_pybkt.sh), in a subprocess, on the same
CSV; only its fit and predict calls are timed.  edueval is timed in this process after a warm-up
run (numba compiles on first use; that one-off cost is printed separately).  Both use the same
number of EM restarts.  Agreement is measured with one likelihood function for both fitted
parameter sets, and pyBKT's predictions are compared with edueval's forward filter run on
pyBKT's own parameters.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from edueval.kt import BKT, forward, random_params, simulate
from edueval.kt import _kernels as K
from edueval.kt.data import pack
from edueval.kt.params import params_matrix
from edueval.seeding import rng

HERE = Path(__file__).resolve().parent


def per_skill_loglik(df: pd.DataFrame, params: pd.DataFrame) -> pd.Series:
    seqs, _ = pack(df)
    P = params_matrix(params, seqs.skills)
    return pd.Series(
        [
            K.loglik(
                seqs.obs,
                seqs.starts,
                int(seqs.skill_starts[k]),
                int(seqs.skill_starts[k + 1]),
                P[k],
            )
            for k in range(len(seqs.skills))
        ],
        index=seqs.skills.astype(str),
    )


def assistments_style(n_skills: int, gen: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Ragged data shaped like tutor logs: skills of very different sizes, students who stop early,
    rows interleaved across skills in one global ``order_id``."""
    truth = random_params(n_skills, gen)
    parts = []
    for k, _skill in enumerate(truth.index):
        n_students = int(gen.integers(50, 1500))
        sim = simulate(truth.iloc[[k]], n_students, 40, seed=int(gen.integers(1 << 31)))
        length = np.minimum(gen.geometric(1 / 9, n_students) + 1, 40)
        keep = sim["order"].to_numpy() <= np.repeat(length, 40)
        sim = sim[keep]
        sim["student"] = (
            "u"
            + pd.Series(gen.permutation(3000)[:n_students])
            .astype(str)
            .to_numpy()[sim["student"].str[1:].astype(int).to_numpy()]
        )
        parts.append(sim)
    df = pd.concat(parts, ignore_index=True).sample(
        frac=1.0, random_state=int(gen.integers(1 << 31))
    )
    df = df.sort_values(["student", "skill", "order"], kind="stable")
    df = df.sample(frac=1.0, random_state=1).reset_index(drop=True)
    # one global order: time increases with (order within sequence) for each student
    df["order_id"] = df.groupby("student").cumcount()
    df = df.sort_values(["student", "skill", "order"], kind="stable")
    df["order_id"] = np.arange(len(df))
    df = df.sample(frac=1.0, random_state=2).reset_index(drop=True)
    return df, truth


def run(args: argparse.Namespace) -> dict:
    gen = rng(args.seed)
    if args.data == "simulated":
        truth = random_params(args.skills, gen)
        df = simulate(truth, args.students, args.opportunities, seed=args.seed + 1)
        df["order_id"] = np.arange(len(df))
    else:
        df, truth = assistments_style(args.skills, gen)
    bk = df.rename(columns={"student": "user_id", "skill": "skill_name"})[
        ["order_id", "user_id", "skill_name", "correct"]
    ]
    ours_df = df[["student", "skill", "order", "correct"]]
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "data.csv"
        bk.to_csv(csv, index=False)
        cmd = [
            args.pybkt_python,
            str(HERE / "_pybkt_runner.py"),
            str(csv),
            tmp,
            str(args.restarts),
            str(args.seed),
            str(args.repeats),
        ]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True)
        pybkt_wall = time.perf_counter() - t0
        pb_params = pd.read_csv(Path(tmp) / "params.csv").set_index("skill")
        pb_params.index = pb_params.index.astype(str)
        pb_pred = np.load(Path(tmp) / "predictions.npz")
        pb_time = json.loads((Path(tmp) / "timing.json").read_text())

    t0 = time.perf_counter()
    BKT(n_restarts=args.restarts, seed=args.seed).fit(ours_df.iloc[:2000])
    BKT(n_restarts=1).fit(ours_df.iloc[:2000]).predict(ours_df.iloc[:2000])
    warmup = time.perf_counter() - t0
    fit_times, predict_times = [], []
    for r in range(args.repeats):
        model = BKT(n_restarts=args.restarts, seed=args.seed + r)
        t0 = time.perf_counter()
        model.fit(ours_df)
        fit_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        model.predict(ours_df)
        predict_times.append(time.perf_counter() - t0)

    ll_ours = per_skill_loglik(ours_df, model.params_)
    ll_pb = per_skill_loglik(ours_df, pb_params)
    rel = (ll_pb - ll_ours) / ll_ours.abs()  # > 0: pyBKT's likelihood is higher
    cols = ["prior", "learn", "guess", "slip"]
    diff = (model.params_.loc[pb_params.index, cols] - pb_params[cols]).abs()
    err_ours = (model.params_.loc[truth.index, cols] - truth[cols]).abs()
    err_pb = (pb_params.loc[truth.index.astype(str), cols] - truth[cols].to_numpy()).abs()
    # pyBKT's predictions (rows in file order) against our filter with pyBKT's parameters
    ours_on_pb = forward(ours_df, pb_params)
    pred_diff = np.abs(ours_on_pb["p_correct"].to_numpy() - pb_pred["correct_predictions"]).max()

    fit_o, fit_p = min(fit_times), min(pb_time["fit"])
    pr_o, pr_p = min(predict_times), min(pb_time["predict"])
    res = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        "data": args.data,
        "n_responses": int(len(df)),
        "n_skills": int(df["skill"].nunique()),
        "restarts": args.restarts,
        "repeats": args.repeats,
        "edueval_fit_s": fit_o,
        "pybkt_fit_s": fit_p,
        "fit_speedup": fit_p / fit_o,
        "edueval_predict_s": pr_o,
        "pybkt_predict_s": pr_p,
        "predict_speedup": pr_p / pr_o,
        "edueval_first_call_compile_s": warmup,
        "pybkt_subprocess_wall_s": pybkt_wall,
        "loglik_rel_pybkt_minus_ours_max": float(rel.max()),
        "loglik_rel_pybkt_minus_ours_median": float(rel.median()),
        "skills_where_pybkt_higher_by_1e-6": int((rel > 1e-6).sum()),
        "param_absdiff_vs_pybkt_median": diff.median().to_dict(),
        "param_absdiff_vs_pybkt_max": diff.max().to_dict(),
        "recovery_abs_error_median_edueval": err_ours.median().to_dict(),
        "recovery_abs_error_median_pybkt": err_pb.median().to_dict(),
        "predict_maxabs_diff_same_params": float(pred_diff),
        "edueval_mean_estep_count": float(model.n_iter_.mean()),
    }
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--pybkt-python", default=os.environ.get("PYBKT_PYTHON", "pybkt-venv/bin/python")
    )
    ap.add_argument("--data", choices=["simulated", "assistments-style"], default="simulated")
    ap.add_argument("--skills", type=int, default=20)
    ap.add_argument("--students", type=int, default=2000)
    ap.add_argument("--opportunities", type=int, default=30)
    ap.add_argument("--restarts", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()
    res = run(args)
    width = max(map(len, res))
    for k, v in res.items():
        if isinstance(v, float):
            v = f"{v:.6g}"
        elif isinstance(v, dict):
            v = ", ".join(f"{a}={b:.3g}" for a, b in v.items())
        print(f"{k:<{width}}  {v}")
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
