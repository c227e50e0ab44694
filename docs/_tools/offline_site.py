"""Open the built docs site with the network off, in headless Chromium, and check every page.

Usage (from the repository root, after ``mkdocs build --strict --site-dir SITE``)::

    python docs/_tools/offline_site.py SITE [--screenshots DIR]

Each page is opened from disk (``file://``, as a reader opens a downloaded site) in Chromium
started with every host name unresolvable and every connection sent to a closed local port, so
nothing can come from the network.  A page passes when the document loaded complete, the browser
asked for nothing outside the site folder, every request for a file of the site succeeded (the
stylesheets, Material's script bundle, the search index, the images), nothing was logged as an
error, the theme's script ran (navigation drawn, code-copy buttons added) and the article has
text.  The search is then used once (the index is loaded through the offline plugin's worker
shim): a query must list results.  The API reference pages must show the documented objects.
With ``--screenshots DIR`` the home page and the API reference page of ``edueval.kt`` are saved
there as PNG files.  Exit status 0 when every check passed, 1 otherwise (each problem a line).

tests/test_docs.py runs :func:`check_site` on the site it builds; it starts Chromium the way
tests/study/test_browser.py does (Debian's ``chromium`` and ``chromium-driver``, Selenium).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"
#: every host name resolves to nothing and every connection goes to a closed port: no network
NO_NETWORK = (
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
)
#: pages not opened from disk, with the reason
NOT_FROM_DISK = {
    "404.html": "a web server shows it for a missing page (its links start at the site root); "
    "opened from disk it is never reached",
}
#: (page, element id) the API reference must render
API_OBJECTS = (
    ("api/kt.html", "edueval.kt.BKT"),
    ("api/pairwise.html", "edueval.pairwise.BradleyTerry"),
    ("api/compare.html", "edueval.compare.compare"),
)
SEARCH_QUERY = "Bradley"
#: the copy button the theme's script adds to a code block (older Material: .md-clipboard)
COPY = ".md-code__button[data-md-type=copy], .md-clipboard"


def missing_browser() -> list[str]:
    """What is missing to run the check (empty when Chromium, its driver and Selenium are
    there)."""
    missing = [p for p in (CHROMIUM, DRIVER) if not Path(p).exists()]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the selenium package")
    return missing


@contextmanager
def offline_chromium(width: int = 1280, height: int = 900) -> Iterator[Any]:
    """Headless Chromium (Selenium's driver) with the network off and its requests logged."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-extensions", "--no-first-run",
                "--disable-sync", "--disable-default-apps", "--disable-component-update",
                "--hide-scrollbars", f"--window-size={width},{height}", *NO_NETWORK):  # fmt: skip
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@dataclass
class PageReport:
    """What one page asked for and what went wrong (``problems`` empty: the page passed)."""

    page: str
    requests: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _network_events(driver: Any) -> Iterator[dict]:
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method", "").startswith("Network."):
            yield message


def _requests(driver: Any, site: Path, report: PageReport) -> None:
    """Every request since the last call: outside the site folder or failed is a problem."""
    root = site.resolve().as_uri()
    urls: dict[str, str] = {}
    for event in _network_events(driver):
        params = event.get("params", {})
        if event["method"] == "Network.requestWillBeSent":
            url = params["request"]["url"]
            urls[params["requestId"]] = url
            report.requests.append(url)
            if not url.startswith((root + "/", "data:", "blob:", "about:")):
                report.problems.append(f"asked the network for {url}")
        elif event["method"] == "Network.loadingFailed" and not params.get("canceled"):
            url = urls.get(params["requestId"], params["requestId"])
            report.problems.append(f"failed to load {url}: {params.get('errorText')}")
        elif event["method"] == "Network.responseReceived":
            status = params["response"].get("status", 200)
            if status >= 400:
                report.problems.append(f"{params['response']['url']}: status {status}")


def _console(driver: Any, report: PageReport) -> None:
    for entry in driver.get_log("browser"):
        if entry.get("level") == "SEVERE":
            report.problems.append(f"console error: {entry['message'][:300]}")


_PAGE_STATE = """
return {
  ready: document.readyState,
  theme: typeof window.document$ !== 'undefined',
  nav: document.querySelectorAll('.md-nav__link').length,
  copy: document.querySelectorAll('pre > code').length,
  text: (document.querySelector('article.md-content__inner') || {innerText: ''}).innerText.length,
  sheets: document.styleSheets.length,
  styled: getComputedStyle(document.querySelector('.md-header') || document.body).position,
  broken_images: Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0)
    .map(i => i.src),
};
"""


