"""The MalAlgoQA question table under the declared schema (issue 24, point 1): ids exactly as
written, a column named twice refused, a misspelt column named with the nearest known one --
each a one-line refusal (exit 2) of ``malalgo run`` before any model is asked."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from edueval.io import InputError
from edueval.malalgo import read_questions
from edueval.malalgo.data import QUESTION_SCHEMA
from edueval.misconceptions import generate_items


@pytest.fixture(scope="module")
def items() -> pd.DataFrame:
    return generate_items(3, seed=2)


def _run(cli, tmp_path, path):
    return cli("malalgo", "run", path, "--model", "openai/x", "--base-url",
               "http://127.0.0.1:9/v1", "--out", tmp_path / "o", "--no-cache")  # fmt: skip


def _refused(r, *needles: str) -> None:
    assert r.code == 2, (r.code, r.err)
    assert len(r.err_lines) == 1 and r.err_lines[0].startswith("error: "), r.err
    for needle in needles:
        assert needle in r.err, (needle, r.err)
    assert not (r.err_lines and "Traceback" in r.err)


BAD_CSV_IDS = [
    (" mal1", "surrounding spaces"),
    ("mal1 ", "surrounding spaces"),
    ("mal1\x00", "control characters"),
    ("mal\x07x", "control characters"),
]


@pytest.mark.parametrize(("bad", "why"), BAD_CSV_IDS)
def test_malalgo_run_refuses_an_id_not_taken_as_written(cli, tmp_path, items, bad, why):
    path = tmp_path / "q.csv"
    items.assign(id=[bad, *items["id"][1:]]).to_csv(path, index=False)
    _refused(_run(cli, tmp_path, path), "q.csv", "line 2", "column 'id'", why)
    assert not (tmp_path / "o" / "responses.csv").exists()


@pytest.mark.parametrize(
    ("value", "shown"),
    [(None, "non-empty"), ({"a": 1}, "JSON object"), ([1], "JSON list"), (True, "true/false")],
)
def test_malalgo_run_refuses_a_json_value_that_is_not_an_id(cli, tmp_path, items, value, shown):
    records = items.to_dict(orient="records")
    records[1]["id"] = value
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    _refused(_run(cli, tmp_path, path), "q.jsonl", "line 2", "column 'id'", shown)


def test_malalgo_run_refuses_a_column_named_twice(cli, tmp_path, items):
    path = tmp_path / "q.csv"
    items.to_csv(path, index=False)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines = [lines[0] + ",answer"] + [line + ",A" for line in lines[1:]]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _refused(_run(cli, tmp_path, path), "'answer' twice")


def test_a_misspelt_column_is_refused_with_the_nearest_name(cli, tmp_path, items):
    path = tmp_path / "q.csv"
    items.rename(columns={"rationale_B": "rationale_b"}).to_csv(path, index=False)
    _refused(
        _run(cli, tmp_path, path), "unknown column 'rationale_b'", "did you mean 'rationale_B'"
    )


def test_a_duplicate_id_is_refused_naming_the_line(tmp_path, items):
    path = tmp_path / "q.csv"
    items.assign(id=["m", "m", "n"]).to_csv(path, index=False)
    with pytest.raises(InputError, match="duplicate id") as exc:
        read_questions(path)
    assert exc.value.line == 3


def test_valid_files_read_as_before_ids_exactly_as_written(tmp_path, items):
    path = tmp_path / "q.csv"
    items.assign(id=["007", "1.50", "q 3"]).to_csv(path, index=False)
    got = read_questions(path)
    assert got["id"].tolist() == ["007", "1.50", "q 3"]
    assert got["answer"].tolist() == items["answer"].tolist()
    assert list(got.columns[:11]) == [c.name for c in QUESTION_SCHEMA.columns[:11]]
    # extra columns of malalgo generate (malrule_A, params, ...) are accepted and left out
    assert "params" not in got.columns and "family" in got.columns


# -- responses.csv read back by malalgo score -----------------------------------------------------

RESP_HEAD = "task_id,question_id,kind,choice,is_correct_choice,target,answer_label,status,grade,"\
    "content,dok\n"  # fmt: skip
RESP_ROWS = ["t1,q1,identify,A,True,A,A,json,3,c,1", "t2,q1,identify,B,False,B,B,json,3,c,1",
             "t3,q1,mcq,,False,A,A,json,3,c,1"]  # fmt: skip


@pytest.mark.parametrize(("bad", "why"), [(" q1", "surrounding spaces"), ("q1\x00", "control")])
def test_malalgo_score_refuses_a_question_id_not_as_written(cli, tmp_path, bad, why):
    rows = [RESP_ROWS[0].replace(",q1,", f",{bad},"), *RESP_ROWS[1:]]
    path = tmp_path / "responses.csv"
    path.write_text(RESP_HEAD + "".join(r + "\n" for r in rows), encoding="utf-8")
    r = cli("malalgo", "score", path, "--out", tmp_path / "s")
    _refused(r, "responses.csv", "line 2", "column 'question_id'", why)


def test_a_responses_file_as_written_still_reads(tmp_path):
    from edueval.malalgo.responses import read_responses

    path = tmp_path / "responses.csv"
    path.write_text(RESP_HEAD + "".join(r + "\n" for r in RESP_ROWS), encoding="utf-8")
    df = read_responses(path, ["grade", "content", "dok"])
    assert df["is_correct_choice"].tolist() == [True, False, False]
    assert df["question_id"].tolist() == ["q1"] * 3 and "dok" in df.columns


@pytest.mark.parametrize(
    ("column", "value", "why"),
    [("dok", 5, "an integer in [1, 4]"), ("dok", "", "got empty"), ("grade", "seven", "integer"),
     ("grade", 13, "an integer in [0, 12]"), ("dok", 2.5, "an integer")],
)  # fmt: skip
def test_malalgo_run_refuses_a_grade_or_dok_out_of_range(cli, tmp_path, items, column, value, why):
    path = tmp_path / "q.csv"
    df = items.astype({column: object})
    df.loc[1, column] = value
    df.to_csv(path, index=False)
    _refused(_run(cli, tmp_path, path), "q.csv", "line 3", f"column '{column}'", why)
