"""Fixtures of the model-layer tests: a scripted server and clients pointed at it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from edueval.models import ModelClient, get_model
from support.scripted_server import ScriptedServer


@pytest.fixture
def serve() -> Iterator[Callable[..., ScriptedServer]]:
    """``serve(script, faults=..., latency=...)`` -> a started ScriptedServer (stopped after)."""
    started: list[ScriptedServer] = []

    def _serve(*args: Any, **kwargs: Any) -> ScriptedServer:
        server = ScriptedServer(*args, **kwargs).start()
        started.append(server)
        return server

    yield _serve
    for s in started:
        s.stop()


@pytest.fixture
def connect(tmp_path: Path) -> Iterator[Callable[..., ModelClient]]:
    """``connect(server, **options)`` -> a ModelClient on ``openai/scripted`` with a private cache
    in the test's tmp folder and fast retries (closed after the test)."""
    opened: list[ModelClient] = []

    def _connect(server: ScriptedServer | str | list[str], **kwargs: Any) -> ModelClient:
        url = server.url if isinstance(server, ScriptedServer) else server
        spec = kwargs.pop("spec", "openai/scripted")
        options: dict[str, Any] = {
            "base_url": url,
            "cache_dir": tmp_path / "cache",
            "retry_base_delay": 0.01,
            "timeout": 10.0,
            "api_key_env": "EDUEVAL_TEST_NO_SUCH_KEY",
        }
        options.update(kwargs)
        client = get_model(spec, **options)
        opened.append(client)
        return client

    yield _connect
    for c in opened:
        c.close()
