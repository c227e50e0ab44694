"""``turing generate``: Phase 2's questions and the AI's distractors written to a run folder.

The computation is :mod:`.generation` (:func:`~.generation.generate` in memory); this module
reads the Phase-1 file, opens the clients with the run's call log, and writes
``questions.csv``, ``distractors.csv``, ``worksheet.csv``, ``results.json``, ``config.json`` and
the report.  The model recorded is the one that answered: the name of the client opened.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import pandas as pd

from ..model_runs import finish_model_run
from ..models.budget import DEFAULT_MAX_FAILURES, MaxFailures
from ..report import Report
from ..runs import RunDir
from .generation import TuringGeneration, generate_with, prepare

__all__ = ["generate_run"]


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
    }
    run = RunDir(out, command="turing generate", params=params, inputs={"phase1": phase1_path})
    t0 = time.perf_counter()
    with ExitStack() as stack:
        client = stack.enter_context(open_model(run.path / "calls.jsonl"))
        generator = None
        if open_generator is not None:
            generator = stack.enter_context(open_generator(run.path / "calls.jsonl"))
        res = generate_with(tuples, without, client=client, generator=generator,
                            unconditioned=unconditioned, max_tokens=max_tokens,
                            max_failures=max_failures)  # fmt: skip
    # the models that answered, as their clients name them
    params.update(model=res.model or model_name, generator_model=res.generator_model
                  or params["generator_model"])  # fmt: skip
    run.config["params"].update(model=params["model"], generator_model=params["generator_model"])
    run.table("questions", res.questions)
    run.table("distractors", res.distractors)
    run.table("worksheet", res.worksheet)
    mode = "unconditioned (one per question)" if unconditioned else "conditioned on each student"
    rep = _report(
        res,
        f"{phase1_path}: {len(tuples)} misconception tuples, {res.n_questions} q', "
        f"generator {params['generator_model']}, AI {params['model']}, {mode}",
    )
    results_json = {
        **res.counts(),
        "status": res.ai_status,  # as returned (results.json's "status" is the run's)
        "model_calls": res.stats.as_dict(),
        "model_calls_by_client": {k: s.as_dict() for k, s in res.stats_by_client.items()},
        "seconds": time.perf_counter() - t0,
        **params,
    }
    if log:
        log(res.stats.summary())
    return finish_model_run(run, results_json, rep, res.budget)
