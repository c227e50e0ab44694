"""A study's items, questions and settings under their declared schemas (issue 24, point 1), at
the command line: ids exactly as written, no id given twice, an unknown key refused with the
nearest known one -- each a one-line refusal (exit 2) before any database exists."""

from __future__ import annotations

import json

import pytest

from edueval.io import InputError
from edueval.study import load_study
from edueval.study.config import ITEM_SCHEMAS
from edueval.study.inputs import QUESTION_SCHEMA

from .conftest import mcq_study

QUESTIONS = '  - {id: help, text: "Which helps more?"}\n  - {id: teach, text: "Which teaches?"}\n'


def _item(item_id: object = "i1", replies: object = None, **extra: object) -> str:
    record = {"id": item_id, "context": "c", "replies": replies or {"a": "x", "b": "y"}, **extra}
    return json.dumps(record)


def _study(tmp_path, items: list[str], questions: str = QUESTIONS, extra: str = ""):
    folder = tmp_path / "s"
    folder.mkdir(exist_ok=True)
    (folder / "items.jsonl").write_text("".join(x + "\n" for x in items), encoding="utf-8")
    (folder / "study.yaml").write_text(
        "title: T\nkind: comparative\nitems: items.jsonl\nseed: 1\nconsent: Consent.\n" + extra
        + "questions:\n" + questions, encoding="utf-8",
    )  # fmt: skip
    return folder / "study.yaml"


def _invite(cli, path):
    return cli("study", "invite", path, "--n", "1")


def _refused(r, path, *needles: str) -> None:
    assert r.code == 2, (r.code, r.err)
    assert len(r.err_lines) == 1 and r.err_lines[0].startswith("error: "), r.err
    for needle in needles:
        assert needle in r.err, (needle, r.err)
    assert not (path.parent / "study.db").exists()


def test_the_schemas_are_declared_once():
    assert QUESTION_SCHEMA.closed and QUESTION_SCHEMA.key == ("id",)
    assert ITEM_SCHEMAS["comparative"].key == ("id",)
    assert ITEM_SCHEMAS["mcq"].key == ("student", "question")


# -- ids exactly as written, at the command line ----------------------------------------------


@pytest.mark.parametrize(
    ("item_id", "why"),
    [(" i2", "surrounding spaces"), ("i2\u0000", "control character"), (None, "non-empty"),
     ({"a": 1}, "JSON object"), (["i2"], "JSON list"), (False, "false")],
)  # fmt: skip
def test_study_invite_refuses_an_item_id_not_as_written(tmp_path, cli, item_id, why):
    path = _study(tmp_path, [_item("i1"), _item(item_id)])
    _refused(_invite(cli, path), path, "items.jsonl, line 2, column 'id'", why)


@pytest.mark.parametrize("agent", ["a ", "a\u0000", "a\u001bb"])
def test_study_invite_refuses_an_agent_not_as_written(tmp_path, cli, agent):
    path = _study(tmp_path, [_item("i1", {agent: "x", "b": "y"})])
    _refused(_invite(cli, path), path, "items.jsonl, line 1, column 'replies'", "agent id")


@pytest.mark.parametrize(
    ("written", "why"),
    [('" help"', "surrounding spaces"), ('"help\\0"', "control character"), ("null", "non-empty"),
     ("[a]", "got a list")],
)  # fmt: skip
def test_study_invite_refuses_a_question_id_not_as_written(tmp_path, cli, written, why):
    path = _study(tmp_path, [_item("i1")], f'  - {{id: {written}, text: "Which?"}}\n')
    _refused(_invite(cli, path), path, "study.yaml, line 7, column 'questions'", why)


# -- ids given twice, at the command line -------------------------------------------------------


def test_study_invite_refuses_two_items_with_one_id(tmp_path, cli):
    path = _study(tmp_path, [_item("i1"), _item("i2"), _item("i1")])
    _refused(_invite(cli, path), path, "item id 'i1' is given twice (lines 1 and 3)")


def test_study_invite_refuses_one_agent_given_twice(tmp_path, cli):
    path = _study(tmp_path, ['{"id": "i1", "context": "c", "replies": {"a": "x", "a": "y"}}'])
    _refused(_invite(cli, path), path, "items.jsonl, line 1", "'a'", "twice")


def test_study_export_refuses_two_questions_with_one_id(tmp_path, cli):
    path = _study(tmp_path, [_item("i1")], QUESTIONS + '  - {id: help, text: "Clearer?"}\n')
    r = cli("study", "export", path, "--out", tmp_path / "e")
    _refused(r, path, "question id 'help' is given twice (lines 7 and 9)")


# -- unknown keys: the nearest known name ------------------------------------------------------


def test_an_unknown_key_in_a_question_is_refused_with_the_nearest_name(tmp_path, cli):
    path = _study(tmp_path, [_item("i1")], '  - {id: help, txt: "Which helps more?"}\n')
    _refused(_invite(cli, path), path, "study.yaml, line 7", "unknown key 'txt'",
             "did you mean 'text'?")  # fmt: skip


def test_any_other_key_in_a_question_is_refused(tmp_path):
    path = _study(tmp_path, [_item("i1")], '  - {id: help, text: "Which?", note: x}\n')
    with pytest.raises(InputError, match="unknown key 'note'; a study question takes the keys"):
        load_study(path)


def test_an_unknown_setting_is_refused_with_the_nearest_name(tmp_path, cli):
    path = _study(tmp_path, [_item("i1")], extra="items_per_particpant: 2\n")
    _refused(_invite(cli, path), path, "unknown setting 'items_per_particpant'",
             "did you mean 'items_per_participant'?")  # fmt: skip


def test_a_misspelt_key_of_an_item_is_refused_with_the_nearest_name(tmp_path, cli):
    item = '{"id": "i2", "context": "c", "replys": {"a": "x", "b": "y"}}'
    path = _study(tmp_path, [_item("i1"), item])
    _refused(_invite(cli, path), path, "items.jsonl, line 2", "unknown key 'replys'",
             "did you mean 'replies'?")  # fmt: skip


def test_other_keys_of_an_item_are_kept_out_of_the_study(tmp_path):
    path = _study(tmp_path, [_item("i1", source="tutor make-study"), _item("i2")])
    assert load_study(path).items[0] == {"id": "i1", "replies": {"a": "x", "b": "y"},
                                         "context": [{"speaker": "", "text": "c"}]}  # fmt: skip


def test_a_misspelt_column_of_an_mcq_table_is_refused(tmp_path, cli):
    path = mcq_study(tmp_path / "m")
    csv = path.parent / "mcqs.csv"
    csv.write_text(csv.read_text().replace("related_question", "relatd_question", 1))
    _refused(_invite(cli, path), path, "mcqs.csv", "unknown column 'relatd_question'",
             "did you mean 'related_question'?")  # fmt: skip


def test_an_mcq_table_naming_a_column_twice_is_refused(tmp_path, cli):
    path = mcq_study(tmp_path / "m")
    csv = path.parent / "mcqs.csv"
    lines = csv.read_text().splitlines()
    csv.write_text("\n".join([lines[0] + ",student"] + [x + ",s9" for x in lines[1:]]) + "\n")
    _refused(_invite(cli, path), path, "mcqs.csv", "'student' twice")
