"""P2 runs: each ``pairwise`` command as a function that reads files, computes and writes a run
directory (tables, results.json, report.html).  The CLI is a thin layer over these."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from .. import progress as _progress
from ..executor import InProcess
from ..io import InputError
from ..report import Report
from ..runs import RunDir, saved_run
from .bradley_terry import BradleyTerry, BradleyTerryResults
from .comparisons import TIE_MODES, exclude_raters, read_comparisons, read_rater_ids
from .figures import alpha_boxplots, difference_forest, order_effects, reliability_curves
from .hierarchical import HierarchicalBradleyTerry, HierarchicalResults
from .ml_fit import MLResults
from .quality import RELIABILITY_COLUMNS, reliability_sentence
from .raters import RaterModel, RaterResults
from .summary import SummaryResults, read_abilities, read_scores, summarize
from .teacher_test import import_teacher_test

if TYPE_CHECKING:
    from .simulation import SimulationResults

__all__ = [
    "POSTERIOR_FILE",
    "check_sampler_options",
    "fit_run",
    "save_fit",
    "save_hierarchical",
    "write_hierarchical",
    "save_simulation",
    "write_simulation",
    "save_raters",
    "write_raters",
    "save_summary",
    "write_summary",
    "write_fit",
    "hierarchical_run",
    "import_run",
    "load_comparisons",
    "raters_run",
    "sampler_versions",
    "simulate_run",
    "summarize_run",
]

Warn = Callable[[str], None] | None

#: the fitting methods of ``pairwise fit``
FIT_METHODS = ("nuts", "ml")

#: the posterior draws that ``--save-draws`` writes into the run folder (ArviZ NetCDF)
POSTERIOR_FILE = "posterior.nc"


def check_sampler_options(chains: int, warmup: int, draws: int, ties: str | None = None) -> None:
    """Reject impossible sampler settings as bad input (exit 2), before any work."""
    if chains < 1 or warmup < 1 or draws < 1:
        raise InputError(
            f"chains=, warmup= and draws= must be at least 1 (got {chains}, {warmup}, {draws})"
        )
    if ties is not None and ties not in TIE_MODES:
        raise InputError(f"ties= must be one of {', '.join(TIE_MODES)}; got {ties!r}")


def load_comparisons(
    path: Path, exclude_path: Path | None = None, warn: Warn = None
) -> tuple[pd.DataFrame, list[str]]:
    """Read a comparisons file and remove the raters listed in ``exclude_path``."""
    df = read_comparisons(path)
    removed: list[str] = []
    if exclude_path is not None:
        ids = read_rater_ids(exclude_path)
        df, removed, unknown = exclude_raters(df, ids, source=exclude_path)
        if unknown and warn:
            warn(
                f"{len(unknown)} rater id(s) in {exclude_path} are not in the data: "
                + ", ".join(unknown[:5])
                + (" ..." if len(unknown) > 5 else "")
            )
        if len(df) == 0:
            raise InputError("excluding these raters leaves no comparison", file=exclude_path)
    return df, removed


def sampler_versions() -> dict[str, str]:
    """Versions of the sampling stack (config.json's own list does not track them)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("jax", "jaxlib", "numpyro", "arviz", "statsmodels"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            continue
    return out


def _inputs(**paths: Path | None) -> dict[str, Path]:
    return {k: v for k, v in paths.items() if v is not None}


def import_run(out: Path, items_path: Path) -> dict:
    """``pairwise import-teacher-test``: items.jsonl -> comparisons.csv."""
    df = import_teacher_test(items_path)
    run = RunDir(
        out, command="pairwise import-teacher-test", params={}, inputs={"items": items_path}
    )
    run.table("comparisons", df)
    counts = df.groupby(["attribute", "outcome"]).size().unstack(fill_value=0).reset_index()
    results: dict[str, Any] = {
        "n_comparisons": len(df),
        "n_ties": int((df["outcome"] == "tie").sum()),
        "n_items": int(df["item"].nunique()),
        "n_raters": int(df["rater"].nunique()),
        "attributes": sorted(df["attribute"].unique()),
        "agents": sorted(set(df["first"]) | set(df["second"])),
    }
    rep = Report("AI Teacher Test comparisons", str(items_path))
    rep.section("Imported").text(
        f"{results['n_comparisons']} comparisons ({results['n_ties']} ties) of "
        f"{len(results['agents'])} agents on {results['n_items']} items by {results['n_raters']} "
        "raters; written to comparisons.csv (item, attribute, rater, first, second, outcome, "
        "then timing columns)."
    ).table(counts, "Outcomes per attribute")
    run.finish(results, rep.render())
    return results


def _fit_report(res: BradleyTerryResults, title: str, subtitle: str) -> Report:
    rep = Report(title, subtitle)
    d = res.diagnostics()
    sec = rep.section("Model and diagnostics")
    sec.text(
        "Per group (" + " x ".join(res.design.groups) + "): P(first preferred) = logistic(alpha0 + "
        "alpha_first - alpha_second), alpha ~ N(0, 1), alpha0 ~ N(0, 1) (Tack & Piech 2022, Eq. 2), "
        f"all {len(res.groups)} groups sampled together with NUTS (numpyro): {d['chains']} chains x "
        f"({d['warmup']} warm-up + {d['draws']} draws), {d['chain_method']} chains, "
        f"{d['sampling_seconds']:.1f} s. Ties: {res.ties}.",
        _diagnostics_sentence(d),
    )
    for w in res.warnings():
        sec.text("Warning: " + w)
    if len(res.skipped):
        sec.table(res.skipped, "Groups not fitted (fewer comparisons than --min-comparisons)")
    rep.section("Per agent").table(
        res.agent_table(),
        "Mean over groups; % of groups with posterior mean alpha > 0 and with "
        "the 95% HDI excluding 0",
        digits=2,
    )
    if "attribute" in res.design.groups and "item" in res.design.groups:
        rep.sections[-1].figure(
            alpha_boxplots(
                res.abilities,
                attributes=sorted(res.abilities["attribute"].unique()),
                agents=list(res.design.agents),
            )
        )
    g = res.groups
    excl = g[(g["alpha0_hdi_low"] > 0) | (g["alpha0_hdi_high"] < 0)]
    rep.section("Order effect").text(
        f"Mean alpha0 over groups {g['alpha0_mean'].mean():+.3f}; the 95% HDI excludes 0 in "
        f"{len(excl)} of {len(g)} groups."
    )
    quality_sections(rep, res.groups, res.raters, res.params.get("split_half_repeats", 20))
    rep.section("Abilities per group and agent").table(res.abilities, digits=3)
    return rep


def quality_sections(rep: Report, groups: pd.DataFrame, raters, repeats: int) -> None:
    """The report's reliability and rater-fit sections (both fit methods)."""
    from .misfit import T_CUT

    keys = [c for c in groups.columns if c in ("item", "attribute", "rater")]
    sec = rep.section("Reliability").text(reliability_sentence(groups, repeats))
    if len(groups) <= 50:
        sec.table(groups[[*keys, *RELIABILITY_COLUMNS]], digits=3)
    if raters is not None:
        rep.section("Rater fit").text(
            "Infit and outfit mean squares per rater from the model's expected probabilities "
            "(1 = as noisy as the model expects; above 1 more erratic), with their Wilson-"
            f"Hilferty t; a rater is flagged as misfitting when the infit t exceeds {T_CUT:g} "
            "(Wright & Linacre 1994); infit_above_2sd marks infits above the mean + 2 s.d. of "
            "all raters (Pollitt 2012). Worst infit first."
        ).table(raters, digits=3)


def _diagnostics_sentence(d: dict) -> str:
    return (
        f"Max R-hat {d['max_rhat']:.4f} (ArviZ, rank-normalised split R-hat); min ESS bulk "
        f"{d['min_ess_bulk']:.0f}, tail {d['min_ess_tail']:.0f}; {d['n_divergent']} divergent "
        f"transitions; {d['n_rhat_above_1.01']} quantity(ies) with R-hat > 1.01 and "
        f"{d['n_ess_below_400']} with ESS < 400."
    )


def save_posterior(run: RunDir, idata) -> str:
    """Write ``idata`` (ArviZ ``InferenceData``) as :data:`POSTERIOR_FILE` in the run folder, via a
    temporary file and an atomic rename; returns the file's name."""
    target = run.path / POSTERIOR_FILE
    tmp = run.path / f".{POSTERIOR_FILE}.tmp"
    try:
        idata.to_netcdf(str(tmp))
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return POSTERIOR_FILE


def fit_run(
    out: Path,
    data_path: Path,
    *,
    ties: str = "random",
    exclude_path: Path | None = None,
    chains: int = 4,
    warmup: int = 1000,
    draws: int = 1000,
    seed: int = 1,
    min_comparisons: int = 3,
    warn: Warn = None,
    groups_per_task: int = 0,
    executor=None,
    save_draws: bool = False,
    method: str = "nuts",
    ridge: float = 0.0,
    order_effect: bool = True,
    split_half_repeats: int = 20,
) -> dict:
    """``pairwise fit``: per (item, attribute) Bayesian Bradley-Terry, all sampled together, or
    in blocks of ``groups_per_task`` groups as tasks on ``executor``; with ``save_draws`` the
    posterior draws go to :data:`POSTERIOR_FILE` (ArviZ NetCDF) in the run folder.  With
    ``method="ml"`` the same model by maximum likelihood (``ridge`` > 0: MAP), in seconds
    (:mod:`.ml`).  Both write SSR, split-half reliability and infit/outfit (:mod:`.quality`)."""
    check_sampler_options(chains, warmup, draws, ties)
    if min_comparisons < 1:
        raise InputError("min_comparisons= must be at least 1")
    if method not in FIT_METHODS:
        raise InputError(f"method= must be one of {', '.join(FIT_METHODS)}; got {method!r}")
    if method == "ml" and save_draws:
        raise InputError("save_draws= needs method='nuts' (an ML fit has no draws)")
    if not (0 <= ridge < float("inf")):
        raise InputError(f"ridge= must be a finite number >= 0; got {ridge}")
    if split_half_repeats < 1:
        raise InputError(f"split_half_repeats= must be at least 1; got {split_half_repeats}")
    df, removed = load_comparisons(data_path, exclude_path, warn)
    model = BradleyTerry(df, ties=ties, seed=seed, min_comparisons=min_comparisons)
    if len(model.skipped) and warn:
        names = [f"{r.item}/{r.attribute} ({r.n_comparisons})" for r in model.skipped.itertuples()]
        warn(
            f"{len(names)} item x attribute group(s) with fewer than {min_comparisons} comparisons "
            "not fitted (--min-comparisons): "
            + ", ".join(names[:5])
            + (" ..." if len(names) > 5 else "")
        )
    if method == "ml":
        return _ml_fit_run(
            out,
            data_path,
            model,
            removed=removed,
            exclude_path=exclude_path,
            seed=seed,
            ridge=ridge,
            order_effect=order_effect,
            split_half_repeats=split_half_repeats,
            warn=warn,
        )
    run = RunDir(
        out,
        command="pairwise fit",
        params={
            "method": "nuts",
            "split_half_repeats": split_half_repeats,
            "ties": ties,
            "chains": chains,
            "warmup": warmup,
            "draws": draws,
            "min_comparisons": min_comparisons,
            "excluded_raters": removed,
            "sampler_versions": sampler_versions(),
            **({"groups_per_task": groups_per_task} if groups_per_task else {}),
            **({"executor": executor.describe()} if executor is not None else {}),
            "save_draws": save_draws,
        },
        seed=seed,
        inputs=_inputs(data=data_path, exclude_raters=exclude_path),
    )
    (run.path / POSTERIOR_FILE).unlink(missing_ok=True)  # never a previous run's draws
    res = model.fit(
        chains=chains,
        warmup=warmup,
        draws=draws,
        progress=_progress.enabled() and (executor is None or not hasattr(executor, "client")),
        groups_per_task=groups_per_task,
        executor=executor,
        keep_draws=save_draws,
        split_half_repeats=split_half_repeats,
    )
    res.excluded_raters = removed
    if warn:
        for w in res.warnings():
            warn(w)
    posterior = save_posterior(run, res.to_inference_data()) if save_draws else None
    return write_fit(run, res, str(data_path), posterior=posterior)


def _fit_params(res: BradleyTerryResults | MLResults) -> dict[str, Any]:
    """config.json's parameters of a ``pairwise fit`` run, from its results (NUTS or ML)."""
    p = res.params
    if res.method == "ml":
        return {"method": "ml", "ties": res.ties, "ridge": p["ridge"],
                "order_effect": p["order_effect"], "identification": "sum-to-zero abilities per group",
                "min_comparisons": p["min_comparisons"],
                "split_half_repeats": p["split_half_repeats"],
                "excluded_raters": res.excluded_raters}  # fmt: skip
    return {"method": "nuts", "split_half_repeats": p["split_half_repeats"], "ties": res.ties,
            "chains": p["chains"], "warmup": p["warmup"], "draws": p["draws"],
            "min_comparisons": p["min_comparisons"], "excluded_raters": res.excluded_raters,
            "sampler_versions": sampler_versions(),
            **({"groups_per_task": p["groups_per_task"]} if p.get("groups_per_task") else {}),
            "executor": p.get("executor") or InProcess().describe(), "save_draws": False}  # fmt: skip


def write_fit(
    run: RunDir, res: BradleyTerryResults | MLResults, source: str, *, posterior: str | None = None
) -> dict:
    """The tables, report and results.json of ``pairwise fit`` (NUTS or ML), from its results
    (the command and the results objects' ``save`` both write through here)."""
    results = _fit_tables(run, res)
    if posterior:
        results["posterior"] = posterior
    seed = res.params.get("seed")
    if isinstance(res, MLResults):
        rep = _ml_report(
            res, f"{source}, ties: {res.ties}, ridge {res.params['ridge']}, seed {seed}"
        )
    else:
        rep = _fit_report(
            res, "Bayesian Bradley-Terry fit", f"{source}, ties: {res.ties}, seed {seed}"
        )
    run.finish(results, rep.render())
    return results


def save_fit(res: BradleyTerryResults | MLResults, folder: str | Path, *,
             overwrite: bool = False) -> Path:  # fmt: skip
    """``save`` of a Bradley-Terry fit (NUTS or ML): the folder ``pairwise fit`` writes (the
    posterior draws are not saved: the command writes them with ``--save-draws``)."""
    run = saved_run(folder, "pairwise fit", params=_fit_params(res), seed=res.params.get("seed"),
                    overwrite=overwrite)  # fmt: skip
    write_fit(run, res, "results from Python")
    return run.path


def _fit_tables(run: RunDir, res: Any) -> dict:
    """The tables of a ``pairwise fit`` run (NUTS or ML results alike) and its headline numbers."""
    assert res.raters is not None
    for name, table in (("abilities", res.abilities), ("groups", res.groups),
                        ("agents", res.agent_table()), ("raters", res.raters)):  # fmt: skip
        run.table(name, table)
    if len(res.skipped):
        run.table("skipped", res.skipped)
    return dict(res.headline())


def _ml_fit_run(
    out: Path,
    data_path: Path,
    model: BradleyTerry,
    *,
    removed: list[str],
    exclude_path: Path | None,
    seed: int,
    ridge: float,
    order_effect: bool,
    split_half_repeats: int,
    warn: Warn,
) -> dict:
    """``pairwise fit --method ml``: the run folder of an ML (or MAP) fit."""
    run = RunDir(
        out,
        command="pairwise fit",
        params={
            "method": "ml",
            "ties": model.ties,
            "ridge": ridge,
            "order_effect": order_effect,
            "identification": "sum-to-zero abilities per group",
            "min_comparisons": model.min_comparisons,
            "split_half_repeats": split_half_repeats,
            "excluded_raters": removed,
        },
        seed=seed,
        inputs=_inputs(data=data_path, exclude_raters=exclude_path),
    )
    (run.path / POSTERIOR_FILE).unlink(missing_ok=True)
    res = model.fit_ml(
        ridge=ridge, order_effect=order_effect, split_half_repeats=split_half_repeats
    )
    res.excluded_raters = removed
    if warn:
        for w in res.warnings():
            warn(w)
    return write_fit(run, res, str(data_path))


def _ml_report(res: MLResults, subtitle: str) -> Report:
    """The report of an ML (or MAP) fit."""
    d = res.diagnostics()
    ridge, order_effect = res.params["ridge"], res.params["order_effect"]
    rep = Report("Bradley-Terry fit (maximum likelihood)", subtitle)
    sec = rep.section("Model")
    sec.text(
        "Per group ("
        + " x ".join(res.design.groups)
        + "): P(first preferred) = logistic("
        + ("alpha0 + " if order_effect else "")
        + "alpha_first - alpha_second), fitted by Newton-Raphson "
        + (
            "(plain maximum likelihood)"
            if ridge == 0
            else f"with the penalty ridge/2 * sum of squares, ridge = {ridge} (MAP under "
            f"N(0, {1 / ridge:g}) priors)"
        )
        + "; abilities identified by summing to zero in each group; standard errors from the "
        "observed information (projected onto sum-zero abilities), Wald 95% intervals. "
        f"{len(res.groups)} group(s) in {d['fit_seconds']:.2f} s; {d['n_not_converged']} not "
        f"converged; {d['n_ml_missing']} without a finite ML estimate.",
    )
    for w in res.warnings():
        sec.text("Warning: " + w)
    if len(res.skipped):
        sec.table(res.skipped, "Groups not fitted (fewer comparisons than --min-comparisons)")
    rep.section("Per agent").table(res.agent_table(), digits=2)
    quality_sections(rep, res.groups, res.raters, res.params["split_half_repeats"])
    rep.section("Abilities per group and agent").table(res.abilities, digits=3)
    return rep


def raters_run(
    out: Path,
    data_path: Path,
    *,
    per: str = "attribute",
    ties: str = "drop",
    compare_path: Path | None = None,
    chains: int = 4,
    warmup: int = 1000,
    draws: int = 1000,
    seed: int = 1,
    warn: Warn = None,
) -> dict:
    """``pairwise raters``: per-rater order effect, flags, overlap with a reference list."""
    check_sampler_options(chains, warmup, draws, ties)
    if per not in ("attribute", "rater"):
        raise InputError(f"per= must be 'attribute' or 'rater'; got {per!r}")
    df, _ = load_comparisons(data_path)
    reference = read_rater_ids(compare_path) if compare_path is not None else None
    if reference is not None and not set(reference) & set(df["rater"]):
        raise InputError(
            f"none of the {len(reference)} rater id(s) appear in the data's 'rater' column "
            f"(first one: {reference[0]!r}); is it the right file?",
            file=compare_path,
        )
    run = RunDir(
        out,
        command="pairwise raters",
        params={
            "per": per,
            "ties": ties,
            "chains": chains,
            "warmup": warmup,
            "draws": draws,
            "sampler_versions": sampler_versions(),
        },
        seed=seed,
        inputs=_inputs(data=data_path, compare=compare_path),
    )
    res = RaterModel(df, per=per, ties=ties, seed=seed).fit(
        chains=chains, warmup=warmup, draws=draws, progress=_progress.enabled()
    )
    res.reference = reference
    if warn:
        for w in res.fit.warnings():
            warn(w)
    return write_raters(run, res, str(data_path), str(compare_path))


def _raters_params(res: RaterResults) -> dict[str, Any]:
    p = res.params
    return {"per": res.per, "ties": p["ties"], "chains": p["chains"], "warmup": p["warmup"],
            "draws": p["draws"], "sampler_versions": sampler_versions()}  # fmt: skip


def save_raters(res: RaterResults, folder: str | Path, *, overwrite: bool = False) -> Path:
    """:meth:`RaterResults.save`: the folder ``pairwise raters`` writes."""
    run = saved_run(folder, "pairwise raters", params=_raters_params(res),
                    seed=res.params.get("seed"), overwrite=overwrite)  # fmt: skip
    write_raters(run, res, "results from Python", "the reference list")
    return run.path


def write_raters(run: RunDir, res: RaterResults, source: str, reference_source: str) -> dict:
    """The tables, report and results.json of ``pairwise raters`` (the command and
    :meth:`RaterResults.save` both write through here)."""
    per, ties, seed = res.per, res.params["ties"], res.params.get("seed")
    run.table("raters", res.raters)
    run.table("groups", res.groups)
    results = dict(res.headline())
    rep = Report("Rater order effects", f"{source}, per {per}, ties: {ties}, seed {seed}")
    sec = rep.section("Model")
    sec.text(
        "Per rater" + (" and attribute" if per == "attribute" else "") + ": P(first preferred) = "
        "logistic(alpha0 + alpha_first - alpha_second) with agent-level abilities (over all items "
        "the rater judged) as nuisance parameters, alpha ~ N(0, 1), alpha0 ~ N(0, 1). A rater is "
        "flagged when the 95% HDI of alpha0 excludes 0 in at least one of their models "
        "(Tack & Piech 2022, Sec. 3.3).",
        f"{len(res.flagged)} of {len(res.raters)} raters flagged.",
        _diagnostics_sentence(res.fit.diagnostics()),
    )
    for w in res.fit.warnings():
        sec.text("Warning: " + w)
    if res.reference is not None:
        ov = results["overlap"]
        rep.section("Overlap with the reference list").text(
            f"{reference_source}: {ov['n_reference']} rater(s), {ov['n_reference_in_data']} in the "
            f"data; flagged by both: {ov['n_both']}; only in the reference: "
            f"{', '.join(ov['reference_only']) or 'none'}; flagged here only: "
            f"{', '.join(ov['flagged_only']) or 'none'}."
        )
    rep.section("Rater fit (infit / outfit)").text(
        "Infit and outfit mean squares per rater from the expected probabilities of the "
        "per-(item, attribute) model over all raters at its posterior mode (N(0, 1) priors; "
        "penalised ML), with their Wilson-Hilferty t. 1 = as noisy as the model expects; a rater "
        "answering at random is well above 1. Misfitting: infit t > 2 (Wright & Linacre 1994); "
        "infit_above_2sd: above the raters' mean + 2 s.d. (Pollitt 2012). "
        f"{len(res.misfitting)} of {len(res.raters)} raters misfitting"
        + (f": {', '.join(res.misfitting[:10])}" if res.misfitting else "")
        + "."
    ).table(
        res.raters.sort_values("infit", ascending=False)[
            [
                "rater",
                "n_comparisons",
                "infit",
                "infit_t",
                "outfit",
                "outfit_t",
                "misfit",
                "infit_above_2sd",
            ]
        ],
        digits=3,
    )
    rep.section("Most extreme order effects").figure(
        order_effects(res.groups, title="alpha0 per rater model (flagged in red)")
    ).table(res.raters.sort_values("alpha0_mean", key=abs, ascending=False), digits=3)
    run.finish(results, rep.render())
    return results


def _summary_report(res: SummaryResults, title: str, subtitle: str) -> Report:
    rep = Report(title, subtitle)
    rep.section("One-way ANOVA across agents").table(res.anova, digits=4)
    rep.section("Tukey HSD").table(res.tukey, "a - b with 95% family-wise CI", digits=3)
    rep.section("Table 3").table(res.table3, digits=1)
    if res.correlation is not None:
        rep.section("Correlation with the external score").table(res.correlation, digits=3)
    return rep


def summarize_run(
    out: Path,
    abilities_path: Path,
    *,
    scores_path: Path | None = None,
    score_column: str = "score",
    agent_order: list[str] | None = None,
) -> dict:
    """``pairwise summarize``: ANOVA, Tukey HSD, Table 3, optional correlation."""
    ab = read_abilities(abilities_path)
    scores = read_scores(scores_path, score_column) if scores_path is not None else None
    res = summarize(
        ab,
        scores=scores,
        score_column=score_column if scores is not None else None,
        agent_order=agent_order,
    )
    src = abilities_path / "abilities.csv" if Path(abilities_path).is_dir() else abilities_path
    run = RunDir(
        out,
        command="pairwise summarize",
        params={
            "score_column": score_column if scores is not None else None,
            "agent_order": agent_order,
        },
        inputs=_inputs(abilities=src, scores=scores_path),
    )
    return write_summary(run, res, str(src))


def write_summary(run: RunDir, res: SummaryResults, source: str) -> dict:
    """The tables, report and results.json of ``pairwise summarize`` (the command and
    :meth:`SummaryResults.save` both write through here)."""
    run.table("anova", res.anova)
    run.table("tukey", res.tukey)
    run.table("table3", res.table3)
    if res.correlation is not None:
        run.table("correlation", res.correlation)
    results = dict(res.headline())
    run.finish(results, _summary_report(res, "Per-item abilities across agents", source).render())
    return results


def save_summary(res: SummaryResults, folder: str | Path, *, overwrite: bool = False) -> Path:
    """:meth:`SummaryResults.save`: the folder ``pairwise summarize`` writes."""
    params = {"score_column": res.params.get("score_column"),
              "agent_order": res.params.get("agent_order")}  # fmt: skip
    run = saved_run(folder, "pairwise summarize", params=params, overwrite=overwrite)
    write_summary(run, res, "results from Python")
    return run.path


def hierarchical_report_section(
    rep: Report, res: HierarchicalResults, title: str, labels: dict[str, str] | None = None
) -> None:
    """The pooled model's section; ``labels`` maps agent and attribute names to the names the
    rest of the report uses (full names, never cut)."""
    d = res.diagnostics()
    names = labels or {}
    shown = res.differences.copy()
    for col in ("attribute", "agent_a", "agent_b"):
        shown[col] = shown[col].map(lambda v: names.get(v, v))
    sigma = res.sigma.copy()
    if "attribute" in sigma.columns:
        sigma["attribute"] = sigma["attribute"].map(lambda v: names.get(v, v))
    rows = shown.assign(
        label=lambda t: t["attribute"] + ": " + t["agent_a"] + " - " + t["agent_b"],
        estimate=lambda t: t["diff_mean"],
        low=lambda t: t["diff_hdi_low"],
        high=lambda t: t["diff_hdi_high"],
        source="hierarchical (95% HDI)",
    )
    rep.section(title).text(
        "alpha_{item,agent} = mu_agent + sigma * u_{item,agent}, u ~ N(0,1), mu ~ N(0,1), "
        "sigma ~ HalfNormal(1), per attribute; agent differences mu_a - mu_b with 95% HDI and "
        f"P(a > b). Max R-hat {d['max_rhat']:.4f}, min ESS bulk {d['min_ess_bulk']:.0f}, tail "
        f"{d['min_ess_tail']:.0f}, {d['n_divergent']} divergences, {d['sampling_seconds']:.1f} s.",
        *("Warning: " + w for w in res.warnings()),
    ).table(shown, digits=3).table(sigma, "Item-level s.d.", digits=3).figure(
        difference_forest(rows, title="Agent differences (hierarchical model)")
    )


def hierarchical_run(
    out: Path,
    data_path: Path,
    *,
    ties: str = "random",
    exclude_path: Path | None = None,
    agent_order: list[str] | None = None,
    chains: int = 4,
    warmup: int = 1000,
    draws: int = 1000,
    seed: int = 1,
    warn: Warn = None,
) -> dict:
    """``pairwise hierarchical``: pooled model with agent differences and credible intervals."""
    check_sampler_options(chains, warmup, draws, ties)
    df, removed = load_comparisons(data_path, exclude_path, warn)
    run = RunDir(
        out,
        command="pairwise hierarchical",
        params={
            "ties": ties,
            "chains": chains,
            "warmup": warmup,
            "draws": draws,
            "agent_order": agent_order,
            "excluded_raters": removed,
            "sampler_versions": sampler_versions(),
        },
        seed=seed,
        inputs=_inputs(data=data_path, exclude_raters=exclude_path),
    )
    res = HierarchicalBradleyTerry(df, ties=ties, seed=seed, agent_order=agent_order).fit(
        chains=chains, warmup=warmup, draws=draws, progress=_progress.enabled()
    )
    res.excluded_raters = removed
    if warn:
        for w in res.warnings():
            warn(w)
    return write_hierarchical(run, res, str(data_path))


def write_hierarchical(run: RunDir, res: HierarchicalResults, source: str) -> dict:
    """The tables, report and results.json of ``pairwise hierarchical`` (the command and
    :meth:`HierarchicalResults.save` both write through here)."""
    run.table("differences", res.differences)
    run.table("agents", res.agents)
    run.table("sigma", res.sigma)
    run.table("items", res.items)
    p = res.params
    rep = Report("Hierarchical Bradley-Terry", f"{source}, ties: {p['ties']}, seed {p['seed']}")
    hierarchical_report_section(rep, res, "Agent differences")
    results = dict(res.headline())
    run.finish(results, rep.render())
    return results


def save_hierarchical(res: HierarchicalResults, folder: str | Path, *,
                      overwrite: bool = False) -> Path:  # fmt: skip
    """:meth:`HierarchicalResults.save`: the folder ``pairwise hierarchical`` writes."""
    p = res.params
    params = {"ties": p["ties"], "chains": p["chains"], "warmup": p["warmup"],
              "draws": p["draws"], "agent_order": p.get("agent_order"),
              "excluded_raters": res.excluded_raters,
              "sampler_versions": sampler_versions()}  # fmt: skip
    run = saved_run(folder, "pairwise hierarchical", params=params, seed=p.get("seed"),
                    overwrite=overwrite)  # fmt: skip
    write_hierarchical(run, res, "results from Python")
    return run.path


def simulate_run(out: Path, cfg, *, executor=None) -> dict:
    """``pairwise simulate``: simulated studies per pairing policy, reliabilities per budget."""
    from .simulation import simulate

    try:
        cfg.check()
    except ValueError as e:
        raise InputError(str(e)) from None
    run = RunDir(
        out,
        command="pairwise simulate",
        params={
            **{k: (list(v) if isinstance(v, tuple) else v) for k, v in cfg.__dict__.items()},
            "budgets": cfg.checkpoints(),
            **({"executor": executor.describe()} if executor is not None else {}),
        },
        seed=cfg.seed,
    )
    res = simulate(cfg, executor=executor)
    return write_simulation(run, res)


def save_simulation(res: SimulationResults, folder: str | Path, *,
                    overwrite: bool = False) -> Path:  # fmt: skip
    """:meth:`SimulationResults.save`: the folder ``pairwise simulate`` writes."""
    cfg = res.config
    params = {**{k: (list(v) if isinstance(v, tuple) else v) for k, v in cfg.__dict__.items()},
              "budgets": cfg.checkpoints(),
              "executor": res.params.get("executor") or InProcess().describe()}  # fmt: skip
    run = saved_run(folder, "pairwise simulate", params=params, seed=cfg.seed, overwrite=overwrite)
    write_simulation(run, res)
    return run.path


def write_simulation(run: RunDir, res: SimulationResults) -> dict:
    """The tables, report and results.json of ``pairwise simulate`` (the command and
    :meth:`SimulationResults.save` both write through here)."""
    from .simulation import __doc__ as how

    cfg = res.config
    run.table("budgets", res.budgets)
    run.table("replications", res.replications)
    run.table("to_target", res.to_target)
    results = dict(res.headline())
    rep = Report(
        "Simulated comparative judgement: reliability by pairing policy",
        f"{cfg.n_objects} objects, {cfg.n_judges} judges ({cfg.n_misfitting} at random), "
        f"spread {cfg.spread}, {cfg.replications} replications, seed {cfg.seed}",
    )
    rep.section("Design").text(*[p.strip() for p in (how or "").split("\n\n") if p.strip()][:4])
    sec = rep.section("Reliability per budget of judgements")
    sec.text(
        "Means over replications. 'trustworthy' is the figure edueval presents: SSR under random "
        "pairing; under adaptive pairing the split-half reliability between two panels of judges "
        "that chose their pairs from their own estimates. SSR under adaptive pairing is shown "
        "beside it and is inflated (Bramley 2015; Bramley & Vitello 2019)."
    ).table(res.budgets, digits=3).figure(
        reliability_curves(res.budgets, title="mean over replications")
    )
    lines = []
    for r in res.to_target.itertuples():
        v = r.judgements_to_target
        lines.append(
            f"{r.pairing}: "
            + ("does not reach" if pd.isna(v) else f"{v:.0f} judgements to reach")
            + f" a true reliability of {cfg.target}"
        )
    saving = res.saving()
    if saving is not None:
        lines.append(f"adaptive pairing saves {100 * saving:.1f}% of the judgements")
    rep.section("Judgements to the target").bullets(lines)
    run.finish(results, rep.render())
    return results
