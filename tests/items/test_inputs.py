"""Issue 24: the items readers' declared schemas (edueval.items.data ITEMS_SCHEMA,
RESPONSES_SCHEMA, QGSMS_SCHEMA) -- ids as written, header columns once, options never guessed.

Every bad input: exit 2, one ``error:`` line on stderr, no results.json."""

from __future__ import annotations

import json

import pytest

from edueval.io import InputError
from edueval.items import read_qgsms_questions

RESPONSES = "student,item,choice\n" + "".join(
    f"{s},q{k + 1},{c}\n" for s, cs in (("s1", "ABC"), ("s2", "ABD"), ("s3", "ACD"), ("s4", "BCC"))
    for k, c in enumerate(cs)
)  # fmt: skip
ITEMS = [
    {"item": "q1", "text": "2+2?", "choices": ["4", "5", "6", "7"], "answer": "A",
     "material": "M1", "topic": "T1"},
    {"item": "q2", "text": "3+3?", "choices": ["5", "6", "7", "8"], "answer": "6",
     "material": "M1", "topic": "T1"},
    {"item": "q3", "text": "4+4?", "choices": {"A": "6", "B": "7", "C": "8", "D": "9"},
     "answer": "C", "material": "M1", "topic": "T2"},
]  # fmt: skip


def _items_text(items=ITEMS) -> str:
    return "".join(json.dumps(i) + "\n" for i in items)


def _one_line(res, out, *needles):
    assert res.code == 2, (res.code, res.err)
    assert "Traceback" not in res.err and len(res.err_lines) == 1, res.err
    assert res.err_lines[0].startswith("error: ")
    for needle in needles:
        assert needle in res.err, res.err
    assert not (out / "results.json").exists()


@pytest.mark.parametrize("command", ["analyze", "pairs"])
@pytest.mark.parametrize(
    ("old", "new", "column"),
    [("s1,q1,A", "s1\x00,q1,A", "student"), ("s2,q1,A", "s2,q1\x00,A", "item"),
     ("s3,q1,A", " s3,q1,A", "student"), ("s3,q1,A", "s3\x07,q1,A", "student")],
)  # fmt: skip
def test_a_response_id_not_as_written_is_refused(cli, write, tmp_path, command, old, new, column):
    """``s1\\0`` passed as ``s1`` through numpy's astype(str): a phantom student appeared."""
    resp = write("r.csv", RESPONSES.replace(old, new, 1))
    out = tmp_path / command
    res = cli("items", command, resp, write("i.jsonl", _items_text()), "--out", out)
    _one_line(res, out, f"column '{column}'", "identifier")


def test_an_item_id_not_as_written_is_refused(cli, write, tmp_path):
    items = [dict(i) for i in ITEMS]
    items[1]["item"] = "q2\x00"
    out = tmp_path / "a"
    res = cli("items", "analyze", write("r.csv", RESPONSES),
              write("i.jsonl", _items_text(items)), "--out", out)  # fmt: skip
    _one_line(res, out, "line 2", "column 'item'", "control character")


@pytest.mark.parametrize("command", ["analyze", "pairs"])
def test_a_response_header_column_given_twice_is_refused(cli, write, tmp_path, command):
    text = RESPONSES.replace("student,item,choice", "student,item,choice,student", 1)
    text = "\n".join(line + ",x" if k else line for k, line in enumerate(text.splitlines()))
    out = tmp_path / command
    res = cli("items", command, write("r.csv", text + "\n"), write("i.jsonl", _items_text()),
              "--out", out)  # fmt: skip
    _one_line(res, out, "'student' twice")


def test_an_items_file_key_given_twice_in_jsonl_is_refused(cli, write, tmp_path):
    line = json.dumps(ITEMS[0])[:-1] + ', "answer": "B"}'
    out = tmp_path / "a"
    res = cli("items", "analyze", write("r.csv", RESPONSES),
              write("i.jsonl", line + "\n" + _items_text(ITEMS[1:])), "--out", out)  # fmt: skip
    _one_line(res, out, "line 1", "'answer' twice")


def _question(**changes):
    q = {"q_id": "x1", "learning_mat_id": 3, "learning_mat": "text", "topic": "t",
         "q_text": "Which?\nA) four\nB) five\nC) six", "answer": "A: four",
         "stud_perf": [{"s_id": 1, "accuracy": "correct", "choice": "A: four"},
                       {"s_id": 2, "accuracy": "incorrect", "choice": "C: six"}]}  # fmt: skip
    q.update(changes)
    return q


def test_a_qgsms_question_without_options_is_refused(cli, write, tmp_path):
    """Its options used to be guessed from what students chose (a distractor nobody chose
    vanished)."""
    qs = write("qs.json", json.dumps([_question(q_text="Which number is four?")]))
    for command in ("analyze", "pairs"):
        out = tmp_path / command
        res = cli("items", command, qs, "--out", out)
        _one_line(res, out, "question 'x1' has no options", "column 'q_text'")
    ok = read_qgsms_questions(write("ok.json", json.dumps([_question()])))
    assert ok.items.at[0, "options"] == ("A", "B", "C")


@pytest.mark.parametrize(
    ("s_id", "needle"),
    [("s1\x00", "control character"), (" s1", "surrounding spaces"), (None, "null"),
     ({"a": 1}, "list or mapping"), (True, "true/false")],
)  # fmt: skip
def test_a_qgsms_student_id_not_as_written_is_refused(write, s_id, needle):
    q = _question()
    q["stud_perf"][1]["s_id"] = s_id
    with pytest.raises(InputError, match="s_id") as exc:
        read_qgsms_questions(write("qs.jsonl", json.dumps(q) + "\n"))
    assert needle in str(exc.value) and exc.value.line == 1


@pytest.mark.parametrize("q_id", ["x1\x00", " x1", None, ["x1"]])
def test_a_qgsms_question_id_not_as_written_is_refused(cli, write, tmp_path, q_id):
    qs = write("qs.json", json.dumps([_question(q_id=q_id)]))
    out = tmp_path / "a"
    _one_line(cli("items", "analyze", qs, "--out", out), out, "column 'q_id'")


def test_a_qgsms_question_id_given_twice_is_refused(write):
    qs = write("qs.jsonl", json.dumps(_question()) + "\n" + json.dumps(_question()) + "\n")
    with pytest.raises(InputError, match="duplicate q_id") as exc:
        read_qgsms_questions(qs)
    assert exc.value.line == 2
