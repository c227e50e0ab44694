"""Model-backed runs when the server fails or answers badly (issue 11, 5)."""

from __future__ import annotations

import json
import threading
import time

import pytest

from support.scripted_server import Faults, ScriptedServer, ScriptReply

from .conftest import assert_refused


@pytest.fixture(scope="module")
def questions(tmp_path_factory):
    from edueval.malalgo.pipeline import generate_run

    path = tmp_path_factory.mktemp("q")
    generate_run(path, n=3, seed=2)
    return path / "questions.csv"  # 3 questions: 15 prompts


def _run(edueval, tmp_path, questions, server, *extra):
    env = {"OPENAI_API_KEY": "test-key"}
    return edueval("malalgo", "run", questions, "--model", "openai/scripted", "--base-url",
                   server.url, "--max-connections", "1", "--out", tmp_path / "p3", *extra,
                   env=env)  # fmt: skip


def _dies_after(calls: int) -> ScriptedServer:
    box: dict[str, ScriptedServer] = {}
    faults = Faults(rule=lambda body, nth: "drop" if box["s"].calls > calls else None)
    box["s"] = ScriptedServer(lambda body: '{"Correct Choice": "A"}', faults=faults)
    return box["s"]


def _status(path) -> tuple[str, dict]:
    return (json.loads((path / "config.json").read_text())["status"],
            json.loads((path / "results.json").read_text()))  # fmt: skip


def test_a_server_that_dies_mid_run_fails_the_run_with_exit_3(edueval, tmp_path, questions):
    with _dies_after(5) as server:
        run = _run(edueval, tmp_path, questions, server)
    assert run.code == 3, run
    assert "Traceback" not in run.err and run.err_lines[-1].startswith("error: 10 of 15"), run
    status, results = _status(tmp_path / "p3")
    assert status == "failed" and results["status"] == "failed", results
    assert results["complete"] is False
    assert results["model_failures"]["failed"] == 10
    assert "Incomplete results" in (tmp_path / "p3" / "report.html").read_text()


def test_failures_under_the_limit_are_reported_beside_every_metric(edueval, tmp_path, questions):
    with _dies_after(13) as server:
        run = _run(edueval, tmp_path, questions, server, "--max-failures", "2")
    assert run.code == 0, run
    status, results = _status(tmp_path / "p3")
    assert status == "complete" and results["complete"] is True
    assert results["model_failures"] == {"failed": 2, "unparseable": 0, "calls": 15,
                                         "max_failures": "2", "allowed": 2,
                                         "complete": True}  # fmt: skip
    assert sum(results[m]["failed"] for m in ("mcq", "aia", "mia")) == 2
    assert "Failed model calls" in (tmp_path / "p3" / "report.html").read_text()


@pytest.mark.parametrize("value", ["abc", "-1", "150%", "1.5", ""])
def test_a_bad_max_failures_is_refused(edueval, tmp_path, questions, value):
    run = edueval("malalgo", "run", questions, "--max-failures", value, "--out", tmp_path / "o")
    assert_refused(run, code=2, out=tmp_path / "o", contains="--max-failures")


@pytest.mark.parametrize(
    ("prompt", "reply"),
    [("simple", '{"Correct Choice": "B'),
     ("simple", '{"Correct Choice": "B"} or maybe {"Correct Choice": "C"}'),
     ("simple", ""),
     ("cot", "Step 1: the choice is what rationale B gives, since 3 x 4 = 12 and then"),
     ("cot", 'Reasoning... {"Correct Choice": "B"} on reflection {"Correct Choice": "D"}')],
    ids=["cut off", "two answers", "empty", "cot cut off before its answer", "cot two answers"],
)  # fmt: skip
def test_unusable_replies_are_unparseable_and_never_cached(
    edueval, tmp_path, questions, prompt, reply
) -> None:
    finish = "stop" if reply.endswith("}") or not reply else "length"
    with ScriptedServer(lambda body: ScriptReply(reply, finish_reason=finish)) as server:
        args = ("--max-failures", "100%", "--prompt", prompt)
        first = _run(edueval, tmp_path, questions, server, *args)
        calls = server.calls
        again = _run(edueval, tmp_path, questions, server, *args)
    assert first.code == 0 and again.code == 0, (first, again)
    results = json.loads((tmp_path / "p3" / "results.json").read_text())
    assert results["n_unparseable"] == 15 and results["mia"]["unparseable"] == 9
    assert server.calls == 2 * calls, "an unusable reply must not be replayed from the cache"


def _kill_after(server: ScriptedServer, calls: int) -> threading.Thread:
    def watch() -> None:
        while server.calls < calls:
            time.sleep(0.002)
        server.kill()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_a_run_over_two_servers_survives_one_dying(edueval, tmp_path, questions):
    """--base-url twice: one server dies after 4 calls; the run completes on the other (exit 0),
    every prompt answered once, each call's line naming the server that answered."""
    reply = lambda body: '{"Correct Choice": "A"}'  # noqa: E731
    with ScriptedServer(reply, latency=0.05) as a, ScriptedServer(reply, latency=0.05) as b:
        a_url, b_url = a.url, b.url
        watcher = _kill_after(a, 4)
        run = edueval("malalgo", "run", questions, "--model", "openai/scripted",
                      "--base-url", a_url, "--base-url", b_url, "--max-connections", "2",
                      "--max-failures", "0", "--out", tmp_path / "p3",
                      env={"OPENAI_API_KEY": "test-key"})  # fmt: skip
        watcher.join(timeout=5)
    assert run.code == 0, run
    assert a.killed
    status, results = _status(tmp_path / "p3")
    assert status == "complete" and results["model_failures"]["failed"] == 0, results
    calls = [json.loads(line) for line in (tmp_path / "p3" / "calls.jsonl").open()]
    assert len(calls) == 15 and len({c["key"] for c in calls}) == 15
    assert {c["server"] for c in calls} == {a_url, b_url}
    assert b.calls == sum(c["server"] == b_url for c in calls)


def test_a_bad_endpoints_file_is_refused_in_one_line(edueval, tmp_path, questions):
    path = tmp_path / "endpoints.yaml"
    path.write_text("- url: http://127.0.0.1:9/v1\n  max_connections: many\n")
    run = edueval("malalgo", "run", questions, "--model", "openai/scripted", "--endpoints", path,
                  "--out", tmp_path / "o")  # fmt: skip
    assert_refused(
        run,
        code=2,
        out=tmp_path / "o",
        contains="endpoint 1: max_connections must be a whole number >= 1, got 'many'",
    )
