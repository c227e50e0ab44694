"""``edueval.tutor.reply``: the in-memory API gives the rows and numbers of ``tutor reply``'s
``replies.csv`` and ``results.json`` on the same dialogues, from a file, a list of records or a
DataFrame; writes nothing, prints nothing, and raises past the failure budget."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from edueval.io import InputError
from edueval.models import FailureBudgetExceeded
from edueval.models.budget import MaxFailures
from edueval.tutor import TutorReplies, reply, reply_run
from support.scripted_server import Faults, ScriptedServer, last_user_message

from .test_tutor import _dialogues, _opener, _script

_FAIL = Faults(rule=lambda body, nth: "500" if "FAIL" in last_user_message(body) else None)


def _blank(df: pd.DataFrame) -> pd.DataFrame:
    """Empty cells as "" (a CSV reads an empty AI reply back as NaN)."""
    df = df.astype(object)
    return df.where(df.notna(), "")


def test_numbers_equal_the_run_folder_and_nothing_is_written(tmp_path, monkeypatch, capsys):
    path = _dialogues(tmp_path)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    with ScriptedServer(_script, faults=_FAIL) as server:
        opener = _opener(server, tmp_path)
        res = reply(path, opener, budget=50, max_failures=MaxFailures(count=1),
                    model_name="scripted")  # fmt: skip
        from_list = reply(records, opener, budget=50, max_failures=1)
        from_frame = reply(pd.DataFrame(records), opener, budget=50, max_failures="1")
        assert list(work.iterdir()) == []
        assert capsys.readouterr() == ("", "")
        reply_run(tmp_path / "run", path, open_model=opener, model_name="scripted", budget=50,
                  max_failures=MaxFailures(count=1))  # fmt: skip
    written = json.loads((tmp_path / "run" / "results.json").read_text())
    counts = res.counts()  # the numbers (results() adds the timings, call counts and options)
    assert counts == {k: written[k] for k in counts}
    assert from_list.counts() == from_frame.counts() == counts
    assert set(written) - set(res.results()) == {"status", "tables"}
    assert isinstance(res, TutorReplies)
    assert res.n_targets == 3 and res.n_failed == 1 and res.complete
    assert res.mean_f1 == pytest.approx(written["mean_f1"])
    table = pd.read_csv(tmp_path / "run" / "replies.csv")
    cols = ["dialogue", "turn", "model", "ai_reply", "status", "f1", "turns_dropped"]
    pd.testing.assert_frame_equal(_blank(res.replies[cols]), _blank(table[cols]))
    assert res.replies["f1"].iloc[0] == pytest.approx(6 / 13)
    assert math.isnan(res.replies["f1"].iloc[2])
    assert list(res.to_frame().columns) == ["dialogue", "turn", "student", "real_reply",
                                            "ai_reply", "status", "f1", "ai_perplexity"]  # fmt: skip
    text = res.summary()
    assert "mean_f1" in text and "complete" in text


def test_past_the_budget_raises_with_the_counts_and_the_results(tmp_path):
    path = _dialogues(tmp_path)
    raises = pytest.raises(FailureBudgetExceeded, match="1 of 3 model calls failed")
    with ScriptedServer(_script, faults=_FAIL) as server, raises as info:
        reply(path, _opener(server, tmp_path), max_failures=0)
    exc = info.value
    assert isinstance(exc, RuntimeError) and exc.budget.allowed == 0
    assert exc.result.n_failed == 1 and not exc.result.complete
    assert exc.result.n_ok == 2


def test_bad_dialogue_records_are_one_line_naming_the_record():
    bad = [{"id": "d1", "turns": [{"speaker": "pupil", "text": "hi"}]}]
    with pytest.raises(InputError, match=r"^dialogues list, line 1, column 'turns': turn 1"):
        reply(bad, "openai/never-called")
    with pytest.raises(InputError, match="no student turn followed by a teacher reply"):
        reply([{"id": 1, "turns": [{"speaker": "teacher", "text": "hi"}]}], "openai/never")
