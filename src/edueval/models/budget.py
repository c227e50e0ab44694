"""How many failed model calls and unreadable answers a run may have before its results are not
to be trusted.

A server that dies half-way through a run leaves the remaining prompts failed; scored as wrong,
they would turn "the model could not be asked" into "the model is bad" (24 of 30 prompts failed
gave an MIA of 0.0).  A server that answers every prompt in the wrong format (a chat template
that breaks the JSON, a proxy's error page sent with status 200) does the same with answers
that arrive: 100% unparseable gave ``MCQ 0.000``, status ``complete``.  So:

- the number of failed calls (still failed after the retries) and of unparseable answers (a
  reply that arrived but could not be read in the format the task needs, after the task's own
  retries if it has any; :meth:`~edueval.models.ModelClient.reject`) are counted together;
- the two share one budget: past ``--max-failures`` (a count such as ``3``, or a share of the
  run's calls such as ``5%``, the default) failed calls + unparseable answers make the results
  incomplete.  Within the budget both are scored as wrong answers.

This module only *decides* (:func:`decide` -> :class:`BudgetDecision`); it writes nothing.  A
command's run folder is finished from the decision by :func:`edueval.model_runs.finish_model_run`
(``model_failures`` in ``results.json``, a note at the top of the report, status ``failed`` and
:class:`~edueval.runs.RunFailed` -- exit 3 -- past the budget).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..io import InputError
from .types import ModelStats

__all__ = [
    "BudgetDecision",
    "DEFAULT_MAX_FAILURES",
    "FailureBudgetExceeded",
    "MaxFailures",
    "as_max_failures",
    "decide",
    "failure_summary",
]


@dataclass(frozen=True)
class MaxFailures:
    """A limit on failed calls: ``count`` calls, or ``share`` (0-1) of the run's calls."""

    count: int | None = None
    share: float | None = None

    @classmethod
    def parse(cls, text: str) -> MaxFailures:
        """``"3"`` (calls), ``"5%"`` or ``"0.05"`` (a share of the run's calls)."""
        raw = str(text).strip()
        try:
            if raw.endswith("%"):
                share = float(raw[:-1]) / 100
            elif raw.isdigit():
                return cls(count=int(raw))
            else:
                share = float(raw)
        except ValueError:
            share = math.nan
        if not 0 <= share <= 1:
            raise InputError(
                f"max_failures= expects a number of calls (e.g. 3) or a share (e.g. 5% or "
                f"0.05), got {text!r}"
            )
        return cls(share=share)

    def allowed(self, calls: int) -> int:
        """Failed calls allowed in a run of ``calls`` calls."""
        if self.count is not None:
            return self.count
        return math.floor((self.share or 0.0) * calls + 1e-9)

    def __str__(self) -> str:
        return str(self.count) if self.count is not None else f"{100 * (self.share or 0):g}%"


DEFAULT_MAX_FAILURES = MaxFailures(share=0.05)


def as_max_failures(value: MaxFailures | str | int | float) -> MaxFailures:
    """A :class:`MaxFailures` from itself, a count (``3``), or a share (``"5%"``, ``0.05``)."""
    if isinstance(value, MaxFailures):
        return value
    if isinstance(value, bool):
        raise InputError(f"max_failures expects a count or a share, got {value!r}")
    if isinstance(value, int):
        return MaxFailures(count=value) if value >= 0 else MaxFailures.parse(str(value))
    return MaxFailures.parse(str(value))


@dataclass(frozen=True)
class BudgetDecision:
    """The failure budget of a run, decided: its failed calls and unparseable answers against
    what ``--max-failures`` allows; ``complete`` is ``False`` when together they are past it."""

    failed: int
    unparseable: int
    calls: int
    max_failures: str
    allowed: int

    @property
    def complete(self) -> bool:
        """Whether the results may be trusted (failed + unparseable <= allowed)."""
        return self.failed + self.unparseable <= self.allowed

    @property
    def status(self) -> str:
        """``"complete"`` or ``"failed"`` (the run folder's status)."""
        return "complete" if self.complete else "failed"

    def as_dict(self) -> dict[str, Any]:
        """As written into ``results.json`` (``model_failures``)."""
        return {
            "failed": self.failed,
            "unparseable": self.unparseable,
            "calls": self.calls,
            "max_failures": self.max_failures,
            "allowed": self.allowed,
            "complete": self.complete,
        }

    def counts(self) -> str:
        """``"3 of 20 model calls failed after their retries and 2 answers could not be
        parsed"``."""
        text = f"{self.failed} of {self.calls} model calls failed after their retries"
        if self.unparseable:
            s = "s" if self.unparseable != 1 else ""
            text += f" and {self.unparseable} answer{s} could not be parsed"
        return text


def decide(
    stats: ModelStats, limit: MaxFailures = DEFAULT_MAX_FAILURES, unparseable: int | None = None
) -> BudgetDecision:
    """The failed calls and unparseable answers in ``stats`` against ``limit``.
    ``unparseable`` defaults to the count in ``stats``."""
    return BudgetDecision(
        failed=stats.failures,
        unparseable=stats.unparseable if unparseable is None else int(unparseable),
        calls=stats.calls,
        max_failures=str(limit),
        allowed=limit.allowed(stats.calls),
    )


def failure_summary(
    stats: ModelStats, limit: MaxFailures, unparseable: int | None = None
) -> dict[str, Any]:
    """The failed calls and unparseable answers of a run against its limit, as written into
    ``results.json``.  ``unparseable`` defaults to the count in ``stats``."""
    return decide(stats, limit, unparseable).as_dict()


class FailureBudgetExceeded(RuntimeError):
    """Raised by the in-memory evaluation functions (``edueval.malalgo.evaluate``,
    ``edueval.tutor.reply``) when failed calls + unparseable answers are past ``max_failures``:
    their metrics would count them as wrong answers and are not estimates of the model.

    The message names the counts (:meth:`BudgetDecision.counts`) and the allowance; ``budget``
    is the decision and ``result`` the results object anyway (its ``complete`` is ``False``), for
    a look at what came back.  Re-running asks again for exactly the failed and unparseable
    prompts (they are not cached)."""

    def __init__(self, budget: BudgetDecision, result: Any = None) -> None:
        self.budget = budget
        self.result = result
        super().__init__(
            f"{budget.counts()}: more than the {budget.allowed} that max_failures "
            f"({budget.max_failures}) allows for both together; the metrics are incomplete "
            "(the results object is this exception's .result)"
        )
