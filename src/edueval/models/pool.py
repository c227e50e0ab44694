"""Several OpenAI-compatible servers (replicas of one model) behind one backend.

:class:`EndpointPool` is a backend like any other (see :mod:`edueval.models.base`), so the shared
layer in front of it -- cache, retries, call log -- is the one every backend has; it enters through
:func:`edueval.models.get_model` (several ``--base-url`` or an ``--endpoints`` file) and nowhere
else.  What it adds:

* **spread by free capacity**: each endpoint has its own connection limit; an attempt goes to the
  endpoint in service with the most free slots (ties: the first listed), and waits when every
  endpoint in service is full.  The client's total concurrency is the sum of the limits;
* **failover**: an attempt that failed transiently on one endpoint is retried (by the shared layer,
  and counted as a retry) on another one when another is in service;
* **set aside, then probed**: ``fail_threshold`` consecutive transient failures (refused or dropped
  connections, 5xx, timeouts, malformed bodies; not 429s) set an endpoint aside for ``cooldown``
  seconds; then one health probe (``GET /models``) brings it back, or sets it aside again for
  twice as long (up to ``max_cooldown``);
* **unusable endpoints out**: an endpoint that cannot work at all (HTTP 401/403, 404 for the
  model, no quota) is out for the rest of the run while the others serve; when it is the last
  one, its error stops the run as a lone server's would;
* **nothing to serve**: when every endpoint is set aside, an attempt fails at once with a message
  naming them, so the run's ``--max-failures`` budget decides what happens;
* one cache identity for the whole pool, never an endpoint's, since its replicas serve one model:
  the cache key holds ``openai/<model>@pool:<cache_id>`` when the endpoints file names a
  ``cache_id``, else ``openai/<model>@<the sorted normalised URLs>`` (see
  :mod:`edueval.models.provenance`).  All endpoints share cached answers; a server outside the
  pool, even one giving its model the same name, shares none.  ``calls.jsonl`` records in
  ``server`` the endpoint that answered.

Endpoints files (``--endpoints FILE``) are YAML: a list of mappings, or
``{endpoints: [...], cache_id: ...}``::

    cache_id: llama3-8b-vllm     # optional: the pool's cache identity (default: its sorted URLs)
    endpoints:
      - url: http://gpu1:8000/v1
        max_connections: 16
      - url: http://gpu2:8000/v1
        model: llama-3-8b        # the name this server gives the model (default: --model's)
        key_env: GPU2_KEY        # variable holding its API key (default: --api-key-env)
        max_connections: 32      # default: --max-connections

Without ``cache_id`` adding or removing a replica starts a new cache identity (every request is
asked again); with it the pool keeps its cached answers as its replicas change -- so give one only
to a pool whose replicas all serve the same weights.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .base import Reply, RequestFailed, TransientError
from .errors import ModelError
from .provenance import normalise_base_url, servers_identity
from .types import ChatRequest

__all__ = ["Endpoint", "EndpointPool", "load_endpoints", "read_endpoints"]

_FAILURE_KINDS = {"connect", "connection", "5xx", "timeout", "malformed"}
_KEYS = {"url", "model", "key_env", "max_connections"}


@dataclass(frozen=True)
class Endpoint:
    """One server of a pool: base URL, model name there, key variable, connection limit."""

    url: str
    model: str | None = None
    key_env: str | None = None
    max_connections: int | None = None


@dataclass
class _State:
    """Bookkeeping of one endpoint: its backend, slots in use, health."""

    index: int
    url: str
    backend: Any
    limit: int
    busy: int = 0
    failures: int = 0  # consecutive transient failures
    aside_until: float | None = None  # set aside until this monotonic time (None: in service)
    cooldown: float = 0.0
    probing: bool = False
    last_error: str = ""
    answered: int = field(default=0)

    @property
    def free(self) -> int:
        return self.limit - self.busy


class EndpointPool:
    """A backend spreading attempts over several OpenAI-compatible endpoints.

    Parameters
    ----------
    model : the model spec's name (``openai/<model>``): the default server name.
    endpoints : the endpoints (at least one).
    cache_id : the pool's cache identity (an endpoints file's ``cache_id``); default: the sorted
        normalised URLs of its endpoints.
    api_key_env : default key variable for endpoints that name none.
    max_connections : default connection limit for endpoints that give none.
    fail_threshold : consecutive transient failures that set an endpoint aside.
    cooldown : seconds an endpoint stays aside before its first probe (doubles after a failed
        probe, up to ``max_cooldown``).
    """

    serial = False

    def __init__(
        self,
        model: str,
        endpoints: Sequence[Endpoint],
        *,
        api_key_env: str = "OPENAI_API_KEY",
        max_connections: int = 8,
        cache_id: str | None = None,
        fail_threshold: int = 3,
        cooldown: float = 5.0,
        max_cooldown: float = 60.0,
    ) -> None:
        from .openai_compat import OpenAIBackend

        if not endpoints:
            raise ModelError("an endpoint pool needs at least one endpoint")
        self.model = model
        self.name = f"openai/{model}"
        self.cache_id = cache_id
        self.cache_identity = servers_identity([ep.url for ep in endpoints], cache_id)
        self.model_id = f"{self.name}@{self.cache_identity}"
        self.fail_threshold = int(fail_threshold)
        self.cooldown = float(cooldown)
        self.max_cooldown = float(max_cooldown)
        self.states = [
            _State(
                index=i,
                url=ep.url.rstrip("/"),
                backend=OpenAIBackend(
                    ep.model or model, base_url=ep.url, api_key_env=ep.key_env or api_key_env
                ),
                limit=int(ep.max_connections or max_connections),
            )
            for i, ep in enumerate(endpoints)
        ]
        self._cond: asyncio.Condition | None = None
        self._avoid: dict[int, tuple[ChatRequest, int]] = {}
        self._probes: set[asyncio.Task] = set()

    @property
    def max_connections(self) -> int:
        """Total concurrency: the sum of the endpoints' limits."""
        return sum(s.limit for s in self.states)

    def provenance(self) -> dict[str, Any]:
        """What answers (see :func:`~edueval.models.provenance.model_provenance`)."""
        return {
            "spec": self.name,
            "backend": "openai-compatible",
            "model": self.model,
            "base_urls": [normalise_base_url(s.url) for s in self.states],
            "pool": {
                "cache_id": self.cache_id,
                "endpoints": [
                    {
                        "url": normalise_base_url(s.url),
                        "model": s.backend.model,
                        "api_key_env": s.backend.api_key_env,
                        "max_connections": s.limit,
                    }
                    for s in self.states
                ],
            },
            "cache_identity": self.model_id,
        }

    def describe(self) -> str:
        where = ", ".join(f"{s.url} ({s.limit})" for s in self.states)
        return f"{self.name} at {len(self.states)} endpoints: {where}"

    # -- one attempt ----------------------------------------------------------------------------

    async def generate(self, request: ChatRequest, timeout: float) -> Reply:
        state = await self._acquire(self._avoided(request))
        try:
            reply = await state.backend.generate(request, timeout)
        except TransientError as exc:
            raise self._failed(state, request, exc) from None
        except ModelError as exc:
            raise self._unusable(state, request, exc) from None
        finally:
            await self._release(state)
        self._succeeded(state)
        return reply

    def _avoided(self, request: ChatRequest) -> int | None:
        """The endpoint this request's previous attempt failed on (asked once per attempt)."""
        entry = self._avoid.pop(id(request), None)
        return entry[1] if entry is not None and entry[0] is request else None

    async def _acquire(self, avoid: int | None) -> _State:
        cond = self._condition()
        async with cond:
            while True:
                self._start_due_probes()
                state = self._pick(avoid)
                if state is not None:
                    state.busy += 1
                    return state
                if not self._in_service() and not any(s.probing for s in self.states):
                    raise RequestFailed("no endpoint", self._all_aside_message())
                await cond.wait()

    def _pick(self, avoid: int | None) -> _State | None:
        """In service with free slots, most free first, ties by order; ``avoid`` only if alone."""
        serving = self._in_service()
        if avoid is not None and any(s.index != avoid for s in serving):
            serving = [s for s in serving if s.index != avoid]
        open_ = [s for s in serving if s.free > 0]
        if not open_:
            return None
        return max(open_, key=lambda s: (s.free, -s.index))

    def _in_service(self) -> list[_State]:
        return [s for s in self.states if s.aside_until is None]

    async def _release(self, state: _State) -> None:
        cond = self._condition()
        async with cond:
            state.busy -= 1
            cond.notify_all()

    def _succeeded(self, state: _State) -> None:
        state.failures = 0
        state.answered += 1

    def _failed(self, state: _State, request: ChatRequest, exc: TransientError) -> TransientError:
        """Record a failed attempt; the error the shared layer sees (it retries it)."""
        state.last_error = f"{exc.kind}: {exc}"
        if exc.kind in _FAILURE_KINDS:
            state.failures += 1
            if state.failures >= self.fail_threshold and state.aside_until is None:
                self._set_aside(state, self.cooldown)
        self._avoid[id(request)] = (request, state.index)
        if exc.kind == "connect" and self._in_service():
            # another endpoint can answer: not the "server unreachable" of a lone backend
            return TransientError("connect-failover", str(exc), retry_after=exc.retry_after)
        return exc

    def _unusable(self, state: _State, request: ChatRequest, exc: ModelError) -> Exception:
        """An endpoint that cannot work at all (a rejected key, no such model there, no quota)
        is taken out for the rest of the run, never probed; while another endpoint serves, the
        attempt is retried there.  The last endpoint left raises the error, as a lone server
        does, and the run stops with it."""
        state.last_error = f"unusable: {' '.join(str(exc).split())}"
        state.aside_until = math.inf
        if not self._in_service():
            return exc
        self._avoid[id(request)] = (request, state.index)
        return TransientError("endpoint-unusable", state.last_error)

    def _set_aside(self, state: _State, seconds: float) -> None:
        state.cooldown = min(max(seconds, 0.0), self.max_cooldown)
        state.aside_until = time.monotonic() + state.cooldown
        # waiters are woken by the release (or probe) that follows, and re-pick or fail

    def _all_aside_message(self) -> str:
        parts = "; ".join(f"{s.url}: {s.last_error or 'failed its probe'}" for s in self.states)
        return f"all {len(self.states)} endpoints are set aside after repeated errors ({parts})"

    # -- health probes ----------------------------------------------------------------------------

    def _start_due_probes(self) -> None:
        now = time.monotonic()
        for s in self.states:
            if s.aside_until is not None and not s.probing and now >= s.aside_until:
                s.probing = True
                task = asyncio.get_running_loop().create_task(self._probe(s))
                self._probes.add(task)
                task.add_done_callback(self._probes.discard)

    async def _probe(self, state: _State) -> None:
        ok = await state.backend.probe(timeout=min(10.0, max(1.0, state.cooldown)))
        cond = self._condition()
        async with cond:
            state.probing = False
            if ok:
                state.aside_until, state.failures = None, 0
            else:
                state.last_error = state.last_error or "health probe failed"
                self._set_aside(state, 2 * max(state.cooldown, 0.1))
            cond.notify_all()

    def _condition(self) -> asyncio.Condition:
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    async def aclose(self) -> None:
        for task in list(self._probes):
            task.cancel()
        for s in self.states:
            await s.backend.aclose()


