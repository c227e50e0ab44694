"""The embedded model's fast path (issue 22) gives what raw llama-cpp-python gives.

``LocalBackend`` loads the model without ``logits_all`` and reads the token log-probabilities
from the logits each token was sampled from (``local._TopLogprobs``).  Checked here against a
plain ``llama_cpp.Llama`` with the same settings, on two real MalAlgoQA prompts in the order
``malalgo run`` sends them (the second shares the first's prefix, which llama.cpp must reuse) and
a short free-text prompt:

* the greedy text, its token count and the finish reason are the same;
* the answer letter's log-probability is the true log-softmax over the whole vocabulary at the
  letter's position, computed here independently (float64) from raw llama.cpp logits, to 1e-4.

Tolerance: the logits are float32 and come from different decode paths (edueval's from the
incremental decode during generation, the reference's from a one-token decode after truncating
the cache), so they may differ by float32 rounding in the matrix products (about 1e-6 relative,
i.e. ~1e-5 on logits of size ~10-30); llama-cpp-python's log-softmax is float32 (max, exp, a
pairwise sum of 49,152 terms, log), another ~1e-6.  1e-4 is well above both and far below any
real error: a softmax over A-D only, or over the wrong position, is off by 0.01-10.
One model load per engine; about 350 prompt tokens and 30 generated tokens per engine.
"""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

llama_cpp = pytest.importorskip(
    "llama_cpp",
    reason="needs llama-cpp-python (the compiled engine: the 'local-llama-cpp' extra; not in the test install nor in CI)",
)

from edueval.malalgo import build_tasks  # noqa: E402
from edueval.malalgo.data import read_questions  # noqa: E402
from edueval.misconceptions import generate_items  # noqa: E402
from edueval.models import ChatRequest  # noqa: E402
from edueval.models.local import N_CTX, LocalBackend, smollm2_path  # noqa: E402

LETTERS = "ABCD"


@pytest.fixture(scope="module")
def engines():
    backend = LocalBackend(engine="llama-cpp-python")
    raw = llama_cpp.Llama(
        model_path=str(smollm2_path()),
        n_ctx=N_CTX,
        n_threads=backend.n_threads,
        n_threads_batch=backend.n_threads_batch,
        seed=0,
        logits_all=False,
        verbose=False,
    )
    yield backend, raw
    raw.close()  # not at interpreter exit, where llama-cpp-python's finaliser fails noisily


@pytest.fixture(scope="module")
def requests_():
    items = read_questions(generate_items(4, seed=0))
    simple = build_tasks(items, prompt="simple", scoring="logprob", mcq=False)
    return [
        simple[0].request,  # JSON-schema grammar + top-20 log-probabilities
        simple[1].request,  # shares everything up to "Choice:" with the one before
        # free text, no grammar, no log-probabilities (a chain of thought's first tokens)
        ChatRequest.user("Explain step by step: what is 7 + 5?", max_tokens=12),
    ]


def _raw_call(raw, req: ChatRequest) -> dict:
    kwargs = {
        "messages": [dict(m) for m in req.messages],
        "max_tokens": req.max_tokens,
        "temperature": float(req.temperature),
        "seed": req.seed if req.seed is not None else 0,
        "stop": list(req.stop) if req.stop else [],
    }
    if req.json_schema is not None:
        kwargs["grammar"] = llama_cpp.LlamaGrammar.from_json_schema(
            json.dumps(req.json_schema, sort_keys=True), verbose=False
        )
    return raw.create_chat_completion(**kwargs)


def _reference_logprobs(raw, tokens: list[int], pos: int) -> np.ndarray:
    """Full-vocabulary log-softmax (float64) of the logits that predict ``tokens[pos]``, from a
    one-token decode of ``tokens[pos - 1]`` on top of the cached ``tokens[:pos - 1]``."""
    raw.n_tokens = pos - 1  # keep the cached prefix (eval drops the cache beyond n_tokens)
    raw.eval([tokens[pos - 1]])
    row = np.ctypeslib.as_array(
        llama_cpp.llama_get_logits_ith(raw.ctx, -1), shape=(raw.n_vocab(),)
    ).astype(np.float64)
    m = row.max()
    return row - m - np.log(np.exp(row - m).sum())


def test_greedy_text_and_letter_logprob_match_raw_llama_cpp(engines, requests_):
    backend, raw = engines
    llm = backend._model()
    for n, req in enumerate(requests_):
        llama_cpp.llama_perf_context_reset(llm.ctx)
        got = asyncio.run(backend.generate(req, 60.0))
        if n == 1:  # the prefix shared with the prompt before is not evaluated again
            evaluated = llama_cpp.llama_perf_context(llm.ctx).n_p_eval
            assert got.prompt_tokens and evaluated < got.prompt_tokens / 2
        ref = _raw_call(raw, req)
        choice = ref["choices"][0]
        assert got.text == (choice["message"]["content"] or "")
        assert got.completion_tokens == ref["usage"]["completion_tokens"]
        assert got.prompt_tokens == ref["usage"]["prompt_tokens"]
        assert got.finish_reason == choice["finish_reason"]
        if req.top_logprobs is None:
            assert got.logprobs is None
            continue
        assert got.logprobs is not None and len(got.logprobs) == got.completion_tokens
        assert "".join(t.token for t in got.logprobs) == got.text
        # raw's cache now holds prompt + completion (all but, maybe, the last token)
        n_prompt = ref["usage"]["prompt_tokens"]
        tokens = [int(t) for t in raw.input_ids[: raw.n_tokens]]
        j = next(i for i, t in enumerate(got.logprobs) if t.token.strip().strip('"') in LETTERS)
        letter = got.logprobs[j].token
        ref_lp = _reference_logprobs(raw, tokens, n_prompt + j)
        letter_id = tokens[n_prompt + j]
        assert raw.detokenize([letter_id]).decode() == letter
        assert abs(got.logprobs[j].logprob - ref_lp[letter_id]) < 1e-4
        # the top list: the 20 most likely tokens of the full distribution, with their values
        top_ids = np.argsort(-ref_lp)[: req.top_logprobs]
        for tid in top_ids[:5]:
            name = raw.detokenize([int(tid)]).decode("utf-8", errors="ignore")
            assert abs(got.logprobs[j].top[name] - ref_lp[tid]) < 1e-4
        assert max(got.logprobs[j].top.values()) == pytest.approx(ref_lp.max(), abs=1e-4)
        # the letters' scores as malalgo reads them are finite and a sub-distribution
        scores = [got.logprobs[j].top.get(x, -np.inf) for x in LETTERS]
        assert np.isfinite(max(scores)) and np.exp(scores).sum() <= 1 + 1e-6
