"""How many failed model calls a run may have before its results are not to be trusted.

A server that dies half-way through a run leaves the remaining prompts failed; scored as wrong,
they would turn "the model could not be asked" into "the model is bad" (24 of 30 prompts failed
gave an MIA of 0.0).  Every model-backed run therefore ends through :func:`finish_model_run`:

- the number of failed calls (still failed after the retries) is written beside the metrics, in
  ``results.json`` (``model_failures``) and at the top of the report when there is any;
- past ``--max-failures`` (a count such as ``3``, or a share of the run's calls such as ``5%``,
  the default) the run is finished with status ``failed``, ``results.json`` says
  ``"complete": false``, and :class:`~edueval.runs.RunFailed` is raised: the command line exits 3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..io import InputError
from ..report import Report, Section
from ..runs import RunDir, RunFailed
from .types import ModelStats

__all__ = ["MaxFailures", "DEFAULT_MAX_FAILURES", "failure_summary", "finish_model_run"]


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
                f"--max-failures expects a number of calls (e.g. 3) or a share (e.g. 5% or "
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


def failure_summary(stats: ModelStats, limit: MaxFailures) -> dict[str, Any]:
    """The failed calls of a run against its limit, as written into ``results.json``."""
    allowed = limit.allowed(stats.calls)
    return {
        "failed": stats.failures,
        "calls": stats.calls,
        "max_failures": str(limit),
        "allowed": allowed,
        "complete": stats.failures <= allowed,
    }


def _warning(summary: dict[str, Any]) -> Section:
    failed, calls, allowed = summary["failed"], summary["calls"], summary["allowed"]
    if summary["complete"]:
        return Section("Failed model calls").text(
            f"{failed} of {calls} model calls failed after their retries (at most {allowed} "
            "allowed by --max-failures); they are counted as wrong answers in every metric below."
        )
    return Section("Incomplete results").text(
        f"{failed} of {calls} model calls failed after their retries, more than the {allowed} "
        "that --max-failures allows. The metrics below count the failed calls as wrong answers "
        "and are NOT estimates of the model's accuracy: re-run the command when the server "
        "answers (answers already received are cached, so only the failed calls are repeated)."
    )


def finish_model_run(
    run: RunDir,
    results: dict[str, Any],
    report: Report,
    stats: ModelStats,
    limit: MaxFailures = DEFAULT_MAX_FAILURES,
) -> dict[str, Any]:
    """Finish ``run`` with the failure count beside the metrics; past ``limit``, finish it as
    ``failed`` and raise :class:`~edueval.runs.RunFailed`.  Returns the results written."""
    summary = failure_summary(stats, limit)
    results = {**results, "model_failures": summary, "complete": summary["complete"]}
    if summary["failed"]:
        report.sections.insert(0, _warning(summary))
    if summary["complete"]:
        run.finish(results, report.render())
        return results
    run.finish(results, report.render(), status="failed")
    raise RunFailed(
        f"{summary['failed']} of {summary['calls']} model calls failed (--max-failures allows "
        f"{summary['allowed']}): {run.path} is marked failed and its metrics incomplete"
    )
