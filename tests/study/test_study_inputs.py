"""A study's own inputs under the rules every input obeys (issue 24): ids exactly as written, no
id given twice, every numeric option bounded, the admin token never made up when one was meant,
and the invite links private."""

from __future__ import annotations

import json
import os
import stat
import typing

import click
import pandas as pd
import pytest
import typer
import typer.core
import yaml
from fastapi.testclient import TestClient

from edueval.io import InputError
from edueval.study import StudyDB, load_study
from edueval.study.app import create_app
from edueval.study.db import assign_units
from edueval.study.inputs import MAX_PARTICIPANTS, read_participants

from .conftest import ADMIN, Participant, comparative_study, mcq_study

GOOD_TOKEN = "Zq3_x9-LmP0aR7tYw2Kc8vBn"


def _item(item_id: object = "i1", replies: str = '{"a": "x", "b": "y"}') -> str:
    return f'{{"id": {json.dumps(item_id)}, "context": "c", "replies": {replies}}}'


def _study(tmp_path, items: list[str], questions: str | None = None, extra: str = "") -> object:
    """A comparative study whose items.jsonl holds ``items`` (one JSON text a line) and whose
    study.yaml is written by hand, so YAML-level mistakes can be put in it."""
    folder = tmp_path / "s"
    folder.mkdir(exist_ok=True)
    (folder / "items.jsonl").write_text("".join(x + "\n" for x in items), encoding="utf-8")
    questions = questions or '  - {id: help, text: "Which helps more?"}\n'
    (folder / "study.yaml").write_text(
        "title: T\nkind: comparative\nitems: items.jsonl\nseed: 1\nconsent: Consent text.\n" + extra
        + "questions:\n" + questions, encoding="utf-8",
    )  # fmt: skip
    return folder / "study.yaml"


def _one_line_refusal(r, *needles: str) -> None:
    assert r.code == 2, (r.code, r.err)
    assert len(r.err_lines) == 1 and "Traceback" not in r.err, r.err
    for needle in needles:
        assert needle in r.err, (needle, r.err)


# -- two questions with one id: the data-loss case -----------------------------------------------

TWO_HELPS = ('  - {id: help, text: "Which helps more?"}\n'
             '  - {id: teach, text: "Which is more like a teacher?"}\n'
             '  - {id: help, text: "Which is clearer?"}\n')  # fmt: skip


def test_two_questions_with_one_id_are_refused_before_anyone_answers(tmp_path, cli):
    """Issue 24: participants answered both questions and one answer overwrote the other in the
    database.  Now every study command refuses the study, naming the id and both lines, and no
    database is created."""
    path = _study(tmp_path, [_item("i1"), _item("i2")], TWO_HELPS)
    with pytest.raises(InputError, match=r"question id 'help' is given twice \(lines 7 and 9\)"):
        load_study(path)
    commands = [("invite", path, "--n", "1"), ("serve", path),
                ("export", path, "--out", tmp_path / "e")]  # fmt: skip
    for args in commands:
        r = cli("study", *args)
        _one_line_refusal(r, "study.yaml, line 9", "'help'", "lines 7 and 9")
    assert not (tmp_path / "s" / "study.db").exists()


def test_with_distinct_ids_every_answer_is_kept(tmp_path):
    """The control: the same study with three distinct ids stores three answers per item."""
    distinct = TWO_HELPS.replace(
        '{id: help, text: "Which is clearer', '{id: clear, text: "Which is clearer'
    )
    path = _study(tmp_path, [_item("i1"), _item("i2")], distinct)
    study = load_study(path)
    assert [q["id"] for q in study.questions] == ["help", "teach", "clear"]
    app = create_app(study, f"sqlite:///{tmp_path / 'x.db'}", ADMIN)
    (row,) = app.state.db.invite(["r1"])
    with TestClient(app) as c:
        p = Participant(c, f"http://t/p/{row['token']}")
        r = p.consent()
        while "/a/" in str(r.url):
            r = p.answer_current(r, {"q0": "first", "q1": "second", "q2": "tie"})
    df = app.state.db.export()
    app.state.db.close()
    assert len(df) == 2 * 3
    assert (df.groupby("attribute")["outcome"].first().to_dict()
            == {"help": "first", "teach": "second", "clear": "tie"})  # fmt: skip


