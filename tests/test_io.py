"""Readers and validators of edueval.io: what they accept, and how they name the bad cell."""

from __future__ import annotations

import hashlib
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from edueval.io import (
    InputError,
    binary_column,
    check_unique,
    file_sha256,
    line_of,
    numeric_column,
    read_table,
    require_columns,
    text_column,
)

# --------------------------------------------------------------------------------------------
# InputError
# --------------------------------------------------------------------------------------------


def test_input_error_full_location():
    err = InputError("expected 0 or 1, got 2", file="data.csv", line=7, column="correct")
    assert str(err) == "data.csv, line 7, column 'correct': expected 0 or 1, got 2"
    assert (err.file, err.line, err.column, err.message) == (
        "data.csv",
        7,
        "correct",
        "expected 0 or 1, got 2",
    )


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, "boom"),
        ({"file": "a.csv"}, "a.csv: boom"),
        ({"file": "a.csv", "line": 2}, "a.csv, line 2: boom"),
        ({"file": "a.csv", "column": "x"}, "a.csv, column 'x': boom"),
        ({"line": 3, "column": "x"}, "line 3, column 'x': boom"),
        ({"file": "a.csv", "line": 0}, "a.csv, line 0: boom"),
    ],
)
def test_input_error_partial_location(kwargs, expected):
    assert str(InputError("boom", **kwargs)) == expected


def test_input_error_is_always_one_line(tmp_path):
    err = InputError("first part\nsecond   part\r\n\tthird", file=tmp_path / "f.csv", line=2)
    text = str(err)
    assert "\n" not in text and "\r" not in text and "\t" not in text
    assert text == f"{tmp_path / 'f.csv'}, line 2: first part second part third"
    assert isinstance(err.file, str)


def test_input_error_is_an_exception_with_its_text():
    with pytest.raises(InputError, match=r"^f.csv, line 4: bad$"):
        raise InputError("bad", file="f.csv", line=4)


# --------------------------------------------------------------------------------------------
# read_table
# --------------------------------------------------------------------------------------------


def test_read_csv(write):
    path = write("t.csv", "a,b\n1,x\n2,y\n")
    df = read_table(path)
    assert list(df.columns) == ["a", "b"]
    assert df["a"].tolist() == [1, 2]
    assert df.attrs["file"] == str(path)
    assert df.attrs["kind"] == "csv"


def test_read_txt_is_csv(write):
    df = read_table(write("t.txt", "a,b\n1,x\n"))
    assert df.attrs["kind"] == "csv" and df["b"].tolist() == ["x"]


def test_read_tsv(write):
    df = read_table(write("t.tsv", "a\tb\n1\tx,y\n"))
    assert df.attrs["kind"] == "tsv"
    assert df["b"].tolist() == ["x,y"]


@pytest.mark.parametrize("suffix", [".jsonl", ".ndjson", ".JSONL"])
def test_read_jsonl(write, suffix):
    path = write("t" + suffix, '{"a": 1, "b": "x"}\n\n{"a": 2, "b": "y", "c": true}\n')
    df = read_table(path)
    assert df.attrs["kind"] == "jsonl"
    assert df["a"].tolist() == [1, 2]
    assert df["c"].isna().tolist() == [True, False]


@pytest.mark.parametrize(
    "content", ['[{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]', '{"a": 1, "b": "x"}']
)
def test_read_json(write, content):
    df = read_table(write("t.json", content))
    assert df.attrs["kind"] == "json"
    assert df["a"].iloc[0] == 1 and df["b"].iloc[0] == "x"


def test_read_text_columns(write):
    df = read_table(write("t.csv", "id,v\n007,1\nNA,2\n"), text_columns=["id"])
    assert df["id"].tolist() == ["007", "NA"]
    df = read_table(
        write("t.jsonl", '{"id": 7, "v": 1}\n{"id": "007", "v": 2}\n'), text_columns=["id"]
    )
    assert df["id"].tolist() == ["7", "007"]


