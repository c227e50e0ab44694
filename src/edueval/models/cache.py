"""On-disk response cache: one SQLite file shared by every run, process and thread.

The key is :meth:`ChatRequest.cache_key` -- a SHA-256 over the model identity, the messages and the
generation parameters -- so a re-run of the same work makes no model calls, and an interrupted run
resumes where it stopped.  The model identity is the backend's ``model_id``: the model *and the
server* (normalised base URL; one identity per pool of replicas; the weights' SHA-256 for the
embedded model -- see :mod:`edueval.models.provenance`), so two servers that give their models the
same name never answer for each other.  Entries written before the server was part of the key
simply miss (they stay in the file, unused, until :meth:`ResponseCache.clear`).  Only successful answers are stored: a failed call is tried again next
time, and an answer its caller could not read (:meth:`ModelClient.reject`) is deleted again.

SQLite in WAL mode with a busy timeout lets several processes (e.g. a pool of workers, or two runs at
once) read and write the same file safely; within a process one connection is guarded by a lock.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from .types import ChatResult, TokenLogprob

__all__ = ["ResponseCache", "default_cache_dir"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    created REAL NOT NULL,
    payload TEXT NOT NULL
)
"""


def default_cache_dir() -> Path:
    """``$EDUEVAL_CACHE_DIR``, else ``$XDG_CACHE_HOME/edueval``, else ``~/.cache/edueval``."""
    env = os.environ.get("EDUEVAL_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "edueval"


class ResponseCache:
    """A key -> :class:`ChatResult` store in ``<cache_dir>/responses.sqlite``."""

    FILENAME = "responses.sqlite"

    def __init__(self, cache_dir: str | Path | None = None) -> None:
        self.dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / self.FILENAME
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(
            self.path, timeout=60.0, check_same_thread=False, isolation_level=None
        )
        self._conn.execute("PRAGMA busy_timeout=60000")
        with contextlib.suppress(sqlite3.OperationalError):  # e.g. no shared memory on the FS
            self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(_SCHEMA)

    def get(self, key: str) -> ChatResult | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT payload FROM responses WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        try:
            return _decode(json.loads(row[0]))
        except (ValueError, KeyError, TypeError):  # a corrupt entry is a miss, never a crash
            return None

    def put(self, key: str, model: str, result: ChatResult) -> None:
        if not result.ok:
            return
        payload = json.dumps(_encode(result), ensure_ascii=False)
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses (key, model, created, payload) VALUES (?,?,?,?)",
                (key, model, time.time(), payload),
            )

    def delete(self, key: str) -> bool:
        """Drop one entry (an answer its caller could not read); True when there was one."""
        with self._lock:
            cur = self._conn.execute("DELETE FROM responses WHERE key = ?", (key,))
            return cur.rowcount > 0

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def clear(self, model: str | None = None) -> int:
        """Delete every entry (or every entry of one model); returns how many were deleted."""
        with self._lock:
            if model is None:
                cur = self._conn.execute("DELETE FROM responses")
            else:
                cur = self._conn.execute("DELETE FROM responses WHERE model = ?", (model,))
            return cur.rowcount

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _encode(r: ChatResult) -> dict[str, Any]:
    return {
        "text": r.text,
        "logprobs": None if r.logprobs is None else [t.to_json() for t in r.logprobs],
        "prompt_tokens": r.prompt_tokens,
        "completion_tokens": r.completion_tokens,
        "finish_reason": r.finish_reason,
        "latency_s": r.latency_s,
    }


def _decode(d: dict[str, Any]) -> ChatResult:
    lps = d.get("logprobs")
    return ChatResult(
        text=d["text"],
        ok=True,
        logprobs=None if lps is None else [TokenLogprob.from_json(t) for t in lps],
        prompt_tokens=d.get("prompt_tokens"),
        completion_tokens=d.get("completion_tokens"),
        finish_reason=d.get("finish_reason"),
        latency_s=0.0,
        cached=True,
        attempts=0,
    )
