"""``study export``: the answers as the exact CSV the analysis commands read, in a run directory."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd

from ..report import Report
from ..runs import RunDir
from .config import Study
from .db import StudyDB

__all__ = ["export_run", "EXPORT_NAMES", "spreadsheet_safe", "write_private"]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

EXPORT_NAMES = {"comparative": "comparisons", "open": "phase1", "mcq": "choices"}


def export_run(out: Path, study: Study, db: StudyDB) -> dict:
    """Write ``comparisons.csv`` (read by ``pairwise fit``), ``choices.csv`` (``turing analyze``)
    or ``phase1.csv`` (``turing generate``), plus the run directory's config/results/report."""
    name = EXPORT_NAMES[study.kind]
    run = RunDir(out, command="study export", params={"kind": study.kind, "db": _redact(db.url)},
                 inputs={"study": study.path})  # fmt: skip
    table = db.export()
    run.table(name, table)
    status = db.status()
    who = "rater" if study.kind == "comparative" else "student"
    res = {"file": f"{name}.csv", "n_rows": len(table),
           "n_participants": int(table[who].nunique()) if len(table) else 0, **status}  # fmt: skip
    rep = Report(f"Study export: {study.title}", f"{study.kind} study, {len(table)} answers")
    rep.section("Status").table(pd.DataFrame([status]))
    rep.section("First rows").table(table.head(20))
    run.finish(res, rep.render())
    return res


def _neutralise(value: object) -> object:
    if not isinstance(value, str) or not value.startswith(_FORMULA_START):
        return value
    try:
        float(value)  # "-5" or "+3.5" is a number, not a formula
        return value
    except ValueError:
        return "'" + value


def spreadsheet_safe(table: pd.DataFrame) -> pd.DataFrame:
    """The table with every text cell that a spreadsheet would run as a formula (starting with
    ``=``, ``+``, ``-``, ``@``, a tab or a carriage return, and not a plain number) prefixed
    with ``'``, as OWASP advises for CSV downloads.  Used for the CSVs meant to be opened in a
    spreadsheet (the admin download, the invite links), not for the files edueval reads back."""
    return table.apply(
        lambda col: (
            col.map(_neutralise)
            if pd.api.types.is_string_dtype(col.dtype) or col.dtype == object
            else col
        )
    )


def _redact(url: str) -> str:
    """A database URL without its password."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "<unparseable url>"


def write_private(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` readable and writable by its owner only (mode 0600, whatever
    the umask), through a temporary file in the same folder and an atomic rename: the invite
    links hold each participant's token, and a reader never sees half a file.  A file already
    at ``path`` is replaced (its permissions are not kept)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)  # mkstemp's own mode, said once more on purpose
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
