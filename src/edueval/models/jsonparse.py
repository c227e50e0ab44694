"""Reading JSON out of model answers, robustly.

Models wrap JSON in prose or code fences, use single quotes, leave trailing commas, or stop half-way
(``max_tokens``).  :func:`parse_json_answer` tries the strict reading first and then increasingly
forgiving ones; it returns ``None`` -- never raises -- when nothing parses, so callers can count
unparseable answers (and must: they are reported, never silently dropped).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["parse_json_answer"]

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def parse_json_answer(
    text: str | None, *, require_keys: Iterable[str] = (), expect: type | None = dict
) -> Any | None:
    """The JSON value in a model's answer, or ``None`` if there is none.

    Tries, in order: the whole text; the contents of a Markdown code fence; every balanced
    ``{...}`` (or ``[...]``) span from the left; each of those again with trailing commas removed,
    as a Python literal (single quotes, ``True``/``None``), and -- for answers cut off by
    ``max_tokens`` -- with the missing closing quote/brackets added.

    Parameters
    ----------
    text : the model's answer.
    require_keys : keys the object must have (for ``expect=dict``); a candidate without all of them
        is skipped, so ``'{"x": 1} ... {"Correct Choice": "B"}'`` yields the second object.
    expect : the type the value must have (``dict`` by default, ``list``, or ``None`` for any).

    Examples
    --------
    >>> parse_json_answer('Sure! ```json\\n{"Correct Choice": "B"}\\n```')
    {'Correct Choice': 'B'}
    >>> parse_json_answer("{'answer': 'C',}")
    {'answer': 'C'}
    >>> parse_json_answer("no json here") is None
    True
    """
    if not text:
        return None
    keys = tuple(require_keys)
    for candidate in _candidates(text, expect):
        value = _loads_forgiving(candidate)
        if value is _FAIL:
            continue
        if expect is not None and not isinstance(value, expect):
            continue
        if keys and not (isinstance(value, dict) and all(k in value for k in keys)):
            continue
        return value
    return None


_FAIL = object()
_MAX_STARTS = 64  # bracket positions tried at most (bounds the work on long answers)


def _candidates(text: str, expect: type | None) -> Iterable[str]:
    stripped = text.strip()
    yield stripped
    for m in _FENCE.finditer(text):
        yield m.group(1).strip()
    opens = "{[" if expect is None else ("[" if expect is list else "{")
    starts = [i for i, ch in enumerate(text) if ch in opens][:_MAX_STARTS]
    for start in starts:
        span = _balanced(text, start)
        yield span if span is not None else _close_truncated(text[start:])


def _balanced(text: str, start: int) -> str | None:
    """The balanced bracket span starting at ``start`` (string-aware), or None if unclosed."""
    stack: list[str] = []
    in_str: str | None = None
    escaped = False
    for i in range(start, len(text)):
        c = text[i]
        if in_str:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == in_str:
                in_str = None
            continue
        if c in "\"'":
            in_str = c
        elif c in "{[":
            stack.append("}" if c == "{" else "]")
        elif c in "}]":
            if not stack or stack.pop() != c:
                return None
            if not stack:
                return text[start : i + 1]
    return None


def _close_truncated(fragment: str) -> str:
    """Close an answer cut off mid-object: end an open string, drop a dangling key/comma, close
    the open brackets."""
    stack: list[str] = []
    in_str: str | None = None
    escaped = False
    for c in fragment:
        if in_str:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == in_str:
                in_str = None
            continue
        if c in "\"'":
            in_str = c
        elif c in "{[":
            stack.append("}" if c == "{" else "]")
        elif c in "}]" and stack:
            stack.pop()
    out = fragment + (in_str or "")
    out = re.sub(r"[,:]\s*$", "", out.rstrip())
    return out + "".join(reversed(stack))


def _loads_forgiving(s: str) -> Any:
    for attempt in (s, _TRAILING_COMMA.sub(r"\1", s)):
        try:
            return json.loads(attempt)
        except ValueError:
            pass
        try:
            value = ast.literal_eval(attempt)
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            continue
        if isinstance(value, (dict, list, str, int, float, bool)) or value is None:
            return value
    return _FAIL
