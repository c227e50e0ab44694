"""Readers and validators shared by every command.

Every problem with a user's input is raised as :class:`InputError`, whose message is one line naming
the file, the line (as a text editor numbers it: the CSV header is line 1), the column and what was
expected.  The command line prints that line and exits with code 2.
"""

from __future__ import annotations

import codecs
import csv
import functools
import hashlib
import json
import mmap
import os
import re
import stat
import tempfile
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from io import StringIO
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np
import pandas as pd

from .extras import missing

__all__ = [
    "InputError",
    "RunFailed",
    "atomic_write",
    "file_sha256",
    "read_table",
    "as_table",
    "as_frame",
    "require_columns",
    "binary_column",
    "numeric_column",
    "text_column",
    "unclean_identifiers",
    "identifier_problem",
    "order_column",
    "check_unique",
    "line_of",
    "read_text",
    "read_jsonl",
    "jsonl_lines",
    "load_json",
    "load_yaml",
    "JSONText",
    "MAX_JSON_DEPTH",
]


class InputError(ValueError):
    """Bad input from the user: one clear line saying what is wrong and where.

    A ``ValueError``, as Python code expects of a bad argument or table.  Library messages name
    Python parameters (``multigs=``); the command line shows them as its flags (``--multigs``,
    :mod:`edueval.cli.flags`)."""

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

    def renamed(self, **names: str) -> InputError:
        """This error with each parameter ``old=`` named ``new=`` (``names``: ``old="new"``):
        for a run layer whose command calls a library parameter by another name, so that the
        command line shows its own flag.  ``old=`` followed by a value is left as written."""
        message = self.message
        for old, new in names.items():
            message = re.sub(rf"(?<![\w.\-]){re.escape(old)}=(?![\w'\"(\[{{+\-.])", f"{new}=",
                             message)  # fmt: skip
        return InputError(message, file=self.file, line=self.line, column=self.column)

    def __reduce__(self):
        # pickled whole (a Dask worker's error comes back with its file, line and column)
        args = (type(self), self.message, self.file, self.line, self.column)
        return (_rebuild_input_error, args, self.__dict__)


def _rebuild_input_error(
    cls: type[InputError], message: str, file: str | None, line: int | None, column: str | None
) -> InputError:
    err = cls.__new__(cls)
    InputError.__init__(err, message, file=file, line=line, column=column)
    return err


class RunFailed(Exception):
    """A run that ended with results that must not be trusted (exit code 3).

    The run directory is finished with status ``failed`` before this is raised, so what was
    measured is kept and marked incomplete; the command line prints the message and exits 3.
    """

    exit_code = 3


def _umask() -> int:
    """The process's file-creation mask (read by setting it, then restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: str | Path, data: str | bytes) -> Path:
    """Write ``data`` to ``path`` via a temporary file in the same folder and an atomic rename.

    The file gets the permissions a plain ``open()`` would give it (0666 less the umask; the
    temporary file alone would be 0600), so reports and tables can be shared as usual."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        if isinstance(data, bytes):
            with os.fdopen(fd, "wb") as binary:
                binary.write(data)
        else:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(data)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _bom_tolerant(encoding: str) -> str:
    """UTF-8 that also reads a leading byte-order mark (as pandas does for CSV)."""
    return "utf-8-sig" if codecs.lookup(encoding).name == "utf-8" else encoding


def check_regular_file(path: str | Path) -> Path:
    """``path`` if it is a regular file (or a link to one); else one line saying what it is --
    checked before opening, so that a FIFO or a device never blocks a reader and a folder is
    never an ``IsADirectoryError``."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise InputError("file not found", file=path) from None
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror or exc})", file=path) from None
    if stat.S_ISREG(mode):
        return path
    if stat.S_ISDIR(mode):
        raise InputError("expected a file, found a directory", file=path)
    kind = (
        "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a device, socket or other special file"
    )
    raise InputError(f"expected a regular file, found {kind}", file=path)


def read_text(path: str | Path) -> str:
    """A user's UTF-8 text file (a leading BOM dropped), or one line saying which byte is not
    UTF-8 -- never a traceback."""
    return _decode(check_regular_file(path))


#: Deepest nesting of JSON lists/objects (or YAML collections) a reader accepts.  Tables and
#: configuration files need a handful of levels; refusing deeper ones before parsing keeps a
#: document nested 10^5 deep a one-line error instead of a RecursionError.
MAX_JSON_DEPTH = 100


class JSONText(str):
    """The JSON text of a list, an object or true/false read where text was expected.

    It reads as that text (a ``context_turns`` list can be parsed again), but
    :func:`identifier_problem` refuses it: ``{"a": 1}`` is not a student.
    """

    __slots__ = ()

    @property
    def json_kind(self) -> str:
        return {"{": "object", "[": "list"}.get(self[:1], "true/false")


def _json_brackets(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Byte offsets of the JSON brackets outside strings, and the nesting depth after each.

    A linear-time scan (numpy) so that depth is known before the recursive parser runs.  A quote
    ends a string unless an odd run of backslashes precedes it.  On text that is not JSON the
    result is meaningless but harmless: the parser then says what is wrong.
    """
    a = np.frombuffer(data, dtype=np.uint8)
    quotes = np.flatnonzero(a == 0x22)
    slashes = np.flatnonzero(a == 0x5C)
    if len(quotes) and len(slashes):
        first = np.ones(len(slashes), dtype=bool)
        first[1:] = slashes[1:] != slashes[:-1] + 1
        run_start = slashes[first]
        run_end = np.append(slashes[np.flatnonzero(first)[1:] - 1], slashes[-1])
        k = np.minimum(np.searchsorted(run_end, quotes - 1), len(run_end) - 1)
        escaped = (run_end[k] == quotes - 1) & ((run_end[k] - run_start[k]) % 2 == 0)
        quotes = quotes[~escaped]
    brackets = np.flatnonzero((a == 0x5B) | (a == 0x5D) | (a == 0x7B) | (a == 0x7D))
    brackets = brackets[np.searchsorted(quotes, brackets) % 2 == 0]
    kind = a[brackets]
    depth = np.cumsum(np.where((kind == 0x5B) | (kind == 0x7B), 1, -1))
    return brackets, depth


