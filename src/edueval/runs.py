"""The run directory every command writes.

Layout::

    DIR/config.json    parameters, seed, package versions, input file hashes, status
    DIR/*.csv          result tables
    DIR/figures/*.png  figures (also embedded in the report)
    DIR/report.html    tables and figures, one self-contained file that opens offline
    DIR/results.json   headline numbers, machine readable -- written last

A run that stops half-way leaves ``config.json`` with ``"status": "running"`` and no
``results.json``: nothing in it looks complete.  Every file is written to a temporary name and
renamed into place, so no file is ever seen half-written.
"""

from __future__ import annotations

import datetime as _dt
import glob as _glob
import json
import os
import platform
import sys
import tempfile
from collections.abc import Iterable, Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pandas as pd

from .io import InputError, RunFailed, atomic_write, file_sha256
from .results import to_jsonable

__all__ = [
    "RunDir",
    "RunFailed",
    "atomic_write",
    "package_versions",
    "to_jsonable",
    "default_out",
    "mark_open_runs",
    "check_out_dir",
    "check_out_file",
    "check_apart",
    "expand_inputs",
    "saved_run",
]

#: Statuses a run directory's ``config.json`` can hold.  ``running`` while the command works;
#: ``complete`` when every result was written; ``failed`` when the run ended but its results are
#: incomplete (e.g. too many failed model calls: ``results.json`` says so); ``interrupted`` after
#: Ctrl-C; ``error`` when the command stopped on an error after the directory was created.
STATUSES = ("running", "complete", "failed", "interrupted", "error")


_open_runs: list[RunDir] = []


def mark_open_runs(status: str) -> list[Path]:
    """Mark every run directory of this process that is still ``running`` with ``status``
    (``interrupted`` on Ctrl-C, ``error`` on a failure); returns their paths."""
    marked = []
    for run in list(_open_runs):
        if run.config.get("status") == "running":
            run.config["status"] = status
            run.config["finished"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
            try:
                run._write_config()
            except OSError:
                continue
            marked.append(run.path)
    _open_runs.clear()
    return marked


_TRACKED_PACKAGES = (
    "edueval",
    "numpy",
    "scipy",
    "pandas",
    "numba",
    "scikit-learn",
    "statsmodels",
    "matplotlib",
    "jax",
    "numpyro",
    "openai",
    "llama-cpp-python",
    "xllamacpp",
)


def package_versions() -> dict[str, str]:
    """Versions of Python and the packages whose behaviour can change a result."""
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for name in _TRACKED_PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            continue
    return out


def default_out(command: str) -> Path:
    """``runs/<command>-<timestamp>``: where a run goes when ``--out`` is not given."""
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"{command.replace(' ', '-')}-{stamp}"


def _blocking_ancestor(path: Path) -> str | None:
    """Why ``path`` cannot be created, judged from the nearest part of it that exists."""
    for parent in [path, *path.parents]:
        if not parent.exists():
            continue
        if not parent.is_dir():
            return f"{parent} is a file, not a directory"
        if not os.access(parent, os.W_OK | os.X_OK):
            return f"cannot write in {parent} (permission denied)"
        return _probe_write(parent)
    return None


def _probe_write(folder: Path) -> str | None:
    """Create and remove an empty folder in ``folder``: the only test that also holds for root
    and for read-only or kernel file systems, where permission bits do not tell."""
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".edueval-probe-", dir=folder))
    except OSError as exc:
        return f"cannot write in {folder} ({exc.strerror or exc})"
    return None


def _run_command(path: Path) -> str | None:
    """The command recorded in the run directory ``path``, or None if it holds no run."""
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    command = config.get("command") if isinstance(config, dict) else None
    return command if isinstance(command, str) else None


#: What an output may be checked against: paths (files, folders, quoted globs) or None (an
#: optional input not given).
Inputs = Iterable[str | Path | None]


def _real(path: str | Path) -> Path:
    """``path`` absolute, with every symbolic link in its existing part resolved."""
    return Path(os.path.realpath(os.path.abspath(os.fspath(path))))


def expand_inputs(inputs: Inputs) -> list[tuple[str, Path]]:
    """Each input as ``(as given, real path)``; a quoted glob that names no file is expanded to
    the files it matches (``kt fit 'r*.csv'``), an input not given (None) is skipped."""
    out: list[tuple[str, Path]] = []
    for given in inputs:
        if given is None or str(given) == "":
            continue
        text = os.fspath(given)
        matches = [] if os.path.lexists(text) or not _glob.has_magic(text) else _glob.glob(text)
        out.extend((text, _real(p)) for p in matches or [text])
    return out


def _is_within(inner: Path, outer: Path) -> bool:
    return inner != outer and outer in inner.parents


