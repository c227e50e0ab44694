"""Requests' cache keys, results' helpers, the retry policy and the cache file."""

from __future__ import annotations

import random
import threading

import pytest

from edueval.models import ChatRequest, ChatResult, ResponseCache, RetryPolicy, TokenLogprob


def test_cache_key_covers_model_messages_and_parameters_but_not_tag():
    base = ChatRequest.user("q", system="s", max_tokens=10)
    k = base.cache_key("openai/m")
    assert k == ChatRequest.user("q", system="s", max_tokens=10, tag="item-7").cache_key("openai/m")
    assert k == ChatRequest(
        messages=[{"role": "system", "content": "s"}, {"role": "user", "content": "q"}],
        max_tokens=10,
    ).cache_key("openai/m")
    variants = [
        base.cache_key("openai/other"),
        ChatRequest.user("q2", system="s", max_tokens=10).cache_key("openai/m"),
        ChatRequest.user("q", max_tokens=10).cache_key("openai/m"),
        ChatRequest.user("q", system="s", max_tokens=11).cache_key("openai/m"),
        ChatRequest.user("q", system="s", max_tokens=10, temperature=0.5).cache_key("openai/m"),
        ChatRequest.user("q", system="s", max_tokens=10, top_logprobs=3).cache_key("openai/m"),
        ChatRequest.user("q", system="s", max_tokens=10, json_mode=True).cache_key("openai/m"),
        ChatRequest.user("q", system="s", max_tokens=10, json_schema={"type": "object"}).cache_key(
            "openai/m"
        ),
        ChatRequest.user("q", system="s", max_tokens=10, stop=["\n"]).cache_key("openai/m"),
        ChatRequest.user("q", system="s", max_tokens=10, seed=1).cache_key("openai/m"),
    ]
    assert len({k, *variants}) == len(variants) + 1


def test_request_validation():
    with pytest.raises(ValueError):
        ChatRequest(messages=[{"content": "no role"}])
    with pytest.raises(ValueError):
        ChatRequest.user("q", max_tokens=0)
    with pytest.raises(TypeError):
        ChatRequest(messages="just a string")
    assert ChatRequest.user("q", stop="\n").stop == ("\n",)


def test_retry_policy_backoff_grows_with_jitter_and_honours_retry_after():
    p = RetryPolicy(base_delay=1.0, max_delay=8.0)
    rng = random.Random(0)
    for attempt, cap in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (6, 8.0)]:
        waits = [p.delay(attempt, None, rng) for _ in range(200)]
        assert min(waits) >= cap / 2 and max(waits) <= cap
        assert len(set(waits)) > 100  # jittered
    assert p.delay(1, 5.0, rng) == 5.0
    assert p.delay(1, 1000.0, rng) == p.max_retry_after


def test_cache_roundtrip_skips_failures_and_is_thread_safe(tmp_path):
    cache = ResponseCache(tmp_path)
    res = ChatResult(
        text="hi", logprobs=[TokenLogprob("hi", -0.5, {"hi": -0.5, "ho": -1.0})],
        prompt_tokens=3, completion_tokens=1, attempts=2, latency_s=0.3, finish_reason="stop",
    )  # fmt: skip
    cache.put("k1", "m", res)
    cache.put("k2", "m", ChatResult(text="", ok=False, error="boom"))
    got = cache.get("k1")
    assert got.text == "hi" and got.cached and got.logprobs == res.logprobs
    assert got.prompt_tokens == 3 and got.finish_reason == "stop"
    assert cache.get("k2") is None and len(cache) == 1

    other = ResponseCache(tmp_path)  # a second connection to the same file (another process)

    def writer(i: int) -> None:
        for j in range(50):
            (cache if j % 2 else other).put(f"t{i}-{j}", "m", ChatResult(text=f"{i}-{j}"))

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(other) == 1 + 8 * 50
    assert cache.get("t7-49").text == "7-49"


def test_summary_line():
    from edueval.models import ModelStats

    s = ModelStats(calls=10, cache_hits=4, attempts=8, retries=2, failures=1,
                   prompt_tokens=1234, completion_tokens=56, errors={"429": 2})  # fmt: skip
    line = s.summary()
    assert "\n" not in line
    assert line.startswith("10 model calls: 4 from cache, 6 made (2 retries), 1 failed")
    assert "1,234 in / 56 out" in line and "429 x2" in line


def test_schemas_that_differ_only_in_property_order_have_different_keys():
    def schema(*names):
        props = {n: {"type": "string"} for n in names}
        return {"type": "object", "properties": props, "required": list(names)}

    def key(s):
        return ChatRequest.user("q", json_schema=s).cache_key("openai/m")

    assert key(schema("reasoning", "better")) != key(schema("better", "reasoning"))
    nested = {"type": "object", "properties": {"x": schema("b", "a")}, "required": ["x"]}
    assert key(nested) != key({**nested, "properties": {"x": schema("a", "b")}})
    # a schema in sorted order keeps the key it had before the order counted
    import hashlib

    from edueval.models.types import canonical_json

    req = ChatRequest.user("q", json_schema=schema("a", "b"))
    payload = {"model": "openai/m", "messages": list(req.messages), "params": req.params()}
    assert req.cache_key("openai/m") == hashlib.sha256(canonical_json(payload).encode()).hexdigest()
