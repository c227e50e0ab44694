"""Comparative judgement as practitioners run it: rater infit, ML vs choix and NUTS, and what
each reliability says under random and adaptive pairing (issue 37).

    PYTHONPATH=src python benchmarks/pairwise_cj_quality.py infit --studies 200
    PYTHONPATH=src python benchmarks/pairwise_cj_quality.py ml
    PYTHONPATH=src python benchmarks/pairwise_cj_quality.py coin --replications 200
    PYTHONPATH=src python benchmarks/pairwise_cj_quality.py curve --replications 100 --spread 1.5

Each part prints a Markdown table (the figures in benchmarks/RESULTS.md).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "pairwise"))

from cj_data import cj_study  # noqa: E402

from edueval.pairwise import BradleyTerry  # noqa: E402
from edueval.pairwise.misfit import expected_first, rater_fit  # noqa: E402
from edueval.pairwise.ml import fit_ml_design  # noqa: E402
from edueval.pairwise.simulation import SimulationConfig, simulate  # noqa: E402


def md(df: pd.DataFrame) -> str:
    """A DataFrame as a Markdown table (no extra dependency)."""
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(str(v) for v in row) + " |")
    return "\n".join(lines)


def part_infit(args) -> None:
    """Random raters among the worst infits, per study; false flags of honest raters."""
    rows = []
    for spread in args.spreads:
        top2 = top2_out = flag_random = flag_honest = missing = 0
        for s in range(args.studies):
            df, _ = cj_study(s, spread=spread)
            model = BradleyTerry(df, ties="drop", seed=s)
            est = fit_ml_design(model.design)
            if not est.ml_exists.all():
                missing += 1
                est = fit_ml_design(model.design, ridge=0.01)
            p = expected_first(model.data, model.design, est.alpha, est.alpha0)
            r = rater_fit(model.data, p)
            random = {"r00", "r01"}
            top2 += set(r["rater"].head(2)) == random
            top2_out += set(r.sort_values("outfit", ascending=False)["rater"].head(2)) == random
            flag_random += int(r.loc[r["rater"].isin(random), "misfit"].sum())
            flag_honest += int(r.loc[~r["rater"].isin(random), "misfit"].sum())
        n = args.studies
        rows.append(
            {
                "true s.d.": spread,
                "studies": n,
                "random raters = 2 worst infits": f"{top2} ({100 * top2 / n:.1f}%)",
                "= 2 worst outfits": f"{top2_out} ({100 * top2_out / n:.1f}%)",
                "random raters flagged (infit t > 2)": f"{100 * flag_random / (2 * n):.1f}%",
                "honest raters flagged": f"{100 * flag_honest / (18 * n):.1f}%",
                "no finite ML (ridge 0.01 used)": missing,
            }
        )
    print(md(pd.DataFrame(rows)))


def part_ml(args) -> None:
    """ML against choix (agreement, time) and against NUTS (time) on the same data."""
    import choix

    diffs, t_ours, t_choix = [], [], []
    for s in range(args.studies_ml):
        df, _ = cj_study(s, n_random=0)
        model = BradleyTerry(df, ties="drop")
        agents = list(model.design.agents)
        idx = {a: k for k, a in enumerate(agents)}
        f, se = df["first"].map(idx).to_numpy(), df["second"].map(idx).to_numpy()
        won = (df["outcome"] == "first").to_numpy()
        data = [(a, b) if w else (b, a) for a, b, w in zip(f, se, won, strict=True)]
        t0 = time.perf_counter()
        ours = fit_ml_design(model.design, order_effect=False).alpha[0]
        t1 = time.perf_counter()
        theirs = choix.ilsr_pairwise(len(agents), data, tol=1e-12, max_iter=500)
        t2 = time.perf_counter()
        diffs.append(np.abs(ours - theirs).max())
        t_ours.append(t1 - t0)
        t_choix.append(t2 - t1)
    print(
        f"ML vs choix.ilsr_pairwise on {args.studies_ml} studies (30 objects, 1,200 judgements, no "
        f"order effect): max |difference| {max(diffs):.2e}; median time ours "
        f"{1e3 * np.median(t_ours):.1f} ms, choix {1e3 * np.median(t_choix):.1f} ms "
        f"(choix / ours {np.median(t_choix) / np.median(t_ours):.1f}x)"
    )
    from edueval.pairwise.teacher_test import bundled_folder, import_teacher_test

    tt = import_teacher_test(bundled_folder() / "items.jsonl")
    model = BradleyTerry(tt, ties="random", seed=1)
    t0 = time.perf_counter()
    ml = model.fit_ml(ridge=1.0)
    t1 = time.perf_counter()
    nuts = model.fit(chains=4, warmup=1000, draws=1000)
    t2 = time.perf_counter()
    a = ml.abilities.set_index(["item", "attribute", "agent"])["alpha_mean"]
    b = nuts.abilities.set_index(["item", "attribute", "agent"])["alpha_mean"]
    print(
        f"AI Teacher Test ({len(tt)} comparisons, {model.design.n_groups} item x attribute "
        f"groups): fit_ml(ridge=1) with SSR, split-half (20 splits) and infit "
        f"{t1 - t0:.1f} s; NUTS 4 x (1000 + 1000) with the same {t2 - t1:.1f} s "
        f"(NUTS / ML {(t2 - t1) / (t1 - t0):.0f}x); posterior mode vs posterior mean: "
        f"r = {np.corrcoef(a, b.loc[a.index])[0, 1]:.4f}"
    )


def _table(res, cols) -> str:
    t = res.replications.groupby("pairing", sort=False)[cols]
    out = t.mean().round(3).astype(str)
    lo, hi = t.quantile(0.05).round(2), t.quantile(0.95).round(2)
    for c in cols:
        out[c] = out[c] + " [" + lo[c].astype(str) + ", " + hi[c].astype(str) + "]"
    return md(out.reset_index())


def part_coin(args) -> None:
    cfg = SimulationConfig(
        spread=0.0,
        judgements=1200,
        budgets=(1200,),
        pairings=("random", "adaptive", "adaptive-shared"),
        replications=args.replications,
        split_half_repeats=5,
        seed=args.seed,
    )
    t0 = time.perf_counter()
    res = simulate(cfg)
    print(f"coin flips, 30 objects, 20 judges, 1,200 judgements, {args.replications} studies "
          f"per policy ({time.perf_counter() - t0:.0f} s): mean [5%, 95%] over studies")  # fmt: skip
    reps = res.replications
    if "split_half_judges" in reps:
        reps["split_half_judges"] = reps["split_half_judges"].fillna(reps["split_half"])
    print(_table(res, ["ssr", "split_half", "split_half_judges"]))


def part_curve(args) -> None:
    budgets = tuple(range(args.step, args.max_judgements + 1, args.step))
    cfg = SimulationConfig(
        spread=args.spread,
        judgements=args.max_judgements,
        budgets=budgets,
        pairings=("random", "adaptive", "adaptive-shared"),
        replications=args.replications,
        split_half_repeats=1,
        seed=args.seed,
    )
    t0 = time.perf_counter()
    res = simulate(cfg)
    print(f"true s.d. {args.spread}, 30 objects, 20 judges, {args.replications} studies per "
          f"policy ({time.perf_counter() - t0:.0f} s)")  # fmt: skip
    b = res.budgets
    show = b[b["judgements"].isin(budgets[1::2])]
    wide = show.pivot(index="judgements", columns="pairing", values=["true_reliability", "ssr",
                                                                      "split_half"])  # fmt: skip
    wide.columns = [f"{m} ({p})" for m, p in wide.columns]
    print(md(wide.round(3).reset_index()))
    print()
    print(md(res.to_target))
    print(f"adaptive (panels) saving vs random: {res.saving()}")
    t = res.to_target.set_index("pairing")["judgements_to_target"]
    if pd.notna(t.get("adaptive-shared")) and pd.notna(t.get("random")):
        print(f"adaptive-shared saving vs random: {1 - t['adaptive-shared'] / t['random']:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("part", choices=["infit", "ml", "coin", "curve"])
    ap.add_argument("--studies", type=int, default=200)
    ap.add_argument("--studies-ml", type=int, default=20)
    ap.add_argument("--spreads", type=float, nargs="+", default=[1.5, 1.0])
    ap.add_argument("--replications", type=int, default=200)
    ap.add_argument("--spread", type=float, default=1.5)
    ap.add_argument("--step", type=int, default=30)
    ap.add_argument("--max-judgements", type=int, default=600)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    {"infit": part_infit, "ml": part_ml, "coin": part_coin, "curve": part_curve}[args.part](args)


if __name__ == "__main__":
    main()
