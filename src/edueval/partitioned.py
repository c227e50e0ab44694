"""Datasets larger than memory: a folder or glob of Parquet (or CSV) files, read through
``dask.dataframe`` and regrouped so that each group of rows (a skill) lands whole in one partition.

This is the data side of the executor seam (:mod:`edueval.executor`): protocol code says which
columns it needs, which partition each row belongs to (``part_of``) and what to compute on one
partition (``fn``, plain pandas in, a small result out); this module does the reading, the shuffle
and the scheduling, on the executor's Dask client or, without one, in this process (synchronous
scheduler, shuffling through temporary files on disk).  Only this module and the executor import
Dask.

>>> ds = open_dataset("logs/")                                        # doctest: +SKIP
>>> counts = map_blocks(None, ds, ["skill"], count_fn)               # doctest: +SKIP
>>> results, timing = regroup(None, ds, ["skill", ...], part_of, (mapping,), 8, fit_fn)  # +SKIP
"""

from __future__ import annotations

import csv
import glob as _glob
import io
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .extras import install_command, require
from .io import InputError, check_regular_file

__all__ = ["Dataset", "is_dataset", "open_dataset", "map_blocks", "regroup"]

_PARQUET = (".parquet", ".pq")
_CSV = (".csv",)
INSTALL_HINT = install_command("scale")


@dataclass(frozen=True)
class Dataset:
    """The files of a dataset, all of one kind, with the columns of the first file."""

    source: str
    files: tuple[str, ...]
    kind: str  # "parquet" or "csv"
    columns: tuple[str, ...]
    n_bytes: int

    def describe(self) -> dict[str, Any]:
        """For config.json: where the data came from and how much of it there was."""
        return {
            "source": self.source,
            "kind": self.kind,
            "n_files": len(self.files),
            "bytes": self.n_bytes,
        }

    def require(self, columns: Iterable[str], what: str = "") -> None:
        """Refuse, in one line, a dataset without one of ``columns``."""
        missing = [c for c in columns if c not in self.columns]
        if missing:
            raise InputError(
                f"no column '{missing[0]}'{' (' + what + ')' if what else ''}; the files have "
                + ", ".join(repr(c) for c in self.columns),
                file=self.source,
            )


#: the characters that make a path that names no file a glob: ``*`` and ``?`` only -- brackets,
#: common in file names (``r[1].csv``), are always taken literally
_GLOB = ("*", "?")


def is_dataset(path: str | Path) -> bool:
    """A folder, or a glob pattern -- a path with ``*`` or ``?`` that names no existing file or
    folder (``logs/*.parquet``, ``logs/**/*.csv``): read through :func:`open_dataset`.  One
    file is read into memory, unless a cluster is asked for.  Brackets are never pattern
    characters: ``r[1].csv`` is the file of that name, or "file not found"."""
    text = str(path)
    p = Path(text)
    if p.is_dir():
        return True
    return not p.exists() and any(ch in text for ch in _GLOB)


def _kind(name: str) -> str | None:
    suffix = Path(name).suffix.lower()
    if suffix in _PARQUET:
        return "parquet"
    if suffix in _CSV:
        return "csv"
    return None


def _files(source: str) -> list[str]:
    p = Path(source)
    if p.is_dir():
        found = [str(f) for f in sorted(p.rglob("*")) if f.is_file() and _kind(f.name)]
        hidden = [f for f in found if any(part.startswith((".", "_")) for part in
                                          Path(f).relative_to(p).parts)]  # fmt: skip
        return [f for f in found if f not in hidden]
    if p.exists():
        return [str(p)]
    if not any(ch in source for ch in _GLOB):
        return []
    literal = source.replace("[", "[[]")  # brackets match themselves (see _GLOB)
    return sorted(f for f in _glob.glob(literal, recursive=True) if Path(f).is_file())


