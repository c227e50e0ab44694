"""The shared layer with a hand-written backend: the protocol is all a provider needs."""

from __future__ import annotations

import asyncio
import itertools
import os

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


class _RecordingSerial(FakeBackend):
    """A serial backend that records the order in which it is called."""

    def __init__(self) -> None:
        super().__init__(serial=True)
        self.seen: list[str] = []

    async def generate(self, request: ChatRequest, timeout: float) -> Reply:
        self.seen.append("|".join(m["content"] for m in request.messages))
        return await super().generate(request, timeout)


def _conv(*turns: str) -> ChatRequest:
    roles = ["system"] + ["user", "assistant"] * len(turns)
    return ChatRequest(
        messages=[
            {"role": r, "content": t} for r, t in zip(roles[: len(turns)], turns, strict=True)
        ]
    )


def test_prefix_order_is_the_depth_first_order_of_the_prompts_prefix_tree():
    from edueval.models.client import prefix_order

    reqs = [
        _conv("sys", "example 2", "x", "q9"),
        _conv("sys", "example 1", "x", "q2 choice B"),
        _conv("other sys", "q1"),
        _conv("sys", "example 1", "x", "q2 choice A"),
        _conv("sys", "example 1", "x", "q1 choice A"),
        _conv("sys", "example 1", "x", "q2 choice A"),  # a duplicate: ties in input order
        _conv("sys", "example 1"),  # a prefix of others comes before them
    ]
    order = prefix_order(reqs)
    assert order == [2, 6, 4, 3, 5, 1, 0]
    # the order is the lexicographic order of the rendered conversations, so the total length of
    # consecutive shared prefixes is the largest any order gives (checked here by brute force)
    text = ["\x00".join(m["role"] + "\x01" + m["content"] for m in r.messages) for r in reqs]

    def shared(seq):
        return sum(
            len(os.path.commonprefix([text[a], text[b]])) for a, b in itertools.pairwise(seq)
        )

    best = max(shared(p) for p in itertools.permutations(range(len(reqs))))
    assert shared(order) == best
    assert shared(range(len(reqs))) < best


def test_a_serial_backend_is_called_in_prefix_order_and_results_come_back_in_input_order():
    reqs = [_conv("s", f"ex{k % 2}", "x", f"q{k}") for k in range(8)]
    backend = _RecordingSerial()
    with ModelClient(backend, cache=None) as client:
        results = client.complete_many(reqs)
    assert [r.text for r in results] == [f"Q{k}" for k in range(8)]  # input order
    # the prompts sharing example 0 first, then those sharing example 1
    assert backend.seen == [f"s|ex{k % 2}|x|q{k}" for k in (0, 2, 4, 6, 1, 3, 5, 7)]
    # the async API sends them the same way
    backend = _RecordingSerial()
    with ModelClient(backend, cache=None) as client:
        results = asyncio.run(client.acomplete_many(reqs))
    assert [r.text for r in results] == [f"Q{k}" for k in range(8)]
    assert backend.seen == [f"s|ex{k % 2}|x|q{k}" for k in (0, 2, 4, 6, 1, 3, 5, 7)]
    # a backend that answers calls concurrently gets them as given (nothing to reuse)
    parallel = FakeBackend(serial=False)
    with ModelClient(parallel, max_connections=1, cache=None) as client:
        assert [r.text for r in client.complete_many(reqs)] == [f"Q{k}" for k in range(8)]
