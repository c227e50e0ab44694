"""P5's default test (``boot``) against CR3 + Hall where students differ in how many answers they
get wrong and in which source they prefer (issue 34).

For each design (:func:`edueval.turing.power.design_counts`: ``ability``, ``ability_lengths``)
and size, the same simulated studies go through :func:`edueval.turing.stats.batch_tests` - the
whole decision rule, superiority over random included - with ``boot`` (the default: CR3 + Hall
with a design effect of at least 1, each p-value the largest of the t-table's, the pairs cluster
bootstrap-t's, its fast double bootstrap's and the score test's), ``boot3`` (``boot`` before the
score half), ``boot0`` (``boot`` before the fast double bootstrap: the t table and the
bootstrap-t) and ``cr3`` (the default before ``boot``); the time
of each in ``batch_tests``, summed over the run, and the ratio ``boot`` / ``boot0``. Reported: the rate of ``draw`` at
d = +ε and d = −ε (valid: at most α + 2 Monte-Carlo SEs) and at d = 0 (power).

``--sup``: the superiority tests' level. Rates with p_AI − p_random = p_Human − p_random = δ
exactly (``ai_plus_human`` 0.4, ``random`` 0.15, d = 0, design ``ability``): the share of
studies in which "AI > random + δ" and "human > random + δ" is claimed (each valid ≤ α).

Bootstrap draws: B = 399 by default (α(B + 1) = 20). The rejection rate over studies with a
finite B is the rate of a randomised version of the B = ∞ test; its level is the same for a
pivotal statistic and the power loss is of order 1/B (Davidson & MacKinnon 2000, "Bootstrap
tests: how many bootstraps?"), while the Monte-Carlo SE of a rate near 5% over 10,000 studies is
0.22 points. The library's default is B = 999.

    python benchmarks/turing_bootstrap.py                       # 10,000 studies, 5-160 students
    python benchmarks/turing_bootstrap.py --quick               # smoke run
    python benchmarks/turing_bootstrap.py --sup                 # superiority tests' level
"""

from __future__ import annotations

import os

# one BLAS thread: the per-block matrix products are small, and threads only contend
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from datetime import date  # noqa: E402

import numpy as np  # noqa: E402

from edueval.turing.power import design_counts  # noqa: E402
from edueval.turing.stats import VERDICTS, batch_tests  # noqa: E402

EPS, DELTA, ALPHA = 0.10, 0.05, 0.05
SIZES = (5, 10, 20, 40, 80, 160)
DESIGNS = ("ability", "ability_lengths")  # the default grid: a cell's seed is its place in it
#: method -> (cluster_se, double bootstrap, score half): ``boot`` now (with the fast double
#: bootstrap and the score half), ``boot3`` before the score half, ``boot0`` before the double
#: bootstrap (t table and bootstrap-t only), CR3 + Hall
ALL_METHODS = {
    "boot": ("boot", "fast", True),
    "boot3": ("boot", "fast", False),
    "boot0": ("boot", "none", False),
    "cr3": ("cr3", "none", False),
}
METHODS = dict(ALL_METHODS)  # those run (--methods)
DRAW = VERDICTS.index("draw")
SECONDS = dict.fromkeys(METHODS, 0.0)  # batch_tests time per method, over the whole run


def rates(design: str, g: int, diff: float, studies: int, seed, b: int, chunk: int, **kw) -> dict:
    """Per method: share of ``draw`` and of each superiority claim over the same studies."""
    rng = np.random.default_rng(seed)
    hits = {m: np.zeros(3) for m in METHODS}
    done = 0
    while done < studies:
        k = min(chunk, studies - done)
        counts = design_counts(rng, k, g, design, diff=diff, **kw)
        boot_seed = int(rng.integers(2**63))
        for m, (se, double, score) in METHODS.items():
            t0 = time.perf_counter()
            bt = batch_tests(
                counts, eps=EPS, delta=DELTA, alpha=ALPHA, cluster_se=se, n_boot=b,
                seed=boot_seed, double=double, score=score,
            )  # fmt: skip
            SECONDS[m] += time.perf_counter() - t0
            hits[m] += [
                (bt.verdict["clustered"] == DRAW).sum(),
                (bt.sup["clustered"]["ai"]["p"] < ALPHA).sum(),
                (bt.sup["clustered"]["human"]["p"] < ALPHA).sum(),
            ]
        done += k
    return {m: hits[m] / studies for m in METHODS}


