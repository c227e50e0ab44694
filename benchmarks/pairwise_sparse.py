"""Bradley-Terry at the size of an item bank (issue 22, point 4): the likelihood over the observed
pairs against the dense pair basis it replaced.

(a) Scale: simulated studies -- one group of ``K`` agents (the items of a bank), ``N`` comparisons
    of random ordered pairs, abilities ~ N(0, 1), order effect 0.3 -- fitted with
    ``BradleyTerry(df, ties="drop").fit()`` at the library's defaults (4 chains x (1000 warm-up +
    1000 draws)).  Each fit runs in a fresh subprocess, which reports its wall time (simulation
    excluded; design, NUTS and summaries included) and its peak resident memory
    (``resource.getrusage``: the whole process, Python, JAX and the data).  "before" imports the
    implementation of ``--before`` (default ``HEAD``, extracted with ``git archive`` into a
    temporary folder), "after" the working tree.
(b) Agreement on the AI Teacher Test (``../shared/data/ai-teacher-test``, outlier raters removed,
    ties ``half``): before and after fitted with different seeds (independent runs), posterior
    mean of every ability (group x agent present) and of every group's ``alpha0``; ``z`` = the
    difference over ``sqrt(mcse_before^2 + mcse_after^2)`` (ArviZ ``mcse`` of the mean).  With
    ~600 parameters and the same posterior, ``|z|`` is ~N(0, 1): about 1.6 above 3 are expected.

Usage::

    python benchmarks/pairwise_sparse.py                       # everything (about 15 min, 2 cores)
    python benchmarks/pairwise_sparse.py --skip-before-200     # without the slow dense 200-agent fit
    python benchmarks/pairwise_sparse.py --json out.json
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

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "ai-teacher-test"


def _simulate(n_agents: int, n_comparisons: int, seed: int):
    import numpy as np
    import pandas as pd
    from scipy.special import expit

    rng = np.random.default_rng(seed)
    alpha = rng.normal(size=n_agents)
    i = rng.integers(n_agents, size=n_comparisons)
    j = (i + rng.integers(1, n_agents, size=n_comparisons)) % n_agents  # j != i, uniform
    first_wins = rng.random(n_comparisons) < expit(0.3 + alpha[i] - alpha[j])
    names = np.array([f"q{k:04d}" for k in range(n_agents)])
    df = pd.DataFrame(
        {
            "item": "bank",
            "attribute": "difficulty",
            "rater": [f"r{c}" for c in range(n_comparisons)],
            "first": names[i],
            "second": names[j],
            "outcome": np.where(first_wins, "first", "second"),
        }
    )
    return df, alpha


def _peak_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _cpu_seconds() -> float:
    """User + system CPU time of this process so far (all its threads)."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def worker_scale(n_agents: int, n_comparisons: int, seed: int, sampler: dict) -> dict:
    """One simulated fit in this process (imported from whatever ``edueval`` is on the path)."""
    import numpy as np

    import edueval
    from edueval.pairwise import BradleyTerry
    from edueval.pairwise._sampler import jax_modules

    jax_modules()
    df, alpha = _simulate(n_agents, n_comparisons, seed)
    t0, c0 = time.perf_counter(), _cpu_seconds()
    res = BradleyTerry(df, ties="drop", seed=seed).fit(**sampler)
    wall, cpu = time.perf_counter() - t0, _cpu_seconds() - c0
    est = res.abilities.sort_values("agent")["alpha_mean"].to_numpy()
    d = res.diagnostics()
    return {
        "edueval": str(Path(edueval.__file__).parent),
        "agents": n_agents,
        "comparisons": n_comparisons,
        "seconds": wall,
        "cpu_seconds": cpu,
        "sampling_seconds": d["sampling_seconds"],
        "peak_rss_mb": _peak_mb(),
        "max_rhat": d["max_rhat"],
        "min_ess_bulk": d["min_ess_bulk"],
        "n_divergent": d["n_divergent"],
        "mean_leapfrog_steps": d["mean_leapfrog_steps"],
        "corr_truth": float(np.corrcoef(est, alpha - alpha.mean())[0, 1]),
        **sampler,
    }


def worker_teacher(seed: int, sampler: dict, out: str) -> dict:
    """The AI Teacher Test fit; posterior means and their MCSE saved to ``out`` (.npz)."""
    import numpy as np
    import xarray as xr

    import edueval
    from edueval.pairwise import BradleyTerry
    from edueval.pairwise._sampler import arviz_module, jax_modules
    from edueval.pairwise.bradley_terry import group_labels
    from edueval.pairwise.comparisons import exclude_raters, read_rater_ids
    from edueval.pairwise.teacher_test import import_teacher_test

    jax_modules()
    df = import_teacher_test(DATA / "items.jsonl")
    kept, _, _ = exclude_raters(df, read_rater_ids(DATA / "outliers.yaml"))
    t0, c0 = time.perf_counter(), _cpu_seconds()
    res = BradleyTerry(kept, ties="half", seed=seed).fit(**sampler)
    wall, cpu = time.perf_counter() - t0, _cpu_seconds() - c0
    assert res.alpha is not None and res.alpha0 is not None
    az = arviz_module()
    gi, ki = np.nonzero(res.design.present)
    params = np.concatenate([res.alpha[:, :, gi, ki], res.alpha0], axis=2)
    mcse = az.mcse(xr.Dataset({"x": (["chain", "draw", "p"], params)}), method="mean")["x"].values
    names = group_labels(res.design.keys)
    labels = [f"{names[g]}|{res.design.agents[k]}" for g, k in zip(gi, ki, strict=True)]
    labels += [f"{name}|alpha0" for name in names]
    np.savez(out, mean=params.mean(axis=(0, 1)), mcse=mcse, labels=np.array(labels))
    d = res.diagnostics()
    return {
        "edueval": str(Path(edueval.__file__).parent),
        "groups": res.design.n_groups,
        "comparisons": int(res.groups["n_comparisons"].sum()),
        "seconds": wall,
        "cpu_seconds": cpu,
        "sampling_seconds": d["sampling_seconds"],
        "peak_rss_mb": _peak_mb(),
        "max_rhat": d["max_rhat"],
        "min_ess_bulk": d["min_ess_bulk"],
        "n_divergent": d["n_divergent"],
        "mean_leapfrog_steps": d["mean_leapfrog_steps"],
        **sampler,
    }