def _columns(path: str, kind: str) -> tuple[str, ...]:
    try:
        if kind == "parquet":
            import pyarrow.parquet as pq

            return tuple(pq.read_schema(path).names)
        with open(path, encoding="utf-8-sig", newline="") as fh:
            header = next(csv.reader(fh), [])
        return tuple(header)
    except (OSError, ValueError, csv.Error) as exc:  # pyarrow's ArrowInvalid is a ValueError
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"cannot read the file: {first}", file=path) from None


def _has_rows(path: str) -> bool:
    """Whether a CSV file holds anything but blank lines after its header."""
    with open(path, "rb") as fh:
        fh.readline()
        while chunk := fh.read(2**16):
            if chunk.strip():
                return True
    return False


def open_dataset(source: str | Path) -> Dataset:
    """The files behind ``source`` (a folder, searched recursively; a glob; or one file).

    Refuses, in one line: nothing found, files of other kinds than Parquet/CSV, a mix of both,
    files whose columns differ from the first file's.
    """
    _dask()  # a dataset needs dask (and pyarrow): say so before anything else
    source = str(source)
    files = _files(source)
    if not files:
        raise InputError("no Parquet or CSV files found", file=source)
    kinds = {_kind(f) for f in files}
    if None in kinds:
        odd = next(f for f in files if _kind(f) is None)
        raise InputError("expected .parquet or .csv files", file=odd)
    if len(kinds) > 1:
        raise InputError("a dataset is all Parquet or all CSV, not both", file=source)
    kind = kinds.pop()
    assert kind is not None  # files of neither kind were refused above
    for f in files:
        check_regular_file(f)
    columns = _columns(files[0], kind)
    for f in files:
        other = _columns(f, kind) if f != files[0] else columns
        twice = [c for k, c in enumerate(other) if c in other[:k]]
        if twice:
            raise InputError(f"the header names column {twice[0]!r} twice", file=f)
        if not other or other == ("",):
            raise InputError("the file is empty; expected a header line and rows", file=f)
        if kind == "csv" and not _has_rows(f):
            raise InputError("no data rows; expected at least one row after the header", file=f)
        if set(other) != set(columns):
            raise InputError(
                f"columns differ from those of {files[0]} ({', '.join(columns)})", file=f
            )
    n_bytes = sum(Path(f).stat().st_size for f in files)
    # absolute paths: a remote worker reads them from its own working directory
    files = [str(Path(f).resolve()) for f in files]
    return Dataset(source, tuple(files), kind, columns, n_bytes)


def _dask():
    what = "reading a dataset (a folder or glob of Parquet/CSV files)"
    dask = require("dask", "scale", what)
    dd = require("dask.dataframe", "scale", what)
    require("pyarrow", "scale", what)  # dask.dataframe reads and shuffles through it
    return dask, dd


#: bytes of CSV per block (a block is a task's unit of reading)
CSV_BLOCK_BYTES = 64 * 2**20
#: rows per Parquet row group from which each row group is a block of its own (else a file is)
ROWS_PER_GROUP_BLOCK = 100_000


@dataclass(frozen=True)
class Piece:
    """One block of a dataset as read: ``file`` and, for CSV, the bytes ``[start, stop)`` whose
    lines it holds (a line belongs to the block it starts in); for Parquet, the row groups
    ``[start, stop)``, or the whole file when ``stop`` is -1."""

    file: str
    kind: str
    start: int
    stop: int


def _pieces(ds: Dataset, block_bytes: int = CSV_BLOCK_BYTES) -> list[Piece]:
    out = []
    for f in ds.files:
        if ds.kind == "parquet":
            import pyarrow.parquet as pq

            meta = pq.ParquetFile(f).metadata
            per_group = meta.num_rows / max(meta.num_row_groups, 1)
            if per_group >= ROWS_PER_GROUP_BLOCK:
                out += [Piece(f, "parquet", g, g + 1) for g in range(meta.num_row_groups)]
            else:
                out.append(Piece(f, "parquet", 0, -1))
            continue
        with open(f, "rb") as fh:
            body = len(fh.readline())  # the header line
        size = Path(f).stat().st_size
        starts = list(range(body, max(size, body + 1), block_bytes))
        out += [Piece(f, "csv", a, min(a + block_bytes, size)) for a in starts]
    return out


