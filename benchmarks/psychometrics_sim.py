"""Simulation checks of edueval.items.reliability and edueval.items.dif (issue 36), for
benchmarks/RESULTS.md: Feldt's interval coverage, the DIF false-flag rate without DIF and the
detection rate of planted DIF.

    PYTHONPATH=src nice -n 10 python benchmarks/psychometrics_sim.py [--part all|feldt|mh|lr|power]
        [--scale 1.0] [--seed 36]

``--scale`` multiplies every replication count (1.0 = the figures in RESULTS.md); each part
draws from its own generator seeded by ``--seed``, so a part run alone gives the same figures.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from edueval.items.dif import dif, logistic_dif, mantel_haenszel
from edueval.items.reliability import cronbach_alpha, feldt_interval, reliability


def _rasch(rng, n, k, *, impact=0.0, shift=None):
    g = (rng.random(n) < 0.5).astype(np.int8)
    theta = rng.normal(size=n) - impact * g
    b = np.linspace(-1.5, 1.5, k)
    shift = np.zeros(k) if shift is None else shift
    logit = theta[:, None] - b - shift * g[:, None]
    return (rng.random((n, k)) < 1 / (1 + np.exp(-logit))).astype(float), g


def feldt_normal(rng, reps, n, k, ratio):
    """Coverage under Feldt's model: person + normal error, true alpha k r / (k r + 1)."""
    true = k * ratio / (k * ratio + 1)
    hits = below = 0
    for _ in range(reps):
        x = rng.normal(0, np.sqrt(ratio), (n, 1)) + rng.normal(0, 1, (n, k))
        a = cronbach_alpha(np.cov(x, rowvar=False))
        lo, hi = feldt_interval(a, n, k)
        hits += lo <= true <= hi
        below += true < lo
    return true, hits / reps, below / reps


def feldt_rasch(rng, reps, n, k):
    """Coverage on 0/1 Rasch items; the population alpha from one sample of 400,000."""
    big, _ = _rasch(rng, 400_000, k)
    true = cronbach_alpha(np.cov(big, rowvar=False))
    hits = below = 0
    for _ in range(reps):
        x, _ = _rasch(rng, n, k)
        r = reliability(pd.DataFrame(x))
        hits += r.alpha_low <= true <= r.alpha_high
        below += true < r.alpha_low
    return true, hits / reps, below / reps


def mh_null(rng, reps, n, k, impact):
    """MH p-values of items without DIF; ETS B or C = p < .05 and |D| >= 1 (the A rule's
    complement); Holm rejects some item iff the smallest p <= .05 / k."""
    p, cat, fwer = [], [], 0
    for _ in range(reps):
        res = mantel_haenszel(*_rasch(rng, n, k, impact=impact))
        p.append(res["p_MH"].to_numpy())
        cat.append(((res["p_MH"] < 0.05) & (res["MH_D_DIF"].abs() >= 1)).to_numpy())
        fwer += p[-1].min() <= 0.05 / k
    p = np.concatenate(p)
    return (p < 0.05).mean(), (p < 0.01).mean(), np.concatenate(cat).mean(), fwer / reps


def lr_null(rng, reps, n, k, impact):
    rows = [logistic_dif(*_rasch(rng, n, k, impact=impact)) for _ in range(reps)]
    out = {c: float(np.mean([(r[c] < 0.05).mean() for r in rows]))
           for c in ("p_uniform", "p_nonuniform", "p_dif")}  # fmt: skip
    return out


def power(rng, reps, n, k, size):
    shift = np.zeros(k)
    shift[k // 2] = size
    hit_mh = hit_lr = other = 0
    for _ in range(reps):
        x, g = _rasch(rng, n, k, impact=0.5, shift=shift)
        res = dif(pd.DataFrame(x), g, focal=1).items
        hit_mh += res["ETS"].iloc[k // 2] in ("B", "C")
        hit_lr += res["p_dif_holm"].iloc[k // 2] < 0.05
        other += res["flag"].drop(index=k // 2).sum()
    return hit_mh / reps, hit_lr / reps, other / (reps * (k - 1))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=36)
    ap.add_argument("--part", choices=["all", "feldt", "mh", "lr", "power"], default="all")
    args = ap.parse_args()
    r = lambda m: max(10, int(m * args.scale))  # noqa: E731
    t0 = time.perf_counter()
    parts = {"feldt": _feldt, "mh": _mh, "lr": _lr, "power": _power}
    for name, part in parts.items():
        if args.part in ("all", name):
            part(np.random.default_rng(args.seed), r)  # each part reproducible on its own
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")


def _feldt(rng, r) -> None:
    print("## Feldt's 95% interval: coverage (below = interval above the true alpha)")
    print("| data | n | k | true alpha | reps | coverage | below | above |")
    print("|---|---|---|---|---|---|---|---|")
    for n, k, ratio in ((30, 5, 0.5), (100, 10, 0.25), (300, 20, 0.1)):
        true, cov, below = feldt_normal(rng, r(10000), n, k, ratio)
        print(f"| normal | {n} | {k} | {true:.3f} | {r(10000)} | {cov:.4f} | {below:.4f} | "
              f"{1 - cov - below:.4f} |")  # fmt: skip
    for n, k in ((100, 10), (500, 20)):
        true, cov, below = feldt_rasch(rng, r(5000), n, k)
        print(f"| 0/1 Rasch | {n} | {k} | {true:.3f} | {r(5000)} | {cov:.4f} | {below:.4f} | "
              f"{1 - cov - below:.4f} |")  # fmt: skip


def _mh(rng, r) -> None:
    print("\n## MH without DIF (Rasch items, groups of equal size)")
    print("| n | k | impact (SD) | reps | P(p<.05) | P(p<.01) | ETS B or C | Holm FWER |")
    print("|---|---|---|---|---|---|---|---|")
    for n, k, impact in ((500, 20, 0.0), (500, 20, 0.5), (2000, 20, 0.5)):
        a, b, c, f = mh_null(rng, r(1000), n, k, impact)
        print(f"| {n} | {k} | {impact} | {r(1000)} | {a:.4f} | {b:.4f} | {c:.4f} | {f:.4f} |")


def _lr(rng, r) -> None:
    print("\n## Logistic-regression DIF without DIF: P(p < .05)")
    print("| n | k | impact | reps | uniform (1 df) | non-uniform (1 df) | any (2 df) |")
    print("|---|---|---|---|---|---|---|")
    for n, k, impact in ((500, 10, 0.0), (500, 10, 0.5)):
        out = lr_null(rng, r(300), n, k, impact)
        print(f"| {n} | {k} | {impact} | {r(300)} | {out['p_uniform']:.4f} | "
              f"{out['p_nonuniform']:.4f} | {out['p_dif']:.4f} |")  # fmt: skip


def _power(rng, r) -> None:
    print("\n## Planted uniform DIF on one of 10 items (impact 0.5 SD)")
    print("| n | DIF (logits) | reps | MH: ETS B or C | LR: Holm p < .05 | other items flagged |")
    print("|---|---|---|---|---|---|")
    for n, size in ((500, 0.5), (500, 1.0), (1000, 0.5)):
        m, lr, other = power(rng, r(100), n, 10, size)
        print(f"| {n} | {size} | {r(100)} | {m:.3f} | {lr:.3f} | {other:.4f} |")


if __name__ == "__main__":
    main()
