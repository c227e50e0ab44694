"""Readers and validators of edueval.io: what they accept, and how they name the bad cell."""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
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


# --------------------------------------------------------------------------------------------
# Issue 24, readers: bounded nesting, JSON columns, JSONL lines, exact orders, multi-line CSV
# fields, identifiers checked as read
# --------------------------------------------------------------------------------------------

DEEP = 100_000


def _depth(value: object) -> int:
    """Nesting of lists/objects, by recursion over the parsed value (the reference)."""
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


@pytest.mark.parametrize(
    ("name", "content", "line"),
    [
        ("t.json", "[" * DEEP + "]" * DEEP, 1),
        ("t.json", '[\n{"a": 1},\n{"a": ' + "[" * DEEP + "]" * DEEP + "}\n]", 3),
        ("t.jsonl", '{"a": 1}\n\n{"a": ' + "{" * DEEP + "\n", 3),
        ("t.jsonl", '{"a": 1}\n{"a": ' + '{"b": ' * DEEP + "1" + "}" * DEEP + "}\n", 2),
    ],
    ids=["json-lists", "json-row-value", "jsonl-unclosed", "jsonl-objects"],
)
def test_json_nested_too_deep_is_one_line(write, name, content, line):
    path = write(name, content)
    with pytest.raises(InputError, match="nested more than 100 levels deep") as info:
        read_table(path)
    assert (info.value.file, info.value.line) == (str(path), line)


def test_jsonl_reports_the_first_bad_line_before_a_deeper_one(write):
    # an unbalanced line 2 leaves the whole-file scan deep; the error is still line 2's own
    path = write("t.jsonl", '{"a": 1}\n{"a": [[[}\n{"a": ' + "[" * DEEP + "]" * DEEP + "}\n")
    with pytest.raises(InputError, match="not valid JSON") as info:
        read_table(path)
    assert info.value.line == 2


