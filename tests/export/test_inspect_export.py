"""``edueval export inspect``: real LLM run folders (made against the scripted OpenAI-compatible
server on loopback, never the embedded model) exported as inspect_ai eval logs, read back with
``inspect_ai.log.read_eval_log``: one sample per item, the scores' means equal ``results.json``,
the model equals ``config.json``'s, and the run folder is left as it was."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest

from edueval.export import EXPORTABLE, read_llm_run, to_inspect_log, write_inspect_log
from edueval.extras import MissingExtra
from edueval.io import InputError
from edueval.models import get_model
from edueval.models.budget import MaxFailures
from support.scripted_server import Faults, ScriptedServer, last_user_message

INSTALL = 'pip install "edueval[inspect]"'


def _pick(text: str, options: str) -> str:
    """A deterministic 'model': one of ``options`` chosen by the prompt's hash."""
    return options[hashlib.sha256(text.encode()).digest()[0] % len(options)]


def _opener(server: ScriptedServer, cache: Path):
    def opener(log_path):
        return get_model("openai/scripted", base_url=server.url, cache_dir=cache,
                         log_path=log_path, max_attempts=2, retry_base_delay=0.001)  # fmt: skip

    return opener


def _malalgo_script(unsure: str):
    def script(body):
        text = last_user_message(body)
        if unsure in text:
            return "I am not sure."  # unparseable: scored wrong, counted
        return json.dumps({"Correct Choice": _pick(text, "ABCD")})

    return script


def _qgsms_script(body):
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
    verdict = _pick(last_user_message(body), "ab")
    if schema.get("title") == "verdict_cot":
        return json.dumps({"reasoning": "because", "better": verdict})
    return json.dumps({"better": verdict})


def _tutor_script(body):
    student = last_user_message(body)
    return "Four is the answer, right?" if "four" in student else "Good question."


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """One finished run folder per exportable command."""
    from edueval.items.pipeline import simulate_run
    from edueval.items.simulate import ClassroomConfig
    from edueval.malalgo.pipeline import run_malalgo
    from edueval.misconceptions import generate_items
    from edueval.qgsms import run_qgsms
    from edueval.tutor import reply_run

    base = tmp_path_factory.mktemp("runs")
    questions = generate_items(4, seed=4)
    questions.to_csv(base / "questions.csv", index=False)
    room = base / "room"
    simulate_run(room, ClassroomConfig(n_students=40, n_materials=2, questions_per_material=6,
                                       seed=4))  # fmt: skip
    pd.read_csv(room / "pairs.csv", dtype=str).groupby("dimension").head(2).to_csv(
        base / "pairs.csv", index=False)  # fmt: skip
    dialogues = [
        {"id": "d1", "turns": [{"speaker": "teacher", "text": "What is 2 + 2?"},
                               {"speaker": "student", "text": "It is four."},
                               {"speaker": "teacher", "text": "Yes, four. How did you get it?"},
                               {"speaker": "student", "text": "Can I do the next one?"},
                               {"speaker": "teacher", "text": "Go ahead, try it."}]},
        {"id": "d2", "turns": [{"speaker": "student", "text": "Is it five?"},
                               {"speaker": "teacher", "text": "Why do you think five?"}]},
    ]  # fmt: skip
    (base / "d.jsonl").write_text("".join(json.dumps(d) + "\n" for d in dialogues))
    unsure = questions["question"].iloc[0].strip()
    with ScriptedServer(_malalgo_script(unsure)) as server:
        run_malalgo(base / "malalgo", base / "questions.csv", model_name="openai/scripted",
                    open_model=_opener(server, base / "cache"),
                    max_failures=MaxFailures(count=10))  # fmt: skip
    with ScriptedServer(_qgsms_script) as server:
        run_qgsms(base / "qgsms", base / "pairs.csv", room / "items.jsonl",
                  methods=["vanilla", "swap"], open_model=_opener(server, base / "cache"),
                  model_name="openai/scripted", bradley_terry=False)  # fmt: skip
    fail_five = Faults(rule=lambda body, nth: "500" if "five" in last_user_message(body) else None)
    with ScriptedServer(_tutor_script, faults=fail_five) as server:
        reply_run(base / "tutor", base / "d.jsonl", open_model=_opener(server, base / "cache"),
                  model_name="openai/scripted", budget=50,
                  max_failures=MaxFailures(count=1))  # fmt: skip
    return {"malalgo": base / "malalgo", "qgsms": base / "qgsms", "tutor": base / "tutor",
            "room": room}  # fmt: skip


