"""The comparison's ``report.html``: the leaderboard per metric, a forest plot of the paired
differences with their intervals, the discordant counts and the detectable-difference lines."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..report import Report
from .results import Comparison

__all__ = ["comparison_report", "forest_plot"]


def _ci(lo: float, hi: float, signed: bool = False) -> str:
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "–"
    fmt = "{:+.3f}" if signed else "{:.3f}"
    return f"[{fmt.format(lo)}, {fmt.format(hi)}]"


def _board(res: Comparison, metric: str) -> pd.DataFrame:
    ref = res.reference[metric]
    rows = []
    for r in res.leaderboard(metric).to_dict("records"):
        own = r["run"] == ref
        rows.append({
            "run": r["run"] + (" (reference)" if own else ""),
            "n": r["n"], "correct": r["correct"], "estimate": r["estimate"],
            "95% CI": _ci(r["ci_low"], r["ci_high"]),
            "difference": np.nan if own else r["difference"],
            "paired 95% CI": "" if own else _ci(r["diff_low"], r["diff_high"], True),
            "run only / ref only": "" if own else f"{int(r['run_only'])} / {int(r['reference_only'])}",
            "p": np.nan if own else r["p"], "p (Holm)": np.nan if own else r["p_holm"],
            "failed": r["failed"], "unparseable": r["unparseable"],
        })  # fmt: skip
    return pd.DataFrame(rows)


def forest_plot(res: Comparison):
    """One panel per metric: each run's paired difference from the reference, 95% interval."""
    from ..report.figures import plt

    metrics = [m for m in res.metrics if (res.differences["metric"] == m).any()]
    heights = [max(1, int((res.differences["metric"] == m).sum())) for m in metrics]
    fig, axes = plt.subplots(len(metrics), 1, figsize=(7.0, 1.0 + 0.45 * sum(heights) + 0.6 * len(metrics)),
                             squeeze=False, layout="constrained",
                             gridspec_kw={"height_ratios": heights})  # fmt: skip
    for ax, m in zip(axes[:, 0], metrics, strict=True):
        d = res.differences[res.differences["metric"] == m].iloc[::-1]
        y = np.arange(len(d))
        lo = (d["difference"] - d["ci_low"]).clip(lower=0)
        hi = (d["ci_high"] - d["difference"]).clip(lower=0)
        for yi, x, lo_, hi_, sig in zip(y, d["difference"], lo, hi, d["significant"], strict=True):
            ax.errorbar([x], [yi], xerr=[[lo_], [hi_]], fmt="o", capsize=3,
                        color="tab:red" if sig else "tab:blue")  # fmt: skip
        ax.axvline(0, color="grey", lw=1, ls="--")
        ax.set_ylim(-0.6, len(d) - 0.4)
        ax.set_yticks(y, list(d["run"]))
        ax.set_title(f"{res.metrics[m].label}: difference from {res.reference[m]} "
                     "(red: Holm p < alpha)", fontsize=9)  # fmt: skip
    axes[-1, 0].set_xlabel("paired difference (run − reference), 95% CI")
    return fig


def comparison_report(res: Comparison, notes: list[str]) -> Report:
    """The report of a comparison run."""
    rep = Report(f"Paired comparison of {len(res.runs)} runs",
                 "the items as the unit; " + ", ".join(res.names))  # fmt: skip
    rep.section("Runs").table(res.runs)
    for m, spec in res.metrics.items():
        sec = rep.section(f"{spec.label} [{m}]")
        sec.table(_board(res, m), digits=3)
        unit = f"{spec.unit} in {spec.cluster}" if spec.clustered else spec.unit
        sec.text(f"Reference: {res.reference[m]} ("
                 + ("given" if res.fixed_reference else "the best on this metric") + f"); {unit}. "
                 + (res.differences.loc[res.differences["metric"] == m, "test"].iloc[0]
                    + " p-values; " if (res.differences["metric"] == m).any() else "")
                 + "Holm's adjustment over this metric's comparisons.")  # fmt: skip
    if len(res.differences):
        rep.section("Paired differences").figure(forest_plot(res))
        rep.section("Discordant pairs").table(res.discordant, digits=3)
        rep.section("Detectable difference").bullets(res.detectable_lines())
    how = rep.section("How")
    how.text(
        "Per-item 0/1 outcomes (MCQ, AIA, CA): each run's Wilson 95% interval; the difference "
        "from the reference with Tango's score interval for paired proportions and the exact "
        "McNemar test (two-sided exact sign test on the discordant items; with few discordant "
        "items the interval can exclude 0 while the exact test does not reject: the test "
        "decides, and the forest plot marks only Holm-significant runs). Several "
        "rows per item (MIA: three incorrect choices per question; AA: two orders per pair): "
        "the question-clustered interval; the mean of the paired row differences with a "
        "cluster-robust (CR1) standard error and a t interval and test on G − 1 degrees of "
        "freedom. A continuous score (tutor replies' token F1 with the real teacher's reply, per "
        "target turn): each run's mean with a dialogue-clustered (CR1) t interval; the paired "
        "difference per turn, clustered by dialogue, as for MIA ('run only / ref only': the "
        "turns where the run's F1 is higher / lower).",
        res.failure_note(),
    )
    if notes or res.skipped or any(any(v.values()) for v in res.dropped.values()):
        how.bullets([*notes, *([f"not compared (not in every run): {', '.join(res.skipped)}"]
                               if res.skipped else []),
                     *[f"{m}: items left out per run {d}" for m, d in res.dropped.items()
                       if any(d.values())]])  # fmt: skip
    return rep
