"""Malgorithm identification in memory: questions and a model in, a results object out.

::

    from edueval.malalgo import evaluate
    from edueval.misconceptions import generate_items

    res = evaluate(generate_items(20, seed=0), "local")     # or "openai/<model>", an opener
    print(res.summary())                                   # MCQ accuracy, AIA, MIA, 95% CIs
    res.mia.accuracy, res.mia.ci_low_clustered, res.n_unparseable, res.complete
    res.responses                                          # one row per prompt

No output folder, no file written, nothing printed (the model's response cache, if the backend
keeps one, is the backend's).  The numbers are those of ``malalgo run`` on the same questions and
options (its ``results.json``): both build the prompts with :func:`.tasks.build_tasks`, ask through
:func:`edueval.models.evaluate.evaluate_requests`, read the answers with
:func:`.tasks.read_answer` (:func:`scored_frame`) and score with :func:`.metrics.summary`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..defaults import SEED
from ..io import InputError
from ..models.budget import (
    DEFAULT_MAX_FAILURES,
    BudgetDecision,
    FailureBudgetExceeded,
    MaxFailures,
    as_max_failures,
)
from ..models.evaluate import EvalOutcome, evaluate_requests, model_label
from ..models.types import ChatResult, ModelStats
from ..results import RunResults
from ..tables import takes_tables
from .data import QUESTIONS, READ_QUESTIONS, read_questions
from .metrics import breakdown, score_table, summary
from .tasks import Task, build_tasks, read_answer

__all__ = [
    "Accuracy",
    "MalAlgoEvaluation",
    "ask_tasks",
    "evaluate",
    "evaluation_from",
    "scored_frame",
]

#: the per-question columns copied into every response row
META = ["grade", "content", "dok"]
_MEASURES = {
    "mcq": "MCQ accuracy",
    "aia": "AIA (correct choices)",
    "mia": "MIA (incorrect choices)",
}


def _readable(result: ChatResult, scoring: str) -> tuple[str | None, str] | None:
    """``read_answer``'s ``(label, how)``, or ``None`` for an unparseable answer (counted against
    the failure budget and never replayed from the cache)."""
    read = read_answer(result, scoring)
    return None if read[1] == "unparseable" else read


@takes_tables(questions=READ_QUESTIONS)
def scored_frame(questions: pd.DataFrame, tasks, results, scoring: str) -> pd.DataFrame:
    """One row per prompt: what was asked, what came back, how it was read, and whether right."""
    meta = questions.set_index(questions["id"].astype(str))
    rows = []
    for task, res in zip(tasks, results, strict=True):
        label, status = read_answer(res, scoring)
        q = meta.loc[task.question_id]
        rows.append(
            {
                "task_id": task.task_id,
                "question_id": task.question_id,
                "kind": task.kind,
                "choice": task.choice,
                "is_correct_choice": task.is_correct_choice,
                "order": task.order,
                "target": task.target,
                "answer_label": label,
                "answer_original": task.to_original(label) if label else None,
                "status": status,
                "error": res.error,
                "text": res.text,
                "latency_s": res.latency_s,
                "cached": res.cached,
                "attempts": res.attempts,
                **{k: q[k] for k in META},
            }
        )
    return score_table(pd.DataFrame(rows))


def prepare(
    questions: str | Path | pd.DataFrame, *, limit: int | None = None, **options: Any
) -> tuple[pd.DataFrame, list[Task]]:
    """The validated questions (the first ``limit``) and their prompts (``build_tasks``'s
    ``options``); a bad option is an :class:`~edueval.io.InputError`."""
    table = read_questions(questions)
    if limit is not None:
        table = table.head(limit)
    try:
        return table, build_tasks(table, **options)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def ask_tasks(
    model: Any,
    tasks: list[Task],
    scoring: str,
    *,
    max_failures: MaxFailures = DEFAULT_MAX_FAILURES,
    log_path: str | Path | None = None,
    progress: str | None = None,
) -> EvalOutcome:
    """Every prompt asked through the shared loop, an unparseable answer counted against
    ``max_failures``."""
    return evaluate_requests(
        model,
        [t.request for t in tasks],
        parse=lambda res: _readable(res, scoring),
        max_failures=max_failures,
        log_path=log_path,
        progress=progress,
    )


@dataclass(frozen=True)
class Accuracy:
    """One accuracy (MCQ, AIA or MIA): ``correct`` of ``n`` prompts, its Wilson 95% interval,
    the failed calls and unparseable answers among the ``n`` (scored as wrong); for MIA also the
    question-clustered interval (``ci_method`` says which it is)."""

    n: int
    correct: int
    accuracy: float
    ci_low: float
    ci_high: float
    failed: int
    unparseable: int
    ci_low_clustered: float | None = None
    ci_high_clustered: float | None = None
    ci_method: str | None = None

    @classmethod
    def from_dict(cls, d: dict) -> Accuracy:
        return cls(**d)

    def as_dict(self) -> dict[str, Any]:
        """As ``results.json`` holds it (the clustered keys only for MIA)."""
        out = {k: getattr(self, k) for k in
               ("n", "correct", "accuracy", "ci_low", "ci_high", "failed", "unparseable")}  # fmt: skip
        if self.ci_method is not None:
            out.update(ci_low_clustered=self.ci_low_clustered,
                       ci_high_clustered=self.ci_high_clustered, ci_method=self.ci_method)  # fmt: skip
        return out


@dataclass
class MalAlgoEvaluation(RunResults):
    """Results of :func:`evaluate`.

    ``mcq``, ``aia``, ``mia``: :class:`Accuracy` (MCQ accuracy; algorithm identification over
    the correct choices; malgorithm identification over the incorrect ones).  ``responses``: one
    row per prompt (the ``responses.csv`` of ``malalgo run``).  ``budget``: the failure budget's
    decision; ``stats``: the model calls; ``params``: the options used."""

    mcq: Accuracy
    aia: Accuracy
    mia: Accuracy
    n_questions: int
    n_prompts: int
    n_unparseable: int
    n_failed: int
    n_logprob_fallback: int
    unparseable_rate: float
    responses: pd.DataFrame = field(repr=False)
    budget: BudgetDecision
    stats: ModelStats = field(repr=False)
    seconds: float
    params: dict[str, Any] = field(default_factory=dict)

    _writer = "edueval.malalgo.pipeline:save_run"
    #: the command whose run this is (what ``compare`` records as the protocol)
    command = "malalgo run"

    @property
    def complete(self) -> bool:
        """Whether failed calls + unparseable answers are within ``max_failures``."""
        return self.budget.complete

    def metrics(self) -> dict[str, Any]:
        """The metrics of ``results.json`` (its ``mcq`` ... ``unparseable_rate``), without the
        timings, the call counts, the options and the failure budget."""
        return {
            **{k: getattr(self, k).as_dict() for k in _MEASURES},
            **{k: getattr(self, k) for k in ("n_questions", "n_prompts", "n_unparseable",
               "n_failed", "n_logprob_fallback", "unparseable_rate")},
        }  # fmt: skip

    def run_params(self) -> dict[str, Any]:
        """The options as ``malalgo run``'s config.json records them (the seed apart)."""
        return {**{k: v for k, v in self.params.items() if k != "seed"},
                "n_questions": self.n_questions, "n_prompts": self.n_prompts}  # fmt: skip

    def headline(self) -> dict[str, Any]:
        """``malalgo run``'s results.json: the metrics, ``seconds``, ``model_calls``, the
        options, ``model_failures`` and ``complete``."""
        return {**self.metrics(), "seconds": self.seconds, "model_calls": self.stats.as_dict(),
                **self.run_params(), "model_failures": self.budget.as_dict(),
                "complete": self.complete}  # fmt: skip

    def breakdown(self, by: str) -> pd.DataFrame:
        """AIA and MIA per ``grade``, ``dok`` or ``content`` (:func:`.metrics.breakdown`)."""
        return breakdown(self.responses, by)

    def to_frame(self) -> pd.DataFrame:
        """Tidy rows, one per measure (``mcq``, ``aia``, ``mia``): ``measure, n, correct,
        accuracy, ci_low, ci_high, ci_low_clustered, ci_high_clustered, ci_method, failed,
        unparseable``."""
        rows = [{"measure": k, **getattr(self, k).__dict__} for k in _MEASURES]
        cols = ["measure", "n", "correct", "accuracy", "ci_low", "ci_high", "ci_low_clustered",
                "ci_high_clustered", "ci_method", "failed", "unparseable"]  # fmt: skip
        return pd.DataFrame(rows)[cols]

    def summary(self) -> str:
        """A printable table: the three accuracies with their 95% intervals, then the counts."""
        rows = []
        for key, name in _MEASURES.items():
            a: Accuracy = getattr(self, key)
            ci = "" if not a.n else f"[{a.ci_low:.3f}, {a.ci_high:.3f}]"
            if a.ci_method is not None and a.n:
                ci += f"; {a.ci_method} [{a.ci_low_clustered:.3f}, {a.ci_high_clustered:.3f}]"
            acc = f"{a.accuracy:.3f}" if math.isfinite(a.accuracy) else "-"
            rows.append({"measure": name, "n": a.n, "accuracy": acc, "95% CI": ci,
                         "failed": a.failed, "unparseable": a.unparseable})  # fmt: skip
        lines = [
            f"Malgorithm identification: {self.n_questions} questions, {self.n_prompts} prompts"
            + (f", model {self.params['model']}" if self.params.get("model") else ""),
            pd.DataFrame(rows).to_string(index=False),
            f"{self.n_unparseable} unparseable answers and {self.n_failed} failed calls, both "
            f"scored as wrong ({self.budget.allowed} allowed by max_failures "
            f"{self.budget.max_failures}): {self.budget.status}",
        ]
        return "\n".join(lines)


