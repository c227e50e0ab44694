"""``turing generate``: Phase 2's questions and the AI's distractors written to a run folder.

The computation is :mod:`.generation` (:func:`~.generation.generate` in memory); this module
reads the Phase-1 file, opens the clients with the run's call log, and writes
``questions.csv``, ``distractors.csv``, ``worksheet.csv``, ``results.json``, ``config.json`` and
the report.  The model recorded is the one that answered: the name of the client opened.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import pandas as pd

from ..model_runs import finish_model_run
from ..models.budget import DEFAULT_MAX_FAILURES, MaxFailures
from ..report import Report
from ..runs import RunDir, saved_run
from .generation import TuringGeneration, generate_with, prepare

__all__ = ["generate_run", "save_run", "write_run"]


def _report(res: TuringGeneration, title: str) -> Report:
    rep = Report("Imitation game: questions (generator) and AI distractors", title)
    without = res.students_without_error
    rep.section("Status").table(res.status_table()).table(
        pd.DataFrame([res.failed_calls_by_source]), caption="failed calls by source"
    ).text(
        f"{len(without)} students without a Phase-1 error (no tuples, not in Phase 2): "
        + (", ".join(without[:20]) + (" ..." if len(without) > 20 else "") if without else "none"),
        "q' is written by the generator, once per Phase-1 question, without any student's answer; "
        "the AI under test writes only the distractor. A tuple whose AI distractor is missing "
        "(failed, unparseable, invalid) keeps its MCQ in turing assemble and counts as one where "
        "the AI's distractor was not chosen. Keys the check disputes are flagged (key_check = "
        "disagree) and left out by turing assemble unless --keep-disputed.",
        *(f"{k}: {s.summary()}" for k, s in res.stats_by_client.items()),
    )
    rep.section("Questions q'").table(res.questions.drop(columns=["generator_raw"]).head(15))
    rep.section("First rows").table(res.distractors.drop(columns=["ai_raw"]).head(15))
    return rep


def generate_run(
    out: Path,
    phase1_path: Path,
    *,
    open_model: Callable,
    model_name: str,
    open_generator: Callable | None = None,
    generator_name: str | None = None,
    unconditioned: bool = False,
    limit: int | None = None,
    max_tokens: int = 200,
    max_failures: MaxFailures = DEFAULT_MAX_FAILURES,
    log: Callable[[str], None] | None = None,
) -> dict:
    """Write ``questions.csv``, ``distractors.csv`` (one row per tuple), ``worksheet.csv`` (for the
    expert) and the run directory. ``open_generator=None``: the generator is ``model_name`` in
    separate calls (the documented default).  ``model_name``/``generator_name`` are recorded
    until the clients are open; from then on, the names of the clients that answer."""
    tuples, without = prepare(phase1_path, limit=limit)
    params = {
        "model": model_name,
        "generator_model": generator_name or model_name,
        # True: the generator is the AI's own client, in separate calls that see no student
        "generator_same_as_model": open_generator is None,
        "unconditioned": unconditioned,
        "limit": limit,
        "max_tokens": max_tokens,
        "n_tuples": len(tuples),
        "max_failures": str(max_failures),
    }
    run = RunDir(out, command="turing generate", params=params, inputs={"phase1": phase1_path})
    with ExitStack() as stack:
        client = stack.enter_context(open_model(run.path / "calls.jsonl"))
        generator = None
        if open_generator is not None:
            generator = stack.enter_context(open_generator(run.path / "calls.jsonl"))
        res = generate_with(tuples, without, client=client, generator=generator,
                            unconditioned=unconditioned, max_tokens=max_tokens,
                            max_failures=max_failures,
                            params={"limit": limit, "max_tokens": max_tokens,
                                    "max_failures": str(max_failures)})  # fmt: skip
    # the models that answered, as their clients name them
    res.model = res.model or model_name
    res.generator_model = res.generator_model or generator_name or model_name
    run.config["params"].update(model=res.model, generator_model=res.generator_model)
    if log:
        log(res.stats.summary())
    return write_run(run, res, str(phase1_path))


def write_run(run: RunDir, res: TuringGeneration, source: str) -> dict:
    """questions.csv, distractors.csv, worksheet.csv, the report and results.json of ``turing
    generate`` (the command and :meth:`TuringGeneration.save` both write through here)."""
    run.table("questions", res.questions)
    run.table("distractors", res.distractors)
    run.table("worksheet", res.worksheet)
    mode = (
        "unconditioned (one per question)" if res.unconditioned else "conditioned on each student"
    )
    rep = _report(
        res,
        f"{source}: {res.n_tuples} misconception tuples, {res.n_questions} q', "
        f"generator {res.generator_model}, AI {res.model}, {mode}",
    )
    results = {k: v for k, v in res.headline().items() if k not in ("model_failures", "complete")}
    return finish_model_run(run, results, rep, res.budget)


def save_run(res: TuringGeneration, folder: str | Path, *, overwrite: bool = False) -> Path:
    """:meth:`TuringGeneration.save`: the folder ``turing generate`` writes, less its call log
    (``calls.jsonl``: the calls were made in memory, and not logged)."""
    run = saved_run(folder, "turing generate", params=res.run_params(), overwrite=overwrite)
    write_run(run, res, "results from Python")
    return run.path
