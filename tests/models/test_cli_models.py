"""``edueval models check``: one line, exit 0 when the backend answers, 2 when it cannot."""

from __future__ import annotations

import socket


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_check_ok(cli, serve):
    server = serve()
    r = cli("models", "check", "--model", "openai/scripted", "--base-url", server.url)
    assert r.code == 0, r.err
    assert r.out.startswith("ok: openai/scripted at http://127.0.0.1:") and r.out.count("\n") == 1
    assert server.calls == 1


def test_check_unreachable_server(cli):
    url = f"http://127.0.0.1:{_free_port()}/v1"
    r = cli("models", "check", "--model", "openai/scripted", "--base-url", url)
    assert r.code == 2
    assert len(r.err_lines) == 1 and r.err_lines[0].startswith("error: cannot reach")
    assert "Traceback" not in r.err


def test_check_wrong_api_key(cli, serve, monkeypatch):
    server = serve(api_key="the-right-key")
    monkeypatch.setenv("EDUEVAL_TEST_KEY", "a-wrong-key")
    r = cli(
        "models", "check", "--model", "openai/scripted", "--base-url", server.url,
        "--api-key-env", "EDUEVAL_TEST_KEY",
    )  # fmt: skip
    assert r.code == 2
    assert len(r.err_lines) == 1
    assert "401" in r.err and "$EDUEVAL_TEST_KEY" in r.err
    monkeypatch.delenv("EDUEVAL_TEST_KEY")
    r = cli(
        "models", "check", "--model", "openai/scripted", "--base-url", server.url,
        "--api-key-env", "EDUEVAL_TEST_KEY",
    )  # fmt: skip
    assert r.code == 2 and "is not set" in r.err and len(r.err_lines) == 1


def test_check_server_that_keeps_failing(cli, serve):
    from support.scripted_server import Faults

    server = serve(faults=Faults(rate_500=1.0))
    r = cli("models", "check", "--model", "openai/scripted", "--base-url", server.url)
    assert r.code == 2 and len(r.err_lines) == 1
    assert "HTTP 500" in r.err and "2 attempts" in r.err


def test_check_unknown_model(cli):
    r = cli("models", "check", "--model", "gpt-4o")
    assert r.code == 2
    assert r.err_lines == [
        "error: unknown model 'gpt-4o'; expected 'local', 'local:<file.gguf>' or 'openai/<model>'"
    ]
