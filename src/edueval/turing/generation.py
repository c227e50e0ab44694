"""Phase 2's questions (the generator f_LLM) and the AI's distractors (g_AI), in memory.

::

    from edueval.turing import generate

    gen = generate("phase1.csv", model="openai/gpt-4o-mini")   # or a DataFrame / records;
    print(gen.summary())                                       # model "local", an opener, a client
    gen.distractors        # one row per misconception tuple (distractors.csv): q', key, AI's answer
    gen.worksheet          # the expert's blinded worksheet (worksheet.csv)
    gen.questions          # one row per Phase-1 question: q', its key and the key check
    gen.ai_status, gen.key_check, gen.model, gen.complete

No output folder, no file written, nothing printed (a backend's response cache is the
backend's).  ``turing generate`` writes the same tables and counts (:mod:`.generate_runs`): both
build the requests here and ask through :func:`edueval.models.evaluate.evaluate_requests`.

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
from dataclasses import dataclass, field
from dataclasses import fields as dc_fields
from pathlib import Path
from typing import Any

import pandas as pd

from ..io import InputError
from ..models.budget import (
    DEFAULT_MAX_FAILURES,
    BudgetDecision,
    FailureBudgetExceeded,
    MaxFailures,
    as_max_failures,
    decide,
)
from ..models.evaluate import evaluate_requests, is_client, open_client
from ..models.types import ModelStats
from ..results import RunResults, to_jsonable
from ..tables import takes_tables
from .data import PHASE1, misconception_tuples, read_phase1, same_answer
from .keycheck import KEY_CHECKS, evaluate_question, key_check

__all__ = [
    "AI_SCHEMA",
    "QUESTION_SCHEMA",
    "SOLVE_SCHEMA",
    "STATUSES",
    "TuringGeneration",
    "distractor_requests",
    "generate",
    "generate_tables",
    "generate_with",
    "prepare",
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
        at = index[pos]
        if at is None:
            text, status, res = "", "no_question", None
        else:
            res = a_results[at]
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


def prepare(
    phase1: str | Path | pd.DataFrame | list[dict], *, limit: int | None = None
) -> tuple[pd.DataFrame, list[str]]:
    """The misconception tuples of a Phase-1 file, DataFrame or records (validated as
    ``turing generate`` validates its file: :class:`~edueval.io.InputError`), the first
    ``limit`` only, and the students without any Phase-1 error (sorted)."""
    table = read_phase1(phase1)
    tuples = misconception_tuples(table)
    without = sorted(set(table["student"]) - set(tuples["student"]))
    if limit is not None:
        if limit < 1:
            raise InputError(f"limit must be at least 1, got {limit}")
        tuples = tuples.head(limit)
    return tuples, without


_STATUS_ROWS = (
    ("generator (per q')", "generator_status"),
    ("key check (per q')", "key_check"),
    ("AI distractor (per tuple)", "ai_status"),
)
#: the counts of ``results.json``, in its order (:meth:`TuringGeneration.counts`)
_COUNTS = ("n_tuples", "n_questions", "n_requests", "requests_by_source",
           "failed_calls_by_source", "generator_status", "key_check", "key_method",
           "tuples_key_disputed", "ai_status", "tuples_without_question",
           "students_without_error")  # fmt: skip


@dataclass
class TuringGeneration(RunResults):
    """Results of :func:`generate`: Phase 2's related questions q′ and the AI's distractors.

    Tables (those ``turing generate`` writes): ``questions`` (one row per Phase-1 question: q′,
    its key, ``generator_status`` and the key check), ``distractors`` (one row per misconception
    tuple: q′, its key, the AI's distractor and ``ai_status``), ``worksheet`` (the expert's,
    blinded: no AI distractor).  Counts (``results.json``'s): ``n_tuples``, ``n_questions``,
    ``n_requests``, ``requests_by_source`` and ``failed_calls_by_source`` (generator, key check,
    AI), ``generator_status``, ``key_check``, ``key_method``, ``ai_status`` (status -> count),
    ``tuples_key_disputed``, ``tuples_without_question``, ``students_without_error``.
    ``model`` / ``generator_model``: the models that answered (named by the clients used);
    ``budget``: the failure budget's decision; ``stats``: the model calls of all clients
    together, ``stats_by_client`` per client (``ai``, and ``generator`` when separate)."""

    questions: pd.DataFrame = field(repr=False)
    distractors: pd.DataFrame = field(repr=False)
    worksheet: pd.DataFrame = field(repr=False)
    n_tuples: int
    n_questions: int
    n_requests: int
    requests_by_source: dict[str, int]
    failed_calls_by_source: dict[str, int]
    generator_status: dict[str, int]
    key_check: dict[str, int]
    key_method: dict[str, int]
    tuples_key_disputed: int
    ai_status: dict[str, int]
    tuples_without_question: int
    students_without_error: list[str]
    model: str | None
    generator_model: str | None
    generator_same_as_model: bool
    unconditioned: bool
    budget: BudgetDecision
    stats: ModelStats = field(repr=False)
    stats_by_client: dict[str, ModelStats] = field(repr=False)
    seconds: float = 0.0
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Whether failed calls + unparseable answers are within ``max_failures``."""
        return self.budget.complete

    def counts(self) -> dict[str, Any]:
        """The counts as ``turing generate`` writes them first in ``results.json``."""
        return {k: getattr(self, k) for k in _COUNTS}

    _writer = "edueval.turing.generate_runs:save_run"

    def run_params(self) -> dict[str, Any]:
        """The options as ``turing generate``'s config.json records them (the models that
        answered, as their clients name them)."""
        return {"model": self.model, "generator_model": self.generator_model,
                "generator_same_as_model": self.generator_same_as_model,
                "unconditioned": self.unconditioned, "limit": self.params.get("limit"),
                "max_tokens": self.params.get("max_tokens", 200), "n_tuples": self.n_tuples,
                "max_failures": self.params.get("max_failures")}  # fmt: skip

    def headline(self) -> dict[str, Any]:
        """What ``turing generate`` hands its run folder: the counts, the AI's ``status`` counts
        (results.json's ``status`` is then the run's), ``model_calls``,
        ``model_calls_by_client``, ``seconds``, the options, ``model_failures`` and
        ``complete``."""
        return {
            **self.counts(),
            "status": self.ai_status,
            "model_calls": self.stats.as_dict(),
            "model_calls_by_client": {k: s.as_dict() for k, s in self.stats_by_client.items()},
            "seconds": self.seconds,
            **self.run_params(),
            "model_failures": self.budget.as_dict(),
            "complete": self.complete,
        }

    def results(self) -> dict[str, Any]:
        """``turing generate``'s results.json less ``tables`` and the run's ``status``."""
        return to_jsonable({k: v for k, v in self.headline().items() if k != "status"})

    def status_table(self) -> pd.DataFrame:
        """``source, status, count``: q′ per generator status and key check, tuples per AI
        status."""
        rows = [(name, k, v) for name, attr in _STATUS_ROWS for k, v in getattr(self, attr).items()]
        return pd.DataFrame(rows, columns=["source", "status", "count"])

    def to_frame(self) -> pd.DataFrame:
        """Tidy rows, one per misconception tuple: the ``distractors`` table (``student,
        question, phase1_answer, correct_answer, related_question, related_correct,
        generator_status, key_check, ..., ai_distractor, ai_status, ...``)."""
        return self.distractors.copy()

    def summary(self) -> str:
        """A printable table: tuples, q′, the statuses per source, failed calls and the
        budget."""
        b = self.budget
        lines = [
            f"Imitation game, Phase 2: {self.n_tuples} misconception tuples, {self.n_questions} "
            f"questions q'; generator {self.generator_model}, AI {self.model}, "
            + ("unconditioned (one per question)" if self.unconditioned
               else "conditioned on each student"),
            self.status_table().to_string(index=False),
            "failed calls: " + ", ".join(f"{k} {v}" for k, v in
                                         self.failed_calls_by_source.items()),
            f"{len(self.students_without_error)} students without a Phase-1 error (not in "
            f"Phase 2); {self.tuples_key_disputed} tuples with a disputed key",
            f"{b.counts()} ({b.allowed} allowed by max_failures {b.max_failures}): {b.status}",
        ]  # fmt: skip
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def _name(client: Any, fallback: Any = None) -> str | None:
    """The model a client answers with (its ``name``), else the spec it was opened from."""
    name = getattr(client, "name", None)
    if isinstance(name, str) and name:
        return name
    return fallback if isinstance(fallback, str) else None


def generate_with(
    tuples: pd.DataFrame,
    without: list[str],
    *,
    client: Any,
    generator: Any = None,
    unconditioned: bool = False,
    max_tokens: int = 200,
    max_failures: MaxFailures = DEFAULT_MAX_FAILURES,
    params: dict[str, Any] | None = None,
) -> TuringGeneration:
    """:func:`generate` on open clients (``generator=None``: the AI's ``client`` in separate
    calls); the budget is decided, never raised for (the run layer writes it down)."""
    t0 = time.perf_counter()
    res = generate_tables(tuples, client=client, generator=generator,
                          unconditioned=unconditioned, max_tokens=max_tokens)  # fmt: skip
    by_client = {"ai": client.stats()}
    if generator is not None:
        by_client["generator"] = generator.stats()
    stats = _sum_stats(list(by_client.values()))
    model = _name(client)
    return TuringGeneration(
        questions=res["questions"], distractors=res["distractors"], worksheet=res["worksheet"],
        **_summary(res, tuples, without),
        model=model, generator_model=model if generator is None else _name(generator),
        generator_same_as_model=generator is None, unconditioned=unconditioned,
        budget=decide(stats, max_failures), stats=stats, stats_by_client=by_client,
        seconds=time.perf_counter() - t0, params=dict(params or {}),
    )  # fmt: skip


def _enter(stack: ExitStack, model: Any) -> Any:
    """An open client for ``model``: itself when it is one (left open), else opened (no call
    log) on ``stack``; ``None`` is the default model (``$EDUEVAL_MODEL``, else ``local``)."""
    if is_client(model):
        return model
    if model is None:
        from ..models.registry import default_model_spec

        model = default_model_spec()
    return stack.enter_context(open_client(model))


@takes_tables(phase1=PHASE1)
def generate(
    phase1: str | Path | pd.DataFrame | list[dict],
    model: Any = None,
    *,
    generator: Any = None,
    unconditioned: bool = False,
    limit: int | None = None,
    max_tokens: int = 200,
    max_failures: MaxFailures | str | int | float = DEFAULT_MAX_FAILURES,
) -> TuringGeneration:
    """Phase 2 of the imitation game: per Phase-1 question the generator's related question q′
    and its checked key; per misconception tuple the AI's distractor for that q′ (and the
    expert's blinded worksheet).

    ``phase1``: ``student, question, answer, correct_answer`` as a file, a DataFrame or records
    (validated as ``turing generate`` validates its file: :class:`~edueval.io.InputError`).
    ``model`` (the AI under test, g_AI) and ``generator`` (f_LLM): a model spec (``"local"``,
    ``"openai/<model>"``), an opener ``open(log_path)`` returning a client context manager, or
    an open :class:`~edueval.models.ModelClient` (left open; its counters, and so the budget,
    cover everything it was asked).  ``model=None``: ``$EDUEVAL_MODEL``, else ``local``;
    ``generator=None`` (or the same as ``model``): the AI's own client in separate calls that
    see no student's answer.  ``unconditioned``, ``limit`` (the first tuples only),
    ``max_tokens``: as the ``turing generate`` options.  ``max_failures``: a count (``3``), a
    share (``"5%"``, ``0.05``) or a :class:`~edueval.models.MaxFailures`.

    Failed calls and unparseable replies of every source share the budget; past it, raises
    :class:`~edueval.models.FailureBudgetExceeded` (its ``.result`` is this
    :class:`TuringGeneration`, ``complete`` False) -- as ``turing generate`` marks its run
    failed.  Nothing is written or printed."""
    limit_ = as_max_failures(max_failures)
    tuples, without = prepare(phase1, limit=limit)
    same = (
        generator is None
        or generator is model
        or (isinstance(generator, str) and generator == model)
    )
    params = {"unconditioned": unconditioned, "limit": limit, "max_tokens": max_tokens,
              "max_failures": str(limit_)}  # fmt: skip
    with ExitStack() as stack:
        client = _enter(stack, model)
        other = None if same else _enter(stack, generator)
        result = generate_with(tuples, without, client=client, generator=other,
                               unconditioned=unconditioned, max_tokens=max_tokens,
                               max_failures=limit_, params=params)  # fmt: skip
    if not result.complete:
        raise FailureBudgetExceeded(result.budget, result)
    return result
