"""A scripted OpenAI-compatible chat server for tests and benchmarks.

It runs on loopback in a background thread and answers ``POST /v1/chat/completions`` from a
*script* -- a plain function of the request body -- and ``GET /v1/models``.  It can inject the
failures real servers produce, deterministically: HTTP 429 (with ``Retry-After``), HTTP 500, slow
answers, malformed JSON bodies and dropped connections.  It counts every HTTP call it receives, so a
test can check that a re-run was answered from the cache with zero calls.

Example::

    from edueval.models import ChatRequest, get_model
    from support.scripted_server import Faults, ScriptedServer

    def script(body):  # body = the JSON request; return the reply text (or a ScriptReply)
        return body["messages"][-1]["content"].upper()

    with ScriptedServer(script, faults=Faults(rate_429=0.2, rate_500=0.1, seed=1)) as server:
        with get_model("openai/scripted", base_url=server.url, cache_dir=tmp) as model:
            res = model.complete(ChatRequest.user("hello"))
        assert res.text == "HELLO" and server.calls >= 1

Determinism: whether a call gets a fault depends only on the request's messages, on how many
times the server has already seen those messages (``nth``), on the fault seed and -- for
``at_calls`` -- on the global call number.  So faults at given *rates* are reproducible even when
calls arrive concurrently in any order; :meth:`Faults.decide` lets a test predict them.

Run standalone (e.g. to point another program at it)::

    python -m support.scripted_server --port 8000 --latency 0.2
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "FAULT_KINDS",
    "Faults",
    "ScriptReply",
    "ScriptedServer",
    "echo_script",
    "last_user_message",
    "messages_key",
]

FAULT_KINDS = ("429", "500", "slow", "malformed", "drop", "400")


@dataclass
class ScriptReply:
    """A scripted answer.  ``logprobs``: one ``(token, logprob, {alternative: logprob})`` per
    generated token; when omitted and the request asks for logprobs, deterministic ones are made up
    (the text split at whitespace, each token with log-probability ``-0.1``)."""

    text: str
    logprobs: list[tuple[str, float, dict[str, float]]] | None = None
    finish_reason: str = "stop"
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


Script = Callable[[dict[str, Any]], "str | ScriptReply"]


def last_user_message(body: Mapping[str, Any]) -> str:
    """Content of the last ``user`` message of a request body ('' if none)."""
    for m in reversed(body.get("messages", [])):
        if m.get("role") == "user":
            return str(m.get("content", ""))
    return ""


def echo_script(body: Mapping[str, Any]) -> str:
    """The default script: ``"echo: <last user message>"``, or ``{"answer": "<it>"}`` when the
    request asks for JSON (``response_format`` of type ``json_object`` or ``json_schema``)."""
    text = last_user_message(body)
    fmt = (body.get("response_format") or {}).get("type")
    if fmt in {"json_object", "json_schema"}:
        return json.dumps({"answer": text})
    return f"echo: {text}"


def messages_key(messages: Any) -> str:
    """The identity of a request for fault decisions: SHA-256 of its messages as canonical JSON."""
    norm = [{"role": str(m["role"]), "content": str(m["content"])} for m in messages]
    payload = json.dumps(norm, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass
class Faults:
    """Which calls fail and how.

    Parameters
    ----------
    rate_429, rate_500, rate_slow, rate_malformed, rate_drop : probability of each fault per call.
    at_calls : ``{call_number: kind}`` -- fault the n-th HTTP call (1-based, in arrival order;
        deterministic when calls are sequential) with one of :data:`FAULT_KINDS` (``"400"``, a
        permanent request error, is injected only this way or by ``rule``).  Takes precedence
        over the rates.
    rule : ``rule(body, nth) -> kind | None``, any deterministic function of the request and of how
        many times (1-based) its messages have been seen; consulted after ``at_calls``.
    max_per_request : never fault the same messages more than this many times (by the rates), so
        that with enough retries every request succeeds.  ``None`` = no limit.
    seed : seed of the rate decisions.
    slow_s : extra delay of a ``"slow"`` answer, seconds.
    retry_after : value of the ``Retry-After`` header on 429s, seconds (``None`` = no header).
    """

    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_slow: float = 0.0
    rate_malformed: float = 0.0
    rate_drop: float = 0.0
    at_calls: Mapping[int, str] = field(default_factory=dict)
    rule: Callable[[dict[str, Any], int], str | None] | None = None
    max_per_request: int | None = None
    seed: int = 0
    slow_s: float = 2.0
    retry_after: float | None = 0.0

    def __post_init__(self) -> None:
        total = (
            self.rate_429 + self.rate_500 + self.rate_slow + self.rate_malformed + self.rate_drop
        )
        if total > 1.0 + 1e-12:
            raise ValueError("fault rates add up to more than 1")
        for kind in self.at_calls.values():
            if kind not in FAULT_KINDS:
                raise ValueError(f"unknown fault {kind!r}; expected one of {FAULT_KINDS}")

    def by_rate(self, key: str, nth: int) -> str | None:
        """The rate-based fault for the ``nth`` sighting of messages with key ``key``."""
        if self.max_per_request is not None and nth > self.max_per_request:
            return None
        digest = hashlib.sha256(f"{self.seed}:{key}:{nth}".encode()).digest()
        u = int.from_bytes(digest[:8], "big") / 2**64
        edge = 0.0
        for kind, rate in (
            ("429", self.rate_429),
            ("500", self.rate_500),
            ("slow", self.rate_slow),
            ("malformed", self.rate_malformed),
            ("drop", self.rate_drop),
        ):
            edge += rate
            if u < edge:
                return kind
        return None

    def decide(self, body: Mapping[str, Any], nth: int, call_no: int = 0) -> str | None:
        """The fault (or ``None``) for a call: ``at_calls``, then ``rule``, then the rates."""
        if call_no in self.at_calls:
            return self.at_calls[call_no]
        if self.rule is not None:
            kind = self.rule(dict(body), nth)
            if kind is not None:
                if kind not in FAULT_KINDS:
                    raise ValueError(f"rule returned unknown fault {kind!r}")
                return kind
        return self.by_rate(messages_key(body.get("messages", [])), nth)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 512  # many clients connect at once: keep the listen backlog deep


class ScriptedServer:
    """OpenAI-compatible chat server on ``127.0.0.1`` driven by a script (see module docstring).

    Parameters
    ----------
    script : ``script(body) -> str | ScriptReply``; default :func:`echo_script`.
    faults : failures to inject (default: none).
    latency : seconds every answer takes (sleep before replying; does not block other calls).
    api_key : if set, requests without ``Authorization: Bearer <api_key>`` get HTTP 401.
    models : ids listed by ``GET /v1/models``.
    port : 0 = any free port.

    Attributes (read while running)
    -------------------------------
    url : base URL to give the client, ``http://127.0.0.1:<port>/v1``.
    calls : chat-completion HTTP calls received (every attempt counts, faulted or not).
    faults_injected : Counter of injected faults by kind.
    bodies : request bodies received, in arrival order.
    max_in_flight : the most chat-completion calls the server was handling at the same time.

    ``GET /scripted/stats`` returns ``calls``, ``max_in_flight`` and ``faults_injected`` as JSON,
    for a server running in another process.
    """

    def __init__(
        self,
        script: Script | None = None,
        *,
        faults: Faults | None = None,
        latency: float = 0.0,
        api_key: str | None = None,
        models: tuple[str, ...] = ("scripted",),
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.script: Script = script or echo_script
        self.faults = faults or Faults()
        self.latency = float(latency)
        self.api_key = api_key
        self.models = tuple(models)
        self._host, self._port = host, port
        self._lock = threading.Lock()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self.killed = False
        self.reset()

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> ScriptedServer:
        handler = type("Handler", (_Handler,), {"owner": self})
        self._httpd = _Server((self._host, self._port), handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def kill(self) -> None:
        """Die as a crashed server does: stop listening (new connections are refused) and hang up,
        without an answer, on every call in progress or arriving on an open connection."""
        self.killed = True
        self.stop()

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self._host}:{self.port}/v1"

    def reset(self) -> None:
        """Forget the call counts, the bodies and how often each request was seen."""
        with self._lock:
            self.calls = 0
            self.in_flight = 0
            self.max_in_flight = 0
            self.faults_injected: Counter[str] = Counter()
            self.bodies: list[dict[str, Any]] = []
            self._seen: Counter[str] = Counter()

    # -- one call -----------------------------------------------------------------------------

    def _register(self, body: dict[str, Any]) -> tuple[int, int]:
        key = messages_key(body.get("messages", []))
        with self._lock:
            self.calls += 1
            self._seen[key] += 1
            self.bodies.append(body)
            return self.calls, self._seen[key]

    def _answer(self, body: dict[str, Any], call_no: int) -> dict[str, Any]:
        out = self.script(body)
        reply = out if isinstance(out, ScriptReply) else ScriptReply(str(out))
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": reply.text},
            "logprobs": None,
            "finish_reason": reply.finish_reason,
        }
        if body.get("logprobs"):
            k = int(body.get("top_logprobs") or 0)
            choice["logprobs"] = {"content": _logprob_content(reply, k)}
        prompt_tokens = reply.prompt_tokens
        if prompt_tokens is None:
            prompt_tokens = sum(
                len(str(m.get("content", "")).split()) for m in body.get("messages", [])
            )
        completion_tokens = reply.completion_tokens
        if completion_tokens is None:
            completion_tokens = len(reply.text.split())
        return {
            "id": f"chatcmpl-scripted-{call_no}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(body.get("model", "scripted")),
            "choices": [choice],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


def _logprob_content(reply: ScriptReply, k: int) -> list[dict[str, Any]]:
    if reply.logprobs is not None:
        items = reply.logprobs
    else:
        pieces = re.findall(r"\s*\S+", reply.text) or [reply.text]
        alts = {f"<alt{j}>": -3.0 - j for j in range(1, 20)}
        items = [(p, -0.1, {p: -0.1, **alts}) for p in pieces]
    out = []
    for tok, lp, alts in items:
        top = sorted(alts.items(), key=lambda kv: -kv[1])[:k]
        out.append(
            {
                "token": tok,
                "logprob": lp,
                "bytes": list(tok.encode("utf-8")),
                "top_logprobs": [
                    {"token": t, "logprob": v, "bytes": list(t.encode("utf-8"))} for t, v in top
                ],
            }
        )
    return out


class _Handler(BaseHTTPRequestHandler):
    owner: ScriptedServer
    protocol_version = "HTTP/1.1"  # keep-alive, like a real server
    disable_nagle_algorithm = True  # headers and body go out at once (no 40 ms delayed-ACK stall)
    timeout = 60  # idle keep-alive connections end eventually

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence access log
        pass

    def _send_json(
        self, status: int, payload: Any, headers: Mapping[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode("utf-8")
        self._send_raw(status, data, headers)

    def _send_raw(self, status: int, data: bytes, headers: Mapping[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (e.g. timed out)
            self.close_connection = True

    def _error(
        self, status: int, message: str, etype: str, headers: Mapping[str, str] | None = None
    ) -> None:
        self._send_json(
            status, {"error": {"message": message, "type": etype, "code": None}}, headers
        )

    def _authorized(self) -> bool:
        key = self.owner.api_key
        if key is None:
            return True
        if self.headers.get("Authorization", "") == f"Bearer {key}":
            return True
        self._error(401, "Incorrect API key provided (scripted server).", "invalid_request_error")
        return False

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        if self.owner.killed:
            self.close_connection = True
            return
        if self.path.rstrip("/") == "/scripted/stats":  # counters, for a server in another process
            o = self.owner
            with o._lock:
                stats: dict[str, Any] = {"calls": o.calls, "max_in_flight": o.max_in_flight}
                stats["faults_injected"] = dict(o.faults_injected)
            self._send_json(200, stats)
            return
        if self.path.rstrip("/") not in {"/v1/models", "/models"}:
            self._error(404, f"no route {self.path}", "not_found")
            return
        if not self._authorized():
            return
        data = [
            {"id": m, "object": "model", "created": 0, "owned_by": "edueval"}
            for m in self.owner.models
        ]
        self._send_json(200, {"object": "list", "data": data})

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.owner.killed:
            self.close_connection = True
            return
        if self.path.rstrip("/") not in {"/v1/chat/completions", "/chat/completions"}:
            self._error(404, f"no route {self.path}", "not_found")
            return
        if not self._authorized():
            return
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                raise ValueError("'messages' must be a list")
        except ValueError as exc:
            self._error(400, f"bad request body: {exc}", "invalid_request_error")
            return
        owner = self.owner
        call_no, nth = owner._register(body)
        with owner._lock:
            owner.in_flight += 1
            owner.max_in_flight = max(owner.max_in_flight, owner.in_flight)
        try:
            self._reply(body, call_no, nth)
        finally:
            with owner._lock:
                owner.in_flight -= 1

    def _reply(self, body: dict[str, Any], call_no: int, nth: int) -> None:
        owner = self.owner
        fault = owner.faults.decide(body, nth, call_no)
        if fault is not None:
            with owner._lock:
                owner.faults_injected[fault] += 1
        if fault == "drop":
            self.close_connection = True  # hang up without a word
            return
        if owner.latency > 0:
            time.sleep(owner.latency)
        if owner.killed:  # died while this call was being answered
            self.close_connection = True
            return
        if fault == "429":
            ra = owner.faults.retry_after
            headers = {} if ra is None else {"Retry-After": f"{ra:g}"}
            self._error(429, "Rate limit reached (scripted).", "rate_limit_error", headers)
            return
        if fault == "500":
            self._error(500, "The server had an error (scripted).", "server_error")
            return
        if fault == "400":
            self._error(400, "This request is invalid (scripted).", "invalid_request_error")
            return
        if fault == "slow":
            time.sleep(owner.faults.slow_s)
        try:
            payload = owner._answer(body, call_no)
        except Exception as exc:  # a broken script is a 500 with the reason, not a dead thread
            self._error(500, f"script failed: {type(exc).__name__}: {exc}", "server_error")
            return
        if fault == "malformed":
            data = json.dumps(payload).encode("utf-8")
            self._send_raw(200, data[: max(1, len(data) // 2)])  # valid headers, truncated JSON
            return
        self._send_json(200, payload)


def main(argv: list[str] | None = None) -> None:
    """Serve the echo script (with optional faults) until interrupted."""
    ap = argparse.ArgumentParser(description="Scripted OpenAI-compatible chat server (echo).")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--rate-429", type=float, default=0.0)
    ap.add_argument("--rate-500", type=float, default=0.0)
    ap.add_argument("--api-key", default=None)
    args = ap.parse_args(argv)
    faults = Faults(rate_429=args.rate_429, rate_500=args.rate_500)
    server = ScriptedServer(
        faults=faults, latency=args.latency, api_key=args.api_key, port=args.port
    )
    with server:
        print(f"serving on {server.url} (Ctrl-C to stop)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
