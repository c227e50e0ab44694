"""The shared layer with a hand-written backend: the protocol is all a provider needs."""

from __future__ import annotations

import asyncio

import pytest

from edueval.models import ChatRequest, ModelAuthError, ModelClient, ResponseCache
from edueval.models.base import Backend, Reply


class FakeBackend:
    """Answers with the prompt upper-cased; prompts starting with a keyword misbehave."""

    name = "fake"
    model_id = "fake-v1"

    def __init__(self, serial: bool = False) -> None:
        self.serial = serial
        self.calls = 0
        self.running = 0
        self.max_running = 0

    def describe(self) -> str:
        return "fake backend"

    async def generate(self, request: ChatRequest, timeout: float) -> Reply:
        self.calls += 1
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            await asyncio.sleep(0.01)
            prompt = request.messages[-1]["content"]
            if prompt.startswith("bug"):
                raise RuntimeError("something nobody foresaw")
            if prompt.startswith("revoked"):
                raise ModelAuthError("the key was revoked")
            return Reply(text=prompt.upper(), prompt_tokens=1, completion_tokens=1, server="fake")
        finally:
            self.running -= 1

    async def aclose(self) -> None:
        pass


def test_fake_backend_satisfies_the_protocol():
    assert isinstance(FakeBackend(), Backend)


def test_unexpected_error_fails_the_item_not_the_run(tmp_path):
    backend = FakeBackend()
    with ModelClient(backend, cache=ResponseCache(tmp_path)) as client:
        results = client.complete_many([ChatRequest.user(p) for p in ["ok", "bug here", "fine"]])
        assert [r.ok for r in results] == [True, False, True]
        assert results[1].error == "RuntimeError: something nobody foresaw"
        assert results[0].text == "OK" and client.stats().errors == {"unexpected": 1}


def test_model_error_from_a_backend_stops_the_run():
    requests = [ChatRequest.user(f"q{i}") for i in range(5)] + [ChatRequest.user("revoked")]
    with ModelClient(FakeBackend(), cache=None) as client, pytest.raises(ModelAuthError):
        client.complete_many(requests)


def test_serial_backend_runs_one_call_at_a_time():
    backend = FakeBackend(serial=True)
    with ModelClient(backend, max_connections=8, cache=None) as client:
        results = client.complete_many([ChatRequest.user(f"q{i}") for i in range(10)])
    assert all(r.ok for r in results) and backend.max_running == 1 and backend.calls == 10
    parallel = FakeBackend(serial=False)
    with ModelClient(parallel, max_connections=8, cache=None) as client:
        client.complete_many([ChatRequest.user(f"q{i}") for i in range(10)])
    assert parallel.max_running == 8
