"""The shared layer against the scripted server: faults, retries, cache, log, concurrency."""

from __future__ import annotations

import asyncio
import json
import socket
import time

import pytest

from edueval.models import (
    ChatRequest,
    ModelAuthError,
    ModelConfigError,
    ModelUnreachableError,
    get_model,
    read_calls,
)
from support.scripted_server import Faults, ScriptReply, last_user_message, messages_key

MAX_ATTEMPTS = 6


def answer_script(body: dict) -> str:
    """Deterministic reply that depends on the prompt and on the requested max_tokens."""
    q = last_user_message(body)
    return f"{q[::-1]} / {len(q)} chars / max {body['max_tokens']}"


def expected_text(req: ChatRequest) -> str:
    q = req.messages[-1]["content"]
    return f"{q[::-1]} / {len(q)} chars / max {req.max_tokens}"


def make_requests(n: int, prefix: str = "question") -> list[ChatRequest]:
    return [
        ChatRequest.user(f"{prefix} {i}: what is {i} + {i}?", max_tokens=8 + i % 3)
        for i in range(n)
    ]


def predicted_attempts(faults: Faults, req: ChatRequest) -> int | None:
    """Attempts the client needs for ``req`` under the rate faults, None if all fail."""
    key = messages_key(req.messages)
    for n in range(1, MAX_ATTEMPTS + 1):
        if faults.by_rate(key, n) is None:
            return n
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_faulty_server_run_completes_exactly_as_scripted(serve, connect, tmp_path):
    faults = Faults(
        rate_429=0.15,
        rate_500=0.12,
        rate_slow=0.06,
        rate_malformed=0.1,
        rate_drop=0.07,
        slow_s=1.5,
        retry_after=0.01,
        seed=11,
    )
    server = serve(answer_script, faults=faults)
    requests = make_requests(150)
    expected = [predicted_attempts(faults, r) for r in requests]
    n_fail = sum(e is None for e in expected)
    assert 0 < n_fail < 10, "the seed should produce a few requests that never succeed"

    log = tmp_path / "calls.jsonl"
    client = connect(server, max_connections=16, timeout=0.5, log_path=log)
    results = client.complete_many(requests)

    assert len(results) == len(requests)
    for req, res, exp in zip(requests, results, expected, strict=True):
        if exp is None:
            assert not res.ok and res.text == ""
            assert res.attempts == MAX_ATTEMPTS
            assert "failed after 6 attempts" in res.error
        else:
            assert res.ok, res.error
            assert res.text == expected_text(req)
            assert res.attempts == exp
    # every HTTP call the server saw is one attempt of the client
    assert server.calls == sum(e if e is not None else MAX_ATTEMPTS for e in expected)
    assert {"429", "500", "slow", "malformed", "drop"} <= set(server.faults_injected)
    stats = client.stats()
    assert stats.calls == 150 and stats.cache_hits == 0
    assert stats.failures == n_fail
    assert stats.attempts == server.calls
    assert stats.retries == server.calls - 150
    assert {"429", "5xx", "timeout", "malformed", "connection"} <= set(stats.errors)
    assert "retries" in stats.summary()

    # the log has one line per request, with what happened
    calls = read_calls(log)
    assert len(calls) == 150
    assert sum(not c["ok"] for c in calls) == n_fail
    assert sorted(c["attempts"] for c in calls) == sorted(r.attempts for r in results)

    # a re-run answers the successes from the cache and retries only the failures
    client.close()
    server.reset()  # forget how often each request was seen: the same faults recur
    again = connect(server, max_connections=16, timeout=0.5).complete_many(requests)
    assert server.calls == n_fail * MAX_ATTEMPTS
    assert [r.text for r in again] == [r.text for r in results]
    assert sum(r.cached for r in again) == 150 - n_fail


