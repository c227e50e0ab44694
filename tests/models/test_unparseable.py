"""Unparseable answers share --max-failures with failed calls (issue 24, point 6).

A reply that arrives but cannot be read in the format its task needs (an MCQ letter, a verdict,
a generator's JSON, a non-empty teacher turn) is counted as ``unparseable``: within the budget it
is scored as wrong and the count stands in ``results.json`` (``model_failures``) and the report;
past the budget (failed calls + unparseable answers > --max-failures) the run ends ``failed``,
exit 3, with one line naming both counts.  Unparseable replies are never replayed from the
cache: a re-run asks again and counts them again.  Every model command is run through the CLI
against a scripted OpenAI-compatible server on loopback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from support.scripted_server import ScriptedServer, last_user_message

GARBAGE = "I would rather not pick one of those."


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("EDUEVAL_CACHE_DIR", str(tmp_path / "cache"))


def _model(server: ScriptedServer) -> list[str]:
    return ["--model", "openai/scripted", "--base-url", server.url, "--max-connections", "2"]


def _outcome(out: Path) -> tuple[str, dict]:
    config = json.loads((out / "config.json").read_text())
    return config["status"], json.loads((out / "results.json").read_text())


def _answers(n: int) -> str:
    return f"{n} answer{'s' if n != 1 else ''}"


def _assert_failed(run, out: Path, *, unparseable: int, failed: int = 0) -> dict:
    """Exit 3, one line naming both counts, run and results marked failed and incomplete."""
    assert run.code == 3, run
    assert "Traceback" not in run.err, run
    last = run.err_lines[-1]
    assert last.startswith(f"error: {failed} of "), run
    assert f"model calls failed and {_answers(unparseable)} could not be parsed" in last, run
    status, results = _outcome(out)
    assert status == "failed" and results["complete"] is False, results
    summary = results["model_failures"]
    assert summary["unparseable"] == unparseable and summary["failed"] == failed, summary
    assert summary["unparseable"] + summary["failed"] > summary["allowed"]
    assert results["model_calls"]["unparseable"] == unparseable
    assert "Incomplete results" in (out / "report.html").read_text()
    return results


def _assert_complete(run, out: Path, *, unparseable: int) -> dict:
    assert run.code == 0, run
    status, results = _outcome(out)
    assert status == "complete" and results["complete"] is True, results
    summary = results["model_failures"]
    assert summary["unparseable"] == unparseable and summary["failed"] == 0, summary
    assert unparseable <= summary["allowed"]
    html = (out / "report.html").read_text()
    assert "Unparseable answers" in html
    assert f"{_answers(unparseable)} could not be parsed" in html
    return results


# -- malalgo run ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def questions(tmp_path_factory) -> tuple[Path, list[str]]:
    from edueval.misconceptions import generate_items

    items = generate_items(4, seed=2)  # 4 questions: 20 prompts (4 identification + 1 MCQ each)
    path = tmp_path_factory.mktemp("q") / "questions.csv"
    items.to_csv(path, index=False)
    return path, [q.strip() for q in items["question"]]


def test_malalgo_never_in_the_format_fails_the_run(cli, tmp_path, questions):
    path, _ = questions
    out = tmp_path / "p3"
    with ScriptedServer(lambda body: GARBAGE) as server:
        run = cli("malalgo", "run", path, *_model(server), "--out", out)
    results = _assert_failed(run, out, unparseable=20)
    assert results["n_unparseable"] == 20 and results["mcq"]["accuracy"] == 0.0


def test_malalgo_a_few_unparseable_are_wrong_and_reported(cli, tmp_path, questions):
    """5 of 20 answers are JSON with a letter outside A-D (valid JSON, so the generic cache filter
    keeps it): scored as wrong, counted; a re-run asks for them again and counts them again."""
    path, texts = questions

    def script(body):
        text = last_user_message(body)
        return '{"Correct Choice": "E"}' if texts[0] in text else '{"Correct Choice": "A"}'

    out = tmp_path / "p3"
    with ScriptedServer(script) as server:
        args = ("malalgo", "run", path, *_model(server), "--max-failures", "25%")
        run = cli(*args, "--out", out)
        first_calls = server.calls
        again = cli(*args, "--out", tmp_path / "again")
        assert server.calls - first_calls == 5, "an unparseable reply must not be replayed"
    results = _assert_complete(run, out, unparseable=5)
    assert results["n_unparseable"] == 5
    responses = pd.read_csv(out / "responses.csv")
    bad = responses[responses["status"] == "unparseable"]
    assert len(bad) == 5 and not bad["correct"].any()
    rerun = _assert_complete(again, tmp_path / "again", unparseable=5)
    assert rerun["mia"] == results["mia"]


# -- qgsms run ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def room(tmp_path_factory) -> Path:
    from edueval.items.pipeline import simulate_run
    from edueval.items.simulate import ClassroomConfig

    path = tmp_path_factory.mktemp("room")
    simulate_run(path, ClassroomConfig(n_students=30, n_materials=1, questions_per_material=4,
                                       seed=4))  # fmt: skip
    pairs = pd.read_csv(path / "pairs.csv", dtype=str)
    pairs.groupby("dimension").head(1).to_csv(path / "few.csv", index=False)
    return path


def _qgsms(cli, room: Path, server, out: Path, *extra):
    return cli("qgsms", "run", room / "few.csv", room / "items.jsonl", "--method", "vanilla",
               *_model(server), "--retries", "1", "--no-bt", "--out", out,
               *extra)  # fmt: skip


def test_qgsms_never_in_the_format_fails_the_run(cli, tmp_path, room):
    n_pairs = len(pd.read_csv(room / "few.csv"))
    out = tmp_path / "p4"
    with ScriptedServer(lambda body: GARBAGE) as server:
        run = _qgsms(cli, room, server, out)
    # one verdict per pair and order, each still malformed after its retry
    _assert_failed(run, out, unparseable=2 * n_pairs)
    assert server.calls == 2 * 2 * n_pairs  # the malformed first answers were retried


def test_qgsms_a_few_unparseable_are_wrong_and_reported(cli, tmp_path, room):
    pairs = pd.read_csv(room / "few.csv", dtype=str)
    items = {json.loads(x)["item"]: json.loads(x) for x in (room / "items.jsonl").open()}
    first = items[pairs["q1"].iloc[0]]["text"]

    def script(body):  # the first pair's prompts (both orders) never get a verdict
        return GARBAGE if first in last_user_message(body) else '{"better": "a"}'

    out = tmp_path / "p4"
    with ScriptedServer(script) as server:
        run = _qgsms(cli, room, server, out, "--max-failures", "100%")
    bad = sum(first in items[q]["text"] for q in pd.concat([pairs["q1"], pairs["q2"]]))
    results = _assert_complete(run, out, unparseable=2 * bad)
    judgements = pd.read_csv(out / "judgements.csv")
    failed = judgements[judgements["status"] == "failed"]
    assert len(failed) == 2 * bad and (failed["correct"] == 0).all()
    assert results["model_calls"]["unparseable"] == 2 * bad


# -- tutor reply ----------------------------------------------------------------------------------


def _dialogues(tmp_path: Path) -> Path:
    rows = [{"id": f"d{i}", "turns": [{"speaker": "teacher", "text": f"What is {i} + {i}?"},
                                      {"speaker": "student", "text": f"It is {2 * i}."},
                                      {"speaker": "teacher", "text": "Yes. How did you get it?"}]}
            for i in range(10)]  # fmt: skip
    path = tmp_path / "dialogues.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_tutor_empty_replies_fail_the_run(cli, tmp_path):
    out = tmp_path / "tutor"
    with ScriptedServer(lambda body: "") as server:
        run = cli("tutor", "reply", _dialogues(tmp_path), *_model(server), "--out", out)
    results = _assert_failed(run, out, unparseable=10)
    assert results["n_empty"] == 10


def test_tutor_a_few_empty_replies_are_reported(cli, tmp_path):
    def script(body):
        return "" if "It is 0." in last_user_message(body) else "Good, and why?"

    out = tmp_path / "tutor"
    with ScriptedServer(script) as server:
        run = cli("tutor", "reply", _dialogues(tmp_path), *_model(server), "--max-failures", "1",
                  "--out", out)  # fmt: skip
    results = _assert_complete(run, out, unparseable=1)
    assert results["n_empty"] == 1 and results["n_ok"] == 9


# -- turing generate ------------------------------------------------------------------------------


def _phase1(tmp_path: Path) -> Path:
    rows = [{"student": f"s{i}", "question": f"What is {i} + {i + 1}?", "answer": str(i),
             "correct_answer": str(2 * i + 1)} for i in range(1, 6)]  # fmt: skip
    path = tmp_path / "phase1.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_turing_generate_never_in_the_format_fails_the_run(cli, tmp_path):
    out = tmp_path / "gen"
    with ScriptedServer(lambda body: GARBAGE) as server:
        run = cli("turing", "generate", _phase1(tmp_path), *_model(server), "--out", out)
    # every generator answer is unparseable, so no q′ and no AI call follows
    results = _assert_failed(run, out, unparseable=5)
    assert results["generator_status"]["unparseable"] == 5


def test_turing_generate_a_few_unparseable_are_reported(cli, tmp_path):
    def script(body):
        text = last_user_message(body)
        if '{"distractor"' in text:  # the AI under test
            return GARBAGE if "What is 1 + 2?" in text else json.dumps({"distractor": "99"})
        if "What is" in text and "related" in text.lower():  # the generator writes q′
            n = text.split("What is ")[1].split(" +")[0]
            return json.dumps({"related_question": f"{n} + 10 - 1", "correct_answer": "x"})
        return json.dumps({"answer": "x"})

    out = tmp_path / "gen"
    with ScriptedServer(script) as server:
        run = cli("turing", "generate", _phase1(tmp_path), *_model(server), "--max-failures",
                  "1", "--out", out)  # fmt: skip
    results = _assert_complete(run, out, unparseable=1)
    assert results["ai_status"]["unparseable"] == 1 and results["ai_status"]["ok"] == 4
