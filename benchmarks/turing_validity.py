"""Validity of P5's verdict at small samples: the rate of ``draw`` when the truth sits on the
margin |p_AI − p_Human| = ε, and its power at p_AI = p_Human, for the clustered SEs CR1 (the
default before issue 18), CR2 (Bell-McCaffrey df, Hall's skewness correction) and CR3 (the
default: the jackknife variance, same df and Hall term).

Four generators (:func:`edueval.turing.power.design_counts`): ``homogeneous`` (every student
alike), ``preference`` (20% of students strongly prefer the AI's distractor: skewed
contributions, design effect ≈ 2.4), ``lengths`` (``preference`` with sheets of 5-45 MCQs) and
``shared`` (``preference`` with a bank of 40 questions per study whose AI-vs-human pull varies,
each student answering 25 of them). p_AI + p_Human = 0.5, p_random = 0.05, ε = 0.10, δ = 0.05,
α = 0.05. Every study goes through :func:`edueval.turing.stats.batch_tests` - the full decision
rule, superiority over random included - with CR1, CR2 and CR3 on the same counts.

A valid rule declares ``draw`` at |d| = ε in at most α of studies; the check is α + 2 Monte-Carlo
SEs, ``α + 2·√(α(1 − α)/studies)``, in every cell and for both signs of d (the preferring
minority pushes d up, so d = +ε is the hard side). Power is the rate of ``draw`` at d = 0.

    python benchmarks/turing_validity.py                 # 4,000 studies per cell, all sizes
    python benchmarks/turing_validity.py --quick         # smoke run: 300 studies, 3 sizes
    python benchmarks/turing_validity.py --designs lengths --sizes 20 --studies 20000
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from datetime import date

import numpy as np
import pandas as pd

from edueval.turing.power import DESIGNS, design_counts

# the t-table kinds (``boot``, the default, is benchmarks/turing_bootstrap.py's)
from edueval.turing.stats import ANALYTIC_SE as CLUSTER_SE
from edueval.turing.stats import VERDICTS, batch_tests

EPS, DELTA, ALPHA = 0.10, 0.05, 0.05
SIZES = [5, 8, 10, 20, 40, 80, 160]
DRAW = VERDICTS.index("draw")
#: column order of the tables: the previous defaults first, the default last
ORDER = tuple(reversed(CLUSTER_SE))


def cell(design: str, g: int, diff: float, studies: int, seed, chunk: int = 1000) -> dict:
    """Draw rates under each clustered SE (same counts) and the mean design effect of d."""
    rng = np.random.default_rng(seed)
    draws = dict.fromkeys(CLUSTER_SE, 0)
    de = []
    done = 0
    while done < studies:
        b = min(chunk, studies - done)
        counts = design_counts(rng, b, g, design, diff=diff)
        for cse in CLUSTER_SE:
            bt = batch_tests(counts, eps=EPS, delta=DELTA, alpha=ALPHA, cluster_se=cse)
            draws[cse] += int((bt.verdict["clustered"] == DRAW).sum())
            if cse == "cr1":
                ok = bt.diff_se["naive"] > 0
                de.append((bt.diff_se["clustered"][ok] / bt.diff_se["naive"][ok]) ** 2)
        done += b
    return {
        **{cse: draws[cse] / studies for cse in CLUSTER_SE},
        "de": float(np.concatenate(de).mean()),
    }


def run(designs: list[str], sizes: list[int], studies: int, seed: int) -> pd.DataFrame:
    rows = []
    seeds = iter(np.random.SeedSequence(seed).spawn(len(designs) * len(sizes) * 3))
    for design in designs:
        for g in sizes:
            t0 = time.perf_counter()
            hi, lo, zero = (cell(design, g, d, studies, next(seeds)) for d in (EPS, -EPS, 0.0))
            rows.append(
                {
                    "design": design, "students": g,
                    **{f"{col}_{cse}": res[cse] for col, res in
                       (("draw_at_+eps", hi), ("draw_at_-eps", lo), ("power_d0", zero))
                       for cse in CLUSTER_SE},
                    "design_effect": zero["de"], "seconds": time.perf_counter() - t0,
                }
            )  # fmt: skip
            r = rows[-1]
            print(
                f"{design:<12}{g:>5}  "
                + "  ".join(
                    f"{col} " + " / ".join(f"{r[f'{col}_{cse}']:.4f}" for cse in ORDER)
                    for col in ("draw_at_+eps", "draw_at_-eps", "power_d0")
                )
                + f"  DE {r['design_effect']:.2f}  ({r['seconds']:.1f} s)",
                flush=True,
            )
    return pd.DataFrame(rows)


def decompose(design: str, g: int, studies: int, seed: int) -> pd.DataFrame:
    """Where the draws at d = +ε come from: studies binned by the share of answers given by the
    students who prefer the AI (expected 20%). A study whose preferring students hold almost no
    answers looks like a homogeneous population with d ≈ 0.02-0.03, where a draw is the right
    call - no rule that keeps its power there can avoid those draws here."""
    counts, d_g = design_counts(
        np.random.default_rng(seed), studies, g, design, diff=EPS, return_diffs=True
    )
    share = ((d_g > EPS) * counts[..., 0]).sum(-1) / counts[..., 0].sum(-1)
    draw = {
        cse: batch_tests(counts, eps=EPS, delta=DELTA, alpha=ALPHA, cluster_se=cse).verdict[
            "clustered"
        ]
        == DRAW
        for cse in CLUSTER_SE
    }
    edges = [0.0, 0.05, 0.10, 0.15, 0.20, 1.01]
    rows = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        sel = (share >= lo) & (share < hi)
        rows.append(
            {"preferrers' share of answers": f"[{lo:.2f}, {min(hi, 1):.2f})",
             "studies (%)": 100 * sel.mean(),
             **{f"draw within, {c} (%)": 100 * draw[c][sel].mean() if sel.any() else np.nan
                for c in ORDER},
             **{f"contribution, {c} (points)": 100 * (draw[c] & sel).mean() for c in ORDER}}
        )  # fmt: skip
    return pd.DataFrame(rows)


def markdown(df: pd.DataFrame, bound: float) -> str:
    """The results table, cells above the Monte-Carlo bound marked with *."""

    def pct(x: float, check: bool) -> str:
        return f"{100 * x:.1f}" + ("*" if check and x > bound else "")

    names = " / ".join(c.upper() for c in ORDER)
    lines = [
        f"| design | students | draw at d = +ε: {names} (%) | draw at d = −ε: {names} (%) "
        f"| power at d = 0: {names} (%) | design effect |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in df.to_dict(orient="records"):
        cr = [
            " / ".join(pct(r[f"{col}_{cse}"], col != "power_d0") for cse in ORDER)
            for col in ("draw_at_+eps", "draw_at_-eps", "power_d0")
        ]
        lines.append(
            f"| {r['design']} | {r['students']} | {cr[0]} | {cr[1]} | {cr[2]} | "
            f"{r['design_effect']:.2f} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--studies", type=int, default=4000, help="simulated studies per cell")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--designs", default=",".join(DESIGNS[:4]))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="smoke run: 300 studies, 3 sizes")
    ap.add_argument("--csv", default=None, help="also write the table here")
    ap.add_argument(
        "--decompose", default=None, metavar="DESIGN:G",
        help="instead: where the draws at d = +eps come from in one cell (e.g. lengths:20)",
    )  # fmt: skip
    args = ap.parse_args()
    if args.decompose:
        design, g = args.decompose.split(":")
        t = decompose(design, int(g), args.studies, args.seed)
        print(f"{design}, {g} students, {args.studies} studies, d = +eps:")
        print(t.to_markdown(index=False, floatfmt=".1f"))
        return
    studies, sizes = args.studies, [int(x) for x in args.sizes.split(",")]
    if args.quick:
        studies, sizes = 300, [5, 20, 80]
    designs = args.designs.split(",")
    bound = ALPHA + 2 * np.sqrt(ALPHA * (1 - ALPHA) / studies)
    print(
        f"{date.today()}  {platform.machine()}, {os.cpu_count()} CPUs, load "
        f"{os.getloadavg()[0]:.2f}; {studies} studies per cell, seed {args.seed}; eps {EPS}, "
        f"delta {DELTA}, alpha {ALPHA}; bound alpha + 2 MC SE = {bound:.4f}"
    )
    t0 = time.perf_counter()
    df = run(designs, sizes, studies, args.seed)
    print()
    print(markdown(df, bound))
    for cse in ORDER:
        cols = [f"draw_at_+eps_{cse}", f"draw_at_-eps_{cse}"]
        worst = df[cols].max(axis=1)
        print(
            f"{cse}: largest draw rate at |d| = eps {worst.max():.4f} "
            f"({df.loc[worst.idxmax(), 'design']}, {df.loc[worst.idxmax(), 'students']} students); "
            f"cells above the bound: {int((df[cols] > bound).to_numpy().sum())} of {2 * len(df)}"
        )
    print(f"total {time.perf_counter() - t0:.0f} s")
    if args.csv:
        df.to_csv(args.csv, index=False)


if __name__ == "__main__":
    main()
