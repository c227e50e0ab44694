"""The shared layer in front of every backend: cache, concurrency, retries, timeouts, call log.

:class:`ModelClient` owns a private asyncio event loop running in a daemon thread.  Both the
synchronous API (:meth:`~ModelClient.complete`, :meth:`~ModelClient.complete_many`) and the async one
(:meth:`~ModelClient.acomplete`, :meth:`~ModelClient.acomplete_many`) submit work to that loop, so
the client works the same from scripts, from notebooks (which already run a loop) and from threads,
and the backend's HTTP connection pool lives on one loop for the client's whole life.

Per request, in this order:

1. the on-disk cache (unless ``no_cache``), keyed by the model *and the server identity*
   (:mod:`edueval.models.provenance`): a hit answers at once, no call is made;
2. an identical request already in flight is awaited rather than sent twice;
3. otherwise the backend is called under the concurrency limit (``max_connections``) with a
   per-attempt timeout; transient failures (429, 5xx, timeouts, dropped connections, malformed
   bodies) are retried with capped exponential backoff and jitter (:class:`RetryPolicy`);
4. a request that still fails (or meets an error nobody foresaw) comes back as
   ``ChatResult(ok=False, error=...)`` -- the run goes on;
   a backend that cannot work at all (401, unreachable server, unknown model) raises
   :class:`~edueval.models.errors.ModelError` instead;
5. every request, answered or not, is appended to ``calls.jsonl`` and counted in :meth:`stats`.

An answer that arrives but that the caller cannot read in the format its task needs (no letter,
no verdict, JSON without the required keys) is the caller's to judge: it calls :meth:`reject`,
which counts the answer as ``unparseable`` and deletes it from the cache, so a re-run asks again
instead of replaying it (and counts it again if the reply is the same).
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import contextlib
import dataclasses
import random
import threading
import time
from collections.abc import Sequence
from typing import Any

from ..progress import track
from .base import Backend, RequestFailed, TransientError
from .cache import ResponseCache
from .calllog import CallLog
from .errors import ModelError, ModelUnreachableError
from .provenance import model_provenance, note_logging_backend
from .retry import RetryPolicy
from .types import ChatRequest, ChatResult, ModelStats

__all__ = ["ModelClient", "prefix_order"]


def prefix_order(requests: Sequence[ChatRequest]) -> list[int]:
    """The requests' indices in lexicographic order of their conversations (message by message:
    role, then text), ties in input order.  Prompts that share a prefix then follow one another,
    longest shared prefixes next to each other (the depth-first order of their prefix tree), so a
    backend that keeps the previous call's evaluated tokens (the embedded model's KV cache)
    evaluates each distinct prefix once: e.g. the instructions and few-shot examples that every
    identification prompt of a ``malalgo run`` shares, whatever order the protocol builds its
    prompts in (issue 22)."""
    keys = [tuple((m["role"], m["content"]) for m in r.messages) for r in requests]
    return sorted(range(len(requests)), key=keys.__getitem__)


class _LoopThread:
    """An asyncio event loop running forever in a daemon thread."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()
        self._ready.wait()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(self._ready.set)
        self.loop.run_forever()

    def submit(self, coro: Any) -> cf.Future:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self) -> None:
        """Cancel what is still pending, shut the loop down cleanly, close it."""
        if self.loop.is_closed():
            return
        if self.loop.is_running():
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self._drain(), self.loop).result(timeout=10)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=10)
        if not self.loop.is_running():
            self.loop.close()

    async def _drain(self) -> None:
        me = asyncio.current_task()
        pending = [t for t in asyncio.all_tasks() if t is not me]
        for t in pending:
            t.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        await self.loop.shutdown_asyncgens()
        await self.loop.shutdown_default_executor()