def _same(a: Path, b: Path) -> bool:
    """The same file: the same real path, or (hard links, case-insensitive file systems) the
    same device and inode."""
    if a == b:
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_apart(out: str | Path, inputs: Inputs, *, what: str = "out=") -> None:
    """Refuse (one line, :class:`~edueval.io.InputError`) an output that is an input, holds
    one (a folder with an input in it) or lies inside an input folder -- whatever overwrite=
    says: the command would replace or delete what it reads.  Checked before anything is
    written or removed."""
    target = _real(out)
    for given, real in expand_inputs(inputs):
        if _same(target, real):
            problem = f"is the input {given}"
        elif _is_within(real, target):
            problem = f"holds the input {given}"
        elif _is_within(target, real):
            problem = f"lies inside the input folder {given}"
        else:
            continue
        raise InputError(f"{what} {out} {problem}; an output never goes over an input: "
                         "choose another path")  # fmt: skip


def _foreign_files(path: Path, own: Iterable[str]) -> list[str]:
    """Files at the top of ``path`` that no edueval run wrote (``path`` holding no run):
    the names of its visible plain files, less ``own`` (the command's own, e.g. the demo's
    index)."""
    try:
        entries = list(os.scandir(path))
    except OSError:
        return []
    skip = set(own)
    return sorted(e.name for e in entries
                  if not e.name.startswith(".") and e.name not in skip and not e.is_dir())  # fmt: skip


def check_out_dir(
    path: str | Path,
    command: str,
    *,
    inputs: Inputs,
    overwrite: bool = False,
    own: Iterable[str] = (),
    files: Iterable[str] = (),
) -> Path:
    """Check a run directory before any work starts; returns it as a :class:`Path`.

    Refused with one line (:class:`~edueval.io.InputError`): a path that is a file or lies under
    a file, a folder that cannot be written, an output that is, holds or lies inside one of
    ``inputs`` (:func:`check_apart`, whatever ``overwrite`` says), a folder that holds files no
    edueval run wrote (they are never replaced: a new or empty folder, or an earlier run's, is
    needed; ``own`` names files of the command's own that may be there), and -- unless
    ``overwrite`` -- a folder holding the run of a *different* command (re-using ``runs/fit``
    for P1 and then P2 would otherwise delete the first results).  The same command may replace
    its own earlier run.  With ``overwrite``, the other command's run files are removed first.
    Also refused: a folder, FIFO or other non-file where the run writes ``config.json``,
    ``results.json``, ``report.html`` or one of ``files`` (the command's own files).
    """
    path = Path(path)
    problem = _blocking_ancestor(path)
    if problem is not None:
        raise InputError(f"out= {path}: {problem}")
    check_apart(path, inputs)
    if not path.is_dir():
        return path
    for name in ("config.json", "results.json", "report.html", *files):
        if os.path.lexists(path / name) and not (path / name).is_file():
            raise InputError(f"out= {path}: {name} there is not a file (a folder or special "
                             "file); the run writes that file: choose another directory")  # fmt: skip
    other = _run_command(path)
    if other is None:
        foreign = _foreign_files(path, own)
        if foreign:
            shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
            raise InputError(f"out= {path} holds files that edueval did not write ({shown}); "
                             "they are never replaced: choose a new or empty directory")  # fmt: skip
    elif other != command:
        if not overwrite:
            raise InputError(
                f"out= {path} holds the results of '{other}'; choose another directory, or "
                "set overwrite= to replace them"
            )
        clear_run(path)
        (path / "config.json").unlink(missing_ok=True)
    return path


def check_out_file(path: str | Path, *, inputs: Inputs, own: bytes | None = None) -> Path:
    """Check an output file before any work starts (not a folder, its folder writable, not
    one of ``inputs`` nor inside an input folder).  An existing file is replaced only if it
    begins with ``own`` (the first bytes of what the command writes): a file edueval did not
    write -- a database, a study file, another run's table -- is never replaced."""
    path = Path(path)
    if path.is_dir():
        raise InputError(f"out= {path}: is a directory, expected a file name")
    problem = _blocking_ancestor(path.parent)
    if problem is None and path.exists() and not os.access(path, os.W_OK):
        problem = "cannot write the file (permission denied)"
    if problem is not None:
        raise InputError(f"out= {path}: {problem}")
    check_apart(path, inputs)
    if path.exists() and not _begins_with(path, own) and path.stat().st_size > 0:
        raise InputError(f"out= {path} exists and was not written by this command; it is "
                         "never replaced: choose another file name")  # fmt: skip
    return path


def _begins_with(path: Path, own: bytes | None) -> bool:
    if own is None:
        return False
    try:
        with open(path, "rb") as fh:
            return fh.read(len(own)) == own
    except OSError:
        return False


