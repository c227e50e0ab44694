"""The declared-schema layer (edueval.tables) and the header rules every reader applies."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from edueval.io import InputError, read_table
from edueval.kt.bkt.params import read_params
from edueval.kt.bkt.variants import read_long_table, read_param_file
from edueval.tables import Col, Schema, check_complete, near_miss

WIDE = "skill,prior,learn,guess,slip,forget\ns0,0.3,0.2,0.1,0.1,0.05\ns1,0.4,0.1,0.2,0.1,0.0\n"


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_near_miss_ignores_case_and_punctuation():
    assert near_miss("forgt", ["prior", "learn", "forget"]) == "forget"
    assert near_miss("Student_ID", ["student_id", "skill"]) == "student_id"
    assert near_miss("zzz", ["prior", "learn"]) is None


def test_misspelled_parameter_column_is_refused_with_the_nearest_name(tmp_path):
    path = _write(tmp_path, "p.csv", WIDE.replace("forget", "forgt"))
    with pytest.raises(InputError, match=r"unknown column 'forgt' \(did you mean 'forget'\?\)"):
        read_params(path)


def test_fit_statistics_written_by_kt_fit_are_read_back(tmp_path):
    text = "skill,prior,learn,guess,slip,forget,log_likelihood,n_iter,converged\n" \
        "s0,0.3,0.2,0.1,0.1,0.0,-10.5,12,True\n"  # fmt: skip
    params = read_params(_write(tmp_path, "p.csv", text))
    assert list(params.columns) == ["prior", "learn", "guess", "slip", "forget"]
    assert params.loc["s0", "learn"] == 0.2


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("p.csv", "skill,prior,learn,prior,guess,slip\ns0,0.3,0.2,0.9,0.1,0.1\n"),
        ("p.tsv", "skill\tprior\tlearn\tprior\tguess\tslip\ns0\t0.3\t0.2\t0.9\t0.1\t0.1\n"),
        ("p.jsonl", '{"skill": "s0", "prior": 0.3, "learn": 0.2, "prior": 0.9, "guess": 0.1,'
                    ' "slip": 0.1}\n'),
        ("p.json", '[{"skill": "s0", "prior": 0.3, "prior": 0.9, "learn": 0.2, "guess": 0.1,'
                   ' "slip": 0.1}]'),
    ],
)  # fmt: skip
def test_a_column_named_twice_is_refused_in_every_format(tmp_path, name, text):
    with pytest.raises(InputError, match="'prior' twice"):
        read_table(_write(tmp_path, name, text))


def test_a_column_named_twice_in_parquet_is_refused(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    table = pa.table([pa.array(["s0"]), pa.array([0.3]), pa.array([0.9])],
                     names=["skill", "prior", "prior"])  # fmt: skip
    pq.write_table(table, tmp_path / "p.parquet")
    with pytest.raises(InputError, match="'prior' twice"):
        read_table(tmp_path / "p.parquet")


def _long(rows):
    return "skill,parameter,group,value\n" + "".join(f"{r}\n" for r in rows)


LONG = [f"s{k},{p},*,{v}" for k in (0, 1) for p, v in
        (("prior", 0.3), ("learn", 0.2), ("guess", 0.1), ("slip", 0.1))]  # fmt: skip


def test_a_long_parameter_file_missing_one_row_is_refused(tmp_path):
    rows = [r for r in LONG if r != "s0,slip,*,0.1"]
    with pytest.raises(InputError, match=r"no 'slip' for skill 's0'"):
        read_param_file(_write(tmp_path, "long.csv", _long(rows)))
    wide = read_param_file(_write(tmp_path, "ok.csv", _long(LONG)))
    assert wide.loc["s0", "slip"] == 0.1 and wide.loc["s1", "forget"] == 0.0


def test_a_key_given_twice_in_a_fixed_table_is_refused(tmp_path):
    text = "parameter,value\nguess,0.1\nslip,0.2\nguess,0.3\n"
    with pytest.raises(InputError, match="duplicate") as exc:
        read_long_table(_write(tmp_path, "fixed.csv", text))
    assert exc.value.line == 4


def test_a_misspelled_parameter_name_in_a_long_table_is_refused(tmp_path):
    with pytest.raises(InputError, match=r"unknown parameter 'forgt' \(did you mean 'forget'\?\)"):
        read_long_table(_write(tmp_path, "fixed.csv", "parameter,value\nforgt,0.1\n"))


def test_schema_open_tables_keep_unknown_columns_but_refuse_near_misses():
    schema = Schema("response file", (Col("student", "id"), Col("correct", "binary"),
                                      Col("order", "order", required=False)))  # fmt: skip
    ok = schema.validate(pd.DataFrame({"student": ["a"], "correct": [1], "school": ["x"]}))
    assert list(ok.columns) == ["student", "correct"]
    with pytest.raises(InputError, match=r"unknown column 'ordr' \(did you mean 'order'\?\)"):
        schema.validate(pd.DataFrame({"student": ["a"], "correct": [1], "ordr": [1]}))
    with pytest.raises(InputError, match=r"unknown column 'Correct' \(did you mean 'correct'"):
        schema.validate(pd.DataFrame({"student": ["a"], "Correct": [1]}))
    with pytest.raises(InputError, match=r"missing column 'correct'"):
        schema.validate(pd.DataFrame({"student": ["a"], "right": [1]}))


def test_schema_converts_by_kind_and_checks_the_key():
    schema = Schema("t", (Col("id", "id"), Col("p", "number", low=0, high=1)), key=("id",))
    out = schema.validate(pd.DataFrame({"id": [1, 2], "p": ["0.5", 1]}))
    assert out["id"].tolist() == ["1", "2"] and np.allclose(out["p"], [0.5, 1.0])
    with pytest.raises(InputError, match="duplicate"):
        schema.validate(pd.DataFrame({"id": ["a", "a"], "p": [0.1, 0.2]}))
    with pytest.raises(InputError, match=r"in \[0, 1\]"):
        schema.validate(pd.DataFrame({"id": ["a"], "p": [1.5]}))
    with pytest.raises(InputError, match="control character"):
        schema.validate(pd.DataFrame({"id": ["a\x00"], "p": [0.5]}))


def test_renamed_columns_are_read_from_the_file_name():
    schema = Schema("t", (Col("student", "id"),)).renamed(student="user_id")
    out = schema.validate(pd.DataFrame({"user_id": ["u1"]}))
    assert out["student"].tolist() == ["u1"]
    with pytest.raises(InputError, match="missing column 'user_id'"):
        schema.validate(pd.DataFrame({"student": ["u1"]}))


def test_check_complete_names_the_first_gap():
    df = pd.DataFrame({"skill": ["a", "a", "b"], "parameter": ["x", "y", "x"]})
    check_complete(df[df.skill == "a"], "skill", "parameter", ["x", "y"], what="t")
    with pytest.raises(InputError, match="no 'y' for skill 'b'"):
        check_complete(df, "skill", "parameter", ["x", "y"], what="t")


def test_json_duplicate_keys_are_refused_in_json_documents(tmp_path):
    from edueval.io import load_json

    with pytest.raises(InputError, match="names the key 'a' twice"):
        load_json(json.dumps({"b": 1})[:-1] + ', "a": 1, "a": 2}')


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("a,b,c\n1,2,3\n4,5\n", 3),
        ('a,b,c\n1,"x\ny",3\n4,5\n', 4),
        ("a,b,c\n1,2,3\n\n4,5,6\n7\n", 5),
    ],
)
def test_a_row_with_fewer_fields_than_the_header_is_refused(tmp_path, text, line):
    with pytest.raises(InputError, match="has 2 fields but the header has 3|has 1 field ") as exc:
        read_table(_write(tmp_path, "t.csv", text))
    assert exc.value.line == line


def test_blank_lines_do_not_turn_integer_columns_into_floats(tmp_path):
    df = read_table(_write(tmp_path, "t.csv", "a,b\n1,2\n\n3,4\n\n"))
    assert df["a"].dtype.kind == "i" and df.index.tolist() == [2, 4]
