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