# -- other ids given twice -----------------------------------------------------------------------


def test_two_items_with_one_id_name_both_lines(tmp_path):
    path = _study(tmp_path, [_item("i1"), _item("i2"), _item("i1")])
    with pytest.raises(InputError, match=r"items.jsonl, line 3, column 'id': item id 'i1' is "
                       r"given twice \(lines 1 and 3\)"):  # fmt: skip
        load_study(path)


def test_an_agent_given_twice_in_one_item_is_refused(tmp_path):
    """``json.loads`` keeps the last of two equal keys: agent a's first reply would vanish."""
    path = _study(tmp_path, [_item("i1"), _item("i2", '{"a": "x", "b": "y", "a": "z"}')])
    with pytest.raises(InputError, match=r"items.jsonl, line 2: .*key 'a' .*twice"):
        load_study(path)


def test_a_setting_given_twice_in_study_yaml_is_refused(tmp_path):
    path = _study(tmp_path, [_item("i1")], extra="seed: 2\n")
    with pytest.raises(InputError, match=r"key 'seed' is given twice \(lines 4 and 6\)"):
        load_study(path)


def test_two_mcqs_of_one_student_and_question_name_both_lines(tmp_path):
    path = mcq_study(tmp_path / "m")
    csv = path.parent / "mcqs.csv"
    lines = csv.read_text().splitlines(keepends=True)
    csv.write_text("".join(lines + [lines[2]]))  # s1,q2 again, on line 8
    with pytest.raises(InputError, match=r"mcqs.csv, line 8, column 'question': MCQ of student "
                       r"'s1' on question 'q2' is given twice \(lines 3 and 8\)"):  # fmt: skip
        load_study(path)


def test_duplicate_ids_in_a_json_list_of_items_name_the_lines(tmp_path):
    path = _study(tmp_path, [])
    items = [json.loads(_item(i)) for i in ("i1", "i2", "i1")]
    (path.parent / "items.json").write_text("[\n" + ",\n".join(json.dumps(x) for x in items)
                                            + "\n]\n")  # fmt: skip
    path.write_text(path.read_text().replace("items.jsonl", "items.json"))
    with pytest.raises(InputError, match=r"item id 'i1' is given twice \(lines 2 and 4\)"):
        load_study(path)
    (path.parent / "items.json").write_text(json.dumps(items[:2]))  # one line: fine
    assert [i["id"] for i in load_study(path).items] == ["i1", "i2"]


def test_a_json_object_of_columns_is_read_as_items(tmp_path):
    path = _study(tmp_path, [])
    path.write_text(yaml.safe_dump({"kind": "open", "items": "items.json"}))
    (path.parent / "items.json").write_text(json.dumps(
        {"id": ["q1", "q2"], "question": ["1+1?", "2+2?"], "correct_answer": [2, 4.0]}))  # fmt: skip
    study = load_study(path)
    assert [(i["id"], i["correct_answer"]) for i in study.items] == [("q1", "2"), ("q2", "4.0")]


# -- ids exactly as written ----------------------------------------------------------------------

BAD_ITEM_IDS = [
    (" i9", "surrounding spaces"),
    ("i9 ", "surrounding spaces"),
    ("i9\u0000", "control character"),  # numpy's astype(str) drops a trailing NUL
    ("i\u00009", "control character"),
    ("i9\t", "surrounding spaces"),
    ("i\u20289", "control character"),
    (None, "non-empty"),
    ("", "non-empty"),
    ({"a": 1}, "JSON object"),
    ([1], "JSON list"),
    (True, "true"),
    ("i\ud800", "unpaired surrogate"),  # cannot be stored or shown as UTF-8
]