def _wait(driver: Any, condition: str, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if driver.execute_script(f"return Boolean({condition});"):
            return True
        time.sleep(0.1)
    return False


def check_page(driver: Any, site: Path, page: str) -> PageReport:
    """Open ``page`` (relative to ``site``) from disk and check it (module docstring)."""
    report = PageReport(page)
    driver.get((site / page).resolve().as_uri())
    _wait(driver, "document.readyState === 'complete' && typeof window.document$ !== 'undefined'")
    state = driver.execute_script(_PAGE_STATE)
    if state["ready"] != "complete":
        report.problems.append(f"document not complete ({state['ready']})")
    if not state["theme"]:
        report.problems.append("the theme's script did not run (no document$)")
    if state["nav"] < 10:
        report.problems.append(f"navigation not drawn ({state['nav']} links)")
    if state["copy"] and not _wait(driver, f"document.querySelectorAll('{COPY}').length"):
        report.problems.append("code blocks without the copy button (the theme's script)")
    if state["text"] < 200:
        report.problems.append(f"article nearly empty ({state['text']} characters)")
    if state["sheets"] < 2 or state["styled"] != "sticky":
        report.problems.append(f"the theme's stylesheets not applied ({state['sheets']} loaded)")
    report.problems += [f"image not shown: {src}" for src in state["broken_images"]]
    _requests(driver, site, report)
    _console(driver, report)
    return report


def check_search(driver: Any, site: Path) -> PageReport:
    """Type a query into the search box of the home page: results must be listed (the search
    index and its worker loaded from disk)."""
    from selenium.webdriver.common.by import By

    report = PageReport("search")
    driver.get((site / "index.html").resolve().as_uri())
    _wait(driver, "document.readyState === 'complete'")
    driver.execute_script("document.querySelector('.md-search__input').focus()")
    driver.find_element(By.CSS_SELECTOR, ".md-search__input").send_keys(SEARCH_QUERY)
    if not _wait(driver, "document.querySelectorAll('.md-search-result__item').length", 20):
        meta = driver.execute_script(
            "return (document.querySelector('.md-search-result__meta') || {}).innerText"
        )
        report.problems.append(f"the search for {SEARCH_QUERY!r} listed nothing ({meta!r})")
    _requests(driver, site, report)
    _console(driver, report)
    return report


def check_api(driver: Any, site: Path) -> PageReport:
    """The API reference pages show their objects (heading and documentation)."""
    report = PageReport("api")
    for page, ident in API_OBJECTS:
        driver.get((site / page).resolve().as_uri())
        _wait(driver, "document.readyState === 'complete'")
        shown = driver.execute_script(
            "const h = document.getElementById(arguments[0]);"
            "if (!h) return null;"
            "const doc = h.parentElement.closest('.doc-object') || h.parentElement;"
            "return [h.getBoundingClientRect().height, doc.innerText.length];",
            ident,
        )
        if not shown or shown[0] <= 0 or shown[1] < 200:
            report.problems.append(f"{page}: {ident} not rendered ({shown})")
    _requests(driver, site, report)
    _console(driver, report)
    return report


def site_pages(site: Path) -> list[str]:
    """Every HTML page of the built site but those of :data:`NOT_FROM_DISK`."""
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))
    return [p for p in pages if p not in NOT_FROM_DISK]


def check_site(site: Path, screenshots: Path | None = None) -> list[PageReport]:
    """Every page, the search and the API reference (module docstring); with ``screenshots``,
    ``home.png`` and ``api-kt.png`` written there."""
    site = site.resolve()
    with offline_chromium() as driver:
        reports = [check_page(driver, site, page) for page in site_pages(site)]
        reports += [check_search(driver, site), check_api(driver, site)]
        if screenshots is not None:
            screenshots.mkdir(parents=True, exist_ok=True)
            for page, name in (("index.html", "home.png"), ("api/kt.html", "api-kt.png")):
                driver.get((site / page).resolve().as_uri())
                _wait(driver, "document.readyState === 'complete'")
                driver.save_screenshot(str(screenshots / name))
    return reports


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="the built site (mkdocs build --site-dir)")
    parser.add_argument("--screenshots", type=Path, help="folder for home.png and api-kt.png")
    args = parser.parse_args(argv)
    if missing := missing_browser():
        print(f"needs {', '.join(missing)} (apt-get install chromium chromium-driver)")
        return 1
    reports = check_site(args.site, args.screenshots)
    bad = [r for r in reports if r.problems]
    for r in reports:
        print(f"{r.page}: {len(r.requests)} requests, " + ("ok" if not r.problems else "FAILED"))
        for problem in r.problems:
            print(f"  {problem}")
    if args.screenshots:
        print(f"screenshots: {args.screenshots / 'home.png'}, {args.screenshots / 'api-kt.png'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
