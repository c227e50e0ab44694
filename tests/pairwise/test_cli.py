"""``edueval pairwise ...`` end to end, and bad input: one line on stderr, exit 2, no results.json.

Sampler sizes are tiny here (the numbers are checked in the other test files)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from .reference import simulate

SMALL = ["--chains", "2", "--warmup", "150", "--draws", "150"]
ITEM = {
    "filename": "chat01.tsv",
    "line_idx": [3, 4],
    "task": "TSCC",
    "comparisons": {
        "attributes": {
            "helping the student more": {
                "R1": ["Teacher", "blender_9B", True],
                "R2": ["blender_9B", "Teacher", None],
                "R3": ["GPT-3 Davinci", "Teacher", False],
            }
        }
    },
}


@pytest.fixture
def comparisons(write) -> Path:
    df, _ = simulate(6, 20, seed=7)
    df.loc[df.index[::9], "outcome"] = "tie"
    df["attribute"] = ["q1", "q2"] * (len(df) // 2)
    return write("comparisons.csv", df.to_csv(index=False))


def one_line_error(res, out: Path | None = None, *needles: str) -> str:
    assert res.code == 2, (res.code, res.err)
    assert "Traceback" not in res.err
    assert len(res.err_lines) == 1, res.err
    line = res.err_lines[0]
    assert line.startswith("error: ")
    for n in needles:
        assert n in line, line
    if out is not None:
        assert not (out / "results.json").exists()
    return line


def test_fit_summarize_hierarchical_raters_end_to_end(cli, comparisons, tmp_path, write):
    out = tmp_path / "fit"
    res = cli("pairwise", "fit", comparisons, "--out", out, "--ties", "half", *SMALL, "--seed", "3")
    assert res.code == 0, res.err
    for name in ("abilities.csv", "groups.csv", "agents.csv", "report.html", "config.json"):
        assert (out / name).exists(), name
    results = json.loads((out / "results.json").read_text())
    assert results["n_groups"] == 12
    ab = pd.read_csv(out / "abilities.csv")
    # ArviZ's diagnostics: rank-normalised R-hat, bulk and tail ESS (formerly one "ess" column)
    assert len(ab) == 36 and {
        "alpha_hdi_low", "rank_mean", "prob_hdi_high", "rhat", "ess_bulk", "ess_tail"
    } <= set(ab.columns)  # fmt: skip
    config = json.loads((out / "config.json").read_text())
    assert config["status"] == "complete" and config["seed"] == 3
    assert config["params"]["ties"] == "half"

    scores = ab[["item", "agent"]].drop_duplicates().assign(uptake=lambda t: range(len(t)))
    sp = write("scores.csv", scores.to_csv(index=False))
    res = cli(
        "pairwise",
        "summarize",
        out,
        "--out",
        tmp_path / "sum",
        "--scores",
        sp,
        "--score-column",
        "uptake",
        "--agent-order",
        "C,B",
    )
    assert res.code == 0, res.err
    tk = pd.read_csv(tmp_path / "sum" / "tukey.csv")
    assert list(tk["agent_a"][:2]) == ["C", "C"]
    assert (tmp_path / "sum" / "correlation.csv").exists()
    assert "q1: F(2, 15)" in res.err  # 6 items x 3 agents per attribute

    res = cli("pairwise", "hierarchical", comparisons, "--out", tmp_path / "h", *SMALL)
    assert res.code == 0, res.err
    assert len(pd.read_csv(tmp_path / "h" / "differences.csv")) == 6

    ref = write("ref.txt", "r0\nr1\n")
    res = cli(
        "pairwise",
        "raters",
        comparisons,
        "--out",
        tmp_path / "r",
        "--compare",
        ref,
        "--per",
        "rater",
        *SMALL,
    )
    assert res.code == 0, res.err
    assert "reference raters among them" in res.err
    assert len(pd.read_csv(tmp_path / "r" / "raters.csv")) == 20


def test_import_then_fit(cli, write, tmp_path):
    items = write("items.jsonl", json.dumps(ITEM) + "\n")
    res = cli("pairwise", "import-teacher-test", items, "--out", tmp_path / "imp")
    assert res.code == 0, res.err
    df = pd.read_csv(tmp_path / "imp" / "comparisons.csv")
    assert df["outcome"].tolist() == ["first", "tie", "second"]


def test_unknown_outcome(cli, write, tmp_path):
    path = write(
        "c.csv", "item,attribute,rater,first,second,outcome\ni,q,r,A,B,first\ni,q,s,A,B,A\n"
    )
    out = tmp_path / "o"
    one_line_error(
        cli("pairwise", "fit", path, "--out", out),
        out,
        "line 3",
        "column 'outcome'",
        "first, second, tie",
        "'A'",
    )


def test_agent_compared_with_itself(cli, write, tmp_path):
    path = write("c.csv", "item,attribute,rater,first,second,outcome\ni,q,r,A,A,first\n")
    one_line_error(
        cli("pairwise", "fit", path, "--out", tmp_path / "o"),
        None,
        "line 2",
        "column 'second'",
        "itself",
    )


def test_item_with_one_comparison_is_skipped_with_a_warning(cli, comparisons, tmp_path):
    df = pd.read_csv(comparisons)
    lonely = df.iloc[:1].assign(item="lonely", outcome="first")
    path = comparisons.with_name("with_lonely.csv")
    pd.concat([df, lonely]).to_csv(path, index=False)
    out = tmp_path / "o"
    res = cli("pairwise", "fit", path, "--out", out, *SMALL)
    assert res.code == 0, res.err
    assert "warning:" in res.err and "lonely/" in res.err
    assert "lonely" not in set(pd.read_csv(out / "abilities.csv")["item"])
    assert pd.read_csv(out / "skipped.csv")["item"].tolist() == ["lonely"]
    # with --min-comparisons 1 it is fitted (its posterior is close to the prior)
    res = cli("pairwise", "fit", path, "--out", tmp_path / "o1", "--min-comparisons", "1", *SMALL)
    assert res.code == 0 and "lonely" in set(pd.read_csv(tmp_path / "o1" / "abilities.csv")["item"])


def test_only_single_comparison_items_is_an_error(cli, write, tmp_path):
    path = write(
        "c.csv", "item,attribute,rater,first,second,outcome\ni,q,r,A,B,first\nj,q,r,A,B,second\n"
    )
    out = tmp_path / "o"
    one_line_error(cli("pairwise", "fit", path, "--out", out), out, "fewer than 3 comparisons")


def test_rater_file_naming_nobody(cli, comparisons, write, tmp_path):
    nobody = write("outliers.yaml", "R_ghost: 1\nR_other: 2\n")
    out = tmp_path / "o"
    one_line_error(
        cli("pairwise", "fit", comparisons, "--out", out, "--exclude-raters", nobody),
        out,
        "outliers.yaml",
        "none of the 2 rater id(s)",
    )
    one_line_error(
        cli("pairwise", "raters", comparisons, "--out", out, "--compare", nobody), out, "none of"
    )


def test_some_unknown_raters_only_warn(cli, comparisons, write, tmp_path):
    ids = write("ids.txt", "r0\nR_ghost\n")
    res = cli(
        "pairwise", "fit", comparisons, "--out", tmp_path / "o", "--exclude-raters", ids, *SMALL
    )
    assert res.code == 0, res.err
    assert "R_ghost" in res.err
    cfg = json.loads((tmp_path / "o" / "config.json").read_text())
    assert cfg["params"]["excluded_raters"] == ["r0"]


def test_malformed_jsonl(cli, write, tmp_path):
    items = write("items.jsonl", json.dumps(ITEM) + "\n{oops\n")
    out = tmp_path / "o"
    one_line_error(
        cli("pairwise", "import-teacher-test", items, "--out", out), out, "line 2", "not valid JSON"
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--ties", "coin"], "--ties must be one of"),
    ],
)
def test_bad_options(cli, comparisons, tmp_path, args, needle):
    out = tmp_path / "o"
    one_line_error(cli("pairwise", "fit", comparisons, "--out", out, *args), out, needle)


def test_missing_file(cli, tmp_path):
    one_line_error(
        cli("pairwise", "fit", tmp_path / "nope.csv", "--out", tmp_path / "o"),
        None,
        "file not found",
    )
    empty = tmp_path / "empty"  # an input folder; the output goes beside it, not inside
    empty.mkdir()
    one_line_error(
        cli("pairwise", "summarize", empty, "--out", tmp_path / "o"), None, "no abilities.csv"
    )
    one_line_error(
        cli("pairwise", "replicate-teacher-test", empty, "--out", tmp_path / "o"),
        None,
        "missing items.jsonl",
    )


@pytest.mark.slow
def test_replicate_teacher_test_small(cli, tmp_path):
    out = tmp_path / "rep"
    res = cli("pairwise", "replicate-teacher-test", "--out", out, *SMALL)
    assert res.code == 0, res.err
    results = json.loads((out / "results.json").read_text())
    assert results["counts"]["n_kept"] == 4782 and results["counts"]["n_raters_kept"] == 113
    assert set(results["differences"]) == {"random", "drop"}
    tb = results["differences"]["random"]["Teacher - Blender"]
    assert all(0.2 < v < 1.2 for v in tb.values())
    html = (out / "report.html").read_text()
    assert "Discussion" in html and "0.60 / 0.55 / 0.75" in html
    # one display name per agent and attribute in every section, never cut
    text = re.sub(r"<img[^>]+>", "", html)
    for raw in ("blender_9B", "helping the student more", "more likely said by a teacher"):
        assert raw not in text, raw
    assert not re.search(r"Blender(?! 9B)|GPT-3(?! Davinci)", text.split("<h2>", 1)[1])
    assert (out / "differences_vs_paper.csv").exists()
    # the authors' released abilities (441 values) are all matched; ties drop is the closer
    released = results["released_abilities"]
    assert released["drop"]["n_matched"] == released["random"]["n_matched"] == 441
    assert released["drop"]["mean_abs_diff"] < released["random"]["mean_abs_diff"]
