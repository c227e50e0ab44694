"""The embedded model (SmolLM2-135M-Instruct via llama-cpp-python): real, offline, small calls."""

from __future__ import annotations

import json
import math

import pytest

pytest.importorskip(
    "llama_cpp",
    reason="needs llama-cpp-python (the compiled engine: the 'local-llama-cpp' extra; not in the test install nor in CI)",
)

from edueval.models import ChatRequest, get_model, read_calls  # noqa: E402
from edueval.models.local import smollm2_path  # noqa: E402

SCHEMA = {
    "type": "object",
    "properties": {"Correct Choice": {"type": "string", "enum": ["A", "B", "C", "D"]}},
    "required": ["Correct Choice"],
}


@pytest.fixture(scope="module", autouse=True)
def _compiled_engine():
    """``local`` runs on xllamacpp unless asked: these tests ask for llama-cpp-python."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EDUEVAL_LOCAL_ENGINE", "llama-cpp-python")
        yield


@pytest.fixture(scope="module")
def local_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("local-cache")


def test_gguf_ships_in_the_package():
    path = smollm2_path()
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000


def test_schema_constrained_answer_with_logprobs(local_cache, tmp_path):
    req = ChatRequest.user(
        "Which letter comes after A in the alphabet? Options: A, B, C, D. "
        'Answer as JSON {"Correct Choice": "<letter>"}.',
        json_schema=SCHEMA,
        top_logprobs=4,
        max_tokens=16,
    )
    log = tmp_path / "calls.jsonl"
    with get_model("local", cache_dir=local_cache, log_path=log) as model:
        res = model.complete(req)
        assert res.ok, res.error
        answer = json.loads(res.text)  # the grammar guarantees valid JSON of the schema
        assert set(answer) == {"Correct Choice"} and answer["Correct Choice"] in "ABCD"
        assert res.logprobs and res.completion_tokens == len(res.logprobs)
        assert "".join(t.token for t in res.logprobs).strip() == res.text.strip()
        for t in res.logprobs:
            assert t.logprob <= 0 and len(t.top) <= 4
            assert all(v <= 0 for v in t.top.values())
        letters = res.choice_logprobs("ABCD")
        assert letters is not None
        assert math.isfinite(letters[answer["Correct Choice"]])
        assert sum(math.exp(v) for v in letters.values()) <= 1.0 + 1e-6
        # the same request again: from the cache, no model call
        again = model.complete(req)
        assert again.cached and again.text == res.text and again.logprobs == res.logprobs
        assert model.stats().cache_hits == 1
    lines = read_calls(log)
    assert len(lines) == 2 and lines[0]["prompt_tokens"] > 10 and lines[0]["latency_s"] > 0


def test_greedy_is_deterministic_and_plain_text_works(tmp_path):
    req = ChatRequest.user("Name one primary colour.", max_tokens=6)
    with get_model("local", no_cache=True) as model:
        a, b = model.complete_many([req, req])
        assert a.ok and b.ok and a.text == b.text and a.text.strip()
        assert a.logprobs is None
        assert model.stats().attempts == 2  # no cache: both calls were made
