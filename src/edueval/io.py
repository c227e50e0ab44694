"""Readers and validators shared by every command.

Every problem with a user's input is raised as :class:`InputError`, whose message is one line naming
the file, the line (as a text editor numbers it: the CSV header is line 1), the column and what was
expected.  The command line prints that line and exits with code 2.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "InputError",
    "file_sha256",
    "read_table",
    "require_columns",
    "binary_column",
    "numeric_column",
    "text_column",
    "unclean_identifiers",
    "line_of",
    "read_text",
]


class InputError(Exception):
    """Bad input from the user: one clear line saying what is wrong and where."""

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        line: int | None = None,
        column: str | None = None,
    ) -> None:
        self.message = message
        self.file = str(file) if file is not None else None
        self.line = line
        self.column = column
        super().__init__(str(self))

    def __str__(self) -> str:
        where = []
        if self.file:
            where.append(self.file)
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.column is not None:
            where.append(f"column '{self.column}'")
        prefix = ", ".join(where)
        text = " ".join(self.message.split())  # always a single line
        return f"{prefix}: {text}" if prefix else text


def _bom_tolerant(encoding: str) -> str:
    """UTF-8 that also reads a leading byte-order mark (as pandas does for CSV)."""
    return "utf-8-sig" if codecs.lookup(encoding).name == "utf-8" else encoding


def read_text(path: str | Path) -> str:
    """A user's UTF-8 text file (a leading BOM dropped), or one line saying which byte is not
    UTF-8 -- never a traceback."""
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found" if not path.exists() else "expected a file", file=path)
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start} cannot be "
            "decoded (save the file as UTF-8)",
            file=path,
            line=line,
        ) from None


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file's bytes, recorded in every run's config.json."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _table_kind(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in {".csv", ".txt"}:
        return "csv"
    if suffix == ".tsv":
        return "tsv"
    if suffix in {".jsonl", ".ndjson"}:
        return "jsonl"
    if suffix == ".json":
        return "json"
    if suffix in {".parquet", ".pq"}:
        return "parquet"
    raise InputError(
        f"unknown file type '{suffix or '(none)'}'; expected .csv, .tsv, .jsonl, .json or .parquet",
        file=path,
    )


def read_table(
    path: str | Path, *, text_columns: Iterable[str] = (), encoding: str = "utf-8"
) -> pd.DataFrame:
    """Read a CSV/TSV/JSONL/JSON table into a DataFrame.

    Only an empty cell counts as missing ("NA", "null" or "None" are ordinary values), and
    ``text_columns`` (identifiers) are kept as text exactly as written, so "007" and "7" stay two
    students.  Blank lines are skipped.  The frame's index holds each row's line number in the
    file (CSV header = line 1), which :func:`line_of` reports in error messages; ``attrs`` remember
    the file and its kind.  Files are read as UTF-8 unless ``encoding`` says otherwise.
    """
    path = Path(path)
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise InputError(f"unknown text encoding {encoding!r}") from None
    if not path.exists():
        raise InputError("file not found", file=path)
    if path.is_dir():
        raise InputError("expected a file, found a directory", file=path)
    kind = _table_kind(path)
    if path.stat().st_size == 0:
        raise InputError(
            "the file is empty; expected a header line and at least one row", file=path
        )
    try:
        text = list(text_columns)
        if kind in {"csv", "tsv"}:
            df = pd.read_csv(
                path,
                sep="," if kind == "csv" else "\t",
                dtype=dict.fromkeys(text, str),
                encoding=encoding,
                low_memory=False,  # one pass: consistent column types, no DtypeWarning
                keep_default_na=False,
                na_values=[""],
                skip_blank_lines=False,
            )
            blank = df.isna().all(axis=1).to_numpy() if len(df.columns) else np.zeros(0, bool)
            df.index = pd.RangeIndex(2, len(df) + 2)
            df = df[~blank]
        elif kind == "parquet":
            df = _read_parquet(path, text)
        elif kind == "jsonl":
            records = []
            lines = []
            with open(path, encoding=_bom_tolerant(encoding)) as fh:
                for lineno, raw in enumerate(fh, start=1):
                    if not raw.strip():
                        continue
                    try:
                        obj = json.loads(raw)
                    except json.JSONDecodeError as exc:
                        raise InputError(
                            f"not valid JSON ({exc.msg})", file=path, line=lineno
                        ) from None
                    if not isinstance(obj, dict):
                        raise InputError(
                            "expected a JSON object on each line", file=path, line=lineno
                        )
                    records.append(obj)
                    lines.append(lineno)
            df = pd.DataFrame.from_records(records, index=lines)
            for name in text:
                if name in df.columns:
                    df[name] = df[name].where(df[name].isna(), df[name].astype(str))
        else:
            with open(path, encoding=_bom_tolerant(encoding)) as fh:
                try:
                    obj = json.load(fh)
                except json.JSONDecodeError as exc:
                    raise InputError(
                        f"not valid JSON ({exc.msg})", file=path, line=exc.lineno
                    ) from None
            if isinstance(obj, dict):
                obj = [obj]
            if not isinstance(obj, list) or not all(isinstance(r, dict) for r in obj):
                raise InputError("expected a JSON list of objects", file=path)
            df = pd.DataFrame.from_records(obj)
            for name in text:
                if name in df.columns:
                    df[name] = df[name].where(df[name].isna(), df[name].astype(str))
    except InputError:
        raise
    except pd.errors.EmptyDataError:
        raise InputError("the file is empty; expected a header line and rows", file=path) from None
    except pd.errors.ParserError as exc:
        found = re.search(r"line (\d+)", str(exc))
        raise InputError(
            f"cannot parse as {kind.upper()}: {' '.join(str(exc).split())}",
            file=path,
            line=int(found.group(1)) if found else None,
        ) from None
    except UnicodeDecodeError as exc:
        name = codecs.lookup(encoding).name
        raise InputError(
            f"not {'UTF-8' if name == 'utf-8' else encoding} text: byte 0x{exc.object[exc.start]:02x} cannot be decoded"
            + (
                " (files exported on Windows are often cp1252 or latin-1)"
                if name == "utf-8"
                else ""
            ),
            file=path,
        ) from None
    if len(df) == 0:
        raise InputError("no data rows; expected at least one row after the header", file=path)
    df.attrs["file"] = str(path)
    df.attrs["kind"] = kind
    df.attrs["index_is_line"] = kind in {"csv", "tsv", "jsonl"}
    return df


def _read_parquet(path: Path, text: list[str]) -> pd.DataFrame:
    """A Parquet file in memory; identifier columns as text (numbers written as they print)."""
    try:
        df = pd.read_parquet(path)
    except ImportError:
        raise InputError("reading Parquet needs pyarrow: pip install pyarrow", file=path) from None
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"cannot read as Parquet: {first}", file=path) from None
    for name in text:
        if name in df.columns and not pd.api.types.is_string_dtype(df[name].dtype):
            df[name] = df[name].where(df[name].isna(), df[name].astype(str))
    return df.reset_index(drop=True)


def line_of(df: pd.DataFrame, position: int) -> int | None:
    """Line number in the source file of the row at 0-based ``position`` (None if unknown).

    Works on any row subset of a frame from :func:`read_table` (its index holds line numbers).
    """
    if df.attrs.get("index_is_line"):
        return int(df.index[position])
    return None


def _file(df: pd.DataFrame) -> str | None:
    return df.attrs.get("file")


def require_columns(df: pd.DataFrame, columns: Iterable[str], *, what: str = "") -> None:
    """Raise if any of ``columns`` is missing, listing the columns that are present."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        have = ", ".join(map(str, df.columns))
        extra = f" ({what})" if what else ""
        raise InputError(
            f"missing column{'s' if len(missing) > 1 else ''} {', '.join(repr(m) for m in missing)}"
            f"{extra}; the file has: {have}",
            file=_file(df),
        )


