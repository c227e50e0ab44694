"""Response data for knowledge tracing: reading, validating and packing into sequences.

A response table has one row per response with columns ``student, skill, correct`` (0/1), and
optionally ``order`` (position within the student's practice of the skill; without it the file
order is used) and ``known`` (0/1, the true knowledge state, present in simulated data).  pyBKT's
column names (``user_id, skill_name, correct, order_id``) are recognised as they are.

Rows need not be sorted or grouped: each student x skill sequence is put in order by ``order``
(or by file position), keeping ties out -- two rows of one sequence with the same ``order`` are an
error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..io import (
    IDENTIFIER_EXPECTED,
    InputError,
    JSONText,
    as_table,
    binary_column,
    identifier_problem,
    line_of,
    order_column,
    require_columns,
    unclean_identifiers,
)
from ..tables import Col, Schema, Table, labelled, takes_tables
from . import _common_kernels as K

__all__ = [
    "Columns",
    "RowFilter",
    "Sequences",
    "TimeMajor",
    "pack",
    "read_responses",
    "time_major",
]

_PYBKT_NAMES = {"student": "user_id", "skill": "skill_name", "order": "order_id"}

#: A response file: an open table (logs exported by tutors carry dozens of other columns, kept
#: and ignored), read under the names ``--col-*`` give (:meth:`Columns.schema`).  Its header is
#: checked by :meth:`Schema.check_header` (a column named twice, a required column missing, an
#: unknown column that is a near miss of an absent one: ``ordr`` beside no ``order``); its
#: columns are converted by :func:`pack` as the kinds say -- ids on the values as read
#: (:func:`_identifiers`, the ``id`` kind's rules on each distinct value once), ``correct`` and
#: ``known`` by :func:`binary_column`, ``order`` by :func:`order_column` -- and two rows of one
#: student x skill with the same order are refused there.  ``p_correct`` and ``p_known`` (what
#: ``kt predict`` writes, what ``kt evaluate`` reads) are known names, never near misses.
RESPONSE_SCHEMA = Schema(
    "response file",
    (
        Col("student", "id"),
        Col("skill", "id"),
        Col("correct", "binary"),
        Col("order", "order", required=False),
        Col("known", "binary", required=False),
    ),
    ignored=("p_correct", "p_known"),
)


@dataclass(frozen=True)
class Columns:
    """Names of the columns in the user's file (pyBKT's names are tried when these are absent)."""

    student: str = "student"
    skill: str = "skill"
    correct: str = "correct"
    order: str = "order"
    known: str = "known"

    def resolve(self, df: pd.DataFrame) -> Columns:
        """Fall back to pyBKT's default names for columns left at their defaults and missing."""
        defaults = Columns()
        changes = {}
        for attr, alt in _PYBKT_NAMES.items():
            name = getattr(self, attr)
            if name == getattr(defaults, attr) and name not in df.columns and alt in df.columns:
                changes[attr] = alt
        return replace(self, **changes) if changes else self

    def schema(self) -> Schema:
        """:data:`RESPONSE_SCHEMA` read under these column names."""
        return RESPONSE_SCHEMA.renamed(student=self.student, skill=self.skill,
                                       correct=self.correct, order=self.order,
                                       known=self.known)  # fmt: skip


def _response_header(df: pd.DataFrame, args: Mapping[str, Any]) -> None:
    """The header of a response table under the call's column names (``columns=``, or the
    estimator's ``columns``): missing and near-miss columns refused, as in a file."""
    columns = args.get("columns") or getattr(args.get("self"), "columns", None)
    cols = (columns if isinstance(columns, Columns) else Columns()).resolve(df)
    cols.schema().check_header(labelled(df, "responses"))


#: The gate of every function and method that takes a response table (:func:`takes_tables`).
RESPONSES = Table("responses", ("student", "skill", "correct"), ("order", "known"),
                  header=_response_header)  # fmt: skip


