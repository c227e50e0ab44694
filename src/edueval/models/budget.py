"""How many failed model calls and unreadable answers a run may have before its results are not
to be trusted.

A server that dies half-way through a run leaves the remaining prompts failed; scored as wrong,
they would turn "the model could not be asked" into "the model is bad" (24 of 30 prompts failed
gave an MIA of 0.0).  A server that answers every prompt in the wrong format (a chat template
that breaks the JSON, a proxy's error page sent with status 200) does the same with answers
that arrive: 100% unparseable gave ``MCQ 0.000``, status ``complete``.  Every model-backed run
therefore ends through :func:`finish_model_run`:

- the number of failed calls (still failed after the retries) and of unparseable answers (a
  reply that arrived but could not be read in the format the task needs, after the task's own
  retries if it has any; :meth:`~edueval.models.ModelClient.reject`) is written beside the
  metrics, in ``results.json`` (``model_failures``) and at the top of the report when there is
  any;
- the two share one budget: past ``--max-failures`` (a count such as ``3``, or a share of the
  run's calls such as ``5%``, the default) failed calls + unparseable answers finish the run with
  status ``failed``, ``results.json`` says ``"complete": false``, and
  :class:`~edueval.runs.RunFailed` is raised: the command line exits 3.  Within the budget both
  are scored as wrong answers.
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


def failure_summary(
    stats: ModelStats, limit: MaxFailures, unparseable: int | None = None
) -> dict[str, Any]:
    """The failed calls and unparseable answers of a run against its limit, as written into
    ``results.json``.  ``unparseable`` defaults to the count in ``stats``."""
    allowed = limit.allowed(stats.calls)
    bad = stats.unparseable if unparseable is None else int(unparseable)
    return {
        "failed": stats.failures,
        "unparseable": bad,
        "calls": stats.calls,
        "max_failures": str(limit),
        "allowed": allowed,
        "complete": stats.failures + bad <= allowed,
    }


def _counts(summary: dict[str, Any]) -> str:
    """``"3 of 20 model calls failed after their retries and 2 answers could not be parsed"``."""
    failed, calls, bad = summary["failed"], summary["calls"], summary["unparseable"]
    text = f"{failed} of {calls} model calls failed after their retries"
    if bad:
        text += f" and {bad} answer{'s' if bad != 1 else ''} could not be parsed"
    return text


def _warning(summary: dict[str, Any]) -> Section:
    allowed = summary["allowed"]
    if summary["complete"]:
        title = "Unparseable answers" if not summary["failed"] else "Failed model calls"
        return Section(title).text(
            f"{_counts(summary)} (at most {allowed} together allowed by --max-failures); they "
            "are counted as wrong answers in every metric below."
        )
    return Section("Incomplete results").text(
        f"{_counts(summary)}, more than the {allowed} that --max-failures allows for both "
        "together. The metrics below count them as wrong answers and are NOT estimates of the "
        "model's accuracy: re-run the command when the server answers in the format asked for "
        "(answers already read are cached; failed calls and unparseable answers are not, so "
        "only those are asked again)."
    )


def finish_model_run(
    run: RunDir,
    results: dict[str, Any],
    report: Report,
    stats: ModelStats,
    limit: MaxFailures = DEFAULT_MAX_FAILURES,
) -> dict[str, Any]:
    """Finish ``run`` with the counts of failed calls and unparseable answers (``stats``) beside
    the metrics; when together they are past ``limit``, finish it as ``failed`` and raise
    :class:`~edueval.runs.RunFailed`.  Returns the results written."""
    summary = failure_summary(stats, limit)
    results = {**results, "model_failures": summary, "complete": summary["complete"]}
    if summary["failed"] or summary["unparseable"]:
        report.sections.insert(0, _warning(summary))
    if summary["complete"]:
        run.finish(results, report.render())
        return results
    run.finish(results, report.render(), status="failed")
    bad = summary["unparseable"]
    raise RunFailed(
        f"{summary['failed']} of {summary['calls']} model calls failed and {bad} "
        f"answer{'s' if bad != 1 else ''} could not be parsed (--max-failures allows "
        f"{summary['allowed']} in all): {run.path} is marked failed and its metrics incomplete"
    )
