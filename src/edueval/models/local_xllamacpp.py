"""The embedded model's second engine: ``xllamacpp``, llama.cpp in a binary wheel (no compiler).

``llama-cpp-python`` is built from source when it is installed (4-11 minutes on 2 cores);
``xllamacpp`` ships llama.cpp compiled (a 34 MB manylinux wheel, installed in seconds).  Its API
is llama.cpp's own server, called in process: :meth:`XllamacppModel.complete` sends one
OpenAI-shaped chat request to ``Server.handle_chat_completions`` and reads its answer.  How the
answers relate to llama-cpp-python's (measured in ``tests/models/test_local_engines.py`` and
``benchmarks/local_engines.py``):

* the prompt is the model's own chat template rendered by llama.cpp's Jinja engine: the same
  prompt tokens as llama-cpp-python's;
* flash attention is off (llama-cpp-python's default): with llama.cpp's ``auto`` the greedy text
  changes at near-tied tokens;
* free-text greedy replies are the same tokens (all 100 of a 20-question MalAlgoQA run);
  log-probabilities agree to ~2e-4, and the server reports a character split over several tokens
  (``' ÷'``) as one entry.  The server's host-memory prompt cache is off: with it (llama.cpp's
  default, up to 8 GiB of RAM) a prompt sent again after another was answered from a restored
  state, and its greedy reply changed;
* JSON-schema replies are constrained by the same grammar as llama-cpp-python's (one optional
  space at each separator, :mod:`~edueval.models.json_grammar`) for the schemas edueval's
  protocols send, so their greedy JSON replies are the same too; any other schema goes through
  llama.cpp's llguidance grammar, written compactly (no optional whitespace);
* sampled replies (temperature > 0) use llama.cpp's sampler and seed, not llama-cpp-python's:
  the same seed gives a different sample;
* the thread count is set when the model is loaded (the server takes no per-call setting):
  :func:`load` keeps one loaded model per thread count, so :class:`~edueval.models.local.
  LocalBackend`'s threads by load use up to two (the weights file is memory-mapped, shared).

The server listens only on a Unix socket in a private temporary folder (no TCP port), which is
removed when the model is freed.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .base import Reply, RequestFailed
from .errors import ModelConfigError
from .json_grammar import GRAMMAR_TAG, Unsupported, gbnf
from .types import ChatRequest, TokenLogprob

__all__ = [
    "XllamacppModel",
    "load",
    "COMPACT_JSON",
    "CACHE_RAM_MIB",
    "SETTINGS_TAG",
    "cached_grammar",
]

COMPACT_JSON = {"whitespace_flexible": False, "key_separator": ": ", "item_separator": ", "}
"""llguidance's JSON options for schema-constrained replies: no optional whitespace."""

N_UBATCH = 256
"""Tokens per step of prompt evaluation (llama-cpp-python's: 512).  This build evaluated a
1,429-token prompt at 88 tokens/s in steps of 256 against 82 in steps of 512 (2-core AVX2
machine, interleaved; benchmarks/RESULTS.md), with the same log-probabilities; llama-cpp-python's
speed does not change between the two."""

CACHE_RAM_MIB = 0
"""llama.cpp's host-memory prompt cache (its server's default: up to 8 GiB of saved prompt states)
is off: a prompt state restored from it changed a greedy reply (a prompt sent again after
another; tests/models/test_local_engines.py)."""

SETTINGS_TAG = f"ub{N_UBATCH}-ram{CACHE_RAM_MIB}-{GRAMMAR_TAG}"
"""The settings that can change a reply, in the cache identity after the version: replies cached
with other settings (steps of 512, the host-memory prompt cache on, llguidance's compact JSON) are
not reused."""

_LOCK = threading.Lock()
_LOADED: dict[tuple[str, int, int, int], XllamacppModel] = {}


def _import() -> Any:
    try:
        import xllamacpp
    except ImportError as exc:
        if exc.name == "xllamacpp":
            raise ModelConfigError(
                "the 'local' model's xllamacpp engine needs xllamacpp: pip install 'edueval[local]'"
            ) from None
        # installed, but a system library is missing (it links the system's OpenMP runtime)
        raise ModelConfigError(
            f"xllamacpp cannot load ({exc}); on Debian/Ubuntu: apt-get install libgomp1"
        ) from None
    return xllamacpp


def load(path: Path, n_ctx: int, n_threads: int, n_threads_batch: int) -> XllamacppModel:
    """The model loaded once per process for these settings."""
    key = (str(path), n_ctx, n_threads, n_threads_batch)
    with _LOCK:
        model = _LOADED.get(key)
        if model is None:
            model = _LOADED[key] = XllamacppModel(path, n_ctx, n_threads, n_threads_batch)
    return model


@atexit.register
def _close_loaded() -> None:
    with _LOCK:
        for model in _LOADED.values():
            with contextlib.suppress(Exception):
                model.close()
        _LOADED.clear()


