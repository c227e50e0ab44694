"""Files in the shapes users and third-party tools actually produce (issue 11, 4 and 6)."""

from __future__ import annotations

import json

import pytest

from .conftest import assert_refused

KT_HEAD = "student,skill,correct\n"
KT_ROWS = "".join(f"s{i},add,{i % 2}\ns{i},add,1\n" for i in range(6))


@pytest.mark.parametrize(
    ("name", "body", "says"),
    [
        ("padded student", KT_HEAD + KT_ROWS + " s1,add,1\n", "surrounding spaces"),
        ("padded skill", KT_HEAD + KT_ROWS + "s1,add ,1\n", "surrounding spaces"),
        ("NUL in student", KT_HEAD + KT_ROWS + "s\x001,add,1\n", "control characters"),
        ("tab in skill", KT_HEAD + KT_ROWS + 's1,"a\tdd",1\n', "control characters"),
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 20 else None,
)
def test_identifiers_that_would_become_new_students_are_refused(edueval, tmp_path, name, body,
                                                                says):  # fmt: skip
    path = tmp_path / "r.csv"
    path.write_text(body)
    run = edueval("kt", "fit", path, "--out", tmp_path / "fit")
    assert_refused(run, out=tmp_path / "fit", contains=says)
    assert "line 14" in run.err


def test_padded_ids_in_turing_and_items(edueval, tmp_path):
    choices = tmp_path / "c.csv"
    choices.write_text("student,question,chosen\ns1,q1,ai\n s1,q2,human\n")
    assert_refused(edueval("turing", "analyze", choices, "--out", tmp_path / "t"),
                   out=tmp_path / "t", contains="line 3")  # fmt: skip
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"item": "q1", "text": "1+1?", "choices": ["1", "2"],
                                 "answer": "B", "material": "m", "topic": "t"}) + "\n")  # fmt: skip
    responses = tmp_path / "resp.csv"
    responses.write_text("student,item,choice\ns1,q1,B\ns2,q1 ,A\n")
    assert_refused(edueval("items", "analyze", responses, items, "--out", tmp_path / "i"),
                   out=tmp_path / "i", contains="surrounding spaces")  # fmt: skip


def test_a_bom_is_read_in_every_format(edueval, tmp_path):
    rows = [{"student": f"s{i}", "skill": "add", "correct": i % 2} for i in range(12)]
    for name, text in (
        ("r.csv", "student,skill,correct\n" + "".join(f"{r['student']},add,{r['correct']}\n"
                                                      for r in rows)),
        ("r.jsonl", "".join(json.dumps(r) + "\n" for r in rows)),
        ("r.json", json.dumps(rows)),
    ):  # fmt: skip
        path = tmp_path / name
        path.write_bytes(b"\xef\xbb\xbf" + text.encode())
        run = edueval("kt", "fit", path, "--out", tmp_path / f"fit-{name}", "--min-responses", "5")
        assert run.code == 0, run


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".json"])
def test_non_utf8_files_are_one_line(edueval, tmp_path, suffix):
    path = tmp_path / f"r{suffix}"
    path.write_bytes(b'{"student": "J\xf6rg", "skill": "a", "correct": 1}\n' if suffix != ".csv"
                     else b"student,skill,correct\nJ\xf6rg,a,1\n")  # fmt: skip
    assert_refused(edueval("kt", "fit", path, "--out", tmp_path / "o"), out=tmp_path / "o",
                   contains="UTF-8")  # fmt: skip


NCTE_HEAD = "obs_id,exchange_idx,student_text,teacher_text,uptake\n"


