"""The run-folder end of a model-backed command: the failure budget's decision written down.

The model layer decides (:func:`edueval.models.budget.decide`, or the ``budget`` of
:func:`edueval.models.evaluate.evaluate_requests`'s outcome); this module, in the run layer,
writes the decision into the run folder: the counts beside the metrics in ``results.json``
(``model_failures``, ``complete``), a note at the top of the report when there is any failed call
or unparseable answer, and -- past ``--max-failures`` -- status ``failed`` and
:class:`~edueval.runs.RunFailed` (the command line exits 3).

It also writes down what answered: ``config.json`` gains ``model`` (the first client of the run:
the resolved model spec, the backend, every base URL, the cache identity and for the embedded model
its weights' file name and SHA-256; never an API key) and ``models`` (every client of the run, e.g.
``turing generate``'s AI and its generator), found from the clients that wrote the run's
``calls.jsonl`` (:func:`edueval.models.provenance.backends_logging_to`), or given with
:func:`record_models`.
"""

from __future__ import annotations

from typing import Any

from .models.budget import DEFAULT_MAX_FAILURES, BudgetDecision, MaxFailures, decide
from .models.provenance import backends_logging_to, model_provenance
from .models.types import ModelStats
from .report import Report, Section
from .runs import RunDir, RunFailed

__all__ = ["budget_note", "finish_model_run", "record_models"]

CALL_LOG = "calls.jsonl"
"""The call log of a run folder, where every LLM protocol's client writes."""


def record_models(run: RunDir, *clients: Any) -> list[dict[str, Any]]:
    """Put what answered into ``run``'s ``config.json`` (written with the run's config at
    :meth:`~edueval.runs.RunDir.finish`): ``model``, the first client's provenance
    (:func:`~edueval.models.provenance.model_provenance`), and ``models``, every distinct one in
    order.  ``clients``: :class:`~edueval.models.ModelClient` objects or backends; none given: the
    clients that wrote the run's ``calls.jsonl`` in this process.  Returns ``models``."""
    found = list(clients) or backends_logging_to(run.path / CALL_LOG)
    models: list[dict[str, Any]] = []
    for client in found:
        entry = model_provenance(client)
        if entry not in models:
            models.append(entry)
    if models:
        run.config["model"] = models[0]
        run.config["models"] = models
    return models


def budget_note(budget: BudgetDecision) -> Section:
    """The report section on a run's failed calls and unparseable answers."""
    allowed = budget.allowed
    if budget.complete:
        title = "Unparseable answers" if not budget.failed else "Failed model calls"
        return Section(title).text(
            f"{budget.counts()} (at most {allowed} together allowed by --max-failures); they "
            "are counted as wrong answers in every metric below."
        )
    return Section("Incomplete results").text(
        f"{budget.counts()}, more than the {allowed} that --max-failures allows for both "
        "together. The metrics below count them as wrong answers and are NOT estimates of the "
        "model's accuracy: re-run the command when the server answers in the format asked for "
        "(answers already read are cached; failed calls and unparseable answers are not, so "
        "only those are asked again)."
    )


def finish_model_run(
    run: RunDir,
    results: dict[str, Any],
    report: Report,
    budget: BudgetDecision | ModelStats,
    limit: MaxFailures = DEFAULT_MAX_FAILURES,
) -> dict[str, Any]:
    """Finish ``run`` with the counts of failed calls and unparseable answers beside the metrics;
    when together they are past the budget, finish it as ``failed`` and raise
    :class:`~edueval.runs.RunFailed`.  ``budget`` is the decision (``limit`` is then unused), or
    the run's :class:`~edueval.models.ModelStats` to decide against ``limit``.  ``config.json``
    records the clients that wrote the run's ``calls.jsonl`` (:func:`record_models`) unless
    the run recorded its models already.  Returns the results written."""
    if isinstance(budget, ModelStats):
        budget = decide(budget, limit)
    if "model" not in run.config:
        record_models(run)
    results = {**results, "model_failures": budget.as_dict(), "complete": budget.complete}
    if budget.failed or budget.unparseable:
        report.sections.insert(0, budget_note(budget))
    if budget.complete:
        run.finish(results, report.render())
        return results
    run.finish(results, report.render(), status="failed")
    bad = budget.unparseable
    raise RunFailed(
        f"{budget.failed} of {budget.calls} model calls failed and {bad} "
        f"answer{'s' if bad != 1 else ''} could not be parsed (--max-failures allows "
        f"{budget.allowed} in all): {run.path} is marked failed and its metrics incomplete"
    )
