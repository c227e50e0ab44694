"""Check edueval's E-step (``_kernels.e_step_tm``) against a plain-numpy forward-backward.

    python benchmarks/e_step_reference_check.py [--baseline-rev HEAD] [--tol 1e-12]

The reference is the textbook scaled forward-backward (Rabiner 1989) written with numpy on the
sequence-major layout -- a different algorithm from the kernel's filter / smoother on the
time-major layout.  Data are ragged (random lengths from 1 up, sequences shuffled, a few of
length 1), with ``forget`` = 0 and > 0, ``prior`` near 1 and near 0, and parameters at the fit's
bounds.  Reports the largest relative difference of the log-likelihood and of the 10 sufficient
statistics for each case.

With ``--baseline-rev REV`` the kernel of that git revision (``src/edueval/kt/bkt/_kernels.py``) is
loaded too, and the current kernel must agree with it within ``--tol`` (exit status 1 if not):
the check used when the kernel is rewritten for speed.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from edueval.kt import simulate
from edueval.kt.bkt import _kernels as K
from edueval.kt.data import pack, time_major

ROOT = Path(__file__).resolve().parents[1]

CASES = {
    "classic (forget 0)": [0.3, 0.1, 0.2, 0.1, 0.0],
    "forget 0.2": [0.4, 0.2, 0.25, 0.15, 0.2],
    "prior 1-1e-9": [1 - 1e-9, 0.1, 0.2, 0.1, 0.0],
    "prior 1-1e-12, forget": [1 - 1e-12, 0.05, 0.3, 0.05, 0.05],
    "prior 1e-9, forget": [1e-9, 0.3, 0.2, 0.1, 0.1],
    "forget 1-1e-9": [0.5, 0.5, 0.4, 0.45, 1 - 1e-9],
    "learn, slip at 1e-9": [0.5, 1e-9, 0.2, 1e-9, 0.0],
    "guess at 1e-9": [0.5, 0.1, 1e-9, 0.1, 0.0],
}


def numpy_reference(obs: np.ndarray, starts: np.ndarray, p) -> tuple[float, np.ndarray]:
    """Scaled forward-backward; state 0 = unknown, 1 = known.  Returns (loglik, 10 stats).

    Loops over time, vectorised across sequences padded to the longest.  Statistics as in
    ``e_step_tm``: [P(known at 1), n sequences, xi(unknown->known), P(unknown) at t < T,
    xi(known->unknown), P(known) at t < T, P(unknown) * y, P(unknown), P(known) * (1 - y),
    P(known)], summed over sequences and steps.
    """
    prior, learn, guess, slip, forget = (float(x) for x in p)
    A = np.array([[1 - learn, learn], [forget, 1 - forget]])  # A[from, to]
    B = np.array([[1 - guess, guess], [slip, 1 - slip]])  # B[state, y]
    lengths = np.diff(starts)
    S, Tm = len(lengths), int(lengths.max())
    M = np.arange(Tm)[None, :] < lengths[:, None]
    Y = np.zeros((S, Tm), dtype=np.int64)
    Y[M] = obs
    E = B[:, Y].transpose(1, 2, 0)  # (S, T, 2): P(y_t | state)
    alpha = np.zeros((S, Tm, 2))
    c = np.ones((S, Tm))
    a = np.array([1 - prior, prior])[None, :] * E[:, 0]
    c[:, 0] = a.sum(1)
    alpha[:, 0] = a / c[:, 0, None]
    for t in range(1, Tm):
        a = (alpha[:, t - 1] @ A) * E[:, t]
        m = M[:, t]
        c[m, t] = a[m].sum(1)
        alpha[m, t] = a[m] / c[m, t, None]
    beta = np.ones((S, Tm, 2))
    for t in range(Tm - 2, -1, -1):
        m = M[:, t + 1]
        bt = (E[:, t + 1] * beta[:, t + 1]) @ A.T / c[:, t + 1, None]
        beta[m, t] = bt[m]
    gamma = alpha * beta
    gamma[~M] = 0.0
    xi = np.zeros((S, 2, 2))
    for t in range(Tm - 1):
        m = M[:, t + 1]
        x = (
            alpha[:, t, :, None]
            * A[None]
            * (E[:, t + 1] * beta[:, t + 1])[:, None, :]
            / c[:, t + 1, None, None]
        )
        xi += np.where(m[:, None, None], x, 0.0)
    trans = M.copy()
    trans[np.arange(S), lengths - 1] = False  # steps followed by a transition
    y = Y.astype(float)
    stats = np.array(
        [
            gamma[:, 0, 1].sum(),
            S,
            xi[:, 0, 1].sum(),
            gamma[:, :, 0][trans].sum(),
            xi[:, 1, 0].sum(),
            gamma[:, :, 1][trans].sum(),
            (gamma[:, :, 0] * y)[M].sum(),
            gamma[:, :, 0][M].sum(),
            (gamma[:, :, 1] * (1 - y))[M].sum(),
            gamma[:, :, 1][M].sum(),
        ]
    )
    return float(np.log(c[M]).sum()), stats


def ragged(gen: np.random.Generator, p) -> tuple:
    """Sequences simulated from ``p`` (clipped into [0, 1]), cut to random lengths, shuffled."""
    n_seq = int(gen.integers(50, 700))
    max_len = int(gen.integers(1, 45))
    pr = pd.DataFrame([p], columns=["prior", "learn", "guess", "slip", "forget"], index=["k"])
    df = simulate(pr.clip(0, 1), n_seq, max_len, seed=int(gen.integers(1 << 30)))
    length = gen.integers(1, max_len + 1, n_seq)
    df = df[df["order"].to_numpy() <= np.repeat(length, max_len)]
    df = df.sample(frac=1.0, random_state=int(gen.integers(1 << 30)))
    seqs, _ = pack(df)
    return seqs, time_major(seqs)


def run_kernel(fn, tm, p) -> tuple[float, np.ndarray]:
    T = int(tm.T[0])
    bs = tm.bs[:T]
    n_obs, n_seq = len(tm.obs), int(bs[0])
    bufs = [np.empty(n_obs), np.empty(n_obs)] + [np.empty(n_seq) for _ in range(5)]
    stats = np.empty(10)
    ll = fn(tm.obs, bs, T, np.asarray(p, dtype=float), *bufs, stats)
    return float(ll), stats


def rel_diff(ll: float, st: np.ndarray, ll_ref: float, st_ref: np.ndarray) -> float:
    den = np.abs(st_ref)
    d_st = np.where(den > 0, np.abs(st - st_ref) / np.where(den > 0, den, 1.0), np.abs(st))
    return float(max(d_st.max(), abs(ll - ll_ref) / abs(ll_ref)))


#: where the kernel lived at a revision: kt/bkt/ since the re-layout of kt/, kt/ before
KERNEL_PATHS = ("src/edueval/kt/bkt/_kernels.py", "src/edueval/kt/_kernels.py")


def load_baseline(rev: str, tmp: Path):
    for kernel_path in KERNEL_PATHS:
        done = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{rev}:{kernel_path}"],
            capture_output=True,
            text=True,
        )
        if done.returncode == 0:
            break
    else:
        raise SystemExit(f"no kernel file at {rev}: {done.stderr.strip()}")
    src = done.stdout
    path = tmp / "_kernels_baseline.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("_kernels_baseline", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.e_step_tm


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline-rev", help="also compare with e_step_tm of this git revision")
    ap.add_argument("--tol", type=float, default=1e-12)
    ap.add_argument("--reps", type=int, default=5, help="data sets per case")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    gen = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        base = load_baseline(args.baseline_rev, Path(tmp)) if args.baseline_rev else None
        print(f"{'case':<24} {'responses':>9}  {'vs numpy ref':>12}", end="")
        print(f"  {'vs ' + args.baseline_rev:>12}" if base else "")
        worst_base = 0.0
        for name, p in CASES.items():
            worst_ref, worst_b, n_resp = 0.0, 0.0, 0
            for _ in range(args.reps):
                seqs, tm = ragged(gen, p)
                n_resp += seqs.n_responses
                ll_ref, st_ref = numpy_reference(seqs.obs, seqs.starts, p)
                ll, st = run_kernel(K.e_step_tm, tm, p)
                worst_ref = max(worst_ref, rel_diff(ll, st, ll_ref, st_ref))
                if base is not None:
                    ll_b, st_b = run_kernel(base, tm, p)
                    worst_b = max(worst_b, rel_diff(ll, st, ll_b, st_b))
            worst_base = max(worst_base, worst_b)
            flag = "" if worst_ref <= args.tol else "  > tol"
            line = f"{name:<24} {n_resp:>9}  {worst_ref:12.2e}"
            line += f"  {worst_b:12.2e}" if base is not None else ""
            print(line + flag)
    if base is not None:
        ok = worst_base <= args.tol
        print(f"current vs {args.baseline_rev}: max relative difference {worst_base:.2e}", end="")
        print(" (ok)" if ok else f" > {args.tol:g}: FAIL")
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
