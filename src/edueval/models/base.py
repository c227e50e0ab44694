"""The protocol every backend implements, and the errors a backend raises to the shared layer.

A backend does exactly one thing: send one request once and translate the answer.  Retries,
caching, concurrency limits, timeouts' bookkeeping and the call log live in
:class:`~edueval.models.client.ModelClient`, once for all backends (as in inspect_ai's providers).
A backend tells the shared layer what went wrong by the exception it raises:

* :class:`TransientError` -- worth retrying (rate limit, 5xx, timeout, dropped connection, malformed
  body); ``retry_after`` carries the server's hint;
* :class:`RequestFailed` -- this request cannot succeed (e.g. HTTP 400); recorded as failed, no retry;
* :class:`~edueval.models.errors.ModelError` -- the backend cannot work at all; the run stops with
  one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from .types import ChatRequest, TokenLogprob

__all__ = ["Backend", "Reply", "TransientError", "RequestFailed"]


@dataclass
class Reply:
    """What a backend got back for one attempt."""

    text: str
    logprobs: list[TokenLogprob] | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    server: str | None = None


class TransientError(Exception):
    """A failure worth retrying.  ``kind`` is a short label counted in the statistics.

    Kinds used: ``"429"``, ``"5xx"`` (with the status in the message), ``"timeout"``,
    ``"connection"`` (dropped after connecting), ``"malformed"`` (a body that is not a valid
    completion) and ``"connect"`` (the connection could not be established).  ``"connect"`` before
    the backend has ever answered means a wrong URL or a server that is down: the shared layer then
    fails fast with :class:`~edueval.models.errors.ModelUnreachableError` instead of retrying.
    """

    def __init__(self, kind: str, message: str, *, retry_after: float | None = None) -> None:
        self.kind = kind
        self.retry_after = retry_after
        super().__init__(" ".join(message.split()))


class RequestFailed(Exception):
    """This request cannot succeed as sent (e.g. HTTP 400, a prompt longer than the context)."""

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        super().__init__(" ".join(message.split()))


@runtime_checkable
class Backend(Protocol):
    """One model provider.  Implementations: ``openai_compat.OpenAIBackend``, ``local.LocalBackend``.

    Attributes
    ----------
    name : the model spec as the user wrote it (``"local"``, ``"openai/gpt-4o-mini"``).
    model_id : identity used in cache keys (must change whenever answers could change): the model
        and where it runs -- the server identity, or the weights' SHA-256 (see
        :mod:`edueval.models.provenance`).
    serial : True when the backend can only run one call at a time (the embedded model); the
        client then answers calls first come, first served and sends a batch in
        :func:`~edueval.models.client.prefix_order` (prompts sharing a prefix one after another).
    """

    name: str
    serial: bool

    @property
    def model_id(self) -> str: ...

    def describe(self) -> str:
        """Where the model is (base URL(s), model file), for messages and ``calls.jsonl``."""
        ...

    async def generate(self, request: ChatRequest, timeout: float) -> Reply:
        """Send ``request`` once; raise :class:`TransientError`, :class:`RequestFailed` or
        :class:`~edueval.models.errors.ModelError` on failure."""
        ...

    async def aclose(self) -> None:
        """Release connections (called on the client's event loop)."""
        ...
