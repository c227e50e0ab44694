"""edueval's BKT against pyBKT on the same data: speed and agreement.

    PYBKT_PYTHON=pybkt-venv/bin/python python benchmarks/kt_vs_pybkt.py [--data assistments-style]
        [--forgets] [--repeats 3] [--json out.json] [--per-skill-csv out.csv]
    PYBKT_PYTHON=... python benchmarks/kt_vs_pybkt.py --file skill_builder_data.csv \
        --encoding latin-1 --skip-no-skill --only original=1

pyBKT runs in its own environment (see benchmarks/setup_pybkt.sh), in a subprocess, on the same
CSV; only its fit and predict calls are timed.  edueval is timed in this process after a warm-up
run (numba compiles, or loads its cache, on first use; that one-off cost is printed separately).
Both use the same number of EM restarts and both order every student x skill sequence by the
same global ``order_id``.  Agreement is measured with one likelihood function (edueval's) for
both fitted parameter sets, and pyBKT's predictions are compared with edueval's forward filter
run on pyBKT's own parameters.  Times are the best of ``--repeats`` runs (seeds ``seed``,
``seed + 1``, ...); the agreement figures compare the two tools' fits of the last repeat.
Where their parameters differ by more than 0.05, edueval's EM is re-run from pyBKT's parameters
(clipped into edueval's bounds) to tell whether pyBKT stopped early on the way to the same
optimum or sits in another one.

Data:

* ``simulated``: every student answers every skill ``--opportunities`` times (rectangular).
* ``assistments-style``: shaped like tutor logs -- skills of very different sizes (log-uniform
  number of students), sequences of geometric length (many short ones), students shared across
  skills, one global ``order_id`` interleaving each student's skills (and all students) in time,
  rows shuffled.

* ``--file PATH``: your own response file (e.g. ASSISTments' skill-builder export), read by
  edueval's reader with the ``kt`` commands' options (``--encoding``, ``--only COLUMN=VALUE``,
  ``--skip-no-skill``; pyBKT's column names are recognised); skills with fewer than
  ``--min-responses`` responses are left out (as ``kt fit`` does), and both tools get exactly the
  remaining rows.  Without an order column, file order is the order.  There is no ground truth,
  so the recovery figures are left out.

``--forgets`` fits the forget parameter in both tools (pyBKT's ``forgets=True``); the data are
then generated with forgetting (``--true-forget``, default uniform in [0, 0.1]).
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
from edueval.kt.bkt import _kernels as K
from edueval.kt.bkt.params import PARAM_NAMES, params_matrix
from edueval.kt.data import Columns, RowFilter, pack, read_responses, time_major
from edueval.seeding import rng

HERE = Path(__file__).resolve().parent


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        mem_kb = next(
            int(line.split()[1])
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        )
        mem = f", {mem_kb / 2**20:.0f} GiB RAM"
    except (OSError, StopIteration):
        mem = ""
    return f"{model}, {os.cpu_count()} logical CPUs{mem}, {platform.platform()}"


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


def predictive_known(df: pd.DataFrame, params: pd.DataFrame) -> np.ndarray:
    """P(known) before each response is seen (pyBKT's ``state_predictions``), in row order."""
    seqs, _ = pack(df)
    P = params_matrix(params, seqs.skills)
    out = forward(df, params)
    pk_after = out["p_known"].to_numpy()[seqs.row]  # packed order
    p = P[seqs.seq_skill[np.repeat(np.arange(seqs.n_sequences), np.diff(seqs.starts))]]
    prior, learn, forget = p[:, 0], p[:, 1], p[:, 4]
    before = np.empty(seqs.n_responses)
    before[1:] = pk_after[:-1] * (1.0 - forget[1:]) + (1.0 - pk_after[:-1]) * learn[1:]
    first = seqs.starts[:-1]
    before[first] = prior[first]
    return seqs.unpack(before)


def polish(df: pd.DataFrame, start: pd.DataFrame, model: BKT) -> pd.DataFrame:
    """Run edueval's EM (settings of ``model``, one run) from the parameters ``start``."""
    seqs, _ = pack(df)
    tm = time_major(seqs)
    bounds = model._bounds()
    init = params_matrix(start, seqs.skills)
    out = K.em_jobs(
        tm.obs,
        tm.obs_lo,
        tm.bs_lo,
        tm.T,
        tm.bs,
        np.arange(len(seqs.skills), dtype=np.int64),
        np.ascontiguousarray(init),
        bool(model.forgets),
        bounds,
        int(model.max_iter),
        float(model.tol),
        bool(model.accelerate),
    )
    return pd.DataFrame(out[:, :6], index=seqs.skills.astype(str), columns=[*PARAM_NAMES, "loglik"])


def assistments_style(
    n_skills: int, gen: np.random.Generator, true_forget: float
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Ragged data shaped like tutor logs (see the module docstring)."""
    truth = random_params(n_skills, gen, forget=(0.0, true_forget) if true_forget > 0 else None)
    pool = 4000
    max_len = 60
    parts = []
    for k in range(n_skills):
        n_students = int(round(np.exp(gen.uniform(np.log(20), np.log(2500)))))
        sim = simulate(truth.iloc[[k]], n_students, max_len, seed=int(gen.integers(1 << 31)))
        length = np.minimum(gen.geometric(1 / 10, n_students), max_len)
        sim = sim[sim["order"].to_numpy() <= np.repeat(length, max_len)]
        ids = gen.choice(pool, size=n_students, replace=False)
        sim["student"] = np.char.add("u", ids.astype(str))[sim["student"].str[1:].astype(int)]
        parts.append(sim)
    df = pd.concat(parts, ignore_index=True)  # grouped by skill, student; in order within
    # one global clock: each response gets a random time, sorted within its sequence so that the
    # sequence keeps its order; order_id ranks all responses (all students, all skills) by time
    seq = df["skill"] + "|" + df["student"]
    new = np.r_[True, seq.to_numpy()[1:] != seq.to_numpy()[:-1]]
    seq_id = np.cumsum(new)
    ts = gen.random(len(df))
    df["ts"] = ts[np.lexsort((ts, seq_id))]
    df["order_id"] = np.argsort(np.argsort(df["ts"].to_numpy(), kind="stable"), kind="stable")
    df = df.drop(columns="ts").sample(frac=1.0, random_state=int(gen.integers(1 << 31)))
    return df.reset_index(drop=True), truth


def load_file(args: argparse.Namespace) -> pd.DataFrame:
    """A user's response file as ``student, skill, correct, order_id`` (selected rows only)."""
    only = tuple(tuple(item.split("=", 1)) for item in args.only)
    df, seqs, cols = read_responses(
        args.file,
        Columns(),
        encoding=args.encoding,
        rows=RowFilter(only=only, skip_no_skill=args.skip_no_skill),
    )
    out = pd.DataFrame(
        {
            "student": seqs.students[np.repeat(np.arange(seqs.n_sequences), np.diff(seqs.starts))],
            "skill": seqs.skills[seqs.seq_skill][
                np.repeat(np.arange(seqs.n_sequences), np.diff(seqs.starts))
            ],
            "correct": seqs.obs.astype(int),
        }
    )
    # one global order: the file's order column (or file position) of each packed response
    if cols.order in df.columns:
        order = pd.to_numeric(df[cols.order]).to_numpy()[seqs.row]
    else:
        order = seqs.row
    out["order_id"] = np.argsort(np.argsort(order, kind="stable"), kind="stable")
    counts = out["skill"].value_counts()
    small = counts.index[counts < args.min_responses]
    if len(small):
        print(f"left out {len(small)} skills with fewer than {args.min_responses} responses")
        out = out[~out["skill"].isin(small)]
    return out.sample(frac=1.0, random_state=args.seed).reset_index(drop=True)


def run_pybkt(args: argparse.Namespace, bk: pd.DataFrame) -> tuple[pd.DataFrame, dict, dict, float]:
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "data.csv"
        bk.to_csv(csv, index=False)
        cmd = [
            args.pybkt_python,
            str(HERE / "_pybkt_runner.py"),
            str(csv),
            tmp,
            "--num-fits",
            str(args.restarts),
            "--seed",
            str(args.seed),
            "--repeats",
            str(args.repeats),
        ]
        if args.forgets:
            cmd.append("--forgets")
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True)
        wall = time.perf_counter() - t0
        params = pd.read_csv(Path(tmp) / "params.csv", dtype={"skill": str}).set_index("skill")
        pred = dict(np.load(Path(tmp) / "predictions.npz"))
        info = json.loads((Path(tmp) / "timing.json").read_text())
    return params, pred, info, wall


def run(args: argparse.Namespace) -> tuple[dict, pd.DataFrame]:
    load_before = os.getloadavg()[0]
    gen = rng(args.seed)
    true_forget = args.true_forget if args.true_forget is not None else (0.1 if args.forgets else 0)
    if args.file is not None:
        df, truth = load_file(args), None
    elif args.data == "simulated":
        truth = random_params(
            args.skills, gen, forget=(0.0, true_forget) if true_forget > 0 else None
        )
        df = simulate(truth, args.students, args.opportunities, seed=args.seed + 1)
        df["order_id"] = np.arange(len(df))
    else:
        df, truth = assistments_style(args.skills, gen, true_forget)
    bk = df.rename(columns={"student": "user_id", "skill": "skill_name"})[
        ["order_id", "user_id", "skill_name", "correct"]
    ]
    # edueval orders each sequence by the same global order_id as pyBKT
    ours_df = df[["student", "skill", "correct"]].assign(order=df["order_id"])

    pb_params, pb_pred, pb_info, pybkt_wall = run_pybkt(args, bk)

    small = ours_df.iloc[: min(2000, len(ours_df))]
    t0 = time.perf_counter()
    BKT(n_restarts=args.restarts, seed=args.seed, forgets=args.forgets).fit(small).predict(small)
    warmup = time.perf_counter() - t0
    fit_times, predict_times = [], []
    for r in range(args.repeats):
        model = BKT(n_restarts=args.restarts, seed=args.seed + r, forgets=args.forgets)
        t0 = time.perf_counter()
        model.fit(ours_df)
        fit_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        model.predict(ours_df)
        predict_times.append(time.perf_counter() - t0)

    ll_ours = per_skill_loglik(ours_df, model.params_)
    ll_pb = per_skill_loglik(ours_df, pb_params)
    rel = (ll_pb - ll_ours) / ll_ours.abs()  # > 0: pyBKT's likelihood is higher
    cols = ["prior", "learn", "guess", "slip"] + (["forget"] if args.forgets else [])
    ours_p = model.params_.loc[ll_ours.index, cols]
    pb_p = pb_params.loc[ll_ours.index, cols]
    diff = (ours_p - pb_p).abs()
    if truth is not None:
        ll_truth = per_skill_loglik(ours_df, truth)
        truth_p = truth.loc[ll_ours.index, cols]
        err_ours = (ours_p - truth_p).abs()
        err_pb = (pb_p - truth_p).abs()
    else:  # a user's file: no generating parameters
        ll_truth = pd.Series(np.nan, index=ll_ours.index)
        truth_p = pd.DataFrame(np.nan, index=ll_ours.index, columns=cols)
        err_ours = err_pb = truth_p

    seqs, _ = pack(ours_df)
    sizes = pd.DataFrame(
        {
            "n_sequences": np.diff(seqs.skill_starts),
            "n_responses": np.diff(seqs.starts[seqs.skill_starts]),
        },
        index=seqs.skills.astype(str),
    )
    per_skill = pd.concat(
        [
            sizes,
            pd.DataFrame(
                {"ll_edueval": ll_ours, "ll_pybkt": ll_pb, "ll_truth": ll_truth, "rel": rel}
            ),
            ours_p.add_suffix("_edueval"),
            pb_p.add_suffix("_pybkt"),
            truth_p.add_suffix("_truth"),
        ],
        axis=1,
    )
    per_skill.index.name = "skill"
    per_skill["edueval_n_iter"] = model.n_iter_.loc[ll_ours.index]
    per_skill["edueval_converged"] = model.converged_.loc[ll_ours.index]
    per_skill["max_param_absdiff"] = diff.max(axis=1)
    # Where the two disagree: did pyBKT stop early on the way to our optimum, or end in another
    # local optimum?  Run our EM (one run, same settings) from pyBKT's parameters and compare.
    polished = polish(ours_df, pb_params, model)
    ll_pol = per_skill_loglik(ours_df, polished)
    per_skill["rel_pybkt_polished"] = (ll_pol - ll_ours) / ll_ours.abs()
    per_skill["max_param_absdiff_polished"] = (polished[cols] - ours_p).abs().max(axis=1)
    disagree = per_skill[per_skill["max_param_absdiff"] > 0.05]
    # "same optimum": within a few EM tolerances (tol=1e-9 relative per iteration) and 0.01
    same_opt = (disagree["rel_pybkt_polished"].abs() < 1e-7) & (
        disagree["max_param_absdiff_polished"] < 1e-2
    )

    # pyBKT's predictions (rows in file order) against our filter with pyBKT's parameters
    ours_on_pb = forward(ours_df, pb_params)
    pred_diff = np.abs(ours_on_pb["p_correct"].to_numpy() - pb_pred["correct_predictions"]).max()
    state_diff = np.abs(predictive_known(ours_df, pb_params) - pb_pred["state_predictions"]).max()

    fit_o, fit_p = min(fit_times), min(pb_info["fit"])
    pr_o, pr_p = min(predict_times), min(pb_info["predict"])
    res = {
        "machine": machine(),
        "loadavg_before_after": [load_before, os.getloadavg()[0]],
        "pybkt_e_step": pb_info.get("pybkt_e_step"),
        "pybkt_numpy": pb_info.get("numpy"),
        "data": str(args.file) if args.file is not None else args.data,
        "forgets": bool(args.forgets),
        "true_forget_max": float(true_forget),
        "n_responses": int(len(df)),
        "n_skills": int(df["skill"].nunique()),
        "n_sequences": int(seqs.n_sequences),
        "responses_per_skill_min_max": [
            int(sizes["n_responses"].min()),
            int(sizes["n_responses"].max()),
        ],
        "restarts": args.restarts,
        "repeats": args.repeats,
        "edueval_fit_s": fit_o,
        "pybkt_fit_s": fit_p,
        "fit_speedup": fit_p / fit_o,
        "edueval_predict_s": pr_o,
        "pybkt_predict_s": pr_p,
        "predict_speedup": pr_p / pr_o,
        "edueval_fit_s_all": fit_times,
        "pybkt_fit_s_all": pb_info["fit"],
        "edueval_first_call_s": warmup,
        "pybkt_subprocess_wall_s": pybkt_wall,
        "loglik_edueval_total": float(ll_ours.sum()),
        "loglik_pybkt_total": float(ll_pb.sum()),
        "loglik_truth_total": float(ll_truth.sum()) if truth is not None else "n/a (no truth)",
        "loglik_rel_pybkt_minus_ours_max": float(rel.max()),
        "loglik_rel_pybkt_minus_ours_median": float(rel.median()),
        "skills_where_pybkt_higher_by_1e-9": int((rel > 1e-9).sum()),
        "skills_where_pybkt_higher_by_1e-6": int((rel > 1e-6).sum()),
        # pyBKT does not bound guess and slip; edueval keeps both below 0.5 by default
        "of_which_pybkt_outside_edueval_bounds": int(
            (
                (rel > 1e-6)
                & (
                    (pb_params.loc[rel.index, "guess"] > model.guess_max)
                    | (pb_params.loc[rel.index, "slip"] > model.slip_max)
                )
            ).sum()
        ),
        "skills_below_truth_loglik_edueval": (
            int((ll_ours < ll_truth).sum()) if truth is not None else "n/a (no truth)"
        ),
        "param_absdiff_vs_pybkt_median": diff.median().to_dict(),
        "param_absdiff_vs_pybkt_max": diff.max().to_dict(),
        "skills_with_param_absdiff_over_0.05": len(disagree),
        "of_which_pybkt_polished_reaches_ours": int(same_opt.sum()),
        "of_which_pybkt_polished_ends_lower": int((disagree["rel_pybkt_polished"] < -1e-7).sum()),
        "pybkt_polished_rel_max": float(per_skill["rel_pybkt_polished"].max()),
        "recovery_abs_error_median_edueval": (
            err_ours.median().to_dict() if truth is not None else "n/a (no truth)"
        ),
        "recovery_abs_error_median_pybkt": (
            err_pb.median().to_dict() if truth is not None else "n/a (no truth)"
        ),
        "predict_maxabs_diff_same_params": float(pred_diff),
        "state_maxabs_diff_same_params": float(state_diff),
        "edueval_mean_estep_count": float(model.n_iter_.mean()),
        "edueval_not_converged": [
            f"{k} ({int(model.n_iter_[k])} E-steps)"
            for k in model.converged_.index[~model.converged_]
        ],
    }
    return res, per_skill


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--pybkt-python", default=os.environ.get("PYBKT_PYTHON", "pybkt-venv/bin/python")
    )
    ap.add_argument("--data", choices=["simulated", "assistments-style"], default="simulated")
    ap.add_argument("--skills", type=int, default=20)
    ap.add_argument("--students", type=int, default=2000, help="simulated data only")
    ap.add_argument("--opportunities", type=int, default=30, help="simulated data only")
    ap.add_argument("--restarts", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--forgets", action="store_true", help="fit forget too (both tools)")
    ap.add_argument(
        "--true-forget",
        type=float,
        default=None,
        help="generate data with forget ~ U(0, this); default 0.1 with --forgets, else 0",
    )
    ap.add_argument("--file", type=Path, help="your own response file instead of generated data")
    ap.add_argument("--encoding", default="utf-8", help="--file's text encoding")
    ap.add_argument("--only", action="append", default=[], metavar="COLUMN=VALUE")
    ap.add_argument("--skip-no-skill", action="store_true")
    ap.add_argument("--min-responses", type=int, default=10, help="--file: smaller skills left out")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--per-skill-csv", type=Path, help="write the per-skill comparison here")
    args = ap.parse_args()
    res, per_skill = run(args)
    width = max(map(len, res))
    for k, v in res.items():
        if isinstance(v, float):
            v = f"{v:.6g}"
        elif isinstance(v, dict):
            v = ", ".join(f"{a}={b:.3g}" for a, b in v.items())
        elif isinstance(v, list):
            v = ", ".join(f"{b:.4g}" if isinstance(b, float) else str(b) for b in v) or "none"
        print(f"{k:<{width}}  {v}")
    worst = per_skill.sort_values("max_param_absdiff", ascending=False).head(5)
    show = ["n_sequences", "n_responses", "rel", "rel_pybkt_polished"]
    show += ["max_param_absdiff_polished", "ll_edueval", "ll_pybkt", "ll_truth"]
    show += [c for c in worst.columns if c.split("_")[0] in PARAM_NAMES]
    with pd.option_context("display.width", 250, "display.max_columns", 50):
        print(
            "\nskills with the largest parameter difference (rel = (ll_pybkt - ll_edueval) / |ll|):"
        )
        print(worst[show].T.to_string(float_format=lambda x: f"{x:.6g}"))
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n")
    if args.per_skill_csv:
        per_skill.to_csv(args.per_skill_csv)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
