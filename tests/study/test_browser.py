"""End to end in a real browser: headless Chromium (Debian's ``chromium`` + ``chromium-driver``,
driven by Selenium) does one participant's whole session against ``edueval study serve`` (uvicorn)
on loopback; the server is killed (SIGKILL) mid-study and restarted, and the export still holds
every answer exactly once, with the browser-measured timings.

Skipped, with the reason, only when Chromium, its driver or Selenium is missing and ``$CI`` is not
set; in CI a missing piece is a failure (``.ci/run`` installs them)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pandas as pd
import pytest

from .conftest import ADMIN, comparative_study

pytestmark = pytest.mark.slow

CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"


def _need_browser():
    missing = [p for p in (CHROMIUM, DRIVER) if not Path(p).exists()]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the selenium package")
    if missing:
        msg = f"browser test needs {', '.join(missing)} (apt-get install chromium chromium-driver)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, study: Path, db: str, port: int, log: Path) -> None:
        self.args = [sys.executable, "-m", "edueval", "study", "serve", str(study), "--db", db,
                     "--port", str(port), "--admin-token", ADMIN]  # fmt: skip
        self.url = f"http://127.0.0.1:{port}"
        self.log = log
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        with open(self.log, "ab") as err:  # the child keeps its own copy of the descriptor
            self.proc = subprocess.Popen(self.args, stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"server exited: {self.log.read_text()[-2000:]}")
            try:
                urllib.request.urlopen(self.url + "/", timeout=1).read()
                return
            except OSError:
                time.sleep(0.2)
        raise AssertionError("server did not start in 60 s")

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)  # no clean shutdown: a crash
            self.proc.wait(10)


@pytest.fixture
def browser():
    _need_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-extensions", "--no-first-run",
                "--disable-sync", "--disable-default-apps", "--window-size=1000,900"):  # fmt: skip
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def _submit(driver, button_id: str) -> None:
    """Click a submit button and wait until the next page has loaded.

    The old page is marked with a script variable, and the wait is for a complete document
    without it: waiting for an old element to go stale instead made chromedriver fail now and
    then with "Node with given id does not belong to the document" while the page was swapped.
    """
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.execute_script("window.__eduevalOldPage = true;")
    driver.find_element(By.ID, button_id).click()
    WebDriverWait(driver, 20, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script(
            "return window.__eduevalOldPage === undefined && document.readyState === 'complete'"
        )
    )


def _shows(driver, text: str) -> bool:
    """True once the page shows ``text`` (waits up to 20 s for the page to settle)."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        WebDriverWait(driver, 20).until(lambda d: text in d.page_source)
        return True
    except TimeoutException:
        return False


def _answer_item(driver, choice: str) -> None:
    from selenium.webdriver.common.by import By

    time.sleep(0.05)
    for n in range(2):
        driver.find_element(By.ID, f"q{n}-{choice}").click()
    _submit(driver, "next")


def test_one_participant_in_chromium_survives_a_server_kill(tmp_path, browser, db_url, cli):
    from selenium.webdriver.common.by import By

    study = comparative_study(tmp_path / "s")
    port = _free_port()
    r = cli("study", "invite", study, "--db", db_url, "--n", "1", "--base-url",
            f"http://127.0.0.1:{port}", "--out", tmp_path / "links.csv")  # fmt: skip
    assert r.code == 0, r.err
    link = pd.read_csv(tmp_path / "links.csv")["url"].iloc[0]
    server = Server(study, db_url, port, tmp_path / "server.log")
    server.start()
    try:
        browser.get(link)
        assert _shows(browser, "Consent text.")
        browser.find_element(By.ID, "agree").click()
        _submit(browser, "start")
        assert _shows(browser, "Practice item")
        _answer_item(browser, "second")
        assert _shows(browser, "Item 1 of 3")
        _answer_item(browser, "first")
        assert _shows(browser, "Item 2 of 3")

        server.kill()  # crash mid-study, then come back on the same database
        server.start()
        browser.refresh()
        assert _shows(browser, "Item 2 of 3") and "1 answered" in browser.page_source
        _answer_item(browser, "tie")
        _answer_item(browser, "first")
        assert "All your answers are saved" in browser.find_element(By.ID, "done").text
        browser.back()  # going back and submitting again must not duplicate anything
        _answer_item(browser, "first")
    finally:
        server.kill()
    r = cli("study", "export", study, "--db", db_url, "--out", tmp_path / "exp")
    assert r.code == 0, r.err
    df = pd.read_csv(tmp_path / "exp" / "comparisons.csv")
    assert len(df) == 6 and not df.duplicated(["item", "attribute", "rater"]).any()
    assert sorted(df["outcome"]) == ["first"] * 4 + ["tie"] * 2
    # timings come from the page's script: first click <= last click <= submit
    assert df["first_click_s"].notna().all() and df["submit_s"].notna().all()
    assert (df["first_click_s"] <= df["last_click_s"]).all()
    assert (df["last_click_s"] <= df["submit_s"]).all()
