"""Reading JSON out of model answers, robustly but never by guessing.

Models wrap JSON in prose or code fences, use single quotes or leave trailing commas: those are
read.  The rule, for an answer that is free text (a chain of thought, say) followed by JSON:

- only complete JSON values count; prose is never read, so reasoning that names other letters
  ("rationale A leads to 12, rationale C to 15") does not matter;
- a value the caller does not accept (``require_keys``/``accept``) is ignored: an echoed format
  template such as ``{"Correct Choice": "[A/B/C/D]"}`` before the answer is no answer at all;
- the answer is the *last* acceptable value.

Two kinds of answer are *not* read, because any reading would be a guess, and are returned as
``None`` so that callers count them as unparseable (reported, never silently dropped):

- an answer cut off mid-object (``{"Correct Choice": "B`` -- the token limit was reached): the
  model never committed to the closing of its answer;
- an answer holding two or more acceptable values that disagree
  (``{"Correct Choice": "B"} ... {"Correct Choice": "C"}``): the model gave two different
  answers, and taking the last would guess which one it meant.  Several values that agree are
  one answer.

:func:`parse_json_answer` never raises.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["parse_json_answer"]

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def parse_json_answer(
    text: str | None,
    *,
    require_keys: Iterable[str] = (),
    expect: type | None = dict,
    accept: Callable[[Any], bool] | None = None,
) -> Any | None:
    """The one JSON value in a model's answer, or ``None`` if there is none or more than one.

    Tries the whole text first; then the contents of each Markdown code fence and every
    complete, balanced ``{...}`` (or ``[...]``) span not inside an accepted one, each also with
    trailing commas removed and as a Python literal (single quotes, ``True``/``None``).

    Parameters
    ----------
    text : the model's answer.
    require_keys : keys the object must have (for ``expect=dict``); a candidate without all of them
        is skipped, so ``'{"x": 1} ... {"Correct Choice": "B"}'`` yields the second object.
    expect : the type the value must have (``dict`` by default, ``list``, or ``None`` for any).
    accept : a further test a candidate must pass (e.g. the answer is one of the letters A-D).

    Returns
    -------
    Any
        The value; ``None`` when nothing acceptable parses, when the answer was cut off, and
        when acceptable candidates disagree (on ``require_keys`` when given, else on the whole
        value).

    Examples
    --------
    >>> parse_json_answer('Sure! ```json\\n{"Correct Choice": "B"}\\n```')
    {'Correct Choice': 'B'}
    >>> parse_json_answer("{'answer': 'C',}")
    {'answer': 'C'}
    >>> parse_json_answer('{"Correct Choice": "B') is None  # cut off
    True
    >>> parse_json_answer('{"a": "B"} or {"a": "C"}', require_keys=["a"]) is None  # two answers
    True
    """
    if not text:
        return None
    keys = tuple(require_keys)

    def acceptable(value: Any) -> bool:
        if value is _FAIL or (expect is not None and not isinstance(value, expect)):
            return False
        if keys and not (isinstance(value, dict) and all(k in value for k in keys)):
            return False
        return accept is None or bool(_safe(accept, value))

    whole = _loads_forgiving(text.strip())
    if acceptable(whole):
        return whole
    found = [
        v for v in map(_loads_forgiving, _candidates(text, expect, acceptable)) if acceptable(v)
    ]
    answers = {_identity(v, keys) for v in found}
    return found[-1] if len(answers) == 1 else None


_FAIL = object()
_MAX_STARTS = 64  # bracket positions tried at most, the last ones (the answer comes last)


def _safe(test: Callable[[Any], bool], value: Any) -> bool:
    try:
        return test(value)
    except Exception:
        return False


def _identity(value: Any, keys: tuple[str, ...]) -> str:
    """What two candidates must share to be the same answer."""
    picked = {k: value[k] for k in keys} if keys else value
    return json.dumps(picked, sort_keys=True, default=str)


def _candidates(text: str, expect: type | None, acceptable: Callable[[Any], bool]) -> list[str]:
    out = [m.group(1).strip() for m in _FENCE.finditer(text)]
    opens = "{[" if expect is None else ("[" if expect is list else "{")
    starts = [i for i, ch in enumerate(text) if ch in opens][-_MAX_STARTS:]
    covered_until = -1
    for start in starts:
        if start < covered_until:
            continue  # inside an object already taken: its parts are not separate answers
        span = _balanced(text, start)
        if span is None:
            continue  # never closed: cut off, not an answer
        out.append(span)
        if acceptable(_loads_forgiving(span)):
            covered_until = start + len(span)
    return out


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


def _loads_forgiving(s: str) -> Any:
    for attempt in (s, _TRAILING_COMMA.sub(r"\1", s)):
        try:
            return json.loads(attempt)
        except (ValueError, RecursionError):
            pass
        try:
            value = ast.literal_eval(attempt)
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            continue
        if isinstance(value, (dict, list, str, int, float, bool)) or value is None:
            return value
    return _FAIL
