"""Run tables read back through declared schemas (issue 39, point 9), and the readers' bounds on
text and numbers (point 10): ids as written, 0/1 columns that are 0 or 1, JSON lines split at
LF only, lone surrogates and over-long numbers refused in one line."""

from __future__ import annotations

import json
from fractions import Fraction

import pandas as pd
import pytest

from edueval.io import InputError, load_json, load_yaml, read_jsonl, to_numbers


def _qgsms_run(path, pair_ids, correct_first="1"):
    """A finished ``qgsms run`` folder with the columns the run layer writes."""
    path.mkdir(parents=True)
    rows = []
    for m in ("vanilla", "qg-sms"):
        for k, pair in enumerate(pair_ids):
            for order in (1, 2):
                c = correct_first if (m, k, order) == ("vanilla", 0, 1) else str((k + order) % 2)
                right = c != "0"
                rows.append({"method": m, "dimension": "DF", "pair_id": pair, "order": order,
                             "a": "q1", "b": "q2", "better": "q1",
                             "verdict": "a" if right else "b", "chosen": "q1" if right else "q2",
                             "correct": c, "status": "ok", "diff": 0.1})  # fmt: skip
    pd.DataFrame(rows).to_csv(path / "judgements.csv", index=False)
    config = {"command": "qgsms run", "status": "complete", "seed": 1,
              "started": "2026-01-01T00:00:00",
              "params": {"methods": ["vanilla", "qg-sms"], "model": "openai/x"},
              "inputs": {"pairs": {"sha256": "p" * 64}}}  # fmt: skip
    (path / "config.json").write_text(json.dumps(config))
    return path


def test_compare_keeps_pair_ids_as_written(cli, tmp_path):
    """'1' and '01', 'NA' and 'null' are four pairs (``qgsms run`` accepts them), not duplicates
    or missing values."""
    run = _qgsms_run(tmp_path / "q", ["1", "01", "NA", "null", *(f"p{i}" for i in range(6))])
    res = cli("compare", run, "--out", tmp_path / "c")
    assert res.code == 0, res.err
    results = json.loads((tmp_path / "c" / "results.json").read_text())
    ca = [e for e in results["estimates"] if e["metric"] == "CA"]
    assert ca and all(e["n"] == 10 for e in ca)


@pytest.mark.parametrize("value", ["2", "yes"])
def test_a_hand_edited_correct_is_refused_not_counted_as_0(cli, tmp_path, value):
    run = _qgsms_run(tmp_path / "q", [f"p{i}" for i in range(6)], correct_first=value)
    res = cli("compare", run, "--out", tmp_path / "c")
    assert res.code == 2 and len(res.err_lines) == 1, res.err
    assert "judgements.csv, line 2, column 'correct': expected 0 or 1" in res.err, res.err
    from edueval.export.run_items import _checked

    with pytest.raises(InputError, match="column 'correct'"):
        _checked(run / "judgements.csv", "qgsms")


def test_calls_log_is_split_at_line_feeds_only(tmp_path):
    """A raw U+2028 inside a reply (valid in a JSON string) does not split the record."""
    from edueval.export.run_items import _calls

    log = tmp_path / "calls.jsonl"
    records = [{"tag": "t1", "seq": 1, "reply": "a\u2028b\u0085c"}, {"tag": "t2", "seq": 2}]
    log.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                   encoding="utf-8")  # fmt: skip
    calls = _calls(log)
    assert calls["t1"][0]["reply"] == "a\u2028b\u0085c" and list(calls) == ["t1", "t2"]


def test_replies_table_checks_f1(tmp_path):
    from edueval.tutor.study import read_replies_table

    cols = ["dialogue", "turn", "model", "context", "real_reply", "ai_reply", "status", "f1"]
    good = [["007", 2, "m", "c", "r", "a", "ok", 0.5], ["7", 2, "m", "c", "r", "", "failed", ""]]
    pd.DataFrame(good, columns=cols).to_csv(tmp_path / "r.csv", index=False)
    df = read_replies_table(tmp_path / "r.csv")
    assert list(df["dialogue"]) == ["007", "7"]  # two dialogues, as written
    bad = [good[0][:-1] + ["high"], good[1]]
    pd.DataFrame(bad, columns=cols).to_csv(tmp_path / "b.csv", index=False)
    with pytest.raises(InputError, match=r"line 2, column 'f1'"):
        read_replies_table(tmp_path / "b.csv")


@pytest.mark.parametrize(
    "text, line",
    [('{"a": "\\ud800"}', 1), ('[1,\n"ok",\n{"k\\udc00": 2}]', 3), ('"\\ud83d\\ude00x\\ud83d"', 1)],
)
def test_lone_surrogates_are_refused_with_the_line(text, line):
    with pytest.raises(InputError) as err:
        load_json(text, file="f.json")
    assert err.value.line == line and "surrogate" in str(err.value)
    assert load_json('"\\ud83d\\ude00"') == "\U0001f600"  # a pair is a character


def test_jsonl_and_yaml_refuse_surrogates_and_long_integers(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"id": 1}\n{"id": "x\\udbff"}\n')
    with pytest.raises(InputError, match="line 2, column .id.: a text holds \\\\udbff"):
        read_jsonl(path)
    path.write_text('{"id": 1}\n{"id": ' + "7" * 5000 + "}\n")
    with pytest.raises(InputError, match="line 2: a number with 5000 digits"):
        read_jsonl(path)
    path.write_text('{"n": ' + "9" * 4300 + "}\n")  # Python's limit itself is read
    assert read_jsonl(path)[0][0]["n"] == int("9" * 4300)
    with pytest.raises(InputError, match="more than 4300 digits"):
        load_yaml("n: " + "9" * 5000, file="s.yaml")
    with pytest.raises(InputError, match="surrogate"):
        load_yaml('title: "\\ud800"', file="s.yaml")


def test_numbers_past_float_range_are_not_finite_not_a_crash():
    values = to_numbers(pd.Series(["3", "9" * 400, "x"], dtype=object))
    assert values.iloc[0] == 3 and values.iloc[1] == float("inf") and pd.isna(values.iloc[2])
    assert to_numbers("9" * 400) == float("inf")


def test_turing_answers_past_float_range():
    from edueval.turing.data import same_answer
    from edueval.turing.keycheck import key_check

    big = "9" * 400
    assert not same_answer(big + "π", "3.14") and same_answer(big + "π", big + " π")
    assert key_check(big, evaluated=Fraction(3)) == "disagree"


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("command", [["study", "invite"], ["study", "export"], ["tutor", "reply"]])
def test_a_fifo_as_study_or_dialogues_file_is_refused_not_waited_on(cli, tmp_path, command):
    import os

    fifo = tmp_path / "study.yaml"
    os.mkfifo(fifo)
    res = cli(*command, fifo, "--out", tmp_path / "out")
    assert res.code == 2 and len(res.err_lines) == 1, res.err
    assert "FIFO" in res.err
