"""Score tables: who answered which item, and how well -- the data an education researcher has.

Two layouts, read from CSV/TSV/JSON/JSONL/Parquet files or from the user's DataFrame:

* **long** -- one row per answer: ``student, item`` and ``correct`` (0/1; ``true``/``false``
  accepted) or ``score`` (a number >= 0: partial credit);
* **wide** -- one row per student: a ``student`` column and one column per item, each cell the
  student's score on that item (a number >= 0; 0/1 for right/wrong).

**A blank cell means "not administered"** (the student did not see or did not answer the item),
never "wrong": it becomes NaN, and every analysis treats it as missing.  In the long layout a row
whose score is blank stands for the same thing (the student is kept; the item is not scored for
them).

**Long or wide** (``layout="auto"``): a table is long when it has the item column (``item``, or
``item_col=``), and must then have a ``correct`` or a ``score`` column (or ``score_col=``);
otherwise it is wide, and every column but the student column (and those named in ``keep=``) is
an item.  ``layout="long"``
or ``"wide"`` says it outright.  A DataFrame indexed by ``student`` (as :func:`read_scores`
returns it) is read as wide with the index as the student column.

Validation goes through the schema layer (:class:`~edueval.tables.Schema`): student and item
ids are taken as written (no empty id, surrounding spaces, control characters ...); a score cell
that is not a number >= 0 (or not 0/1 in a ``correct`` column) is one line naming the file, the
line and the column; a second row for one student and item (long) or one student (wide) is
refused; an item that no student answered is refused.

:func:`read_scores` returns the **wide float frame** every score-table analysis takes: index =
student ids (named ``student``) in order of first appearance, columns = item ids in order of first
appearance, values the scores with NaN for "not administered".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import InputError, as_table, binary_column, line_of, numeric_column
from ..tables import Col, Schema, Table, takes_tables

__all__ = [
    "LONG_SCORES_SCHEMA",
    "LAYOUTS",
    "STUDENTS_SCHEMA",
    "ScoreTable",
    "is_dichotomous",
    "load_scores",
    "looks_like_scores",
    "read_groups",
    "read_key",
    "reading_params",
    "read_scores",
    "scores_to_long",
    "wide_scores_schema",
]

LAYOUTS = ("auto", "long", "wide")

#: The long layout: one row per student and item.  Open: other columns (a group, a date) are
#: kept for ``keep=`` and otherwise ignored; ``correct`` or ``score`` is required (checked by
#: :func:`load_scores`).  Score cells are converted by :func:`_score_cells` (a blank allowed).
LONG_SCORES_SCHEMA = Schema(
    "score table",
    (Col("student", "id"), Col("item", "id"), Col("correct", "raw", required=False),
     Col("score", "raw", required=False)),
    key=("student", "item"),
)  # fmt: skip


#: The gate of a score table (long or wide: the readers check the header, :func:`takes_tables`).
SCORES = Table("scores", ("student",), ("item", "correct", "score"), self_checked=True)


def wide_scores_schema(items: Sequence[str], keep: Sequence[str] = ()) -> Schema:
    """The wide layout's declaration for these item columns: ``student`` (an id, one row per
    student), each item a score column, ``keep`` columns carried along as written."""
    cols = (Col("student", "id"), *(Col(i, "raw") for i in items),
            *(Col(k, "raw") for k in keep))  # fmt: skip
    return Schema("wide score table", cols, key=("student",))


@dataclass
class ScoreTable:
    """A validated score table: ``scores`` (the wide float frame of :func:`read_scores`) and
    ``students`` (one row per student, index ``student``, the ``keep=`` columns)."""

    scores: pd.DataFrame
    students: pd.DataFrame
    layout: str
    source: str


def is_dichotomous(scores: pd.DataFrame) -> bool:
    """Whether every administered cell of a wide score frame is 0 or 1."""
    v = scores.to_numpy(dtype=float)
    v = v[~np.isnan(v)]
    return bool(np.isin(v, (0.0, 1.0)).all())


def _blank(col: pd.Series) -> np.ndarray:
    """Empty cells: NaN/None, or text that is only whitespace."""
    out = col.isna().to_numpy(dtype=bool).copy()
    if col.dtype == object or pd.api.types.is_string_dtype(col.dtype):
        text = col.astype("string").str.strip()
        out |= (text == "").fillna(False).to_numpy(dtype=bool)
    return out


def _score_cells(df: pd.DataFrame, column: str, *, binary: bool) -> np.ndarray:
    """A score column as float with NaN where the cell is blank; any other cell that is not a
    score (0/1 when ``binary``, else a finite number >= 0) raises naming its line."""
    blank = _blank(df[column])
    out = np.full(len(df), np.nan)
    if (~blank).any():
        part = df.loc[~blank, [column]]
        part.attrs.update(df.attrs)
        if binary:
            out[~blank] = binary_column(part, column)
        else:
            out[~blank] = numeric_column(part, column, low=0.0)
    return out


def _choice_text(value: object) -> str:
    """A chosen option as text, as a key is written: ``3`` and ``3.0`` (a column with blanks
    read as numbers) are ``"3"``."""
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    return str(value).strip()


def _keyed_cells(df: pd.DataFrame, column: str, answer: str) -> np.ndarray:
    """A column of chosen options scored against its key: 1 where the choice is the key, 0 for
    any other choice (an omit code such as mirt's 8 included), NaN where the cell is blank."""
    col = df[column]
    blank = _blank(col)
    if pd.api.types.is_numeric_dtype(col.dtype):  # compared as numbers: 3 and 3.0 are "3"
        try:
            hit = col.to_numpy(dtype=float) == float(answer)
        except ValueError:  # a key that is no number matches no number
            hit = np.zeros(len(col), dtype=bool)
    else:
        hit = (col.astype("string").str.strip() == answer).fillna(False).to_numpy(dtype=bool)
    return np.where(blank, np.nan, hit.astype(float))


#: An answer key: one row per item, its correct option.
KEY_SCHEMA = Schema("answer key", (Col("item", "id"), Col("key", "raw")), key=("item",))


def read_key(source: str | Path | pd.DataFrame | Mapping[str, object]) -> dict[str, str]:
    """An answer key (``item, key`` rows, a path or a DataFrame, or a mapping item -> key) as
    ``{item: key}`` text."""
    if isinstance(source, Mapping):
        return {str(k): _choice_text(v) for k, v in source.items()}
    df = as_table(source, name="key", text_columns=["item", "key"])
    checked = KEY_SCHEMA.validate(df)
    blank = _blank(df["key"])
    if blank.any():
        pos = int(np.flatnonzero(blank)[0])
        raise InputError("an item without its key", file=df.attrs.get("file"),
                         line=line_of(df, pos), column="key")  # fmt: skip
    return dict(zip(checked["item"].astype(str), map(_choice_text, df["key"]), strict=True))


def _item_grid(df: pd.DataFrame, items: list[str], key: Mapping[str, str] | None) -> np.ndarray:
    """The item columns as scores: as written, or (with ``key``) chosen options scored against it."""
    if key is None:
        return np.column_stack([_score_cells(df, i, binary=False) for i in items])
    file = df.attrs.get("file")
    unkeyed = [i for i in items if i not in key]
    if unkeyed:
        raise InputError(f"item {unkeyed[0]!r} has no key"
                         + (f" ({len(unkeyed)} items in all)" if len(unkeyed) > 1 else "")
                         + "; the key needs a row for every item column", file=file)  # fmt: skip
    extra = [k for k in key if k not in items]
    if extra:
        raise InputError(f"the key names item {extra[0]!r}, which the table does not have",
                         file=file)  # fmt: skip
    return np.column_stack([_keyed_cells(df, i, key[i]) for i in items])


def reading_params(freq: str | None, key: object, row_ids: bool) -> dict[str, object]:
    """How a score table was read, for a run's ``config.json`` (only what differs from a plain
    table): the count column, that a key scored it, that its rows are the students."""
    return {**({"freq": freq} if freq else {}), **({"key": True} if key is not None else {}),
            **({"row_ids": True} if row_ids else {})}  # fmt: skip


def looks_like_scores(columns: Sequence[str]) -> bool:
    """Whether a table with these columns is a score table rather than a QG-SMS question file
    (which has ``q_id`` or ``stud_perf``): the rule ``items analyze`` uses with no items file."""
    return not ({"q_id", "stud_perf"} & set(map(str, columns)))


def _layout(df: pd.DataFrame, layout: str, item_col: str) -> str:
    if layout not in LAYOUTS:
        raise ValueError(f"layout= must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    if layout != "auto":
        return layout
    return "long" if item_col in [str(c) for c in df.columns] else "wide"


def _read_long(
    df: pd.DataFrame, student_col: str, item_col: str, score_col: str | None, keep: Sequence[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    file = df.attrs.get("file")
    names = {"student": student_col, "item": item_col}
    schema = LONG_SCORES_SCHEMA
    if score_col is not None and score_col not in ("correct", "score"):
        names["score"] = score_col
    schema = schema.renamed(**names)
    schema.check_header(df)
    present = [c for c in ("correct", "score") if schema.file_name(c) in df.columns]
    if not present:
        raise InputError(
            "expected a 'correct' (0/1) or a 'score' column; the file has: "
            + ", ".join(map(str, df.columns)),
            file=file,
        )
    if len(present) == 2:
        raise InputError("give 'correct' or 'score', not both", file=file)
    for k in keep:
        if k not in df.columns:
            raise InputError(f"missing column {k!r}; the file has: "
                             + ", ".join(map(str, df.columns)), file=file)  # fmt: skip
    checked = schema.validate(df)
    source = schema.file_name(present[0])
    values = _score_cells(df, source, binary=present[0] == "correct")
    student = pd.Index(checked["student"].astype(str))
    item = pd.Index(checked["item"].astype(str))
    s_codes, s_ids = pd.factorize(student)
    i_codes, i_ids = pd.factorize(item)
    grid = np.full((len(s_ids), len(i_ids)), np.nan)
    grid[s_codes, i_codes] = values
    scores = pd.DataFrame(grid, index=pd.Index(s_ids, name="student"), columns=pd.Index(i_ids))
    students = _long_keep(df, checked, keep, s_codes, s_ids)
    return scores, students


def _long_keep(
    df: pd.DataFrame, checked: pd.DataFrame, keep: Sequence[str], codes: np.ndarray, ids
) -> pd.DataFrame:
    """Per-student columns of a long table: each must hold one value per student."""
    out = pd.DataFrame(index=pd.Index(ids, name="student"))
    for k in keep:
        values = df[k].to_numpy(dtype=object)
        first = pd.Series(values).groupby(codes, sort=True).first()
        differs = ~pd.Series(values).eq(first.reindex(codes).to_numpy()).to_numpy()
        differs &= ~pd.isna(values)
        if differs.any():
            pos = int(np.flatnonzero(differs)[0])
            raise InputError(
                f"student {ids[codes[pos]]!r} has two values of {k!r} ({first.iloc[codes[pos]]!r}"
                f" and {values[pos]!r}); it must be one per student",
                file=df.attrs.get("file"),
                line=line_of(df, pos),
                column=k,
            )
        out[k] = first.reindex(range(len(ids))).to_numpy()
    return out


def _read_wide(
    df: pd.DataFrame,
    student_col: str | None,
    keep: Sequence[str],
    freq_col: str | None = None,
    key: Mapping[str, str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    file = df.attrs.get("file")
    cols = [str(c) for c in df.columns]
    if freq_col is not None:
        return _read_patterns(df, student_col, keep, freq_col, key)
    if student_col is None:
        return _read_rows(df, keep, key)
    if student_col not in cols:
        raise InputError(
            f"missing column {student_col!r} (the student id of a wide score table: one column "
            f"per item plus the student column); the file has: {', '.join(cols)}"
            + ("; a table of response patterns with a count column is read with freq="
               if {"freq", "Freq", "frequency", "count", "n"} & set(cols) else ""),
            file=file,
        )  # fmt: skip
    items = [c for c in cols if c != student_col and c not in keep]
    if not items:
        raise InputError("a wide score table needs at least one item column", file=file)
    schema = wide_scores_schema(items, keep).renamed(student=student_col)
    checked = schema.validate(df)
    grid = _item_grid(df, items, key)
    index = pd.Index(checked["student"].astype(str), name="student")
    scores = pd.DataFrame(grid, index=index, columns=pd.Index(items))
    students = pd.DataFrame({k: df[k].to_numpy(dtype=object) for k in keep}, index=index)
    return scores, students


def _read_rows(
    df: pd.DataFrame, keep: Sequence[str], key: Mapping[str, str] | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A wide table with no student column (``student_col=None``: a plain matrix, as R's mirt
    ships SAT12): each row is one student, named by its row number from 1."""
    items = [str(c) for c in df.columns if str(c) not in keep]
    if not items:
        raise InputError("a wide score table needs at least one item column",
                         file=df.attrs.get("file"))  # fmt: skip
    Schema("wide score table", (*(Col(i, "raw") for i in items),
                                *(Col(k, "raw") for k in keep))).validate(df)  # fmt: skip
    index = pd.Index([str(i) for i in range(1, len(df) + 1)], name="student")
    scores = pd.DataFrame(_item_grid(df, items, key), index=index, columns=pd.Index(items))
    students = pd.DataFrame({k: df[k].to_numpy(dtype=object) for k in keep}, index=index)
    return scores, students


def _read_patterns(
    df: pd.DataFrame,
    student_col: str | None,
    keep: Sequence[str],
    freq_col: str,
    key: Mapping[str, str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A wide table of response patterns, each row standing for ``freq_col`` students (as R's
    mirt and ltm ship LSAT6 and LSAT7; mirt's ``expand.table``): one student per count, named
    ``<pattern row>.<k>`` (``<student>.<k>`` when the table has a student column)."""
    file = df.attrs.get("file")
    cols = [str(c) for c in df.columns]
    if freq_col not in cols:
        raise InputError(f"missing column {freq_col!r} (the count of students with each "
                         f"pattern); the file has: {', '.join(cols)}", file=file)  # fmt: skip
    named = student_col is not None and student_col in cols
    items = [c for c in cols if c not in (student_col, freq_col) and c not in keep]
    if not items:
        raise InputError("a wide score table needs at least one item column", file=file)
    head = (Col("student", "id"),) if named else ()
    schema = Schema("table of response patterns", (*head, Col(freq_col, "raw"),
                    *(Col(i, "raw") for i in items), *(Col(k, "raw") for k in keep)),
                    key=("student",) if named else ())  # fmt: skip
    checked = (
        schema.renamed(student=str(student_col)).validate(df) if named else schema.validate(df)
    )
    counts = numeric_column(df, freq_col, low=0.0, integer=True)
    if counts.sum() == 0:
        raise InputError(f"every count in {freq_col!r} is 0: no students", file=file)
    grid = _item_grid(df, items, key)
    rows = np.repeat(np.arange(len(df)), counts)
    k = np.concatenate([np.arange(1, c + 1) for c in counts if c])
    base = checked["student"].astype(str).to_numpy() if named else np.arange(1, len(df) + 1)
    index = pd.Index([f"{b}.{j}" for b, j in zip(base[rows], k, strict=True)], name="student")
    scores = pd.DataFrame(grid[rows], index=index, columns=pd.Index(items))
    students = pd.DataFrame({c: df[c].to_numpy(dtype=object)[rows] for c in keep}, index=index)
    return scores, students


@takes_tables(source=SCORES)
def load_scores(
    source: str | Path | pd.DataFrame,
    *,
    student_col: str | None = "student",
    item_col: str = "item",
    score_col: str | None = None,
    layout: str = "auto",
    keep: Sequence[str] = (),
    freq_col: str | None = None,
    key: str | Path | pd.DataFrame | Mapping[str, object] | None = None,
) -> ScoreTable:
    """A validated :class:`ScoreTable` (see the module docstring); ``keep`` names per-student
    columns carried into ``students`` (a group for DIF) instead of being read as items;
    ``freq_col`` reads a wide table of response patterns, each row counted that many times;
    ``key`` (:func:`read_key`) scores a wide table of chosen options: 1 for the key, 0 for any
    other choice, blank = not administered (mirt's ``key2binary``); ``student_col=None`` reads
    a wide table with no student column, each row a student numbered from 1."""
    keys = read_key(key) if key is not None else None
    if isinstance(source, pd.DataFrame) and source.index.name == student_col \
            and student_col not in source.columns:  # fmt: skip
        source = source.reset_index()
    text = [c for c in (student_col, item_col) if c is not None]
    df = as_table(source, name="scores", text_columns=text)
    file = str(df.attrs.get("file"))
    kind = _layout(df, layout, item_col)
    if kind == "long" and student_col is None:
        raise InputError("student_col=None (rows are students) reads a wide table; this table "
                         "is long (it has an item column)", file=file)  # fmt: skip
    if kind == "long" and (freq_col is not None or keys is not None):
        what = f"freq= ({freq_col!r}) counts" if freq_col is not None else "key= scores"
        raise InputError(f"{what} the rows of a wide table; this table is long (it has an "
                         "item column)", file=file)  # fmt: skip
    if kind == "long":
        assert student_col is not None
        scores, students = _read_long(df, student_col, item_col, score_col, keep)
    else:
        scores, students = _read_wide(df, student_col, keep, freq_col, keys)
    empty = scores.isna().all(axis=0).to_numpy()
    if empty.any():
        first = scores.columns[int(np.flatnonzero(empty)[0])]
        raise InputError(
            f"item {first!r} has no scores (every cell blank)"
            + (f"; {int(empty.sum())} items in all" if empty.sum() > 1 else "")
            + "; every item needs at least one answer",
            file=file,
        )
    return ScoreTable(scores, students, kind, file)


@takes_tables(source=SCORES)
def read_scores(
    source: str | Path | pd.DataFrame,
    *,
    student_col: str | None = "student",
    item_col: str = "item",
    score_col: str | None = None,
    layout: str = "auto",
    keep: Sequence[str] = (),
    freq_col: str | None = None,
    key: str | Path | pd.DataFrame | Mapping[str, object] | None = None,
) -> pd.DataFrame:
    """A score table (a path or a DataFrame; long or wide, see the module docstring) as a wide
    float frame: index = student ids (``student``), columns = item ids (first-appearance order),
    values the scores, NaN where the item was not administered.  Raises
    :class:`~edueval.io.InputError` (a ``ValueError``) naming the file, line and column of a bad
    cell."""
    return load_scores(source, student_col=student_col, item_col=item_col,
                       score_col=score_col, layout=layout, keep=keep,
                       freq_col=freq_col, key=key).scores  # fmt: skip


def scores_to_long(scores: pd.DataFrame) -> pd.DataFrame:
    """The administered cells of a wide score frame as ``student, item, score`` rows (students in
    order, then items in order)."""
    v = scores.to_numpy(dtype=float)
    s, i = np.nonzero(~np.isnan(v))
    return pd.DataFrame({"student": scores.index.to_numpy(dtype=object)[s],
                         "item": scores.columns.to_numpy(dtype=object)[i], "score": v[s, i]})  # fmt: skip


#: A students file: one row per student with per-student columns (a group for DIF).  Open.
STUDENTS_SCHEMA = Schema("students file", (Col("student", "id"),), key=("student",))


def read_groups(
    source: str | Path | pd.DataFrame,
    column: str,
    students: pd.Index,
    *,
    student_col: str = "student",
) -> pd.Series:
    """The ``column`` of a students file (``student`` plus that column; a path or a DataFrame),
    as text aligned to ``students`` (the score table's index).  A student of the score table
    without a row is refused; a blank cell stays blank (that student is in no group)."""
    df = as_table(source, name="students", text_columns=[student_col, column])
    file = df.attrs.get("file")
    schema = Schema(STUDENTS_SCHEMA.what, (*STUDENTS_SCHEMA.columns, Col(column, "raw")),
                    key=STUDENTS_SCHEMA.key).renamed(student=student_col)  # fmt: skip
    checked = schema.validate(df)
    by_id = pd.Series(
        checked[column].to_numpy(dtype=object), index=pd.Index(checked["student"].astype(str))
    )
    absent = ~students.isin(by_id.index)
    if absent.any():
        raise InputError(
            f"student {students[int(np.flatnonzero(absent)[0])]!r} of the score table has no "
            f"row in the students file" + (f" ({int(absent.sum())} students in all)"
                                            if absent.sum() > 1 else ""),
            file=file,
        )  # fmt: skip
    return by_id.reindex(students)
