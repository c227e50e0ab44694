"""Strict readers for a study's own files: ``study.yaml``, its items and a participants list.

A study's identifiers -- item ids, agents (the keys of an item's ``replies``), question ids,
MCQ students and questions, participant labels -- are taken exactly as written, by the rule of
:func:`edueval.io.identifier_problem`, applied to the raw text before anything converts it:
surrounding spaces, a control character (NUL included) anywhere, or a JSON/YAML value that is not
text or a number (``null``, ``true``, a list, an object) are refused with the file and line.

Nothing is silently chosen between two copies: a key given twice in one JSON object or YAML
mapping (``json.loads`` and PyYAML keep the last), two items, questions or participants with the
same id, are refused naming both lines.  Two questions with one id would otherwise each be shown
and answered, and one answer would overwrite the other in the database.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..io import InputError, identifier_problem, jsonl_lines, load_json, read_text
from ..tables import Col, Schema, near_miss

__all__ = [
    "MAX_PARTICIPANTS",
    "QUESTION_SCHEMA",
    "both_places",
    "Number",
    "check_identifier",
    "check_keys",
    "first_duplicate",
    "read_items_json",
    "read_items_jsonl",
    "read_participants",
    "unpaired_surrogate",
    "yaml_questions",
    "yaml_duplicate_key",
]

#: Most participants one ``study invite`` creates (``--n``, or lines of ``--participants``): a
#: study with human raters or students is hundreds to thousands of people; the bound keeps a
#: typo such as ``--n 10000000`` from filling the database for hours.
MAX_PARTICIPANTS = 100_000

#: One entry of ``questions:`` in ``study.yaml``: ``{id, text}``, the id taken exactly as written
#: and unique (two questions with one id would each be answered, one answer overwriting the
#: other).  Closed: any other key (``txt``) is refused with the nearest known one.
QUESTION_SCHEMA = Schema("study question", (Col("id", "id"), Col("text", "text")), key=("id",),
                         closed=True)  # fmt: skip


def check_keys(
    record: dict, schema: Schema, *, file: Path | None, line: int | None, column: str | None = None
) -> None:
    """:meth:`edueval.tables.Schema.check_header`'s rule for the keys of one JSON/YAML record:
    an unknown key is refused when the schema is closed, or (open) when it is a near miss of a
    key the record lacks (``replys`` beside no ``replies``) -- naming that key."""
    known = schema.known
    absent = [k for k in known if k not in record]
    for key in record:
        if key in known:
            continue
        hint = near_miss(str(key), absent)
        if schema.closed or hint is not None:
            raise InputError(
                f"unknown key {str(key)!r}" + (f" (did you mean {hint!r}?)" if hint else "")
                + f"; a {schema.what} takes the keys {', '.join(map(repr, known))}",
                file=file, line=line, column=column or str(key),
            )  # fmt: skip


class Number(str):
    """A JSON number kept as the text it was written as (``1.50`` stays ``"1.50"``)."""

    __slots__ = ()


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(name)


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_int=Number, parse_float=Number,
                            parse_constant=_no_constant)  # fmt: skip


def _decode_at(text: str, start: int, path: Path, line: int) -> tuple[Any, int]:
    """The JSON value at ``text[start:]`` and where it ends, strictly: a key given twice in one
    object, or ``NaN``/``Infinity``, is an :class:`InputError` on ``line``."""
    try:
        return _DECODER.raw_decode(text, start)
    except _DuplicateKey as exc:
        raise InputError(
            f"key {exc.key!r} given twice in one JSON object (which one is meant?)",
            file=path,
            line=line,
        ) from None
    except ValueError as exc:  # NaN / Infinity: not JSON
        raise InputError(
            f"not valid JSON ({exc} is not a JSON value)", file=path, line=line
        ) from None


def read_items_jsonl(path: Path) -> list[tuple[int, Any]]:
    """``(line, value)`` of every non-blank line of a JSONL file (lines end at LF only)."""
    out = []
    for number, line in jsonl_lines(read_text(path)):
        load_json(line, file=path, line=number)  # syntax and nesting depth, in one line
        out.append((number, _decode_at(line, 0, path, number)[0]))
    return out


_BETWEEN = re.compile(r"[\s,]*")


def read_items_json(path: Path) -> list[tuple[int | None, Any]]:
    """``(line, value)`` of each element of a JSON list (the line it starts on); one object is
    one item; an object of equally long lists is read as columns (lines unknown)."""
    text = read_text(path)
    whole = load_json(text, file=path)  # syntax and nesting depth, in one line
    if isinstance(whole, list):
        out: list[tuple[int | None, Any]] = []
        pos, line = text.index("[") + 1, 1 + text.count("\n", 0, text.index("["))
        for _ in whole:
            start = _BETWEEN.match(text, pos).end()  # type: ignore[union-attr]  # [\s,]* always matches
            line += text.count("\n", pos, start)
            value, end = _decode_at(text, start, path, line)
            out.append((line, value))
            line += text.count("\n", start, end)
            pos = end
        return out
    value = _decode_at(text, len(text) - len(text.lstrip()), path, 1)[0]
    if isinstance(value, dict) and value and all(isinstance(v, list) for v in value.values()):
        lengths = {len(v) for v in value.values()}
        if len(lengths) != 1:
            raise InputError("a JSON object of columns needs lists of one length", file=path)
        names = list(value)
        return [(None, dict(zip(names, row, strict=True)))
                for row in zip(*value.values(), strict=True)]  # fmt: skip
    return [(1, value)]


def check_identifier(
    value: Any, what: str, *, file: Path | None, line: int | None, column: str | None = None
) -> str:
    """``value`` as an identifier taken exactly as written, or an :class:`InputError`.

    Text and numbers (a JSON number as written, :class:`Number`; a YAML or Python number) are ids;
    ``None``, an empty text, true/false, lists and objects are not, nor is text with surrounding
    spaces or a control character (:func:`edueval.io.identifier_problem`)."""

    def bad(expected: str) -> InputError:
        return InputError(f"expected {expected}, got {_shown(value)}", file=file, line=line,
                          column=column)  # fmt: skip

    if value is None or (isinstance(value, str) and value == ""):
        raise bad(f"a non-empty {what}")
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise bad(f"{what} as text or a number")
    text = str(value)
    problem = identifier_problem(text) or unpaired_surrogate(text)
    if problem is not None:
        raise InputError(f"{what} {_shown(value)} has {problem}: ids are taken exactly as "
                         "written (printable characters, no surrounding spaces)", file=file,
                         line=line, column=column)  # fmt: skip
    return text


def unpaired_surrogate(text: str) -> str | None:
    """``"an unpaired surrogate"`` when ``text`` (from a JSON ``\\ud800`` escape) cannot be
    stored or shown as UTF-8, else None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "an unpaired surrogate"
    return None