def test_json_at_the_depth_bound_is_read(write):
    from edueval.io import MAX_JSON_DEPTH, load_json

    inner = "[" * (MAX_JSON_DEPTH - 1) + "]" * (MAX_JSON_DEPTH - 1)  # row object + 99 lists
    df = read_table(write("t.jsonl", '{"a": ' + inner + "}\n"))
    assert _depth(df["a"].iloc[0]) == MAX_JSON_DEPTH - 1
    assert _depth(load_json("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH)) == MAX_JSON_DEPTH
    with pytest.raises(InputError, match="nested"):
        load_json("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1))


def test_brackets_and_escaped_quotes_inside_strings_do_not_count(write):
    tricky = {"a": "[" * 500, "b": '\\"' + "{" * 300, "c": "\\\\", "d": "x\\" + '"[[[', "e": 1}
    path = write("t.jsonl", json.dumps(tricky) + "\n" + json.dumps({"a": "]" * 500}) + "\n")
    df = read_table(path)
    assert df["a"].iloc[0] == "[" * 500 and df["b"].iloc[0] == '\\"' + "{" * 300


def test_json_depth_scan_agrees_with_the_parser_on_random_documents():
    from edueval.io import _json_brackets

    rng = np.random.default_rng(24)
    pieces = ["[", "]", "{", "}", '"', "\\", "\\\\", '\\"', "x", "\u2028", "é"]

    def value(level: int) -> object:
        kind = rng.integers(0, 4) if level < 12 else 3
        if kind == 0:
            return [value(level + 1) for _ in range(rng.integers(0, 3))]
        if kind == 1:
            return {str(k): value(level + 1) for k in range(rng.integers(0, 3))}
        if kind == 2:
            return int(rng.integers(-5, 5))
        return "".join(rng.choice(pieces, size=rng.integers(0, 6)))

    for _ in range(300):
        doc = value(0)
        text = json.dumps(doc, ensure_ascii=bool(rng.integers(0, 2)), indent=rng.choice([None, 1]))
        _, depth = _json_brackets(text.encode())
        assert (int(depth.max()) if len(depth) else 0) == _depth(doc), text
        assert len(depth) == 0 or depth[-1] == 0


def test_yaml_nested_too_deep_is_one_line():
    from edueval.io import load_yaml

    with pytest.raises(InputError, match="nested more than 100 levels deep") as info:
        load_yaml("[" * DEEP + "]" * DEEP, file="x.yaml")
    assert info.value.line == 1
    block = "".join("  " * i + "- \n" for i in range(150))
    with pytest.raises(InputError, match="nested") as info:
        load_yaml(block, file="x.yaml")
    assert info.value.line == 101
    assert load_yaml("a: [1, {b: 2}]\nc: x\n") == {"a": [1, {"b": 2}], "c": "x"}
    at_bound = load_yaml("[" * 100 + "x" + "]" * 100)  # as deep as JSON allows: read
    assert _depth(at_bound) == 100
    with pytest.raises(InputError, match="nested"):
        load_yaml("[" * 101 + "x" + "]" * 101)
    with pytest.raises(InputError, match=r"not valid YAML") as info:
        load_yaml("a: [1\nb: 2\n", file="x.yaml")
    assert info.value.file == "x.yaml" and info.value.line is not None


ROWS = [{"student": "s1", "skill": "add", "correct": 1}, {"student": "007", "skill": "sub",
        "correct": 0}, {"student": "s3", "skill": "add", "correct": 1}]  # fmt: skip


def test_json_object_of_columns_is_a_table(write):
    columns = {k: [r[k] for r in ROWS] for k in ROWS[0]}
    as_columns = read_table(write("c.json", json.dumps(columns)), text_columns=["student"])
    as_rows = read_table(write("r.json", json.dumps(ROWS)), text_columns=["student"])
    pd.testing.assert_frame_equal(as_columns, as_rows)
    assert as_columns["student"].tolist() == ["s1", "007", "s3"]
    # pandas' default to_json: each column keyed by row label
    frame = pd.DataFrame(ROWS)
    labelled = read_table(write("p.json", frame.to_json()))
    pd.testing.assert_frame_equal(labelled.reset_index(drop=True), frame)


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ({"student": ["s1", "s2"], "skill": ["a"], "correct": [1, 0]},
         "lists of one length; 'student' has 2 values, 'skill' has 1"),
        ({"student": {"0": "s1", "1": "s2"}, "correct": {"0": 1}}, "same row labels"),
        ({"student": [], "correct": []}, "no data rows"),
        ({}, "no data rows"),
    ],
)  # fmt: skip
def test_json_object_of_columns_refused_in_one_line(write, content, says):
    path = write("t.json", json.dumps(content))
    with pytest.raises(InputError, match=re.escape(says)) as info:
        read_table(path)
    assert info.value.file == str(path) and "\n" not in str(info.value)


def test_a_single_json_row_with_a_list_value_stays_one_row(write):
    df = read_table(write("t.json", json.dumps({"item": "q1", "choices": ["1", "2"]})))
    assert len(df) == 1 and df["choices"].iloc[0] == ["1", "2"]


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85", "\x1c", "\x0b", "\x0c"])
def test_jsonl_is_split_on_line_feeds_only(write, separator):
    from edueval.io import read_jsonl

    assert f"a{separator}b".splitlines() == ["a", "b"]  # what str.splitlines would do
    text = json.dumps({"s": f"x{separator}y", "n": 1}, ensure_ascii=False) + "\n"
    path = write("t.jsonl", text + '{"s": "z", "n": 2}\n')
    df = read_table(path)
    assert df["s"].tolist() == [f"x{separator}y", "z"] and list(df.index) == [1, 2]
    records, lines = read_jsonl(path)
    assert [r["n"] for r in records] == [1, 2] and lines == [1, 2]


def test_jsonl_with_crlf_line_ends(write):
    from edueval.io import jsonl_lines

    path = write("t.jsonl", b'{"a": 1}\r\n\r\n{"a": 2,}\r\n')
    with pytest.raises(InputError, match="not valid JSON") as info:
        read_table(path)
    assert info.value.line == 3
    df = read_table(write("u.jsonl", b'{"a": "x"}\r\n\r\n{"a": "y"}\r\n'))
    assert df["a"].tolist() == ["x", "y"] and list(df.index) == [1, 3]
    assert list(jsonl_lines('{"a": 1}\r\n \n{"b": "\u2028"}')) == [(1, '{"a": 1}'),
                                                                  (3, '{"b": "\u2028"}')]  # fmt: skip


NS = 1_700_000_000_000_000_000  # a nanosecond timestamp (2023); 2**53 is about 9.0e15


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("t.csv", f"o\n{NS + 1}\n{NS + 2}\n{NS}\n"),
        ("t.jsonl", f'{{"o": {NS + 1}}}\n{{"o": "{NS + 2}"}}\n{{"o": {NS}}}\n'),
        ("t.json", f'[{{"o": {NS + 1}}}, {{"o": {NS + 2}}}, {{"o": {NS}}}]'),
    ],
)
def test_integer_orders_are_compared_exactly(write, name, content):
    from edueval.io import order_column

    assert float(NS + 1) == float(NS + 2)  # as floats they would tie
    out = order_column(read_table(write(name, content)), "o")
    assert out.dtype == np.int64
    assert out.tolist() == [NS + 1, NS + 2, NS]
    assert len(np.unique(out)) == 3 and np.argsort(out).tolist() == [2, 0, 1]


