"""Issue 24: the QG-SMS readers' declared schemas (edueval.qgsms.pipeline PAIRS_SCHEMA,
JUDGEMENTS_SCHEMA): ``qgsms score`` refuses a ``correct`` that is not 0/1 or that contradicts
``chosen``/``better``, and a ``chosen`` that contradicts ``verdict``; ``qgsms run`` refuses a
pairs file with a misspelt or repeated column.  Every bad input: exit 2, one ``error:`` line."""

from __future__ import annotations

import json

import pytest

HEADER = "method,pair_id,dimension,material,order,a,b,better,diff,verdict,chosen,correct,status"
# pair p1 (q1 better) judged right in both orders; pair p2 (q3 better) wrong in order 2
ROWS = [
    "vanilla,p1,DF,M,1,q1,q2,q1,0.2,a,q1,1,ok",
    "vanilla,p1,DF,M,2,q2,q1,q1,0.2,b,q1,1,ok",
    "vanilla,p2,DE,M,1,q3,q4,q3,1,a,q3,1,ok",
    "vanilla,p2,DE,M,2,q4,q3,q3,1,a,q4,0,ok",
    "vanilla,p3,TC,M,1,q1,q3,q3,,,,0,failed",
    "vanilla,p3,TC,M,2,q3,q1,q3,,b,q1,0,ok",
]


def _judgements(write, rows=ROWS, header=HEADER):
    return write("judgements.csv", "\n".join([header, *rows]) + "\n")


def _one_line(res, out, *needles):
    assert res.code == 2, (res.code, res.err)
    assert "Traceback" not in res.err and len(res.err_lines) == 1, res.err
    assert res.err_lines[0].startswith("error: ")
    for needle in needles:
        assert needle in res.err, res.err
    assert not (out / "results.json").exists()


def test_valid_judgements_are_scored(cli, write, tmp_path):
    res = cli("qgsms", "score", _judgements(write), "--no-bt", "--out", tmp_path / "s")
    assert res.code == 0, res.err
    acc = json.loads((tmp_path / "s" / "results.json").read_text())["accuracy"]["vanilla"]
    assert acc["all"]["AA"] == pytest.approx(3 / 6) and acc["all"]["CA"] == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    ("k", "row", "column", "needle"),
    [(0, "vanilla,p1,DF,M,1,q1,q2,q1,0.2,a,q1,2,ok", "correct", "0 or 1"),
     (3, "vanilla,p2,DE,M,2,q4,q3,q3,1,a,q4,1,ok", "correct", "contradicts chosen 'q4'"),
     (4, "vanilla,p3,TC,M,1,q1,q3,q3,,,,1,failed", "correct", "contradicts chosen ''"),
     (1, "vanilla,p1,DF,M,2,q2,q1,q1,0.2,a,q1,1,ok", "chosen", "contradicts verdict 'a'"),
     (1, "vanilla,p1,DF,M,2,q2,q1,q1,0.2,B,q1,1,ok", "verdict", "got 'B'"),
     (1, "vanilla,p1,DF,M,3,q2,q1,q1,0.2,b,q1,1,ok", "order", "an integer in [1, 2]"),
     (1, "vanilla,p1,DF,M,1,q2,q1,q1,0.2,b,q1,1,ok", None, "duplicate method and pair_id"),
     (1, "vanilla,p1 ,DF,M,2,q2,q1,q1,0.2,b,q1,1,ok", "pair_id", "identifier")],
)  # fmt: skip
def test_untrustworthy_judgements_are_refused(cli, write, tmp_path, k, row, column, needle):
    """``correct=2`` used to be counted, and a ``correct`` contradicting ``chosen`` trusted."""
    rows = list(ROWS)
    rows[k] = row
    out = tmp_path / "s"
    res = cli("qgsms", "score", _judgements(write, rows), "--no-bt", "--out", out)
    where = f"line {k + 2}" + (f", column '{column}'" if column else "")
    _one_line(res, out, "judgements.csv, " + where, needle)


def test_a_judgements_header_column_given_twice_is_refused(cli, write, tmp_path):
    path = _judgements(write, [r + ",0" for r in ROWS], header=HEADER + ",correct")
    out = tmp_path / "s"
    _one_line(cli("qgsms", "score", path, "--no-bt", "--out", out), out, "'correct' twice")


ITEMS = [{"item": f"q{k}", "text": f"{k}+{k}?", "choices": [str(2 * k), "0"], "answer": "A",
          "material": "M", "topic": "T", "material_text": "numbers"} for k in range(1, 5)]  # fmt: skip
PAIRS = "pair_id,dimension,q1,q2,better,measure_q1,measure_q2,diff\np1,DF,q1,q2,q1,0.8,0.4,0.4\n"


@pytest.mark.parametrize(
    ("text", "needle"),
    [(PAIRS.replace("measure_q1", "measure_1"), "unknown column 'measure_1'"),
     (PAIRS.replace(",diff\n", ",better\n").replace(",0.4\n", ",q2\n"), "'better' twice"),
     (PAIRS.replace(",0.4\n", ",big\n"), "column 'diff'"),
     (PAIRS + "p1,DF,q3,q4,q3,0.8,0.4,0.4\n", "duplicate pair_id"),
     (PAIRS.replace("p1,DF,q1", "p1,DF,q1\x00"), "column 'q1'")],
)  # fmt: skip
def test_bad_pairs_files_are_refused(cli, write, tmp_path, text, needle):
    items = write("items.jsonl", "".join(json.dumps(i) + "\n" for i in ITEMS))
    out = tmp_path / "o"
    res = cli("qgsms", "run", write("pairs.csv", text), items, "--method", "vanilla",
              "--model", "openai/none", "--base-url", "http://127.0.0.1:9/v1",
              "--out", out)  # fmt: skip
    _one_line(res, out, needle)
