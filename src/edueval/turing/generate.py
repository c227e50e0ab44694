"""``turing generate``: the AI side of Phase 2 - a related question and a distractor per tuple.

For every misconception tuple of a Phase-1 file (:func:`~.data.misconception_tuples`) the model is
shown the question, the student's wrong answer and the correct answer, and asked for a *new,
related* question q′ that the same faulty reasoning would also get wrong, q′'s correct answer,
and the wrong answer this student would most likely give on q′ (the AI distractor) - as JSON under
a schema (grammar-constrained on the local model). ``unconditioned=True`` is the paper's
single-phase variant: one request per Phase-1 *question*, without any student's answer, so
every student who erred on it gets the same q′ and distractor.

Every tuple gets a row in ``distractors.csv`` with a ``status``: ``ok``; ``failed`` (the call
failed after the retries); ``unparseable`` (no JSON with the required keys); ``invalid`` (the
distractor equals q′'s correct answer, or a field is empty). Nothing is dropped silently; every
call is in ``calls.jsonl``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from ..io import InputError
from ..models.budget import DEFAULT_MAX_FAILURES, MaxFailures, finish_model_run
from ..report import Report
from ..runs import RunDir
from .data import misconception_tuples, read_phase1, same_answer

__all__ = ["SCHEMA", "build_requests", "generate_run", "read_reply"]

SCHEMA = {
    "type": "object",
    "properties": {
        "related_question": {"type": "string"},
        "correct_answer": {"type": "string"},
        "distractor": {"type": "string"},
    },
    "required": ["related_question", "correct_answer", "distractor"],
}

_SYSTEM = (
    "You are an experienced mathematics teacher who studies how individual students think. "
    "Answer with one JSON object only."
)


def _conditioned_prompt(question: str, answer: str, correct: str) -> str:
    return (
        f"A student was asked:\n{question}\n"
        f"The correct answer is {correct}, but the student answered {answer}.\n"
        "Work out what faulty reasoning produces the student's answer. Then write a new question "
        "of the same kind with different numbers, on which that same reasoning also gives a wrong "
        "answer. Give the new question, its correct answer, and the wrong answer this student "
        "would most likely give to it.\n"
        'Reply as JSON: {"related_question": "...", "correct_answer": "...", "distractor": "..."}'
    )


def _unconditioned_prompt(question: str, correct: str) -> str:
    return (
        f"Students were asked:\n{question}\n(correct answer: {correct}).\n"
        "Write a new question of the same kind with different numbers, give its correct answer, "
        "and the wrong answer that students are most likely to give to it.\n"
        'Reply as JSON: {"related_question": "...", "correct_answer": "...", "distractor": "..."}'
    )


def build_requests(tuples: pd.DataFrame, *, unconditioned: bool = False, max_tokens: int = 200):
    """One :class:`~edueval.models.ChatRequest` per tuple (conditioned), or per distinct question
    (unconditioned); returns ``(requests, index)`` with ``index[i]`` = the request of tuple i."""
    from ..models import ChatRequest

    requests = []
    index = []
    seen: dict[str, int] = {}
    for row in tuples.itertuples():
        if unconditioned:
            key = str(row.question)
            if key not in seen:
                seen[key] = len(requests)
                prompt = _unconditioned_prompt(row.question, row.correct_answer)
                requests.append(
                    ChatRequest.user(prompt, system=_SYSTEM, max_tokens=max_tokens,
                                     json_schema=SCHEMA, tag=f"q:{key}")
                )  # fmt: skip
            index.append(seen[key])
        else:
            prompt = _conditioned_prompt(row.question, row.answer, row.correct_answer)
            index.append(len(requests))
            requests.append(
                ChatRequest.user(prompt, system=_SYSTEM, max_tokens=max_tokens,
                                 json_schema=SCHEMA, tag=f"{row.student}:{row.question}")
            )  # fmt: skip
    return requests, index


def read_reply(result) -> tuple[dict[str, str], str]:
    """``(fields, status)`` from a :class:`~edueval.models.ChatResult` (see module docstring)."""
    from ..models import parse_json_answer

    empty = {"related_question": "", "related_correct": "", "ai_distractor": ""}
    if not result.ok:
        return empty, "failed"
    obj = parse_json_answer(result.text, require_keys=list(SCHEMA["required"]))
    if not isinstance(obj, dict):
        return empty, "unparseable"
    fields = {
        "related_question": str(obj["related_question"]).strip(),
        "related_correct": str(obj["correct_answer"]).strip(),
        "ai_distractor": str(obj["distractor"]).strip(),
    }
    if not all(fields.values()) or same_answer(fields["ai_distractor"], fields["related_correct"]):
        return fields, "invalid"
    return fields, "ok"


def generate_run(
    out: Path,
    phase1_path: Path,
    *,
    open_model: Callable,
    model_name: str,
    unconditioned: bool = False,
    limit: int | None = None,
    max_tokens: int = 200,
    max_failures: MaxFailures = DEFAULT_MAX_FAILURES,
    log: Callable[[str], None] | None = None,
) -> dict:
    """Write ``distractors.csv`` (one row per tuple) and the run directory."""
    phase1 = read_phase1(phase1_path)
    tuples = misconception_tuples(phase1)
    without = sorted(set(phase1["student"]) - set(tuples["student"]))
    if limit is not None:
        if limit < 1:
            raise InputError("--limit must be at least 1")
        tuples = tuples.head(limit)
    requests, index = build_requests(tuples, unconditioned=unconditioned, max_tokens=max_tokens)
    params = {
        "model": model_name,
        "unconditioned": unconditioned,
        "limit": limit,
        "max_tokens": max_tokens,
        "n_tuples": len(tuples),
        "n_requests": len(requests),
    }
    run = RunDir(out, command="turing generate", params=params, inputs={"phase1": phase1_path})
    t0 = time.perf_counter()
    with open_model(run.path / "calls.jsonl") as client:
        results = client.complete_many(requests, progress="turing generate")
        stats = client.stats()
    rows = []
    for pos, row in enumerate(tuples.itertuples()):
        res = results[index[pos]]
        fields, status = read_reply(res)
        rows.append(
            {
                "student": row.student,
                "question": row.question,
                "phase1_answer": row.answer,
                "correct_answer": row.correct_answer,
                **fields,
                "status": status,
                "error": res.error or "",
                "raw": res.text,
                "conditioned": not unconditioned,
            }
        )
    table = pd.DataFrame(rows)
    run.table("distractors", table)
    counts = (
        table["status"]
        .value_counts()
        .reindex(["ok", "invalid", "unparseable", "failed"], fill_value=0)
    )
    rep = Report(
        "Imitation game: AI distractors",
        f"{phase1_path}: {len(tuples)} misconception tuples, model {model_name}, "
        f"{'unconditioned (one per question)' if unconditioned else 'conditioned on each student'}",
    )
    rep.section("Status").table(counts.rename("tuples").reset_index()).text(
        f"{len(without)} students without a Phase-1 error (no tuples, not in Phase 2): "
        + (", ".join(without[:20]) + (" ..." if len(without) > 20 else "") if without else "none"),
        stats.summary(),
    )
    rep.section("First rows").table(table.drop(columns=["raw"]).head(15))
    results_json = {
        "n_tuples": len(tuples),
        "n_requests": len(requests),
        "status": counts.to_dict(),
        "students_without_error": without,
        "model_calls": stats.as_dict(),
        "seconds": time.perf_counter() - t0,
        **params,
    }
    if log:
        log(stats.summary())
    return finish_model_run(run, results_json, rep, stats, max_failures)