def _fingerprint(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}  # fmt: skip


def _exported(run: Path, tmp_path: Path, name: str = "log.eval"):
    """Write the run's log outside the run folder and read it back as inspect would."""
    read_eval_log = pytest.importorskip("inspect_ai.log").read_eval_log
    before = _fingerprint(run)
    path = write_inspect_log(run, tmp_path / name)
    assert _fingerprint(run) == before  # only read
    return read_eval_log(str(path))


def _config(run: Path) -> dict:
    return json.loads((run / "config.json").read_text())


def _results(run: Path) -> dict:
    return json.loads((run / "results.json").read_text())


def _mean(samples, name: str) -> float:
    values = [s.scores[name].value for s in samples if s.scores and name in s.scores]
    return sum(values) / len(values)


def _check_common(log, run: Path, protocol: str, n_items: int) -> None:
    config = _config(run)
    assert log.status == "success" and log.eval.task == f"edueval/{protocol}"
    recorded = config.get("model")  # the resolved client (issue 20), else the --model given
    recorded = recorded["spec"] if isinstance(recorded, dict) else config["params"]["model"]
    assert log.eval.model == recorded == "openai/scripted"
    assert len(log.samples) == n_items == log.eval.dataset.samples == log.results.total_samples
    assert len({s.id for s in log.samples}) == n_items
    assert log.eval.created.startswith(config["started"][:19])
    for s in log.samples:
        assert s.output.model == "openai/scripted"
        assert any(m.role == "user" and m.text for m in s.input)
        assert s.messages[-1].role == "assistant" and s.messages[-1].text == s.output.completion
        if s.output.error is None:
            assert s.model_usage["openai/scripted"].input_tokens > 0


def test_malalgo_run_is_one_sample_per_prompt_with_its_score(runs, tmp_path):
    run = runs["malalgo"]
    log = _exported(run, tmp_path)
    responses = pd.read_csv(run / "responses.csv", dtype=str, keep_default_na=False)
    results = _results(run)
    _check_common(log, run, "malalgo", len(responses))
    assert len(responses) == results["n_prompts"] == 20
    for measure in ("mcq", "aia", "mia"):
        assert _mean(log.samples, measure) == pytest.approx(results[measure]["accuracy"])
        (got,) = [s for s in log.results.scores if s.name == measure]
        assert got.metrics["accuracy"].value == pytest.approx(results[measure]["accuracy"])
        assert got.scored_samples == results[measure]["n"]
    assert results["n_unparseable"] == 5 and 0 < results["mia"]["accuracy"] < 1
    by_id = {s.id: s for s in log.samples}
    for row in responses.to_dict("records"):
        s = by_id[row["task_id"]]
        (score,) = s.scores.values()
        assert s.target == row["target"] and s.output.completion == row["text"]
        assert score.answer == (row["answer_label"] or None)
        assert score.value == (1.0 if row["correct"] == "True" else 0.0)
        assert (
            row["status"] in score.explanation and s.metadata["question_id"] == row["question_id"]
        )
        assert "Question:" in s.input[-1].text
    assert sum(s.scores[next(iter(s.scores))].answer is None for s in log.samples) == 5