@pytest.mark.parametrize(("bad", "why"), BAD_ITEM_IDS)
def test_item_ids_are_taken_exactly_as_written(tmp_path, bad, why):
    path = _study(tmp_path, [_item("i1"), _item(bad)])
    with pytest.raises(InputError, match="items.jsonl, line 2, column 'id'") as err:
        load_study(path)
    assert why in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("agent", [" a", "a ", "a\u0000", "a\u0007b", ""])
def test_agent_ids_are_taken_exactly_as_written(tmp_path, agent):
    path = _study(tmp_path, [_item("i1", json.dumps({agent: "x", "b": "y"}))])
    with pytest.raises(InputError, match="items.jsonl, line 1, column 'replies'"):
        load_study(path)


@pytest.mark.parametrize(
    ("written", "why"),
    [('" help"', "surrounding spaces"), ('"help\\0"', "control character"),
     ('"he\\tlp"', "control character"), ("null", "non-empty"), ("~", "non-empty"),
     ('""', "non-empty"), ("[a, b]", "got a list"), ("{a: 1}", "got a mapping")],
)  # fmt: skip
def test_question_ids_are_taken_exactly_as_written(tmp_path, written, why):
    questions = f"  - id: ok\n    text: Fine?\n  - id: {written}\n    text: Which?\n"
    path = _study(tmp_path, [_item("i1")], questions)
    with pytest.raises(InputError, match="study.yaml, line 9, column 'questions'") as err:
        load_study(path)
    assert why in str(err.value)


@pytest.mark.parametrize(
    ("reply", "why"), [("true", "as text"), ('" "', "non-empty"), ('"x\\ud800"', "surrogate")]
)
def test_replies_are_text(tmp_path, reply, why):
    path = _study(tmp_path, [_item("i1", f'{{"a": {reply}, "b": "y"}}')])
    with pytest.raises(InputError, match="line 1, column 'replies'") as err:
        load_study(path)
    assert why in str(err.value)


def test_ids_written_as_numbers_keep_their_text(tmp_path):
    """``007`` is not ``7`` and ``1.50`` not ``1.5``: the id is the text that was written."""
    questions = '  - {id: 007, text: "Which?"}\n  - {id: 7, text: "Which else?"}\n'
    path = _study(tmp_path, [_item(1), '{"id": 1.50, "context": "c", "replies": {"a": "x", '
                                       '"b": "y"}}'], questions)  # fmt: skip
    study = load_study(path)
    assert [q["id"] for q in study.questions] == ["007", "7"]
    assert [i["id"] for i in study.items] == ["1", "1.50"]


def test_an_mcq_student_is_taken_as_written(tmp_path):
    path = mcq_study(tmp_path / "m")
    csv = path.parent / "mcqs.csv"
    text = csv.read_text()
    csv.write_text(text.replace("\ns2,q1,", "\n007,q1,"))
    assert "007" in load_study(path).students()
    for bad, why in ((" s2", "surrounding spaces"), ("s2\x00", "control character")):
        csv.write_text(text.replace("\ns2,q1,", f'\n"{bad}",q1,'))
        with pytest.raises(InputError, match=r"mcqs.csv, line 5, column 'student'") as err:
            load_study(path)
        assert why in str(err.value)


def test_a_jsonl_line_is_split_at_line_feeds_only(tmp_path):
    """A raw U+2028 inside a reply is part of the reply (``str.splitlines`` split there)."""
    path = _study(tmp_path, [_item("i1", '{"a": "one\u2028two", "b": "y"}'), _item("i2")])
    study = load_study(path)
    assert [i["id"] for i in study.items] == ["i1", "i2"]
    assert study.items[0]["replies"]["a"] == "one\u2028two"


