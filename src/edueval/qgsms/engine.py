"""A small driver for multi-step model pipelines over many jobs at once.

A *job* is a generator that yields a list of :class:`Ask` (model calls that do not depend on each
other) and receives, for each, the parsed value. The driver gathers the asks of every live job
into one batch of the shared loop (:func:`~edueval.models.evaluate.evaluate_requests`:
concurrency, cache, call log and rejecting malformed answers are the model layer's), so step
``k`` of all pairs runs together. An answer that is malformed or incomplete (its ``parse``
returns ``None``) is asked again -- up to ``retries`` more times, each retry a fresh sample -- and
then :class:`StepFailed` is thrown into the job, which ends it as a recorded failure (a job may
catch it). Nothing malformed is passed on, nor kept in the cache (``client.reject``); the answer
still malformed after the retries is counted as unparseable, against ``--max-failures``.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

from ..models import ChatRequest, ChatResult
from ..models.evaluate import evaluate_requests

__all__ = ["Ask", "StepFailed", "Cost", "JobOutcome", "drive"]


class StepFailed(Exception):
    """A step still malformed (or a call still failing) after the retries."""

    def __init__(self, step: str, reason: str) -> None:
        self.step = step
        self.reason = reason
        super().__init__(f"{step}: {reason}")


@dataclass
class Ask:
    """One model call of a step: ``build(attempt)`` makes the request, ``parse(result)`` returns
    the value or ``None`` when the answer is malformed or incomplete."""

    step: str
    build: Callable[[int], ChatRequest]
    parse: Callable[[ChatResult], Any]


@dataclass
class Cost:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0
    malformed: int = 0

    def add(self, res: ChatResult, attempt: int) -> None:
        self.calls += 1
        self.prompt_tokens += res.prompt_tokens or 0
        self.completion_tokens += res.completion_tokens or 0
        self.retries += attempt > 0


@dataclass
class JobOutcome:
    value: Any = None
    failed: StepFailed | None = None
    cost: Cost = field(default_factory=Cost)


Job = Generator[list[Ask], list[Any], Any]


def drive(
    jobs: list[Job],
    client: Any,
    *,
    retries: int = 2,
    progress: str | None = None,
    on_answer: Callable[[int, Ask, int, ChatResult, Any], None] | None = None,
) -> list[JobOutcome]:
    """Run ``jobs`` to completion; returns one :class:`JobOutcome` per job (value or failure).

    ``on_answer(job_index, ask, attempt, result, parsed)`` sees every answer (for logs)."""
    out = [JobOutcome() for _ in jobs]
    # state per live job: its asks, their values, their current attempts
    live: dict[int, tuple[list[Ask], list[Any], list[int]]] = {}

    def advance(j: int, send: Any = None, throw: StepFailed | None = None) -> None:
        gen = jobs[j]
        try:
            if throw is not None:
                asks = gen.throw(throw)
            elif send is None:
                asks = next(gen)
            else:
                asks = gen.send(send)
        except StopIteration as stop:
            out[j].value = stop.value
            live.pop(j, None)
            return
        except StepFailed as exc:
            out[j].failed = exc
            live.pop(j, None)
            return
        live[j] = (list(asks), [None] * len(asks), [0] * len(asks))

    for j in range(len(jobs)):
        advance(j)
    while live:
        batch: list[tuple[int, int]] = []
        for j, (asks, values, _) in live.items():
            batch += [(j, k) for k in range(len(asks)) if values[k] is None]
        asks = [live[j][0][k] for j, k in batch]
        requests = [ask.build(live[j][2][k]) for (j, k), ask in zip(batch, asks, strict=True)]
        # the shared loop rejects a malformed answer (never cached); the one still malformed
        # after the retries is counted against --max-failures
        got = evaluate_requests(
            client,
            requests,
            parse=[ask.parse for ask in asks],
            count_unparseable=[live[j][2][k] >= retries for j, k in batch],
            progress=progress,
        )
        failed: dict[int, StepFailed] = {}
        for (j, k), ask, res, parsed in zip(batch, asks, got.results, got.parsed, strict=True):
            _, values, attempts = live[j]
            out[j].cost.add(res, attempts[k])
            if on_answer is not None:
                on_answer(j, ask, attempts[k], res, parsed)
            if parsed is not None:
                values[k] = parsed
                continue
            out[j].cost.malformed += res.ok
            if attempts[k] < retries:
                attempts[k] += 1
            elif j not in failed:
                why = res.error if not res.ok else "malformed or incomplete answer"
                failed[j] = StepFailed(ask.step, f"{why} after {attempts[k] + 1} attempts")
        for j in list(live):
            asks, values, _ = live[j]
            if j in failed:
                advance(j, throw=failed[j])
            elif all(v is not None for v in values):
                advance(j, send=values)
    return out