def test_order_column_other_values(write):
    from edueval.io import order_column

    out = order_column(pd.DataFrame({"o": [1.5, 2.0, -3.0]}), "o")
    assert out.dtype == np.float64 and out.tolist() == [1.5, 2.0, -3.0]
    assert order_column(pd.DataFrame({"o": ["3", " 4", "-5"]}), "o").tolist() == [3, 4, -5]
    big = order_column(pd.DataFrame({"o": np.array([2**64 - 1, 1], dtype=np.uint64)}), "o")
    assert big.dtype == np.float64  # beyond int64: compared as floats (ties are then refused)
    path = write("t.csv", "o\n1\nsoon\n")
    with pytest.raises(InputError, match=r"expected a number, got 'soon'") as info:
        order_column(read_table(path), "o")
    assert (info.value.line, info.value.column) == (3, "o")


MULTILINE = 'id,note,v\na,"one\ntwo\nthree",1\nb,plain,2\nc,"say ""hi""\nthere",x\n\nd,last,4\n'


def test_csv_rows_keep_their_line_after_a_field_spanning_lines(write):
    path = write("t.csv", MULTILINE)
    df = read_table(path)
    assert list(df.index) == [2, 5, 6, 9]
    assert df["note"].tolist() == ["one\ntwo\nthree", "plain", 'say "hi"\nthere', "last"]
    with pytest.raises(InputError) as info:
        numeric_column(df, "v")
    assert str(info.value) == f"{path}, line 6, column 'v': expected a number, got 'x'"


@pytest.mark.parametrize(
    ("content", "index"),
    [
        (MULTILINE.replace("\n", "\r\n"), [2, 5, 6, 9]),
        (MULTILINE.replace("\n", "\r"), [2, 5, 6, 9]),
        (MULTILINE.replace(",", "\t").replace("t.csv", ""), [2, 5, 6, 9]),
        ('id,note\na,x"y\nb,"p\nq"\nc,z\n', [2, 3, 5]),  # a literal quote mid-field
        ('"i\nd",note\na,"p\nq"\nb,z\n', [3, 5]),  # the header spans lines
    ],
)
def test_csv_record_lines_in_other_shapes(write, content, index):
    name = "t.tsv" if "\t" in content else "t.csv"
    assert list(read_table(write(name, content)).index) == index


