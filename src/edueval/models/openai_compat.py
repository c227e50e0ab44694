"""``openai/<model>``: any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama,
llama.cpp server, LM Studio, ...) through the ``openai`` SDK.

One attempt per :meth:`OpenAIBackend.generate`: the SDK's own retries are switched off
(``max_retries=0``) so that retries are done -- and counted -- once, in the shared layer.  Several
base URLs (replicas of one model) are used in turn, round-robin, attempt by attempt; they share one
cache identity, the sorted list of their URLs.  The cache key holds the server identity (see
:mod:`edueval.models.provenance`), so two servers that give their models the same name never
answer for each other.  (:func:`get_model` sends several URLs to
:class:`~edueval.models.pool.EndpointPool` instead, which spreads calls by free capacity and sets
failing servers aside.)
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
from collections.abc import Sequence
from typing import Any

from ..extras import require
from .base import Reply, RequestFailed, TransientError
from .errors import ModelAuthError, ModelConfigError
from .provenance import normalise_base_url, servers_identity
from .types import ChatRequest, TokenLogprob

__all__ = ["OpenAIBackend", "NO_KEY"]

NO_KEY = "sk-no-key-required"
"""API key sent to a server at an explicit ``--base-url`` when the key variable is not set."""

_DEFAULT_URL = "https://api.openai.com/v1"


def _import_openai() -> Any:
    return require("openai", "llm", "the openai/<model> backend")


class OpenAIBackend:
    """Chat completions from an OpenAI-compatible server.

    Parameters
    ----------
    model : the server's model name (the part after ``openai/``).
    base_url : one URL or several (round-robin); default ``$OPENAI_BASE_URL`` or OpenAI's API.
    api_key_env : environment variable holding the API key.  Without it, OpenAI's own API is an
        error; a server at an explicit ``base_url`` gets a dummy key (local servers need none).
    """

    serial = False

    def __init__(
        self,
        model: str,
        *,
        base_url: str | Sequence[str] | None = None,
        api_key_env: str = "OPENAI_API_KEY",
    ) -> None:
        if not model:
            raise ModelConfigError(
                "model spec 'openai/' needs a model name, e.g. openai/gpt-4o-mini"
            )
        self.model = model
        self.name = f"openai/{model}"
        urls = _split_urls(base_url)
        explicit = bool(urls)
        if not urls:
            env_url = os.environ.get("OPENAI_BASE_URL")
            urls = [env_url] if env_url else [_DEFAULT_URL]
            explicit = bool(env_url)
        self.base_urls = [u.rstrip("/") for u in urls]
        # the cache key's identity: the model at these servers (never the key, query or password)
        self.cache_identity = servers_identity(self.base_urls)
        self.model_id = f"{self.name}@{self.cache_identity}"
        self.api_key_env = api_key_env
        key = os.environ.get(api_key_env) or None
        if key is None and not explicit:
            raise ModelConfigError(
                f"no API key for {self.name}: set the environment variable {api_key_env} "
                "(or give --base-url for a server that needs no key)"
            )
        self._key = key or NO_KEY
        self._key_given = key is not None
        self._clients: list[Any] | None = None
        self._turn = itertools.count()

    def describe(self) -> str:
        where = self.base_urls[0] if len(self.base_urls) == 1 else ", ".join(self.base_urls)
        return f"{self.name} at {where}"

    def provenance(self) -> dict[str, Any]:
        """What answers (see :func:`~edueval.models.provenance.model_provenance`)."""
        return {
            "spec": self.name,
            "backend": "openai-compatible",
            "model": self.model,
            "base_urls": [normalise_base_url(u) for u in self.base_urls],
            "api_key_env": self.api_key_env,
            "cache_identity": self.model_id,
        }

    def _get_clients(self) -> list[Any]:
        if self._clients is None:
            openai = _import_openai()
            self._clients = [
                openai.AsyncOpenAI(api_key=self._key, base_url=u, max_retries=0)
                for u in self.base_urls
            ]
        return self._clients

    def _params(self, request: ChatRequest, timeout: float) -> dict[str, Any]:
        kw: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "timeout": timeout,
        }
        if request.stop:
            kw["stop"] = list(request.stop)
        if request.seed is not None:
            kw["seed"] = request.seed
        if request.json_schema is not None:
            kw["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": dict(request.json_schema)},
            }
        elif request.json_mode:
            kw["response_format"] = {"type": "json_object"}
        if request.top_logprobs is not None:
            kw["logprobs"] = True
            if request.top_logprobs > 0:
                kw["top_logprobs"] = request.top_logprobs
        return kw

    async def generate(self, request: ChatRequest, timeout: float) -> Reply:
        openai = _import_openai()
        clients = self._get_clients()
        i = next(self._turn) % len(clients)
        url = self.base_urls[i]
        try:
            resp = await clients[i].chat.completions.create(**self._params(request, timeout))
        except openai.APITimeoutError:
            raise TransientError("timeout", f"no answer from {url} within {timeout:g} s") from None
        except openai.APIConnectionError as exc:
            kind = "connect" if _is_connect_failure(exc) else "connection"
            raise TransientError(kind, f"{url}: {_cause_text(exc)}") from None
        except openai.APIStatusError as exc:
            raise self._status_error(exc, url) from None
        except openai.APIResponseValidationError as exc:
            raise TransientError("malformed", f"{url}: unexpected response: {exc}") from None
        except ValueError as exc:  # JSONDecodeError from a truncated body, pydantic errors
            raise TransientError("malformed", f"{url}: malformed response body ({exc})") from None
        return _reply(resp, url)

    async def probe(self, timeout: float = 5.0) -> bool:
        """Health check of the first base URL: whether ``GET /models`` answers."""
        try:
            await self._get_clients()[0].models.list(timeout=timeout)
        except Exception:
            return False
        return True

    def _status_error(self, exc: Any, url: str) -> Exception:
        status = int(getattr(exc, "status_code", 0) or 0)
        detail = _error_message(exc)
        if status in (401, 403):
            how = (
                f"the key in ${self.api_key_env}"
                if self._key_given
                else f"no key (${self.api_key_env} is not set)"
            )
            return ModelAuthError(f"{url} rejected {how}: HTTP {status} {detail}")
        if status == 404:
            return ModelConfigError(
                f"{url} answered HTTP 404 for model '{self.model}': {detail} "
                "(check the model name and --base-url)"
            )
        if status == 429:
            if "insufficient_quota" in detail or _error_code(exc) == "insufficient_quota":
                return ModelAuthError(f"{url}: HTTP 429 insufficient quota: {detail}")
            return TransientError("429", f"HTTP 429 {detail}", retry_after=_retry_after(exc))
        if status >= 500 or status in (408, 409):
            return TransientError(
                "5xx" if status >= 500 else str(status),
                f"HTTP {status} {detail}",
                retry_after=_retry_after(exc),
            )
        return RequestFailed(str(status), f"HTTP {status} {detail}")

    async def aclose(self) -> None:
        for c in self._clients or []:
            with contextlib.suppress(Exception):
                await c.close()
        self._clients = None


def _split_urls(base_url: str | Sequence[str] | None) -> list[str]:
    if base_url is None:
        return []
    items = [base_url] if isinstance(base_url, str) else list(base_url)
    out: list[str] = []
    for item in items:
        out.extend(u.strip() for u in str(item).split(",") if u.strip())
    return out


def _is_connect_failure(exc: BaseException) -> bool:
    """True when the TCP/TLS connection could not be established at all (refused, DNS, ...)."""
    seen = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        name = type(e).__name__
        if name in {"ConnectError", "ConnectionRefusedError", "gaierror"}:
            return True
        e = e.__cause__ or e.__context__
    return False


def _cause_text(exc: BaseException) -> str:
    cause = exc.__cause__
    text = str(cause) if cause is not None and str(cause) else str(exc)
    return " ".join(text.split()) or type(exc).__name__


def _error_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return " ".join(str(inner["message"]).split())
        if isinstance(inner, str):
            return inner
    return " ".join(str(getattr(exc, "message", exc)).split())


def _error_code(exc: Any) -> str | None:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            code = inner.get("code") or inner.get("type")
            return str(code) if code else None
    return None


def _retry_after(exc: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds form), if present."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue  # an HTTP-date: ignore, the backoff applies
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
    return None


def _finite(x: Any) -> float:
    v = float(x)
    return v if math.isfinite(v) else -9999.0


def _reply(resp: Any, url: str) -> Reply:
    choices = getattr(resp, "choices", None)
    if isinstance(resp, str) or not choices:
        raise TransientError("malformed", f"{url}: response without choices")
    choice = choices[0]
    message = getattr(choice, "message", None)
    if message is None:
        raise TransientError("malformed", f"{url}: response without a message")
    logprobs = None
    lp = getattr(choice, "logprobs", None)
    content = getattr(lp, "content", None) if lp is not None else None
    if content is not None:
        logprobs = [
            TokenLogprob(
                token=t.token,
                logprob=_finite(t.logprob),
                top={a.token: _finite(a.logprob) for a in (t.top_logprobs or [])},
            )
            for t in content
        ]
    usage = getattr(resp, "usage", None)
    return Reply(
        text=message.content or "",
        logprobs=logprobs,
        prompt_tokens=getattr(usage, "prompt_tokens", None) if usage else None,
        completion_tokens=getattr(usage, "completion_tokens", None) if usage else None,
        finish_reason=getattr(choice, "finish_reason", None),
        server=url,
    )
