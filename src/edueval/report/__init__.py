"""Self-contained HTML reports: text, tables and figures in one file that opens offline.

Build a :class:`Report`, add sections with paragraphs, tables (DataFrames) and matplotlib figures,
then ``render()``.  Figures are embedded as base64 PNG, so the file needs nothing else.
"""

from __future__ import annotations

import base64
import datetime as _dt
import re
from dataclasses import dataclass, field
from typing import Any

import jinja2
import pandas as pd
from markupsafe import Markup, escape

from .figures import png_bytes

__all__ = ["Report", "Section", "render_index"]

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("edueval.report", "templates"),
    autoescape=jinja2.select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)


@dataclass
class _Block:
    kind: str  # "text" | "table" | "figure" | "html"
    body: Any
    caption: str | None = None


@dataclass
class Section:
    title: str
    blocks: list[_Block] = field(default_factory=list)

    def text(self, *paragraphs: str) -> Section:
        """Plain-text paragraphs (escaped)."""
        for p in paragraphs:
            self.blocks.append(_Block("text", p))
        return self

    def bullets(self, items: list[str]) -> Section:
        """A bulleted list of plain-text items."""
        self.blocks.append(_Block("bullets", list(items)))
        return self

    def html(self, fragment: str) -> Section:
        """A trusted HTML fragment produced by edueval itself (never user text)."""
        self.blocks.append(_Block("html", Markup(fragment)))
        return self

    def table(
        self, df: pd.DataFrame, caption: str | None = None, *, digits: int = 3, index: bool = False
    ) -> Section:
        """A table; floats are shown with ``digits`` significant decimals."""

        def fmt(x: Any) -> str:
            if isinstance(x, float):
                if x != x:  # NaN
                    return "–"
                return f"{x:.{digits}f}"
            return str(x)

        shown = df.copy()
        if not index:
            shown = shown.reset_index(drop=True)
        # text as written: pandas would print a line break as a literal backslash-n; the cell
        # keeps it and the style sheet shows it as a break (white-space: pre-line)
        text_cols = {c: (lambda v: "–" if v is None or v != v else str(v))
                     for c in shown.columns if shown[c].dtype == object
                     or pd.api.types.is_string_dtype(shown[c].dtype)}  # fmt: skip
        html = shown.to_html(
            index=index,
            border=0,
            classes="data",
            escape=True,
            formatters=text_cols or None,
            na_rep="–",
            float_format=lambda v: fmt(float(v)),
        )
        self.blocks.append(_Block("table", Markup(html), caption))
        return self

    def figure(self, fig_or_png: Any, caption: str | None = None) -> Section:
        """A matplotlib figure (or PNG bytes), embedded as base64."""
        png = fig_or_png if isinstance(fig_or_png, bytes) else png_bytes(fig_or_png)
        self.blocks.append(_Block("figure", base64.b64encode(png).decode("ascii"), caption))
        return self


class Report:
    """An HTML report made of titled sections."""

    def __init__(self, title: str, subtitle: str | None = None) -> None:
        self.title = title
        self.subtitle = subtitle
        self.sections: list[Section] = []
        self.meta: dict[str, str] = {}

    def section(self, title: str) -> Section:
        s = Section(title)
        self.sections.append(s)
        return s

    def render(self) -> str:
        return _ENV.get_template("report.html").render(
            title=self.title,
            subtitle=self.subtitle,
            sections=self.sections,
            meta=self.meta,
            generated=_dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
            escape=escape,
        )


_PAGE = re.compile(r"(?<![\w/.-])([\w-]+(?:/[\w-]+)*\.html)")


def _linked(summary: str) -> Markup:
    """The summary, escaped, with every relative ``folder/page.html`` it names made a link."""
    return Markup(
        _PAGE.sub(lambda m: f'<a href="{m.group(1)}">{m.group(1)}</a>', str(escape(summary)))
    )


def render_index(title: str, entries: list[dict[str, str]], intro: str = "") -> str:
    """An index page linking reports: entries have ``name``, ``href``, ``summary``; any other
    page a summary names (``items-simulate/report.html``) is linked too."""
    shown = [{**e, "summary": _linked(e.get("summary", ""))} for e in entries]
    return _ENV.get_template("index.html").render(
        title=title,
        entries=shown,
        intro=intro,
        generated=_dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
    )
