"""Which student-clustered test keeps P5's ``draw`` at α when students' contributions are skewed?

The candidates the choice of the default was made from, each applied to all four one-sided tests
of the decision rule (TOST at ±ε, both sources' superiority over random by δ), on the same
simulated studies (:func:`edueval.turing.power.design_counts`):

* ``cr1``: CR1 SE, t on G − 1 df (the previous default);
* ``cr2_bm``: CR2 SE with Bell-McCaffrey df, no skewness correction;
* ``wcr_rademacher`` / ``wcr_webb``: wild cluster *restricted* bootstrap (null imposed, CR1
  studentised, Rademacher weights enumerated when 2^G ≤ B, else B random draws; Webb's six-point
  weights), MacKinnon & Webb (2018);
* ``pairs_t``: pairs cluster bootstrap-t (students resampled, CR1 studentised), Hall (1992) ch. 3;
* ``cr2_hall``: CR2 + Bell-McCaffrey df + Hall's skewness-corrected t (``cr2``, the default
  until it missed one cell of benchmarks/turing_validity.py: 20 students, sheets of 5-45 MCQs);
* ``cr3_hall``: CR3 (the leave-one-student-out jackknife variance) + the same df and Hall's
  term - ``cr3``, the default.

Reported: ``draw`` at d = +ε (the side the 20% minority pushes; valid ≤ α + 2 MC SE) and at
d = 0 (power). With equal sheet lengths CR2 and its df equal CR1's, and symmetric bootstrap
weights cannot see skewness: only the methods that estimate it (Hall's term, the bootstrap-t)
come down to α.

    python benchmarks/turing_methods.py [--studies 4000] [--boot 999] [--quick]
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import time
from datetime import date

import numpy as np

from edueval.turing.power import design_counts
from edueval.turing.stats import MeanEstimate, clustered_mean

EPS, DELTA, ALPHA = 0.10, 0.05, 0.05
METHODS = ("cr1", "cr2_bm", "wcr_rademacher", "wcr_webb", "pairs_t", "cr2_hall", "cr3_hall")


def _weights(kind: str, g: int, b: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "rademacher" and 2**g <= b:
        return np.array(list(itertools.product([1.0, -1.0], repeat=g)))
    if kind == "rademacher":
        return rng.choice([1.0, -1.0], size=(b, g))
    six = np.sqrt([1.5, 1.0, 0.5])
    return rng.choice(np.concatenate([-six, six]), size=(b, g))


def wcr_p_lower(z, n, theta0, kind, b, rng) -> np.ndarray:
    """Restricted wild cluster bootstrap p-value of H0: mean ≥ theta0 (lower tail), CR1 t."""
    big_n = n.sum(-1)
    g = n.shape[-1]
    u = z - theta0 * n  # cluster sums of y - theta0: the null imposed
    c = g / (g - 1)
    s0 = u.sum(-1)
    with np.errstate(divide="ignore", invalid="ignore"):  # identical students: t0 = ±inf, nan
        t0 = s0 / np.sqrt(c * ((u - n * (s0 / big_n)[:, None]) ** 2).sum(-1))
    v = _weights(kind, g, b, rng)
    s = u @ v.T  # bootstrap sums
    r = s / big_n[:, None]
    # sum_g (v u - n r)^2 = sum v^2 u^2 - 2 r sum n v u + r^2 sum n^2
    den = (u**2) @ (v**2).T - 2 * r * ((n * u) @ v.T) + r**2 * (n**2).sum(-1)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        ts = s / np.sqrt(c * np.maximum(den, 0))
    return (ts <= t0[:, None] + 1e-12).mean(-1)


def pairs_p_lower(z, n, theta0, b, rng) -> np.ndarray:
    """Pairs cluster bootstrap-t p-value of H0: mean ≥ theta0 (lower tail), CR1 t."""
    g = n.shape[-1]
    c = g / (g - 1)
    big_n = n.sum(-1)
    d = z.sum(-1) / big_n
    se = np.sqrt(c * ((z - n * d[:, None]) ** 2).sum(-1)) / big_n
    with np.errstate(divide="ignore", invalid="ignore"):
        t0 = (d - theta0) / se
    w = rng.multinomial(g, np.full(g, 1 / g), size=b).astype(float)  # [B, G] resampling counts
    sz, sn = z @ w.T, n @ w.T
    ds = sz / sn
    ss = (z**2) @ w.T - 2 * ds * ((z * n) @ w.T) + ds**2 * ((n**2) @ w.T)
    with np.errstate(divide="ignore", invalid="ignore"):
        ts = (ds - d[:, None]) / (np.sqrt(c * np.maximum(ss, 0)) / sn)
    ok = np.isfinite(ts)
    return ((ts <= t0[:, None]) & ok).sum(-1) / np.maximum(ok.sum(-1), 1)


def p_lower(method: str, z, n, theta0, b, rng) -> np.ndarray:
    """p-value of H0: mean ≥ theta0 for per-student sums ``z`` [S, G] and sizes ``n``."""
    if method.startswith("wcr_"):
        return wcr_p_lower(z, n, theta0, method[4:], b, rng)
    if method == "pairs_t":
        return pairs_p_lower(z, n, theta0, b, rng)
    est = clustered_mean(z, n, {"cr1": "cr1", "cr3_hall": "cr3"}.get(method, "cr2"))
    if method == "cr2_bm":
        est = MeanEstimate(est.mean, est.se, est.df, np.zeros_like(est.skew), est.flat)
    return est.p_lower(theta0)


def draw_rate(method: str, counts: np.ndarray, b: int, rng) -> float:
    """Share of studies whose four one-sided tests all reject (``draw``; ≥ 5 students)."""
    n, a, h, r = (counts[..., i] for i in (0, 2, 3, 4))
    ok = p_lower(method, a - h, n, EPS, b, rng) < ALPHA  # H0: d >= +eps
    ok &= p_lower(method, h - a, n, EPS, b, rng) < ALPHA  # H0: d <= -eps
    ok &= p_lower(method, r - a, n, -DELTA, b, rng) < ALPHA  # H0: p_AI - p_R <= delta
    ok &= p_lower(method, r - h, n, -DELTA, b, rng) < ALPHA  # H0: p_H - p_R <= delta
    return float(ok.mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--studies", type=int, default=4000)
    ap.add_argument("--boot", type=int, default=999, help="bootstrap draws")
    ap.add_argument("--sizes", default="5,10,20,40")
    ap.add_argument("--designs", default="preference,lengths")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="smoke run: 200 studies, 99 draws")
    args = ap.parse_args()
    studies, b = (200, 99) if args.quick else (args.studies, args.boot)
    bound = ALPHA + 2 * np.sqrt(ALPHA * (1 - ALPHA) / studies)
    print(
        f"{date.today()}  {platform.machine()}, {os.cpu_count()} CPUs, load "
        f"{os.getloadavg()[0]:.2f}; {studies} studies per cell, B = {b}, seed {args.seed}; "
        f"bound {bound:.4f}"
    )
    print("| design | students | " + " | ".join(METHODS) + " |")
    print("|---|---:|" + "---:|" * len(METHODS))
    ss = np.random.SeedSequence(args.seed)
    t0 = time.perf_counter()
    for design in args.designs.split(","):
        for g in (int(x) for x in args.sizes.split(",")):
            rng_data, rng_boot = (np.random.default_rng(s) for s in ss.spawn(2))
            at_eps = design_counts(rng_data, studies, g, design, diff=EPS)
            at_zero = design_counts(rng_data, studies, g, design, diff=0.0)
            cells = []
            for m in METHODS:
                x, p = draw_rate(m, at_eps, b, rng_boot), draw_rate(m, at_zero, b, rng_boot)
                cells.append(f"{100 * x:.1f}{'*' if x > bound else ''} ({100 * p:.0f})")
            print(f"| {design} | {g} | " + " | ".join(cells) + " |", flush=True)
    print(
        f"draw % at d = +eps (power: draw % at d = 0); * above alpha + 2 MC SE. "
        f"{time.perf_counter() - t0:.0f} s"
    )


if __name__ == "__main__":
    main()
