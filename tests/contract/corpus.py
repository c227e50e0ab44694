"""The generated corpus of ``test_mutation_corpus.py``: seed tables, mutations and targets.

A :class:`Table` is a small valid input (rows of Python values) that knows which of its columns
are identifiers, numbers with a range, 0/1 flags, text or an order, whether a repeated row is an
error (a key) and whether a missing row is (a completeness rule).  A :class:`Mutation` turns a
table into the bytes of a damaged file, or says it does not apply.  A :class:`Target` is one
command with one of its input files (the *slot*) taken from a table and the others fixed; the test
module crosses every target with every mutation that applies to it.

Every mutation declares what a correct command does with it: ``harmless`` (exit 0 with results
identical to the unmutated run), ``refuse`` (exit 2 with one ``error:`` line) or ``either`` (one of
the two, never exit 0 with different results).
"""

from __future__ import annotations

import copy
import csv
import io
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

HARMLESS, REFUSE, EITHER = "harmless", "refuse", "either"


@dataclass(frozen=True)
class Table:
    """A seed: ``rows`` in ``columns`` order, rendered as ``fmt`` (csv, tsv, jsonl, json, lines)."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    fmt: str = "csv"
    ids: tuple[str, ...] = ()
    numbers: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    binary: tuple[str, ...] = ()
    text: tuple[str, ...] = ()
    order: str | None = None
    keyed: bool = False  # a repeated row is an error
    complete: bool = False  # a missing row is an error
    closed: bool = False  # an unknown column is an error
    required: tuple[str, ...] = ()  # removing one of these is an error (default: ids)
    nullable: tuple[str, ...] = ()  # an empty cell here means "missing", by design

    @property
    def ext(self) -> str:
        return {"lines": "txt"}.get(self.fmt, self.fmt)

    def dicts(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, r, strict=True)) for r in self.rows]

    def with_rows(self, rows: list[list[Any]] | list[tuple[Any, ...]]) -> Table:
        return replace(self, rows=tuple(tuple(r) for r in rows))

    def col(self, name: str) -> int:
        return self.columns.index(name)

    @property
    def must_have(self) -> tuple[str, ...]:
        return self.required or self.ids

    @property
    def target_row(self) -> int:
        """The row a row-level mutation changes: one in the middle (not the first line)."""
        return len(self.rows) // 2


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def render_rows(columns: list[str], rows: list[list[Any]], fmt: str) -> bytes:
    """The file's bytes; ``rows`` may hold :class:`Raw` cells written as they are."""
    if fmt in ("csv", "tsv"):
        buf = io.StringIO()
        w = csv.writer(buf, delimiter="," if fmt == "csv" else "\t", lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow([cell(v) for v in r])
        return buf.getvalue().encode()
    if fmt == "lines":
        return "".join(cell(r[0]) + "\n" for r in rows).encode()
    objs = [_obj(columns, r) for r in rows]
    if fmt == "jsonl":
        return "".join(o + "\n" for o in objs).encode()
    if fmt == "json":
        return ("[\n" + ",\n".join(objs) + "\n]\n").encode()
    raise ValueError(fmt)


class Raw(str):
    """A JSON cell written verbatim (``null``, ``{"a": 1}``, a 19-digit integer)."""


def _obj(columns: list[str], row: list[Any]) -> str:
    parts = []
    for c, v in zip(columns, row, strict=True):
        val = str(v) if isinstance(v, Raw) else json.dumps(v, ensure_ascii=False)
        parts.append(f"{json.dumps(c)}: {val}")
    return "{" + ", ".join(parts) + "}"


def render(t: Table) -> bytes:
    return render_rows(list(t.columns), [list(r) for r in t.rows], t.fmt)


# --------------------------------------------------------------------------------------------
# mutations


@dataclass(frozen=True)
class Mutation:
    name: str
    expect: str
    apply: Callable[[Table], bytes | None]
    line_of_error: Callable[[Table], int | None] | None = None  # the line the error must name
    ignore_columns: tuple[str, ...] = ()  # output columns that carry the mutated value through


def _rows(t: Table) -> list[list[Any]]:
    return [list(r) for r in copy.deepcopy(t.rows)]


def _set_cell(t: Table, column: str | None, value: Any) -> bytes | None:
    if column is None or column not in t.columns:
        return None
    rows = _rows(t)
    rows[t.target_row][t.col(column)] = value
    return render_rows(list(t.columns), rows, t.fmt)


def _first(names: tuple[str, ...] | list[str]) -> str | None:
    return names[0] if names else None


def _id_suffix(suffix: str, prefix: str = "") -> Callable[[Table], bytes | None]:
    def go(t: Table) -> bytes | None:
        col = _first(t.ids)
        if col is None:
            return None
        return _set_cell(t, col, prefix + cell(t.rows[t.target_row][t.col(col)]) + suffix)

    return go


def _json_only(fn: Callable[[Table], bytes | None]) -> Callable[[Table], bytes | None]:
    return lambda t: fn(t) if t.fmt in ("json", "jsonl") else None


def _tabular(fn: Callable[[Table], bytes | None]) -> Callable[[Table], bytes | None]:
    return lambda t: fn(t) if t.fmt != "lines" else None


def _bom(t: Table) -> bytes:
    return b"\xef\xbb\xbf" + render(t)


def _crlf(t: Table) -> bytes | None:
    data = render(t)
    if t.fmt in ("json", "jsonl", "lines"):
        return data.replace(b"\n", b"\r\n")
    # CSV: records end in CRLF; a line break inside a quoted field stays as it is
    buf = io.StringIO()
    w = csv.writer(buf, delimiter="," if t.fmt == "csv" else "\t", lineterminator="\r\n")
    w.writerow(t.columns)
    for r in t.rows:
        w.writerow([cell(v) for v in r])
    return buf.getvalue().encode()


def _shuffle_columns(t: Table) -> bytes | None:
    if len(t.columns) < 2 or t.fmt == "lines":
        return None
    order = list(range(len(t.columns)))
    order = order[1:] + order[:1]
    random.Random(len(t.columns)).shuffle(order)
    if order == list(range(len(t.columns))):
        order.reverse()
    cols = [t.columns[i] for i in order]
    return render_rows(cols, [[r[i] for i in order] for r in t.rows], t.fmt)


def _extra_column(t: Table) -> bytes | None:
    cols = [*t.columns, "zz_unrelated_note"]
    return render_rows(cols, [[*r, f"note {i}"] for i, r in enumerate(t.rows)], t.fmt)


def _dup_header(t: Table) -> bytes | None:
    if t.fmt not in ("csv", "tsv"):
        return None
    col = _first(list(t.numbers) or list(t.binary) or list(t.ids))
    if col is None:
        return None
    i = t.col(col)
    cols = [*t.columns, col]
    rows = [[*r, r[(i + 1) % len(r)] if j % 2 else r[i]] for j, r in enumerate(t.rows)]
    return render_rows(cols, rows, t.fmt)


def _dup_json_key(t: Table) -> bytes | None:
    """A JSON object that names a column twice (``json.loads`` keeps the last silently)."""
    if t.fmt not in ("json", "jsonl"):
        return None
    col = _first(list(t.numbers) or list(t.binary) or list(t.ids))
    if col is None:
        return None
    rows = _rows(t)
    r = t.target_row
    cols = list(t.columns)
    objs = [_obj(cols, row) for row in rows]
    other = rows[(r + 1) % len(rows)][t.col(col)]
    objs[r] = objs[r][:-1] + f", {json.dumps(col)}: {json.dumps(other)}" + "}"
    if t.fmt == "jsonl":
        return "".join(o + "\n" for o in objs).encode()
    return ("[\n" + ",\n".join(objs) + "\n]\n").encode()


def _misspell(kind: str) -> Callable[[Table], bytes | None]:
    def go(t: Table) -> bytes | None:
        pool = {"id": t.ids, "number": tuple(t.numbers) + t.binary}[kind]
        col = _first(pool)
        if col is None or len(col) < 3 or t.fmt == "lines":
            return None
        wrong = col[:-2] + col[-1]  # forget -> forgt
        cols = [wrong if c == col else c for c in t.columns]
        return render_rows(cols, _rows(t), t.fmt)

    return go


def _remove_column(t: Table) -> bytes | None:
    col = _first(t.must_have)
    if col is None or t.fmt == "lines":
        return None
    i = t.col(col)
    cols = [c for c in t.columns if c != col]
    return render_rows(cols, [r[:i] + r[i + 1 :] for r in _rows(t)], t.fmt)


def _numeric(value: Any, *, binary: bool = False) -> Callable[[Table], bytes | None]:
    def go(t: Table) -> bytes | None:
        col = _first(t.binary if binary else tuple(t.numbers))
        return _set_cell(t, col, value)

    return go


def _out_of_range(t: Table) -> bytes | None:
    for col, (low, high) in t.numbers.items():
        if high is not None:
            return _set_cell(t, col, high + 1.5 if high >= 1 else 1.5)
        if low is not None:
            return _set_cell(t, col, low - 1)
    return None


def _negative_probability(t: Table) -> bytes | None:
    for col, (low, _high) in t.numbers.items():
        if low == 0:
            return _set_cell(t, col, -0.25)
    return None


def _empty_cell(t: Table) -> bytes | None:
    col = _first([c for c in list(t.numbers) or list(t.binary) if c not in t.nullable])
    if t.fmt in ("json", "jsonl"):
        return _set_cell(t, col, Raw("null")) if col else None
    return _set_cell(t, col, "")


def _empty_id(t: Table) -> bytes | None:
    if t.fmt == "lines":  # an empty line in a list of ids is a blank line: skipped by design
        return None
    return _set_cell(t, _first(t.ids), "")


def _duplicate_row(t: Table) -> bytes | None:
    if not t.keyed:
        return None
    rows = _rows(t)
    rows.insert(t.target_row + 1, list(rows[t.target_row]))
    return render_rows(list(t.columns), rows, t.fmt)


def _duplicate_key_other_values(t: Table) -> bytes | None:
    """The same key twice with different values: which one wins is a silent choice."""
    if not t.keyed or not (t.numbers or t.binary):
        return None
    rows = _rows(t)
    row = list(rows[t.target_row])
    col = _first(list(t.numbers) or list(t.binary))
    i = t.col(col)
    old = row[i]
    try:
        row[i] = type(old)(0 if float(old) else 1) if not isinstance(old, str) else "0"
    except (TypeError, ValueError):
        return None
    if row[i] == old:
        row[i] = 1 if not isinstance(old, str) else "1"
    rows.append(row)
    return render_rows(list(t.columns), rows, t.fmt)


def _missing_row(t: Table) -> bytes | None:
    if not t.complete:
        return None
    rows = _rows(t)
    del rows[t.target_row]
    return render_rows(list(t.columns), rows, t.fmt)


def _empty_file(t: Table) -> bytes:
    return b""


def _header_only(t: Table) -> bytes | None:
    if t.fmt in ("csv", "tsv"):
        return render_rows(list(t.columns), [], t.fmt)
    if t.fmt == "json":
        return b"[]\n"
    if t.fmt == "jsonl":
        return b"\n"
    return b"\n"  # lines: one blank line


def _truncated(t: Table) -> bytes | None:
    data = render(t).rstrip(b"\n")
    last = data.rfind(b"\n")
    tail = data[last + 1 :]
    if t.fmt in ("csv", "tsv"):
        sep = b"," if t.fmt == "csv" else b"\t"
        if sep not in tail:
            return None
        return data[: last + 1] + tail[: tail.rfind(sep)] + b"\n"
    if t.fmt == "lines":
        return None
    return data[: last + 1] + tail[: len(tail) // 2]


def _deep_json(t: Table) -> bytes | None:
    if t.fmt not in ("json", "jsonl"):
        return None
    depth = 100_000
    deep = "[" * depth + "]" * depth
    if t.fmt == "json":
        return ("[" + deep + "]\n").encode()
    rows = render(t).decode().splitlines(keepends=True)
    col = t.columns[-1]
    rows.insert(1, json.dumps({col: 0})[:-2] + " " + deep + "}\n")
    return "".join(rows).encode()


def _json_columns(t: Table) -> bytes | None:
    if t.fmt != "json":
        return None
    obj = {c: [r[i] for r in t.rows] for i, c in enumerate(t.columns)}
    return (json.dumps(obj, ensure_ascii=False) + "\n").encode()


def _raw_separator_in_text(t: Table) -> bytes | None:
    """A raw U+2028 (and U+0085) inside a JSON string of a text column: text, not a line end."""
    if t.fmt != "jsonl" or not t.text:
        return None
    col = t.text[0]
    value = cell(t.rows[t.target_row][t.col(col)])
    data = _set_cell(t, col, value + "\u2028and\u0085more")
    return data


def _big_orders(t: Table) -> bytes | None:
    """Integer orders above 2**53 that differ by one: distinct as integers, equal as floats."""
    if t.order is None:
        return None
    rows = _rows(t)
    i = t.col(t.order)
    for r in rows:
        r[i] = Raw(str(2**60 + int(r[i]))) if t.fmt in ("json", "jsonl") else 2**60 + int(r[i])
    return render_rows(list(t.columns), rows, t.fmt)


def _multiline_then_bad(t: Table) -> bytes | None:
    """A quoted field spanning lines in row 1, then a bad number further down."""
    if t.fmt != "csv" or not t.text or not (t.numbers or t.binary):
        return None
    rows = _rows(t)
    rows[0][t.col(t.text[0])] = cell(rows[0][t.col(t.text[0])]) + "\nsecond line\nthird line"
    col = _first(list(t.numbers) or list(t.binary))
    rows[t.target_row][t.col(col)] = "not-a-number"
    return render_rows(list(t.columns), rows, t.fmt)


def _multiline_line(t: Table) -> int:
    return t.target_row + 2 + 2  # header, 1-based, two extra physical lines in row 1


def _invalid_utf8(t: Table) -> bytes | None:
    col = _first(t.ids) or _first(t.text)
    if col is None:
        return None
    marker = "\ue000MARK"
    data = _set_cell(t, col, cell(t.rows[t.target_row][t.col(col)]) + marker)
    assert data is not None
    return data.replace(marker.encode(), b"\xff\xfe")


def _other_format(t: Table) -> bytes | None:
    """The content of another format under this file's extension."""
    other = {"csv": "jsonl", "tsv": "json", "jsonl": "csv", "json": "csv"}.get(t.fmt)
    if other is None:
        return None
    return render(replace(t, fmt=other))


def _stray_quote(t: Table) -> bytes | None:
    if t.fmt not in ("csv", "tsv"):
        return None
    col = _first(t.text) or _first(t.ids)
    if col is None:
        return None
    rows = _rows(t)
    rows[t.target_row][t.col(col)] = Raw('"' + cell(rows[t.target_row][t.col(col)]))
    buf = io.StringIO()
    sep = "," if t.fmt == "csv" else "\t"
    buf.write(sep.join(t.columns) + "\n")
    for r in rows:
        buf.write(sep.join(str(v) if isinstance(v, Raw) else _quote(cell(v), sep) for v in r))
        buf.write("\n")
    return buf.getvalue().encode()


def _quote(s: str, sep: str) -> str:
    if any(ch in s for ch in (sep, '"', "\n", "\r")):
        return '"' + s.replace('"', '""') + '"'
    return s


def _thousands(t: Table) -> bytes | None:
    for col, (_low, high) in t.numbers.items():
        if high is None or high >= 10_000:
            return _set_cell(t, col, "1,234" if t.fmt != "csv" else "1,234")
    return None


def _blank_lines_at_end(t: Table) -> bytes | None:
    if t.fmt == "json":
        return None
    return render(t) + b"\n\n"


def _json_id(raw: str) -> Callable[[Table], bytes | None]:
    return _json_only(lambda t: _set_cell(t, _first(t.ids), Raw(raw)))


def _json_text(raw: str) -> Callable[[Table], bytes | None]:
    """A text column's cell (else an id's) written as the JSON ``raw``."""
    return _json_only(lambda t: _set_cell(t, _first(t.text) or _first(t.ids), Raw(raw)))


def _huge_number(digits: int, *, json_only: bool) -> Callable[[Table], bytes | None]:
    """A number cell (else a 0/1 cell) with ``digits`` digits: beyond Python's 4,300-digit
    conversion limit in JSON, beyond float's range (1e308) in any format."""

    def go(t: Table) -> bytes | None:
        col = _first(tuple(t.numbers) or t.binary)
        value = "9" * digits
        return _set_cell(t, col, Raw(value) if t.fmt in ("json", "jsonl") else value)

    return _json_only(go) if json_only else _tabular(go)


MUTATIONS: tuple[Mutation, ...] = (
    # harmless by design: exit 0, results identical
    Mutation("bom", HARMLESS, _bom),
    Mutation("crlf", HARMLESS, _crlf),
    Mutation("column-order", HARMLESS, _shuffle_columns),
    # either refused or read to the same results
    Mutation("extra-column", EITHER, _tabular(_extra_column)),
    Mutation("json-object-of-columns", EITHER, _json_columns),
    Mutation("blank-lines-at-end", EITHER, _blank_lines_at_end),
    Mutation("other-format-content", EITHER, _other_format),
    # must be refused
    Mutation("header-column-twice", REFUSE, _dup_header),
    Mutation("json-key-twice", REFUSE, _dup_json_key),
    Mutation("misspelled-id-column", REFUSE, _misspell("id")),
    Mutation("misspelled-number-column", REFUSE, _misspell("number")),
    Mutation("required-column-removed", REFUSE, _remove_column),
    Mutation("id-trailing-nul", REFUSE, _id_suffix("\x00")),
    Mutation("id-leading-space", REFUSE, _id_suffix("", " ")),
    Mutation("id-trailing-space", REFUSE, _id_suffix(" ")),
    Mutation("id-control-character", REFUSE, _id_suffix("\x07x")),
    Mutation("id-tab", REFUSE, _id_suffix("\tx")),
    Mutation("id-u2028", REFUSE, _id_suffix("\u2028")),
    # look-alike ids (issue 39): one row's id changed so that it looks the same but is another
    # id -- a phantom student, skill, item, agent or question if it were read
    *(
        Mutation(f"id-lookalike-{name}", REFUSE, _id_suffix(suffix))
        for name, suffix in (
            ("zero-width-space", "\u200b"),
            ("zero-width-joiner", "\u200d"),
            ("left-to-right-mark", "\u200e"),
            ("right-to-left-override", "\u202e"),
            ("byte-order-mark", "\ufeff"),
            ("soft-hyphen", "\u00ad"),
            ("word-joiner", "\u2060"),
            ("variation-selector", "\ufe0f"),
            ("decomposed-accent", "e\u0301"),
            ("fullwidth-digit", "\uff10"),
        )
    ),
    Mutation("id-empty", REFUSE, _empty_id),
    Mutation("id-json-null", REFUSE, _json_id("null")),
    Mutation("id-json-object", REFUSE, _json_id('{"a": 1}')),
    Mutation("id-json-list", REFUSE, _json_id('["s1"]')),
    Mutation("id-json-bool", REFUSE, _json_id("true")),
    Mutation("empty-number-cell", REFUSE, _empty_cell),
    Mutation("non-numeric", REFUSE, _numeric("abc")),
    Mutation("nan", REFUSE, _numeric("nan")),
    Mutation("inf", REFUSE, _numeric("inf")),
    Mutation("out-of-range", REFUSE, _out_of_range),
    Mutation("negative-probability", REFUSE, _negative_probability),
    Mutation("thousands-separator", REFUSE, _thousands),
    Mutation("binary-holds-2", REFUSE, _numeric(2, binary=True)),
    Mutation("binary-holds-0.5", REFUSE, _numeric(0.5, binary=True)),
    Mutation("duplicate-key-row", REFUSE, _duplicate_row),
    Mutation("duplicate-key-other-value", REFUSE, _duplicate_key_other_values),
    Mutation("parameter-row-missing", REFUSE, _missing_row),
    Mutation("empty-file", REFUSE, _empty_file),
    Mutation("header-only", REFUSE, _header_only),
    Mutation("truncated-last-line", REFUSE, _truncated),
    Mutation("json-nested-1e5", REFUSE, _deep_json),
    Mutation("stray-quote", REFUSE, _stray_quote),
    Mutation("multiline-field-then-bad-row", REFUSE, _multiline_then_bad, _multiline_line),
    Mutation("invalid-utf8", REFUSE, _invalid_utf8),
    # not valid Unicode: a JSON escape of half a surrogate pair, in an id and in a text
    Mutation("id-lone-surrogate", REFUSE, _json_id('"s\\ud800"')),
    Mutation("text-lone-surrogate", REFUSE, _json_text('"x \\udc00 y"')),
    # numbers past what a reader converts: Python's digit limit, float's range
    Mutation("huge-integer", REFUSE, _huge_number(5000, json_only=True)),
    Mutation("huge-integer-400-digits", REFUSE, _huge_number(400, json_only=False)),
    # text holding raw separators: the text changes, so only "read, not refused" is asked
    Mutation("jsonl-raw-u2028-in-text", "read", _raw_separator_in_text),
    Mutation("order-above-2**53", HARMLESS, _big_orders, ignore_columns=("order",)),
)


# --------------------------------------------------------------------------------------------
# seeds


def kt_responses(fmt: str, *, known: bool = False) -> Table:
    rng = random.Random(7)
    rows = []
    for s in range(6):
        for k in ("add", "sub"):
            for t in range(1, 6):
                c = 1 if rng.random() < 0.3 + 0.12 * t else 0
                row = [f"s{s}", k, c, t]
                if known:
                    row.append(1 if t > 2 else 0)
                rows.append(row)
    cols = ("student", "skill", "correct", "order") + (("known",) if known else ())
    return Table(cols, tuple(map(tuple, rows)), fmt, ids=("student", "skill"),
                 binary=("correct",) + (("known",) if known else ()), order="order",
                 required=("student", "skill", "correct"))  # fmt: skip


def kt_responses_part() -> Table:
    """Responses of other students (``t0``..), another file of a dataset beside
    :func:`kt_responses`."""
    base = kt_responses("csv")
    return base.with_rows([("t" + r[0][1:], *r[1:]) for r in base.rows])


def kt_predictions() -> Table:
    base = kt_responses("csv", known=True)
    rows = []
    for i, r in enumerate(base.rows):
        rows.append(
            (*r, round(0.2 + 0.6 * ((i * 37) % 11) / 10, 3), round(((i * 13) % 10) / 10, 2))
        )
    return Table((*base.columns, "p_correct", "p_known"), tuple(rows), "csv",
                 ids=("student", "skill"), numbers={"p_correct": (0, 1), "p_known": (0, 1)},
                 binary=("correct", "known"), order="order",
                 required=("student", "skill", "p_correct"))  # fmt: skip


PARAMS = {"add": (0.3, 0.2, 0.2, 0.1, 0.0), "sub": (0.4, 0.15, 0.25, 0.15, 0.0)}


def kt_params_wide() -> Table:
    rows = tuple((k, *v) for k, v in PARAMS.items())
    return Table(("skill", "prior", "learn", "guess", "slip", "forget"), rows, "csv",
                 ids=("skill",), numbers={"forget": (0, 1), "prior": (0, 1), "learn": (0, 1),
                                          "guess": (0, 1), "slip": (0, 1)},
                 keyed=True, complete=True, closed=True)  # fmt: skip


def kt_params_long() -> Table:
    names = ("prior", "learn", "guess", "slip", "forget")
    rows = tuple((k, p, "*", v[i]) for k, v in PARAMS.items() for i, p in enumerate(names))
    return Table(("skill", "parameter", "group", "value"), rows, "csv", ids=("skill",),
                 numbers={"value": (0, 1)}, keyed=True, complete=True, closed=True,
                 required=("skill", "parameter", "value"))  # fmt: skip


def kt_fixed() -> Table:
    rows = (("add", "guess", "*", 0.2), ("sub", "slip", "*", 0.1))
    # skill and group are optional in a --fixed table (default "*": every skill, every group)
    return Table(("skill", "parameter", "group", "value"), rows, "csv", ids=("skill",),
                 numbers={"value": (0, 1)}, keyed=True, closed=True,
                 required=("parameter", "value"))  # fmt: skip


ITEMS = ["M1-q01", "M1-q02", "M1-q03", "M1-q04"]


def items_responses() -> Table:
    rng = random.Random(3)
    rows = []
    for s in range(12):
        for it in ITEMS:
            rows.append((f"s{s:02d}", it, rng.choice("AABCD")))
    return Table(("student", "item", "choice"), tuple(rows), "csv", ids=("student", "item"),
                 keyed=True, required=("student", "item", "choice"))  # fmt: skip


def items_jsonl() -> Table:
    rows = []
    for i, it in enumerate(ITEMS):
        rows.append((it, f"What is {i} + {i + 1}?", [str(2 * i + d) for d in (1, 2, 3, 4)],
                     "A", "M1", f"topic {i % 2}"))  # fmt: skip
    return Table(("item", "text", "choices", "answer", "material", "topic"), tuple(rows),
                 "jsonl", ids=("item",), text=("text",), keyed=True)  # fmt: skip


def score_table(fmt: str = "csv", *, group: bool = False) -> Table:
    """A long score table (issue 36): ``student, item, correct`` (+ a per-student group); a
    blank ``correct`` means "not administered" by design."""
    rng = random.Random(5)
    rows = []
    for s in range(14):
        for it in ITEMS:
            row = (f"s{s:02d}", it, int(rng.random() < 0.3 + 0.04 * s))
            rows.append((*row, "AB"[s % 2]) if group else row)
    columns = ("student", "item", "correct", "grp") if group else ("student", "item", "correct")
    return Table(columns, tuple(rows), fmt, ids=("student", "item"), binary=("correct",),
                 keyed=True, required=("student", "item", "correct"),
                 nullable=("correct",))  # fmt: skip


def comparisons(fmt: str = "csv") -> Table:
    rng = random.Random(2)
    rows = []
    for it in ("i1", "i2"):
        for r in range(4):
            for a, b in (("teacher", "model"), ("model", "teacher")):
                rows.append((it, "helpful", f"r{r}", a, b,
                             rng.choice(["first", "second", "first", "tie"])))  # fmt: skip
    # no key: a rater may judge the same pair twice (both judgements count)
    return Table(("item", "attribute", "rater", "first", "second", "outcome"), tuple(rows), fmt,
                 ids=("rater", "item", "first"))  # fmt: skip


def abilities() -> Table:
    rows = []
    agents = ("teacher", "model_a", "model_b")
    for i in range(6):
        for j, a in enumerate(agents):
            m = round(0.5 * j + 0.1 * ((i * 7 + j) % 5), 3)
            rows.append((f"i{i}", "helpful", a, m, round(m - 0.8, 3), round(m + 0.8, 3)))
    return Table(("item", "attribute", "agent", "alpha_mean", "alpha_hdi_low", "alpha_hdi_high"),
                 tuple(rows), "csv", ids=("item", "agent"), numbers={"alpha_mean": (None, None)},
                 keyed=True)  # fmt: skip


def choices() -> Table:
    rows = []
    opts = ("ai", "human", "random", "correct")
    for s in range(8):
        for q in range(4):
            rows.append((f"s{s}", f"q{q}", opts[(s * 3 + q) % 4]))
    return Table(("student", "question", "chosen"), tuple(rows), "csv",
                 ids=("student", "question"), keyed=True)  # fmt: skip


def phase1() -> Table:
    rows = []
    for s in range(8):
        for q in range(4):
            right = str(q + 5)
            rows.append((f"s{s}", f"q{q}", right if (s + q) % 3 else str(q + 9), right))
    return Table(("student", "question", "answer", "correct_answer"), tuple(rows), "csv",
                 ids=("student", "question"), keyed=True)  # fmt: skip


def phase1_texts() -> Table:
    rows = []
    for s in range(3):
        for q in range(2):
            right = str(2 * q + 5)
            rows.append((f"s{s}", f"What is {q + 2} + {q + 3}?", str(2 * q + 6), right))
    return Table(("student", "question", "answer", "correct_answer"), tuple(rows), "csv",
                 ids=("student",), keyed=True)  # fmt: skip


def distractors() -> Table:
    rows = []
    for s in range(4):
        for q in range(2):
            rows.append((f"s{s}", f"q{q}", f"Q'{q}", str(7 + q), str(12 + q + s), "ok"))
    return Table(("student", "question", "related_question", "related_correct", "ai_distractor",
                  "status"), tuple(rows), "csv", ids=("student", "question"), keyed=True,
                 text=("related_question",))  # fmt: skip


def human() -> Table:
    rows = tuple((f"s{s}", f"q{q}", str(20 + q + s)) for s in range(4) for q in range(2))
    return Table(("student", "question", "human_distractor"), rows, "csv",
                 ids=("student", "question"), keyed=True, complete=True)  # fmt: skip


def judgements() -> Table:
    rows = []
    pairs = [("TC-0001", "TC", "M1-q01", "M1-q02", "M1-q02", 1.0, 0.0, 1.0),
             ("TC-0002", "TC", "M1-q01", "M1-q03", "M1-q01", 1.0, 1.0, 0.0),
             ("DF-0001", "DF", "M1-q02", "M1-q03", "M1-q03", 0.3, 0.4, 0.7),
             ("DF-0002", "DF", "M1-q01", "M1-q04", "M1-q01", 0.2, 0.6, 0.4)]  # fmt: skip
    for pid, dim, q1, q2, better, diff, m1, m2 in pairs:
        for order, (a, b, ma, mb) in enumerate(((q1, q2, m1, m2), (q2, q1, m2, m1)), start=1):
            verdict = "a" if (order + len(pid)) % 3 else "b"
            chosen = a if verdict == "a" else b
            rows.append(("vanilla", pid, dim, "M1", order, a, b, better, diff, ma, mb, verdict,
                         chosen, int(chosen == better), "ok", "", ""))  # fmt: skip
    cols = (
        "method",
        "pair_id",
        "dimension",
        "material",
        "order",
        "a",
        "b",
        "better",
        "diff",
        "measure_a",
        "measure_b",
        "verdict",
        "chosen",
        "correct",
        "status",
        "step",
        "error",
    )
    return Table(cols, tuple(rows), "csv", ids=("pair_id", "a"), binary=("correct",),
                 numbers={"order": (1, 2)}, keyed=True)  # fmt: skip


def replies() -> Table:
    texts = [("It is four.", "Yes, the answer is four. How did you get it?"),
             ("Is it five?", "Why five? Can you explain?"),
             ("I added them.", "What did you add first?"),
             ("I don't know.", "What do you know about the tens?")]  # fmt: skip
    rows = []
    for i, (st, real) in enumerate(texts):
        rows.append((f"d{i}", 1, "openai/scripted", f"Student: {st}",
                     json.dumps([["student", st]]), st, real, f"Good question number {i}?",
                     "ok", "", "", 0.1 * i, 1.5, 3, 0))  # fmt: skip
    cols = (
        "dialogue",
        "turn",
        "model",
        "context",
        "context_turns",
        "student",
        "real_reply",
        "ai_reply",
        "status",
        "degenerate",
        "error",
        "f1",
        "ai_perplexity",
        "context_words",
        "turns_dropped",
    )
    return Table(cols, tuple(rows), "csv", ids=("dialogue",), text=("real_reply",),
                 numbers={"turn": (0, None)}, keyed=True)  # fmt: skip


def ncte() -> Table:
    rows = ((1, 2, "It is four.", "Yes, the answer is four. How did you get it?", 2.0),
            (3, 4, "Is it five?", "Why five? Can you explain?", 1.0),
            (5, 1, "I added them.", "What did you add first?", 0.5),
            (6, 2, "Ten.", "How do you know it is ten?", 1.5))  # fmt: skip
    return Table(("obs_id", "exchange_idx", "student_text", "teacher_text", "uptake"), rows, "csv",
                 ids=("obs_id",), text=("teacher_text",), numbers={"uptake": (0, 2)},
                 keyed=True, nullable=("uptake",))  # an empty rating is a missing one  # fmt: skip


def dialogues() -> Table:
    rows = []
    for i, (st, te) in enumerate((("It is four.", "Why four?"), ("Is it five?", "Can you say?"),
                                   ("I added.", "What first?"))):  # fmt: skip
        rows.append((f"d{i}", [{"speaker": "student", "text": st},
                               {"speaker": "teacher", "text": te}], {"n": i}))  # fmt: skip
    return Table(("id", "turns", "meta"), tuple(rows), "jsonl", ids=("id",), keyed=True)


def participants() -> Table:
    return Table(("participant",), tuple((f"p{i:02d}",) for i in range(5)), "lines",
                 ids=("participant",), keyed=True)  # fmt: skip


def study_items() -> Table:
    rows = []
    for i in range(4):
        rows.append((f"item{i}", [{"speaker": "student", "text": f"Is {i} + {i} = {2 * i}?"}],
                     {a: f"{a} says {i}" for a in ("teacher", "model_a")}))  # fmt: skip
    return Table(("id", "context", "replies"), tuple(rows), "jsonl", ids=("id",), keyed=True)


def malalgo_questions(text: str) -> Table:
    rdr = list(csv.reader(io.StringIO(text)))
    cols, rows = tuple(rdr[0]), tuple(tuple(r) for r in rdr[1:])
    return Table(cols, rows, "csv", ids=("id",), text=("question",), keyed=True,
                 numbers={"grade": (1, 12), "dok": (1, 4)},
                 required=("id", "question", "answer"))  # fmt: skip


def malalgo_responses(text: str) -> Table:
    rdr = list(csv.reader(io.StringIO(text)))
    cols, rows = tuple(rdr[0]), tuple(tuple(r) for r in rdr[1:])
    # dok (and grade) are optional downstream: release-format questions leave them empty
    return Table(cols, rows, "csv", ids=("task_id", "question_id"), keyed=True,
                 numbers={"dok": (1, 4)}, required=("question_id", "kind", "choice"),
                 nullable=("dok",))  # fmt: skip