@takes_tables(questions=QUESTIONS)
def evaluate(
    questions: str | Path | pd.DataFrame,
    model: Any,
    *,
    prompt: str = "simple",
    shots: int = 0,
    scoring: str = "generate",
    rationale_order: str = "shuffle",
    seed: int = SEED,
    mcq: bool = True,
    limit: int | None = None,
    max_failures: MaxFailures | str | int | float = DEFAULT_MAX_FAILURES,
) -> MalAlgoEvaluation:
    """Ask ``model`` to identify the rationale behind every choice of every question (and, with
    ``mcq``, to answer the question) and score the answers: MCQ accuracy, AIA and MIA.

    ``questions``: a MalAlgoQA-format DataFrame or file (validated as ``malalgo run`` validates
    its file: :class:`~edueval.io.InputError`).  ``model``: a model spec (``"local"``,
    ``"openai/<model>"``), an opener ``open(log_path)`` returning a client context manager, or
    an open :class:`~edueval.models.ModelClient` (then its counters, and so the budget, cover
    everything it was asked).  ``prompt`` (``simple``/``cot``), ``shots``, ``scoring``
    (``generate``/``logprob``), ``rationale_order`` (``shuffle``/``original``), ``seed``,
    ``mcq``, ``limit`` (the first questions only): as the ``malalgo run`` options.
    ``max_failures``: a count (``3``), a share (``"5%"``, ``0.05``) or a
    :class:`~edueval.models.MaxFailures`.

    Failed calls and unparseable answers are scored as wrong and counted.  When together they
    are past ``max_failures``, raises :class:`~edueval.models.FailureBudgetExceeded` (a
    ``RuntimeError`` naming the counts; its ``.result`` is this evaluation, ``complete`` False)
    -- as ``malalgo run`` marks its run failed.  A backend that cannot work at all raises
    :class:`~edueval.models.ModelError`.  Nothing is written or printed."""
    limit_ = as_max_failures(max_failures)
    table, tasks = prepare(questions, limit=limit, prompt=prompt, shots=shots,
                           rationale_order=rationale_order, scoring=scoring, mcq=mcq,
                           seed=seed)  # fmt: skip
    outcome = ask_tasks(model, tasks, scoring, max_failures=limit_)
    params = {"model": model_label(model), "prompt": prompt, "shots": shots,
              "rationale_order": rationale_order, "scoring": scoring, "ask_mcq": mcq,
              "seed": seed, "limit": limit, "max_failures": str(limit_)}  # fmt: skip
    result = evaluation_from(table, tasks, outcome, params)
    if not result.complete:
        raise FailureBudgetExceeded(outcome.budget, result)
    return result


def evaluation_from(
    table: pd.DataFrame, tasks: list[Task], outcome: EvalOutcome, params: dict[str, Any]
) -> MalAlgoEvaluation:
    """The results object of the answers in ``outcome`` (``evaluate`` and ``malalgo run``)."""
    scored = scored_frame(table, tasks, outcome.results, params["scoring"])
    summ = summary(scored)
    return MalAlgoEvaluation(
        mcq=Accuracy.from_dict(summ["mcq"]),
        aia=Accuracy.from_dict(summ["aia"]),
        mia=Accuracy.from_dict(summ["mia"]),
        **{k: summ[k] for k in ("n_questions", "n_prompts", "n_unparseable", "n_failed",
           "n_logprob_fallback", "unparseable_rate")},
        responses=scored,
        budget=outcome.budget,
        stats=outcome.stats,
        seconds=outcome.seconds,
        params=params,
    )  # fmt: skip