@pytest.mark.parametrize(
    ("name", "content", "pattern"),
    [
        ("t.csv", "", "empty"),
        ("t.jsonl", "", "empty"),
        ("t.csv", "a,b\n", "no data rows"),
        ("t.jsonl", "\n\n", "no data rows"),
        ("t.json", "[]", "no data rows"),
        ("t.xlsx", "a,b\n1,2\n", "unknown file type '.xlsx'"),
        ("t", "a,b\n1,2\n", r"unknown file type '\(none\)'"),
        ("t.csv", "a,b\n1,2\n3,4,5,6\n", "cannot parse as CSV"),
        ("t.json", '{"a": 1,,}', "not valid JSON"),
        ("t.json", "[1, 2]", "JSON list of objects"),
        ("t.json", '"text"', "JSON list of objects"),
    ],
)
def test_read_table_errors(write, name, content, pattern):
    path = write(name, content)
    with pytest.raises(InputError, match=pattern) as info:
        read_table(path)
    assert info.value.file == str(path)
    assert str(info.value).startswith(f"{path}")


def test_read_table_missing_file(tmp_path):
    with pytest.raises(InputError, match="file not found") as info:
        read_table(tmp_path / "nope.csv")
    assert info.value.file == str(tmp_path / "nope.csv")


def test_read_table_directory(tmp_path):
    with pytest.raises(InputError, match="directory"):
        read_table(tmp_path)


def test_read_table_not_utf8(write):
    with pytest.raises(InputError, match="UTF-8"):
        read_table(write("t.csv", "a,b\n\xe9,1\n".encode("latin-1")))


@pytest.mark.parametrize(
    ("content", "line"),
    [
        ('{"a": 1}\n{"a": 2,}\n', 2),
        ('{"a": 1}\n{"a": 2}\n{"a": 3\n', 3),
        ('not json\n{"a": 1}\n', 1),
    ],
)
def test_read_jsonl_bad_line_number(write, content, line):
    path = write("t.jsonl", content)
    with pytest.raises(InputError, match="not valid JSON") as info:
        read_table(path)
    assert info.value.line == line
    assert f"{path}, line {line}: " in str(info.value)


def test_read_jsonl_not_an_object(write):
    with pytest.raises(InputError, match="JSON object") as info:
        read_table(write("t.jsonl", '{"a": 1}\n"x"\n'))
    assert info.value.line == 2


def test_read_json_error_line(write):
    with pytest.raises(InputError) as info:
        read_table(write("t.json", '[\n{"a": 1},\n{"a": 2,}\n]'))
    assert info.value.line == 3


# --------------------------------------------------------------------------------------------
# line_of: the CSV header is line 1, so data row 0 is on line 2; JSONL row 0 is line 1
# --------------------------------------------------------------------------------------------


def test_line_of_csv_and_jsonl(write):
    csv = read_table(write("t.csv", "a\n10\n20\n30\n"))
    assert [line_of(csv, i) for i in range(3)] == [2, 3, 4]
    tsv = read_table(write("t.tsv", "a\n10\n20\n"))
    assert line_of(tsv, 0) == 2
    jsonl = read_table(write("t.jsonl", '{"a": 10}\n{"a": 20}\n'))
    assert [line_of(jsonl, i) for i in range(2)] == [1, 2]
    js = read_table(write("t.json", '[{"a": 10}]'))
    assert line_of(js, 0) is None
    assert line_of(pd.DataFrame({"a": [1]}), 0) is None


def test_line_of_jsonl_with_blank_line(write):
    df = read_table(write("t.jsonl", '{"a": 1}\n\n{"a": 2}\n'))
    with pytest.raises(InputError) as info:
        binary_column(df.assign(a=[1, 7]), "a")
    assert info.value.line == 3


def test_line_of_csv_with_blank_line(write):
    df = read_table(write("t.csv", "a\n1\n\n7\n"))
    with pytest.raises(InputError) as info:
        binary_column(df, "a")
    assert info.value.line == 4


# --------------------------------------------------------------------------------------------
# require_columns
# --------------------------------------------------------------------------------------------