def _piece_bytes(piece: Piece) -> tuple[bytes, bytes, int]:
    """The header line, the lines that start in the piece's byte range, and where they start."""
    with open(piece.file, "rb") as fh:
        header = fh.readline()
        if piece.start > len(header):
            fh.seek(piece.start - 1)
            if fh.read(1) != b"\n":
                fh.readline()  # the rest of a line that began in the previous piece
        first = fh.tell()
        if first >= piece.stop:
            return header, b"", first
        data = fh.read(piece.stop - first)
        if not data.endswith(b"\n"):
            data += fh.readline()
    return header, data, first


def _lines_before(file: str, position: int) -> int:
    """Lines that end before byte ``position`` (read only to name a bad line)."""
    n = 0
    with open(file, "rb") as fh:
        while position > 0:
            chunk = fh.read(min(position, 2**24))
            if not chunk:
                break
            n += chunk.count(b"\n")
            position -= len(chunk)
    return n


def read_piece(piece: Piece, wanted: Sequence[str], text_columns: Iterable[str] = ()):
    """One block as a pandas frame with the ``wanted`` columns in that order, whatever the order of the
    file's header.  Text columns are read as written ("007", "NA" and "null" are values; only
    an empty cell is missing); the index of a CSV block holds line numbers -- exact for a
    file's first block, counted from the block's first line otherwise (see
    :func:`_block_error`)."""
    import pandas as pd

    text = set(text_columns)
    columns = list(wanted)
    if piece.kind == "parquet":
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(piece.file)
        groups = range(pf.num_row_groups) if piece.stop < 0 else range(piece.start, piece.stop)
        df = pf.read_row_groups(list(groups), columns=columns).to_pandas()
        for name in text & set(df.columns):
            if not pd.api.types.is_string_dtype(df[name].dtype):
                df[name] = df[name].where(df[name].isna(), df[name].astype(str))
        return df[columns]
    header, data, _ = _piece_bytes(piece)
    try:
        df = pd.read_csv(
            io.BytesIO(header + data),
            usecols=columns,
            dtype={c: str for c in columns if c in text},
            keep_default_na=False,
            na_values=[""],
            encoding="utf-8-sig",
        )
    except (ValueError, pd.errors.ParserError) as exc:  # UnicodeDecodeError is a ValueError
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"cannot read the block starting at byte {piece.start}: {first}",
                         file=piece.file) from None  # fmt: skip
    first_line = 2 if piece.start <= len(header) else 1
    df.index = _record_lines(header, data, len(df)) + (first_line - 2)
    return df[columns]


def _record_lines(header: bytes, data: bytes, n: int):
    """The line each of the ``n`` records of ``header + data`` starts on (header: line 1),
    counting the lines of a quoted field that spans several (as :func:`edueval.io.read_table`
    does); one line per record where that cannot be told."""
    import numpy as np
    import pandas as pd

    if b'"' in data:
        from .io import _quoted_record_lines

        text = (header + data).decode("utf-8-sig", errors="replace")
        lines = _quoted_record_lines(text, ",")
        if lines is not None and len(lines) == n + 1:
            return pd.Index(np.asarray(lines[1:], dtype=np.int64))
    elif b"\n\n" in data or b"\n\r\n" in data or data.startswith((b"\n", b"\r\n")):
        # blank lines, which pandas skips: each record on the next line that is not blank
        a = np.frombuffer(header + data, dtype=np.uint8)
        ends = np.flatnonzero(a == 0x0A)
        starts = np.concatenate(([0], ends + 1))
        stops = np.append(ends, len(a))
        width = stops - starts - (a[np.maximum(stops - 1, 0)] == 0x0D)
        filled = np.flatnonzero(width[: len(stops)] > 0) + 1  # 1-based line numbers
        if len(filled) == n + 1:
            return pd.Index(filled[1:].astype(np.int64))
    return pd.RangeIndex(2, 2 + n)


