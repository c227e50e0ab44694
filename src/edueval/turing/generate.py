"""``turing generate``: Phase 2's questions (the generator f_LLM) and the AI's distractors (g_AI).

The paper's Phase 2 (Sonkar et al., the critical path: "generate q′ via f_LLM, then g_AI and g_H
for each tuple") has three roles, kept apart here:

1. **Generator f_LLM** (``--generator-model``; by default the same model as ``--model`` in a
   separate call): for every distinct Phase-1 question q of the misconception tuples
   (:func:`~.data.misconception_tuples`) it writes one related question q′ and q′'s correct
   answer, seeing q and its correct answer but **no student's answer**. Every student who erred on
   q gets the same q′, so the AI and the expert answer for the same q′ and neither chose it.
2. **Key check**: q′'s key is checked once (:mod:`.keycheck`): evaluated exactly when q′ is a bare
   arithmetic expression, otherwise by a second, separate generator call that sees only q′ and
   asks for its answer. ``key_check`` is ``agree``, ``disagree`` (flagged) or ``unchecked``.
3. **AI under test g_AI** (``--model``): for each tuple, shown q, the student's wrong answer, q′ and
   q′'s key, it writes only the wrong answer this student would most likely give on q′ (the AI
   distractor) - as JSON under a schema. ``unconditioned=True`` is the paper's single-phase
   variant: one request per Phase-1 question, without any student's answer, so every student who
   erred on it gets the same distractor.

The human expert (g_H) gets ``worksheet.csv``: the same q, student's answer, q′ and key - and no
AI distractor (blinded) - with an empty ``human_distractor`` column to fill in for
``turing assemble --human``.

Every tuple keeps a row in ``distractors.csv`` with a status per source: ``generator_status``
(``ok``, ``failed`` after the retries, ``unparseable``, ``invalid`` = an empty field, a q′ that
is only its own answer or repeats q) and ``ai_status`` (the same, ``invalid`` also when the
distractor equals q′'s key, and ``no_question`` when the generator gave no q′). A tuple whose AI distractor is missing stays in
Phase 2: ``turing assemble`` shows its MCQ with the other distractors, and the AI counts as not
chosen (a miss). Failed calls are counted per source (generator, key check, AI) in
``results.json``; every call is in ``calls.jsonl`` (tags ``gen:``, ``key:``, ``ai:``). Unparseable
replies of any source (a q′, a key check or a distractor that cannot be read) share the
``--max-failures`` budget with the failed calls (``model_failures.unparseable``); ``invalid`` ones
were read and do not.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import fields as dc_fields
from pathlib import Path

import pandas as pd

from ..io import InputError
from ..model_runs import finish_model_run
from ..models.budget import DEFAULT_MAX_FAILURES, MaxFailures, decide
from ..models.evaluate import evaluate_requests
from ..report import Report
from ..runs import RunDir
from .data import misconception_tuples, read_phase1, same_answer
from .keycheck import KEY_CHECKS, evaluate_question, key_check

__all__ = [
    "AI_SCHEMA",
    "QUESTION_SCHEMA",
    "SOLVE_SCHEMA",
    "distractor_requests",
    "generate_run",
    "generate_tables",
    "question_requests",
    "read_distractor",
    "read_question",
]

QUESTION_SCHEMA = {
    "type": "object",
    "properties": {"related_question": {"type": "string"}, "correct_answer": {"type": "string"}},
    "required": ["related_question", "correct_answer"],
}
SOLVE_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
}
AI_SCHEMA = {
    "type": "object",
    "properties": {"distractor": {"type": "string"}},
    "required": ["distractor"],
}
STATUSES = ("ok", "invalid", "unparseable", "failed")

_SYSTEM = (
    "You are an experienced mathematics teacher who studies how individual students think. "
    "Answer with one JSON object only."
)
_GENERATOR_SYSTEM = (
    "You are an experienced mathematics teacher who writes assessment questions. "
    "Answer with one JSON object only."
)


def _question_prompt(question: str, correct: str) -> str:
    return (
        f"Students were asked:\n{question}\n(correct answer: {correct}).\n"
        "Write one new question of the same kind that tests the same skill with different "
        "numbers, so that the mistakes students make on the question above would also give "
        "wrong answers on it. Give the new question and its correct answer.\n"
        'Reply as JSON: {"related_question": "...", "correct_answer": "..."}'
    )


def _solve_prompt(related_question: str) -> str:
    return (
        f"Solve this question:\n{related_question}\n"
        'Reply with its final answer only, as JSON: {"answer": "..."}'
    )


def _conditioned_prompt(question: str, answer: str, correct: str, rq: str, rkey: str) -> str:
    return (
        f"A student was asked:\n{question}\n"
        f"The correct answer is {correct}, but the student answered {answer}.\n"
        f"The same student will now be asked this new question:\n{rq}\n"
        f"(correct answer: {rkey}).\n"
        "Work out what faulty reasoning produced the student's answer, and give the wrong answer "
        "this student would most likely give to the new question.\n"
        'Reply as JSON: {"distractor": "..."}'
    )


def _unconditioned_prompt(question: str, correct: str, rq: str, rkey: str) -> str:
    return (
        f"Students were asked:\n{question}\n(correct answer: {correct}).\n"
        f"They will now be asked this new question:\n{rq}\n(correct answer: {rkey}).\n"
        "Give the wrong answer that students are most likely to give to the new question.\n"
        'Reply as JSON: {"distractor": "..."}'
    )


def _qkey(row) -> tuple[str, str]:
    return (str(row.question), str(row.correct_answer))


def question_requests(tuples: pd.DataFrame, *, max_tokens: int = 200):
    """One generator request per distinct ``(question, correct_answer)`` of ``tuples`` (no
    student's answer in it); returns ``(requests, keys)``."""
    from ..models import ChatRequest

    keys = list(dict.fromkeys(_qkey(r) for r in tuples.itertuples()))
    requests = [
        ChatRequest.user(_question_prompt(q, c), system=_GENERATOR_SYSTEM, max_tokens=max_tokens,
                         json_schema=QUESTION_SCHEMA, tag=f"gen:{q}")
        for q, c in keys
    ]  # fmt: skip
    return requests, keys


def read_question(result, question: str = "") -> tuple[dict[str, str], str]:
    """``({"related_question", "related_correct"}, status)`` from a generator answer; ``invalid``
    when a field is empty, q′ is only its own answer, or q′ repeats the Phase-1 ``question``."""
    from ..models import parse_json_answer

    empty = {"related_question": "", "related_correct": ""}
    if not result.ok:
        return empty, "failed"
    obj = parse_json_answer(result.text, require_keys=list(QUESTION_SCHEMA["required"]))
    if not isinstance(obj, dict):
        return empty, "unparseable"
    out = {
        "related_question": str(obj["related_question"]).strip(),
        "related_correct": str(obj["correct_answer"]).strip(),
    }
    rq, key = out["related_question"], out["related_correct"]
    bad = not (rq and key) or same_answer(rq, key) or same_answer(rq, question)
    return out, ("invalid" if bad else "ok")


def _read_solve(result) -> str | None:
    from ..models import parse_json_answer

    if not result.ok:
        return None
    obj = parse_json_answer(result.text, require_keys=["answer"])
    return str(obj["answer"]).strip() if isinstance(obj, dict) else None


def distractor_requests(
    tuples: pd.DataFrame, *, unconditioned: bool = False, max_tokens: int = 200
) -> tuple[list, list[int | None]]:
    """AI requests for ``tuples`` that carry ``related_question``/``related_correct`` (rows with
    an empty q′ get ``None``): one per tuple, or per distinct question when unconditioned.
    Returns ``(requests, index)`` with ``index[i]`` = the request of tuple i."""
    from ..models import ChatRequest

    requests: list = []
    index: list[int | None] = []
    seen: dict[tuple[str, str], int] = {}
    for row in tuples.itertuples():
        if not row.related_question:
            index.append(None)
            continue
        rq, rk = row.related_question, row.related_correct
        if unconditioned:
            key = _qkey(row)
            if key not in seen:
                seen[key] = len(requests)
                prompt = _unconditioned_prompt(row.question, row.correct_answer, rq, rk)
                requests.append(ChatRequest.user(prompt, system=_SYSTEM, max_tokens=max_tokens,
                                                 json_schema=AI_SCHEMA, tag=f"ai:q:{key[0]}"))  # fmt: skip
            index.append(seen[key])
            continue
        prompt = _conditioned_prompt(row.question, row.answer, row.correct_answer, rq, rk)
        index.append(len(requests))
        requests.append(ChatRequest.user(prompt, system=_SYSTEM, max_tokens=max_tokens,
                                         json_schema=AI_SCHEMA,
                                         tag=f"ai:{row.student}:{row.question}"))  # fmt: skip
    return requests, index


def read_distractor(result, key: str) -> tuple[str, str]:
    """``(ai_distractor, status)``; ``invalid`` when empty or equal to q′'s ``key``."""
    from ..models import parse_json_answer

    if not result.ok:
        return "", "failed"
    obj = parse_json_answer(result.text, require_keys=list(AI_SCHEMA["required"]))
    if not isinstance(obj, dict):
        return "", "unparseable"
    text = str(obj["distractor"]).strip()
    return text, ("invalid" if not text or same_answer(text, key) else "ok")


def _readable(read: Callable) -> Callable:
    """A parser for :func:`~edueval.models.evaluate.evaluate_requests` from a reader returning
    ``(value, status)``: ``None`` (unparseable: rejected and counted) when the status says so."""

    def parse(result):
        got = read(result)
        return None if got[1] == "unparseable" else got

    return parse


def _questions_table(keys, results, generator) -> tuple[pd.DataFrame, list]:
    """Per q′: the generator's answer, then its key check (evaluated, or a second solve)."""
    from ..models import ChatRequest

    rows = []
    for (q, c), res in zip(keys, results, strict=True):
        fields, status = read_question(res, q)
        rows.append({"question": q, "correct_answer": c, **fields, "generator_status": status,
                     "generator_error": res.error or "", "generator_raw": res.text})  # fmt: skip
    table = pd.DataFrame(rows)
    evaluated = [
        evaluate_question(r.related_question) if r.generator_status == "ok" else None
        for r in table.itertuples()
    ]
    to_solve = [
        i
        for i, r in enumerate(table.itertuples())
        if r.generator_status == "ok" and evaluated[i] is None
    ]
    solve = [
        ChatRequest.user(_solve_prompt(table.at[i, "related_question"]), max_tokens=60,
                         json_schema=SOLVE_SCHEMA, tag=f"key:{table.at[i, 'question']}")
        for i in to_solve
    ]  # fmt: skip
    # an unreadable key check is rejected (and counted); key_check stays unchecked
    solved = evaluate_requests(
        generator, solve, parse=_read_solve, progress="turing generate: key check"
    ).results
    answers = dict(zip(to_solve, solved, strict=True))
    checks = []  # (key_check, key_method, key_check_answer) per q′
    for i, r in enumerate(table.itertuples()):
        if r.generator_status != "ok":
            checks.append(("", "", ""))
        elif evaluated[i] is not None:
            v = evaluated[i]
            checks.append((key_check(r.related_correct, evaluated=v), "evaluated", str(v)))
        else:
            ans = _read_solve(answers[i])
            checks.append((key_check(r.related_correct, answer=ans), "second_solve", ans or ""))
    for j, col in enumerate(("key_check", "key_method", "key_check_answer")):
        table[col] = [c[j] for c in checks]
    return table, solved


def _sum_stats(stats: Sequence):
    """One :class:`~edueval.models.ModelStats` adding up several clients' counters."""
    from ..models.types import ModelStats

    total = ModelStats()
    for s in stats:
        for f in dc_fields(ModelStats):
            if f.name == "errors":
                for k, v in s.errors.items():
                    total.errors[k] = total.errors.get(k, 0) + v
            else:
                setattr(total, f.name, getattr(total, f.name) + getattr(s, f.name))
    return total


def generate_tables(
    tuples: pd.DataFrame,
    *,
    client,
    generator=None,
    unconditioned: bool = False,
    max_tokens: int = 200,
) -> dict:
    """Run the three roles on open clients (``generator=None``: the AI's ``client`` in separate
    calls). Returns ``questions``, ``distractors`` and ``worksheet`` tables, the request counts
    and the failed calls per source. No files are written."""
    generator = client if generator is None else generator
    q_requests, keys = question_requests(tuples, max_tokens=max_tokens)
    q_results = evaluate_requests(
        generator, q_requests, parse=_readable(read_question), progress="turing generate: questions"
    ).results
    questions, solved = _questions_table(keys, q_results, generator)
    merged = tuples.merge(
        questions.rename(columns={"question": "_q", "correct_answer": "_c"}),
        left_on=["question", "correct_answer"], right_on=["_q", "_c"], how="left", sort=False,
    ).drop(columns=["_q", "_c"])  # fmt: skip
    merged.loc[merged["generator_status"] != "ok", ["related_question", "related_correct"]] = ""
    a_requests, index = distractor_requests(
        merged, unconditioned=unconditioned, max_tokens=max_tokens
    )
    a_results = evaluate_requests(
        client,
        a_requests,
        parse=_readable(lambda res: read_distractor(res, "")),
        progress="turing generate: distractors",
    ).results
    rows = []
    for pos, row in enumerate(merged.itertuples()):
        if index[pos] is None:
            text, status, res = "", "no_question", None
        else:
            res = a_results[index[pos]]
            text, status = read_distractor(res, row.related_correct)
        rows.append({"student": row.student, "question": row.question,
                     "phase1_answer": row.answer, "correct_answer": row.correct_answer,
                     "related_question": row.related_question,
                     "related_correct": row.related_correct,
                     "generator_status": row.generator_status, "key_check": row.key_check,
                     "key_method": row.key_method, "key_check_answer": row.key_check_answer,
                     "ai_distractor": text, "ai_status": status,
                     "ai_error": (res.error or "") if res is not None else "",
                     "ai_raw": res.text if res is not None else "",
                     "conditioned": not unconditioned})  # fmt: skip
    distractors = pd.DataFrame(rows)
    ok = distractors["generator_status"] == "ok"
    worksheet = distractors.loc[ok, ["student", "question", "phase1_answer", "correct_answer",
                                     "related_question", "related_correct", "key_check"]].copy()  # fmt: skip
    worksheet["human_distractor"] = ""
    failed = {
        "generator": sum(not r.ok for r in q_results),
        "key_check": sum(not r.ok for r in solved),
        "ai": sum(not r.ok for r in a_results),
    }
    n_requests = {"generator": len(q_requests), "key_check": len(solved), "ai": len(a_requests)}
    return {"questions": questions, "distractors": distractors, "worksheet": worksheet,
            "failed_calls": failed, "n_requests": n_requests}  # fmt: skip


def _counts(series: pd.Series, order: Sequence[str]) -> dict[str, int]:
    return {k: int(v) for k, v in series.value_counts().reindex(order, fill_value=0).items()}


def _summary(out: dict, tuples: pd.DataFrame, without: list[str]) -> dict:
    """The ``results.json`` counts of a generate run."""
    q, d = out["questions"], out["distractors"]
    q_ok = q[q["generator_status"] == "ok"]
    return {
        "n_tuples": len(tuples),
        "n_questions": len(q),
        "n_requests": sum(out["n_requests"].values()),
        "requests_by_source": out["n_requests"],
        "failed_calls_by_source": out["failed_calls"],
        "generator_status": _counts(q["generator_status"], STATUSES),
        "key_check": _counts(q_ok["key_check"], KEY_CHECKS),
        "key_method": _counts(q_ok["key_method"], ("evaluated", "second_solve")),
        "tuples_key_disputed": int((d["key_check"] == "disagree").sum()),
        "ai_status": _counts(d["ai_status"], (*STATUSES, "no_question")),
        "tuples_without_question": int((d["generator_status"] != "ok").sum()),
        "students_without_error": without,
    }


def _report(out: dict, summary: dict, title: str, stats_lines: list[str]) -> Report:
    rep = Report("Imitation game: questions (generator) and AI distractors", title)
    counts = pd.DataFrame(
        [("generator (per q')", k, v) for k, v in summary["generator_status"].items()]
        + [("key check (per q')", k, v) for k, v in summary["key_check"].items()]
        + [("AI distractor (per tuple)", k, v) for k, v in summary["ai_status"].items()],
        columns=["source", "status", "count"],
    )
    without = summary["students_without_error"]
    rep.section("Status").table(counts).table(
        pd.DataFrame([summary["failed_calls_by_source"]]), caption="failed calls by source"
    ).text(
        f"{len(without)} students without a Phase-1 error (no tuples, not in Phase 2): "
        + (", ".join(without[:20]) + (" ..." if len(without) > 20 else "") if without else "none"),
        "q' is written by the generator, once per Phase-1 question, without any student's answer; "
        "the AI under test writes only the distractor. A tuple whose AI distractor is missing "
        "(failed, unparseable, invalid) keeps its MCQ in turing assemble and counts as one where "
        "the AI's distractor was not chosen. Keys the check disputes are flagged (key_check = "
        "disagree) and left out by turing assemble unless --keep-disputed.",
        *stats_lines,
    )
    rep.section("Questions q'").table(out["questions"].drop(columns=["generator_raw"]).head(15))
    rep.section("First rows").table(out["distractors"].drop(columns=["ai_raw"]).head(15))
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
    separate calls (the documented default)."""
    phase1 = read_phase1(phase1_path)
    tuples = misconception_tuples(phase1)
    without = sorted(set(phase1["student"]) - set(tuples["student"]))
    if limit is not None:
        if limit < 1:
            raise InputError("--limit must be at least 1")
        tuples = tuples.head(limit)
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
        res = generate_tables(tuples, client=client, generator=generator,
                              unconditioned=unconditioned, max_tokens=max_tokens)  # fmt: skip
        by_client = {"ai": client.stats()}
        if generator is not None:
            by_client["generator"] = generator.stats()
    stats = _sum_stats(list(by_client.values()))
    run.table("questions", res["questions"])
    run.table("distractors", res["distractors"])
    run.table("worksheet", res["worksheet"])
    summary = _summary(res, tuples, without)
    rep = _report(
        res, summary,
        f"{phase1_path}: {len(tuples)} misconception tuples, {summary['n_questions']} q', "
        f"generator {params['generator_model']}, AI {model_name}, "
        f"{'unconditioned (one per question)' if unconditioned else 'conditioned on each student'}",
        [f"{k}: {s.summary()}" for k, s in by_client.items()],
    )  # fmt: skip
    results_json = {
        **summary,
        "status": summary["ai_status"],  # as returned (results.json's "status" is the run's)
        "model_calls": stats.as_dict(),
        "model_calls_by_client": {k: s.as_dict() for k, s in by_client.items()},
        "seconds": time.perf_counter() - t0,
        **params,
    }
    if log:
        log(stats.summary())
    return finish_model_run(run, results_json, rep, decide(stats, max_failures))