def test_require_columns_ok(write):
    df = read_table(write("t.csv", "a,b\n1,2\n"))
    require_columns(df, ["a", "b"])
    require_columns(df, [])


def test_require_columns_names_missing_and_present(write):
    path = write("t.csv", "a,b\n1,2\n")
    df = read_table(path)
    with pytest.raises(InputError) as info:
        require_columns(df, ["a", "c"])
    assert str(info.value) == f"{path}: missing column 'c'; the file has: a, b"
    with pytest.raises(InputError, match=r"missing columns 'c', 'd' \(the ids\)"):
        require_columns(df, ["c", "a", "d"], what="the ids")


# --------------------------------------------------------------------------------------------
# binary_column
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "values",
    [
        [0, 1, 1, 0],
        [0.0, 1.0, 1.0, 0.0],
        [False, True, True, False],
        ["0", "1", "1", "0"],
        ["false", "TRUE", " 1 ", "0.0"],
        ["0", 1, "1.0", False],
    ],
)
def test_binary_column_accepts(values):
    out = binary_column(pd.DataFrame({"c": values}), "c")
    assert out.dtype == np.int8
    assert out.tolist() == [0, 1, 1, 0]


def test_binary_column_from_csv(write):
    df = read_table(write("t.csv", "c\n1\n0\ntrue\nFalse\n"))
    assert binary_column(df, "c").tolist() == [1, 0, 1, 0]


@pytest.mark.parametrize(
    ("text", "line", "shown"),
    [
        ("c\n1\n2\n", 3, "got 2"),
        ("c\n1\n0\n-1\n", 4, "got -1"),
        ("c\n0.5\n1\n", 2, "got 0.5"),
        ("c\n1\n\n0\n", None, None),  # blank line is skipped by the CSV reader
        ("c,d\n1,x\n,y\n", 3, "got empty"),
        ("c,d\n1,x\nNaN,y\n", 3, "got 'NaN'"),
        ("c\n1\nyes\n", 3, "got 'yes'"),
        ("c\nno\n1\n", 2, "got 'no'"),
    ],
)
def test_binary_column_names_first_bad_line(write, text, line, shown):
    path = write("t.csv", text)
    df = read_table(path)
    if line is None:
        assert binary_column(df, "c").tolist() == [1, 0]
        return
    with pytest.raises(InputError) as info:
        binary_column(df, "c")
    err = info.value
    assert (err.file, err.line, err.column) == (str(path), line, "c")
    assert str(err) == f"{path}, line {line}, column 'c': expected 0 or 1, {shown}"


def test_binary_column_counts_bad_rows(write):
    df = read_table(write("t.csv", "c\n1\n3\n0\n4\n5\n"))
    with pytest.raises(InputError, match=r"got 3 \(3 bad rows in all\)") as info:
        binary_column(df, "c")
    assert info.value.line == 3


def test_binary_column_jsonl_line(write):
    df = read_table(write("t.jsonl", '{"c": 1}\n{"c": 0}\n{"c": "maybe"}\n'))
    with pytest.raises(InputError) as info:
        binary_column(df, "c")
    assert info.value.line == 3
    assert "'maybe'" in str(info.value)


def test_binary_column_shows_numpy_values_as_python():
    with pytest.raises(InputError) as info:
        binary_column(pd.DataFrame({"c": np.array([1, 2], dtype=np.int64)}), "c")
    assert "np." not in str(info.value)
    assert str(info.value).endswith("expected 0 or 1, got 2")


# --------------------------------------------------------------------------------------------
# numeric_column
# --------------------------------------------------------------------------------------------


def test_numeric_column_values(write):
    df = read_table(write("t.csv", "x\n0.5\n1\n-2e-3\n"))
    out = numeric_column(df, "x")
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [0.5, 1.0, -0.002])


def test_numeric_column_numbers_as_text():
    out = numeric_column(pd.DataFrame({"x": ["1", " 2.5", "3"]}), "x")
    np.testing.assert_array_equal(out, [1.0, 2.5, 3.0])