class XllamacppModel:
    """One GGUF model behind an in-process llama.cpp server (one slot, prompt cache on)."""

    def __init__(self, path: Path, n_ctx: int, n_threads: int, n_threads_batch: int) -> None:
        xl = _import()
        self._xl = xl
        self._dir = tempfile.TemporaryDirectory(prefix="edueval-llama-")
        params = xl.CommonParams()
        params.model.path = str(path)
        params.n_ctx = n_ctx
        params.n_batch = 512  # llama-cpp-python's
        params.n_ubatch = N_UBATCH
        params.n_parallel = 1  # one slot: consecutive prompts share its KV cache
        params.cache_ram_mib = CACHE_RAM_MIB
        params.cpuparams.n_threads = n_threads
        params.cpuparams_batch.n_threads = n_threads_batch
        params.flash_attn_type = 0  # off, as llama-cpp-python: "auto" changes near-tied tokens
        params.use_jinja = True  # the GGUF's chat template, rendered as llama-cpp-python does
        params.hostnames = [os.path.join(self._dir.name, "server.sock")]  # no TCP port
        params.verbosity = -1
        params.warmup = False
        try:
            self.server = xl.Server(params)
        except Exception as exc:
            self._dir.cleanup()
            raise ModelConfigError(f"cannot load {path}: {exc}") from None
        self._grammars: dict[str, str] = {}

    def close(self) -> None:
        """Stop the server and free the model.  One request first: the server's destructor stops
        its task loop and waits for it, and a loop that has not yet started when it is told to
        stop starts anyway and is waited for forever (seen with a model freed right after it
        was loaded); a request is answered only by a running loop."""
        if self.server is not None:
            with contextlib.suppress(Exception):
                self.server.handle_completions({"prompt": "1", "max_tokens": 1})
            self.server = None
        self._dir.cleanup()

    def grammar(self, schema: Any) -> str:
        """The grammar of a JSON schema: llama-cpp-python's language (one optional space at each
        separator; :func:`~edueval.models.json_grammar.gbnf`) for the schemas it covers, else
        llguidance's, written compactly (:data:`COMPACT_JSON`)."""
        return cached_grammar(self._grammars, schema, self._compile)

    def _compile(self, text: str) -> str:
        schema = json.loads(text)
        try:
            return gbnf(schema)
        except Unsupported:
            pass
        if isinstance(schema, dict) and "x-guidance" not in schema:
            schema = {**schema, "x-guidance": COMPACT_JSON}
        return str(self._xl.json_schema_to_grammar(json.dumps(schema)))

    def body(self, request: ChatRequest, seed: int) -> dict[str, Any]:
        """The server request for ``request`` (prompt cache on: a shared prefix is reused)."""
        body: dict[str, Any] = {
            "messages": [dict(m) for m in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": float(request.temperature),
            "seed": request.seed if request.seed is not None else seed,
            "cache_prompt": True,
        }
        if request.stop:
            body["stop"] = list(request.stop)
        if request.json_schema is not None:
            body["grammar"] = self.grammar(request.json_schema)
        elif request.json_mode:
            body["grammar"] = self.grammar({"type": "object"})
        if request.top_logprobs is not None:
            body["logprobs"] = True
            body["top_logprobs"] = int(request.top_logprobs)
        return body

    def complete(self, request: ChatRequest, seed: int, server_name: str) -> Reply:
        out = self.server.handle_chat_completions(self.body(request, seed))
        error = out.get("error")
        if error:
            kind = "context" if "context" in str(error.get("type", "")) else "runtime"
            raise RequestFailed(kind, str(error.get("message") or error))
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        logprobs = None
        if request.top_logprobs is not None:
            logprobs = _logprobs(choice.get("logprobs"), int(request.top_logprobs))
        n_out = usage.get("completion_tokens")
        if n_out and choice.get("finish_reason") == "stop" and not request.stop:
            # ended by the end-of-turn token: the server counts it and lists its log-probability;
            # llama-cpp-python does neither (it is not part of the reply)
            n_out -= 1
            if logprobs:
                logprobs = logprobs[:-1]
        return Reply(
            text=choice["message"].get("content") or "",
            logprobs=logprobs,
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=n_out,
            finish_reason=choice.get("finish_reason"),
            server=server_name,
        )


def cached_grammar(cache: dict[str, Any], schema: Any, compile: Callable[[str], Any]) -> Any:
    """``compile(schema as JSON)``, once per schema (either engine's grammar); a schema the
    compiler rejects makes the request fail as sent (``RequestFailed("schema", ...)``).  The
    schema is compiled with its properties in the order written: a grammar writes an object's
    properties in that order, so a reasoning written before the verdict stays before it."""
    key = json.dumps(schema)
    grammar = cache.get(key)
    if grammar is None:
        try:
            grammar = compile(key)
        except Exception as exc:  # unsupported schema feature: the request cannot succeed
            raise RequestFailed(
                "schema", f"JSON schema not supported by the grammar: {exc}"
            ) from None
        cache[key] = grammar
    return grammar


def _logprobs(lp: Any, k: int) -> list[TokenLogprob]:
    out = []
    for item in (lp or {}).get("content") or []:
        alts = item.get("top_logprobs") or []
        top = {a["token"]: _finite(a["logprob"]) for a in alts[:k]}
        out.append(TokenLogprob(item["token"], _finite(item["logprob"]), top))
    return out


def _finite(x: Any) -> float:
    v = float(x)
    return v if v == v and abs(v) != float("inf") else -9999.0