@dataclass
class Sequences:
    """Responses packed by skill, then student, then order.

    ``obs[starts[s]:starts[s+1]]`` is sequence ``s``; sequences of skill ``k`` are
    ``skill_starts[k]:skill_starts[k+1]``.  ``row[i]`` is the position, in the original table, of
    the i-th packed response, so results can be put back in the user's row order.
    """

    skills: np.ndarray  # skill names, sorted
    students: np.ndarray  # student name of each sequence
    obs: np.ndarray  # int8
    starts: np.ndarray  # int64, n_seq + 1
    skill_starts: np.ndarray  # int64, n_skills + 1
    seq_skill: np.ndarray  # int64, skill index of each sequence
    row: np.ndarray  # int64, original row position of each packed response
    known: np.ndarray | None = None
    opportunity: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))

    @property
    def n_responses(self) -> int:
        return int(self.obs.shape[0])

    @property
    def known_states(self) -> np.ndarray:
        """``known``, which sequences packed with ``require_known=True`` always have."""
        if self.known is None:
            raise ValueError("the responses were packed without their 'known' column")
        return self.known

    @property
    def n_sequences(self) -> int:
        return int(self.starts.shape[0] - 1)

    def skill_slice(self, k: int) -> slice:
        """Positions in ``obs`` of skill ``k``'s responses."""
        return slice(
            int(self.starts[self.skill_starts[k]]), int(self.starts[self.skill_starts[k + 1]])
        )

    def unpack(self, values: np.ndarray) -> np.ndarray:
        """Put per-response ``values`` (packed order) back into the original row order."""
        out = np.empty_like(values)
        out[self.row] = values
        return out