def test_rerun_makes_zero_calls_and_log_has_latency_and_tokens(serve, connect, tmp_path):
    faults = Faults(rate_429=0.2, rate_500=0.2, retry_after=0.0, max_per_request=2, seed=5)
    server = serve(answer_script, faults=faults, latency=0.01)
    requests = make_requests(60)
    log1, log2 = tmp_path / "run1" / "calls.jsonl", tmp_path / "run2" / "calls.jsonl"
    with connect(server, log_path=log1) as client:
        first = client.complete_many(requests)
    assert all(r.ok for r in first)
    assert [r.text for r in first] == [expected_text(r) for r in requests]
    calls_first = server.calls
    assert calls_first > 60  # the faults forced retries

    with connect(server, log_path=log2) as client:
        second = client.complete_many(requests)
        stats = client.stats()
    assert server.calls == calls_first  # zero HTTP calls
    assert [r.text for r in second] == [r.text for r in first]
    assert all(r.cached and r.attempts == 0 for r in second)
    assert stats.cache_hits == stats.calls == 60 and stats.attempts == 0

    lines = read_calls(log1)
    assert len(lines) == 60
    by_tag = {c["request"]["messages"][-1]["content"]: c for c in lines}
    for req, res in zip(requests, first, strict=True):
        c = by_tag[req.messages[-1]["content"]]
        assert c["ok"] and not c["cached"] and c["server"] == server.url
        assert c["latency_s"] >= 0.01  # the server's latency
        assert c["prompt_tokens"] == len(req.messages[-1]["content"].split())
        assert c["completion_tokens"] == len(res.text.split())
        assert c["attempts"] == res.attempts and len(c["retry_errors"]) == res.attempts - 1
        assert c["response"]["text"] == res.text
        assert c["request"]["max_tokens"] == req.max_tokens
    cached_lines = read_calls(log2)
    assert len(cached_lines) == 60
    assert all(c["cached"] and c["server"] == "cache" for c in cached_lines)


def test_no_cache_sends_every_request(serve, connect):
    server = serve(answer_script)
    requests = make_requests(5)
    for _ in range(2):
        with connect(server, no_cache=True) as client:
            assert all(r.ok and not r.cached for r in client.complete_many(requests))
    assert server.calls == 10


def test_identical_requests_in_flight_are_sent_once(serve, connect):
    server = serve(answer_script, latency=0.1)
    req = ChatRequest.user("the same prompt", max_tokens=5)
    results = connect(server).complete_many([req] * 10)
    assert server.calls == 1
    assert len({r.text for r in results}) == 1
    assert sum(not r.cached for r in results) == 1


def test_concurrency_is_bounded_and_order_kept(serve, connect):
    def slow_script(body: dict) -> str:
        q = last_user_message(body)
        time.sleep(0.002 * (hash(q) % 20))  # finish out of order
        return answer_script(body)

    server = serve(slow_script, latency=0.05)
    requests = make_requests(40, prefix="concurrency")
    results = connect(server, max_connections=4).complete_many(requests)
    assert [r.text for r in results] == [expected_text(r) for r in requests]
    assert 2 <= server.max_in_flight <= 4


def test_retry_after_is_honoured(serve, connect):
    server = serve(answer_script, faults=Faults(at_calls={1: "429"}, retry_after=0.4))
    t0 = time.perf_counter()
    res = connect(server).complete(ChatRequest.user("wait for it"))
    assert res.ok and res.attempts == 2
    assert time.perf_counter() - t0 >= 0.4


def test_bad_request_fails_without_retry_and_run_goes_on(serve, connect):
    def rule(body: dict, nth: int) -> str | None:
        return "400" if "poison" in last_user_message(body) else None

    server = serve(answer_script, faults=Faults(rule=rule))
    requests = [
        ChatRequest.user("fine one"),
        ChatRequest.user("poison"),
        ChatRequest.user("fine two"),
    ]
    client = connect(server)
    results = client.complete_many(requests)
    assert [r.ok for r in results] == [True, False, True]
    assert results[1].attempts == 1 and "HTTP 400" in results[1].error
    assert server.calls == 3
    assert client.stats().failures == 1


def test_wrong_api_key_fails_fast(serve, connect, monkeypatch):
    server = serve(answer_script, api_key="right-key")
    monkeypatch.setenv("EDUEVAL_TEST_KEY", "wrong-key")
    client = connect(server, api_key_env="EDUEVAL_TEST_KEY")
    with pytest.raises(ModelAuthError, match="401") as info:
        client.complete_many(make_requests(20))
    assert "$EDUEVAL_TEST_KEY" in str(info.value) and "\n" not in str(info.value)
    assert server.calls == 0  # rejected before the script ran
    monkeypatch.setenv("EDUEVAL_TEST_KEY", "right-key")
    assert connect(server, api_key_env="EDUEVAL_TEST_KEY").complete(make_requests(1)[0]).ok


def test_unreachable_server_fails_fast(connect):
    url = f"http://127.0.0.1:{free_port()}/v1"
    client = connect(url)
    t0 = time.perf_counter()
    with pytest.raises(ModelUnreachableError, match="cannot reach"):
        client.complete_many(make_requests(10))
    assert time.perf_counter() - t0 < 5


def test_openai_without_key_or_url_is_a_config_error(monkeypatch, tmp_path):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("EDUEVAL_TEST_NO_SUCH_KEY", raising=False)
    with pytest.raises(ModelConfigError, match="EDUEVAL_TEST_NO_SUCH_KEY"):
        get_model("openai/gpt-4o-mini", api_key_env="EDUEVAL_TEST_NO_SUCH_KEY", cache_dir=tmp_path)
    with pytest.raises(ModelConfigError, match="unknown model"):
        get_model("gpt-4o", cache_dir=tmp_path)


