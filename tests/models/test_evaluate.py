"""The one model-evaluation loop (``edueval.models.evaluate``): calls, a parser per reply,
unparseable replies rejected, the failure budget as a decision; and the run-layer end of it
(``edueval.model_runs.finish_model_run``)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from edueval.models import ChatRequest, ModelStats
from edueval.models.budget import MaxFailures, decide, failure_summary
from edueval.models.evaluate import evaluate_requests
from support.scripted_server import Faults, last_user_message


def _script(body: dict) -> str:
    """``ask N`` answers ``N``; ``garbage`` answers no number."""
    text = last_user_message(body)
    return "no idea" if "garbage" in text else text.split()[-1]


def _number(result):
    return int(result.text) if result.text.strip().isdigit() else None


def _requests(*prompts: str) -> list[ChatRequest]:
    return [ChatRequest.user(p, tag=p) for p in prompts]


def test_replies_parsed_unparseable_rejected_and_budget_decided(serve, connect):
    server = serve(_script)
    client = connect(server)
    requests = _requests("ask 1", "garbage one", "ask 2", "garbage two")
    out = evaluate_requests(client, requests, parse=_number, max_failures=MaxFailures(count=1))
    assert out.parsed == [1, None, 2, None]
    assert out.status == ["ok", "unparseable", "ok", "unparseable"]
    assert (out.n_failed, out.n_unparseable) == (0, 2)
    assert out.stats.unparseable == 2 and out.stats.calls == 4
    assert out.budget.as_dict() == {
        "failed": 0, "unparseable": 2, "calls": 4, "max_failures": "1", "allowed": 1,
        "complete": False,
    }  # fmt: skip
    assert not out.complete and out.budget.status == "failed"
    # an unparseable reply is not replayed from the cache: only those two are asked again
    calls = server.calls
    again = evaluate_requests(client, requests, parse=_number)
    assert server.calls == calls + 2
    assert again.stats.unparseable == 4  # the client's counters: everything asked so far


def test_failed_calls_count_and_an_opener_is_opened_with_the_call_log(serve, connect, tmp_path):
    def rule(body: dict, nth: int) -> str | None:
        return "400" if "poison" in last_user_message(body) else None

    server = serve(_script, faults=Faults(rule=rule))
    log = tmp_path / "calls.jsonl"
    out = evaluate_requests(
        lambda path: connect(server, log_path=path),
        _requests("ask 3", "poison"),
        parse=_number,
        log_path=log,
    )
    assert out.status == ["ok", "failed"] and out.parsed == [3, None]
    assert out.budget.failed == 1 and out.budget.allowed == 0 and not out.complete
    assert len(log.read_text().splitlines()) == 2


def test_per_request_parsers_and_uncounted_rejects(serve, connect):
    server = serve(_script)
    client = connect(server)
    out = evaluate_requests(
        client,
        _requests("ask 4", "garbage", "ask 5"),
        parse=[_number, _number, lambda r: None],
        count_unparseable=[True, False, True],
    )
    assert out.status == ["ok", "unparseable", "unparseable"]
    assert out.stats.unparseable == 1  # the reply to be asked again is rejected, not counted
    with pytest.raises(ValueError, match="2 given for 3 requests"):
        evaluate_requests(client, _requests("a", "b", "c"), parse=[_number, _number])


def test_decision_matches_the_results_json_summary():
    stats = ModelStats(calls=40, failures=1, unparseable=1)
    budget = decide(stats, MaxFailures(share=0.05))
    assert budget.complete and budget.allowed == 2
    assert budget.as_dict() == failure_summary(stats, MaxFailures(share=0.05))
    assert decide(stats, MaxFailures(count=1)).counts() == (
        "1 of 40 model calls failed after their retries and 1 answer could not be parsed"
    )


def test_finish_model_run_writes_the_decision_and_raises_past_the_budget(tmp_path):
    from edueval.model_runs import finish_model_run
    from edueval.report import Report
    from edueval.runs import RunDir, RunFailed

    ok = RunDir(tmp_path / "ok", command="test", params={})
    stats = ModelStats(calls=10, unparseable=1)
    res = finish_model_run(ok, {"x": 1}, Report("t"), decide(stats, MaxFailures(count=1)))
    assert res["complete"] and res["model_failures"]["unparseable"] == 1
    assert "Unparseable answers" in (tmp_path / "ok" / "report.html").read_text()
    bad = RunDir(tmp_path / "bad", command="test", params={})
    with pytest.raises(RunFailed, match="0 of 10 model calls failed and 1 answer could not"):
        finish_model_run(bad, {"x": 1}, Report("t"), decide(stats, MaxFailures(count=0)))
    assert json.loads((tmp_path / "bad" / "config.json").read_text())["status"] == "failed"
    assert json.loads((tmp_path / "bad" / "results.json").read_text())["complete"] is False


def test_the_model_layer_loads_no_report_run_or_cli_module():
    code = (
        "import sys, edueval.models, edueval.models.evaluate, edueval.models.budget\n"
        "bad = [m for m in sys.modules if m.split('.')[:2] in "
        "(['edueval', 'report'], ['edueval', 'runs'], ['edueval', 'cli'])]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
