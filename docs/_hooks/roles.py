"""A griffe extension for the API reference: edueval's docstrings use Sphinx roles
(``:func:`x```), which Markdown does not know; each becomes a code span (``x``), ``~`` dropped."""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?[a-z]+:`~?([^`]+)`")


class SphinxRolesToCode(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _ROLE.sub(r"``\1``", obj.docstring.value)