def _identifiers(df: pd.DataFrame, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Codes (numbered in order of first appearance) and names (as text) of an identifier column.

    Refuses missing and blank cells, naming the first one.
    """
    col = df[name]
    values = col.array
    if col.dtype == object or (
        isinstance(col.dtype, pd.StringDtype) and col.dtype.storage == "python"
    ):
        # pandas factorises a plain object array of str with its byte-string hash table, several
        # times faster than through the string extension array
        values = col.to_numpy(dtype=object)
    codes, uniques = pd.factorize(values, sort=False)
    text = np.asarray(uniques, dtype=object).astype(str)
    bad = codes < 0  # factorize marks missing values with -1
    blank = np.flatnonzero(np.char.strip(text) == "")
    if len(blank):
        bad |= np.isin(codes, blank)
    if bad.any():
        raise InputError(
            "expected a value, got an empty cell",
            file=df.attrs.get("file"),
            line=line_of(df, int(np.flatnonzero(bad)[0])),
            column=name,
        )
    # on the distinct values as read (numpy's astype(str) above drops a trailing NUL): cheap
    unclean = np.flatnonzero(unclean_identifiers(uniques))
    if len(unclean):
        pos = int(np.flatnonzero(np.isin(codes, unclean))[0])
        value = uniques[codes[pos]]
        problem = None if isinstance(value, JSONText) else identifier_problem(value)
        expected = IDENTIFIER_EXPECTED.get(problem or "", "an identifier (text or a number)")
        raise InputError(
            f"expected {expected}, got {_shown(value)} (it would count as another {name})",
            file=df.attrs.get("file"),
            line=line_of(df, pos),
            column=name,
        )
    return codes.astype(np.int64, copy=False), text


def _sorted_codes(codes: np.ndarray, names: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Renumber codes so that names are in sorted order."""
    rank = np.argsort(names.astype(str), kind="stable")
    return np.argsort(rank)[codes], names[rank]


def _shown(value: object) -> str:
    """An identifier as the user wrote it (JSON lists/objects as their JSON text)."""
    if isinstance(value, JSONText):
        return f"the JSON {value.json_kind} {value}"
    return repr(str(value))


def _number(value: np.integer | np.floating) -> str:
    """An order value as written: integers in full (a nanosecond timestamp), floats as %g."""
    return str(int(value)) if isinstance(value, np.integer) else f"{value:g}"


def _where(df: pd.DataFrame, position: int) -> str:
    """'line N' of the source file, or 'row N' (0-based position) of an in-memory table."""
    line = line_of(df, position)
    return f"line {line}" if line is not None else f"row {position}"


def _order_by(
    group: np.ndarray, n_groups: int, order: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Permutation sorting rows by ``group``, then ``order``, equal keys in file order.

    Returns ``(perm, group[perm])``.  Integer ``order`` values (the usual case) are folded with the
    group into one int64 key and radix-sorted; other values are sorted by both keys.
    """
    if order is None:
        return K.radix_argsort(group, max(n_groups - 1, 0).bit_length())
    lo, hi = order.min(), order.max()
    if order.dtype.kind == "i" or (
        max(-lo, hi) < 2.0**62 and np.array_equal(order, np.floor(order))
    ):
        # int64 orders (exact, see io.order_column) and integral floats (which convert to int64
        # exactly); the key arithmetic is then exact too
        span = int(hi) - int(lo) + 1
        if span * n_groups < 2**62:
            key = group * np.int64(span) + (order.astype(np.int64) - np.int64(lo))
            perm, key = K.radix_argsort(key, (n_groups * span - 1).bit_length())
            return perm, key // np.int64(span)
    perm = np.lexsort((order, group))
    return perm, group[perm]


@takes_tables(df=RESPONSES)
def pack(
    df: pd.DataFrame, columns: Columns | None = None, *, require_known: bool = False
) -> tuple[Sequences, Columns]:
    """Validate a response table and pack it into :class:`Sequences`."""
    cols = (columns or Columns()).resolve(df)
    require_columns(df, [cols.student, cols.skill, cols.correct])
    if len(df) == 0:
        raise InputError("no responses: the table has no rows", file=df.attrs.get("file"))
    correct = binary_column(df, cols.correct)
    known = None
    if cols.known in df.columns:
        known = binary_column(df, cols.known)
    elif require_known:
        require_columns(df, [cols.known], what="the true knowledge state, as in simulated data")

    # number skills and students in sorted name order (cheap: sorts the distinct names only), so
    # the packed layout -- and every sum over it -- does not depend on the order of the rows
    student_codes, student_names = _sorted_codes(*_identifiers(df, cols.student))
    skill_codes, skill_names = _sorted_codes(*_identifiers(df, cols.skill))
    n_students = len(student_names)
    group = skill_codes * n_students + student_codes
    order = order_column(df, cols.order) if cols.order in df.columns else None
    perm, g = _order_by(group, len(skill_names) * n_students, order)

    new_seq = np.ones(len(perm), dtype=bool)
    np.not_equal(g[1:], g[:-1], out=new_seq[1:])
    if order is not None:
        o = order[perm]
        tie = np.zeros(len(perm), dtype=bool)
        tie[1:] = (~new_seq[1:]) & (o[1:] == o[:-1])
        if tie.any():
            i = int(np.flatnonzero(tie)[0])
            raise InputError(
                f"two responses of student {str(student_names[g[i] % n_students])!r} on skill "
                f"{str(skill_names[g[i] // n_students])!r} have the same order {_number(o[i])} "
                f"(the other is {_where(df, int(perm[i - 1]))})"
                + (f"; {int(tie.sum())} such repeats in all" if tie.sum() > 1 else "")
                + "; each response needs its own order (duplicate rows?)",
                file=df.attrs.get("file"),
                line=line_of(df, int(perm[i])),
                column=cols.order,
            )
    seq_first = np.flatnonzero(new_seq)
    starts = np.append(seq_first, len(perm)).astype(np.int64)
    seq_group = g[seq_first]
    seq_skill = seq_group // n_students if n_students else seq_group
    skill_starts = np.searchsorted(seq_skill, np.arange(len(skill_names) + 1)).astype(np.int64)
    opportunity = np.arange(len(perm), dtype=np.int64) - np.repeat(seq_first, np.diff(starts)) + 1
    seqs = Sequences(
        skills=skill_names.astype(object),
        students=student_names.astype(object)[seq_group - seq_skill * n_students],
        obs=correct[perm],
        starts=starts,
        skill_starts=skill_starts,
        seq_skill=seq_skill,
        row=perm.astype(np.int64, copy=False),
        known=None if known is None else known[perm],
        opportunity=opportunity,
    )
    return seqs, cols


@dataclass(frozen=True)
class RowFilter:
    """Which rows of a response file to use.

    ``only`` keeps rows whose column equals the value (compared as text, or as numbers when the
    column is numeric), e.g. ``(("original", "1"),)`` for ASSISTments' main problems, the rows
    pyBKT keeps on its own when the column exists.  ``skip_no_skill`` leaves out rows whose skill
    cell is empty (tutor logs often have them) instead of refusing the file.
    """

    only: tuple[tuple[str, str], ...] = ()
    skip_no_skill: bool = False

    def apply(self, df: pd.DataFrame, cols: Columns) -> tuple[pd.DataFrame, dict[str, int]]:
        """The selected rows (line numbers kept) and how many rows each rule left out."""
        keep, dropped = self.mask(df, cols)
        if keep.all():
            return df, dropped
        if not keep.any():
            raise InputError(
                "no rows left after the row selection ("
                + ", ".join(f"{k}: {v} left out" for k, v in dropped.items())
                + ")",
                file=df.attrs.get("file"),
            )
        return df[keep], dropped

    def mask(self, df: pd.DataFrame, cols: Columns) -> tuple[np.ndarray, dict[str, int]]:
        """Which rows the selection keeps, and how many rows each rule left out."""
        dropped: dict[str, int] = {}
        keep = np.ones(len(df), dtype=bool)
        for column, value in self.only:
            require_columns(df, [column], what=f"the column of only= {column}={value}")
            col = df[column]
            if pd.api.types.is_numeric_dtype(col.dtype) and _is_number(value):
                match = col.to_numpy(dtype=float) == float(value)
            else:
                match = (col.astype("string").str.strip() == value.strip()).fillna(False)
                match = match.to_numpy(dtype=bool)
            dropped[f"{column}={value}"] = int((keep & ~match).sum())
            keep &= match
        if self.skip_no_skill and cols.skill in df.columns:
            skill = df[cols.skill]
            empty = skill.isna().to_numpy() | (skill.astype("string").str.strip() == "").fillna(
                True
            ).to_numpy(dtype=bool)
            dropped["no_skill"] = int((keep & empty).sum())
            keep &= ~empty
        return keep, dropped


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def skill_sizes(df: pd.DataFrame, cols: Columns) -> pd.DataFrame:
    """Per skill (index: the skill's name as text): ``n_responses`` and ``n_students``."""
    return df.groupby(df[cols.skill].astype(str)).agg(
        n_responses=(cols.correct, "size"), n_students=(cols.student, "nunique")
    )


@takes_tables(data=RESPONSES)
def read_responses(
    data: str | Path | pd.DataFrame,
    columns: Columns | None = None,
    *,
    require_known: bool = False,
    encoding: str = "utf-8",
    rows: RowFilter | None = None,
) -> tuple[pd.DataFrame, Sequences, Columns]:
    """Read and validate a response file (or the user's own DataFrame, checked the same way;
    it is not modified); return the table, its packed sequences and column names.

    With ``rows``, only the selected rows are used; ``df.attrs["dropped"]`` counts the rows each
    rule left out and ``df.attrs["notes"]`` holds remarks worth showing the user (e.g. an
    ASSISTments ``original`` column that pyBKT would have used to drop rows).
    """
    cols = columns or Columns()
    ids = {cols.student, cols.skill, *(_PYBKT_NAMES[k] for k in ("student", "skill"))}
    df = as_table(data, name="responses", text_columns=ids, encoding=encoding)
    cols = cols.resolve(df)
    cols.schema().check_header(df)
    rows = rows or RowFilter()
    df, dropped = rows.apply(df, cols)
    if not rows.skip_no_skill and cols.skill in df.columns:
        missing = df[cols.skill].isna().to_numpy()
        if missing.any():
            raise InputError(
                f"expected a skill, got an empty cell ({int(missing.sum())} rows have none; "
                "skip_no_skill= leaves them out)",
                file=df.attrs.get("file"),
                line=line_of(df, int(np.flatnonzero(missing)[0])),
                column=cols.skill,
            )
    notes = []
    if "original" in df.columns and not any(c == "original" for c, _ in rows.only):
        n_other = int((df["original"].astype("string") != "1").fillna(True).sum())
        if n_other:
            notes.append(
                f"{n_other} rows have original != 1 (in ASSISTments data: scaffolding questions); "
                "they are used. pyBKT keeps only original = 1 on its own; --only original=1 "
                "does the same"
            )
    seqs, cols = pack(df, cols, require_known=require_known)
    df.attrs["dropped"] = dropped
    df.attrs["notes"] = notes
    return df, seqs, cols


@dataclass
class TimeMajor:
    """Each skill's responses reordered time-major, for loops that vectorise across students.

    Within a skill, sequences are sorted longest first; the block of skill ``k`` starts at
    ``obs[obs_lo[k]]`` and holds step 0 of every sequence, then step 1 of those still going, and
    so on; ``bs[bs_lo[k] + t]`` is the number of sequences still going at step ``t``
    (``t < T[k]``).  ``position[i]`` is where packed response ``i`` went.
    """

    obs: np.ndarray
    obs_lo: np.ndarray
    bs: np.ndarray
    bs_lo: np.ndarray
    T: np.ndarray
    position: np.ndarray


def time_major(seqs: Sequences) -> TimeMajor:
    """Reorder packed sequences into the time-major layout of :class:`TimeMajor`."""
    lengths = np.diff(seqs.starts)
    n_skills = len(seqs.skills)
    order = np.lexsort((-lengths, seqs.seq_skill))  # by skill, longest first
    rank = np.empty(seqs.n_sequences, dtype=np.int64)
    rank[order] = np.arange(seqs.n_sequences) - seqs.skill_starts[seqs.seq_skill[order]]
    T = np.zeros(n_skills, dtype=np.int64)
    np.maximum.at(T, seqs.seq_skill, lengths)
    bs_lo = np.concatenate([[0], np.cumsum(T)[:-1]]).astype(np.int64)
    counts = np.zeros(int(T.sum()), dtype=np.int64)
    np.add.at(counts, bs_lo[seqs.seq_skill] + lengths - 1, 1)
    # bs[t] = number of sequences longer than t = suffix sum of counts within the skill's segment
    seg_end = np.repeat(bs_lo + T, T)
    rc = np.concatenate([np.cumsum(counts[::-1])[::-1], [0]])
    bs = rc[:-1] - rc[seg_end]
    excl = np.cumsum(bs) - bs
    cbs = excl - np.repeat(excl[bs_lo], T)
    obs_lo = seqs.starts[seqs.skill_starts[:-1]].astype(np.int64)
    seq_of = np.repeat(np.arange(seqs.n_sequences), lengths)
    k_of = seqs.seq_skill[seq_of]
    position = obs_lo[k_of] + cbs[bs_lo[k_of] + seqs.opportunity - 1] + rank[seq_of]
    obs_tm = np.empty_like(seqs.obs)
    obs_tm[position] = seqs.obs
    return TimeMajor(obs_tm, obs_lo, bs.astype(np.int64), bs_lo, T, position)
