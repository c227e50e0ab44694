"""P2 benchmark: edueval's vectorised NUTS against PyStan 3 on the paper's 147 per-item fits.

The AI Teacher Test data (bundled copy), the authors' 7 outliers removed, ties dropped: 49 items x
3 attributes = 147 Bayesian Bradley-Terry models with order effect, each with 4 chains x (1000
warm-up + 1000 draws).  edueval samples all 147 together in one numpyro run; PyStan 3 (what the
authors used) fits them one by one with the same Stan program.  Reported: wall time of each (PyStan
with and without its one-off C++ compile), the ratio, and the agreement of the posterior means
(mean |delta alpha| over the 441 abilities, and over the 147 order effects).

PyStan lives in its own virtual environment (it pins its own dependencies)::

    python3 -m venv /work/pystan-venv && /work/pystan-venv/bin/pip install pystan numpy
    /work/venv/bin/python benchmarks/pairwise_vs_pystan.py --pystan-python /work/pystan-venv/bin/python

The same file is the PyStan runner when called with ``--stan-runner IN OUT`` (it then imports only
stan, numpy and json).
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

STAN_PROGRAM = """
// nonce: {nonce}
data {{
  int<lower=1> K;
  int<lower=0> N;
  array[N] int<lower=1, upper=K> first;
  array[N] int<lower=1, upper=K> second;
  array[N] int<lower=0, upper=1> y;
}}
parameters {{
  real alpha0;
  vector[K] alpha;
}}
model {{
  alpha0 ~ normal(0, 1);
  alpha ~ normal(0, 1);
  y ~ bernoulli_logit(alpha0 + alpha[first] - alpha[second]);
}}
"""


def stan_runner(inp: Path, out: Path) -> None:
    """Fit every group with PyStan; timings and posterior means to ``out`` (JSON)."""
    import numpy as np
    import stan

    spec = json.loads(inp.read_text())
    program = STAN_PROGRAM.format(nonce=spec["nonce"])
    groups = spec["groups"]
    t0 = time.perf_counter()
    first = groups[0]
    stan.build(program, data=first["data"], random_seed=1)  # compiles (fresh nonce)
    compile_s = time.perf_counter() - t0
    means, alpha0, rhat_max = [], [], 0.0
    t1 = time.perf_counter()
    for g, grp in enumerate(groups):
        post = stan.build(program, data=grp["data"], random_seed=1000 + g)
        fit = post.sample(
            num_chains=spec["chains"], num_warmup=spec["warmup"], num_samples=spec["draws"]
        )
        a = np.asarray(fit["alpha"])  # (K, draws * chains)
        means.append(a.mean(axis=1).tolist())
        alpha0.append(float(np.asarray(fit["alpha0"]).mean()))
        # split R-hat of alpha, by hand (PyStan 3 has no summary without arviz)
        c = spec["chains"]
        x = a.reshape(a.shape[0], c, -1)  # PyStan orders draws chain-major? check both halves
        half = x.shape[2] // 2
        xs = np.concatenate([x[:, :, :half], x[:, :, half : 2 * half]], axis=1)
        n = xs.shape[2]
        w = xs.var(axis=2, ddof=1).mean(axis=1)
        b = n * xs.mean(axis=2).var(axis=1, ddof=1)
        rhat = np.sqrt(((n - 1) / n * w + b / n) / w)
        rhat_max = max(rhat_max, float(rhat.max()))
    sample_s = time.perf_counter() - t1
    out.write_text(
        json.dumps(
            {
                "compile_seconds": compile_s,
                "fit_seconds": sample_s,
                "alpha_mean": means,
                "alpha0_mean": alpha0,
                "max_rhat": rhat_max,
                "stan_version": getattr(stan, "__version__", "?"),
            }
        )
    )


def load_groups():
    from edueval.pairwise import (
        BradleyTerry,
        exclude_raters,
        import_teacher_test,
        read_rater_ids,
    )
    from edueval.pairwise.teacher_test import bundled_folder

    df = import_teacher_test(bundled_folder() / "items.jsonl")
    kept, _, _ = exclude_raters(df, read_rater_ids(bundled_folder() / "outliers.yaml"))
    return kept, BradleyTerry


def load_average() -> float:
    return os.getloadavg()[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--pystan-python", default="/work/pystan-venv/bin/python")
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=2, help="edueval fits timed (in one process)")
    ap.add_argument("--skip-stan", action="store_true")
    ap.add_argument(
        "--jax-cache", action="store_true", help="allow edueval's on-disk compilation cache"
    )
    ap.add_argument("--json", type=Path, help="write the measurements here")
    ap.add_argument("--stan-runner", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.stan_runner:
        stan_runner(*args.stan_runner)
        return

    import numpy as np

    if not args.jax_cache:  # time the JIT compile honestly: no compiled sampler from disk
        os.environ["EDUEVAL_JAX_CACHE"] = "off"
    t_import = time.perf_counter()
    from edueval.pairwise._sampler import jax_modules

    jax, numpyro = jax_modules()
    kept, BradleyTerry = load_groups()
    t_import = time.perf_counter() - t_import
    load_before = load_average()

    model = BradleyTerry(kept, ties="drop", seed=1)
    des = model.design
    agents = list(des.agents)
    runs = []
    for r in range(args.repeats):
        t0 = time.perf_counter()
        res = model.fit(chains=args.chains, warmup=args.warmup, draws=args.draws)
        runs.append(time.perf_counter() - t0)
        print(f"edueval fit {r + 1}: {runs[-1]:.2f} s (max R-hat {res.max_rhat:.4f})", flush=True)
    steps = float(res.draws.num_steps.mean())
    ours = res.abilities.set_index(["item", "attribute", "agent"])["alpha_mean"]
    ours0 = res.groups.set_index(["item", "attribute"])["alpha0_mean"]

    # gradient cost alone (value_and_grad of the log density, in a compiled loop)
    from functools import partial

    import jax.numpy as jnp
    from jax import lax
    from numpyro.infer.util import log_density

    from edueval.pairwise.bradley_terry import _bt_model, model_args

    margs = model_args(des)
    bt = partial(_bt_model, n_groups=des.n_groups, n_agents=len(agents))

    def pot(theta):
        return -log_density(bt, margs, {}, {"theta": theta})[0]

    vg = jax.value_and_grad(pot)

    @jax.jit
    def loop(th):
        return lax.fori_loop(0, 20_000, lambda _, c: c - 1e-6 * vg(c)[1], th)

    th0 = jnp.zeros((des.n_groups, len(agents) + 1), jnp.float32)
    jax.block_until_ready(loop(th0))
    t0 = time.perf_counter()
    jax.block_until_ready(loop(th0))
    grad_us = (time.perf_counter() - t0) / 20_000 * 1e6
    cores = os.cpu_count() or 1
    chains_per_core = args.chains / min(args.chains, cores)
    grad_per_core = chains_per_core * (args.warmup + args.draws) * steps * grad_us * 1e-6

    out = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"{platform.system()} {platform.release()}",
        "python": sys.version.split()[0],
        "jax": jax.__version__,
        "numpyro": numpyro.__version__,
        "chain_method": res.draws.chain_method,
        "load_average_before": load_before,
        "groups": des.n_groups,
        "comparisons": int(des.n_comparisons.sum()),
        "edueval_import_seconds": t_import,
        "edueval_fit_seconds": runs,
        "edueval_max_rhat": res.max_rhat,
        "edueval_min_ess": res.min_ess,
        "mean_leapfrog_steps": steps,
        "gradient_microseconds": grad_us,
        # leapfrog gradients each core evaluates (chains share the cores), at the measured cost
        "gradient_seconds_per_core": grad_per_core,
        "gradient_share_of_fit": grad_per_core / min(runs),
    }
    print(json.dumps(out, indent=1), flush=True)

    if not args.skip_stan:
        groups = []
        keys = list(des.keys.itertuples(index=False))
        decided = kept[kept["outcome"] != "tie"]
        by = dict(list(decided.groupby(["item", "attribute"])))
        for item, attr in keys:
            sub = by[(item, attr)]
            groups.append(
                {
                    "key": [item, attr],
                    "data": {
                        "K": len(agents),
                        "N": len(sub),
                        "first": (sub["first"].map(agents.index) + 1).tolist(),
                        "second": (sub["second"].map(agents.index) + 1).tolist(),
                        "y": (sub["outcome"] == "first").astype(int).tolist(),
                    },
                }
            )
        with tempfile.TemporaryDirectory() as tmp:
            inp, res_path = Path(tmp) / "in.json", Path(tmp) / "out.json"
            inp.write_text(
                json.dumps(
                    {
                        "groups": groups,
                        "chains": args.chains,
                        "warmup": args.warmup,
                        "draws": args.draws,
                        "nonce": f"{time.time_ns()}",
                    }
                )
            )
            print("PyStan: compiling and fitting 147 models ...", flush=True)
            t0 = time.perf_counter()
            subprocess.run(
                [args.pystan_python, __file__, "--stan-runner", str(inp), str(res_path)],
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            stan_wall = time.perf_counter() - t0
            st = json.loads(res_path.read_text())
        d_alpha, d_alpha0 = [], []
        for g, (item, attr) in enumerate(keys):
            for q, a in enumerate(agents):
                d_alpha.append(ours[(item, attr, a)] - st["alpha_mean"][g][q])
            d_alpha0.append(ours0[(item, attr)] - st["alpha0_mean"][g])
        best = min(runs)
        out.update(
            {
                "pystan": st["stan_version"],
                "pystan_compile_seconds": st["compile_seconds"],
                "pystan_fit_seconds": st["fit_seconds"],
                "pystan_wall_seconds": stan_wall,
                "pystan_max_rhat": st["max_rhat"],
                "ratio_including_compile": (st["compile_seconds"] + st["fit_seconds"]) / runs[0],
                "ratio_excluding_compile": st["fit_seconds"] / best,
                "mean_abs_delta_alpha": float(np.mean(np.abs(d_alpha))),
                "max_abs_delta_alpha": float(np.max(np.abs(d_alpha))),
                "mean_abs_delta_alpha0": float(np.mean(np.abs(d_alpha0))),
                "load_average_after": load_average(),
            }
        )
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
