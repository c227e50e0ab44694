"""Self-contained HTML reports: text, tables and figures in one file that opens offline.

Build a :class:`Report`, add sections with paragraphs, tables (DataFrames) and matplotlib figures,
then ``render()``.  Figures are embedded as base64 PNG, so the file needs nothing else.
"""

from __future__ import annotations

import base64
import datetime as _dt
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
        html = shown.to_html(
            index=index,
            border=0,
            classes="data",
            escape=True,
            formatters=None,
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


def render_index(title: str, entries: list[dict[str, str]], intro: str = "") -> str:
    """An index page linking reports: entries have ``name``, ``href``, ``summary``."""
    return _ENV.get_template("index.html").render(
        title=title,
        entries=entries,
        intro=intro,
        generated=_dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
    )