def _block_error(piece: Piece, exc: InputError) -> InputError:
    """``exc`` raised on a block, with the block's file and, for a CSV block after a file's
    first, its line counted from the start of the file."""
    line = exc.line
    if line is not None and piece.kind == "csv":
        header, _, first = _piece_bytes(piece)
        if first > len(header):
            line += _lines_before(piece.file, first)
    elif piece.kind == "parquet":
        line = None  # Parquet has rows, not lines; the file is named
    return InputError(exc.message, file=exc.file or piece.file, line=line, column=exc.column)


def _frame(ds: Dataset, columns: Sequence[str], text_columns: Iterable[str] = ()):
    """The dataset's ``columns`` as a dask DataFrame (one partition per :class:`Piece`, read by
    :func:`read_piece`, never through Dask's own file globbing) and the pieces."""
    _, dd = _dask()
    columns = list(dict.fromkeys(columns))
    ds.require(columns)
    pieces = _pieces(ds)
    text = tuple(text_columns)
    first = pieces[0]
    if first.kind == "csv":  # the types of the first lines stand for the rest (as in Dask)
        first = Piece(first.file, "csv", first.start, min(first.stop, first.start + 2**16))
    meta = read_piece(first, columns, text).iloc[:0]
    frame = dd.from_map(read_piece, pieces, args=(columns, text), meta=meta,
                        enforce_metadata=False)  # fmt: skip
    return frame, pieces


def _compute(client: Any, tasks: list) -> list:
    dask, _ = _dask()
    if client is None:
        with dask.config.set(scheduler="synchronous"):
            return list(dask.compute(*tasks))
    from distributed import KilledWorker

    try:
        return list(client.gather(client.compute(tasks)))
    except KilledWorker as exc:
        raise _worker_died(client, exc) from None


def _prepare(client: Any, *objects: Any) -> None:
    """On a cluster, the workers import the modules of the task functions and their arguments
    before the tasks arrive (:func:`edueval.executor.prepare_workers`)."""
    if client is not None:
        from .executor import prepare_workers

        prepare_workers(client, *objects)


def _worker_died(client: Any, exc: Exception) -> Exception:
    """One line for a task whose workers kept dying (almost always: out of memory)."""
    from .io import RunFailed

    limits = {w.get("memory_limit") for w in client.scheduler_info().get("workers", {}).values()}
    limit = ", ".join(f"{m / 2**30:.1f} GiB" for m in sorted(x for x in limits if x))
    return RunFailed(
        "a Dask worker died while running the same task on several workers, most often out of "
        f"memory (worker limit {limit or 'unknown'}): give the workers more memory (--cluster "
        "local:N:MEMORY) or the data smaller files or row groups; Dask said: "
        + " ".join(str(exc).split())[:300]
    )


def map_blocks(
    client: Any,
    ds: Dataset,
    columns: Sequence[str],
    fn: Callable[..., Any],
    args: tuple = (),
    text_columns: Iterable[str] = (),
) -> list:
    """``fn(block, *args)`` on each block of rows as read (a file, a row group), in file order."""
    dask, _ = _dask()
    frame, pieces = _frame(ds, columns, text_columns)
    call = dask.delayed(_on_block, pure=False)
    _prepare(client, fn, *args)
    return _compute(
        client, [call(b, p, fn, args) for b, p in zip(frame.to_delayed(), pieces, strict=True)]
    )


def _on_block(block, piece: Piece, fn: Callable[..., Any], args: tuple) -> Any:
    """``fn(block, *args)`` with the block's file in ``attrs`` (errors name it, and the line)."""
    block.attrs["file"] = piece.file
    block.attrs["index_is_line"] = piece.kind == "csv"
    try:
        return fn(block, *args)
    except InputError as exc:
        raise _block_error(piece, exc) from None


def _assign_part(block, part_of, args, offsets, partition_info=None):
    if offsets is not None:  # number the rows in file order, before any is left out
        import numpy as np

        start = offsets[partition_info["number"]] if partition_info else 0
        block = block.assign(_row=np.arange(start, start + len(block), dtype=np.int64))
    part = part_of(block, *args)
    return block.assign(_part=part)[lambda d: d["_part"] >= 0]


