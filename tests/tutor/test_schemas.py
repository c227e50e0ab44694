"""The tutor's inputs under their declared schemas (issue 24, point 1): dialogue ids and the ids of
a replies table (dialogue, turn, model: they become the study's item ids and agents) are taken
exactly as written; a key given twice is refused -- each a one-line refusal, exit 2."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from edueval.io import InputError
from edueval.tutor import read_dialogues
from edueval.tutor.study import REPLIES_SCHEMA

TURNS = [{"speaker": "student", "text": "Is it 5?"}, {"speaker": "teacher", "text": "Why 5?"}]


def _refused(r, *needles: str) -> None:
    assert r.code == 2, (r.code, r.err)
    assert len(r.err_lines) == 1 and r.err_lines[0].startswith("error: "), r.err
    for needle in needles:
        assert needle in r.err, (needle, r.err)


def _replies(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"dialogue": d, "turn": t, "model": m, "context": "Student: is it 5?",
          "real_reply": "Why do you think it is five?", "ai_reply": "How did you get 5?",
          "status": "ok"} for d, t, m in rows]
    )  # fmt: skip


GOOD = [("d1", 1, "m"), ("d2", 1, "m"), ("d3", 1, "m")]


def _make_study(cli, tmp_path, df: pd.DataFrame):
    path = tmp_path / "replies.csv"
    df.to_csv(path, index=False)
    return cli("tutor", "make-study", path, "--out", tmp_path / "st", "--select", "all")


@pytest.mark.parametrize(
    ("column", "value", "why"),
    [("dialogue", " d2", "surrounding spaces"), ("dialogue", "d2\x00", "control characters"),
     ("model", "m\x07", "control characters"), ("turn", "", "got empty"),
     ("turn", "x", "an integer"), ("turn", "0", "an integer in [1")],
)  # fmt: skip
def test_make_study_refuses_an_id_not_as_written(cli, tmp_path, column, value, why):
    df = _replies(GOOD).astype({"turn": object})
    if column == "model":
        df["model"] = value
    else:
        df.loc[1, column] = value
    _refused(_make_study(cli, tmp_path, df), "replies.csv", f"column '{column}'", why)
    assert not (tmp_path / "st" / "items.jsonl").exists()


def test_make_study_refuses_a_turn_given_twice(cli, tmp_path):
    df = _replies([*GOOD, ("d1", 1, "m")])
    _refused(_make_study(cli, tmp_path, df), "replies.csv", "line 5", "duplicate")


def test_make_study_refuses_two_models_in_one_table(cli, tmp_path):
    df = _replies([("d1", 1, "m"), ("d2", 1, "other")])
    _refused(_make_study(cli, tmp_path, df), "line 3", "column 'model'", "one model")


def test_make_study_refuses_a_column_named_twice(cli, tmp_path):
    path = tmp_path / "replies.csv"
    _replies(GOOD).to_csv(path, index=False)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0] + ",ai_reply"] + [x + ",x" for x in lines[1:]]) + "\n")
    r = cli("tutor", "make-study", path, "--out", tmp_path / "st", "--select", "all")
    _refused(r, "'ai_reply' twice")


def test_make_study_reads_a_valid_table_as_before(cli, tmp_path):
    r = _make_study(cli, tmp_path, _replies(GOOD))
    assert r.code == 0, r.err
    items = [json.loads(x) for x in (tmp_path / "st" / "items.jsonl").read_text().splitlines()]
    assert [i["id"] for i in items] == ["d1:1", "d2:1", "d3:1"]
    assert REPLIES_SCHEMA.key == ("dialogue", "turn")


# -- dialogues (tutor reply) ----------------------------------------------------------------------


def _reply(cli, tmp_path, records: list[dict]):
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return cli("tutor", "reply", path, "--model", "openai/x", "--base-url", "http://127.0.0.1:9",
               "--out", tmp_path / "run", "--no-cache")  # fmt: skip


@pytest.mark.parametrize(
    ("value", "why"),
    [(" d2", "surrounding spaces"), ("d2\x00", "control character"), ("d\u20282", "control"),
     (None, "got null"), ({"a": 1}, "got {"), (["d2"], "got ["), (True, "got true"),
     (2.5, "got 2.5"), ("", "non-empty")],
)  # fmt: skip
def test_tutor_reply_refuses_a_dialogue_id_not_as_written(cli, tmp_path, value, why):
    records = [{"id": "d1", "turns": TURNS}, {"id": value, "turns": TURNS}]
    _refused(_reply(cli, tmp_path, records), "d.jsonl", "line 2", "column 'id'", why)


def test_a_misspelt_dialogue_key_is_refused_with_the_nearest_name(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"id": "d1", "turn": TURNS}) + "\n")
    with pytest.raises(InputError, match=r"unknown key 'turn' \(did you mean 'turns'\?\)"):
        read_dialogues(path)


def test_dialogue_ids_written_as_numbers_keep_their_text(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"id": i, "turns": TURNS, "source": "x"}) + "\n"
                            for i in (7, "007")))  # fmt: skip
    assert [d["id"] for d in read_dialogues(path)] == ["7", "007"]


# -- the NCTE uptake CSV (tutor import-ncte) ------------------------------------------------------

NCTE_HEAD = "obs_id,exchange_idx,student_text,teacher_text,uptake\n"


@pytest.mark.parametrize(
    ("text", "needles"),
    [(NCTE_HEAD + "1,2,It is four.,Why four?,2.5\n", ("line 2", "column 'uptake'", "[0, 2]")),
     (NCTE_HEAD + "1,2,It is four.,Why four?,-0.5\n", ("line 2", "column 'uptake'")),
     (NCTE_HEAD.replace("uptake", "uptke") + "1,2,a,b,1\n", ("unknown column 'uptke'",
                                                              "did you mean 'uptake'?")),
     (NCTE_HEAD + " 1,2,It is four.,Why four?,1\n", ("line 2", "column 'obs_id'"))],
)  # fmt: skip
def test_import_ncte_refuses_a_bad_table(cli, tmp_path, text, needles):
    path = tmp_path / "u.csv"
    path.write_text(text)
    _refused(cli("tutor", "import-ncte", path, "--out", tmp_path / "d.jsonl"), "u.csv", *needles)


def test_import_ncte_reads_an_empty_rating_as_missing(cli, tmp_path):
    path = tmp_path / "u.csv"
    path.write_text(NCTE_HEAD + "1,2,It is four.,Why four?,\n3,4,Five?,Why?,1.5\n")
    assert cli("tutor", "import-ncte", path, "--out", tmp_path / "d.jsonl").code == 0
    metas = [d["meta"]["uptake"] for d in read_dialogues(tmp_path / "d.jsonl")]
    assert metas == [None, 1.5]