def _too_deep(data: bytes) -> int | None:
    """Offset of the first bracket nested deeper than :data:`MAX_JSON_DEPTH`, or None."""
    pos, depth = _json_brackets(data)
    over = np.flatnonzero(depth > MAX_JSON_DEPTH)
    return int(pos[over[0]]) if len(over) else None


def _nested_too_deep(file: str | Path | None, line: int | None) -> InputError:
    return InputError(
        f"nested more than {MAX_JSON_DEPTH} levels deep (lists or objects inside each other); "
        "refusing to read it",
        file=file,
        line=line,
    )


class DuplicateKeyError(ValueError):
    """A JSON object naming one key twice (the parser would keep the last silently)."""


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(f"a JSON object names the key {key!r} twice")
            seen.add(key)
    return out


#: the most digits an integer in a user's JSON or YAML may have: Python's own limit on
#: converting between text and int (``sys.get_int_max_str_digits``), stated here so that a longer
#: number is one line, not a ``ValueError`` from inside the parser
MAX_INT_DIGITS = 4300


class NumberTooLong(ValueError):
    """An integer with more than :data:`MAX_INT_DIGITS` digits."""


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("+-"))
    if digits > MAX_INT_DIGITS:
        raise NumberTooLong(f"a number with {digits} digits (at most {MAX_INT_DIGITS} are read)")
    return int(text)


_SURROGATE = re.compile("[\ud800-\udfff]")
#: a ``\uD800``-``\uDFFF`` escape, the only way a lone surrogate gets into parsed JSON text
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def lone_surrogate(obj: object) -> tuple[str, str | None] | None:
    """The first string (key or value, at any depth) holding a lone surrogate -- a ``"\\ud800"``
    escape that pairs with nothing: not a character, so not valid Unicode text (writing it out
    as UTF-8 fails) -- with the key of ``obj`` (an object: a record) it stands under, or None."""
    roots = list(obj.items()) if isinstance(obj, dict) else [(None, obj)]
    for root, top in roots:
        stack = [top] if root is None else [root, top]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                if _SURROGATE.search(item):
                    return item, root
            elif isinstance(item, dict):
                stack.extend(item.keys())
                stack.extend(item.values())
            elif isinstance(item, list | tuple):
                stack.extend(item)
    return None


def _surrogate_error(
    found: tuple[str, str | None], file: str | Path | None, line: int | None
) -> InputError:
    value, key = found
    code = next(f"\\u{ord(ch):04x}" for ch in value if "\ud800" <= ch <= "\udfff")
    return InputError(
        f"a text holds {code}, an unpaired surrogate (half of a surrogate pair): not a "
        "character, so not valid Unicode text",
        file=file,
        line=line,
        column=key if isinstance(key, str) and not _SURROGATE.search(key) else None,
    )


def _json_value(text: str, file: str | Path | None, line: int) -> object:
    """``json.loads`` with the checks every JSON reader makes: keys once per object, integers
    of at most :data:`MAX_INT_DIGITS` digits, no lone surrogate."""
    try:
        obj = json.loads(text, object_pairs_hook=_unique_keys, parse_int=_bounded_int)
    except (DuplicateKeyError, NumberTooLong) as exc:
        raise InputError(str(exc), file=file, line=line) from None
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON ({exc.msg})", file=file, line=line + exc.lineno - 1
        ) from None
    if _SURROGATE_ESCAPE.search(text):  # rare: only then look at every string
        found = lone_surrogate(obj)
        if found is not None:
            where = _SURROGATE_ESCAPE.search(text)
            at = line + text.count("\n", 0, where.start()) if where else line
            raise _surrogate_error(found, file, at)
    return obj


def load_json(text: str, *, file: str | Path | None = None, line: int = 1) -> object:
    """Parse one JSON document from a user's file, or raise :class:`InputError` naming the file
    and the line (``line`` is the line ``text`` starts on, for a JSONL record).

    Nesting deeper than :data:`MAX_JSON_DEPTH` is refused before parsing (Python's parser
    recurses and would raise ``RecursionError``).
    """
    data = text.encode("utf-8", "surrogatepass")
    deep = _too_deep(data)
    if deep is not None:
        raise _nested_too_deep(file, line + data.count(b"\n", 0, deep))
    try:
        return _json_value(text, file, line)
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise _nested_too_deep(file, line) from None


