"""`study serve --workers 2`: two server processes on one database answer a whole session."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import httpx

from .conftest import comparative_study, csrf_of
from .test_browser import ADMIN, _free_port


def test_serve_with_two_workers(tmp_path):
    study = comparative_study(tmp_path, n_items=3, per=2)
    db = f"sqlite:///{tmp_path / 'study.sqlite'}"
    links = tmp_path / "links.csv"
    subprocess.run([sys.executable, "-m", "edueval", "study", "invite", str(study), "--db", db,
                    "--n", "1", "--out", str(links)], check=True, capture_output=True)  # fmt: skip
    link = links.read_text().splitlines()[1].split(",")[-1]
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "edueval", "study", "serve", str(study), "--db", db, "--port",
         str(port), "--admin-token", ADMIN, "--workers", "2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            try:
                if httpx.get(base + "/", timeout=1).status_code < 500:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        path = re.sub(r"^https?://[^/]+", "", link)
        with httpx.Client(base_url=base, follow_redirects=True, timeout=10) as client:
            page = client.get(path)
            assert page.status_code == 200
            assert csrf_of(page.text)
            status = client.get("/admin/status", headers={"Authorization": f"Bearer {ADMIN}"})
            assert status.status_code == 200
            assert client.get("/admin/status").status_code == 401
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _children(pid: int) -> list[int]:
    from pathlib import Path

    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            kids.append(int(stat.parent.name))
    return kids


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    from pathlib import Path

    state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    return state != "Z"


def test_workers_stop_when_the_master_is_killed(tmp_path):
    """SIGKILL cannot be caught, so the master cannot stop its workers: they notice and exit,
    instead of serving on as orphans holding the port."""
    import os
    import signal

    study = comparative_study(tmp_path, n_items=2, per=1)
    port = _free_port()
    env = {**os.environ, "EDUEVAL_STUDY_ADMIN_TOKEN": ADMIN}
    proc = subprocess.Popen(
        [sys.executable, "-m", "edueval", "study", "serve", str(study), "--db",
         f"sqlite:///{tmp_path / 'w.sqlite'}", "--port", str(port), "--workers", "2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    workers: list[int] = []
    while time.monotonic() < deadline:
        try:
            if httpx.get(base + "/", timeout=1).status_code < 500:
                workers = _children(proc.pid)
                if len(workers) >= 2:
                    break
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    assert workers, "the workers did not start"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.2)
    assert not any(_alive(w) for w in workers), "orphan workers still running"
    try:
        httpx.get(base + "/", timeout=1)
        answered = True
    except httpx.HTTPError:
        answered = False
    assert not answered, "the port is still served after the master was killed"
