"""The docs site (mkdocs.yml, docs/): built with ``mkdocs build --strict`` (any warning -- a
broken link or anchor, a docstring griffe cannot read, a missing snippet -- fails it); its API
reference names the main entry points, its "Input formats" page lists every column of every
module-level Schema (the same list as ``edueval formats``), and it loads no font or script from
the network: every page opened from disk in headless Chromium with the network off loads
complete (docs/_tools/offline_site.py).  Skipped without the ``docs`` extra (or, for the browser
check, without Chromium, its driver or Selenium), except under CI=1 where that is a failure."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from edueval.formats import find_schemas

ROOT = Path(__file__).resolve().parents[1]
#: objects the API reference must document (issue 38), by their page
API = {
    "kt": ["edueval.kt.BKT"],
    "pairwise": ["edueval.pairwise.BradleyTerry"],
    "malalgo": ["edueval.malalgo.evaluate"],
    "items": ["edueval.items.analyze_items"],
    "qgsms": ["edueval.qgsms.evaluate"],
    "turing": ["edueval.turing.generate"],
    "tutor": ["edueval.tutor.reply"],
    "compare": ["edueval.compare", "edueval.compare.compare"],
}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    missing = [m for m in ("mkdocs", "material", "mkdocstrings_handlers.python")
               if importlib.util.find_spec(m.split(".")[0]) is None
               or importlib.util.find_spec(m) is None]  # fmt: skip
    if missing:
        msg = f"the docs site needs {', '.join(missing)}: pip install '.[docs]'"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def _ids(html: str) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', html))


def test_api_reference_names_the_entry_points(site):
    for page, names in API.items():
        ids = _ids((site / "api" / f"{page}.html").read_text())
        for name in names:
            assert name in ids, f"{name} is not documented on api/{page}.html"
    for page in (site / "api").glob("*.html"):
        html = page.read_text()
        # Sphinx roles became code spans, not raw ":func:`...`" text
        assert not re.search(r":(func|class|meth|data|mod|attr):`", html), page.name
        # a one-line "name : description" entry is shown as a description, not as a type
        types = re.findall(r"<td>\s*<code>([^<]*)</code>\s*</td>", html)
        prose = [t for t in types if len(t.split()) > 6]
        assert not prose, (page.name, prose[:3])


def test_formats_page_lists_every_column_of_every_schema(site):
    html = (site / "formats.html").read_text()
    sections = re.split(r"<h2 id=", html)[1:]
    by_name = {}
    for section in sections:
        title = re.search(r"<code>([^<]+)</code>", section)
        assert title is not None
        by_name[title.group(1)] = section
    tables = find_schemas()
    assert sorted(by_name) == sorted(t.name for t in tables)  # the same list as edueval formats
    for table in tables:
        cells = re.findall(r"<td><code>([^<]+)</code></td>", by_name[table.name])
        assert cells == [c.name for c in table.schema.columns], table.name


def test_site_pages_are_built_and_load_nothing_from_the_network(site):
    for page in ("index", "getting-started", "models", "running-a-study", "scaling-out",
                 "methods", "benchmarks", "formats", "protocols/p1-kt", "protocols/p2-pairwise",
                 "protocols/p3-malalgo", "protocols/p4-items", "protocols/p5-turing"):  # fmt: skip
        assert (site / f"{page}.html").is_file(), page
    results = (ROOT / "benchmarks" / "RESULTS.md").read_text().splitlines()
    last_heading = [line for line in results if line.startswith("## ")][-1][3:]
    assert re.sub(r"[`*]", "", last_heading)[:20] in (site / "benchmarks.html").read_text()
    remote = re.compile(r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=\"(?:https?:)?//")
    cdn = ("fonts.googleapis", "fonts.gstatic", "unpkg.com", "cdn.jsdelivr")
    for path in site.rglob("*"):
        # HTML and CSS only: Material's own script bundle names CDNs it would use if configured
        if path.suffix in (".html", ".css"):
            text = path.read_text(errors="replace")
            assert not remote.search(text) and "url(http" not in text, path
            assert not [c for c in cdn if c in text], path


def _offline_site_tool():
    spec = importlib.util.spec_from_file_location(
        "offline_site", ROOT / "docs" / "_tools" / "offline_site.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # a browser: ~15 s
def test_every_page_loads_complete_offline_in_a_browser(site):
    """Headless Chromium, network off, each page from disk: nothing asked of the network, no
    local file missing (stylesheets, scripts, the search index, images), the theme's script ran,
    the search lists results and the API reference shows its objects."""
    tool = _offline_site_tool()
    if missing := tool.missing_browser():
        msg = f"the offline check needs {', '.join(missing)} (apt-get install chromium chromium-driver)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    reports = tool.check_site(site)
    pages = {r.page for r in reports}
    assert {"index.html", "api/kt.html", "formats.html", "search", "api"} <= pages
    assert len(pages) >= 25
    problems = [f"{r.page}: {p}" for r in reports for p in r.problems]
    assert not problems, "\n".join(problems)
    # the search index was read from the site folder
    search = next(r for r in reports if r.page == "search")
    assert any(url.endswith("/search/search_index.js") for url in search.requests)