@dataclass
class Timing:
    """Seconds of task time by phase (read, shuffle, compute) and wall time of the regroup; in
    process only the wall time is measured (``by_phase`` False)."""

    wall: float = 0.0
    read: float = 0.0
    shuffle: float = 0.0
    compute: float = 0.0
    other: float = 0.0
    by_phase: bool = True

    def as_dict(self) -> dict[str, float]:
        names = ("wall", "read", "shuffle", "compute", "other") if self.by_phase else ("wall",)
        return {k: round(getattr(self, k), 3) for k in names}


def _phase(key: Any, fn_name: str) -> str:
    name = key[0] if isinstance(key, tuple) else str(key)
    name = str(name)
    if fn_name in name:
        return "compute"
    if "read" in name or "from-delayed" in name or "csv" in name:
        return "read"
    if "shuffle" in name or "set_index" in name or "set-index" in name or "p2p" in name:
        return "shuffle"
    return "other"


def _timing_of(stream: list[dict], fn_name: str, wall: float) -> Timing:
    t = Timing(wall=wall)
    for task in stream:
        spent = sum(
            s["stop"] - s["start"] for s in task.get("startstops", ()) if s["action"] == "compute"
        )
        phase = _phase(task["key"], fn_name)
        setattr(t, phase, getattr(t, phase) + spent)
    return t


def regroup(
    client: Any,
    ds: Dataset,
    columns: Sequence[str],
    part_of: Callable[..., Any],
    part_args: tuple,
    n_parts: int,
    fn: Callable[..., Any],
    fn_args: tuple = (),
    text_columns: Iterable[str] = (),
    offsets: Sequence[int] | None = None,
    reduce: Callable[..., Any] | None = None,
) -> tuple[list, Timing]:
    """Shuffle the rows into ``n_parts`` partitions and return ``[fn(part, i, *fn_args)]``.

    With ``offsets`` (the first row number of each block, from a pass of :func:`map_blocks`),
    every row gets its position in the dataset -- files in name order, rows as written -- in a
    column ``_row``, for data whose order is the order of the rows.  With ``reduce``, each
    tagged block is first reduced (``reduce(block)`` keeps ``_part``; it must accept an empty
    block), and the reduced rows are shuffled instead of the rows read.

    ``part_of(block, *part_args)`` gives each row's partition number in ``0 .. n_parts - 1``
    (negative: leave the row out); every row with the same number lands in partition ``i`` (an
    exact range partitioning on that number, not a hash), with its other columns as read.  The
    function's results come back in partition order, with the task time spent reading,
    shuffling and in ``fn`` (on a cluster; in process only the wall time).
    """
    dask, _ = _dask()
    frame, _ = _frame(ds, columns, text_columns)
    empty = frame._meta.index.to_numpy(dtype="int64")[:0]
    meta = frame._meta.assign(**({"_row": empty} if offsets is not None else {}), _part=empty)
    tagged = frame.map_partitions(_assign_part, part_of, part_args, offsets, meta=meta)
    if reduce is not None:
        tagged = tagged.map_partitions(reduce, meta=reduce(meta))
    divisions = list(range(n_parts)) + [n_parts - 1]
    method = None if client is not None else "disk"
    shuffled = tagged.set_index("_part", divisions=divisions, shuffle_method=method)
    call = dask.delayed(fn, pure=False, name=f"{fn.__name__}")
    tasks = [call(p, i, *fn_args, dask_key_name=f"{fn.__name__}-{i}-{time.monotonic_ns()}")
             for i, p in enumerate(shuffled.to_delayed())]  # fmt: skip
    _prepare(client, _assign_part, part_of, *part_args, reduce, fn, *fn_args)
    start = time.perf_counter()
    if client is None:
        results = _compute(None, tasks)
        return results, Timing(wall=time.perf_counter() - start, by_phase=False)
    from distributed import get_task_stream

    with get_task_stream(client) as stream:
        results = _compute(client, tasks)
    wall = time.perf_counter() - start
    return results, _timing_of(stream.data, fn.__name__, wall)