def jsonl_lines(text: str) -> Iterator[tuple[int, str]]:
    """The non-blank lines of a JSONL text with their line numbers.

    Lines end at LF only (a CR before it is dropped): ``str.splitlines`` would also split at
    U+2028, U+0085 and other characters that may stand raw inside a JSON string.
    """
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw[:-1] if raw.endswith("\r") else raw
        if line.strip():
            yield number, line


def read_jsonl(path: str | Path, *, encoding: str = "utf-8") -> tuple[list[dict], list[int]]:
    """The objects of a JSONL file and the line each stands on; anything else on a line (bad
    JSON, an array, nesting deeper than :data:`MAX_JSON_DEPTH`) is an :class:`InputError` naming
    that line."""
    path = check_regular_file(path)
    text = _decode(path, encoding)
    checked = _too_deep(text.encode("utf-8", "surrogatepass")) is None  # the whole file at once
    records, lines = [], []
    for number, line in jsonl_lines(text):
        if checked:
            obj = _json_value(line, path, number)
        else:  # some line is too deep (or unbalanced): find which, in line order
            obj = load_json(line, file=path, line=number)
        if not isinstance(obj, dict):
            raise InputError("expected a JSON object on each line", file=path, line=number)
        records.append(obj)
        lines.append(number)
    return records, lines


@functools.cache
def _yaml_loader() -> type:
    import yaml

    class BoundedLoader(yaml.SafeLoader):
        """PyYAML's safe loader, refusing collections nested deeper than MAX_JSON_DEPTH (its
        composer recurses once per level)."""

        depth = 0

        def compose_node(self, parent, index):
            if self.check_event(yaml.ScalarEvent, yaml.AliasEvent):  # not a level
                return super().compose_node(parent, index)
            self.depth += 1
            try:
                if self.depth > MAX_JSON_DEPTH:
                    raise yaml.MarkedYAMLError(
                        problem=f"nested more than {MAX_JSON_DEPTH} levels deep",
                        problem_mark=self.peek_event().start_mark,
                    )
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    return BoundedLoader


