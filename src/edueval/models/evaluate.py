"""One model-evaluation loop: requests in, replies, parsed answers and call statistics out.

Every LLM protocol asks its model the same way::

    from edueval.models.evaluate import evaluate_requests

    outcome = evaluate_requests(open_model, requests, parse=read_letter,
                                log_path=run.path / "calls.jsonl", progress="malalgo run")
    outcome.parsed      # one value per request (None: the call failed or the reply was unreadable)
    outcome.status      # "ok", "failed" (after the retries) or "unparseable", per request
    outcome.stats       # the client's ModelStats (calls, cache hits, retries, tokens, ...)
    outcome.budget      # the --max-failures decision: complete or not, with the counts

The calls go through :class:`~edueval.models.ModelClient` (cache, concurrency, retries, call
log).  Each reply that arrived is read with the protocol's ``parse``; one it returns ``None``
for is *unparseable*: it is rejected (:meth:`~edueval.models.ModelClient.reject`: deleted from
the cache, so a re-run asks again, and counted in ``stats.unparseable``), and it shares the
failure budget with the failed calls.  The budget is a decision
(:class:`~edueval.models.budget.BudgetDecision`), not an action: nothing here writes a run
folder, a report or raises for it -- the run layer does that (:mod:`edueval.model_runs`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .budget import DEFAULT_MAX_FAILURES, BudgetDecision, MaxFailures, decide
from .types import ChatRequest, ChatResult, ModelStats

__all__ = [
    "EvalOutcome",
    "Parser",
    "evaluate_requests",
    "is_client",
    "model_label",
    "open_client",
    "run_requests",
]

Parser = Callable[[ChatResult], Any]
"""Reads one reply that arrived; returns the value, or ``None`` when it is unparseable."""

STATUSES = ("ok", "failed", "unparseable")


@dataclass
class EvalOutcome:
    """What :func:`evaluate_requests` got back, in request order.

    ``results``: the replies as they came (:class:`~edueval.models.ChatResult`); ``parsed``: the
    parser's value per request (``None`` for a failed call or an unparseable reply); ``status``:
    ``"ok"``, ``"failed"`` (still failed after the retries) or ``"unparseable"``; ``stats``: the
    client's counters after the calls (everything this client was asked so far); ``budget``:
    the failure budget decided on ``stats``; ``seconds``: wall time of the calls."""

    requests: list[ChatRequest]
    results: list[ChatResult]
    parsed: list[Any]
    status: list[str]
    stats: ModelStats
    budget: BudgetDecision
    seconds: float

    @property
    def n_failed(self) -> int:
        """Requests whose call failed after the retries."""
        return self.status.count("failed")

    @property
    def n_unparseable(self) -> int:
        """Requests whose reply arrived but could not be read."""
        return self.status.count("unparseable")

    @property
    def complete(self) -> bool:
        """Whether failed calls + unparseable answers are within the failure budget."""
        return self.budget.complete

    def summary(self) -> str:
        """One line on the calls (:meth:`~edueval.models.ModelStats.summary`)."""
        return self.stats.summary()


def _per_request(value: Any, n: int, name: str) -> list[Any]:
    """``value`` for each of ``n`` requests: one value for all, or a sequence of ``n``."""
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        if len(value) != n:
            raise ValueError(f"{name}: {len(value)} given for {n} requests")
        return list(value)
    return [value] * n


def _read(result: ChatResult, parse: Parser | None) -> tuple[Any, str]:
    if not result.ok:
        return None, "failed"
    value = result if parse is None else parse(result)
    return value, ("unparseable" if value is None else "ok")


def run_requests(
    client: Any,
    requests: Sequence[ChatRequest],
    *,
    parse: Parser | Sequence[Parser] | None = None,
    count_unparseable: bool | Sequence[bool] = True,
    max_failures: MaxFailures = DEFAULT_MAX_FAILURES,
    progress: str | None = None,
) -> EvalOutcome:
    """:func:`evaluate_requests` on an open client."""
    requests = list(requests)
    parsers = _per_request(parse, len(requests), "parse")
    counts = _per_request(count_unparseable, len(requests), "count_unparseable")
    t0 = time.perf_counter()
    results = client.complete_many(requests, progress=progress) if requests else []
    parsed, status = [], []
    for req, res, parser, count in zip(requests, results, parsers, counts, strict=True):
        value, state = _read(res, parser)
        if state == "unparseable":  # never replayed from the cache; counted when ``count``
            client.reject(req, count=bool(count))
        parsed.append(value)
        status.append(state)
    stats = client.stats()
    return EvalOutcome(
        requests=requests,
        results=results,
        parsed=parsed,
        status=status,
        stats=stats,
        budget=decide(stats, max_failures),
        seconds=time.perf_counter() - t0,
    )


def open_client(model: Any, log_path: str | Path | None = None) -> Any:
    """A context manager giving an open client: ``model`` is a model spec (``"local"``,
    ``"openai/<model>"``: :func:`~edueval.models.get_model`), or an opener ``open(log_path)``
    returning a client context manager (the command line's options, a test's scripted server)."""
    if isinstance(model, str):
        from .registry import get_model

        return get_model(model, log_path=log_path)
    if callable(model):
        return model(log_path)
    raise TypeError(f"expected a model spec, an opener or a client, got {type(model).__name__}")


def is_client(model: Any) -> bool:
    """Whether ``model`` is an open client (it has ``complete_many``, ``reject`` and ``stats``),
    as opposed to a model spec or an opener."""
    return all(hasattr(model, a) for a in ("complete_many", "reject", "stats"))


def model_label(model: Any) -> str | None:
    """The model's name for results and comparisons: the spec as given (``"openai/<model>"``),
    an open client's spec (its ``name``), or None for an opener (a function: no name to tell)."""
    if isinstance(model, str):
        return model
    name = getattr(model, "name", None) if is_client(model) else None
    return name if isinstance(name, str) else None


def evaluate_requests(
    model: Any,
    requests: Sequence[ChatRequest],
    *,
    parse: Parser | Sequence[Parser] | None = None,
    count_unparseable: bool | Sequence[bool] = True,
    max_failures: MaxFailures = DEFAULT_MAX_FAILURES,
    log_path: str | Path | None = None,
    progress: str | None = None,
) -> EvalOutcome:
    """Ask ``model`` every request and read the replies; returns an :class:`EvalOutcome`.

    ``model``: an open :class:`~edueval.models.ModelClient` (left open: its counters and the
    budget then cover everything it was asked so far), a model spec or an opener
    ``open(log_path)`` (opened for these requests, with the call log at ``log_path``, and
    closed).  ``parse``: one parser for every reply, or one per request; ``None`` takes every
    reply that arrived as read.  ``count_unparseable``: whether an unparseable reply counts
    against the budget (``False`` for one the caller will ask again for; one flag or one per
    request); it is rejected either way.  ``max_failures``: the failure budget decided in
    ``budget``.  Raises :class:`~edueval.models.errors.ModelError` when the backend cannot work
    at all; a call that fails is a ``"failed"`` status, never an exception."""
    kwargs: dict[str, Any] = dict(parse=parse, count_unparseable=count_unparseable,
                                  max_failures=max_failures, progress=progress)  # fmt: skip
    if is_client(model):
        return run_requests(model, requests, **kwargs)
    with open_client(model, log_path) as client:
        return run_requests(client, requests, **kwargs)
