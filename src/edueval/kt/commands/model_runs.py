"""Run directories of ``kt crossvalidate``, ``kt compare`` and ``kt roster``: read the files,
compute with :mod:`.crossval`, :mod:`.compare` and :mod:`.roster`, write tables, figures,
results.json and report.html.  The CLI is a thin layer over these."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from ...io import InputError, require_columns
from ...report import Report
from ...report.figures import new_figure
from ...runs import RunDir, saved_run
from ..bkt.variants import read_param_file
from ..data import Columns, read_responses
from ..models.compare import CompareResult, compare_models
from ..models.crossval import FOLD_METRICS, CVResult, cross_validate
from ..models.registry import make_model, parse_models, spec_columns
from ..models.roster import Roster, load_model, replay

__all__ = [
    "crossvalidate_run",
    "compare_run",
    "roster_run",
    "save_compare",
    "write_compare",
    "save_crossvalidation",
    "write_crossvalidation",
]

_LABELS = {"rmse": "RMSE", "auc": "AUC", "accuracy": "accuracy", "loglik": "log-likelihood"}


def _read(data_path: Path, columns: Columns | None, specs: list[str], encoding: str):
    df, _, cols = read_responses(data_path, columns, encoding=encoding)
    for spec in specs:
        require_columns(df, spec_columns(spec), what=f"needed by model {spec}")
    return df, cols


def _fold_figure(scores: pd.DataFrame, title: str):
    """Per-fold values of each metric (one panel each), one line per model."""
    fig, axes = new_figure(9.0, 2.6)
    fig.clf()
    axes = fig.subplots(1, len(FOLD_METRICS))
    for ax, m in zip(axes, FOLD_METRICS, strict=True):
        for model, g in scores.groupby("model", sort=False):
            ax.plot(g["fold"] + 1, g[m], marker="o", label=model)
        ax.set_title(_LABELS[m], fontsize=9)
        ax.set_xlabel("fold", fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    return fig


def crossvalidate_run(
    out: Path, data_path: Path, *, spec: str = "bkt", n_folds: int = 5, by: str = "student",
    seed: int = 1, n_restarts: int = 5, columns: Columns | None = None,
    encoding: str = "utf-8",
) -> dict:  # fmt: skip
    """Cross-validate one model specification on a response file."""
    parse_models(spec)
    df, cols = _read(data_path, columns, [spec], encoding)
    run = RunDir(out, command="kt crossvalidate", seed=seed, inputs={"data": data_path},
                 params={"model": spec, "folds": n_folds, "by": by, "n_restarts": n_restarts,
                         "columns": asdict(cols), "encoding": encoding})  # fmt: skip
    res: CVResult = cross_validate(
        df, lambda: make_model(spec, seed=seed, n_restarts=n_restarts, columns=cols),
        n_folds=n_folds, by=by, seed=seed, columns=cols, name=spec,
    )  # fmt: skip
    res.params["n_restarts"] = n_restarts
    return write_crossvalidation(run, res, str(data_path))


def save_crossvalidation(res: CVResult, folder: str | Path, *, overwrite: bool = False) -> Path:
    """:meth:`CVResult.save`: the folder ``kt crossvalidate`` writes."""
    params = {k: v for k, v in res.params.items() if k != "seed"}
    run = saved_run(folder, "kt crossvalidate", params=params, seed=res.params.get("seed"),
                    overwrite=overwrite)  # fmt: skip
    write_crossvalidation(run, res, "results from Python")
    return run.path


def write_crossvalidation(run: RunDir, res: CVResult, source: str) -> dict:
    """The tables, figure, report and results.json of ``kt crossvalidate`` (the command and
    :meth:`CVResult.save` both write through here)."""
    spec, n_folds, by, seed = res.model, res.n_folds, res.by, res.params.get("seed")
    run.table("folds", res.scores)
    table = res.table
    run.table("summary", table)
    run.table("heldout", res.heldout())
    rep = Report(f"Cross-validation of {spec}", f"{source}: {n_folds} folds by {by}, seed {seed}")
    rep.section("Mean ± SD over folds").table(table[table["scope"] == "all"])
    rep.section("Per fold").table(res.scores[res.scores["scope"] == "all"])
    fig = _fold_figure(res.scores[res.scores["scope"] == "all"].assign(model=spec), spec)
    run.figure("folds", fig)
    rep.section("Per fold (figure)").figure((run.path / "figures" / "folds.png").read_bytes())
    rep.section("Per skill, mean ± SD over folds").table(table[table["scope"] != "all"])
    results = dict(res.headline())
    run.finish(results, rep.render())
    return results


def _report_compare(res: CompareResult, data_path: str, seed: int | None, run: RunDir) -> str:
    rep = Report("Knowledge-tracing models compared",
                 f"{data_path}: {len(res.models)} models on the same {res.n_folds} student folds, "
                 f"seed {seed}")  # fmt: skip
    rep.section("Held-out scores and information criteria").text(
        "Means over folds with 95% t intervals over folds; AIC and BIC of each model fitted "
        "to all the data (k = free parameters, N = responses)."
    ).table(res.table)
    rep.section(f"Paired per-fold differences against {res.models[0]}").text(
        "d = metric(model) - metric(first model) on each fold (same students); mean, 95% t "
        "interval and two-sided p of the t test of mean 0."
    ).table(res.paired)
    sec = rep.section("Figures")
    for name in ("folds", "heldout_loglik"):
        sec.figure((run.path / "figures" / f"{name}.png").read_bytes())
    rep.section("Per fold").table(res.per_fold)
    return rep.render()


def _ci_figure(table: pd.DataFrame):
    fig, ax = new_figure(6.0, 0.6 + 0.45 * len(table))
    y = np.arange(len(table))[::-1]
    err = [table["loglik"] - table["loglik_ci_low"], table["loglik_ci_high"] - table["loglik"]]
    ax.errorbar(table["loglik"], y, xerr=err, fmt="o", color="#3b6ea5", capsize=3)
    ax.set_yticks(y, table["model"])
    ax.set_xlabel("held-out log-likelihood per fold (mean, 95% t interval)")
    return fig


def compare_run(
    out: Path, data_path: Path, *, models: str, n_folds: int = 5, seed: int = 1,
    n_restarts: int = 5, columns: Columns | None = None, encoding: str = "utf-8",
    progress=None,
) -> dict:  # fmt: skip
    """Compare model specifications (``"bkt,afm,pfa"``) on the same student folds."""
    specs = parse_models(models)
    df, cols = _read(data_path, columns, specs, encoding)
    run = RunDir(out, command="kt compare", seed=seed, inputs={"data": data_path},
                 params={"models": specs, "folds": n_folds, "by": "student",
                         "n_restarts": n_restarts, "columns": asdict(cols),
                         "encoding": encoding})  # fmt: skip
    res = compare_models(df, specs, n_folds=n_folds, seed=seed, n_restarts=n_restarts,
                         columns=cols, progress=progress)  # fmt: skip
    return write_compare(run, res, str(data_path))


def write_compare(run: RunDir, res: CompareResult, source: str) -> dict:
    """The tables, figures, report and results.json of ``kt compare`` (the command and
    :meth:`CompareResult.save` both write through here)."""
    run.table("models", res.table)
    run.table("paired", res.paired)
    run.table("per_fold", res.per_fold)
    run.table("per_skill", res.per_skill)
    run.figure("folds", _fold_figure(res.per_fold, "held-out scores per fold"))
    run.figure("heldout_loglik", _ci_figure(res.table))
    results = dict(res.headline())
    run.finish(results, _report_compare(res, source, res.params.get("seed"), run))
    return results


def save_compare(res: CompareResult, folder: str | Path, *, overwrite: bool = False) -> Path:
    """:meth:`CompareResult.save`: the folder ``kt compare`` writes."""
    params = {k: v for k, v in res.params.items() if k != "seed"}
    run = saved_run(folder, "kt compare", params=params, seed=res.params.get("seed"),
                    overwrite=overwrite)  # fmt: skip
    write_compare(run, res, "results from Python")
    return run.path


def _roster_params(path: Path) -> pd.DataFrame:
    """Parameters from a file, or from a folder written by ``save_model``."""
    if path.is_dir():
        return load_model(path).params_
    return read_param_file(path)


def _param_skills(params: pd.DataFrame) -> set[str]:
    if "parameter" in params.columns:
        return set(params["skill"].astype(str))
    return set(params.index.astype(str))


def roster_run(
    out: Path, params_path: Path, updates_path: Path, *, columns: Columns | None = None,
    threshold: float = 0.95, encoding: str = "utf-8",
) -> dict:  # fmt: skip
    """Replay a log of responses through a :class:`Roster`; write every update and the final
    state of each student and skill."""
    if not 0 < threshold < 1:
        raise InputError(f"threshold= must be in (0, 1), got {threshold}")
    params = _roster_params(params_path)
    df, seqs, cols = read_responses(updates_path, columns, encoding=encoding)
    missing = sorted(set(map(str, seqs.skills)) - _param_skills(params))
    if missing:
        raise InputError(f"no parameters for skill {missing[0]!r} of the updates",
                         file=str(params_path))  # fmt: skip
    run = RunDir(out, command="kt roster", inputs={"params": params_path, "updates": updates_path},
                 params={"threshold": threshold, "columns": asdict(cols), "encoding": encoding})  # fmt: skip
    roster = Roster(params, threshold=threshold)
    updates = replay(roster, df, cols)
    state = roster.state()
    run.table("updates", updates)
    run.table("state", state)
    rep = Report("Roster replay", f"{updates_path} with parameters {params_path}")
    rep.section("Final state").table(state.head(200), caption="first 200 rows (state.csv has all)")
    results = {"n_updates": len(updates), "n_students": int(state["student"].nunique()),
               "n_mastered": int(state["mastered"].sum()),
               "mean_p_known": float(state["p_known"].mean())}  # fmt: skip
    run.finish(results, rep.render())
    return results