def test_numeric_column_integer(write):
    df = read_table(write("t.csv", "x\n1\n2.0\n3\n"))
    out = numeric_column(df, "x", integer=True)
    assert out.dtype == np.int64 and out.tolist() == [1, 2, 3]


@pytest.mark.parametrize(
    ("text", "kwargs", "line", "message"),
    [
        ("x\n0.2\n1.5\n", {"low": 0.0, "high": 1.0}, 3, "expected a number in [0.0, 1.0], got 1.5"),
        ("x\n0.2\n-1\n", {"low": 0}, 3, "expected a number in [0, inf], got -1.0"),
        ("x\n5\n0.2\n", {"high": 1}, 2, "expected a number in [-inf, 1], got 5.0"),
        ("x\n0.2\nabc\n", {}, 3, "expected a number, got 'abc'"),
        ("x,y\n0.2,a\n,b\n", {}, 3, "expected a number, got empty"),
        ("x\n0.2\ninf\n", {}, 3, "expected a number, got inf"),
        ("x\n1\n2.5\n", {"integer": True}, 3, "expected an integer, got 2.5"),
    ],
)
def test_numeric_column_errors(write, text, kwargs, line, message):
    path = write("t.csv", text)
    with pytest.raises(InputError) as info:
        numeric_column(read_table(path), "x", **kwargs)
    assert str(info.value) == f"{path}, line {line}, column 'x': {message}"


def test_numeric_column_bounds_inclusive():
    out = numeric_column(pd.DataFrame({"x": [0.0, 1.0]}), "x", low=0.0, high=1.0)
    assert out.tolist() == [0.0, 1.0]


# --------------------------------------------------------------------------------------------
# text_column and check_unique
# --------------------------------------------------------------------------------------------


def test_text_column(write):
    df = read_table(write("t.csv", "s\nab\n12\n"))
    assert text_column(df, "s").tolist() == ["ab", "12"]


@pytest.mark.parametrize("text", ["s,t\nab,1\n,2\n", 's,t\nab,1\n"  ",2\n'])
def test_text_column_refuses_empty(write, text):
    path = write("t.csv", text)
    with pytest.raises(InputError, match="expected a non-empty value") as info:
        text_column(read_table(path), "s")
    assert (info.value.line, info.value.column) == (3, "s")


def test_check_unique(write):
    path = write("t.csv", "k,v\na,1\nb,2\na,3\n")
    df = read_table(path)
    check_unique(df, ["v"], what="value")
    with pytest.raises(InputError) as info:
        check_unique(df, ["k"], what="key")
    assert str(info.value) == f"{path}, line 4: duplicate key (k='a')"


# --------------------------------------------------------------------------------------------
# file_sha256
# --------------------------------------------------------------------------------------------


def test_file_sha256_matches_hashlib(tmp_path):
    data = np.random.default_rng(0).bytes(3 << 20)  # more than one 1 MiB block
    path = tmp_path / "blob.bin"
    path.write_bytes(data)
    assert file_sha256(path) == hashlib.sha256(data).hexdigest()
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert file_sha256(empty) == hashlib.sha256(b"").hexdigest()


def test_jsonl_records_keep_types(write):
    rows = [{"a": 1, "b": "x", "c": None}, {"a": 2, "b": "y", "c": 0.5}]
    df = read_table(write("t.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n"))
    assert df["b"].tolist() == ["x", "y"]
    assert df["c"].isna().tolist() == [True, False]


def test_large_file_with_a_mixed_column_reads_without_warning(tmp_path):
    # pandas' chunked reader types each chunk on its own and warns (DtypeWarning) when a column
    # changes type after the first chunk; read_table reads in one pass
    n = 300_000
    text = "student,skill,correct,note\n" + "".join(
        f"u{i % 50},s,{i % 2},{i if i < 250_000 else 'x'}\n" for i in range(n)
    )
    path = tmp_path / "big.csv"
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = read_table(path, text_columns={"student", "skill"})
    assert len(df) == n
    assert df["note"].iloc[-1] == "x"