def test_qgsms_run_is_one_sample_per_judgement_and_aa_per_method(runs, tmp_path):
    run = runs["qgsms"]
    log = _exported(run, tmp_path, "log.json")  # inspect's JSON format reads back too
    judgements = pd.read_csv(run / "judgements.csv", dtype=str)
    accuracy = _results(run)["accuracy"]
    _check_common(log, run, "qgsms", len(judgements))
    assert len(judgements) == 2 * 2 * 8  # 2 methods x 8 pairs x 2 orders
    for method in ("vanilla", "swap"):
        assert _mean(log.samples, method) == pytest.approx(accuracy[method]["all"]["AA"])
        mine = [s for s in log.samples if s.metadata["method"] == method]
        for dim in ("DF", "DC", "DE", "TC"):
            part = [s for s in mine if s.metadata["dimension"] == dim]
            assert _mean(part, method) == pytest.approx(accuracy[method][dim]["AA"])
        (got,) = [s for s in log.results.scores if s.name == method]
        assert got.metrics["AA"].value == pytest.approx(accuracy[method]["all"]["AA"])
        assert got.metrics["CA_DF"].value == pytest.approx(accuracy[method]["DF"]["CA"])
    assert {s.target for s in log.samples} <= {"a", "b"}
    calls = [json.loads(line) for line in (run / "calls.jsonl").read_text().splitlines()]
    for s in log.samples:  # swap: the CoT call, then a synthesis call where the orders disagree
        replies = [m.text for m in s.messages if m.role == "assistant"]
        assert replies == [c["response"]["text"] for c in calls if c["tag"] == s.id]


def test_tutor_run_scores_f1_against_the_real_reply(runs, tmp_path):
    run = runs["tutor"]
    log = _exported(run, tmp_path)
    replies = pd.read_csv(run / "replies.csv", dtype=str, keep_default_na=False)
    results = _results(run)
    _check_common(log, run, "tutor", len(replies))
    assert _mean(log.samples, "f1") == pytest.approx(results["mean_f1"])
    assert log.results.scores[0].metrics["mean"].value == pytest.approx(results["mean_f1"])
    by_id = {s.id: s for s in log.samples}
    for row in replies.to_dict("records"):
        s = by_id[f"{row['dialogue']}:{row['turn']}"]
        assert s.target == row["real_reply"] and s.output.completion == row["ai_reply"]
        assert s.input[0].role == "system"
        if row["status"] == "failed":  # kept, with the error, and not scored (as in mean_f1)
            assert s.scores is None and s.output.error and "five" in s.input[-1].text
        else:
            assert s.scores["f1"].value == pytest.approx(float(row["f1"]))
    assert results["n_failed"] == 1 and log.results.scores[0].unscored_samples == 1


def test_cli_writes_the_default_log_and_leaves_the_run_as_it_was(runs, cli, tmp_path):
    read_eval_log = pytest.importorskip("inspect_ai.log").read_eval_log
    run = tmp_path / "copy"
    shutil.copytree(runs["malalgo"], run)
    before = _fingerprint(run)
    r = cli("export", "inspect", run)
    assert r.code == 0, r.err
    (written,) = (run / "inspect").glob("*.eval")
    assert written.name.endswith(".eval") and "_edueval-malalgo_" in written.name
    assert str(written) in r.err and r.out == ""
    after = _fingerprint(run)
    assert {k: v for k, v in after.items() if not k.startswith("inspect/")} == before
    assert len(read_eval_log(str(written)).samples) == 20
    assert cli("export", "inspect", run).code == 0  # again: the same file, replaced
    assert list((run / "inspect").glob("*.eval")) == [written]
    r = cli("export", "inspect", run, "--out", tmp_path / "x.json")
    assert r.code == 0, r.err
    assert read_eval_log(str(tmp_path / "x.json")).eval.task == "edueval/malalgo"


