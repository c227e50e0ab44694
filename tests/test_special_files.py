"""Special files and folders where a file is read or written (issue 39, point 10): one line and
exit 2 before anything is opened or written -- never a hang on a FIFO, never IsADirectoryError.
Also: several ``--model`` values are all checked before the first model is called."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from edueval.io import InputError, check_regular_file, read_jsonl, read_table, read_text

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.csv"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("reader", [read_text, read_table, read_jsonl, check_regular_file])
def test_the_readers_refuse_a_fifo_and_a_folder_before_opening(reader, fifo, tmp_path):
    # opening a FIFO with no writer would block: a refusal proves it was never opened
    with pytest.raises(InputError, match=r"pipe\.csv.*found a FIFO \(named pipe\)"):
        reader(fifo)
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    with pytest.raises(InputError, match="expected a file, found a directory"):
        reader(folder)
    with pytest.raises(InputError, match="file not found"):
        reader(tmp_path / "missing.csv")


def test_a_fifo_as_endpoints_file_is_refused_before_any_folder(cli, fifo, tmp_path):
    from edueval.misconceptions import generate_items

    generate_items(2, seed=1).to_csv(tmp_path / "q.csv", index=False)
    out = tmp_path / "run"
    res = cli("malalgo", "run", tmp_path / "q.csv", "--model", "openai/a", "--model", "openai/b",
              "--endpoints", fifo, "--out", out)  # fmt: skip
    assert res.code == 2 and len(res.err_lines) == 1, res.err
    assert "found a FIFO" in res.err
    assert not out.exists()


def test_every_model_is_checked_before_the_first_is_called(cli, tmp_path):
    from edueval.misconceptions import generate_items

    generate_items(2, seed=1).to_csv(tmp_path / "q.csv", index=False)
    out = tmp_path / "run"
    # the first model's server does not exist: were it called, the error would be 'cannot reach'
    res = cli("malalgo", "run", tmp_path / "q.csv", "--model", "openai/a", "--model", "bogus",
              "--base-url", "http://127.0.0.1:9/v1", "--max-failures", "0", "--out", out)  # fmt: skip
    assert res.code == 2 and len(res.err_lines) == 1, res.err
    assert "unknown model 'bogus'" in res.err
    assert not out.exists()


def test_a_fifo_as_a_compared_runs_config_is_refused(cli, fifo, tmp_path):
    a, b = tmp_path / "runA", tmp_path / "runB"
    a.mkdir()
    b.mkdir()
    os.rename(fifo, a / "config.json")
    res = cli("compare", a, b, "--out", tmp_path / "cmp")
    assert res.code == 2 and len(res.err_lines) == 1, res.err
    assert "config.json" in res.err and "found a FIFO" in res.err
    (a / "config.json").unlink()
    (a / "config.json").mkdir()
    res = cli("compare", a, b, "--out", tmp_path / "cmp")
    assert res.code == 2 and "found a directory" in res.err
    assert not (tmp_path / "cmp").exists()


@pytest.mark.parametrize(
    "args, blocked",
    [
        (("turing", "power", "--reps", "10"), "config.json"),
        (("turing", "power", "--reps", "10"), "report.html"),
        (("pairwise", "fit", "DATA", "--save-draws"), "posterior.nc"),
    ],
)
def test_a_folder_where_a_run_writes_a_file_is_refused_first(cli, tmp_path, args, blocked):
    data = tmp_path / "c.csv"
    data.write_text("item,agent_a,agent_b,outcome\n")  # never read: the refusal comes first
    out = tmp_path / "run"
    (out / blocked).mkdir(parents=True)
    before = sorted(p.name for p in out.rglob("*"))
    res = cli(*[data if a == "DATA" else a for a in args], "--out", out)
    assert res.code == 2 and len(res.err_lines) == 1, res.err
    assert f"{blocked} there is not a file" in res.err
    assert sorted(p.name for p in out.rglob("*")) == before
