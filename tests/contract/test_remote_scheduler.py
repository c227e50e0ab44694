"""A running ``dask scheduler`` with workers started in another directory, as on a real cluster:
``kt fit`` / ``kt predict`` of a dataset named by a relative path, through ``$EDUEVAL_SCHEDULER``,
give the in-process numbers and write where the user asked."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")


@pytest.fixture
def edueval(edueval_process):
    """A running Dask scheduler: through the console script, a separate process."""
    return edueval_process


def _dask_cli() -> str:
    exe = Path(sys.executable).with_name("dask")
    if not exe.exists():
        pytest.skip("the dask command is not installed beside this Python")
    return str(exe)


@pytest.fixture
def scheduler(tmp_path):
    """A scheduler and two single-threaded workers whose working directory is elsewhere."""
    dask = _dask_cli()
    info = tmp_path / "scheduler.json"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    procs = [
        subprocess.Popen(
            [
                dask,
                "scheduler",
                "--port",
                "0",
                "--no-dashboard",
                "--dashboard-address",
                "127.0.0.1:0",
                "--scheduler-file",
                str(info),
            ],
            cwd=elsewhere,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
    ]
    try:
        for _ in range(300):
            if info.exists() and info.stat().st_size:
                break
            time.sleep(0.1)
        address = json.loads(info.read_text())["address"]
        procs.append(
            subprocess.Popen(
                [
                    dask,
                    "worker",
                    "--scheduler-file",
                    str(info),
                    "--nworkers",
                    "2",
                    "--nthreads",
                    "1",
                    "--no-dashboard",
                ],
                cwd=elsewhere,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )  # fmt: skip
        )
        from distributed import Client

        with Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def test_kt_fit_and_predict_on_a_running_scheduler(edueval, tmp_path, scheduler):
    work = tmp_path / "work"
    work.mkdir()
    sim = edueval("kt", "simulate", "--format", "parquet", "--students", "80", "--skills", "4",
                  "--opportunities", "8", "--rows-per-file", "500", "--out", "sim", cwd=work)  # fmt: skip
    assert sim.code == 0, sim
    here = edueval("kt", "fit", "sim/responses", "--out", "here", cwd=work)
    env = {"EDUEVAL_SCHEDULER": scheduler}
    there = edueval("kt", "fit", "sim/responses", "--out", "there", cwd=work, env=env)
    assert here.code == 0 and there.code == 0, there
    for name in ("params.csv", "restarts.csv"):
        assert (work / "here" / name).read_bytes() == (work / "there" / name).read_bytes()
    config = json.loads((work / "there" / "config.json").read_text())
    assert config["params"]["executor"] == {"kind": "dask", "scheduler": scheduler}
    pred = edueval("kt", "predict", "sim/responses", "--params", "here/params.csv", "--out",
                   "pred", cwd=work, env=env)  # fmt: skip
    assert pred.code == 0, pred
    parts = sorted((work / "pred" / "predictions").glob("part-*.parquet"))
    assert parts and not (tmp_path / "elsewhere" / "pred").exists()
    res = json.loads((work / "pred" / "results.json").read_text())
    assert res["n_responses"] == 80 * 4 * 8 and res["predictions"]["n_files"] == len(parts)