def test_nan_is_not_json(tmp_path):
    path = _study(tmp_path, ['{"id": NaN, "context": "c", "replies": {"a": "x", "b": "y"}}'])
    with pytest.raises(InputError, match="line 1: not valid JSON"):
        load_study(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"ann\n bob\n", "line 2: participant id ' bob' has surrounding spaces"),
     (b"ann\nbob \n", "line 2: participant id 'bob ' has surrounding spaces"),
     (b"ann\nbo\x00b\n", "line 2: participant id 'bo\\x00b' has a control character"),
     (b"ann\nbob\x07\n", "line 2: participant id 'bob\\x07' has a control character"),
     (b"ann\nbob\nann\n", "line 3: participant 'ann' is listed twice (lines 1 and 3)")],
)  # fmt: skip
def test_participant_ids_are_taken_exactly_as_written(tmp_path, cli, content, message):
    people = tmp_path / "people.txt"
    people.write_bytes(content)
    r = cli("study", "invite", comparative_study(tmp_path / "s"), "--participants", people)
    _one_line_refusal(r, message)
    assert not (tmp_path / "s" / "study.db").exists()


def test_a_participants_file_with_crlf_and_blank_lines_reads_the_same(tmp_path):
    people = tmp_path / "people.txt"
    people.write_bytes(b"\xef\xbb\xbfann\r\nbob\r\n\r\n   \ncy")
    assert read_participants(people) == [("ann", 1), ("bob", 2), ("cy", 5)]


def test_a_participant_label_given_in_python_is_not_stripped(tmp_path):
    db = StudyDB(load_study(comparative_study(tmp_path / "s")), f"sqlite:///{tmp_path / 'x.db'}")
    try:
        with pytest.raises(InputError, match="surrounding spaces, got ' ann'"):
            db.invite(["bob", " ann"])
        assert db.status()["participants"] == 0  # every label is checked before anyone is made
    finally:
        db.close()


# -- study.yaml settings -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "message"),
    [("item_per_participant: 2\n", "unknown setting 'item_per_participant'; did you mean "
      "'items_per_participant'?"),
     ("seed: -1\n", "seed must be between 0 and"), ("seed: 9223372036854775808\n", "seed must"),
     ("items_per_participant: 0\n", "items_per_participant must be between 1")],
)  # fmt: skip
def test_study_settings_are_checked(tmp_path, extra, message):
    path = _study(tmp_path, [_item("i1")])
    path.write_text(path.read_text().replace("seed: 1\n", extra))
    with pytest.raises(InputError) as err:
        load_study(path)
    assert message in str(err.value)


def test_a_large_seed_is_read_exactly(tmp_path):
    path = _study(tmp_path, [_item("i1")])
    path.write_text(path.read_text().replace("seed: 1", 'seed: "9223372036854775807"'))
    assert load_study(path).seed == 2**63 - 1


@pytest.mark.parametrize(
    ("change", "column"),
    [(("correct,ai,human,random", "correct,ai,human,"), "source_4"),
     (("correct,ai,human,random", "correct,ai,humans,random"), "source_3"),
     (("correct,ai,human,random", "correct,ai,ai,random"), "source_3")],
)  # fmt: skip
def test_mcq_options_and_sources_are_checked(tmp_path, change, column):
    path = mcq_study(tmp_path / "m")
    csv = path.parent / "mcqs.csv"
    csv.write_text(csv.read_text().replace(*change, 1))
    with pytest.raises(InputError, match=f"line 2, column '{column}'"):
        load_study(path)


def test_an_existing_studys_fingerprint_is_unchanged(tmp_path):
    """Databases made before this change still open: the fingerprint of ordinary items and
    questions is what it was (values computed with the release before issue 24)."""
    assert load_study(comparative_study(tmp_path / "c")).fingerprint == "8b53b5b9da12af10"
    assert load_study(mcq_study(tmp_path / "m")).fingerprint == "e186cb6c97279ec8"


# -- the admin token -----------------------------------------------------------------------------