def test_json_schema_and_logprobs_are_sent_and_parsed(serve, connect):
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
    }
    server = serve()  # echo script
    client = connect(server)
    res = client.complete(ChatRequest.user("B", json_schema=schema, top_logprobs=2, max_tokens=9))
    body = server.bodies[-1]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == schema
    assert body["logprobs"] is True and body["top_logprobs"] == 2
    assert json.loads(res.text) == {"answer": "B"}
    assert "".join(t.token for t in res.logprobs) == res.text
    assert all(len(t.top) == 2 for t in res.logprobs)

    res = client.complete(ChatRequest.user("x", json_mode=True))
    assert server.bodies[-1]["response_format"] == {"type": "json_object"}
    assert "logprobs" not in server.bodies[-1] and res.logprobs is None


def test_choice_logprobs_from_scripted_logprobs(serve, connect):
    def script(body: dict) -> ScriptReply:
        return ScriptReply(
            '{"Correct Choice": "C"}',
            logprobs=[
                ('{"', -0.01, {'{"': -0.01}),
                ("Correct Choice", -0.02, {"Correct Choice": -0.02}),
                ('": "', -0.01, {'": "': -0.01}),
                ("C", -0.4, {"C": -0.4, "A": -1.5, " A": -3.0, "B": -2.5}),
                ('"}', -0.01, {'"}': -0.01}),
            ],
        )

    server = serve(script)
    res = connect(server).complete(ChatRequest.user("which?", top_logprobs=5))
    lp = res.choice_logprobs("ABCD")
    assert lp["C"] == pytest.approx(-0.4)
    assert lp["B"] == pytest.approx(-2.5)
    assert lp["A"] == pytest.approx(float(__import__("numpy").logaddexp(-1.5, -3.0)))
    assert lp["D"] == float("-inf")


def test_round_robin_over_several_servers_shares_cache_and_log(serve, connect, tmp_path):
    a, b = serve(answer_script), serve(answer_script)
    log = tmp_path / "calls.jsonl"
    requests = make_requests(20, prefix="pool")
    with connect([a.url, b.url], log_path=log) as client:
        results = client.complete_many(requests)
    assert [r.text for r in results] == [expected_text(r) for r in requests]
    # each call goes to the server with the most free connections: an even split when both
    # answer alike, not exactly 10/10 when one answers faster on a loaded machine (11/9 seen)
    assert a.calls + b.calls == 20 and min(a.calls, b.calls) >= 5
    assert {c["server"] for c in read_calls(log)} == {a.url, b.url}
    with connect(f"{a.url},{b.url}") as client:  # comma-separated form, same cache
        assert all(r.cached for r in client.complete_many(requests))
    assert a.calls + b.calls == 20


def test_async_api(serve, connect):
    server = serve(answer_script)
    client = connect(server)
    requests = make_requests(6, prefix="async")

    async def main():
        one = await client.acomplete(requests[0])
        many = await client.acomplete_many(requests)
        return one, many

    one, many = asyncio.run(main())
    assert one.text == expected_text(requests[0])
    assert [r.text for r in many] == [expected_text(r) for r in requests]
    assert server.calls == 6  # the first request was answered from the cache the second time


@pytest.mark.parametrize(
    ("status", "code", "expected"),
    [
        (401, None, ModelAuthError),
        (403, None, ModelAuthError),
        (404, None, ModelConfigError),
        (429, "insufficient_quota", ModelAuthError),
        (429, "rate_limit_exceeded", "429"),
        (503, None, "5xx"),
        (408, None, "408"),
        (400, None, "RequestFailed"),
        (422, None, "RequestFailed"),
    ],
)
def test_http_status_classification(status, code, expected):
    from types import SimpleNamespace

    from edueval.models.base import RequestFailed, TransientError
    from edueval.models.openai_compat import OpenAIBackend

    backend = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1", api_key_env="NOPE_NOT_SET")
    exc = SimpleNamespace(
        status_code=status,
        body={"error": {"message": "details here", "code": code}},
        response=SimpleNamespace(headers={"retry-after": "1.5"}),
    )
    err = backend._status_error(exc, "http://127.0.0.1:1/v1")
    if isinstance(expected, type):
        assert isinstance(err, expected) and "details here" in str(err)
    elif expected == "RequestFailed":
        assert isinstance(err, RequestFailed) and err.kind == str(status)
    else:
        assert isinstance(err, TransientError) and err.kind == expected
        assert err.retry_after == 1.5
