"""Comparisons data: validation, tie handling, rater lists, and the AI Teacher Test importer."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from edueval.io import InputError
from edueval.pairwise import (
    exclude_raters,
    import_teacher_test,
    read_comparisons,
    read_rater_ids,
    resolve_ties,
)
from edueval.pairwise.teacher_test import ATTRIBUTES, FILE_COUNTS, bundled_folder

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "ai-teacher-test"

GOOD = (
    "item,attribute,rater,first,second,outcome\n"
    "i1,q,r1,A,B,first\n"
    "i1,q,r2,B,A,second\n"
    "i1,q,r3,A,C,tie\n"
    "i2,q,r1,C,B,First\n"
)


def test_read_comparisons_normalises_outcomes(write):
    df = read_comparisons(write("c.csv", GOOD))
    assert df["outcome"].tolist() == ["first", "second", "tie", "first"]
    assert df["item"].tolist() == ["i1", "i1", "i1", "i2"]


@pytest.mark.parametrize(
    ("text", "line", "column", "needle"),
    [
        (GOOD.replace("i1,q,r2,B,A,second", "i1,q,r2,B,A,win"), 3, "outcome", "'win'"),
        (GOOD.replace("i1,q,r2,B,A,second", "i1,q,r2,B,B,second"), 3, "second", "itself"),
        (GOOD.replace("i1,q,r3,A,C,tie", "i1,q,,A,C,tie"), 4, "rater", "non-empty"),
        (GOOD.replace("i1,q,r2,B,A,second", "i1,q,r2,B,A,"), 3, "outcome", "empty"),
    ],
)
def test_bad_rows_name_line_and_column(write, text, line, column, needle):
    with pytest.raises(InputError) as e:
        read_comparisons(write("c.csv", text))
    assert e.value.line == line and e.value.column == column
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_missing_column(write):
    with pytest.raises(InputError, match="missing column 'outcome'"):
        read_comparisons(write("c.csv", "item,attribute,rater,first,second\ni,q,r,A,B\n"))


def test_tie_modes(write):
    df = read_comparisons(write("c.csv", GOOD))
    drop = resolve_ties(df, "drop")
    assert len(drop) == 3 and drop["w_first"].tolist() == [1, 0, 1]
    half = resolve_ties(df, "half")
    assert half.loc[half["outcome"] == "tie", ["w_first", "w_second"]].values.tolist() == [
        [0.5, 0.5]
    ]
    with pytest.raises(InputError, match="ties="):
        resolve_ties(df, "coin")


def test_random_ties_are_seeded_fair_coin_flips():
    n = 4000
    df = pd.DataFrame(
        {
            "item": "i",
            "attribute": "q",
            "rater": "r",
            "first": "A",
            "second": "B",
            "outcome": ["tie"] * n,
        }
    )
    a = resolve_ties(df, "random", seed=3)
    b = resolve_ties(df, "random", seed=3)
    c = resolve_ties(df, "random", seed=4)
    assert a["w_first"].equals(b["w_first"]) and not a["w_first"].equals(c["w_first"])
    assert ((a["w_first"] + a["w_second"]) == 1).all()
    # a fair coin: 4000 flips within 4 s.d. of 2000
    assert abs(a["w_first"].sum() - n / 2) < 4 * np.sqrt(n / 4)


def test_rater_lists(write):
    assert read_rater_ids(write("o.yaml", "R_a: 3\nR_b: 1\n")) == ["R_a", "R_b"]
    assert read_rater_ids(write("o.yml", "- R_a\n- R_c\n")) == ["R_a", "R_c"]
    assert read_rater_ids(write("o.txt", "# excluded\nR_a\n\nR_b  # why\n")) == ["R_a", "R_b"]
    assert read_rater_ids(write("plain.yaml", "R_a\nR_b\n")) == ["R_a", "R_b"]
    with pytest.raises(InputError, match="names no rater"):
        read_rater_ids(write("empty.txt", "# nothing\n"))
    with pytest.raises(InputError, match="not valid YAML"):
        read_rater_ids(write("bad.yaml", "R_a: [\n"))


def test_exclude_raters(write):
    df = read_comparisons(write("c.csv", GOOD))
    kept, removed, unknown = exclude_raters(df, ["r1", "nobody"])
    assert removed == ["r1"] and unknown == ["nobody"] and set(kept["rater"]) == {"r2", "r3"}
    with pytest.raises(InputError, match="none of the 2 rater id"):
        exclude_raters(df, ["x", "y"], source="o.txt")


def test_import_teacher_test_counts():
    """The documented counts: 5,076 comparisons, 264 ties; 4,782 from 113 raters without the
    authors' outliers."""
    df = import_teacher_test(bundled_folder() / "items.jsonl")
    assert len(df) == FILE_COUNTS["n_comparisons"] == 5076
    assert int((df["outcome"] == "tie").sum()) == FILE_COUNTS["n_ties"] == 264
    assert df["item"].nunique() == 49 and df["rater"].nunique() == 120
    assert set(df["attribute"]) == set(ATTRIBUTES)
    assert set(df["first"]) | set(df["second"]) == {"Teacher", "GPT-3 Davinci", "blender_9B"}
    kept, removed, _ = exclude_raters(df, read_rater_ids(bundled_folder() / "outliers.yaml"))
    assert len(removed) == 7 and len(kept) == 4782 and kept["rater"].nunique() == 113
    # every rater judged the same pair, in the same order, on the three questions of an item
    per = df.groupby(["item", "rater"])[["first", "second"]].nunique()
    assert (per == 1).all().all()


