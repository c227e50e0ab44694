"""Every input table declared once: its columns (type, range, required or not), its key and its
header rules, checked by one function that every reader calls.

A :class:`Schema` lists the columns a table may have.  :meth:`Schema.validate` takes a frame from
:func:`edueval.io.read_table` (whose index holds line numbers, so errors name the line) and

* refuses a header that names a column twice (``read_table`` already refuses it in the file);
* refuses a column the table does not know when the schema is *closed* (a parameter file, a
  ``--fixed`` table), with the nearest known name ("did you mean 'forget'?"); an *open* table (a
  response log exported with dozens of columns) keeps unknown columns, but refuses one that is a
  near miss of a column it lacks (``ordr`` beside no ``order``), which would otherwise be dropped
  silently;
* refuses a missing required column, naming the near miss when there is one;
* converts each present column by its kind -- ``id`` (checked on the raw value: no empty cell,
  surrounding spaces, control characters, NUL, JSON list/object/bool), ``text``, ``binary``
  (0/1), ``number``/``integer`` with a range, ``order`` (compared exactly as int64) -- and
* refuses a second row with the same key.

:func:`takes_tables` is the same gate for the Python API: every public function or estimator
method that takes a table declares it (:class:`Table`), and the table -- a DataFrame, records,
a dict of columns, a structured array or a path -- is converted and its header checked before
the function runs; anything else is refused in one line (issue 39, 2).

:func:`check_complete` is the completeness rule (a value for every skill x parameter).  The
"Data" section of the docs' P1 page (docs/protocols/p1-kt.md) states these rules once;
``tests/contract/test_mutation_corpus.py`` holds every reader to them.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from .io import (
    InputError,
    as_frame,
    binary_column,
    check_unique,
    line_of,
    numeric_column,
    order_column,
    text_column,
)

__all__ = [
    "Col",
    "Schema",
    "Table",
    "takes_tables",
    "check_complete",
    "check_complete_groups",
    "near_miss",
    "refuse_unknown",
]

KINDS = ("id", "text", "binary", "number", "integer", "order", "raw")


@dataclass(frozen=True)
class Col:
    """One column: ``kind`` is one of :data:`KINDS`; ``low``/``high`` bound numbers; an optional
    column absent from the file is filled with ``default`` unless that is None.  ``empty_ok``:
    an empty cell is a missing value (NaN, or None for text) rather than refused -- for the
    optional columns that a file edueval wrote carries empty when its input lacked them (a
    ``responses.csv`` of questions without ``grade``), so an optional column stays optional
    downstream."""

    name: str
    kind: str = "raw"
    required: bool = True
    low: float | None = None
    high: float | None = None
    default: object = None
    empty_ok: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown column kind {self.kind!r}")


def _key(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def near_miss(name: str, candidates: Iterable[str], cutoff: float = 0.75) -> str | None:
    """The candidate ``name`` is most likely a misspelling of (case, '_' and '-' ignored)."""
    candidates = [c for c in candidates if c != name]
    keyed = {_key(c): c for c in candidates}
    if _key(name) in keyed:
        return keyed[_key(name)]
    hit = difflib.get_close_matches(_key(name), list(keyed), n=1, cutoff=cutoff)
    return keyed[hit[0]] if hit else None


def refuse_unknown(
    given: Iterable[str], known: Sequence[str], *, what: str, file: str | None = None
) -> None:
    """Refuse the first name in ``given`` that is not in ``known`` (a column, a key of
    ``--fixed``), suggesting the nearest known name."""
    for name in given:
        if name not in known:
            hint = near_miss(str(name), known)
            raise InputError(
                f"unknown {what} {str(name)!r}"
                + (f" (did you mean {hint!r}?)" if hint else "")
                + f"; expected {', '.join(map(repr, known))}",
                file=file,
            )


@dataclass(frozen=True)
class Schema:
    """A table's declaration.  ``what`` names it in messages ("parameter file"); ``key`` are the
    columns that identify a row (unique); ``closed`` refuses unknown columns; ``ignored`` are
    columns accepted and dropped (e.g. a ``source`` note)."""

    what: str
    columns: tuple[Col, ...]
    key: tuple[str, ...] = ()
    closed: bool = False
    ignored: tuple[str, ...] = ()
    names: Mapping[str, str] = field(default_factory=dict)

    @property
    def known(self) -> list[str]:
        return [c.name for c in self.columns] + list(self.ignored)

    def renamed(self, **names: str) -> Schema:
        """The same schema reading logical column ``x`` from the file's column ``names[x]``
        (``--col-student user_id``)."""
        given = {k: v for k, v in names.items() if v and v != k}
        unknown = [k for k in given if k not in self.known]
        if unknown:
            raise ValueError(f"no column {unknown[0]!r} in the {self.what} schema")
        return Schema(self.what, self.columns, self.key, self.closed, self.ignored,
                      {**self.names, **given})  # fmt: skip

    def file_name(self, name: str) -> str:
        return self.names.get(name, name)

    def check_header(self, df: pd.DataFrame) -> None:
        """Duplicate, unknown and missing columns (see the module docstring)."""
        file = df.attrs.get("file")
        cols = [str(c) for c in df.columns]
        seen: set[str] = set()
        for c in cols:
            if c in seen:
                raise InputError(f"the header names column {c!r} twice", file=file)
            seen.add(c)
        expected = [self.file_name(c.name) for c in self.columns] + list(self.ignored)
        absent = [e for e in expected if e not in seen]
        for c in cols:
            if c in expected:
                continue
            hint = near_miss(c, absent)
            if self.closed or hint is not None:
                raise InputError(
                    f"unknown column {c!r}"
                    + (f" (did you mean {hint!r}?)" if hint else "")
                    + f"; the {self.what} takes the columns {', '.join(map(repr, expected))}",
                    file=file,
                )
        missing = [self.file_name(c.name) for c in self.columns if c.required]
        missing = [m for m in missing if m not in seen]
        if missing:
            hint = near_miss(missing[0], cols)
            raise InputError(
                f"missing column{'s' if len(missing) > 1 else ''} "
                f"{', '.join(map(repr, missing))} ({self.what})"
                + (f"; did you mean {hint!r}?" if hint else "")
                + f"; the file has: {', '.join(cols)}",
                file=file,
            )

    def validate(self, df: pd.DataFrame) -> pd.DataFrame:
        """The table with its logical column names, each converted by its kind, in the schema's
        order; its index (line numbers) and ``attrs`` kept.  Raises :class:`InputError`."""
        self.check_header(df)
        out = pd.DataFrame(index=df.index)
        out.attrs.update(df.attrs)
        for col in self.columns:
            source = self.file_name(col.name)
            if source in df.columns:
                out[col.name] = convert(df, source, col)
            elif col.default is not None:
                out[col.name] = col.default
        if self.key:
            check_unique(out, list(self.key), what=f"{' and '.join(self.key)} in the {self.what}")
        return out


def convert(df: pd.DataFrame, column: str, col: Col) -> object:
    """One column of ``df`` as ``col.kind`` asks (errors name the file's column)."""
    if col.empty_ok:
        return _convert_with_empty(df, column, col)
    if col.kind == "id":
        return text_column(df, column, identifier=True)
    if col.kind == "text":
        return text_column(df, column)
    if col.kind == "binary":
        return binary_column(df, column)
    if col.kind in ("number", "integer"):
        return numeric_column(df, column, low=col.low, high=col.high,
                              integer=col.kind == "integer")  # fmt: skip
    if col.kind == "order":
        return order_column(df, column)
    return df[column].to_numpy()


def _convert_with_empty(df: pd.DataFrame, column: str, col: Col) -> np.ndarray:
    """``convert`` for an ``empty_ok`` column: empty cells missing, the others checked."""
    values = df[column]
    blank = (values.isna() | (values.astype("string").str.strip() == "")).fillna(True)
    blank = blank.to_numpy(dtype=bool)
    numeric = col.kind in ("number", "integer", "order", "binary")
    out = np.full(len(df), np.nan if numeric else None, dtype=float if numeric else object)
    if (~blank).any():
        present = df.iloc[np.flatnonzero(~blank)]
        present.attrs.update(df.attrs)
        out[~blank] = convert(present, column, Col(col.name, col.kind, low=col.low, high=col.high))
    return out


def check_complete(
    df: pd.DataFrame, by: str, within: str, expected: Sequence[str], *, what: str
) -> None:
    """Refuse a table in which some ``by`` value (a skill) lacks a row for one of ``expected``
    ``within`` values (its parameters): "no 'slip' for skill 'skill0'"."""
    have = df.groupby(df[by].astype(str), sort=False)[within].agg(lambda s: set(map(str, s)))
    for name, values in have.items():
        lacking = [e for e in expected if e not in values]
        if lacking:
            rows = np.flatnonzero(df[by].astype(str).to_numpy() == name)
            raise InputError(
                f"no {lacking[0]!r} for {by} {name!r} ({what} needs "
                f"{', '.join(map(repr, expected))} for every {by})",
                file=df.attrs.get("file"),
                line=line_of(df, int(rows[0])) if len(rows) else None,
            )


def check_complete_groups(
    df: pd.DataFrame,
    together: Sequence[tuple[str, str]],
    *,
    by: str = "skill",
    within: str = "parameter",
    group: str = "group",
    what: str,
) -> None:
    """Completeness per group (issue 39, 3): parameters that are looked up together for a group
    (guess and slip for an item; learn and forget for a transition group) must each have that
    group's row -- a per-item file that lacks one item's ``guess`` would otherwise predict that
    item with a default.  A ``*`` row covers every group; a parameter with no row at all for the
    ``by`` value is :func:`check_complete`'s to judge (``forget`` may be absent)."""
    index: dict[tuple[str, str], set[str]] = {}
    first_line: dict[tuple[str, str], int] = {}
    for pos, (b, w, g) in enumerate(zip(df[by].astype(str), df[within].astype(str),
                                        df[group].astype(str), strict=True)):  # fmt: skip
        index.setdefault((b, w), set()).add(g)
        first_line.setdefault((b, g), pos)
    for (b, w), groups in index.items():
        for pair in together:
            if w not in pair:
                continue
            other = pair[1] if w == pair[0] else pair[0]
            have = index.get((b, other))
            if have is None or "*" in have:
                continue
            lacking = sorted(groups - have - {"*"})
            if lacking:
                pos = first_line[(b, lacking[0])]
                raise InputError(
                    f"no {other!r} for {by} {b!r} in group {lacking[0]!r}, which has {w!r} "
                    f"({what} needs both for every group it gives either)",
                    file=df.attrs.get("file"),
                    line=line_of(df, pos),
                )


# -- the gate of the Python API ------------------------------------------------------------------

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Table:
    """How a function's table parameter is checked at the door (:func:`takes_tables`).

    ``name`` names the table in messages ("responses"); ``required`` are the columns it must
    have and ``optional`` those it may have (a column that is a near miss of one of either that
    is absent -- ``ordr`` beside no ``order`` -- is refused, as :meth:`Schema.check_header`
    refuses it in a file); ``paths``: a file path is accepted (the function reads it through
    its schema).  ``self_checked``: the function checks the header itself, through its own
    :class:`Schema` (a reader, or a table whose column names ``columns=`` chooses); the gate
    then only converts the table, and ``required`` and ``optional`` are the default names."""

    name: str
    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    paths: bool = True
    self_checked: bool = False
    #: objects taken as they are besides tables (e.g. an ``ItemData``)
    also: tuple[type, ...] = ()
    #: a 2-D numpy array is a matrix whose columns are the table's columns by position (a
    #: students x items score matrix)
    matrix: bool = False
    #: further required columns named by the call's arguments (``groups=``, ``estimate=``)
    depends: Callable[[Mapping[str, Any]], Iterable[str]] | None = None
    #: checks the header itself, given the frame and the call's arguments (for tables whose
    #: column names a ``columns=`` argument chooses)
    header: Callable[[pd.DataFrame, Mapping[str, Any]], None] | None = None

    @classmethod
    def of(cls, schema: Schema, name: str | None = None, **kw: Any) -> Table:
        """The gate of a table a :class:`Schema` declares (its body validates the values)."""
        return cls(name or schema.what, tuple(c.name for c in schema.columns if c.required),
                   tuple(c.name for c in schema.columns if not c.required), **kw)  # fmt: skip

    def check(self, value: Any, param: str, args: Mapping[str, Any] | None = None) -> Any:
        """``value`` as the function may take it: a path (when ``paths``) unchanged, any other
        table as a DataFrame with its header checked; an :class:`~edueval.io.InputError` naming
        the table and the column otherwise."""
        if isinstance(value, (str, os.PathLike)):
            if self.paths:
                return value
            raise InputError(f"{param}= takes a table in memory (a DataFrame or records), not "
                             f"a path", file=f"{self.name} table")  # fmt: skip
        if isinstance(value, self.also) or (
            self.matrix and isinstance(value, np.ndarray) and value.ndim == 2
            and not value.dtype.names
        ):  # fmt: skip
            return value
        frame = as_frame(value, name=self.name)
        if self.header is not None:
            self.header(labelled(frame, self.name), args or {})
        elif not self.self_checked and (self.required or self.optional or self.depends):
            more = [str(c) for c in (self.depends(args or {}) if self.depends else ())]
            required = list(dict.fromkeys([*self.required, *more]))
            columns = tuple(Col(c) for c in required) + tuple(
                Col(c, required=False) for c in self.optional if c not in required
            )
            Schema(self.name, columns).check_header(labelled(frame, self.name))
        return frame


def labelled(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    """``frame`` (a shallow copy) naming itself in messages: its file, or ``<name> DataFrame``."""
    if frame.attrs.get("file"):
        return frame
    shown = frame.copy(deep=False)
    shown.attrs = {**frame.attrs, "file": f"{name} DataFrame"}
    return shown


def takes_tables(**tables: Table) -> Callable[[F], F]:
    """Decorator: every table a public function or method takes enters through one door.

    Each named parameter (a DataFrame, records, a dict of columns, a structured array, or a
    path where the function reads files) is turned into a DataFrame by
    :func:`~edueval.io.as_frame` and its header checked by :meth:`Schema.check_header`
    (missing and near-miss columns) before the function runs (an estimator's methods other than
    ``fit`` first check that it is fitted); anything else is refused with an
    :class:`~edueval.io.InputError` (a ``ValueError``) naming the table.  The declarations are
    kept on the function as ``__edueval_tables__`` (the public-API walk in
    tests/test_api_tables.py feeds every declared table a near miss, a missing column and a
    wrong kind)."""

    def wrap(fn: F) -> F:
        sig = inspect.signature(fn)
        defaults = {k: p.default for k, p in sig.parameters.items()
                    if p.default is not inspect.Parameter.empty}  # fmt: skip

        @functools.wraps(fn)
        def gate(*args: Any, **kwargs: Any) -> Any:
            bound = sig.bind_partial(*args, **kwargs)
            given = {**defaults, **bound.arguments}
            owner: Any = given.get("self")
            if fn.__name__ not in ("fit", "__init__") and hasattr(owner, "_check_fitted"):
                owner._check_fitted()  # scikit-learn's order: not fitted, before the data
            for param, spec in tables.items():
                if param in bound.arguments and bound.arguments[param] is not None:
                    bound.arguments[param] = spec.check(bound.arguments[param], param, given)
            return fn(*bound.args, **bound.kwargs)

        gate.__edueval_tables__ = dict(tables)  # type: ignore[attr-defined]
        return gate  # type: ignore[return-value]

    return wrap
