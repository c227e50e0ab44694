"""Issue 36, point 1: score tables (long and wide, files and DataFrames) read through the schema
layer into the wide float frame every score-table analysis takes; a blank cell is "not
administered", never wrong."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from edueval.io import InputError
from edueval.items.scores import is_dichotomous, load_scores, read_scores, scores_to_long

LONG = "student,item,correct\ns1,q2,1\ns1,q1,0\ns2,q1,1\ns2,q2,\ns3,q1,1\n"
WIDE = "student,q2,q1\ns1,1,0\ns2,,1\ns3,,1\n"
EXPECTED = pd.DataFrame(
    [[1.0, 0.0], [np.nan, 1.0], [np.nan, 1.0]],
    index=pd.Index(["s1", "s2", "s3"], name="student"),
    columns=["q2", "q1"],
)


@pytest.mark.parametrize("text", [LONG, WIDE])
@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".json", ".parquet"])
def test_long_and_wide_files_give_one_wide_frame(write, tmp_path, text, suffix):
    frame = pd.read_csv(pd.io.common.StringIO(text), dtype={"student": str})
    if suffix == ".csv":
        path = write("s.csv", text)
    elif suffix == ".tsv":
        path = write("s.tsv", text.replace(",", "\t"))
    elif suffix == ".json":
        path = tmp_path / "s.json"
        frame.to_json(path, orient="records")
    else:
        path = tmp_path / "s.parquet"
        frame.to_parquet(path)
    got = read_scores(path)
    pd.testing.assert_frame_equal(got, EXPECTED, check_names=True)


def test_a_blank_is_not_administered_not_wrong(write):
    got = read_scores(write("s.csv", LONG))
    assert np.isnan(got.loc["s2", "q2"]) and got.loc["s1", "q1"] == 0.0


def test_dataframes_round_trip_and_layout_rule():
    long = pd.DataFrame({"student": ["a", "a", "b"], "item": ["x", "y", "x"], "score": [2, 0, 1]})
    wide = read_scores(long)
    assert list(wide.columns) == ["x", "y"] and wide.loc["a", "x"] == 2.0
    pd.testing.assert_frame_equal(read_scores(wide), wide)  # the index named student is read
    assert not is_dichotomous(wide)
    back = scores_to_long(wide)
    assert back.to_dict("list") == {"student": ["a", "a", "b"], "item": ["x", "y", "x"],
                                    "score": [2.0, 0.0, 1.0]}  # fmt: skip
    # a wide table whose items are called item/score is read as wide when told so
    odd = pd.DataFrame({"student": ["a"], "item": [1], "score": [0]})
    assert list(read_scores(odd, layout="wide").columns) == ["item", "score"]


def test_renamed_columns_and_kept_group():
    df = pd.DataFrame({"sid": ["a", "a", "b"], "q": ["x", "y", "x"], "ok": [1, 0, 1],
                       "grp": ["F", "F", "R"]})  # fmt: skip
    t = load_scores(df, student_col="sid", item_col="q", score_col="ok", keep=["grp"])
    assert t.layout == "long" and t.students["grp"].to_dict() == {"a": "F", "b": "R"}
    wide = pd.DataFrame({"id": ["a", "b"], "x": [1, 0], "grp": ["F", "R"]})
    t = load_scores(wide, student_col="id", keep=["grp"])
    assert list(t.scores.columns) == ["x"] and list(t.students["grp"]) == ["F", "R"]


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        (LONG.replace("s3,q1,1", "s3,q1,2"), ["line 6", "column 'correct'", "0 or 1"]),
        (LONG.replace("s3,q1,1", "s3,q1,yes"), ["line 6", "column 'correct'"]),
        (LONG.replace("s3,q1,1", "s2,q1,0"), ["duplicate student and item"]),
        (LONG.replace("s3,q1,1", " s3,q1,1"), ["column 'student'", "identifier"]),
        (WIDE.replace("s2,,1", "s2,,x"), ["line 3", "column 'q1'", "number"]),
        (WIDE.replace("s2,,1", "s2,-1,1"), ["line 3", "column 'q2'"]),
        (WIDE.replace("s3,,1", "s1,,1"), ["duplicate student"]),
        ("student,q1,q2\ns1,1,\ns2,0,\n", ["item 'q2' has no scores"]),
        ("sid,q1\ns1,1\n", ["missing column 'student'"]),
        ("student,item,answer\ns1,q1,1\n", ["expected a 'correct' (0/1) or a 'score' column"]),
    ],
)
def test_bad_cells_are_one_line_naming_where(write, text, needles):
    with pytest.raises(InputError) as err:
        read_scores(write("s.csv", text))
    message = str(err.value)
    assert "\n" not in message and message.startswith(str(write("s.csv", text)))
    for needle in needles:
        assert needle in message, message