class _Raised:
    """An exception carried as a value, so that no task ever ends with an unretrieved error."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def _unwrap(value: ChatResult | _Raised) -> ChatResult:
    if isinstance(value, _Raised):
        raise value.exc
    return value


def usable(request: ChatRequest, result: ChatResult) -> bool:
    """Whether an answer may be cached: a successful call with some text, which -- when the
    request asked for JSON or for free text ending in a JSON answer (``answer_json``) -- holds a
    complete JSON value.  An empty completion or JSON cut off by the token limit is kept out of
    the cache, so a re-run asks again instead of replaying it for good (it is still logged and
    counted as the run's answer)."""
    if not result.ok or not (result.text or "").strip():
        return False
    if request.wants_json or request.answer_json:
        from .jsonparse import parse_json_answer

        return parse_json_answer(result.text, expect=None) is not None
    return True


class ModelClient:
    """A chat model with caching, bounded concurrency, retries and a call log.

    Build it with :func:`edueval.models.get_model`; use it as a context manager (or call
    :meth:`close`) so that the log is closed and connections are released.

    Parameters
    ----------
    backend : the provider (see :mod:`edueval.models.base`).
    max_connections : requests in flight at once (an embedded model still runs one at a time).
    timeout : seconds allowed for one attempt.
    cache : the response cache, or ``None`` for no caching (``--no-cache``).
    log_path : ``calls.jsonl`` to append to (usually ``run_dir / "calls.jsonl"``), or ``None``.
    retry : the retry policy (default: 6 attempts, backoff from 0.5 s up to 30 s).
    """

    def __init__(
        self,
        backend: Backend,
        *,
        max_connections: int = 8,
        timeout: float = 60.0,
        cache: ResponseCache | None = None,
        log_path: Any = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be >= 1")
        if timeout <= 0:
            raise ValueError("timeout must be > 0")
        self.backend = backend
        self.max_connections = int(max_connections)
        self.timeout = float(timeout)
        self.cache = cache
        self.log = CallLog(log_path)
        if self.log.path is not None:  # the run layer finds what answered from its calls.jsonl
            note_logging_backend(self.log.path, backend, fresh=self.log.created)
        self.retry = retry or RetryPolicy()
        self._stats = ModelStats()
        self._stats_lock = threading.Lock()
        self._rng = random.Random()  # jitter only; never affects an answer
        self._answered = False  # has the backend ever answered? (unreachable -> fail fast)
        self._inflight: dict[str, asyncio.Future] = {}
        self._sem: asyncio.Semaphore | None = None
        self._loop: _LoopThread | None = None
        self._loop_lock = threading.Lock()
        self._closed = False

    # -- public API ---------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The model spec (``"local"``, ``"openai/<model>"``)."""
        return self.backend.name

    def describe(self) -> str:
        """Model spec and where it runs, e.g. ``openai/gpt-4o-mini at https://...``."""
        return self.backend.describe()

    def provenance(self) -> dict[str, Any]:
        """What answers: spec, backend, base URLs, weights (:func:`~.provenance.model_provenance`)."""
        return model_provenance(self.backend)

    def complete(self, request: ChatRequest) -> ChatResult:
        """Answer one request (blocking).  Never raises for a failed call -- see ``ok``/``error``;
        raises :class:`~edueval.models.errors.ModelError` when the backend cannot work at all."""
        return self.complete_many([request])[0]

    def complete_many(
        self, requests: Sequence[ChatRequest], progress: str | None = None
    ) -> list[ChatResult]:
        """Answer many requests concurrently (up to ``max_connections`` at once), in input order.

        ``progress`` is the label of a progress bar shown on a terminal.  On a
        :class:`~edueval.models.errors.ModelError` or Ctrl-C the requests not yet answered are
        cancelled and the exception propagates; everything answered so far is in the cache and
        the log, so a re-run resumes.
        """
        loop = self._ensure_loop()
        # set when the caller gives up (Ctrl-C, a fatal error): no call of this batch leaves after
        # that, so a re-run repeats only the calls that were in flight at that moment
        stop = threading.Event()
        futures = self._submit_all(loop, requests, stop)
        index = {id(f): i for i, f in enumerate(futures)}
        results: list[ChatResult | None] = [None] * len(futures)
        try:
            done_iter = cf.as_completed(futures)
            if progress:
                done_iter = track(done_iter, progress, total=len(futures))
            for fut in done_iter:
                results[index[id(fut)]] = _unwrap(fut.result())
        except BaseException:
            stop.set()  # before cancelling: a connection freed meanwhile must not start another
            for f in futures:
                f.cancel()
            raise
        return results  # type: ignore[return-value]

    def _submit_all(
        self, loop: _LoopThread, requests: Sequence[ChatRequest], stop: threading.Event
    ) -> list[cf.Future]:
        """Submit every request; the futures come back in input order.  A serial backend answers
        calls first come, first served, so they are submitted in :func:`prefix_order`."""
        order = prefix_order(requests) if self.backend.serial else range(len(requests))
        futures: list[cf.Future | None] = [None] * len(requests)
        for i in order:
            futures[i] = loop.submit(self._guarded(requests[i], stop=stop))
        return futures  # type: ignore[return-value]

    async def acomplete(self, request: ChatRequest) -> ChatResult:
        """Async :meth:`complete`, usable from any event loop."""
        fut = self._ensure_loop().submit(self._guarded(request))
        return _unwrap(await asyncio.wrap_future(fut))

    async def acomplete_many(self, requests: Sequence[ChatRequest]) -> list[ChatResult]:
        """Async :meth:`complete_many` (no progress bar), results in input order."""
        loop = self._ensure_loop()
        stop = threading.Event()
        futs = [asyncio.wrap_future(f) for f in self._submit_all(loop, requests, stop)]
        try:
            return [_unwrap(v) for v in await asyncio.gather(*futs)]
        except BaseException:
            stop.set()
            for f in futs:
                f.cancel()
            raise

    def check(self, *, max_tokens: int = 1) -> str:
        """Make one tiny uncached call; return a one-line 'ok' message or raise ModelError.

        A call that fails after the retries (e.g. repeated 500s) is also raised as ModelError here,
        since the point of a check is to know whether the backend answers.
        """
        req = ChatRequest.user("Say OK.", max_tokens=max_tokens, tag="models-check")
        t0 = time.perf_counter()
        res = _unwrap(self._ensure_loop().submit(self._guarded(req, use_cache=False)).result())
        if not res.ok:
            raise ModelError(f"{self.describe()} did not answer: {res.error}")
        return f"ok: {self.describe()} answered in {time.perf_counter() - t0:.2f} s"

    def reject(self, request: ChatRequest, *, count: bool = True) -> None:
        """The answer to ``request`` could not be read in the format the caller's task needs.

        It is deleted from the cache (a re-run asks again instead of replaying it for good) and,
        with ``count`` (the default; ``False`` for a reply the caller will ask again for), counted
        in :attr:`ModelStats.unparseable`, which shares the run's ``--max-failures`` budget with
        the failed calls (:func:`~edueval.models.budget.decide`)."""
        if count:
            self._count(unparseable=1)
        if self.cache is not None and not self._closed:
            self.cache.delete(request.cache_key(self.backend.model_id))

    def stats(self) -> ModelStats:
        """A snapshot of the counters (calls, cache hits, retries, failures, tokens)."""
        with self._stats_lock:
            return dataclasses.replace(self._stats, errors=dict(self._stats.errors))

    def close(self) -> None:
        """Close connections and the call log.  The client cannot be used afterwards."""
        if self._closed:
            return
        self._closed = True
        if self._loop is not None:
            # closing must never hide the real outcome of a run
            with contextlib.suppress(Exception):
                self._loop.submit(self.backend.aclose()).result(timeout=10)
            self._loop.stop()
        self.log.close()
        if self.cache is not None:
            self.cache.close()

    def __enter__(self) -> ModelClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # best effort; prefer close() / with
        try:
            if not self._closed and self._loop is not None and not self._loop.loop.is_closed():
                self._loop.loop.call_soon_threadsafe(self._loop.loop.stop)
        except Exception:
            pass

    # -- internals ----------------------------------------------------------------------------

    def _ensure_loop(self) -> _LoopThread:
        if self._closed:
            raise RuntimeError("this ModelClient is closed")
        with self._loop_lock:
            if self._loop is None:
                self._loop = _LoopThread(f"edueval-models-{self.name}")
            return self._loop

    def _count(self, **deltas: int | float) -> None:
        with self._stats_lock:
            for k, v in deltas.items():
                setattr(self._stats, k, getattr(self._stats, k) + v)

    def _count_error(self, kind: str) -> None:
        with self._stats_lock:
            self._stats.errors[kind] = self._stats.errors.get(kind, 0) + 1

    async def _guarded(
        self, request: ChatRequest, *, use_cache: bool = True, stop: threading.Event | None = None
    ) -> ChatResult | _Raised:
        try:
            return await self._run_one(request, use_cache=use_cache, stop=stop)
        except Exception as exc:  # raised again by the caller, in the caller's thread
            return _Raised(exc)

    async def _run_one(
        self, request: ChatRequest, *, use_cache: bool = True, stop: threading.Event | None = None
    ) -> ChatResult:
        key = request.cache_key(self.backend.model_id)
        use_cache = use_cache and self.cache is not None
        if use_cache:
            hit = self.cache.get(key)  # type: ignore[union-attr]
            if hit is not None:
                self._finish(key, request, hit, server="cache", retry_errors=[], elapsed=0.0)
                return hit
            leader = self._inflight.get(key)
            if leader is not None:  # the same request is being answered right now
                res = await asyncio.shield(leader)
                res = dataclasses.replace(res, cached=res.ok, attempts=0, latency_s=0.0)
                self._finish(key, request, res, server="in-flight", retry_errors=[], elapsed=0.0)
                return res
            fut: asyncio.Future = asyncio.get_running_loop().create_future()
            fut.add_done_callback(_consume_exception)
            self._inflight[key] = fut
        t0 = time.perf_counter()
        try:
            res, server, retry_errors = await self._call_with_retries(request, stop)
        except BaseException as exc:
            if use_cache:
                self._inflight.pop(key, None)
                if isinstance(exc, asyncio.CancelledError):
                    fut.cancel()
                else:
                    fut.set_exception(exc)
            raise
        if use_cache:
            if usable(request, res):
                self.cache.put(key, self.backend.model_id, res)  # type: ignore[union-attr]
            self._inflight.pop(key, None)
            fut.set_result(res)
        self._finish(
            key, request, res, server=server, retry_errors=retry_errors,
            elapsed=time.perf_counter() - t0,
        )  # fmt: skip
        return res

    def _finish(
        self,
        key: str,
        request: ChatRequest,
        res: ChatResult,
        *,
        server: str | None,
        retry_errors: list[str],
        elapsed: float,
    ) -> None:
        pt, ct = res.prompt_tokens or 0, res.completion_tokens or 0
        if res.cached:
            self._count(calls=1, cache_hits=1, cached_prompt_tokens=pt, cached_completion_tokens=ct)
        else:
            self._count(
                calls=1,
                failures=0 if res.ok else 1,
                prompt_tokens=pt,
                completion_tokens=ct,
                latency_s=res.latency_s,
            )
        self.log.write(
            model=self.name,
            server=server,
            key=key,
            request=request,
            result=res,
            retry_errors=retry_errors,
            elapsed_s=elapsed,
        )

    def _semaphore(self) -> asyncio.Semaphore:
        if self._sem is None:
            self._sem = asyncio.Semaphore(1 if self.backend.serial else self.max_connections)
        return self._sem

    async def _call_with_retries(
        self, request: ChatRequest, stop: threading.Event | None = None
    ) -> tuple[ChatResult, str | None, list[str]]:
        errors: list[str] = []
        attempt = 0
        while True:
            attempt += 1
            self._count(attempts=1, retries=1 if attempt > 1 else 0)
            t0 = time.perf_counter()
            try:
                async with self._semaphore():
                    if stop is not None and stop.is_set():  # given up while this one waited
                        raise asyncio.CancelledError
                    t0 = time.perf_counter()
                    if self.backend.serial:  # cannot be interrupted; the backend keeps time
                        reply = await self.backend.generate(request, self.timeout)
                    else:
                        reply = await asyncio.wait_for(
                            self.backend.generate(request, self.timeout), self.timeout + 5.0
                        )
            except (TransientError, TimeoutError) as exc:
                if isinstance(exc, TransientError):
                    kind, msg, hint = exc.kind, str(exc), exc.retry_after
                else:
                    kind, msg, hint = "timeout", f"no answer within {self.timeout:g} s", None
                self._count_error(kind)
                errors.append(f"{kind}: {msg}")
                if kind == "connect" and not self._answered:
                    raise ModelUnreachableError(f"cannot reach {self.name}: {msg}") from None
                if attempt >= self.retry.max_attempts:
                    return (
                        self._failed(f"{msg} (failed after {attempt} attempts)", attempt),
                        None,
                        errors,
                    )
                await asyncio.sleep(self.retry.delay(attempt, hint, self._rng))
                continue
            except RequestFailed as exc:
                self._count_error(exc.kind)
                errors.append(f"{exc.kind}: {exc}")
                return self._failed(str(exc), attempt), None, errors
            except ModelError:
                raise
            except Exception as exc:  # unforeseen: this item fails, the run goes on, it is logged
                msg = " ".join(f"{type(exc).__name__}: {exc}".split())
                self._count_error("unexpected")
                errors.append(f"unexpected: {msg}")
                return self._failed(msg, attempt), None, errors
            self._answered = True
            result = ChatResult(
                text=reply.text,
                ok=True,
                logprobs=reply.logprobs,
                prompt_tokens=reply.prompt_tokens,
                completion_tokens=reply.completion_tokens,
                latency_s=time.perf_counter() - t0,
                cached=False,
                attempts=attempt,
                finish_reason=reply.finish_reason,
            )
            return result, reply.server, errors

    def _failed(self, error: str, attempts: int) -> ChatResult:
        return ChatResult(text="", ok=False, error=error, attempts=attempts)


def _consume_exception(fut: asyncio.Future) -> None:
    """Mark a leader future's exception as retrieved (no 'never retrieved' warnings)."""
    if not fut.cancelled():
        fut.exception()