def _shown(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return f"a JSON {'object' if isinstance(value, dict) else 'list'}"
    return repr(str(value))


def first_duplicate(
    keys: Iterable[tuple[Any, int | None]],
) -> tuple[Any, int | None, int | None] | None:
    """The first key that repeats an earlier one, with the positions of both, or None."""
    seen: dict[Any, int | None] = {}
    for key, where in keys:
        if key in seen:
            return key, seen[key], where
        seen[key] = where
    return None


def both_places(first: int | None, second: int | None, unit: str = "line") -> str:
    """``"lines 3 and 7"`` (or ``"items 3 and 7"`` when lines are unknown)."""
    return f"{unit}s {first} and {second}"


def read_participants(path: Path) -> list[tuple[str, int]]:
    """``(label, line)`` for each non-blank line of a participants file (one id a line, exactly
    as written; a CRLF line end is a line end).  Refused in one line: an id with surrounding
    spaces or a control character, an id listed twice, more than :data:`MAX_PARTICIPANTS`."""
    out: list[tuple[str, int]] = []
    for number, raw in enumerate(read_text(path).split("\n"), start=1):
        label = raw[:-1] if raw.endswith("\r") else raw
        if not label.strip():
            continue
        out.append((check_identifier(label, "participant id", file=path, line=number), number))
        if len(out) > MAX_PARTICIPANTS:
            raise InputError(f"more than {MAX_PARTICIPANTS:,} participants in one invite; "
                             "split the file", file=path, line=number)  # fmt: skip
    dup = first_duplicate(out)
    if dup is not None:
        label, a, b = dup
        raise InputError(f"participant {label!r} is listed twice ({both_places(a, b)})",
                         file=path, line=b)  # fmt: skip
    return out


# -- study.yaml: the node tree, for lines and the text of scalars as written ---------------------

_NULL = "tag:yaml.org,2002:null"


def _mapping(node: Any) -> list[tuple[Any, Any]]:
    import yaml

    return list(node.value) if isinstance(node, yaml.MappingNode) else []


def yaml_duplicate_key(root: Any) -> tuple[str, int, int] | None:
    """The first key given twice in one mapping anywhere in a composed YAML document (PyYAML
    keeps the last silently), with both lines; None if there is none."""
    import yaml

    stack, seen_nodes = [root], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys = [((k.tag, k.value), k.start_mark.line + 1) for k, _ in node.value
                    if isinstance(k, yaml.ScalarNode) and k.value != "<<"]  # fmt: skip
            dup = first_duplicate(keys)
            if dup is not None:
                return str(dup[0][1]), int(dup[1] or 0), int(dup[2] or 0)
            stack.extend(v for pair in node.value for v in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return None


def _scalar(node: Any, what: str, path: Path, *, identifier: bool) -> str:
    """A YAML scalar's text as written (``007`` stays ``"007"``; ``null`` or ``~`` is missing)."""
    import yaml

    line = node.start_mark.line + 1
    if not isinstance(node, yaml.ScalarNode):
        kind = "mapping" if isinstance(node, yaml.MappingNode) else "list"
        raise InputError(f"expected {what} (text), got a {kind}", file=path, line=line,
                         column="questions")  # fmt: skip
    value = None if node.tag == _NULL else node.value
    if identifier:
        return check_identifier(value, what, file=path, line=line, column="questions")
    if value is None or not value.strip():
        raise InputError(f"expected a non-empty {what}", file=path, line=line, column="questions")
    return value


def yaml_questions(root: Any, path: Path) -> list[dict[str, str]] | None:
    """``questions: [{id, text}, ...]`` of a composed ``study.yaml``, ids and texts as written;
    None when the key is absent.  A question id given twice is refused naming both lines."""
    import yaml

    node = next((v for k, v in _mapping(root) if getattr(k, "value", None) == "questions"), None)
    if node is None or node.tag == _NULL:
        return None
    if not isinstance(node, yaml.SequenceNode):
        raise InputError("expected a list of questions [{id, text}, ...]", file=path,
                         line=node.start_mark.line + 1, column="questions")  # fmt: skip
    out, lines = [], []
    for q in node.value:
        fields = {k.value: v for k, v in _mapping(q) if isinstance(k, yaml.ScalarNode)}
        check_keys(fields, QUESTION_SCHEMA, file=path, line=q.start_mark.line + 1,
                   column="questions")  # fmt: skip
        if not isinstance(q, yaml.MappingNode) or "id" not in fields or "text" not in fields:
            raise InputError("expected each question as {id, text}", file=path,
                             line=q.start_mark.line + 1, column="questions")  # fmt: skip
        qid = _scalar(fields["id"], "question id", path, identifier=True)
        out.append({"id": qid, "text": _scalar(fields["text"], "question text", path,
                                               identifier=False)})  # fmt: skip
        lines.append((qid, fields["id"].start_mark.line + 1))
    dup = first_duplicate(lines)
    if dup is not None:
        qid, a, b = dup
        raise InputError(f"question id {qid!r} is given twice ({both_places(a, b)}): each "
                         "question needs its own id, or one answer overwrites the other",
                         file=path, line=b, column="questions")  # fmt: skip
    return out
