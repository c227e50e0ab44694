"""Pairwise-comparison data: reading, validating, tie handling and rater exclusion.

A comparisons table has one row per judgement, with columns

``item``       what was judged in context (e.g. one dialogue turn);
``attribute``  the question asked (e.g. "helping the student more");
``rater``      who judged;
``first``      the agent (reply) shown first / on the left, option A;
``second``     the agent shown second, option B;
``outcome``    ``first``, ``second`` or ``tie`` ("I cannot tell").

Other columns are kept and ignored.  Ties are resolved before fitting by :func:`resolve_ties`
(``random``: a seeded coin flip, as Tack & Piech 2022 do; ``drop``; ``half``: half a win to each
side, fitted as a weighted likelihood), which adds the weights ``w_first`` and ``w_second``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import (
    InputError,
    as_table,
    identifier_problem,
    line_of,
    load_yaml,
    read_text,
)
from ..seeding import rng
from ..tables import Col, Schema, Table, takes_tables

__all__ = [
    "COLUMNS",
    "COMPARISONS_SCHEMA",
    "OUTCOMES",
    "TIE_MODES",
    "exclude_raters",
    "read_comparisons",
    "read_rater_ids",
    "resolve_ties",
    "validate_comparisons",
]

COLUMNS = ("item", "attribute", "rater", "first", "second", "outcome")
OUTCOMES = ("first", "second", "tie")
TIE_MODES = ("random", "drop", "half")
_TEXT = ("item", "attribute", "rater", "first", "second")

#: A comparisons table: an open table (other columns -- task, timings -- are kept and ignored);
#: the five identifiers are taken as written (a surrounding space, a control character, a JSON
#: null, list or object is refused, never stripped or turned into text); ``outcome`` is checked
#: against :data:`OUTCOMES` (any case) by :func:`validate_comparisons`.  No key: a rater may
#: judge the same pair twice.
COMPARISONS_SCHEMA = Schema(
    "comparisons table", (*(Col(c, "id") for c in _TEXT), Col("outcome", "raw"))
)


#: The gate of a comparisons table (:func:`takes_tables`; :func:`validate_comparisons` checks it).
COMPARISONS = Table.of(COMPARISONS_SCHEMA, "comparisons", self_checked=True)


@takes_tables(path=COMPARISONS)
def read_comparisons(path: str | Path | pd.DataFrame) -> pd.DataFrame:
    """Read and validate a comparisons file (CSV, TSV, JSONL or JSON), or the user's own table
    (a DataFrame or records), checked the same way.

    Raises :class:`~edueval.io.InputError` naming file, line and column for: a missing column, an
    identifier that is empty or not as written (see :data:`COMPARISONS_SCHEMA`), an ``outcome`` other than first/second/tie, or a row whose ``first`` and
    ``second`` are the same agent (a reply cannot be compared with itself).
    """
    df = as_table(path, name="comparisons", text_columns=_TEXT)
    return validate_comparisons(df)


@takes_tables(df=COMPARISONS)
def validate_comparisons(df: pd.DataFrame) -> pd.DataFrame:
    """Check a comparisons DataFrame and return a clean copy (identifiers as text, outcomes in
    lower case).  Row positions in error messages follow ``df.attrs`` when the frame came from
    :func:`edueval.io.read_table`."""
    if len(df) == 0:
        raise InputError("no comparisons", file=df.attrs.get("file"))
    checked = COMPARISONS_SCHEMA.validate(df)
    out = df.copy()
    for col in _TEXT:
        out[col] = checked[col].to_numpy()
    outcome = df["outcome"].astype("string").str.strip().str.lower()
    bad = ~outcome.isin(OUTCOMES).fillna(False).to_numpy()
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        value = df["outcome"].iloc[pos]
        shown = "empty" if pd.isna(value) else repr(str(value))
        raise InputError(
            f"expected one of first, second, tie; got {shown}"
            + (f" ({int(bad.sum())} bad rows in all)" if bad.sum() > 1 else ""),
            file=df.attrs.get("file"),
            line=line_of(df, pos),
            column="outcome",
        )
    out["outcome"] = outcome.astype(str).to_numpy()
    same = (out["first"] == out["second"]).to_numpy()
    if same.any():
        pos = int(np.flatnonzero(same)[0])
        raise InputError(
            f"'first' and 'second' are the same agent {out['first'].iloc[pos]!r}; an agent cannot "
            "be compared with itself"
            + (f" ({int(same.sum())} such rows in all)" if same.sum() > 1 else ""),
            file=df.attrs.get("file"),
            line=line_of(df, pos),
            column="second",
        )
    out.attrs.update(df.attrs)
    return out


@takes_tables(
    df=Table(
        "comparisons", ("first", "second", "outcome"), ("item", "attribute", "rater"), paths=False
    )
)
def resolve_ties(
    df: pd.DataFrame, mode: str = "random", *, seed: int | None = None
) -> pd.DataFrame:
    """Add the likelihood weights ``w_first`` / ``w_second`` of each comparison.

    ``random``  each tie becomes a win of ``first`` or of ``second`` by a fair coin flip drawn, in
                row order, from the run's generator (Tack & Piech 2022, Sec. 3.3);
    ``drop``    ties are removed;
    ``half``    a tie counts half a win for each side: its log-likelihood term is
                ``0.5 log p + 0.5 log(1 - p)`` (a weighted likelihood; the posterior is the one
                of a model that saw each tie once each way, at half weight).
    Wins get weight 1 on the winning side and 0 on the other.
    """
    if mode not in TIE_MODES:
        raise InputError(f"ties= must be one of {', '.join(TIE_MODES)}; got {mode!r}")
    out = df.copy()
    out.attrs.update(df.attrs)
    is_first = (out["outcome"] == "first").to_numpy()
    is_tie = (out["outcome"] == "tie").to_numpy()
    w1 = is_first.astype(float)
    w2 = ((~is_first) & (~is_tie)).astype(float)
    if mode == "random":
        flips = rng(seed).random(int(is_tie.sum())) < 0.5
        w1[is_tie] = flips
        w2[is_tie] = ~flips
    elif mode == "half":
        w1[is_tie] = 0.5
        w2[is_tie] = 0.5
    out["w_first"] = w1
    out["w_second"] = w2
    out["tie"] = is_tie
    if mode == "drop":
        out = out[~is_tie]
    return out


def read_rater_ids(path: str | Path) -> list[str]:
    """Rater ids from a file: YAML (a list, or a mapping whose keys are the ids, like the authors'
    ``outliers.yaml``) when the name ends in .yaml/.yml, otherwise one id per line (blank lines and
    ``#`` comments skipped).  Ids are taken as written: one with surrounding spaces or a control
    character, or a YAML null, true/false or collection, is refused (naming the line where known),
    never stripped into another rater's id."""
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", file=path)
    if path.is_dir():
        raise InputError("expected a file, found a directory", file=path)
    text = read_text(path)
    ids = None
    if path.suffix.lower() in {".yaml", ".yml"}:
        obj = load_yaml(text, file=path)  # one line naming the line; nesting bounded
        if isinstance(obj, dict):
            ids = [_rater_id(k, path) for k in obj]
        elif isinstance(obj, list) and all(isinstance(v, str | int) for v in obj):
            ids = [_rater_id(v, path) for v in obj]
        elif obj is None:
            ids = []
        elif not isinstance(obj, str | int):  # a str/int: plain ids one per line, named .yaml
            raise InputError(
                "expected a YAML list of rater ids or a mapping whose keys are rater ids", file=path
            )
    if ids is None:
        ids = _rater_lines(text, path)
    if not ids:
        raise InputError(
            "names no rater; expected one rater id per line (or a YAML list)", file=path
        )
    return list(dict.fromkeys(ids))


def _rater_id(value: object, path: Path, line: int | None = None) -> str:
    """A rater id as written, or an :class:`InputError` saying why it cannot be one."""
    if value is None or isinstance(value, bool) or not isinstance(value, str | int | float):
        shown = "null" if value is None else repr(value)
        raise InputError(f"expected a rater id (text or a number), got {shown}", file=path,
                         line=line)  # fmt: skip
    problem = identifier_problem(value) or (None if str(value) else "an empty id")
    if problem:
        raise InputError(f"rater id {str(value)!r} has {problem}; ids are taken as written",
                         file=path, line=line)  # fmt: skip
    return str(value)


def _rater_lines(text: str, path: Path) -> list[str]:
    """One id per line; a ``#`` comment (and the blanks before it) and blank lines skipped."""
    ids = []
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw[:-1] if raw.endswith("\r") else raw
        if "#" in line:
            line = line.split("#", 1)[0].rstrip(" \t")
        if line.strip(" \t"):
            ids.append(_rater_id(line, path, number))
    return ids


@takes_tables(
    df=Table(
        "comparisons", ("rater",), ("item", "attribute", "first", "second", "outcome"), paths=False
    )
)
def exclude_raters(
    df: pd.DataFrame, ids: Iterable[str], *, source: str | Path | None = None
) -> tuple[pd.DataFrame, list[str], list[str]]:
    """Remove the comparisons of the raters ``ids``.

    Returns ``(kept, removed_ids, unknown_ids)``.  Naming nobody who is in the data is an error
    (most likely the wrong file); naming some unknown ids is allowed (the caller warns).
    """
    ids = list(dict.fromkeys(str(i) for i in ids))
    present = set(df["rater"].unique())
    removed = [i for i in ids if i in present]
    unknown = [i for i in ids if i not in present]
    if ids and not removed:
        raise InputError(
            f"none of the {len(ids)} rater id(s) to exclude appear in the data's 'rater' column "
            f"(first one: {ids[0]!r}); is it the right file?",
            file=source,
        )
    mask = df["rater"].isin(removed).to_numpy()
    kept = df[~mask]
    kept.attrs.update(df.attrs)
    return kept, removed, unknown
