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