def load_yaml(text: str, *, file: str | Path | None = None) -> object:
    """Parse a user's YAML text (safe types only), or raise :class:`InputError` naming the file
    and line; collections nested deeper than :data:`MAX_JSON_DEPTH` are refused."""
    import yaml

    loader = _yaml_loader()(text)
    try:
        obj = loader.get_single_data()
    except ValueError as exc:  # an integer longer than Python converts
        line = getattr(getattr(loader, "peek_event", lambda: None)(), "start_mark", None)
        raise InputError(
            f"cannot read a number: more than {MAX_INT_DIGITS} digits"
            if "digits" in str(exc)
            else f"cannot read a value ({' '.join(str(exc).split())[:120]})",
            file=file,
            line=line.line + 1 if line is not None else None,
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(
            f"not valid YAML ({getattr(exc, 'problem', None) or exc})",
            file=file,
            line=mark.line + 1 if mark is not None else None,
        ) from None
    except RecursionError:  # pragma: no cover - the composer's depth check comes first
        raise _nested_too_deep(file, None) from None
    finally:
        loader.dispose()
    found = lone_surrogate(obj)
    if found is not None:
        raise _surrogate_error(found, file, None)
    return obj


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
    students; in JSON a number becomes its text, ``null`` an empty cell, and a list, object or
    true/false its JSON text marked as :class:`JSONText` (refused as an identifier).  Blank lines
    are skipped.  The frame's index holds each row's line number in the file (CSV header = line 1;
    a quoted field spanning lines counts all of them), which :func:`line_of` reports in error
    messages; ``attrs`` remember the file and its kind.  JSON may be a list of row objects or one
    object of equally long column lists (``{"student": [...], "skill": [...]}``).  Files are read
    as UTF-8 unless ``encoding`` says otherwise.
    """
    path = Path(path)
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise InputError(f"unknown text encoding {encoding!r}") from None
    check_regular_file(path)
    kind = _table_kind(path)
    if path.stat().st_size == 0:
        raise InputError(
            "the file is empty; expected a header line and at least one row", file=path
        )
    text = list(text_columns)
    try:
        if kind in {"csv", "tsv"}:
            df = _read_csv(path, "," if kind == "csv" else "\t", text, encoding)
        elif kind == "parquet":
            df = _read_parquet(path, text)
        elif kind == "jsonl":
            df = _read_jsonl(path, text, encoding)
        else:
            df = _read_json(path, text, encoding)
    except InputError:
        raise
    except pd.errors.EmptyDataError:
        raise InputError("the file is empty; expected a header line and rows", file=path) from None
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
    _refuse_duplicate_columns(df, path, kind, encoding)
    df.attrs["file"] = str(path)
    df.attrs["kind"] = kind
    df.attrs.setdefault("index_is_line", kind in {"csv", "tsv", "jsonl"})
    return df


def _kind(data: object) -> str:
    if hasattr(data, "tocsr") or type(data).__module__.startswith("scipy.sparse"):
        return "a sparse matrix (sparse input is not supported)"
    if isinstance(data, np.ndarray):
        return f"a {data.ndim}-D numpy array without column names"
    return f"a {type(data).__name__}"


def as_frame(data: object, *, name: str = "table") -> pd.DataFrame:
    """The user's table as a DataFrame, whatever form it came in, or one clear refusal.

    A DataFrame is returned as it is (not copied); a list or tuple of records (dicts with the
    same keys), a dict of equally long columns and a numpy structured or record array (its
    field names are the columns) become one.  Anything else -- a numpy array without field
    names, a number, None, a sparse matrix -- is refused with an :class:`InputError` naming
    the table: a table's columns are known by their names, never by their positions."""
    if isinstance(data, pd.DataFrame):
        return data
    what = f"{name} table"
    sparse = hasattr(data, "tocsr") or type(data).__module__.startswith("scipy.sparse")
    if isinstance(data, np.ndarray) and data.dtype.names:
        return pd.DataFrame.from_records(data)
    if isinstance(data, (list, tuple)) and len(data) and all(isinstance(r, dict) for r in data):
        return pd.DataFrame.from_records(list(data))
    if (
        isinstance(data, dict)
        and not sparse
        and len(data)
        and all(isinstance(v, (list, tuple, np.ndarray, pd.Series)) for v in data.values())
    ):
        lengths = {len(v) for v in data.values()}
        if len(lengths) == 1:
            return pd.DataFrame({str(k): list(v) for k, v in data.items()})
        raise InputError("the columns given as a dict have different lengths", file=what)
    raise InputError(
        f"expected a table -- a DataFrame, a list of records (dicts), a dict of columns, a "
        f"numpy structured array or a file path -- with named columns; got {_kind(data)}",
        file=what,
    )


def as_table(
    data: str | Path | pd.DataFrame,
    *,
    name: str = "table",
    text_columns: Iterable[str] = (),
    encoding: str = "utf-8",
) -> pd.DataFrame:
    """A table from a path (:func:`read_table`) or from the user's own DataFrame, ready for the
    same validation.

    A DataFrame is never modified: a copy with a fresh 0-based index and string column names is
    returned, its ``attrs`` naming it (``"<name> DataFrame"``) where errors would name a file;
    rows are not numbered as lines.  An empty frame is refused as an empty file is.
    """
    if isinstance(data, (str, os.PathLike)):
        return read_table(os.fspath(data), text_columns=text_columns, encoding=encoding)
    data = as_frame(data, name=name)
    label = f"{name} DataFrame"
    if len(data.columns) == 0 or len(data) == 0:
        raise InputError("no data rows; expected at least one row", file=label)
    df = data.reset_index(drop=True)
    df.columns = [str(c) for c in df.columns]
    df.attrs = {"file": label, "kind": "frame", "index_is_line": False}
    return df


def _refuse_duplicate_columns(df: pd.DataFrame, path: Path, kind: str, encoding: str) -> None:
    """A header that names a column twice is ambiguous (pandas would rename the second copy
    ``name.1`` and the first would silently win): refused, in every format."""
    names = [str(c) for c in df.columns]
    if kind in {"csv", "tsv"}:
        header = pd.read_csv(path, sep="," if kind == "csv" else "\t", header=None, nrows=1,
                             dtype=str, encoding=encoding, keep_default_na=False)  # fmt: skip
        names = [str(c) for c in header.iloc[0].tolist()] if len(header) else names
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InputError(f"the header names column {name!r} twice", file=path, line=1)
        seen.add(name)


def _read_csv(path: Path, sep: str, text: list[str], encoding: str) -> pd.DataFrame:
    """A CSV/TSV file; each row's index is the line its record starts on."""
    try:
        df = pd.read_csv(
            path,
            sep=sep,
            dtype=dict.fromkeys(text, str),
            encoding=encoding,
            low_memory=False,  # one pass: consistent column types, no DtypeWarning
            keep_default_na=False,
            na_values=[""],
            skip_blank_lines=False,
        )
    except pd.errors.ParserError as exc:
        message, line = _parser_error(str(exc), path, sep, encoding)
        raise InputError(
            f"cannot parse as {'CSV' if sep == ',' else 'TSV'}: {message}", file=path, line=line
        ) from None
    blank = df.isna().all(axis=1).to_numpy() if len(df.columns) else np.zeros(0, bool)
    starts = _csv_record_lines(path, sep, encoding, len(df) + 1)
    index = pd.RangeIndex(2, len(df) + 2) if starts is None else pd.Index(starts[1:])
    short = _short_record(path, sep, encoding, len(df.columns))
    if short is not None:
        line, fields = short
        raise InputError(
            f"this row has {fields} field{'s' if fields != 1 else ''} but the header has "
            f"{len(df.columns)} (a cut-off line, or a missing separator; an empty cell is written "
            f"as nothing between two separators)",
            file=path,
            line=line,
        )
    if blank.any() and not blank.all():  # blank lines made integer columns float: read again
        again = pd.read_csv(path, sep=sep, dtype=dict.fromkeys(text, str), encoding=encoding,
                            low_memory=False, keep_default_na=False, na_values=[""],
                            skip_blank_lines=True)  # fmt: skip
        if len(again) == int((~blank).sum()):
            again.index = index[~blank]
            return again
    df.index = index
    return df[~blank]


def _short_record(path: Path, sep: str, encoding: str, n_fields: int) -> tuple[int, int] | None:
    """The line and field count of the first non-blank record with fewer fields than the header
    (pandas fills the missing cells with empties).  Separators are counted per line with numpy in
    a file without quotes; a file with quotes is read with the standard library's CSV reader
    when under 64 MB, and otherwise only its last record is checked (a cut-off file)."""
    if n_fields < 2 or codecs.lookup(encoding).name.startswith(("utf-16", "utf-32")):
        return None
    size = path.stat().st_size
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        quoted = mm.find(b'"') >= 0
        if not quoted:
            a = np.frombuffer(mm, dtype=np.uint8)
            try:
                ends = np.flatnonzero(a == 0x0A)
                starts = np.concatenate(([0], ends + 1))
                starts = starts[starts < len(a)]
                seps = np.add.reduceat((a == ord(sep)).view(np.uint8), starts, dtype=np.int64)
                stop = np.append(ends, len(a))[: len(starts)]
                first = a[np.minimum(starts, len(a) - 1)]
                empty = (stop == starts) | ((stop - starts == 1) & (first == 0x0D))  # "" or "\r"
            finally:
                del a
            bad = np.flatnonzero((seps < n_fields - 1) & ~empty)
            bad = bad[bad > 0]  # the header defines the count
            return (int(bad[0]) + 1, int(seps[bad[0]]) + 1) if len(bad) else None
    with open(path, encoding=_bom_tolerant(encoding), newline="") as text_fh:
        text = text_fh.read() if size <= 64 * 2**20 else None
        if text is None:
            return None
    reader = csv.reader(StringIO(text, newline=""), delimiter=sep)
    line = 1
    try:
        for record in reader:
            if record and len(record) < n_fields and any(record) and reader.line_num > 1:
                return line, len(record)
            line = reader.line_num + 1
    except csv.Error:
        return None
    return None


def _parser_error(text: str, path: Path, sep: str, encoding: str) -> tuple[str, int | None]:
    """pandas' tokenizer message without its record numbers, and the line the record starts on
    (pandas counts records -- "line 3" is the third, "row 2" the third from 0 -- not lines)."""
    message = " ".join(text.split()).replace("Error tokenizing data. C error: ", "")
    if found := re.search(r" in line (\d+)", message):
        record = int(found.group(1))
        message = message.replace(found.group(0), "")
    elif found := re.search(r"EOF inside string starting at row (\d+)", message):
        record = int(found.group(1)) + 1
        message = "a quoted field is never closed (the file ends inside it)"
    else:
        return message, None
    starts = _csv_record_lines(path, sep, encoding, None)
    if starts is not None and record <= len(starts):
        return message, int(starts[record - 1])
    return message, record


def _count_lines(path: Path, encoding: str) -> int:
    """Lines in a text file as pandas' CSV reader ends records: at LF, CRLF or a lone CR."""
    lf = cr = crlf = 0
    last, after_cr = "", False
    with open(path, encoding=encoding, newline="") as fh:
        while chunk := fh.read(1 << 22):
            lf += chunk.count("\n")
            cr += chunk.count("\r")
            crlf += chunk.count("\r\n") + (after_cr and chunk[0] == "\n")
            after_cr, last = chunk[-1] == "\r", chunk[-1]
    return lf + cr - crlf + (last not in ("\n", "\r"))


def _csv_record_lines(
    path: Path, sep: str, encoding: str, n_records: int | None
) -> np.ndarray | None:
    """The line each CSV record starts on (the header first), when a quoted field spans lines.

    None when no field spans lines (record k is then on line k) -- told cheaply: a file without
    a quote, or with as many lines as pandas found records (``n_records``) -- or when the records
    cannot be located.  The records are found from the quotes (numpy, linear time) when every
    quote opens or closes a field as RFC 4180 has it, otherwise with the standard library's CSV
    reader.
    """
    if n_records is not None and not _may_span_lines(path, encoding, n_records):
        return None
    with open(path, encoding=_bom_tolerant(encoding), newline="") as fh:
        text = fh.read()
    starts = _quoted_record_lines(text, sep)
    if starts is None:
        starts = _stdlib_record_lines(text, sep)
    if starts is None or (n_records is not None and len(starts) != n_records):
        return None
    return starts


def _may_span_lines(path: Path, encoding: str, n_records: int) -> bool:
    """Whether some CSV record may span lines: the file has a quote and more lines than records."""
    probe = '"\n\r,\t'
    if codecs.lookup(encoding).name.startswith(("utf-16", "utf-32")) or probe.encode(
        encoding
    ) != probe.encode("ascii"):
        return _count_lines(path, _bom_tolerant(encoding)) != n_records
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        if mm.find(b'"') < 0:
            return False
        a = np.frombuffer(mm, dtype=np.uint8)
        try:
            lines = np.count_nonzero(a == 0x0A) + (a[-1] not in (0x0A, 0x0D))
            cr = np.count_nonzero(a == 0x0D)
            if cr:  # a CR ends a line unless a LF follows it
                lines += cr - np.count_nonzero((a[:-1] == 0x0D) & (a[1:] == 0x0A))
        finally:
            del a  # the map cannot close while numpy holds its buffer
    return int(lines) != n_records


def _quoted_record_lines(text: str, sep: str) -> np.ndarray | None:
    """Record start lines from the parity of the quotes before each line end (None when a quote
    sits inside an unquoted field, where parity says nothing)."""
    a = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    n = len(a)
    lf, cr = a == 0x0A, a == 0x0D
    cr[:-1] &= ~lf[1:]  # a CR followed by LF is part of one line end
    ends = np.flatnonzero(lf | cr)
    quotes = np.flatnonzero(a == 0x22)
    if len(quotes) % 2:  # a quoted field runs to the end of the file (pandas refuses it)
        quotes = np.append(quotes, n)
    opens, closes = quotes[0::2], quotes[1::2]
    starts_field = (0x0A, 0x0D, ord(sep))
    before = a[np.maximum(opens - 1, 0)]
    after = a[np.minimum(closes + 1, n - 1)]
    doubled_before = np.concatenate(([-2], closes[:-1])) == opens - 1  # the "" of an escape
    doubled_after = np.concatenate((opens[1:], [-2])) == closes + 1
    if not (
        ((opens == 0) | np.isin(before, starts_field) | doubled_before).all()
        and ((closes >= n - 1) | np.isin(after, starts_field) | doubled_after).all()
    ):
        return None
    record_ends = ends[np.searchsorted(quotes, ends) % 2 == 0]
    starts = np.concatenate(([0], record_ends + 1))
    return 1 + np.searchsorted(ends, starts[starts < n])


def _stdlib_record_lines(text: str, sep: str) -> np.ndarray | None:
    reader = csv.reader(StringIO(text, newline=""), delimiter=sep)
    starts, done = [], 0
    try:
        for _ in reader:
            starts.append(done + 1)
            done = reader.line_num
    except csv.Error:  # the records before the one it cannot read
        pass
    return np.asarray(starts, dtype=np.int64)


def _decode(path: Path, encoding: str = "utf-8") -> str:
    """A file's text (a leading UTF-8 BOM dropped); a byte that does not decode is one line
    naming its line and offset."""
    data = path.read_bytes()
    try:
        return data.decode(_bom_tolerant(encoding))
    except UnicodeDecodeError as exc:
        utf8 = codecs.lookup(encoding).name == "utf-8"
        raise InputError(
            f"not {'UTF-8' if utf8 else encoding} text: byte 0x{data[exc.start]:02x} at offset "
            f"{exc.start} cannot be decoded"
            + (
                " (save the file as UTF-8; Windows exports are often cp1252 or latin-1)"
                if utf8
                else ""
            ),  # fmt: skip
            file=path,
            line=data.count(b"\n", 0, exc.start) + 1,
        ) from None


def _read_jsonl(path: Path, text: list[str], encoding: str) -> pd.DataFrame:
    records, lines = read_jsonl(path, encoding=encoding)
    df = pd.DataFrame.from_records(records, index=lines)
    for name in text:
        if name in df.columns:
            df[name] = _as_text_series([r.get(name) for r in records], df.index)
    return df


def _read_json(path: Path, text: list[str], encoding: str) -> pd.DataFrame:
    """A JSON list of row objects, one row object, or one object of equally long column lists
    (or of columns keyed by row label, as pandas' ``to_json`` writes)."""
    source = _decode(path, encoding)
    obj = load_json(source, file=path)
    if _is_columns(obj):
        return _json_columns(obj, path, text)
    if isinstance(obj, dict):
        obj = [obj] if obj else []
    if not isinstance(obj, list) or not all(isinstance(r, dict) for r in obj):
        raise InputError(
            "expected a JSON list of objects (one per row) or an object of column lists",
            file=path,
        )
    df = pd.DataFrame.from_records(obj)
    lines = _json_record_lines(source, len(obj))
    if lines is not None:
        df.index = pd.Index(lines)
        df.attrs["index_is_line"] = True
    for name in text:
        if name in df.columns:
            df[name] = _as_text_series([r.get(name) for r in obj], df.index)
    return df


def _is_columns(obj: object) -> TypeGuard[dict[str, Any]]:
    """A JSON object whose every value is a list (or every value an object): columns, not a row."""
    if not isinstance(obj, dict) or not obj:
        return False
    values = list(obj.values())
    return all(isinstance(v, list) for v in values) or all(isinstance(v, dict) for v in values)


def _json_columns(obj: dict, path: Path, text: list[str]) -> pd.DataFrame:
    """``{"student": [...], "skill": [...]}`` (or ``{"student": {"0": ...}, ...}``) as a table;
    columns of different lengths (or row labels) are refused, naming the first that differs."""
    names = list(obj)
    if isinstance(obj[names[0]], dict):
        labels = list(obj[names[0]])
        for name in names[1:]:
            if list(obj[name]) != labels:
                raise InputError(
                    f"a JSON object of columns needs the same row labels in every column; "
                    f"{name!r} differs from {names[0]!r}",
                    file=path,
                )
        columns = {name: list(obj[name].values()) for name in names}
    else:
        columns = obj
        for name in names[1:]:
            if len(columns[name]) != len(columns[names[0]]):
                raise InputError(
                    f"a JSON object of columns needs lists of one length; {names[0]!r} has "
                    f"{len(columns[names[0]])} values, {name!r} has {len(columns[name])}",
                    file=path,
                )
    df = pd.DataFrame({name: pd.Series(values, dtype=None if values else object)
                       for name, values in columns.items()})  # fmt: skip
    for name in text:
        if name in df.columns:
            df[name] = _as_text_series(columns[name], df.index)
    return df


def _json_record_lines(source: str, n: int) -> np.ndarray | None:
    """Line on which each object of a top-level JSON list starts, when each has its own line."""
    if "\n" not in source.strip():
        return None
    data = source.encode("utf-8", "surrogatepass")
    a = np.frombuffer(data, dtype=np.uint8)
    pos, depth = _json_brackets(data)
    if not len(pos) or a[pos[0]] != 0x5B:
        return None
    opens = pos[(depth == 2) & (a[pos] == 0x7B)]
    if len(opens) != n:
        return None
    lines = 1 + np.searchsorted(np.flatnonzero(a == 0x0A), opens)
    return lines if (np.diff(lines) > 0).all() else None


def _as_text(value: object) -> str | None:
    """A JSON value read into a text (identifier) column: strings as written, numbers as their
    text, null as missing, and a list, object or true/false as its JSON text marked
    :class:`JSONText`, so that an identifier check refuses it instead of reading ``"None"`` or
    ``"{'a': 1}"``."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool | list | dict):
        return JSONText(json.dumps(value, ensure_ascii=False))
    if isinstance(value, float) and value != value:
        return None
    return str(value)


def _as_text_series(values: list, index: pd.Index) -> pd.Series:
    out = np.empty(len(values), dtype=object)
    out[:] = [_as_text(v) for v in values]
    return pd.Series(out, index=index, dtype=object)


def _read_parquet(path: Path, text: list[str]) -> pd.DataFrame:
    """A Parquet file in memory; identifier columns as text (numbers written as they print)."""
    try:
        import pyarrow.parquet as pq

        names = pq.read_schema(path).names
        twice = [n for k, n in enumerate(names) if n in names[:k]]
        if twice:
            raise InputError(f"the header names column {twice[0]!r} twice", file=path)
        df = pd.read_parquet(path)
    except ImportError:
        raise missing("scale", f"reading Parquet ({path})", "pyarrow") from None
    except InputError:
        raise
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
    shown = "empty" if not isinstance(value, list | dict) and pd.isna(value) else _shown(value)
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


def _float_or_nan(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return float("nan")


def to_numbers(values: Any) -> Any:
    """``pd.to_numeric(values, errors="coerce")`` that never raises: pandas converts a digit
    string longer than int64 through Python's int and raises ``OverflowError`` past float's range
    (a 400-digit cell), ``errors=`` notwithstanding; such a value becomes inf (or NaN), which the
    callers' finiteness checks refuse, naming the cell."""
    try:
        return pd.to_numeric(values, errors="coerce")
    except (OverflowError, ValueError):
        if not pd.api.types.is_list_like(values):
            return _float_or_nan(values)
        series = values if isinstance(values, pd.Series) else pd.Series(values)
        out = np.array([_float_or_nan(v) for v in series.to_numpy(dtype=object)], dtype=float)
        return pd.Series(out, index=series.index, name=series.name)


def numeric_column(
    df: pd.DataFrame,
    column: str,
    *,
    low: float | None = None,
    high: float | None = None,
    integer: bool = False,
) -> np.ndarray:
    """Return ``df[column]`` as float64 (or int64), checking it is finite and within [low, high]."""
    values = to_numbers(df[column]).to_numpy(dtype=float)
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


def order_column(df: pd.DataFrame, column: str) -> np.ndarray:
    """An ordering column (``order``, a timestamp): int64 when every value is a whole number that
    int64 holds, compared exactly -- distinct nanosecond timestamps above 2**53 would round to
    the same float64 -- and float64 otherwise (checked finite, as :func:`numeric_column`)."""
    number = to_numbers(df[column])
    exact = number.dtype.kind == "i" or (
        number.dtype.kind == "u" and number.max() <= np.iinfo(np.int64).max
    )
    if exact and not number.isna().any():
        return number.to_numpy(dtype=np.int64)
    return numeric_column(df, column)


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")

#: Invisible characters that make two identifiers look the same (Unicode's default-ignorable
#: code points that are not format characters; those, category Cf, are found by category):
#: the combining grapheme joiner, Hangul fillers, Khmer inherent vowels, Mongolian and other
#: variation selectors.
_INVISIBLE = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0\U000e0100-\U000e01ef]"
)

