"""What a ``kt fit`` run writes (run layer): the run parameters recorded in config.json, the
parameter tables, the report and results.json.  Shared by the in-memory run
(:mod:`edueval.kt.commands.pipeline`) and the dataset run (:mod:`edueval.kt.commands.dataset_runs`)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pandas as pd

from ...report import Report
from ...runs import RunDir, saved_run
from ..bkt.model import BKT
from ..data import Columns, RowFilter

__all__ = ["finish_fit", "fit_params", "save_fit", "write_fit", "write_fit_model"]


def fit_params(model: BKT, min_responses: int, cols: Columns, rows: RowFilter | None) -> dict:
    """The run parameters of ``kt fit`` recorded in config.json."""
    rows = rows or RowFilter()
    return {
        "model": repr(model),
        "forgets": model.forgets,
        "n_restarts": model.n_restarts,
        "max_iter": model.max_iter,
        "tol": model.tol,
        "guess_max": model.guess_max,
        "slip_max": model.slip_max,
        "multigs": model.multigs,
        "multilearn": model.multilearn,
        "multiprior": model.multiprior,
        "multipair": model.multipair,
        "n_fixed_rows": 0 if model.fixed is None else len(model.fixed),
        "n_init_rows": 0 if model.init is None else len(model.init),
        "min_responses": min_responses,
        "columns": asdict(cols),
        "only": [f"{c}={v}" for c, v in rows.only],
        "skip_no_skill": rows.skip_no_skill,
    }


def write_fit(
    run: RunDir,
    source: str,
    model: BKT,
    table: pd.DataFrame,
    restarts: pd.DataFrame,
    *,
    skipped: list[str],
    dropped: dict[str, int],
    extra: dict | None = None,
) -> dict:
    """params.csv (one row per skill), restarts.csv, the report and results.json of a classic
    fit; ``table`` is indexed by skill with the parameters, fit statistics and sizes."""
    run.table("params", table.reset_index())
    run.table("restarts", restarts)
    rep = Report("BKT fit (EM)", f"{source}: {len(table)} skills, {model!r}")
    rep.section("Fitted parameters").table(table.reset_index())
    n_params = (5 if model.forgets else 4) * len(table)
    return finish_fit(run, rep, model, table, skipped=skipped, dropped=dropped,
                       n_params=n_params, extra=extra)  # fmt: skip


def write_fit_model(run: RunDir, source: str, model: BKT) -> dict:
    """The tables, report and results.json of a fitted model, classic or variant (``kt fit``
    on one file and :meth:`BKT.save` both write through here)."""
    table, res = model.fit_table(), model.result_
    if "parameter" not in res.params.columns:
        run.table("params", table.reset_index())
        run.table("restarts", res.restarts)
        rep = Report("BKT fit (EM)", f"{source}: {len(table)} skills, {model!r}")
        rep.section("Fitted parameters").table(table.reset_index())
    else:  # a variant: long parameter file + per-skill summary
        run.table("params", res.params)
        run.table("skills", table.reset_index())
        run.table("restarts", res.restarts)
        rep = Report("BKT fit (EM)", f"{source}: {len(table)} skills, {model!r}")
        rep.section("Fitted parameters").table(res.params.head(200))
        if model.multiprior is True:
            from ..bkt.first_response import LIKELIHOOD_NOTE

            rep.section("Likelihood").text(LIKELIHOOD_NOTE)
    _convergence(rep, model, table)
    results = dict(model.headline())
    run.finish(results, rep.render())
    return results


def save_fit(model: BKT, folder: str | Path, *, overwrite: bool = False) -> Path:
    """:meth:`BKT.save`: the folder ``kt fit`` writes.  ``min_responses`` is recorded as 0: the
    library fits every skill it is given (the command leaves out smaller skills first)."""
    params = fit_params(model, 0, model.columns_, None)
    run = saved_run(folder, "kt fit", params={**params, "encoding": "utf-8"}, seed=model.seed,
                    overwrite=overwrite)  # fmt: skip
    write_fit_model(run, "results from Python", model)
    return run.path


def _convergence(rep, model: BKT, table: pd.DataFrame) -> None:
    converged = table["converged"].to_numpy(dtype=bool)
    if not converged.all():
        rep.section("Convergence").text(
            f"{int((~converged).sum())} skill(s) reached max_iter={model.max_iter} before the "
            "tolerance; their parameters are the last EM iterate."
        )


def finish_fit(run, rep, model, table, *, skipped, dropped, n_params, extra=None) -> dict:
    _convergence(rep, model, table)
    converged = table["converged"].to_numpy(dtype=bool)
    results = {
        "n_skills": int(len(table)),
        "n_responses": int(table["n_responses"].sum()),
        "rows_left_out": dropped,
        "total_log_likelihood": float(table["log_likelihood"].sum()),
        "n_params": int(n_params),
        "n_not_converged": int((~converged).sum()),
        "skipped_skills": skipped,
        "params": table.reset_index(),
        **(extra or {}),
    }
    run.finish(results, rep.render())
    return results
