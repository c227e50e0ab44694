"""Every input table edueval reads, found from its :class:`~edueval.tables.Schema` declarations.

The schemas are the single source of truth for the input formats: ``edueval formats`` prints them
and the docs site's "Input formats" page is generated from the same functions, so a format is
never written twice.  The registry is not a list: :func:`find_schemas` walks edueval's source for
module-level assignments, imports those modules and keeps every value that is a ``Schema`` (or a
mapping of them, e.g. the study's item kinds), named where it is defined (a module that imports a
schema from another does not list it again).  A new module-level schema is listed without editing
anything here.  Its ``#:`` comment (the lines just above the assignment) is its description.

This module sits in the run/report layer: it imports the protocol modules (by name, at run time),
which a shared service such as :mod:`edueval.tables` must not.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .io import InputError
from .tables import Col, Schema

__all__ = ["Table", "find_schemas", "find_table", "table_markdown", "table_text", "without_roles"]

PACKAGE = Path(__file__).resolve().parent
#: modules never imported while looking (running ``python -m edueval`` would start the CLI)
_SKIP = ("edueval.__main__",)


@dataclass(frozen=True)
class Table:
    """One input table: ``name`` is how ``edueval formats NAME`` calls it (``kt.response-file``),
    ``where`` the Python name of its declaration (``edueval.kt.data.RESPONSE_SCHEMA``) and
    ``about`` the ``#:`` comment above that declaration (empty when there is none)."""

    name: str
    where: str
    schema: Schema
    about: str = ""


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _comment_above(lines: list[str], lineno: int) -> str:
    """The ``#:`` lines just above line ``lineno`` (1-based), joined."""
    found: list[str] = []
    i = lineno - 2
    while i >= 0 and lines[i].lstrip().startswith("#:"):
        found.insert(0, lines[i].lstrip()[2:].strip())
        i -= 1
    return " ".join(found)


def _assignments(path: Path) -> dict[str, str]:
    """Names a module assigns at its top level (not those it imports), each with its ``#:``
    comment."""
    source = path.read_text(encoding="utf-8")
    if "Schema" not in source and "_SCHEMA" not in source:
        return {}
    lines = source.splitlines()
    names: dict[str, str] = {}
    for node in ast.parse(source).body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign) and node.value is not None
            else []
        )
        for target in targets:
            if isinstance(target, ast.Name):
                names[target.id] = _comment_above(lines, node.lineno)
    return names


def _declared() -> Iterator[tuple[str, str, Schema, str]]:
    """(module, Python name, schema, comment) for every module-level schema, in source order."""
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        if module in _SKIP:
            continue
        names = _assignments(path)
        if not names:
            continue
        values = vars(importlib.import_module(module))
        for name, about in names.items():
            value = values.get(name)
            if isinstance(value, Schema):
                yield module, name, value, about
            elif (
                isinstance(value, Mapping)
                and value
                and all(isinstance(v, Schema) for v in value.values())
            ):
                for key, schema in value.items():
                    yield module, f"{name}[{key!r}]", schema, about


@lru_cache(maxsize=1)
def find_schemas() -> tuple[Table, ...]:
    """Every module-level input table of edueval, named ``<package>.<what>``.

    ``<package>`` is the protocol (``kt``, ``items``...) or the top-level module, ``<what>`` the
    schema's own name in messages, made a slug (``response file`` -> ``response-file``); a name
    two schemas would share gets the Python name of the second appended.  A schema bound to two
    names (one module re-exports another's) is listed once, under its first.
    """
    tables: list[Table] = []
    seen: set[int] = set()
    names: set[str] = set()
    for module, attr, schema, about in _declared():
        if id(schema) in seen:
            continue
        seen.add(id(schema))
        package = module.split(".")[1] if module.count(".") else module
        name = f"{package}.{_slug(schema.what)}"
        if name in names:
            name = f"{name}.{_slug(attr)}"
        names.add(name)
        tables.append(Table(name, f"{module}.{attr}", schema, about))
    return tuple(tables)


def find_table(name: str) -> Table:
    """The table called ``name``: its full name, its ``<what>`` part when only one table has
    it, or the Python name of its declaration; case is ignored.  Raises :class:`InputError`."""
    tables = find_schemas()
    wanted = name.strip().lower()
    for table in tables:
        if wanted in (table.name.lower(), table.where.lower()):
            return table
    short = [t for t in tables if t.name.split(".", 1)[1] == _slug(wanted)]
    if len(short) == 1:
        return short[0]
    if short:
        raise InputError(f"table {name!r} is ambiguous: {', '.join(t.name for t in short)}")
    raise InputError(
        f"no input table {name!r}; `edueval formats` lists them "
        f"({', '.join(t.name for t in tables)})"
    )


def _range(col: Col) -> str:
    if col.low is None and col.high is None:
        return ""
    low = "-inf" if col.low is None else f"{col.low:g}"
    high = "inf" if col.high is None else f"{col.high:g}"
    return f"[{low}, {high}]"


def _presence(col: Col) -> str:
    if col.required:
        return "required"
    return "optional" + (f", default {col.default!r}" if col.default is not None else "")


def _rules(schema: Schema) -> list[str]:
    """The table-level rules, one line each."""
    key = " + ".join(schema.key) if schema.key else "none (rows may repeat)"
    rules = [f"key: {key}"]
    rules.append(
        "closed: a column not listed here is refused"
        if schema.closed
        else "open: other columns are kept (a near miss of a listed one is refused)"
    )
    if schema.ignored:
        rules.append(f"accepted and ignored: {', '.join(schema.ignored)}")
    return rules


def table_text(table: Table) -> str:
    """``table`` as ``edueval formats`` prints it: a heading, its rules, one line per column."""
    schema = table.schema
    rows = [(c.name, c.kind, _range(c), _presence(c)) for c in schema.columns]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(_HEADER)]
    out = [f"{table.name}: {schema.what} ({table.where})"]
    if table.about:
        out.append(f"  {without_roles(table.about)}")
    out += [f"  {rule}" for rule in _rules(schema)]
    for row in (_HEADER, *rows):
        out.append("  " + "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())
    return "\n".join(out)


_HEADER = ("column", "kind", "range", "presence")


_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")


def without_roles(text: str) -> str:
    """Sphinx roles (``:func:`x```) as plain code spans (```x```), for Markdown and terminals."""
    return _ROLE.sub(lambda m: f"``{m.group(1)}``", text)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def table_markdown(table: Table) -> str:
    """``table`` as a Markdown section (the docs site's "Input formats" page)."""
    schema = table.schema
    out = [f"## `{table.name}`", "", f"**{schema.what}**, declared as `{table.where}`.", ""]
    if table.about:
        out += [without_roles(table.about), ""]
    out += [f"- {rule}" for rule in _rules(schema)]
    out += ["", "| column | kind | range | presence |", "|---|---|---|---|"]
    for c in schema.columns:
        cells = (f"`{c.name}`", c.kind, _range(c), _presence(c))
        out.append("| " + " | ".join(_cell(v) for v in cells) + " |")
    return "\n".join(out) + "\n"