def test_csv_record_lines_agree_with_the_csv_module(write):
    import csv
    import io as stdio

    rng = np.random.default_rng(7)
    cells = ["x", "", "a b", "l1\nl2", 'q"uote', "c,omma", "\r\n", "é\u2028", "3"]
    rows = [[cells[k] for k in rng.integers(0, len(cells), 3)] for _ in range(400)]
    buffer = stdio.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([["a", "b", "c"], *rows])
    text = buffer.getvalue()
    reader = csv.reader(stdio.StringIO(text, newline=""))
    expected, done = [], 0
    for _ in reader:
        expected.append(done + 1)
        done = reader.line_num
    df = read_table(write("t.csv", text), text_columns=["a", "b", "c"])
    kept = [i for i, r in enumerate(rows) if any(r)]  # rows of empty cells are blank lines
    assert list(df.index) == [expected[1 + i] for i in kept]
    for j, name in enumerate("abc"):
        assert df[name].fillna("").tolist() == [rows[i][j] for i in kept]


@pytest.mark.parametrize(
    ("content", "line", "says"),
    [
        ('a,b\n1,"x\ny\nz"\n2,y,3\n', 5, "Expected 2 fields, saw 3"),
        ('a,b\n1,"x\ny"\n2,"y\n3,z\n', 4, "a quoted field is never closed"),
        ('a,b\n1,x\n\n2,"y\n', 4, "a quoted field is never closed"),
        ('a,b\n1,x"y\n"1\n2",x\n3,4,5\n', 5, "Expected 2 fields, saw 3"),
        ("a,b\n1,2\n3,4,5,6\n", 3, "Expected 2 fields, saw 4"),
    ],
)
def test_csv_parse_errors_name_the_line(write, content, line, says):
    path = write("t.csv", content)
    with pytest.raises(InputError, match=re.escape(says)) as info:
        read_table(path)
    assert info.value.line == line
    assert " in line " not in str(info.value) and "row " not in str(info.value)


@pytest.mark.parametrize(
    ("content", "line", "shown"),
    [
        ("s,v\nskill0,1\nskill0\x00,2\n", 3, r"'skill0\x00'"),  # numpy's astype(str) drops it
        ("s,v\nskill0,1\n\x00skill0,2\n", 3, r"'\x00skill0'"),
        ("s,v\nskill0,1\nskill\x000,2\n", 3, r"'skill\x000'"),
        ("s,v\nskill0,1\nskill0\x85,2\n", 3, r"'skill0\x85'"),
        ('s,v\nskill0,1\n"skill\u20280",2\n', 3, r"'skill\u20280'"),
        ("s,v\nskill0,1\nskill0\xa0,2\n", 3, r"'skill0\xa0'"),
        ('s,v\nskill0,1\n"a\nb",2\n\n" b",3\n', 3, r"'a\nb'"),
        ('s,v\n"a\nb",1\n" b",3\n', 2, r"'a\nb'"),
    ],
)
def test_identifiers_are_checked_as_read(write, content, line, shown):
    path = write("t.csv", content)
    df = read_table(path, text_columns=["s"])
    text_column(df, "s")  # as plain text they are fine
    with pytest.raises(InputError) as info:
        text_column(df, "s", identifier=True)
    message = str(info.value)
    assert message.startswith(f"{path}, line {line}, column 's': expected an identifier without")
    assert f"got {shown}" in message and "np." not in message


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ({"a": 1}, 'the JSON object {"a": 1}'),
        ([1, 2], "the JSON list [1, 2]"),
        (True, "the JSON true/false true"),
    ],
)
@pytest.mark.parametrize("name", ["t.jsonl", "t.json"])
def test_json_containers_are_not_identifiers(write, name, value, shown):
    rows = [{"s": "a", "v": 1}, {"s": value, "v": 2}]
    text = "".join(json.dumps(r) + "\n" for r in rows) if name.endswith("l") else (
        "[\n" + ",\n".join(json.dumps(r) for r in rows) + "\n]")  # fmt: skip
    path = write(name, text)
    df = read_table(path, text_columns=["s"])
    assert df["s"].iloc[1] == json.dumps(value)  # free text keeps its JSON text
    assert json.loads(df["s"].iloc[1]) == value
    with pytest.raises(InputError) as info:
        text_column(df, "s", identifier=True)
    assert str(info.value) == (
        f"{path}, line {2 if name.endswith('l') else 3}, column 's': "
        f"expected an identifier (text or a number), got {shown}"
    )


