"""P1 runs: each ``kt`` command as a function that reads files, computes, and writes a run
directory (tables, results.json, report.html).  The CLI is a thin layer over these."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ...io import InputError
from ...report import Report
from ...report.figures import new_figure, png_bytes
from ...runs import RunDir, saved_run
from ...seeding import rng
from ..bkt.model import BKT, forward_sequences, simulate
from ..bkt.params import PAPER_RANGES, params_matrix, random_params
from ..bkt.variants import forward_sequences_long, is_long, read_param_file
from ..data import Columns, RowFilter, read_responses
from ..evaluation import KTEvaluation, evaluation_tables, free_parameters
from ..prediction_stats import impossible_responses, per_skill_summary
from .fit_output import fit_params, write_fit_model

if TYPE_CHECKING:
    from ...executor import Executor
    from ..replication.study import StudyConfig

__all__ = [
    "simulate_run",
    "predict_run",
    "fit_run",
    "evaluate_run",
    "write_study_run",
    "save_evaluation",
    "write_evaluation",
]


def _learning_curve(df: pd.DataFrame, order_col: str = "order"):
    fig, ax = new_figure(6.0, 3.6)
    g = df.groupby(order_col)
    ax.plot(g["correct"].mean(), label="P(correct)", color="#3b6ea5")
    if "known" in df.columns:
        ax.plot(g["known"].mean(), label="P(known), true state", color="#c9a227")
    if "p_known" in df.columns:
        ax.plot(g["p_known"].mean(), label="mean posterior P(known)", color="#7a9e48", ls="--")
    ax.set_xlabel("opportunity")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    ax.set_title("Learning curve, all skills", fontsize=10)
    return fig


def simulate_run(
    out: Path,
    *,
    n_students: int,
    n_opportunities: int,
    n_skills: int | None = None,
    params_path: Path | None = None,
    seed: int,
    forget_max: float = 0.0,
    items_per_skill: int = 0,
    item_spread: float = 0.15,
    item_learn: bool = False,
    fmt: str = "csv",
    rows_per_file: int = 1_000_000,
) -> dict:
    """Simulate responses (with the true ``known`` state) from given or random parameters;
    with ``items_per_skill``, on items with their own guess and slip (and learn with
    ``item_learn``) drawn around the skill's (:mod:`edueval.kt.bkt.simulate_items`), and the true
    parameters written in the long format.  ``fmt="parquet"`` writes a large log in chunks
    (:mod:`edueval.kt.scale.simulate_log`) under ``responses/``."""
    if n_students < 1 or n_opportunities < 1:
        raise InputError("students= and opportunities= must be at least 1")
    if fmt not in ("csv", "parquet"):
        raise InputError(f"fmt= must be csv or parquet, got {fmt!r}")
    if fmt == "parquet" and items_per_skill:
        raise InputError("items_per_skill= writes CSV only; drop fmt= parquet")
    if rows_per_file < 1:
        raise InputError(f"rows_per_file= must be at least 1, got {rows_per_file}")
    _check_items(items_per_skill, item_spread, item_learn)
    if params_path is not None:
        params = read_param_file(params_path)  # wide, or long when its values vary by group
        source = "file"
        if is_long(params) and (items_per_skill or fmt == "parquet"):
            raise InputError("the parameter file gives items of its own (long format): drop "
                             + ("items_per_skill=" if items_per_skill else "fmt= parquet"))  # fmt: skip
    else:
        if not n_skills or n_skills < 1:
            raise InputError("skills= must be at least 1 when no params= file is given")
        params = random_params(
            n_skills, rng(seed), PAPER_RANGES, forget=(0.0, forget_max) if forget_max > 0 else None
        )
        source = "paper ranges"
    run = RunDir(
        out,
        command="kt simulate",
        params={
            "n_students": n_students,
            "n_opportunities": n_opportunities,
            "n_skills": _n_skills(params),
            "params_source": source,
            "forget_max": forget_max,
            "items_per_skill": items_per_skill,
            "item_spread": item_spread if items_per_skill else None,
            "item_learn": item_learn,
            "format": fmt,
        },
        seed=seed,
        inputs={"params": params_path} if params_path else None,
    )
    if fmt == "parquet":
        return _simulate_parquet(run, params, n_students, n_opportunities, seed, rows_per_file)
    if is_long(params):
        df, true_params = _simulate_long(params, n_students, n_opportunities, seed + 1)
    elif items_per_skill:
        df, true_params = _simulate_items(params, n_students, n_opportunities, seed + 1,
                                          items_per_skill, item_spread, item_learn)  # fmt: skip
    else:
        df = simulate(params, n_students, n_opportunities, seed=seed + 1)
        true_params = params.reset_index()
    run.table("responses", df)
    run.table("params", true_params)
    rep = Report(
        "Simulated BKT responses",
        f"{n_students} students x {_n_skills(params)} skills x "
        f"{n_opportunities} opportunities, seed {seed}",
    )
    rep.section("Generating parameters").table(true_params)
    rep.section("Learning curve").figure(_learning_curve(df))
    results = {
        "n_responses": len(df),
        "n_skills": _n_skills(params),
        "mean_correct": float(df["correct"].mean()),
        "mean_known": float(df["known"].mean()),
    }
    run.finish(results, rep.render())
    return results


def _simulate_parquet(run, params, n_students, n_opportunities, seed, rows_per_file) -> dict:
    """A log too large for one CSV: Parquet parts under ``responses/``, written chunk by chunk."""
    import shutil

    from ..scale.simulate_log import write_log

    folder = run.path / "responses"
    if folder.exists():
        shutil.rmtree(folder)
    counts = write_log(params, n_students, n_opportunities, seed + 1, folder,
                       rows_per_file=rows_per_file)  # fmt: skip
    true_params = params.reset_index()
    run.table("params", true_params)
    rep = Report(
        "Simulated BKT responses (Parquet)",
        f"{n_students} students x {len(params)} skills x {n_opportunities} opportunities, "
        f"seed {seed}: {counts['n_responses']} responses in {counts['n_files']} files",
    )
    rep.section("Generating parameters").table(true_params)
    results = {"n_skills": len(params), **counts, "responses": "responses"}
    run.finish(results, rep.render())
    return results


def _check_items(items_per_skill: int, spread: float, item_learn: bool) -> None:
    if items_per_skill < 0:
        raise InputError(f"items_per_skill= must be 0 (no items) or more, got {items_per_skill}")
    if not 0 <= spread <= 0.5:
        raise InputError(f"item_spread= must be in [0, 0.5], got {spread}")
    if item_learn and not items_per_skill:
        raise InputError("item_learn= needs items_per_skill=")


def _n_skills(params: pd.DataFrame) -> int:
    """Skills of a wide (one row each) or long parameter table."""
    return int(params["skill"].nunique()) if is_long(params) else len(params)


def _simulate_long(params: pd.DataFrame, n_students: int, n_opportunities: int, seed: int):
    """Responses from a long parameter table (its items' own guess, slip, learn, forget) and the
    true parameters, long again."""
    from ..bkt.simulate_items import item_params_from_long, item_params_long, simulate_items

    ip = item_params_from_long(params)
    return simulate_items(ip, n_students, n_opportunities, seed=seed), item_params_long(ip)


def _simulate_items(params, n_students, n_opportunities, seed, n_items, spread, item_learn):
    """Responses with an ``item`` column and the true parameters as a long table."""
    from ..bkt.simulate_items import draw_item_params, item_params_long, simulate_items

    ip = draw_item_params(params, n_items, rng(seed), spread=spread, item_learn=item_learn)
    df = simulate_items(ip, n_students, n_opportunities, seed=seed + 1)
    return df, item_params_long(ip)


def _selection(df: pd.DataFrame, encoding: str, rows: RowFilter | None, warn) -> dict:
    """Run parameters describing which rows were read; shows read_responses' notes."""
    for note in df.attrs.get("notes", []):
        if warn:
            warn(note)
    rows = rows or RowFilter()
    return {
        "encoding": encoding,
        "only": [f"{c}={v}" for c, v in rows.only],
        "skip_no_skill": rows.skip_no_skill,
    }


def _dropped(df: pd.DataFrame) -> dict[str, int]:
    return dict(df.attrs.get("dropped", {}))


def predict_run(
    out: Path,
    data_path: Path,
    params_path: Path,
    columns: Columns | None = None,
    *,
    encoding: str = "utf-8",
    rows: RowFilter | None = None,
    warn=None,
    executor: Executor | None = None,
) -> dict:
    """Forward-filter a response file with given parameters: adds ``p_correct`` and ``p_known``.

    With a row selection (``rows``), the predictions file holds the selected rows only.  A
    dataset or a Dask executor goes through :mod:`edueval.kt.commands.dataset_runs` (partitioned Parquet).
    """
    from .dataset_runs import predict_dataset_run, uses_dataset_path

    if uses_dataset_path(data_path, executor):
        return predict_dataset_run(out, data_path, params_path, columns, executor=executor,
                                   encoding=encoding, rows=rows, warn=warn)  # fmt: skip
    df, seqs, cols = read_responses(data_path, columns, encoding=encoding, rows=rows)
    selection = _selection(df, encoding, rows, warn)
    params = read_param_file(params_path)
    if "parameter" not in params.columns:
        P = params_matrix(params, seqs.skills, source=str(params_path))
    run = RunDir(
        out,
        command="kt predict",
        params={"columns": asdict(cols), **selection},
        inputs={"data": data_path, "params": params_path},
    )
    if "parameter" in params.columns:  # a variant's long parameter file
        _, pc, pk = forward_sequences_long(df, params, cols)
    else:
        pc, pk = forward_sequences(seqs, P)
    pred = df.copy()
    pred["p_correct"] = seqs.unpack(pc)
    pred["p_known"] = seqs.unpack(pk)
    run.table("predictions", pred)
    per_skill = per_skill_summary(seqs, pc, pk)
    run.table("per_skill", per_skill)
    rep = Report("BKT predictions", f"{data_path} with parameters {params_path}")
    rep.section("Per skill").table(per_skill)
    impossible = impossible_responses(seqs, pc)
    if impossible and warn:
        warn(f"{impossible} responses have probability 0 under the given parameters (e.g. prior "
             "1 with slip 0 and a wrong answer): the filter cannot update on them, and the "
             "predictions after them in the same sequence are not meaningful")  # fmt: skip
    results = {
        "n_responses": int(len(pred)),
        "rows_left_out": _dropped(df),
        "n_skills": int(len(seqs.skills)),
        "mean_p_correct": float(pc.mean()),
        "mean_p_known": float(pk.mean()),
        "n_impossible_responses": impossible,
    }
    run.finish(results, rep.render())
    return results


def fit_run(
    out: Path,
    data_path: Path,
    model: BKT,
    *,
    min_responses: int = 10,
    encoding: str = "utf-8",
    rows: RowFilter | None = None,
    warn=None,
    executor: Executor | None = None,
) -> dict:
    """Fit BKT per skill by EM; skills with fewer than ``min_responses`` responses are skipped
    (named in a warning and in results.json).  A dataset (folder, glob, Parquet) or a Dask
    executor goes through :mod:`edueval.kt.commands.dataset_runs`, skills in parallel."""
    from .dataset_runs import fit_dataset_run, uses_dataset_path

    if uses_dataset_path(data_path, executor):
        return fit_dataset_run(out, data_path, model, executor=executor,
                               min_responses=min_responses, encoding=encoding, rows=rows,
                               warn=warn)  # fmt: skip
    df, seqs, cols = read_responses(data_path, model.columns, encoding=encoding, rows=rows)
    selection = _selection(df, encoding, rows, warn)
    dropped = _dropped(df)
    counts = np.diff(seqs.starts[seqs.skill_starts])
    small = [str(s) for s, c in zip(seqs.skills, counts, strict=True) if c < min_responses]
    if small:
        if len(small) == len(seqs.skills):
            raise InputError(
                f"every skill has fewer than {min_responses} responses (min_responses=); "
                "nothing to fit",
                file=str(data_path),
            )
        if warn:
            warn(
                f"{len(small)} skill(s) with fewer than {min_responses} responses not fitted: "
                + ", ".join(small[:5])
                + (" ..." if len(small) > 5 else "")
            )
        df = df[~df[cols.skill].astype(str).isin(small).to_numpy()]
    run = RunDir(
        out,
        command="kt fit",
        params={**fit_params(model, min_responses, cols, rows), **selection},
        seed=model.seed,
        inputs={"data": data_path},
    )
    model.fit(df)
    model.rows_left_out_, model.skipped_skills_ = dropped, small
    return write_fit_model(run, str(data_path), model)


def evaluate_run(
    out: Path,
    data_path: Path,
    *,
    columns: Columns | None = None,
    n_params: int = 4,
    params_path: Path | None = None,
    threshold: float = 0.95,
    n_in_a_row: int = 3,
    encoding: str = "utf-8",
    rows: RowFilter | None = None,
    warn=None,
    executor: Executor | None = None,
) -> dict:
    """Metrics of ``p_correct`` against responses and, with ``known`` and ``p_known``, of the
    knowledge estimate against the true state and the moment-of-learning error.  A dataset (or
    a Dask executor) goes through :func:`edueval.kt.commands.dataset_runs.evaluate_dataset`."""
    from .dataset_runs import evaluate_dataset, uses_dataset_path

    k_of = free_parameters(params_path)  # k per skill from a (variant's) parameter file
    params = {"n_params": n_params, "params_file": str(params_path) if params_path else None,
              "threshold": threshold, "n_in_a_row": n_in_a_row}  # fmt: skip
    if uses_dataset_path(data_path, executor):
        ev = evaluate_dataset(data_path, executor=executor, columns=columns, k_of=k_of,
                              n_params=n_params, threshold=threshold, n_in_a_row=n_in_a_row,
                              rows=rows, encoding=encoding)  # fmt: skip
        run = RunDir(out, command="kt evaluate", inputs=None,
                     params={**params, "columns": asdict(ev["columns"]),
                             "dataset": ev["dataset"].describe(),
                             "executor": executor.describe() if executor else None})  # fmt: skip
        result = KTEvaluation(ev["metrics"], ev["mol"], threshold, n_in_a_row, ev["dropped"])
        return write_evaluation(run, str(data_path), result, {"timing": ev["timing"]})
    df, seqs, cols = read_responses(data_path, columns, encoding=encoding, rows=rows)
    selection = _selection(df, encoding, rows, warn)
    metrics, mol = evaluation_tables(df, seqs, k_of, n_params=n_params, threshold=threshold,
                                     n_in_a_row=n_in_a_row, source=str(params_path))  # fmt: skip
    run = RunDir(out, command="kt evaluate", inputs={"data": data_path},
                 params={**params, "columns": asdict(cols), **selection})  # fmt: skip
    result = KTEvaluation(metrics, mol, threshold, n_in_a_row, _dropped(df))
    return write_evaluation(run, str(data_path), result)


def save_evaluation(ev: KTEvaluation, folder: str | Path, *, overwrite: bool = False) -> Path:
    """:meth:`KTEvaluation.save`: the folder ``kt evaluate`` writes."""
    run = saved_run(folder, "kt evaluate", params=ev.run_params, overwrite=overwrite)
    write_evaluation(run, "results from Python", ev)
    return run.path


def write_evaluation(run: RunDir, source: str, ev: KTEvaluation, extra=None) -> dict:
    """metrics.csv, moment_of_learning.csv, the report and results.json of ``kt evaluate``
    (the command and :meth:`KTEvaluation.save` both write through here)."""
    metrics, mol = ev.metrics, ev.sequences
    run.table("metrics", metrics)
    rep = Report("Evaluation of knowledge-tracing predictions", source)
    rep.section("Metrics").table(metrics[metrics["scope"] == "all"])
    results = ev.results()
    if mol is None:
        rep.section("Knowledge").text(
            "No knowledge metrics: they need both a 'known' column (true state, as in simulated "
            "data) and a 'p_known' column."
        )
    else:
        run.table("moment_of_learning", mol)
        s_bkt, s_row = results["moment_of_learning"], results["moment_of_learning_in_a_row"]
        rep.section("Moment of learning").text(
            f"MoL MAD (P(known) >= {ev.threshold}): {s_bkt['mol_mad']:.3f} opportunities over "
            f"{s_bkt['n_sequences']} student-skill sequences; {s_bkt['n_never_learned']} never "
            f"learned and {s_bkt['n_never_crossed']} never crossed (both censored at T+1). "
            f"{ev.n_in_a_row} correct in a row: MAD {s_row['mol_mad']:.3f}."
        )
    run.finish({**results, **(extra or {})}, rep.render())
    return results


def _study_params(config: StudyConfig, sensitivity: bool, replications: int) -> dict:
    params = {**asdict(config), "sensitivity": sensitivity}
    if replications > 1:
        params["replications"] = replications
    return params


def write_study_run(
    out: Path,
    config: StudyConfig,
    *,
    sensitivity: bool = True,
    replications: int = 1,
    executor: Executor | None = None,
) -> dict:
    """The full Pardos & Yudelson study with its report; with ``replications`` > 1 also the
    spread of Tables 2 and 3 across replications (each replication a task on ``executor``)."""
    from ...executor import InProcess
    from ..replication.replications import replicate_study

    executor = executor or InProcess()
    params = _study_params(config, sensitivity, replications)
    if not isinstance(executor, InProcess):
        params["executor"] = executor.describe()
    run = RunDir(out, command="kt study", params=params, seed=config.seed)
    reps = replicate_study(config, replications, sensitivity=sensitivity, executor=executor)
    results = _write_study(run, reps)
    return results


def save_study(reps, folder: str | Path, *, overwrite: bool = False) -> Path:
    """:meth:`StudyReplications.save`: the folder ``kt study`` writes."""
    params = _study_params(reps.config, reps.variant is not None, len(reps.studies))
    run = saved_run(folder, "kt study", params=params, seed=reps.config.seed,
                    overwrite=overwrite)  # fmt: skip
    _write_study(run, reps)
    return run.path


def _write_study(run: RunDir, reps) -> dict:
    """Tables, figures, results.json and report of a (replicated) study."""
    from .study_report import figures_of as study_figures
    from .study_report import replication_section, study_report

    result, variant = reps.first, reps.variant
    run.table("scores", result.scores)
    run.table("truth", result.truth.reset_index())
    run.table("candidates", result.candidates.reset_index())
    run.table("table2", result.table2)
    run.table("table3", result.table3)
    run.table("experiment3", result.experiment3)
    run.table("mol_in_a_row", result.in_a_row)
    if variant is not None:
        run.table("sensitivity_table3", variant.table3)
        run.table("sensitivity_experiment3", variant.experiment3)
    if reps.replicated:
        run.table("replications_table3", reps.table3)
        run.table("replications_table3_spread", reps.table3_spread)
        if len(reps.table2):
            run.table("replications_table2", reps.table2)
            run.table("replications_table2_spread", reps.table2_spread)
    pngs = {name: png_bytes(fig) for name, fig in study_figures(result).items()}
    for name, png in pngs.items():
        run.figure(name, png)
    results = reps.headline()
    report = study_report(result, variant, figures=pngs)
    if reps.replicated:
        replication_section(report, reps)
    run.finish(results, report.render())
    return results
