"""A griffe extension for the API reference, adapting edueval's docstrings to griffe's numpy
parser without changing them:

* Sphinx roles (``:func:`x```), which Markdown does not know, become code spans (``x``), ``~``
  dropped -- shown as code, not as links;
* in a ``Parameters``, ``Attributes`` or ``Raises`` section, edueval writes ``name : description`` on one
  line, where numpy style reads the text after the colon as the *type*; the description is
  moved to its own indented line, so the site shows it as the description.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?[a-z]+:`~?([^`]+)`")
_SECTIONS = ("Parameters", "Other Parameters", "Attributes", "Raises")
_ENTRY = re.compile(r"^([A-Za-z_*][\w*.]*(?:, *[A-Za-z_*][\w*.]*)*) : (.+)$")
_RULE = re.compile(r"^-{3,}\s*$")


def adapt(text: str) -> str:
    """``text`` (a cleaned docstring) with roles as code spans and one-line entries split."""
    lines = _ROLE.sub(r"``\1``", text).splitlines()
    out: list[str] = []
    inside = False
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and _RULE.match(lines[i + 1]) and line.strip():
            inside = line.strip() in _SECTIONS
        entry = _ENTRY.match(line) if inside else None
        if entry:
            out += [entry.group(1), "    " + entry.group(2)]
        else:
            out.append(line)
    return "\n".join(out)


class SphinxRolesToCode(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = adapt(obj.docstring.value)