@pytest.mark.parametrize("name", ["t.jsonl", "t.json"])
def test_json_null_is_a_missing_identifier_not_none(write, name):
    rows = [{"s": "a"}, {"s": None}]
    text = "".join(json.dumps(r) + "\n" for r in rows) if name.endswith("l") else (
        "[\n" + ",\n".join(json.dumps(r) for r in rows) + "\n]")  # fmt: skip
    path = write(name, text)
    df = read_table(path, text_columns=["s"])
    assert df["s"].iloc[1] is None
    with pytest.raises(InputError, match="expected a non-empty value, got empty") as info:
        text_column(df, "s", identifier=True)
    assert (info.value.line, info.value.column) == (2 if name.endswith("l") else 3, "s")


def test_json_numbers_as_identifiers_keep_their_text(write):
    # a key missing from some rows used to make the column float: 7 read as "7.0"
    path = write("t.jsonl", '{"s": 7, "v": 1}\n{"v": 2}\n{"s": 12345678901234567890, "v": 3}\n')
    df = read_table(path, text_columns=["s"])
    assert df["s"].tolist() == ["7", None, "12345678901234567890"]


def test_identifier_problem_and_unclean_identifiers():
    from edueval.io import JSONText, identifier_problem, unclean_identifiers

    assert identifier_problem("s1") is None and identifier_problem(7) is None
    assert identifier_problem("Jörg") is None and identifier_problem("a b") is None
    assert identifier_problem(" s1") == "surrounding spaces"
    assert identifier_problem("s1\u2028") == "surrounding spaces"
    for bad in ("s\x001", "s1\x00", "s\x7f", "s\x9f", "s\u2029x", "s\tx"):
        assert identifier_problem(bad) == "a control character", bad
    assert identifier_problem(JSONText("[1]")) == "a JSON list"
    assert identifier_problem(True) == "true/false"
    assert identifier_problem({"a": 1}) == "a list or mapping"
    raw = np.array(["skill0", "skill0\x00"], dtype=object)
    assert unclean_identifiers(raw).tolist() == [False, True]
    # what the old check saw: numpy's fixed-width text silently drops the trailing NUL
    assert raw.astype(str).tolist() == ["skill0", "skill0"]


@pytest.mark.parametrize(
    "char",
    ["\u200b", "\u200c", "\u200d", "\u200e", "\u200f", "\u202a", "\u202e", "\u2066",
     "\ufeff", "\u00ad", "\u2060", "\u034f", "\u180e", "\ufe0f", "\U000e0100", "\u3164"],
)  # fmt: skip
def test_invisible_characters_make_no_second_id(char):
    """Unicode's invisible (default-ignorable) characters, anywhere in an id: "s00" and
    "s0<ZWSP>0" look the same and would count as two students."""
    from edueval.io import identifier_problem, unclean_identifiers

    for value in (f"s0{char}0", f"s00{char}", f"{char}s00"):
        assert identifier_problem(value) == "an invisible character", repr(value)
    assert unclean_identifiers(["s00", f"s0{char}0"]).tolist() == [False, True]


def test_lookalike_forms_are_refused_and_composed_text_is_not():
    from edueval.io import identifier_problem, unclean_identifiers

    composed, decomposed = "Jos\u00e9", "Jose\u0301"
    assert unicodedata.normalize("NFC", decomposed) == composed  # the same on screen
    assert identifier_problem(composed) is None
    assert identifier_problem(decomposed) == "a decomposed character"
    fullwidth = "\uff53\uff10\uff10"  # "s00" in fullwidth forms
    assert unicodedata.normalize("NFKC", fullwidth) == "s00"
    assert identifier_problem(fullwidth) == "a compatibility character"
    # text in other scripts, with accents written composed, is an id as it stands
    fine = [
        "\u5b66\u751f1",
        "\u0421\u0442\u0443\u0434\u0435\u043d\u0442",
        "\u00c5sa",
        "n\u00famero",
    ]
    assert unclean_identifiers(fine).tolist() == [False] * 4


