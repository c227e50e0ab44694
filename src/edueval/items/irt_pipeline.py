"""``items irt`` and ``items irt-compare`` as functions writing run directories (the CLI wraps
them): config.json, the item and person tables, results.json and report.html with the item
characteristic curves, the test information curve and an item-person (Wright) map."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..report import Report
from ..report.figures import plt
from ..runs import RunDir, saved_run
from .irt import IRT, IRTComparison, IRTResults, compare_irt
from .scores import read_scores, reading_params

__all__ = [
    "irt_compare_run",
    "irt_run",
    "save_irt",
    "save_irt_compare",
    "write_irt",
    "write_irt_compare",
]


def _figures(res: IRTResults, rep: Report) -> None:
    sec = rep.section("Item characteristic curves and test information")
    icc = res.icc()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
    for col in icc.columns[:40]:
        axes[0].plot(icc.index, icc[col], lw=1)
    axes[0].set_xlabel("theta")
    axes[0].set_ylabel("P(correct)")
    axes[0].set_title(f"ICCs ({min(len(icc.columns), 40)} items)")
    info = res.test_information()
    axes[1].plot(info.index, info.to_numpy(), color="k")
    ax2 = axes[1].twinx()
    ax2.plot(info.index, 1 / np.sqrt(info.to_numpy()), color="#c44e52", ls="--")
    axes[1].set_xlabel("theta")
    axes[1].set_ylabel("test information")
    ax2.set_ylabel("SE (dashed)")
    sec.figure(fig, "Item characteristic curves; test information and its SE of measurement")
    sec2 = rep.section("Item-person (Wright) map")
    fig, ax = plt.subplots(1, 2, figsize=(7, 4.5), sharey=True, layout="constrained")
    ax[0].hist(res.persons["EAP"], bins=30, orientation="horizontal", color="#4c72b0")
    ax[0].invert_xaxis()
    ax[0].set_xlabel("persons")
    ax[0].set_ylabel("theta (EAP) / item difficulty b")
    b = res.items["b"].clip(-5, 5)
    xs = np.random.default_rng(0).uniform(-0.3, 0.3, len(b))
    ax[1].scatter(xs, b, s=12)
    if len(b) <= 30:
        for x, y, name in zip(xs, b, res.items.index, strict=True):
            ax[1].annotate(str(name), (x, y), fontsize=7, xytext=(3, 0), textcoords="offset points")
    ax[1].set_xlim(-0.5, 0.5)
    ax[1].set_xticks([])
    ax[1].set_xlabel("items (b)")
    sec2.figure(fig, "Person EAP distribution (left) against item difficulties (right)")


def irt_run(
    out: Path, scores: Path, *, model: str = "2pl", rasch_scale: str = "variance",
    se: str = "observed", g_prior: tuple[float, float] | None = None, freq: str | None = None,
    key: Path | None = None, row_ids: bool = False,
) -> dict:  # fmt: skip
    """Fit ``model`` to a score table (``freq``: the count column of a table of response
    patterns): ``items.csv``, ``persons.csv``, results.json, report."""
    est = IRT(model=model, rasch_scale=rasch_scale, se=se, g_prior=g_prior)
    est._check_params()
    df = read_scores(scores, freq_col=freq, key=key, student_col=None if row_ids else "student")
    params = {"model": model, "rasch_scale": rasch_scale, "se": se,
              "g_prior": list(g_prior) if g_prior else None, "quadpts": est.quadpts,
              **reading_params(freq, key, row_ids)}  # fmt: skip
    inputs = {"scores": scores, **({"key": key} if key is not None else {})}
    run = RunDir(out, command="items irt", params=params, inputs=inputs)
    return write_irt(run, est.fit(df).results_, str(scores))


def _irt_params(res: IRTResults) -> dict[str, Any]:
    return {"model": res.model, "rasch_scale": res.rasch_scale, "se": res.se_method,
            "g_prior": list(res.g_prior) if res.g_prior else None,
            "quadpts": len(res.theta)}  # fmt: skip


def write_irt(run: RunDir, res: IRTResults, source: str) -> dict:
    """The run folder of ``items irt`` from its results (the command and
    :meth:`IRTResults.save` both write through here)."""
    run.table("items", res.items.reset_index())
    run.table("persons", res.persons.reset_index())
    rep = Report(f"IRT: {res.model.upper()} (marginal maximum likelihood)", source)
    rep.section("Fit").text(res.summary().split("\n           a")[0].replace("\n", "; "))
    rep.section("Items").text(
        "Slope-intercept form (a, d, g) and IRT form (b = -d/a) with standard errors "
        f"({res.se_method}); S-X2 item fit (Orlando-Thissen) with df and p."
    ).table(res.items.reset_index())
    _figures(res, rep)
    results = dict(res.headline())
    run.finish(results, rep.render())
    return results


def save_irt(res: IRTResults, folder: str | Path, *, overwrite: bool = False) -> Path:
    """:meth:`IRTResults.save`: the folder ``items irt`` writes."""
    run = saved_run(folder, "items irt", params=_irt_params(res), overwrite=overwrite)
    write_irt(run, res, "results from Python")
    return run.path


def irt_compare_run(out: Path, real: Path, simulated: Path, *, model: str = "2pl") -> dict:
    """Real vs simulated students: ``items.csv`` side by side, ``correlations.csv``."""
    cmp = compare_irt(read_scores(real), read_scores(simulated), model=model)
    run = RunDir(out, command="items irt-compare", params={"model": model},
                 inputs={"real": real, "simulated": simulated})  # fmt: skip
    return write_irt_compare(run, cmp, f"{real} vs {simulated}")


def save_irt_compare(cmp: IRTComparison, folder: str | Path, *, overwrite: bool = False) -> Path:
    """:meth:`IRTComparison.save`: the folder ``items irt-compare`` writes."""
    run = saved_run(folder, "items irt-compare", params={"model": cmp.real.model},
                    overwrite=overwrite)  # fmt: skip
    write_irt_compare(run, cmp, "results from Python")
    return run.path


def write_irt_compare(run: RunDir, cmp: IRTComparison, source: str) -> dict:
    """The run folder of ``items irt-compare`` (the command and :meth:`IRTComparison.save`)."""
    model = cmp.real.model
    run.table("items", cmp.items.reset_index())
    run.table("correlations", cmp.correlations)
    rep = Report("Item parameters: real versus simulated students", source)
    rep.section("Correlations across items").table(cmp.correlations)
    sec = rep.section("Items")
    t = cmp.items
    cols = ["b", "a"] if model != "rasch" else ["b"]
    fig, axes = plt.subplots(1, len(cols), figsize=(4.5 * len(cols), 4), layout="constrained",
                             squeeze=False)  # fmt: skip
    for ax, p in zip(axes[0], cols, strict=True):
        ax.errorbar(t[f"{p}_real"], t[f"{p}_sim"],
                    xerr=[t[f"{p}_real"] - t[f"{p}_real_low"], t[f"{p}_real_high"] - t[f"{p}_real"]],
                    yerr=[t[f"{p}_sim"] - t[f"{p}_sim_low"], t[f"{p}_sim_high"] - t[f"{p}_sim"]],
                    fmt="o", ms=3, lw=0.6)  # fmt: skip
        lo = float(np.nanmin([t[f"{p}_real"].min(), t[f"{p}_sim"].min()]))
        hi = float(np.nanmax([t[f"{p}_real"].max(), t[f"{p}_sim"].max()]))
        ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8)
        ax.set_xlabel(f"{p} (real)")
        ax.set_ylabel(f"{p} (simulated)")
    sec.figure(fig, "Item parameters with 95% intervals; the line is equality")
    sec.table(t.reset_index())
    results = dict(cmp.headline())
    run.finish(results, rep.render())
    return results