# -- endpoints files ------------------------------------------------------------------------------


def load_endpoints(path: str | Path) -> list[Endpoint]:
    """Read an endpoints YAML file (see the module docstring); bad content is an InputError."""
    return read_endpoints(path)[0]


def read_endpoints(path: str | Path) -> tuple[list[Endpoint], str | None]:
    """The endpoints of an endpoints YAML file and its ``cache_id`` (``None`` when it names none);
    bad content is an InputError."""
    from ..io import InputError, load_yaml, read_text

    p = Path(path)
    text = read_text(p)  # a folder, FIFO or device refused before opening
    data = load_yaml(text, file=p)
    cache_id = None
    if isinstance(data, Mapping) and "endpoints" in data:
        unknown = sorted(set(map(str, data)) - {"endpoints", "cache_id"})
        if unknown:
            raise InputError(f"unknown key {unknown[0]!r} (expected endpoints and, optionally, "
                             "cache_id)", file=p)  # fmt: skip
        cache_id = data.get("cache_id")
        if cache_id is not None and (
            isinstance(cache_id, bool) or not isinstance(cache_id, str | int)
            or not str(cache_id).strip()
        ):  # fmt: skip
            raise InputError(f"cache_id must be a non-empty string, got {cache_id!r}", file=p)
        cache_id = None if cache_id is None else str(cache_id).strip()
        data = data["endpoints"]
    if not isinstance(data, list) or not data:
        raise InputError("expected a list of endpoints ({url, model, key_env, max_connections})",
                         file=p)  # fmt: skip
    return [_endpoint(entry, i + 1, p) for i, entry in enumerate(data)], cache_id


def _endpoint(entry: Any, n: int, path: Path) -> Endpoint:
    from ..io import InputError

    def bad(what: str) -> InputError:
        return InputError(f"endpoint {n}: {what}", file=path)

    if isinstance(entry, str):
        entry = {"url": entry}
    if not isinstance(entry, Mapping):
        raise bad("expected a mapping with url, model, key_env, max_connections")
    unknown = sorted(set(map(str, entry)) - _KEYS)
    if unknown:
        raise bad(f"unknown key {unknown[0]!r} (expected url, model, key_env, max_connections)")
    url = entry.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise bad(f"url must be an http:// or https:// base URL, got {url!r}")
    limit = entry.get("max_connections")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise bad(f"max_connections must be a whole number >= 1, got {limit!r}")
    for key in ("model", "key_env"):
        value = entry.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise bad(f"{key} must be a non-empty string, got {value!r}")
    return Endpoint(url=url, model=entry.get("model"), key_env=entry.get("key_env"),
                    max_connections=limit)  # fmt: skip
