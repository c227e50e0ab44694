"""``edueval.malalgo.evaluate``: the in-memory API gives the numbers of ``malalgo run``'s
``results.json`` on the same questions and options, writes nothing, prints nothing, and raises
past the failure budget."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from edueval.io import InputError
from edueval.malalgo import Accuracy, MalAlgoEvaluation, evaluate
from edueval.malalgo.pipeline import run_malalgo
from edueval.misconceptions import generate_items
from edueval.models import FailureBudgetExceeded, get_model
from edueval.models.budget import MaxFailures
from support.scripted_server import Faults, ScriptedServer, last_user_message

from .test_malalgo import perfect_script


@pytest.fixture(scope="module")
def questions():
    return generate_items(8, seed=11)


def _as_written(value):
    """``value`` with NaN as ``None``, as results.json holds it."""
    if isinstance(value, dict):
        return {k: _as_written(v) for k, v in value.items()}
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _opener(server, cache):
    def opener(log_path):
        return get_model("openai/scripted", base_url=server.url, cache_dir=cache,
                         log_path=log_path, max_connections=8, max_attempts=2,
                         retry_base_delay=0.001)  # fmt: skip

    return opener


def _script(questions):
    """Right on the first half of the questions, always "A" on the rest, and one reply that is
    not JSON: failed, unparseable and right answers all take part."""
    oracle = perfect_script(questions)
    first = set(questions["question"].head(len(questions) // 2).str.strip())

    def script(body):
        text = last_user_message(body)
        if questions["question"].iloc[-1].strip() in text and "Choice:" not in text:
            return "no idea"
        asked = text.split("Question: ")[1].split("\n")[0].strip()
        return oracle(body) if asked in first else '{"Correct Choice": "A"}'

    return script


def _fail_one(questions):
    victim = questions["question"].iloc[1].strip()

    def rule(body, nth):
        text = last_user_message(body)
        return "500" if victim in text and "Choice:" not in text else None

    return rule


@pytest.mark.parametrize("options", [{"seed": 5}, {"seed": 2, "mcq": False, "shots": 1}])
def test_numbers_equal_the_run_folder_and_nothing_is_written(
    tmp_path, monkeypatch, capsys, questions, options
):
    path = tmp_path / "questions.csv"
    questions.to_csv(path, index=False)
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    limit = MaxFailures(count=3)
    with ScriptedServer(_script(questions), faults=Faults(rule=_fail_one(questions))) as server:
        res = evaluate(questions, _opener(server, tmp_path / "cache_mem"), max_failures=limit,
                       **options)  # fmt: skip
        from_path = evaluate(path, _opener(server, tmp_path / "cache_path"), max_failures="3",
                             **options)  # fmt: skip
        assert list(work.iterdir()) == []
        assert capsys.readouterr() == ("", "")
        run_malalgo(tmp_path / "run", path, open_model=_opener(server, tmp_path / "cache_run"),
                    model_name="scripted", max_failures=limit, **options)  # fmt: skip
    written = json.loads((tmp_path / "run" / "results.json").read_text())
    # the metrics (results() adds the timings, the call counts and the options)
    expected = {k: written[k] for k in res.metrics()}
    got = _as_written(res.metrics())
    assert set(written) - set(res.results()) == {"status", "tables"}
    if not options.get("mcq", True):  # no MCQ prompts: NaN in memory, null in results.json
        assert math.isnan(res.mcq.accuracy) and expected["mcq"]["accuracy"] is None
    assert got == expected
    assert _as_written(from_path.metrics()) == got
    assert res.n_failed == (1 if options.get("mcq", True) else 0) and res.complete
    assert isinstance(res, MalAlgoEvaluation) and isinstance(res.mia, Accuracy)
    assert res.mia.accuracy == written["mia"]["accuracy"]
    assert res.mia.ci_low_clustered == written["mia"]["ci_low_clustered"]
    table = pd.read_csv(tmp_path / "run" / "responses.csv")
    assert list(res.responses["task_id"]) == list(table["task_id"].astype(str))
    assert list(res.responses["correct"]) == list(table["correct"])
    frame = res.to_frame()
    assert list(frame["measure"]) == ["mcq", "aia", "mia"]
    assert frame.set_index("measure").loc["aia", "correct"] == written["aia"]["correct"]
    text = res.summary()
    assert "MIA (incorrect choices)" in text and "complete" in text
    assert len(res.breakdown("grade")) >= 1


def test_past_the_budget_raises_with_the_counts_and_the_results(tmp_path, questions):
    raises = pytest.raises(FailureBudgetExceeded, match=r"could not be parsed")
    with ScriptedServer(lambda body: "not json") as server, raises as info:
        evaluate(questions.head(2), _opener(server, tmp_path / "cache"), max_failures=1)
    exc = info.value
    assert isinstance(exc, RuntimeError)
    assert exc.budget.unparseable == 10 and exc.budget.allowed == 1
    assert "more than the 1 that max_failures (1) allows" in str(exc)
    assert exc.result.n_unparseable == 10 and not exc.result.complete
    assert exc.result.mia.accuracy == 0.0


def test_a_bad_question_frame_is_one_line_naming_the_frame(questions):
    bad = questions.drop(columns=["rationale_B"])
    with pytest.raises(InputError, match="questions DataFrame") as info:
        evaluate(bad, "openai/never-called")
    assert "rationale_B" in str(info.value) and "\n" not in str(info.value)
    assert "rationale_B" not in bad.columns and "rationale_A" in questions.columns
    with pytest.raises(InputError, match="prompt= must be one of"):
        evaluate(questions, "openai/never-called", prompt="fancy")