#: what each identifier problem asks for instead (messages of :func:`text_column`)
IDENTIFIER_EXPECTED = {
    "surrounding spaces": "an identifier without surrounding spaces or control characters",
    "a control character": "an identifier without surrounding spaces or control characters",
    "an invisible character": "an identifier without invisible characters (zero-width spaces "
    "and joiners, direction marks, byte-order marks, soft hyphens, variation selectors)",
    "a decomposed character": "an identifier in Unicode's composed form NFC (a letter and a "
    "separate combining accent look the same as the composed letter but are another id)",
    "a compatibility character": "an identifier without compatibility characters (fullwidth "
    "letters and digits, ligatures, superscripts: look-alike forms that NFKC changes)",
}


def _unicode_problem(text: str) -> str | None:
    """Identifiers that look like another: invisible characters, decomposed or compatibility
    forms (Unicode TR 15; TR 36 on look-alike identifiers).  Plain ASCII has none of them."""
    if text.isascii():
        return None
    if _INVISIBLE.search(text) or any(unicodedata.category(c) == "Cf" for c in text):
        return "an invisible character"
    if not unicodedata.is_normalized("NFC", text):
        return "a decomposed character"
    if not unicodedata.is_normalized("NFKC", text):
        return "a compatibility character"
    return None


def identifier_problem(value: object) -> str | None:
    """Why ``value`` cannot be an identifier (student, item, skill, question), or None.

    Checked on the value as read -- before any ``astype(str)``, which in numpy drops a trailing
    NUL and would let ``"skill0\\0"`` pass as ``"skill0"``: surrounding white space (``" s1"`` is
    not ``"s1"``), a control character (C0, DEL, C1) or line/paragraph separator anywhere, or a
    JSON list, object or true/false (:class:`JSONText`, or such a value in a frame built in
    Python), which would otherwise become ``"{'a': 1}"`` or ``"True"``.  Identifiers that would
    look like another are refused too, never normalised silently: an invisible character
    (zero-width space or joiner, direction mark, byte-order mark, soft hyphen, word joiner,
    variation selector), a decomposed form (not NFC: ``"e\\u0301"`` beside ``"\\u00e9"``) or a
    compatibility form (changed by NFKC: fullwidth ``"\\uff53\\uff10\\uff10"`` beside ``"s00"``).
    """
    if isinstance(value, JSONText):
        return f"a JSON {value.json_kind}"
    if isinstance(value, bool | np.bool_ | list | dict | tuple | set):
        return "true/false" if isinstance(value, bool | np.bool_) else "a list or mapping"
    text = value if isinstance(value, str) else str(value)
    if text != text.strip():
        return "surrounding spaces"
    if _CONTROL.search(text):
        return "a control character"
    return _unicode_problem(text)


