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
import json
import os
import platform
import sys
import tempfile
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .io import InputError, RunFailed, atomic_write, file_sha256

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


def to_jsonable(obj: Any) -> Any:
    """Convert numpy/pandas scalars and containers into plain JSON values (NaN -> null)."""
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [to_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, pd.DataFrame):
        return [to_jsonable(r) for r in obj.to_dict(orient="records")]
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return None if not np.isfinite(f) else f
    if isinstance(obj, Path):
        return str(obj)
    return obj


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


def check_out_dir(path: str | Path, command: str, *, overwrite: bool = False) -> Path:
    """Check a run directory before any work starts; returns it as a :class:`Path`.

    Refused with one line (:class:`~edueval.io.InputError`): a path that is a file or lies under
    a file, a folder that cannot be written, and -- unless ``overwrite`` -- a folder holding the
    run of a *different* command (re-using ``runs/fit`` for P1 and then P2 would otherwise
    delete the first results).  The same command may replace its own earlier run.  With
    ``overwrite``, the other command's run files are removed first.
    """
    path = Path(path)
    problem = _blocking_ancestor(path)
    if problem is not None:
        raise InputError(f"out= {path}: {problem}")
    other = _run_command(path) if path.is_dir() else None
    if other is not None and other != command:
        if not overwrite:
            raise InputError(
                f"out= {path} holds the results of '{other}'; choose another directory, or "
                "set overwrite= to replace them"
            )
        clear_run(path)
        (path / "config.json").unlink(missing_ok=True)
    return path


def check_out_file(path: str | Path) -> Path:
    """Check an output file before any work starts (not a folder, its folder writable)."""
    path = Path(path)
    if path.is_dir():
        raise InputError(f"out= {path}: is a directory, expected a file name")
    problem = _blocking_ancestor(path.parent)
    if problem is None and path.exists() and not os.access(path, os.W_OK):
        problem = "cannot write the file (permission denied)"
    if problem is not None:
        raise InputError(f"out= {path}: {problem}")
    return path


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
