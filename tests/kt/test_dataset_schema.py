"""Folder and glob datasets read through the response file's schema (issue 39, points 9-10):
each file's header and each block's values get the checks one file gets in memory, with the
file named; globs only with ``*``/``?`` and only when no such file exists; Dask never globs a
file name."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask.dataframe")

from edueval import partitioned  # noqa: E402


@pytest.fixture(scope="module")
def responses() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = [(f"s{s}", f"skill{k}", int(rng.random() < 0.3 + 0.07 * o), o)
            for s in range(16) for k in range(2) for o in range(8)]  # fmt: skip
    return pd.DataFrame(rows, columns=["student", "skill", "correct", "order"])


def _two_files(df: pd.DataFrame, folder, names=("a.csv", "b.csv")):
    folder.mkdir(parents=True, exist_ok=True)
    half = len(df) // 2
    df.iloc[:half].to_csv(folder / names[0], index=False)
    df.iloc[half:].to_csv(folder / names[1], index=False)
    return folder


def _params(path) -> pd.DataFrame:
    return pd.read_csv(path / "params.csv").set_index("skill")


def _refused(res, *texts: str) -> str:
    assert res.code == 2, res.err
    assert len(res.err_lines) == 1 and "Traceback" not in res.err, res.err
    for text in texts:
        assert text in res.err_lines[0], res.err_lines[0]
    return res.err_lines[0]


def test_header_mistakes_are_refused_per_file(cli, tmp_path, responses):
    twice = _two_files(responses[["student", "skill", "correct", "correct", "order"]],
                       tmp_path / "twice")  # fmt: skip
    _refused(cli("kt", "fit", twice, "--out", tmp_path / "o1"), "a.csv", "'correct' twice")
    ordr = _two_files(responses.rename(columns={"order": "ordr"}), tmp_path / "ordr")
    _refused(cli("kt", "fit", ordr, "--out", tmp_path / "o2"), "did you mean 'order'?")


def test_values_are_checked_with_the_file_and_line(cli, tmp_path, responses):
    df = responses.copy()
    df.loc[df.index[-3], "skill"] = " skill0"  # a phantom skill, in the second file
    data = _two_files(df, tmp_path / "space")
    line = len(df) - len(df) // 2 - 3 + 2  # header is line 1
    _refused(cli("kt", "fit", data, "--out", tmp_path / "o"), "b.csv", f"line {line}",
             "' skill0'")  # fmt: skip
    df = responses.copy()
    df["correct"] = df["correct"].astype(str)
    df.loc[df.index[5], "correct"] = "yes"
    data = _two_files(df, tmp_path / "yes")
    _refused(cli("kt", "fit", data, "--out", tmp_path / "o3"), "a.csv", "line 7", "'yes'")


def test_a_cut_off_last_line_is_refused_with_its_line(cli, tmp_path, responses):
    data = _two_files(responses, tmp_path / "cut")
    text = (data / "b.csv").read_text()
    (data / "b.csv").write_text(text[:-5])  # "s15,skill1,1,7\n" -> "s15,skill1,"
    n_lines = text.count("\n")
    _refused(cli("kt", "fit", data, "--out", tmp_path / "o"), "b.csv", f"line {n_lines}")


def test_later_blocks_name_the_line_in_the_file(tmp_path, responses, monkeypatch):
    """A file read in several blocks: the line is counted from the start of the file."""
    from edueval.io import InputError
    from edueval.kt.data import Columns, RowFilter
    from edueval.kt.scale import outofcore as ooc

    df = responses.copy()
    df.loc[df.index[200], "student"] = "s1\u200b"
    df.to_csv(tmp_path / "one.csv", index=False)
    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "one.csv").write_bytes((tmp_path / "one.csv").read_bytes())
    monkeypatch.setattr(partitioned, "CSV_BLOCK_BYTES", 512)
    ds = partitioned.open_dataset(folder)
    assert len(partitioned._pieces(ds, 512)) > 5
    cols = Columns()
    with pytest.raises(InputError) as err:
        partitioned.map_blocks(None, ds, ["student", "skill", "correct", "order"],
                               ooc.block_counts, (cols, RowFilter()),
                               ("student", "skill"))  # fmt: skip
    assert err.value.file.endswith("one.csv") and err.value.line == 202, str(err.value)
    # and every row is read once, whatever the block size
    blocks = partitioned.map_blocks(None, ds, ["skill"], _count, (), ("skill",))
    assert sum(blocks) == len(df)


def _count(block: pd.DataFrame) -> int:
    return len(block)


def test_columns_in_another_order_and_brackets_in_names_fit_as_one_file(cli, tmp_path,
                                                                       responses):  # fmt: skip
    responses.to_csv(tmp_path / "all.csv", index=False)
    assert cli("kt", "fit", tmp_path / "all.csv", "--out", tmp_path / "mem").code == 0
    data = _two_files(responses, tmp_path / "odd", names=("a[1].csv", "b.csv"))
    b = pd.read_csv(data / "b.csv")
    b[["order", "correct", "skill", "student"]].to_csv(data / "b.csv", index=False)
    res = cli("kt", "fit", data, "--out", tmp_path / "ds")
    assert res.code == 0, res.err
    pd.testing.assert_frame_equal(_params(tmp_path / "mem"), _params(tmp_path / "ds"))
    res = cli("kt", "fit", str(data / "*.csv"), "--out", tmp_path / "glob")
    assert res.code == 0, res.err
    pd.testing.assert_frame_equal(_params(tmp_path / "mem"), _params(tmp_path / "glob"))


def test_globs_only_when_asked_for(cli, tmp_path, responses):
    responses.to_csv(tmp_path / "r1.csv", index=False)
    # brackets are never a pattern: r[1].csv is that file or "file not found", never r1.csv
    _refused(cli("kt", "fit", tmp_path / "r[1].csv", "--out", tmp_path / "o"), "not found")
    assert not partitioned.is_dataset(tmp_path / "r[1].csv")
    assert partitioned.is_dataset(tmp_path / "r*.csv")
    # a file whose name holds '*' is that file, not a pattern
    star = tmp_path / "odd*.csv"
    responses.to_csv(star, index=False)
    assert not partitioned.is_dataset(star)
    assert partitioned._files(str(star)) == [str(star)]


def test_a_predictions_dataset_checks_its_probabilities(cli, tmp_path, responses):
    df = responses.assign(p_correct=0.5, p_known=0.25)
    df.loc[df.index[-1], "p_correct"] = 1.5
    data = _two_files(df, tmp_path / "pred")
    line = len(df) - len(df) // 2 + 1
    _refused(cli("kt", "evaluate", data, "--out", tmp_path / "o"), "b.csv", f"line {line}",
             "column 'p_correct'", "[0, 1]")  # fmt: skip


@pytest.mark.parametrize("block_bytes", [1 << 20, 512])
def test_blank_lines_do_not_shift_the_line_named(tmp_path, responses, monkeypatch, block_bytes):
    """Blank lines (skipped as rows) still count as lines: the bad cell is named at its own line,
    in a file read as one block and in one read in several."""
    from edueval.io import InputError
    from edueval.kt.data import Columns, RowFilter
    from edueval.kt.scale import outofcore as ooc

    df = responses.copy()
    df.loc[df.index[200], "student"] = "s1\u200b"
    rows = df.to_csv(index=False).splitlines()
    # a blank line after the header, a blank line with a carriage return, and two together
    text = "\n".join([rows[0], "", *rows[1:50], "\r", *rows[50:120], "", "", *rows[120:]]) + "\n"
    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "one.csv").write_text(text, encoding="utf-8", newline="")
    expected = 1 + text.split("\n").index(rows[201])  # 1-based line of record 200
    monkeypatch.setattr(partitioned, "CSV_BLOCK_BYTES", block_bytes)
    ds = partitioned.open_dataset(folder)
    with pytest.raises(InputError) as err:
        partitioned.map_blocks(None, ds, ["student", "skill", "correct", "order"],
                               ooc.block_counts, (Columns(), RowFilter()),
                               ("student", "skill"))  # fmt: skip
    assert err.value.line == expected == 206, str(err.value)
    blocks = partitioned.map_blocks(None, ds, ["skill"], _count, (), ("skill",))
    assert sum(blocks) == len(df)