#: SHA-256 of the files at github.com/anaistack/ai-teacher-test @ 6b97ec54 (data/2_comparisons/)
UPSTREAM_SHA256 = {
    "items.jsonl": "9475c8a74d803ce52e98d14ccae07cca219e62314ec763b5a4748536e42f9f29",
    "outliers.yaml": "145ce4ed62abeb5fb36b9ed14558b151e363d5f55fbc542a9192e070360f64e3",
    "LICENSE.txt": "9457faef63f2af61ac358bbc1a462147359be0b369afeb8b9fb52889f62f18d4",
}


def test_bundled_copy_is_the_upstream_data_unchanged():
    """Checked on every machine (no skip): against the upstream files' recorded hashes, and
    against the shared copy too where one lies beside the clone."""
    import hashlib

    for name, digest in UPSTREAM_SHA256.items():
        data = (bundled_folder() / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == digest, name
        if SHARED.exists():
            assert data == (SHARED / name).read_bytes()


ITEM = {
    "filename": "chat01.tsv",
    "line_idx": [3, 4],
    "task": "TSCC",
    "comparisons": {
        "attributes": {"helping the student more": {"R1": ["Teacher", "blender_9B", True]}},
        "timing": {"FIRST_CLICK": {"R1": 2.5}},
    },
}


def _jsonl(*objs) -> str:
    return "".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objs)


def test_import_small_file(write):
    second = dict(ITEM, line_idx=[9])
    second["comparisons"] = {
        "attributes": {"helping the student more": {"R2": ["GPT-3 Davinci", "Teacher", None]}}
    }
    df = import_teacher_test(write("items.jsonl", _jsonl(ITEM, second)))
    assert df[["item", "rater", "first", "second", "outcome"]].values.tolist() == [
        ["chat01:3-4", "R1", "Teacher", "blender_9B", "first"],
        ["chat01:9", "R2", "GPT-3 Davinci", "Teacher", "tie"],
    ]
    assert df["first_click"].iloc[0] == 2.5


@pytest.mark.parametrize(
    ("lines", "line", "needle"),
    [
        ([ITEM, "{not json"], 2, "not valid JSON"),
        ([ITEM, "[1, 2]"], 2, "JSON object"),
        ([ITEM, dict(ITEM, line_idx=[7], comparisons={})], 2, "'attributes'"),
        (
            [dict(ITEM, comparisons={"attributes": {"q": {"R1": ["Teacher", "x"]}}})],
            1,
            "expected [FIRST_PLAYER",
        ),
        (
            [dict(ITEM, comparisons={"attributes": {"q": {"R1": ["Teacher", "x", "yes"]}}})],
            1,
            "true, false or null",
        ),
        ([ITEM, ITEM], 2, "already appeared on line 1"),
        ([dict(ITEM, line_idx="3")], 1, "line_idx"),
    ],
)
def test_import_malformed_jsonl(write, lines, line, needle):
    with pytest.raises(InputError) as e:
        import_teacher_test(write("items.jsonl", _jsonl(*lines)))
    assert e.value.line == line and needle in str(e.value)