def _not_finished(runs: dict[str, Path], where: Path, status: str) -> Path:
    run = where / status
    shutil.copytree(runs["tutor"], run)
    config = _config(run)
    config["status"] = status
    (run / "config.json").write_text(json.dumps(config))
    if status != "failed":
        (run / "results.json").unlink()
    return run


@pytest.mark.parametrize(
    "case, expected",
    [
        ("missing", "is not a directory"),
        ("empty", "is not a run folder (no config.json)"),
        ("other", "holds the results of 'items simulate'; only LLM runs can be exported"),
        ("running", "is not complete (status 'running')"),
        ("interrupted", "is not complete (status 'interrupted')"),
        ("failed", "is not complete (status 'failed')"),
    ],
)
def test_a_folder_that_is_not_a_finished_llm_run_is_one_line(runs, cli, tmp_path, case, expected):
    pytest.importorskip("inspect_ai")
    folders = {"missing": tmp_path / "nowhere", "empty": tmp_path, "other": runs["room"]}
    run = folders.get(case) or _not_finished(runs, tmp_path, case)
    before = _fingerprint(run) if run.exists() else {}
    r = cli("export", "inspect", run)
    assert r.code == 2 and len(r.err_lines) == 1, r.err
    assert expected in r.err and r.err.startswith("error: ")
    assert (_fingerprint(run) if run.exists() else {}) == before
    with pytest.raises(InputError, match="export|not"):
        to_inspect_log(run)


def test_out_must_be_an_inspect_log_file(runs, cli, tmp_path):
    pytest.importorskip("inspect_ai")
    r = cli("export", "inspect", runs["tutor"], "--out", tmp_path / "log.txt")
    assert r.code == 2 and r.err_lines == [
        "error: --out must name a .eval or .json file (inspect_ai's formats), not 'log.txt'"
    ]


def test_without_inspect_ai_the_command_names_the_extra(runs, cli, monkeypatch, tmp_path):
    for name in [m for m in list(sys.modules) if m == "inspect_ai" or m.startswith("inspect_ai.")]:
        monkeypatch.delitem(sys.modules, name)
    for name in ("inspect_ai", "inspect_ai.log", "inspect_ai.model", "inspect_ai.scorer"):
        monkeypatch.setitem(sys.modules, name, None)  # import inspect_ai -> ImportError
    r = cli("export", "inspect", runs["malalgo"], "--out", tmp_path / "log.eval")
    assert r.code == 2 and len(r.err_lines) == 1, r.err
    assert INSTALL in r.err
    assert not (tmp_path / "log.eval").exists()
    with pytest.raises(MissingExtra, match=r'pip install "edueval\[inspect\]"'):
        to_inspect_log(runs["malalgo"])


def test_the_run_reads_without_inspect_ai_as_items(runs):
    """The folder-reading half needs no inspect_ai: one item per row, ids unique."""
    assert set(EXPORTABLE.values()) == {"malalgo", "qgsms", "tutor"}
    run = read_llm_run(runs["qgsms"])
    assert run.protocol == "qgsms" and run.model == "openai/scripted"
    assert [m.name for m in run.measures] == ["vanilla", "swap"]
    assert len({i.id for i in run.items}) == len(run.items) == 32
    assert all(run.calls.get(i.tags[-1]) for i in run.items)


def test_a_config_without_started_is_one_line(runs, cli, tmp_path):
    pytest.importorskip("inspect_ai")
    run = tmp_path / "nostart"
    shutil.copytree(runs["tutor"], run)
    config = _config(run)
    del config["started"]
    (run / "config.json").write_text(json.dumps(config))
    before = _fingerprint(run)
    r = cli("export", "inspect", run, "--out", tmp_path / "log.eval")
    assert r.code == 2 and len(r.err_lines) == 1, r.err
    assert "no 'started' time" in r.err and "config.json" in r.err
    assert _fingerprint(run) == before and not (tmp_path / "log.eval").exists()
