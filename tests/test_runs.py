"""The run directory: config.json, atomic writes, results.json last, JSON conversion."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import edueval
from edueval import runs
from edueval.runs import RunDir, atomic_write, default_out, package_versions, to_jsonable


def _config(path: Path) -> dict:
    return json.loads((path / "config.json").read_text(encoding="utf-8"))


def _leftover_temp_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.endswith(".tmp") or p.name.startswith(".")]


@pytest.fixture
def inputs(tmp_path) -> dict[str, Path]:
    a = tmp_path / "in" / "data.csv"
    a.parent.mkdir()
    a.write_bytes(b"student,skill,correct\ns1,A,1\n")
    b = tmp_path / "in" / "params.csv"
    b.write_bytes(np.random.default_rng(1).bytes(5000))
    return {"data": a, "params": b}


def test_config_json_contents(tmp_path, inputs):
    out = tmp_path / "run"
    RunDir(
        out,
        command="kt fit",
        params={"n_restarts": np.int64(5), "tol": 1e-9, "path": Path("x/y"), "ratio": np.nan},
        seed=42,
        inputs=inputs,
    )
    cfg = _config(out)
    assert cfg["command"] == "kt fit"
    assert cfg["status"] == "running"
    assert cfg["seed"] == 42
    assert cfg["params"] == {"n_restarts": 5, "tol": 1e-9, "path": "x/y", "ratio": None}
    assert isinstance(cfg["params"]["n_restarts"], int)
    assert cfg["started"]
    versions = cfg["versions"]
    assert versions["numpy"] == np.__version__
    assert versions["pandas"] == pd.__version__
    assert versions["edueval"] == edueval.__version__
    assert versions["python"].count(".") == 2
    assert set(cfg["inputs"]) == {"data", "params"}
    for name, path in inputs.items():
        entry = cfg["inputs"][name]
        assert entry["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert entry["bytes"] == len(path.read_bytes())
        assert entry["path"] == str(path)


def test_config_without_inputs_or_seed(tmp_path):
    RunDir(tmp_path / "run", command="kt study", params={})
    cfg = _config(tmp_path / "run")
    assert cfg["seed"] is None
    assert cfg["inputs"] == {}
    assert cfg["params"] == {}


def test_package_versions():
    v = package_versions()
    assert v["numpy"] == np.__version__
    assert "platform" in v and "python" in v


def test_status_running_then_complete(tmp_path):
    out = tmp_path / "run"
    run = RunDir(out, command="kt simulate", params={"n": 3}, seed=1)
    assert _config(out)["status"] == "running"
    assert "finished" not in _config(out)
    assert not (out / "results.json").exists()
    run.table("responses", pd.DataFrame({"a": [1, 2]}))
    assert _config(out)["status"] == "running"
    run.finish({"n": np.int64(2)}, "<html>report</html>")
    cfg = _config(out)
    assert cfg["status"] == "complete"
    assert cfg["finished"] >= cfg["started"]
    results = json.loads((out / "results.json").read_text())
    assert results["n"] == 2
    assert results["tables"] == {"responses": "responses.csv"}
    assert (out / "report.html").read_text() == "<html>report</html>"
    assert (out / "responses.csv").read_text() == "a\n1\n2\n"
    assert not _leftover_temp_files(out)


def test_finish_without_report(tmp_path):
    run = RunDir(tmp_path / "run", command="x", params={})
    run.finish({"a": 1})
    assert not (tmp_path / "run" / "report.html").exists()
    assert json.loads((tmp_path / "run" / "results.json").read_text()) == {
        "a": 1,
        "tables": {},
        "status": "complete",
    }


def test_a_failed_run_says_so_in_both_files(tmp_path):
    run = RunDir(tmp_path / "run", command="x", params={})
    run.finish({"a": 1}, status="failed")
    assert json.loads((tmp_path / "run" / "results.json").read_text())["status"] == "failed"
    assert json.loads((tmp_path / "run" / "config.json").read_text())["status"] == "failed"
    with pytest.raises(ValueError):
        RunDir(tmp_path / "other", command="x", params={}).finish({}, status="running")


def test_open_runs_are_marked_and_finished_ones_are_not(tmp_path):
    from edueval.runs import mark_open_runs

    done = RunDir(tmp_path / "done", command="x", params={})
    done.finish({})
    open_run = RunDir(tmp_path / "open", command="x", params={})
    marked = mark_open_runs("interrupted")
    assert open_run.path in marked and done.path not in marked
    assert json.loads((tmp_path / "open" / "config.json").read_text())["status"] == "interrupted"
    assert json.loads((tmp_path / "done" / "config.json").read_text())["status"] == "complete"
    assert mark_open_runs("interrupted") == []


def test_check_out_dir(tmp_path):
    from edueval.io import InputError
    from edueval.runs import check_out_dir

    (tmp_path / "f").write_text("x")
    for bad in (tmp_path / "f", tmp_path / "f" / "sub"):
        with pytest.raises(InputError, match="is a file"):
            check_out_dir(bad, "kt fit", inputs=())
    run = RunDir(tmp_path / "r", command="kt fit", params={})
    run.table("params", pd.DataFrame({"a": [1]}))
    run.finish({})
    assert check_out_dir(tmp_path / "r", "kt fit", inputs=()) == tmp_path / "r"
    with pytest.raises(InputError, match="holds the results of 'kt fit'"):
        check_out_dir(tmp_path / "r", "pairwise fit", inputs=())
    check_out_dir(tmp_path / "r", "pairwise fit", inputs=(), overwrite=True)
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == []


def test_finish_keeps_given_tables_entry(tmp_path):
    run = RunDir(tmp_path / "run", command="x", params={})
    run.table("t", pd.DataFrame({"a": [1]}))
    run.finish({"tables": ["custom"]})
    assert json.loads((tmp_path / "run" / "results.json").read_text())["tables"] == ["custom"]


def test_results_json_written_after_everything_else(tmp_path, monkeypatch):
    written: list[tuple[str, str | None]] = []
    real = runs.atomic_write

    def spy(path, data):
        path = Path(path)
        status = json.loads(data)["status"] if path.name == "config.json" else None
        written.append((path.name, status))
        return real(path, data)

    monkeypatch.setattr(runs, "atomic_write", spy)
    run = RunDir(tmp_path / "run", command="x", params={})
    run.table("one", pd.DataFrame({"a": [1]}))
    run.text("notes.txt", "hello")
    run.table("two", pd.DataFrame({"b": [2]}))
    run.finish({"ok": True}, "<html></html>")
    names = [n for n, _ in written]
    assert names == [
        "config.json",
        "one.csv",
        "notes.txt",
        "two.csv",
        "report.html",
        "results.json",
        "config.json",
    ]
    assert written[0][1] == "running" and written[-1][1] == "complete"


def test_figure_written_as_png(tmp_path):
    from edueval.report.figures import new_figure

    run = RunDir(tmp_path / "run", command="x", params={})
    fig, ax = new_figure(3.0, 2.0)
    ax.plot([0, 1], [0, 1])
    path = run.figure("curve", fig)
    assert path == tmp_path / "run" / "figures" / "curve.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert run.figures == {"curve": path}


def test_stale_results_removed_at_start(tmp_path):
    out = tmp_path / "run"
    first = RunDir(out, command="x", params={"v": 1})
    first.finish({"v": 1}, "<html>old</html>")
    assert (out / "results.json").exists() and (out / "report.html").exists()

    RunDir(out, command="x", params={"v": 2})
    assert not (out / "results.json").exists()
    assert not (out / "report.html").exists()
    cfg = _config(out)
    assert cfg["status"] == "running" and cfg["params"] == {"v": 2}


def test_stale_results_removed_when_run_stops_half_way(tmp_path):
    out = tmp_path / "run"
    RunDir(out, command="x", params={}).finish({"v": 1}, "<html></html>")
    run = RunDir(out, command="x", params={})
    run.table("partial", pd.DataFrame({"a": [1]}))
    # ... the run dies here, before finish()
    assert not (out / "results.json").exists()
    assert _config(out)["status"] == "running"


# --------------------------------------------------------------------------------------------
# atomic_write
# --------------------------------------------------------------------------------------------


def test_atomic_write_text_and_bytes(tmp_path):
    p = atomic_write(tmp_path / "sub" / "dir" / "a.txt", "héllo\n")
    assert p == tmp_path / "sub" / "dir" / "a.txt"
    assert p.read_text(encoding="utf-8") == "héllo\n"
    b = atomic_write(tmp_path / "b.bin", b"\x00\x01\xff")
    assert b.read_bytes() == b"\x00\x01\xff"
    atomic_write(tmp_path / "a2.txt", "first")
    atomic_write(tmp_path / "a2.txt", "second")
    assert (tmp_path / "a2.txt").read_text() == "second"
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == [
        "a.txt",
        "a2.txt",
        "b.bin",
    ]


def test_atomic_write_failure_leaves_old_file_and_no_temp(tmp_path):
    target = tmp_path / "data.json"
    target.write_text("old")
    with pytest.raises(TypeError):
        atomic_write(target, 12345)  # type: ignore[arg-type]  # not str/bytes: write fails
    assert target.read_text() == "old"
    assert list(tmp_path.iterdir()) == [target]


def test_atomic_write_interrupted_replace_leaves_no_temp(tmp_path, monkeypatch):
    def fail(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(runs.os, "replace", fail)
    with pytest.raises(KeyboardInterrupt):
        atomic_write(tmp_path / "x.txt", "data")
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------------------------
# to_jsonable
# --------------------------------------------------------------------------------------------


def test_to_jsonable_scalars():
    assert to_jsonable(np.float64(0.25)) == 0.25 and type(to_jsonable(np.float64(0.25))) is float
    assert type(to_jsonable(np.float32(0.5))) is float
    assert to_jsonable(np.int64(7)) == 7 and type(to_jsonable(np.int64(7))) is int
    assert type(to_jsonable(np.int8(-1))) is int
    assert type(to_jsonable(np.uint32(3))) is int
    assert to_jsonable(np.bool_(True)) is True
    assert to_jsonable(True) is True
    assert to_jsonable(3) == 3
    assert to_jsonable("s") == "s"
    assert to_jsonable(None) is None
    assert to_jsonable(Path("a/b")) == str(Path("a/b"))


@pytest.mark.parametrize("value", [float("nan"), np.nan, np.float32("nan"), math.inf, -np.inf])
def test_to_jsonable_non_finite_is_null(value):
    assert to_jsonable(value) is None


def test_to_jsonable_containers():
    obj = {
        1: np.array([1.0, np.nan, 3.0]),
        "t": (np.int64(1), [np.float64(np.inf)]),
        "s": {np.int64(2)},
        "df": pd.DataFrame({"a": [1, 2], "b": [0.5, np.nan]}),
        "nested": {"x": {"y": np.bool_(False)}},
    }
    out = to_jsonable(obj)
    assert out == {
        "1": [1.0, None, 3.0],
        "t": [1, [None]],
        "s": [2],
        "df": [{"a": 1, "b": 0.5}, {"a": 2, "b": None}],
        "nested": {"x": {"y": False}},
    }
    # strict JSON (no NaN/Infinity tokens) and back
    assert json.loads(json.dumps(out, allow_nan=False)) == out


def test_default_out():
    path = default_out("kt fit")
    assert path.parent == Path("runs")
    assert path.name.startswith("kt-fit-")


def test_previous_run_tables_are_removed_but_user_files_kept(tmp_path):
    from edueval.runs import RunDir as _RunDir

    first = _RunDir(tmp_path, command="a", params={})
    first.table("old_table", pd.DataFrame({"x": [1]}))
    first.finish({})
    (tmp_path / "mine.csv").write_text("keep me\n")
    second = _RunDir(tmp_path, command="b", params={})
    assert not (tmp_path / "old_table.csv").exists()
    assert (tmp_path / "mine.csv").read_text() == "keep me\n"
    assert not (tmp_path / "results.json").exists()
    second.finish({})