def _token_file(tmp_path, content: bytes):
    path = tmp_path / "token.txt"
    path.write_bytes(content)
    return path


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"", "the file is empty"), (b"  \n\n", "the file is empty"),
     (b"\xff\xfe", "not UTF-8"), (GOOD_TOKEN.encode() + b"\nsecond\n", "more than one line")],
)  # fmt: skip
def test_an_empty_or_unreadable_token_file_is_refused_not_replaced(tmp_path, cli, content, message):
    """Issue 24: an empty --admin-token-file gave a random token, so each host of a multi-host
    study had its own."""
    path = comparative_study(tmp_path / "s")
    r = cli("study", "serve", path, "--admin-token-file", _token_file(tmp_path, content))
    _one_line_refusal(r, "--admin-token-file", message)
    assert "admin token (use as" not in r.err + r.out


def test_a_missing_or_directory_token_file_is_refused(tmp_path, cli):
    path = comparative_study(tmp_path / "s")
    _one_line_refusal(cli("study", "serve", path, "--admin-token-file", tmp_path / "no.txt"),
                      "file not found")  # fmt: skip
    folder = tmp_path / "a-folder"  # a folder apart from the study's (not one holding its database)
    folder.mkdir()
    _one_line_refusal(cli("study", "serve", path, "--admin-token-file", folder),
                      "expected a file")  # fmt: skip


def test_a_token_file_that_cannot_be_read_is_one_line(tmp_path, cli, monkeypatch):
    import edueval.io

    def denied(path):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(edueval.io, "read_text", denied)
    r = cli("study", "serve", comparative_study(tmp_path / "s"), "--admin-token-file",
            _token_file(tmp_path, GOOD_TOKEN.encode()))  # fmt: skip
    _one_line_refusal(r, "cannot read the file (Permission denied)")


def test_an_empty_token_variable_or_option_is_refused(tmp_path, cli, monkeypatch):
    path = comparative_study(tmp_path / "s")
    monkeypatch.setenv("EDUEVAL_STUDY_ADMIN_TOKEN", "")
    _one_line_refusal(cli("study", "serve", path), "set but empty")
    monkeypatch.delenv("EDUEVAL_STUDY_ADMIN_TOKEN")
    r = cli("study", "serve", path, "--admin-token", "")
    assert r.code == 2 and "--admin-token is empty" in r.err
    r = cli("study", "serve", path, "--admin-token", GOOD_TOKEN, "--admin-token-file",
            _token_file(tmp_path, GOOD_TOKEN.encode()))  # fmt: skip
    _one_line_refusal(r, "not both")


def test_a_token_file_is_read_as_the_token(tmp_path, monkeypatch):
    from edueval.cli.study import _admin_token

    monkeypatch.setenv("EDUEVAL_STUDY_ADMIN_TOKEN", "another-token-that-loses-0123")
    path = _token_file(tmp_path, b"\xef\xbb\xbf  " + GOOD_TOKEN.encode() + b"\r\n")
    assert _admin_token(None, path) == GOOD_TOKEN  # the file wins; BOM, spaces, CRLF dropped
    assert _admin_token(None, None) == "another-token-that-loses-0123"


# -- numeric options -----------------------------------------------------------------------------


def _numeric_options() -> dict[str, object]:
    """``"command option"`` -> the option, for every int/float option of ``edueval study``
    (Typer's own parameter objects carry ``min``/``max`` and the annotation)."""
    from edueval.cli.study import app

    group = typer.main.get_command(app)
    out = {}
    for name, cmd in group.commands.items():
        for p in cmd.params:
            annotation = getattr(getattr(p, "type_descriptor", None), "annotation", None)
            kinds = set(typing.get_args(annotation)) or {annotation}
            if kinds & {int, float} and isinstance(p, click.Option | typer.core.TyperOption):
                out[f"{name} {p.name}"] = p
    return out


def test_every_numeric_option_of_the_study_commands_is_bounded():
    numeric = _numeric_options()
    assert set(numeric) == {"serve port", "serve workers", "invite n"}
    bounds = {key: (p.min, p.max) for key, p in numeric.items()}
    assert all(low is not None and high is not None for low, high in bounds.values()), bounds
    assert bounds["invite n"] == (1, MAX_PARTICIPANTS)
    assert bounds["serve port"] == (1, 65535)


