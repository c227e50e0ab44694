"""``--cluster`` / ``--scheduler`` mistakes through the installed console script: one line, exit 2."""

from __future__ import annotations

import pytest

pytest.importorskip("distributed")

STUDY = ["kt", "study", "--students", "20", "--skills", "3", "--opportunities", "5"]


@pytest.mark.parametrize("value", ["local:0", "locl:2", "local:two"])
def test_malformed_cluster_is_one_line(edueval, tmp_path, value):
    out = tmp_path / "o"
    run = edueval(*STUDY, "--out", out, "--cluster", value)
    assert run.code == 2, run.err
    assert run.err_lines == [
        "error: --cluster must be local:N with N >= 1 worker processes, optionally :MEMORY per "
        f"worker (e.g. local:4 or local:2:3GB), got {value!r}"
    ]
    assert not (out / "results.json").exists()


@pytest.mark.parametrize("how", ["option", "env"])
def test_unreachable_scheduler_is_one_line(edueval, tmp_path, how):
    out = tmp_path / "o"
    env = {"EDUEVAL_CONNECT_TIMEOUT": "1s"}
    args = ["turing", "simulate", "--reps", "2", "--out", out]
    if how == "option":
        args += ["--scheduler", "tcp://127.0.0.1:9"]
    else:
        env["EDUEVAL_SCHEDULER"] = "tcp://127.0.0.1:9"
    run = edueval(*args, env=env)
    assert run.code == 2, run.err
    assert len(run.err_lines) == 1, run.err
    assert run.err_lines[0].startswith("error: cannot reach the Dask scheduler 'tcp://127.0.0.1:9'")
    assert not (out / "results.json").exists()


def test_kt_fit_on_a_local_cluster_is_the_in_process_fit(edueval, tmp_path):
    """Through the console script: the same params.csv byte for byte, and Dask's own logging
    (shuffle start/stop, worker chatter) never reaches the user's terminal."""
    sim = edueval("kt", "simulate", "--students", "60", "--skills", "5", "--opportunities", "10",
                  "--out", tmp_path / "s")  # fmt: skip
    assert sim.code == 0, sim
    data = tmp_path / "s" / "responses.csv"
    here = edueval("kt", "fit", data, "--out", tmp_path / "here")
    there = edueval("kt", "fit", data, "--out", tmp_path / "there", "--cluster", "local:2:1GB")
    assert here.code == 0 and there.code == 0, there
    for name in ("params.csv", "restarts.csv"):
        assert (tmp_path / "here" / name).read_bytes() == (tmp_path / "there" / name).read_bytes()
    assert there.err_lines[0].startswith("fitted 5 skills") and len(there.err_lines) == 2, there
    assert there.out == ""


def test_ctrl_c_during_a_dataset_predict_on_a_cluster(edueval, tmp_path):
    """Ctrl-C once the first prediction part is on disk: exit 130, the run marked interrupted,
    no results.json, every visible part whole, and no worker process left behind."""
    import json
    import os
    import signal
    import subprocess
    import time

    import pandas as pd
    import psutil

    from .conftest import cli_command

    sim = edueval("kt", "simulate", "--format", "parquet", "--students", "20000", "--skills",
                  "20", "--opportunities", "10", "--rows-per-file", "400000", "--out",
                  tmp_path / "sim")  # fmt: skip
    assert sim.code == 0, sim
    out = tmp_path / "pred"
    args = ["kt", "predict", str(tmp_path / "sim" / "responses"), "--params",
            str(tmp_path / "sim" / "params.csv"), "--cluster", "local:2", "--out", str(out)]  # fmt: skip
    env = {**os.environ, "EDUEVAL_CACHE_DIR": str(tmp_path / ".cache")}
    proc = subprocess.Popen([*cli_command(), *args], cwd=tmp_path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        if list((out / "predictions").glob("part-*.parquet")):
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the command finished before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    lines = [line for line in err.splitlines() if line.strip()]
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert lines[-1].startswith("interrupted"), err
    assert json.loads((out / "config.json").read_text())["status"] == "interrupted"
    assert not (out / "results.json").exists()
    for part in (out / "predictions").glob("part-*.parquet"):
        assert len(pd.read_parquet(part)) > 0
    time.sleep(2)
    left = [p for p in psutil.process_iter(["pid"]) if _session(p) == proc.pid]
    assert not left, [p.cmdline() for p in left]


def _session(p) -> int | None:
    import os

    try:
        return os.getsid(p.pid)
    except OSError:
        return None