@pytest.mark.parametrize(
    ("name", "body", "says"),
    [
        ("non-numeric uptake", NCTE_HEAD + "4,1,hi,yo,abc\n", "uptake"),
        ("infinite uptake", NCTE_HEAD + "4,1,hi,yo,inf\n", "finite"),
        ("duplicate row", NCTE_HEAD + "4,1,hi,yo,1\n4,1,hi,yo,1\n", "duplicate"),
        ("stray quote", NCTE_HEAD + '4,1,"hi there,yo,1\n4,2,ok,"fine",0\n4,3,a,b,1\n',
         "unbalanced quote"),
        ("padded obs_id", NCTE_HEAD + " 4,1,hi,yo,1\n", "surrounding spaces"),
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 20 else None,
)  # fmt: skip
def test_ncte_import_refuses_bad_rows(edueval, tmp_path, name, body, says):
    path = tmp_path / "uptake.csv"
    path.write_text(body)
    out = tmp_path / "d.jsonl"
    assert_refused(edueval("tutor", "import-ncte", path, "--out", out), contains=says)
    assert not out.exists()


def test_ncte_import_reads_jsonl_and_writes_standard_json(edueval, tmp_path):
    path = tmp_path / "uptake.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"obs_id": 4, "exchange_idx": 1,
                     "student_text": "hi", "teacher_text": "yo", "uptake": None}).encode() + b"\n")  # fmt: skip
    out = tmp_path / "d.jsonl"
    run = edueval("tutor", "import-ncte", path, "--out", out)
    assert run.code == 0, run
    (obj,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert obj["id"] == "4-1" and obj["meta"]["uptake"] is None


def test_the_bundled_files_are_reachable(edueval, tmp_path):
    run = edueval(
        "tutor", "import-ncte", "--bundled", "--limit", "3", "--out", tmp_path / "d.jsonl"
    )
    assert run.code == 0 and len((tmp_path / "d.jsonl").read_text().splitlines()) == 3, run
    run = edueval("pairwise", "import-teacher-test", "--bundled", "--out", tmp_path / "cmp")
    assert run.code == 0, run
    assert (tmp_path / "cmp" / "outliers.yaml").is_file() and "outliers.yaml" in run.err
    from edueval.pairwise.comparisons import read_rater_ids

    assert len(read_rater_ids(tmp_path / "cmp" / "outliers.yaml")) == 7
    assert_refused(edueval("tutor", "import-ncte"), contains="--bundled")


# --------------------------------------------------------------------------------------------
# Issue 24, readers: what users' files do through the commands
# --------------------------------------------------------------------------------------------

KT_RECORDS = [{"student": f"s{i}", "skill": "add", "correct": (i * 7 // 3) % 2}
              for i in range(12) for _ in range(2)]  # fmt: skip


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_deeply_nested_json_is_one_line(edueval, tmp_path, suffix):
    deep = "[" * 100_000 + "]" * 100_000
    path = tmp_path / f"r{suffix}"
    path.write_text(
        f'[{{"student": "s1", "skill": "add", "correct": {deep}}}]'
        if suffix == ".json"
        else '{"student": "s1", "skill": "add", "correct": 1}\n'
        f'{{"student": "s1", "skill": "add", "correct": {deep}}}\n'
    )
    run = edueval("kt", "fit", path, "--out", tmp_path / "o")
    assert_refused(run, out=tmp_path / "o", contains="nested more than 100 levels deep")
    assert "Recursion" not in run.err and (suffix == ".json" or "line 2" in run.err)


def test_a_json_object_of_columns_fits_like_the_rows(edueval, tmp_path):
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps(KT_RECORDS))
    columns = tmp_path / "columns.json"
    columns.write_text(json.dumps({k: [r[k] for r in KT_RECORDS] for k in KT_RECORDS[0]}))
    for path in (rows, columns):
        run = edueval("kt", "fit", path, "--out", tmp_path / path.stem, "--min-responses", "5")
        assert run.code == 0, run
    fitted = [(tmp_path / d / "params.csv").read_text() for d in ("rows", "columns")]
    assert fitted[0] == fitted[1]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"student": ["s1", "s2"], "skill": ["a"], "correct": [1, 0]}))
    assert_refused(edueval("kt", "fit", bad, "--out", tmp_path / "b"), out=tmp_path / "b",
                   contains="'student' has 2 values, 'skill' has 1")  # fmt: skip