@pytest.mark.parametrize(
    "args",
    [("invite", "--n", "0"), ("invite", "--n", "-3"), ("invite", "--n", str(MAX_PARTICIPANTS + 1)),
     ("invite", "--n", str(2**70)), ("serve", "--port", "70000"), ("serve", "--port", "0"),
     ("serve", "--port", "-1"), ("serve", "--workers", "0"), ("serve", "--workers", "100000")],
)  # fmt: skip
def test_numbers_out_of_range_are_usage_errors(tmp_path, cli, args):
    path = comparative_study(tmp_path / "s")
    r = cli("study", args[0], path, *args[1:])
    assert r.code == 2 and "Traceback" not in r.err
    (error,) = [line for line in r.err_lines if line.startswith("Error:")]
    assert f"Invalid value for '{args[1]}'" in error, r.err
    assert not (tmp_path / "s" / "study.db").exists()


def test_a_participants_file_over_the_limit_is_refused(tmp_path, cli, monkeypatch):
    import edueval.study.inputs as inputs

    monkeypatch.setattr(inputs, "MAX_PARTICIPANTS", 3)
    people = tmp_path / "people.txt"
    people.write_text("a\nb\nc\nd\n")
    r = cli("study", "invite", comparative_study(tmp_path / "s"), "--participants", people)
    _one_line_refusal(r, "line 4", "more than 3 participants")


# -- invites: batched, and the links private -----------------------------------------------------


def test_batched_invites_give_every_participant_their_own_assignments(tmp_path, monkeypatch):
    """Participants are created in batches (one transaction each); numbering, assignments and
    tokens are what one participant at a time gave: participant k gets ``assign_units(k)``."""
    study = load_study(comparative_study(tmp_path / "s", n_items=5, per=4))
    db = StudyDB(study, f"sqlite:///{tmp_path / 'x.db'}")
    monkeypatch.setattr(StudyDB, "BATCH", 2)
    try:
        first = db.invite(["p002", "zed", "zed"])
        assert first[1] == first[2]  # the same label twice: one participant, one token
        rows = db.invite_numbered(5)
        assert [r["label"] for r in rows] == ["p001", "p003", "p004", "p005", "p006"]
        again = db.invite(["zed", "p004"])
        assert again == [first[1], rows[2]]  # inviting twice is harmless
        tokens = [r["token"] for r in first[:2] + rows]
        assert len(set(tokens)) == 7
        for k, token in enumerate(tokens):
            part = db.participant(token)
            assert part["idx"] == k
            units = [(a["item_id"], a["first"], a["second"]) for a in db.assignments_of(part["id"])]
            assert units == assign_units(study, k)
    finally:
        db.close()


def test_the_links_file_is_private_and_replaced_whole(tmp_path, cli):
    path = comparative_study(tmp_path / "s")
    links = tmp_path / "links.csv"
    links.write_text("participant,url\nold,http://127.0.0.1:8000/p/old\n")  # an earlier invite
    os.chmod(links, 0o644)
    old = os.umask(0)
    try:
        r = cli("study", "invite", path, "--n", "3", "--out", links)
    finally:
        os.umask(old)
    assert r.code == 0, r.err
    assert stat.S_IMODE(os.stat(links).st_mode) == 0o600
    table = pd.read_csv(links)
    assert list(table["participant"]) == ["p001", "p002", "p003"]
    assert table["url"].str.match(r"http://127\.0\.0\.1:8000/p/[\w-]{32}$").all()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["links.csv", "s"]  # no temp file left


def test_a_failed_links_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    from edueval.study import export

    target = tmp_path / "links.csv"
    target.write_text("old\n")

    def broken(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(export.os, "replace", broken)
    with pytest.raises(OSError):
        export.write_private(target, "participant,url\n")
    assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["links.csv"]
