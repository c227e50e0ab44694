"""Issue 24: the pairwise readers' declared schemas -- ids as written (never stripped), header
columns once, one abilities row per item, attribute and agent.

Every bad input: exit 2, one ``error:`` line on stderr, no results.json."""

from __future__ import annotations

import json

import pytest

from edueval.io import InputError
from edueval.pairwise import import_teacher_test, read_comparisons, read_rater_ids

from .test_cli import ITEM, one_line_error
from .test_summary import make_abilities

HEADER = "item,attribute,rater,first,second,outcome"
ROWS = ["i1,q,r1,A,B,first", "i1,q,r2,B,A,second", "i1,q,r3,A,C,tie", "i2,q,r1,C,B,first"]


def _csv(rows=ROWS, header=HEADER) -> str:
    return "\n".join([header, *rows]) + "\n"


@pytest.mark.parametrize(
    ("row", "column", "needle"),
    [("i1,q,r2, B,A,second", "first", "' B'"), ("i1,q,r2 ,B,A,second", "rater", "'r2 '"),
     ("i1,q,r2,B,A\x00,second", "second", "control character"),
     ("i1\x1b,q,r2,B,A,second", "item", "control character"),
     ("i1,q\t,r2,B,A,second", "attribute", "identifier")],
)  # fmt: skip
def test_ids_are_refused_as_written_not_stripped(cli, write, tmp_path, row, column, needle):
    """``' B'`` used to be stripped into ``'B'``: ids are taken as written."""
    rows = list(ROWS)
    rows[1] = row
    out = tmp_path / "o"
    res = cli("pairwise", "fit", write("c.csv", _csv(rows)), "--out", out)
    one_line_error(res, out, "line 3", f"column '{column}'", needle)


@pytest.mark.parametrize(("value", "needle"), [(None, "non-empty"), ({"a": 1}, "JSON object"),
                                               ([1], "JSON list")])  # fmt: skip
def test_json_null_or_object_as_id_is_refused(cli, write, tmp_path, value, needle):
    """JSON ``null`` or an object used to become ``"None"`` or ``"{'a': 1}"``."""
    rows = [dict(zip(HEADER.split(","), r.split(","), strict=True)) for r in ROWS]
    rows[2]["rater"] = value
    path = write("c.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "o"
    one_line_error(cli("pairwise", "fit", path, "--out", out), out, "line 3", "column 'rater'",
                   needle)  # fmt: skip


@pytest.mark.parametrize("command", ["fit", "raters"])
def test_a_header_column_given_twice_is_refused(cli, write, tmp_path, command):
    path = write("c.csv", _csv([r + ",x" for r in ROWS], header=HEADER + ",rater"))
    out = tmp_path / command
    one_line_error(cli("pairwise", command, path, "--out", out), out, "line 1", "'rater' twice")


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [("o.txt", "r1\n r2\n", "line 2"), ("o.txt", "r1\nr2 \n", "surrounding spaces"),
     ("o.txt", "r1\x00\n", "control character"), ("o.yaml", "~: 1\nr1: 2\n", "null"),
     ("o.yaml", "- r1\n- ' r2'\n", "surrounding spaces")],
)  # fmt: skip
def test_rater_ids_to_exclude_are_refused_as_written(cli, write, tmp_path, name, text, needle):
    ids = write(name, text)
    out = tmp_path / "o"
    res = cli("pairwise", "fit", write("c.csv", _csv()), "--out", out, "--exclude-raters", ids)
    one_line_error(res, out, name, needle)


def test_rater_lists_keep_comments_and_crlf(write):
    assert read_rater_ids(write("o.txt", "r1\t# why\r\n\r\nr2\r\n")) == ["r1", "r2"]


def test_a_repeated_abilities_row_is_refused_not_counted_twice(cli, write, tmp_path):
    """``pairwise summarize`` used to count a repeated row twice in the ANOVA."""
    ab = make_abilities(n_items=4)
    path = write("abilities.csv", ab.to_csv(index=False) + ab.iloc[[5]].to_csv(index=False,
                                                                              header=False))  # fmt: skip
    out = tmp_path / "s"
    res = cli("pairwise", "summarize", path, "--out", out)
    one_line_error(res, out, f"line {len(ab) + 2}", "duplicate item and attribute and agent")
    ok = write("ok.csv", ab.to_csv(index=False))
    assert cli("pairwise", "summarize", ok, "--out", tmp_path / "ok").code == 0


def test_a_header_column_given_twice_in_abilities_is_refused(cli, write, tmp_path):
    ab = make_abilities(n_items=4)
    ab.insert(6, "alpha_mean_copy", ab["alpha_mean"] + 1)
    text = ab.to_csv(index=False).replace("alpha_mean_copy", "alpha_mean", 1)
    out = tmp_path / "s"
    one_line_error(cli("pairwise", "summarize", write("a.csv", text), "--out", out), out,
                   "'alpha_mean' twice")  # fmt: skip


@pytest.mark.parametrize(("where", "bad"), [("rater", " R1"), ("agent", "Teacher\x00"),
                                            ("attribute", "helping\n")])  # fmt: skip
def test_teacher_test_ids_are_taken_as_written(write, where, bad):
    item = json.loads(json.dumps(ITEM))
    judgements = item["comparisons"]["attributes"]["helping the student more"]
    if where == "rater":
        judgements[bad] = judgements.pop("R1")
    elif where == "agent":
        judgements["R1"][0] = bad
    else:
        item["comparisons"]["attributes"] = {bad: judgements}
    with pytest.raises(InputError, match="taken as written") as exc:
        import_teacher_test(write("items.jsonl", json.dumps(item) + "\n"))
    assert exc.value.line == 1


def test_valid_comparisons_read_as_before(write):
    df = read_comparisons(write("c.csv", _csv()))
    assert df["first"].tolist() == ["A", "B", "A", "C"] and df["outcome"].iloc[3] == "first"
