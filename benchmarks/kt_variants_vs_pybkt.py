"""edueval's BKT variants against pyBKT's C++ build on the same data: fit time and per-skill
log-likelihood.

    PYBKT_PYTHON=pybkt-venv/bin/python python benchmarks/kt_variants_vs_pybkt.py \
        [--variants multigs,multilearn,multiprior,multipair] [--forgets both|no|yes] \
        [--skills 10] [--students 1000] [--opportunities 30] [--items 5] [--repeats 3] \
        [--json out.json] [--per-skill-csv out.csv]

For each variant (alone and with ``forgets``), responses are simulated from that variant with
known parameters (``--items`` item values per skill, drawn uniformly at each response; group
parameters drawn per skill), written to one CSV in pyBKT's column names, and fitted by both
tools with the same number of restarts (5).  pyBKT runs in its own environment in a subprocess
(``_pybkt_variant_runner.py``; only ``Model.fit`` is timed, in that process); edueval is timed in
this process after a warm-up fit (numba's one-off compile or cache load is not counted).  Times
are the best of ``--repeats`` fits (seeds seed, seed + 1, ...).

Both tools' parameters are translated to edueval's long table (group labels ``item=q3``,
``item=q1>q3``, ``first_response=1``; see the runner for pyBKT's conventions, read from its
source) and scored by one independent likelihood, :func:`loglik_numpy` below: a plain-numpy
forward algorithm over all sequences of a skill at once, sharing no code with either tool.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from edueval.kt import BKT

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from kt_vs_pybkt import machine  # noqa: E402

VARIANTS = ("multigs", "multilearn", "multiprior", "multipair")


# -- simulation --------------------------------------------------------------------------------
def simulate_variant(variant, forgets, n_skills, n_students, T, n_items, seed) -> pd.DataFrame:
    """Responses of ``n_skills`` skills, each from ``variant`` with its own group parameters."""
    g = np.random.default_rng(seed)
    frames = []
    for k in range(n_skills):
        n_t = n_items * n_items + 1 if variant == "multipair" else n_items
        learn = g.uniform(0.02, 0.35, n_t if variant in ("multilearn", "multipair") else 1)
        forget = g.uniform(0.0, 0.1, learn.shape) if forgets else np.zeros(learn.shape)
        n_e = n_items if variant == "multigs" else 1
        guess, slip = g.uniform(0.05, 0.35, n_e), g.uniform(0.05, 0.3, n_e)
        prior = g.uniform(0.1, 0.7)
        item = g.integers(0, n_items, size=(n_students, T))
        e = item if variant == "multigs" else np.zeros_like(item)
        state = g.random(n_students) < prior
        y = np.empty((n_students, T), dtype=np.int8)
        for t in range(T):
            y[:, t] = g.random(n_students) < np.where(state, 1 - slip[e[:, t]], guess[e[:, t]])
            if variant == "multilearn":
                j = item[:, t]
            elif variant == "multipair":
                j = n_items * n_items if t == 0 else item[:, t - 1] * n_items + item[:, t]
            else:
                j = 0
            u = g.random(n_students)
            state = np.where(state, u >= forget[j], u < learn[j])
        order = (np.arange(T)[None, :] * n_students + np.arange(n_students)[:, None]).ravel()
        frames.append(pd.DataFrame({
            "order_id": order + k * n_students * T,
            "user_id": np.repeat([f"u{i}" for i in range(n_students)], T),
            "skill_name": f"skill{k:02d}", "correct": y.ravel(),
            "item": np.char.add("q", item.ravel().astype(str))}))  # fmt: skip
    # multiprior: the prior classes are the first responses (pyBKT's default), nothing to add
    return pd.concat(frames, ignore_index=True)


# -- one independent likelihood ------------------------------------------------------------------
def _labels(seq_items: np.ndarray, col: str, kind: str, first_y: np.ndarray) -> np.ndarray:
    n, T = seq_items.shape
    if kind == "item":
        return np.char.add(f"{col}=", seq_items.astype(str))
    if kind == "pair":
        prev = np.concatenate([np.full((n, 1), ""), seq_items[:, :-1]], axis=1).astype(str)
        lab = np.char.add(np.char.add(np.char.add(f"{col}=", prev), ">"), seq_items.astype(str))
        lab = lab.astype(object)  # fixed-width strings would cut the label below
        lab[:, 0] = f"{col}=(first)"
        return lab
    if kind == "first":
        return np.char.add("first_response=", first_y.astype(str))
    return np.full((n, T) if kind == "*T" else n, "*")


def _lookup(table: pd.DataFrame, parameter: str, labels: np.ndarray) -> np.ndarray:
    d = table[table["parameter"] == parameter].set_index("group")["value"].to_dict()
    if "*" in d:
        return np.full(labels.shape, d["*"])
    return np.vectorize(d.__getitem__, otypes=[float])(labels)


def loglik_numpy(df: pd.DataFrame, params: pd.DataFrame, col: str = "item") -> pd.Series:
    """Per-skill log-likelihood of rectangular sequences (sorted by order_id within each
    student) under a long parameter table, by the forward algorithm in plain numpy."""
    out = {}
    for skill, d in df.groupby("skill_name"):
        d = d.sort_values(["user_id", "order_id"])
        n = d["user_id"].nunique()
        y = d["correct"].to_numpy().reshape(n, -1)
        items = d[col].to_numpy().astype(str).reshape(n, -1)
        p = params[params["skill"] == skill]
        grp = {par: set(p.loc[p["parameter"] == par, "group"]) for par in ("learn", "prior")}
        pair = any(">" in s or s.endswith("(first)") for s in grp["learn"])
        tkind = "pair" if pair else ("item" if grp["learn"] != {"*"} else "*T")
        pkind = "first" if grp["prior"] != {"*"} else "*"
        ekind = "item" if set(p.loc[p["parameter"] == "guess", "group"]) != {"*"} else "*T"
        prior = _lookup(p, "prior", _labels(items, col, pkind, y[:, 0]))
        guess = _lookup(p, "guess", _labels(items, col, ekind, y[:, 0]))
        slip = _lookup(p, "slip", _labels(items, col, ekind, y[:, 0]))
        tl = _labels(items, col, tkind, y[:, 0])
        learn = _lookup(p, "learn", tl)
        forget = _lookup(p, "forget", tl) if (p["parameter"] == "forget").any() else 0 * learn
        known = prior.astype(float)
        ll = 0.0
        for t in range(y.shape[1]):
            ek = np.where(y[:, t] == 1, 1 - slip[:, t], slip[:, t])
            eu = np.where(y[:, t] == 1, guess[:, t], 1 - guess[:, t])
            lik = known * ek + (1 - known) * eu
            ll += np.log(np.maximum(lik, 1e-300)).sum()
            post = known * ek / lik
            known = post * (1 - forget[:, t]) + (1 - post) * learn[:, t]
        out[skill] = ll
    return pd.Series(out, name="loglik")


# -- running both tools --------------------------------------------------------------------------
def run_edueval(df, variant, forgets, restarts, repeats, seed):
    ours = df.rename(columns={"user_id": "student", "skill_name": "skill", "order_id": "order"})
    kw = {"multiprior": True} if variant == "multiprior" else {variant: "item"}
    t0 = time.perf_counter()
    BKT(n_restarts=restarts, seed=seed, forgets=forgets, **kw).fit(ours.head(2000))
    warm = time.perf_counter() - t0
    times = []
    for r in range(repeats):
        model = BKT(n_restarts=restarts, seed=seed + r, forgets=forgets, **kw)
        t0 = time.perf_counter()
        model.fit(ours)
        times.append(time.perf_counter() - t0)
    return model.params_, times, warm


def run_pybkt(pybkt_python, df, variant, forgets, restarts, repeats, seed):
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "data.csv"
        df.to_csv(csv, index=False)
        cmd = [pybkt_python, str(HERE / "_pybkt_variant_runner.py"), str(csv), tmp,
               "--variant", variant, "--column", "item", "--num-fits", str(restarts),
               "--seed", str(seed), "--repeats", str(repeats)]  # fmt: skip
        if forgets:
            cmd.append("--forgets")
        subprocess.run(cmd, check=True)
        params = pd.read_csv(Path(tmp) / "params.csv", dtype={"skill": str, "group": str})
        timing = json.loads((Path(tmp) / "timing.json").read_text())
    return params, timing["fit"]


def explain(df, variant, forgets, pb, ll_ours, ll_pb):
    """On the skill where pyBKT's likelihood falls furthest below edueval's: edueval's EM (one
    run, no restarts) started from pyBKT's parameters.  Reaching edueval's answer means pyBKT
    stopped on the way to the same optimum (pyBKT 1.4's EM_fit stops after 100 iterations or
    when the log-likelihood moves by less than 1e-3 in absolute value)."""
    skill = str((ll_ours - ll_pb).idxmax())
    one = df[df["skill_name"] == skill]
    ours = one.rename(columns={"user_id": "student", "skill_name": "skill", "order_id": "order"})
    kw = {"multiprior": True} if variant == "multiprior" else {variant: "item"}
    start = pb[pb["skill"] == skill]
    m = BKT(n_restarts=1, forgets=forgets, init=start, **kw).fit(ours)
    return {
        "explain_skill": skill,
        "explain_gap": float(ll_ours[skill] - ll_pb[skill]),
        "from_pybkt_loglik_gain": float(loglik_numpy(one, m.params_)[skill] - ll_pb[skill]),
        "from_pybkt_reaches_edueval": bool(
            abs(loglik_numpy(one, m.params_)[skill] - ll_ours[skill]) < 1e-6 * abs(ll_ours[skill])
        ),
        "from_pybkt_e_steps": int(m.n_iter_[skill]),
    }


def compare(args, variant, forgets):
    df = simulate_variant(variant, forgets, args.skills, args.students, args.opportunities,
                          args.items, args.seed)  # fmt: skip
    ours, t_ours, warm = run_edueval(df, variant, forgets, args.restarts, args.repeats, args.seed)
    pb, t_pb = run_pybkt(args.pybkt_python, df, variant, forgets, args.restarts, args.repeats,
                         args.seed)  # fmt: skip
    ll_ours = loglik_numpy(df, ours)
    ll_pb = loglik_numpy(df, pb)
    diff = ll_ours - ll_pb
    gs = pb[pb["parameter"].isin(["guess", "slip"])]
    row = {
        "variant": variant + ("+forgets" if forgets else ""),
        "responses": len(df),
        "edueval_fit_s": min(t_ours),
        "pybkt_fit_s": min(t_pb),
        "ratio": min(t_pb) / min(t_ours),
        "edueval_warmup_s": warm,
        "loglik_edueval": float(ll_ours.sum()),
        "loglik_pybkt": float(ll_pb.sum()),
        "skills_pybkt_higher": int((diff < -1e-6 * ll_pb.abs()).sum()),
        "max_gain_edueval": float(diff.max()),
        "min_gain_edueval": float(diff.min()),
        "pybkt_guess_or_slip_over_half": int((gs["value"] >= 0.5).sum()),
        **explain(df, variant, forgets, pb, ll_ours, ll_pb),
    }
    per_skill = pd.DataFrame({"variant": row["variant"], "edueval": ll_ours, "pybkt": ll_pb})
    return row, per_skill


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--pybkt-python", default=os.environ.get("PYBKT_PYTHON", "pybkt-venv/bin/python")
    )
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--forgets", choices=["both", "no", "yes"], default="both")
    ap.add_argument("--skills", type=int, default=10)
    ap.add_argument("--students", type=int, default=1000)
    ap.add_argument("--opportunities", type=int, default=30)
    ap.add_argument("--items", type=int, default=5)
    ap.add_argument("--restarts", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json")
    ap.add_argument("--per-skill-csv")
    args = ap.parse_args()
    print(f"machine: {machine()}; {time.strftime('%Y-%m-%d')}; load {os.getloadavg()[0]:.2f}")
    flags = {"both": [False, True], "no": [False], "yes": [True]}[args.forgets]
    rows, skills = [], []
    for variant in args.variants.split(","):
        for forgets in flags:
            row, per_skill = compare(args, variant, forgets)
            rows.append(row)
            skills.append(per_skill)
            print(json.dumps(row), flush=True)
    table = pd.DataFrame(rows)
    print(table.to_markdown(index=False, floatfmt=".4g"))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    if args.per_skill_csv:
        pd.concat(skills).rename_axis("skill").to_csv(args.per_skill_csv)


if __name__ == "__main__":
    main()