def _first_bad(df: pd.DataFrame, mask: np.ndarray, column: str, expected: str) -> InputError:
    pos = int(np.flatnonzero(mask)[0])
    value = df[column].iloc[pos]
    shown = (
        "empty"
        if pd.isna(value)
        else repr(value if not isinstance(value, np.generic) else value.item())
    )
    return InputError(
        f"expected {expected}, got {shown}"
        + (f" ({int(mask.sum())} bad rows in all)" if mask.sum() > 1 else ""),
        file=_file(df),
        line=line_of(df, pos),
        column=column,
    )


def binary_column(df: pd.DataFrame, column: str) -> np.ndarray:
    """Return ``df[column]`` as an int8 array of 0/1, or raise naming the first bad row.

    Accepts 0/1 as numbers or strings and true/false booleans.
    """
    col = df[column]
    if col.dtype == bool:
        return col.to_numpy(dtype=np.int8)
    if pd.api.types.is_numeric_dtype(col.dtype):
        values = col.to_numpy(dtype=float)
        bad = ~((values == 0) | (values == 1))
        if bad.any():
            raise _first_bad(df, bad, column, "0 or 1")
        return values.astype(np.int8)
    as_text = col.astype("string").str.strip().str.lower()
    mapped = as_text.map({"0": 0, "1": 1, "0.0": 0, "1.0": 1, "true": 1, "false": 0})
    bad = mapped.isna().to_numpy()
    if bad.any():
        raise _first_bad(df, bad, column, "0 or 1")
    return mapped.to_numpy(dtype=np.int8)


