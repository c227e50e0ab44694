"""Requests, results and statistics of the model layer -- plain dataclasses shared by every backend."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = [
    "Message",
    "ChatRequest",
    "TokenLogprob",
    "ChatResult",
    "ModelStats",
    "canonical_json",
]

Message = Mapping[str, str]
"""One chat message: ``{"role": "system" | "user" | "assistant", "content": "..."}``."""


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no spaces: the same value always gives the same string."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class ChatRequest:
    """One chat-completion request, independent of the backend.  Use :meth:`user` for the common
    one-prompt case.

    Parameters
    ----------
    messages : the conversation, a sequence of ``{"role", "content"}`` mappings.
    max_tokens : upper bound on generated tokens.
    temperature : sampling temperature; 0 (the default) is greedy decoding.
    json_schema : a JSON Schema the answer must follow.  The local model enforces it with a grammar;
        OpenAI-compatible servers get ``response_format={"type": "json_schema", ...}``.
    json_mode : ask for *some* JSON object without a schema (``response_format={"type":
        "json_object"}``); implied by ``json_schema``.
    top_logprobs : ``None`` = no log-probabilities; ``k >= 0`` = the log-probability of every
        generated token plus the ``k`` most likely alternatives at each position.
    stop : strings that end generation.
    seed : sampling seed (backends that support it); irrelevant at temperature 0 on most backends.
    tag : the caller's label for this request (e.g. an item id).  Written to ``calls.jsonl`` but
        *not* part of the cache key, so two items with the same prompt share one cached answer.
    answer_json : the reply is free text that must *end* in a JSON answer (a chain of thought,
        say) although no JSON is forced on it.  It does not change the request sent, only which
        replies are kept in the cache: one without a complete JSON value (cut off by the token
        limit before its answer) is not.  Not part of the cache key.
    """

    messages: tuple[Message, ...]
    max_tokens: int = 256
    temperature: float = 0.0
    json_schema: Mapping[str, Any] | None = None
    json_mode: bool = False
    top_logprobs: int | None = None
    stop: tuple[str, ...] | None = None
    seed: int | None = None
    tag: str | None = field(default=None, compare=False)
    answer_json: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        msgs = self.messages
        if isinstance(msgs, (Mapping, str)):
            raise TypeError("ChatRequest.messages must be a sequence of {'role','content'} dicts")
        norm = []
        for m in msgs:
            if "role" not in m or "content" not in m:
                raise ValueError(f"chat message without 'role'/'content': {m!r}")
            norm.append({"role": str(m["role"]), "content": str(m["content"])})
        object.__setattr__(self, "messages", tuple(norm))
        if self.stop is not None:
            stop = (self.stop,) if isinstance(self.stop, str) else tuple(self.stop)
            object.__setattr__(self, "stop", stop or None)
        if self.max_tokens < 1:
            raise ValueError("max_tokens must be >= 1")
        if self.top_logprobs is not None and self.top_logprobs < 0:
            raise ValueError("top_logprobs must be None or >= 0")

    @classmethod
    def user(cls, prompt: str, *, system: str | None = None, **kwargs: Any) -> ChatRequest:
        """A request with one user message (and optionally a system message before it)."""
        msgs: list[Message] = []
        if system is not None:
            msgs.append({"role": "system", "content": system})
        msgs.append({"role": "user", "content": prompt})
        return cls(messages=tuple(msgs), **kwargs)

    @property
    def wants_json(self) -> bool:
        return self.json_mode or self.json_schema is not None

    def params(self) -> dict[str, Any]:
        """The generation parameters that change an answer (everything but messages and tag)."""
        return {
            "max_tokens": self.max_tokens,
            "temperature": float(self.temperature),
            "json_schema": self.json_schema,
            "json_mode": self.wants_json,
            "top_logprobs": self.top_logprobs,
            "stop": list(self.stop) if self.stop else None,
            "seed": self.seed,
        }

    def cache_key(self, model_id: str) -> str:
        """SHA-256 over model identity, messages and generation parameters.  A schema whose
        objects list their properties out of sorted order adds that order (a grammar, and a
        server's structured output, write the properties in the order given), so two schemas
        that differ only in order never answer for each other; a schema in sorted order keeps
        the key it always had."""
        payload: dict[str, Any] = {
            "model": model_id,
            "messages": list(self.messages),
            "params": self.params(),
        }
        order = _property_orders(self.json_schema)
        if order:
            payload["schema_order"] = order
        return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def _property_orders(schema: Any, path: str = "") -> dict[str, list[str]]:
    """``{path: property names as written}`` for every object of ``schema`` whose properties are
    not in sorted order."""
    out: dict[str, list[str]] = {}
    if isinstance(schema, Mapping):
        props = schema.get("properties")
        if isinstance(props, Mapping) and list(props) != sorted(props):
            out[path or "/"] = [str(k) for k in props]
        for key, value in schema.items():
            out.update(_property_orders(value, f"{path}/{key}"))
    elif isinstance(schema, (list, tuple)):
        for i, value in enumerate(schema):
            out.update(_property_orders(value, f"{path}/{i}"))
    return out


@dataclass(frozen=True)
class TokenLogprob:
    """A generated token, its log-probability, and the most likely alternatives at its position."""

    token: str
    logprob: float
    top: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"token": self.token, "logprob": self.logprob, "top": self.top}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> TokenLogprob:
        return cls(
            str(d["token"]), float(d["logprob"]), {str(k): float(v) for k, v in d["top"].items()}
        )


@dataclass
class ChatResult:
    """The answer to one :class:`ChatRequest`.

    ``ok`` is False when the call still failed after the retries (``error`` says why, ``text`` is
    empty); a run goes on and the caller records that item as failed.  ``cached`` is True when the
    answer came from the on-disk cache (or from an identical request in flight) and no call was made.
    Token counts are ``None`` when the backend did not report them.
    """

    text: str
    ok: bool = True
    error: str | None = None
    logprobs: list[TokenLogprob] | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float = 0.0
    cached: bool = False
    attempts: int = 0
    finish_reason: str | None = None

    def choice_logprobs(self, choices: Iterable[str]) -> dict[str, float] | None:
        """Log-probabilities of answer options at the first position where one was generated.

        For multiple-choice scoring (e.g. letters ``"ABCD"``): finds the first generated token that,
        stripped of spaces and quotes, is one of ``choices``, and returns the log-probability of every
        choice among that position's alternatives (variants such as ``" A"`` and ``"A"`` are merged
        by log-sum-exp; a choice absent from the top list gets ``-inf``).  ``None`` when there are no
        logprobs or no choice was generated.
        """
        if not self.logprobs:
            return None
        wanted = [str(c) for c in choices]
        for pos in self.logprobs:
            if _norm_token(pos.token) in wanted:
                alts = dict(pos.top)
                alts.setdefault(pos.token, pos.logprob)
                out: dict[str, float] = {}
                for c in wanted:
                    vals = [lp for tok, lp in alts.items() if _norm_token(tok) == c]
                    out[c] = _logsumexp(vals)
                return out
        return None

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["logprobs"] = None if self.logprobs is None else [t.to_json() for t in self.logprobs]
        return d


def _norm_token(tok: str) -> str:
    return tok.strip().strip("\"'").strip()


def _logsumexp(vals: Sequence[float]) -> float:
    if not vals:
        return -math.inf
    m = max(vals)
    if m == -math.inf:
        return m
    return m + math.log(sum(math.exp(v - m) for v in vals))


@dataclass
class ModelStats:
    """Counters of one :class:`~edueval.models.ModelClient` (see :meth:`summary`).

    ``calls`` = requests answered (from the model or the cache); ``cache_hits`` = answered without a
    call; ``attempts`` = calls actually sent to the backend (including retries); ``retries`` =
    attempts beyond the first; ``failures`` = requests that still failed after the retries;
    ``unparseable`` = answers the caller could not read in the format its task needs
    (:meth:`~edueval.models.ModelClient.reject`).
    ``prompt_tokens``/``completion_tokens`` count tokens of the calls actually made; the cached
    answers' tokens are in ``cached_prompt_tokens``/``cached_completion_tokens``.
    """

    calls: int = 0
    cache_hits: int = 0
    attempts: int = 0
    retries: int = 0
    failures: int = 0
    unparseable: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    cached_completion_tokens: int = 0
    latency_s: float = 0.0
    errors: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        """One line for the end of a run, e.g. for the command line's stderr."""
        made = self.calls - self.cache_hits
        text = (
            f"{self.calls} model calls: {self.cache_hits} from cache, {made} made "
            f"({self.retries} retries), {self.failures} failed"
            + (f", {self.unparseable} unparseable" if self.unparseable else "")
            + f"; tokens {self.prompt_tokens:,} in / {self.completion_tokens:,} out"
        )
        if self.errors:
            kinds = ", ".join(f"{k} x{v}" for k, v in sorted(self.errors.items()))
            text += f"; errors seen: {kinds}"
        return text