def _spawn(src: Path, args: list[str], timeout: float) -> dict:
    """Run this file's worker in a fresh interpreter with ``src`` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(src), "EDUEVAL_JAX_CACHE": "off"}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", *args]
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"did not finish in {timeout:.0f} s"}
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if not out["edueval"].startswith(str(src)):
        raise RuntimeError(f"worker imported {out['edueval']}, not {src}")
    return out


def _extract(rev: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "src"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def _agreement(before: str, after: str) -> dict:
    import numpy as np

    b, a = np.load(before), np.load(after)
    if list(b["labels"]) != list(a["labels"]):
        raise RuntimeError("the two fits report different parameters")
    z = (a["mean"] - b["mean"]) / np.sqrt(a["mcse"] ** 2 + b["mcse"] ** 2)
    worst = int(np.argmax(np.abs(z)))
    return {
        "parameters": len(z),
        "max_abs_z": float(np.abs(z[worst])),
        "worst": str(a["labels"][worst]),
        "n_abs_z_above_2": int((np.abs(z) > 2).sum()),
        "n_abs_z_above_3": int((np.abs(z) > 3).sum()),
        "expected_above_3": float(len(z) * 0.0027),
        "max_abs_diff": float(np.abs(a["mean"] - b["mean"]).max()),
        "median_mcse": float(np.median(np.sqrt(a["mcse"] ** 2 + b["mcse"] ** 2))),
    }


def _line(tag: str, r: dict) -> str:
    if "error" in r:
        return f"{tag}: {r['error']}"
    size = (
        f"{r['agents']} agents x {r['comparisons']}" if "agents" in r else f"{r['groups']} groups"
    )
    return (
        f"{tag}: {size}: {r['seconds']:.1f} s (NUTS {r['sampling_seconds']:.1f} s; CPU "
        f"{r['cpu_seconds']:.1f} s), peak RSS "
        f"{r['peak_rss_mb']:.0f} MB, max R-hat {r['max_rhat']:.3f}, min ESS bulk "
        f"{r['min_ess_bulk']:.0f}, {r['mean_leapfrog_steps']:.1f} steps/iter"
        + (f", corr(truth) {r['corr_truth']:.3f}" if "corr_truth" in r else "")
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    ap.add_argument("--before", default="HEAD", help="git revision of the dense implementation")
    ap.add_argument("--skip-before-200", action="store_true", help="no dense 200-agent fit")
    ap.add_argument("--skip-teacher", action="store_true")
    ap.add_argument("--teacher-draws", type=int, default=1000)
    ap.add_argument("--timeout", type=float, default=900.0, help="per fit, seconds")
    ap.add_argument("--json", type=Path, help="write the figures here")
    args = ap.parse_args()
    if args.worker:
        kind, *rest = args.worker
        sampler = {"chains": 4, "warmup": 1000, "draws": int(rest[-1])}
        if kind == "scale":
            out = worker_scale(int(rest[0]), int(rest[1]), int(rest[2]), sampler)
        else:
            out = worker_teacher(int(rest[0]), sampler, rest[1])
        print(json.dumps(out))
        return

    results: dict = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "load_average_start": os.getloadavg(),
        "cpus": os.cpu_count(),
    }
    print(f"load average {os.getloadavg()}, {os.cpu_count()} CPUs", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        old_src = _extract(args.before, Path(tmp))
        new_src = ROOT / "src"
        cases = [(60, 2000, True), (200, 6000, not args.skip_before_200), (1000, 20000, False)]
        results["scale"] = []
        for k, n, with_before in cases:
            for tag, src in (("before", old_src), ("after", new_src)):
                if tag == "before" and not with_before:
                    continue
                r = _spawn(src, ["scale", str(k), str(n), "1", "1000"], args.timeout)
                results["scale"].append({"code": tag, "agents": k, "comparisons": n, **r})
                print(_line(f"{tag:6s}", r), flush=True)
        if not args.skip_teacher:
            draws = str(args.teacher_draws)
            runs = {}
            for tag, src, seed in (("before", old_src, 11), ("after", new_src, 12)):
                npz = str(Path(tmp) / f"{tag}.npz")
                runs[tag] = _spawn(src, ["teacher", str(seed), npz, draws], args.timeout)
                print(_line(f"teacher {tag:6s}", runs[tag]), flush=True)
            results["teacher"] = runs
            if all("error" not in r for r in runs.values()):
                agree = _agreement(str(Path(tmp) / "before.npz"), str(Path(tmp) / "after.npz"))
                results["teacher_agreement"] = agree
                print("teacher agreement:", json.dumps(agree), flush=True)
    results["load_average_end"] = os.getloadavg()
    print(f"load average {os.getloadavg()}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
