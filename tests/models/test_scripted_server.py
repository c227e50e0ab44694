"""The scripted server itself, spoken to over raw HTTP."""

from __future__ import annotations

import http.client
import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from support.scripted_server import Faults, ScriptedServer, messages_key


def post(server: ScriptedServer, body: dict, headers: dict | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request(
        "POST", "/v1/chat/completions", json.dumps(body),
        {"Content-Type": "application/json", **(headers or {})},
    )  # fmt: skip
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp, data


BODY = {"model": "scripted", "messages": [{"role": "user", "content": "hi there"}], "max_tokens": 5}


def test_echo_answer_usage_and_models(serve):
    server = serve()
    resp, data = post(server, BODY)
    assert resp.status == 200
    payload = json.loads(data)
    assert payload["choices"][0]["message"]["content"] == "echo: hi there"
    assert payload["usage"] == {"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 5}
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("GET", "/v1/models")
    models = json.loads(conn.getresponse().read())
    assert [m["id"] for m in models["data"]] == ["scripted"]
    assert server.calls == 1  # /v1/models is not a chat call


def test_injected_faults_over_http(serve):
    server = serve(
        faults=Faults(
            at_calls={1: "429", 2: "500", 3: "malformed", 4: "drop", 5: "400"}, retry_after=2.5
        )
    )
    resp, data = post(server, BODY)
    assert resp.status == 429 and resp.getheader("Retry-After") == "2.5"
    assert json.loads(data)["error"]["type"] == "rate_limit_error"
    resp, _ = post(server, BODY)
    assert resp.status == 500
    resp, data = post(server, BODY)
    assert resp.status == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(data)
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        post(server, BODY)
    resp, _ = post(server, BODY)
    assert resp.status == 400
    resp, _ = post(server, BODY)
    assert resp.status == 200
    assert server.calls == 6
    assert dict(server.faults_injected) == {"429": 1, "500": 1, "malformed": 1, "drop": 1, "400": 1}


def test_auth(serve):
    server = serve(api_key="k")
    assert post(server, BODY)[0].status == 401
    assert post(server, BODY, {"Authorization": "Bearer nope"})[0].status == 401
    assert post(server, BODY, {"Authorization": "Bearer k"})[0].status == 200


def test_rate_faults_are_deterministic_and_near_their_rates():
    f = Faults(rate_429=0.2, rate_500=0.1, seed=7)
    keys = [messages_key([{"role": "user", "content": f"q{i}"}]) for i in range(4000)]
    kinds = [f.by_rate(k, 1) for k in keys]
    assert kinds == [Faults(rate_429=0.2, rate_500=0.1, seed=7).by_rate(k, 1) for k in keys]
    assert abs(kinds.count("429") / 4000 - 0.2) < 0.03
    assert abs(kinds.count("500") / 4000 - 0.1) < 0.03
    assert Faults(rate_429=1.0, max_per_request=2).by_rate(keys[0], 3) is None
    with pytest.raises(ValueError):
        Faults(rate_429=0.7, rate_500=0.5)


def test_handles_many_concurrent_connections(serve):
    server = serve(latency=0.3)
    bodies = [dict(BODY, messages=[{"role": "user", "content": f"c{i}"}]) for i in range(48)]
    with ThreadPoolExecutor(48) as pool:
        statuses = [r[0].status for r in pool.map(lambda b: post(server, b), bodies)]
    assert statuses == [200] * 48
    assert server.max_in_flight >= 32
