"""``--cluster`` / ``--scheduler`` mistakes through the installed console script: one line, exit 2."""

from __future__ import annotations

import re
import socket
from contextlib import contextmanager

import pandas as pd
import pytest

pytest.importorskip("distributed")


@pytest.fixture
def edueval(edueval_process):
    """Clusters, their workers' logs and Ctrl-C: through the console script, a separate process."""
    return edueval_process


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


@contextmanager
def _port_8787_taken():
    """Dask's default HTTP port held by someone else, as by another run or the user's own cluster
    (if another process holds it already, that is the same situation)."""
    sock = socket.socket()
    try:
        try:
            sock.bind(("0.0.0.0", 8787))
            sock.listen()
        except OSError:
            pass
        yield
    finally:
        sock.close()


def test_kt_fit_on_a_local_cluster_is_the_in_process_fit(edueval, tmp_path):
    """Through the console script: the same params.csv byte for byte, and Dask's own logging
    (shuffle start/stop, worker chatter, "Port 8787 is already in use" when another cluster runs)
    never reaches the user's terminal."""
    sim = edueval("kt", "simulate", "--students", "60", "--skills", "5", "--opportunities", "10",
                  "--out", tmp_path / "s")  # fmt: skip
    assert sim.code == 0, sim
    data = tmp_path / "s" / "responses.csv"
    here = edueval("kt", "fit", data, "--out", tmp_path / "here")
    with _port_8787_taken():
        there = edueval("kt", "fit", data, "--out", tmp_path / "there", "--cluster", "local:2:1GB")
    assert here.code == 0 and there.code == 0, there
    here_dir, there_dir = tmp_path / "here", tmp_path / "there"
    assert (here_dir / "params.csv").read_bytes() == (there_dir / "params.csv").read_bytes()
    # restarts.csv: every restart's parameters the same; its log-likelihood, a sum over the
    # skill's responses, at most the last bit apart (seen once on a heavily loaded machine:
    # -351.3519800535999 vs -351.35198005359985), as the README states for cluster fits
    a, b = pd.read_csv(here_dir / "restarts.csv"), pd.read_csv(there_dir / "restarts.csv")
    ll = [c for c in a.columns if "log" in c.lower()]
    assert ll and list(a.columns) == list(b.columns), (a.columns, b.columns)
    pd.testing.assert_frame_equal(a.drop(columns=ll), b.drop(columns=ll), check_exact=True)
    pd.testing.assert_frame_equal(a[ll], b[ll], check_exact=False, rtol=1e-12, atol=0)
    assert there.err_lines[0].startswith("fitted 5 skills") and len(there.err_lines) == 2, there
    assert not _third_party_lines(there.err), there
    assert there.out == ""


#: a line of Dask's log format (``%(asctime)s - %(name)s - %(levelname)s - %(message)s``) or of
#: logging's last-resort handler, from one of the loggers the cluster path brings in
_THIRD_PARTY_LINE = re.compile(
    r"^(\S.* - )?(distributed|dask|tornado|asyncio|bokeh)(\.[\w.]+)? - "
    r"(DEBUG|INFO|WARNING|ERROR|CRITICAL) - |^(Exception in callback|Task exception was never "
    r"retrieved|Task was destroyed)"
)


def _third_party_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if _THIRD_PARTY_LINE.search(line)]


_PROBE = """
import atexit
import logging
import os

LOGGERS = ("distributed", "distributed.client", "distributed.gc", "distributed.scheduler",
           "distributed.worker", "distributed.shuffle", "dask", "tornado", "tornado.application",
           "tornado.general", "asyncio", "bokeh")


def _emit(where):
    for name in LOGGERS:
        for level in (logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR,
                      logging.CRITICAL):
            logging.getLogger(name).log(level, "probe from %s", where)
    open(os.path.join(os.environ["EDUEVAL_PROBE_DIR"], f"{where}-{os.getpid()}"), "w").close()


class _OnFirstTask:
    done = False

    def transition(self, key, start, finish, **kwargs):
        if finish == "memory" and not self.done:
            self.done = True
            _emit("worker-task")


async def dask_setup(server):
    if type(server).__name__ == "Scheduler":
        _emit("scheduler-setup")
        atexit.register(_emit, "main-exit")
    else:
        from distributed.diagnostics.plugin import WorkerPlugin

        atexit.register(_emit, "worker-exit")
        await server.plugin_add(type("Probe", (_OnFirstTask, WorkerPlugin), {})(), name="probe")


def dask_teardown(server):
    _emit(type(server).__name__.lower() + "-teardown")
"""


def test_no_third_party_log_line_at_any_level_on_a_local_cluster(edueval, tmp_path):
    """Every level of every logger the cluster path brings in (Dask, distributed, tornado --
    whose ``tornado.application`` printed "Exception in callback" from a worker that had
    half-imported dask.dataframe -- and asyncio) is logged to during ``kt fit --cluster``: in
    this process as the scheduler starts and stops and as the process exits, in each worker
    after its first task, as it stops and as it exits (a Dask preload adds the probe).  Before
    the fix, tornado's and Dask's lines after a worker closed and at exit, and asyncio's at any
    time, reached the terminal.  Now it shows the command's own two lines and nothing else."""
    sim = edueval("kt", "simulate", "--students", "30", "--skills", "2", "--opportunities", "6",
                  "--out", tmp_path / "s")  # fmt: skip
    assert sim.code == 0, sim
    probe, marks = tmp_path / "probe.py", tmp_path / "marks"
    probe.write_text(_PROBE)
    marks.mkdir()
    preload = repr([str(probe)])
    env = {"DASK_DISTRIBUTED__SCHEDULER__PRELOAD": preload,
           "DASK_DISTRIBUTED__WORKER__PRELOAD": preload, "EDUEVAL_PROBE_DIR": str(marks)}  # fmt: skip
    run = edueval("kt", "fit", tmp_path / "s" / "responses.csv", "--out", tmp_path / "o",
                  "--cluster", "local:2:1GB", env=env)  # fmt: skip
    assert run.code == 0, run
    assert not _third_party_lines(run.err), run
    assert [line.split()[0] for line in run.err_lines] == ["fitted", "wrote"], run
    # the probe logged where it should (the test would pass without it otherwise); a worker's
    # teardown and exit usually log too, unless the nanny ends a slow worker first
    ran = {m.name.rsplit("-", 1)[0] for m in marks.iterdir()}
    assert {"scheduler-setup", "scheduler-teardown", "worker-task", "main-exit"} <= ran, ran


def test_a_third_party_line_is_recognised():
    """The pattern above catches the line of the flaky run and logging's last resort."""
    seen = (
        "2026-01-01 10:00:00,000 - tornado.application - ERROR - Exception in callback "
        "functools.partial(...)\n"
        "2026-01-01 10:00:00,000 - distributed.worker - WARNING - Compute Failed\n"
        "Task exception was never retrieved\n"
        "fitted 5 skills, total log-likelihood -1.0\n"
    )
    assert len(_third_party_lines(seen)) == 3


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