def unclean_identifiers(values: Iterable[object]) -> np.ndarray:
    """Mask of identifiers that would silently become *other* identifiers (see
    :func:`identifier_problem`).  Pass the values as read (e.g. ``pd.factorize``'s uniques), not
    numpy's ``astype(str)`` of them, which drops trailing NULs."""
    search = _CONTROL.search
    mask = [
        (v != v.strip() or search(v) is not None or _unicode_problem(v) is not None)
        if type(v) is str
        else identifier_problem(v) is not None
        for v in values
    ]
    return np.array(mask, dtype=bool)


def shown(value: object) -> str:
    """A cell as the user wrote it, for messages (never ``np.float64(inf)``)."""
    return _shown(value)


def _shown(value: object) -> str:
    """A cell as the user wrote it: the repr of the plain Python value, never ``np.str_('…')``."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, JSONText):
        return f"the JSON {value.json_kind} {value}"
    return repr(value)


def _factorize(col: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Codes (-1 for missing) and the distinct values as read, as Python objects."""
    values = col.to_numpy(dtype=object)
    try:
        codes, uniques = pd.factorize(values)
    except TypeError:  # unhashable cells (lists, dicts) in a frame built in Python
        hashable = np.empty(len(values), dtype=object)
        hashable[:] = [JSONText(json.dumps(v, default=str)) if isinstance(v, list | dict)
                       else v for v in values]  # fmt: skip
        codes, uniques = pd.factorize(hashable)
    return codes, np.asarray(uniques, dtype=object)