def numeric_column(
    df: pd.DataFrame,
    column: str,
    *,
    low: float | None = None,
    high: float | None = None,
    integer: bool = False,
) -> np.ndarray:
    """Return ``df[column]`` as float64 (or int64), checking it is finite and within [low, high]."""
    values = pd.to_numeric(df[column], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    rng = ""
    if low is not None:
        bad |= values < low
    if high is not None:
        bad |= values > high
    if low is not None or high is not None:
        rng = f" in [{low if low is not None else '-inf'}, {high if high is not None else 'inf'}]"
    if integer:
        bad |= np.isfinite(values) & (values != np.round(values))
    if bad.any():
        raise _first_bad(df, bad, column, f"{'an integer' if integer else 'a number'}{rng}")
    return values.astype(np.int64) if integer else values


def unclean_identifiers(values: np.ndarray) -> np.ndarray:
    """Mask of identifiers that would silently become *other* identifiers: leading or trailing
    white space (``" s1"`` is not ``"s1"``) or a NUL / control character."""
    text = np.asarray(values, dtype=object).astype(str)
    padded = np.char.strip(text) != text
    control = np.fromiter((any(ord(c) < 32 or c == "\x7f" for c in t) for t in text), bool,
                          count=len(text))  # fmt: skip
    return padded | control


def text_column(df: pd.DataFrame, column: str, *, identifier: bool = False) -> np.ndarray:
    """Return ``df[column]`` as strings, refusing empty cells -- and, for an ``identifier``
    (student, item, skill, question), values with surrounding spaces or control characters,
    which would otherwise count as a new student or item."""
    col = df[column]
    bad = col.isna().to_numpy() | (col.astype("string").str.strip() == "").fillna(True).to_numpy()
    if bad.any():
        raise _first_bad(df, bad, column, "a non-empty value")
    values = col.astype(str).to_numpy()
    if identifier:
        codes, uniques = pd.factorize(values)
        unclean = np.flatnonzero(unclean_identifiers(uniques))
        if len(unclean):
            raise _first_bad(df, np.isin(codes, unclean), column,
                             "an identifier without surrounding spaces or control characters")  # fmt: skip
    return values


def check_unique(df: pd.DataFrame, columns: Sequence[str], *, what: str) -> None:
    """Raise on the first row that repeats an earlier row's values in ``columns``."""
    dup = df.duplicated(list(columns), keep="first").to_numpy()
    if dup.any():
        pos = int(np.flatnonzero(dup)[0])
        key = ", ".join(f"{c}={df[c].iloc[pos]!r}" for c in columns)
        raise InputError(f"duplicate {what} ({key})", file=_file(df), line=line_of(df, pos))
