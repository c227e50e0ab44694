"""``calls.jsonl``: one JSON line per request a run made, appended as the answers come in.

Each line holds: ``ts`` (UTC time), ``seq`` (order of completion in this client), ``model``,
``server`` (base URL or model file that answered), ``tag`` (the caller's label), ``key`` (cache key),
``request`` (messages and generation parameters), ``response`` (text, logprobs, finish reason),
``ok``, ``error``, ``cached``, ``attempts``, ``latency_s`` (seconds of the attempt that answered),
``elapsed_s`` (seconds from the first attempt to the result, retries and waits included),
``prompt_tokens``, ``completion_tokens`` and ``retry_errors`` (the errors met on the way, in order).
``server`` is ``"cache"`` for a cache hit and ``"in-flight"`` for a request answered by an identical
one that was being sent at the same time.
Lines are flushed one by one, so an interrupted run keeps the record of every finished call.
"""

from __future__ import annotations

import datetime as _dt
import json
import threading
from pathlib import Path
from typing import Any

from .types import ChatRequest, ChatResult

__all__ = ["CallLog", "read_calls"]


class CallLog:
    """Appends call records to a JSONL file (thread-safe).  ``path=None`` logs nothing."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path is not None else None
        self._lock = threading.Lock()
        self._fh = None
        self._seq = 0
        self.created = False  # whether this log created its file (rather than appending to one)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.created = not self.path.exists()
            self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def write(
        self,
        *,
        model: str,
        server: str | None,
        key: str,
        request: ChatRequest,
        result: ChatResult,
        retry_errors: list[str],
        elapsed_s: float = 0.0,
    ) -> None:
        if self._fh is None:
            return
        with self._lock:
            self._seq += 1
            record: dict[str, Any] = {
                "ts": _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds"),
                "seq": self._seq,
                "model": model,
                "server": server,
                "tag": request.tag,
                "key": key,
                "request": {"messages": list(request.messages), **request.params()},
                "response": {
                    "text": result.text,
                    "finish_reason": result.finish_reason,
                    "logprobs": None
                    if result.logprobs is None
                    else [t.to_json() for t in result.logprobs],
                },
                "ok": result.ok,
                "error": result.error,
                "cached": result.cached,
                "attempts": result.attempts,
                "latency_s": round(result.latency_s, 6),
                "elapsed_s": round(elapsed_s, 6),
                "prompt_tokens": result.prompt_tokens,
                "completion_tokens": result.completion_tokens,
                "retry_errors": retry_errors,
            }
            self._fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            self._fh.flush()

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None


def read_calls(path: str | Path) -> list[dict[str, Any]]:
    """Read a ``calls.jsonl`` back (for reports and tests)."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