def text_column(df: pd.DataFrame, column: str, *, identifier: bool = False) -> np.ndarray:
    """Return ``df[column]`` as strings, refusing empty cells -- and, for an ``identifier``
    (student, item, skill, question), values :func:`identifier_problem` refuses (surrounding
    spaces, control characters, JSON lists/objects/booleans), checked on the values as read."""
    col = df[column]
    if not identifier:
        blank = col.isna().to_numpy() | (col.astype("string").str.strip() == "").fillna(True)
        if blank.any():
            raise _first_bad(df, np.asarray(blank, dtype=bool), column, "a non-empty value")
        return col.astype(str).to_numpy()
    check_identifiers(df, column)
    return col.astype(str).to_numpy()


def check_identifiers(df: pd.DataFrame, column: str) -> None:
    """The identifier checks of :func:`text_column` alone (no values returned): for a block of a
    dataset, whose ids are used as read."""
    col = df[column]
    codes, uniques = _factorize(col)  # the checks look at each distinct value once
    empty = [k for k, u in enumerate(uniques) if not (u if type(u) is str else str(u)).strip()]
    bad = (codes < 0) | np.isin(codes, empty)
    if bad.any():
        raise _first_bad(df, bad, column, "a non-empty value")
    unclean = np.flatnonzero(unclean_identifiers(uniques))
    if len(unclean):
        rows = np.isin(codes, unclean)
        pos = int(np.flatnonzero(rows)[0])
        value = uniques[codes[pos]]
        kind = identifier_problem(value)
        expected = IDENTIFIER_EXPECTED.get(kind or "", "an identifier (text or a number)")
        raise InputError(
            f"expected {expected}, got {_shown(value)}"
            + (f" ({int(rows.sum())} bad rows in all)" if rows.sum() > 1 else ""),
            file=_file(df),
            line=line_of(df, pos),
            column=column,
        )


def check_unique(df: pd.DataFrame, columns: Sequence[str], *, what: str) -> None:
    """Raise on the first row that repeats an earlier row's values in ``columns``."""
    dup = df.duplicated(list(columns), keep="first").to_numpy()
    if dup.any():
        pos = int(np.flatnonzero(dup)[0])
        key = ", ".join(f"{c}={_shown(df[c].iloc[pos])}" for c in columns)
        raise InputError(f"duplicate {what} ({key})", file=_file(df), line=line_of(df, pos))