def test_a_line_separator_inside_a_jsonl_string_is_not_a_line_end(edueval, tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"item": f"q{k}", "text": f"2+{k}?\u2028(show work)\x85",
                                         "choices": ["1", "2", "3"], "answer": "B",
                                         "material": "m", "topic": "t"}, ensure_ascii=False)
                             + "\r\n" for k in range(2)), newline="")  # fmt: skip
    responses = tmp_path / "resp.csv"
    responses.write_text("student,item,choice\n" + "".join(
        f"s{i},q{k},{'ABC'[(i + k) % 3]}\n" for i in range(6) for k in range(2)))  # fmt: skip
    run = edueval("items", "analyze", responses, items, "--out", tmp_path / "i")
    assert run.code == 0, run


def test_the_line_after_a_quoted_field_spanning_lines_is_named(edueval, tmp_path):
    path = tmp_path / "r.csv"
    lines = [f's{i},add,{i % 2},"first line\nsecond line"' for i in range(12)]
    path.write_text("student,skill,correct,note\n" + "\n".join(lines) + "\ns12,add,7,x\n")
    run = edueval("kt", "fit", path, "--out", tmp_path / "o")
    assert_refused(run, out=tmp_path / "o", contains="line 26, column 'correct'")


def test_identifiers_as_read_in_turing_and_items(edueval, tmp_path):
    choices = tmp_path / "c.csv"
    choices.write_text("student,question,chosen\ns1,q1,ai\ns1,q2,human\ns1\x00,q3,ai\n")
    assert_refused(edueval("turing", "analyze", choices, "--out", tmp_path / "t"),
                   out=tmp_path / "t", contains=r"line 4, column 'student'")  # fmt: skip
    as_json = tmp_path / "c.jsonl"
    as_json.write_text('{"student": "s1", "question": "q1", "chosen": "ai"}\n'
                       '{"student": {"a": 1}, "question": "q2", "chosen": "ai"}\n')  # fmt: skip
    run = edueval("turing", "analyze", as_json, "--out", tmp_path / "u")
    assert_refused(run, out=tmp_path / "u", contains='line 2, column \'student\': expected an '
                   'identifier (text or a number), got the JSON object {"a": 1}')  # fmt: skip


@pytest.mark.parametrize(
    ("name", "body", "says"),
    [
        ("trailing NUL", KT_HEAD + KT_ROWS + "s1,add\x00,1\n", r"'add\x00'"),
        ("padded", KT_HEAD + KT_ROWS + " s1,add,1\n", "got ' s1'"),
    ],
    ids=["trailing NUL", "padded"],
)
def test_kt_identifiers_as_read(edueval, tmp_path, name, body, says):
    path = tmp_path / "r.csv"
    path.write_text(body)
    run = edueval("kt", "fit", path, "--out", tmp_path / "fit")
    assert_refused(run, out=tmp_path / "fit", contains=says)
    assert "line 14" in run.err and "np.str_" not in run.err


def test_kt_json_object_as_identifier(edueval, tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in KT_RECORDS)
                    + json.dumps({"student": {"a": 1}, "skill": "add", "correct": 1}) + "\n")  # fmt: skip
    run = edueval("kt", "fit", path, "--out", tmp_path / "fit", "--min-responses", "5")
    assert_refused(run, out=tmp_path / "fit", contains=f"line {len(KT_RECORDS) + 1}")


def test_kt_nanosecond_orders_are_not_ties(edueval, tmp_path):
    # distinct above 2**53, equal as float64; rows in reverse order within each student, so a
    # wrong sort would change the sequences.  The same fit as with small orders.
    for name, base in (("ns", 1_700_000_000_000_000_000), ("small", 0)):
        rows = [f"s{i},add,{(i * 7 // 3 + k) % 2},{base + 2 * i + k}" for i in range(12)
                for k in (1, 0)]  # fmt: skip
        path = tmp_path / f"{name}.csv"
        path.write_text("student,skill,correct,order\n" + "\n".join(rows) + "\n")
        run = edueval("kt", "fit", path, "--out", tmp_path / name, "--min-responses", "5")
        assert run.code == 0, run
    fitted = [(tmp_path / d / "params.csv").read_text() for d in ("ns", "small")]
    assert fitted[0] == fitted[1]