def test_text_column_names_the_lookalike_and_its_column():
    df = pd.DataFrame({"student": ["s00", "s00", "s0\u200b0"], "x": [1, 2, 3]})
    with pytest.raises(InputError, match="without invisible characters") as info:
        text_column(df, "student", identifier=True)
    assert "column 'student'" in str(info.value) and "'s0\\u200b0'" in str(info.value)


def test_text_column_on_frames_built_in_python():
    df = pd.DataFrame({"s": ["a", {"x": 1}, ["y"]], "t": ["a", "b", "c"]})
    assert text_column(df, "s").tolist() == ["a", "{'x': 1}", "['y']"]  # as before
    with pytest.raises(InputError, match="expected an identifier \\(text or a number\\)"):
        text_column(df, "s", identifier=True)
    assert text_column(df, "t", identifier=True).tolist() == ["a", "b", "c"]


def test_messages_show_values_as_written_not_numpy_reprs():
    df = pd.DataFrame({"k": np.array(["a", "a"]), "n": np.array([3, 3]), "f": [0.5, 0.5]})
    with pytest.raises(InputError) as info:
        check_unique(df, ["k", "n", "f"], what="key")
    assert str(info.value) == "duplicate key (k='a', n=3, f=0.5)"
    bad = pd.DataFrame({"s": np.array(["a", " a"], dtype=object)})
    with pytest.raises(InputError) as info:
        text_column(bad, "s", identifier=True)
    assert str(info.value).endswith("got ' a'") and "np." not in str(info.value)


def test_json_rows_carry_their_line_when_each_has_its_own(write):
    path = write("t.json", '[\n  {"a": 1, "b": [1, {"c": 2}]},\n\n  {"a": 7,\n   "b": []}\n]\n')
    df = read_table(path)
    assert list(df.index) == [2, 4] and line_of(df, 1) == 4
    with pytest.raises(InputError) as info:
        binary_column(df, "a")
    assert info.value.line == 4
    one_line = read_table(write("u.json", '[{"a": 1}, {"a": 2}]\n'))
    assert line_of(one_line, 1) is None  # rows share a line: none is named


def test_a_bad_byte_in_json_names_its_line(write):
    path = write("t.jsonl", b'{"a": "x"}\n{"a": "J\xf6rg"}\n')
    with pytest.raises(InputError, match="not UTF-8 text: byte 0xf6") as info:
        read_table(path)
    assert info.value.line == 2


def test_other_readers_bound_nesting_too(write):
    from edueval.items.data import read_items
    from edueval.pairwise.comparisons import read_rater_ids
    from edueval.pairwise.teacher_test import import_teacher_test

    deep = "[" * DEEP + "]" * DEEP
    items = write("items.csv", f'item,text,choices,answer,material,topic\nq1,1+1?,"{deep}",B,m,t\n')
    with pytest.raises(InputError, match="expected a JSON list or object of options") as info:
        read_items(items)
    assert (info.value.line, info.value.column) == (2, "choices")
    teacher = write("items.jsonl", '\n{"filename": ' + deep + "}\n")
    with pytest.raises(InputError, match="nested more than 100 levels deep") as info:
        import_teacher_test(teacher)
    assert info.value.line == 2
    raters = write("outliers.yaml", "- r1\n- " + deep + "\n")
    with pytest.raises(InputError, match="nested more than 100 levels deep") as info:
        read_rater_ids(raters)
    assert info.value.line == 2
    assert read_rater_ids(write("ok.yaml", "r1: x\nr2: [1, 2]\n")) == ["r1", "r2"]


def test_an_input_error_pickles_whole():
    """An error raised on a Dask worker comes back with its file, line and column (pickled), so the
    command line prints the same line it prints in process."""
    import pickle

    from edueval.io import InputError

    err = InputError("expected a number, got 'x'", file="r.csv", line=7, column="correct")
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is InputError and str(back) == str(err)
    assert (back.message, back.file, back.line, back.column) == (err.message, "r.csv", 7, "correct")
    assert back.renamed().message == err.message  # not the whole line as its message