def pct(x: float, bound: float | None = None) -> str:
    return f"{100 * x:.2f}" + ("*" if bound is not None and x > bound else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--studies", type=int, default=10_000)
    ap.add_argument("--boot", type=int, default=399, help="bootstrap draws per test")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--designs", default=",".join(DESIGNS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--chunk", type=int, default=2500, help="studies simulated at once")
    ap.add_argument("--sup", action="store_true", help="the superiority tests' level instead")
    ap.add_argument("--quick", action="store_true", help="smoke run: 500 studies, 3 sizes")
    ap.add_argument(
        "--methods", default=",".join(ALL_METHODS),
        help="of boot, boot3, boot0, cr3 (each method's studies and first-level draws are the same "
        "whichever others run)",
    )  # fmt: skip
    args = ap.parse_args()
    for m in list(METHODS):
        if m not in args.methods.split(","):
            del METHODS[m], SECONDS[m]
    studies, sizes = args.studies, [int(x) for x in args.sizes.split(",")]
    if args.quick:
        studies, sizes = 500, [5, 20, 80]
    mc = np.sqrt(ALPHA * (1 - ALPHA) / studies)
    bound = ALPHA + 2 * mc
    print(
        f"{date.today()}  {platform.machine()}, {os.cpu_count()} CPUs, load "
        f"{os.getloadavg()[0]:.2f}; {studies} studies per cell, B = {args.boot}, seed "
        f"{args.seed}; eps {EPS}, delta {DELTA}, alpha {ALPHA}; MC SE at 5% {100 * mc:.2f} "
        f"points, bound {100 * bound:.2f}%"
    )
    t_all = time.perf_counter()
    ss = np.random.SeedSequence(args.seed)
    names = " / ".join(METHODS)
    if args.sup:
        print(f"| students | AI > random + δ: {names} (%) | human > random + δ: {names} (%) |")
        print("|---:|---:|---:|")
        for g, s in zip(sizes, ss.spawn(len(sizes)), strict=True):
            r = rates("ability", g, 0.0, studies, s, args.boot, args.chunk,
                      ai_plus_human=0.4, random=0.15)  # fmt: skip
            cells = [" / ".join(pct(r[m][i], bound) for m in METHODS) for i in (1, 2)]
            print(f"| {g} | {cells[0]} | {cells[1]} |", flush=True)
    else:
        print(
            f"| design | students | draw at d = +ε: {names} (%) | draw at d = −ε: {names} (%) | "
            f"power, draw at d = 0: {names} (%) | seconds |"
        )
        print("|---|---:|---:|---:|---:|---:|")
        designs = args.designs.split(",")
        seeds = iter(ss.spawn(3 * len(designs) * len(sizes)))
        for design in designs:
            for g in sizes:
                t0 = time.perf_counter()
                cell = [next(seeds) for _ in range(3)]
                if design in DESIGNS and g in SIZES:  # the full grid's seeds, whatever is run
                    at = 3 * (DESIGNS.index(design) * len(SIZES) + SIZES.index(g))
                    cell = [
                        np.random.SeedSequence(args.seed, spawn_key=(at + j,)) for j in range(3)
                    ]
                hi, lo, zero = (
                    rates(design, g, d, studies, s, args.boot, args.chunk)
                    for d, s in zip((EPS, -EPS, 0.0), cell, strict=True)
                )
                cells = [
                    " / ".join(pct(r[m][0], bound if chk else None) for m in METHODS)
                    for r, chk in ((hi, True), (lo, True), (zero, False))
                ]
                print(
                    f"| {design} | {g} | {cells[0]} | {cells[1]} | {cells[2]} | "
                    f"{time.perf_counter() - t0:.0f} |",
                    flush=True,
                )
    secs = ", ".join(f"{m} {v:.0f} s" for m, v in SECONDS.items())
    ratio = (
        f"; boot / boot0 {SECONDS['boot'] / SECONDS['boot0']:.2f}"
        if {"boot", "boot0"} <= set(SECONDS)
        else ""
    )
    print(
        f"* above alpha + 2 MC SE. total {time.perf_counter() - t_all:.0f} s; batch_tests: "
        f"{secs}{ratio}"
    )


if __name__ == "__main__":
    main()