def clear_run(path: str | Path) -> None:
    """Remove what a run wrote in ``path``: its completion markers, report, call log, and the
    tables and figures it listed (files it did not list, such as the user's own, stay)."""
    path = Path(path)
    previous = path / "results.json"
    if previous.exists():
        try:
            listed = json.loads(previous.read_text()).get("tables", {})
        except (json.JSONDecodeError, OSError, AttributeError, RecursionError):
            listed = {}
        for name in listed.values() if isinstance(listed, dict) else []:
            target = path / str(name)
            if target.parent == path and target.suffix == ".csv":
                target.unlink(missing_ok=True)
    for stale in ("results.json", "report.html", "calls.jsonl"):
        (path / stale).unlink(missing_ok=True)
    figures = path / "figures"
    if figures.is_dir():
        for png in figures.glob("*.png"):
            png.unlink()


def saved_run(
    folder: str | Path,
    command: str,
    *,
    params: Mapping[str, Any],
    seed: int | None = None,
    overwrite: bool = False,
    files: Iterable[str] = (),
) -> RunDir:
    """The run directory of a results object's ``save(folder)``: ``folder`` checked as the
    command checks ``--out`` (:func:`check_out_dir`), then opened with the parameters the results
    object knows and no input files (the tables came from Python)."""
    path = check_out_dir(folder, command, inputs=(), overwrite=overwrite, files=files)
    return RunDir(path, command=command, params=params, seed=seed)


class RunDir:
    """A run directory: create it, add tables and figures, then :meth:`finish`.

    Parameters
    ----------
    path : folder to write (created if needed; a previous run's files there are replaced).
    command : the command that produced it, e.g. ``"kt fit"``.
    params : every parameter of the run (JSON-serialisable after :func:`to_jsonable`).
    seed : the run's seed, if anything in it is random.
    inputs : named input files; their size and SHA-256 go into ``config.json``.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        command: str,
        params: Mapping[str, Any],
        seed: int | None = None,
        inputs: Mapping[str, str | Path] | None = None,
    ) -> None:
        self.path = Path(path)
        check_apart(self.path, (inputs or {}).values())
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(
                f"cannot create the run directory {self.path}: {exc.strerror}"
            ) from exc
        clear_run(self.path)
        self.tables: dict[str, Path] = {}
        self.figures: dict[str, Path] = {}
        self.config: dict[str, Any] = {
            "command": command,
            "status": "running",
            "started": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "seed": seed,
            "params": to_jsonable(dict(params)),
            "inputs": {
                name: {
                    "path": str(p),
                    "bytes": Path(p).stat().st_size,
                    "sha256": file_sha256(p),
                }
                for name, p in (inputs or {}).items()
            },
            "versions": package_versions(),
        }
        self._write_config()
        _open_runs.append(self)

    def _write_config(self) -> None:
        atomic_write(self.path / "config.json", json.dumps(self.config, indent=2) + "\n")

    def table(self, name: str, df: pd.DataFrame, *, index: bool = False) -> Path:
        """Write a CSV table ``name.csv`` (atomically) and remember it for the manifest."""
        path = self.path / f"{name}.csv"
        atomic_write(path, df.to_csv(index=index, lineterminator="\n"))
        self.tables[name] = path
        return path

    def figure(self, name: str, fig: Any) -> Path:
        """Save a matplotlib figure (or PNG bytes already rendered) as ``figures/name.png``."""
        from .report.figures import png_bytes

        path = self.path / "figures" / f"{name}.png"
        atomic_write(path, fig if isinstance(fig, bytes) else png_bytes(fig))
        self.figures[name] = path
        return path

    def text(self, name: str, content: str) -> Path:
        """Write any other text file into the run directory."""
        return atomic_write(self.path / name, content)

    def finish(
        self,
        results: Mapping[str, Any],
        report_html: str | None = None,
        *,
        status: str = "complete",
    ) -> None:
        """Write the report, then ``results.json``, then mark ``config.json`` with ``status``:
        ``complete``, or ``failed`` for a run whose results are incomplete (``results.json`` then
        carries ``"status": "failed"`` too, so no reader takes it for a complete run)."""
        if status not in ("complete", "failed"):
            raise ValueError(f"a finished run is 'complete' or 'failed', not {status!r}")
        if report_html is not None:
            atomic_write(self.path / "report.html", report_html)
        payload = dict(to_jsonable(dict(results)))
        payload.setdefault("tables", {k: v.name for k, v in self.tables.items()})
        payload["status"] = status
        atomic_write(self.path / "results.json", json.dumps(payload, indent=2) + "\n")
        self.config["status"] = status
        self.config["finished"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
        self._write_config()
        if self in _open_runs:
            _open_runs.remove(self)
