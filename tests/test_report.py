"""Reports as a reader sees them in a browser (issue 11, 8)."""

from __future__ import annotations

import re

import pandas as pd

from edueval.report import Report, render_index


def test_wide_tables_scroll_in_their_own_box_and_text_keeps_its_line_breaks():
    rep = Report("t")
    rep.section("s").table(pd.DataFrame({"reply": ["Hello.\n\nHow are you?"], "x": [1.0]}))
    html = rep.render()
    assert re.search(r'<div class="table-wrap">\s*<table', html)
    assert ".table-wrap { overflow-x: auto" in html
    assert "\\n" not in html  # pandas would print the line breaks as a literal backslash-n
    assert "Hello.\n\nHow are you?" in html and "white-space: pre-line" in html


def test_every_page_an_index_names_is_linked_and_escaped():
    html = render_index(
        "demo",
        [{"name": "P3", "href": "malalgo/report.html",
          "summary": "questions from malalgo-questions/report.html; <b>bold</b> stays text"}],
    )  # fmt: skip
    hrefs = re.findall(r'href="([^"]+)"', html)
    assert hrefs == ["malalgo/report.html", "malalgo-questions/report.html"]
    assert "<b>" not in html and "&lt;b&gt;" in html
