"""Helpers shared by the command groups: the Typer app factory, options, output folders.

Nothing lost (issue 39): every output a command writes -- a run folder (:func:`out_dir`), a
file (:func:`out_file`) or a database (:func:`check_outputs`) -- is checked against the
command's inputs before anything is written or removed.  The inputs are every path the command
line gave (each ``Path`` argument and option but ``--out``, gathered from the running command,
so a new command cannot leave one out) plus those the command names with ``inputs=`` (a required
argument: the files a study file names, the database behind a URL, ``()`` when there are none).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import typer

from ..runs import Inputs, check_apart, check_out_dir, check_out_file, default_out
from .ranges import SEED_MAX

OutOption = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        metavar="DIR",
        file_okay=False,
        help="Run directory to write (default: runs/<command>-<time>).",
    ),
]
OverwriteOption = Annotated[
    bool,
    typer.Option(
        "--overwrite",
        help="Replace a run directory that another command wrote (by default refused, so that "
        "no command destroys another's results).",
    ),
]
SeedOption = Annotated[
    int,
    typer.Option(
        "--seed",
        metavar="INTEGER",
        min=0,
        max=SEED_MAX,
        help="Seed of every random choice in the run (0 to 2**63 - 1).",
    ),
]
ClusterOption = Annotated[
    str | None,
    typer.Option(
        "--cluster",
        metavar="local:N[:MEMORY]",
        help="Run the independent tasks on a Dask LocalCluster of N worker processes, each "
        "limited to MEMORY if given (e.g. local:2:3GB; needs edueval[scale]); results equal "
        "the in-process run.",
    ),
]
SchedulerOption = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        metavar="ADDRESS",
        help="Run the independent tasks on a running Dask scheduler (e.g. tcp://host:8786; "
        "default: $EDUEVAL_SCHEDULER, else in process).",
    ),
]
JsonOption = Annotated[
    bool,
    typer.Option(
        "--json",
        help="Print the run's results.json to stdout when it is written (for scripting); "
        "every other line goes to stderr.",
    ),
]


def typer_app(help: str, **settings: Any) -> typer.Typer:
    """A command group with the settings every group shares.

    Plain Click help and errors (no Rich panels, whose look and exit codes changed between
    Typer releases), no shell-completion options, and no pretty tracebacks.  A group called
    without a command is a usage mistake (exit 2, "Missing command"), as Click has it.
    """
    settings.setdefault("no_args_is_help", False)
    return typer.Typer(
        help=help,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        **settings,
    )


def _current_context() -> Any:
    """The running Click context, from the ``click`` package or Typer's bundled copy."""
    for module in ("typer._click.globals", "click.globals"):
        try:
            ctx = importlib.import_module(module).get_current_context(silent=True)
        except (ImportError, AttributeError):
            continue
        if ctx is not None:
            return ctx
    return None


def given_paths() -> list[Path]:
    """Every path the running command was given (its ``Path`` arguments and options, lists of
    them included), but its ``--out``: what it reads."""
    ctx = _current_context()
    found: list[Path] = []
    while ctx is not None:
        for name, value in (ctx.params or {}).items():
            values = value if isinstance(value, (list, tuple)) else [value]
            if name != "out":
                found.extend(v for v in values if isinstance(v, Path))
        ctx = ctx.parent
    return found


def _all_inputs(inputs: Inputs) -> list[str | Path | None]:
    return [*given_paths(), *inputs]


def out_dir(
    out: Path | None,
    command: str,
    overwrite: bool = False,
    *,
    inputs: Inputs,
    own: Iterable[str] = (),
    files: Iterable[str] = (),
) -> Path:
    """The run directory for ``command``: ``--out`` checked before any work starts (one line and
    exit 2 when it cannot be written, is, holds or lies inside an input, holds files edueval did
    not write, or holds another command's run), else the default.  ``inputs``: the inputs not
    given as paths on the command line (``()`` if none); ``files``: files the command writes beyond
    every run's (checked to be no folder or special file there)."""
    path = out if out is not None else default_out(command)
    return check_out_dir(
        path, command, inputs=_all_inputs(inputs), overwrite=overwrite, own=own, files=files
    )


def out_file(path: Path, *, inputs: Inputs, own: bytes | None = None) -> Path:
    """An output file given by ``--out``, checked before any work starts: not an input, not
    inside an input folder, and an existing file only if it begins with ``own`` (the command's
    own kind of file)."""
    return check_out_file(path, inputs=_all_inputs(inputs), own=own)


def check_outputs(outputs: Iterable[str | Path | None], *, inputs: Inputs) -> None:
    """Outputs that are neither run folders nor ``--out`` files (e.g. a study's database):
    each refused if it is, holds or lies inside an input."""
    everything = _all_inputs(inputs)
    for output in outputs:
        if output is not None:
            check_apart(output, everything, what="output")


def bundled_or_given(given: Path | None, bundled: bool, copy: Path, what: str) -> Path:
    """The input file: the one given, or with ``--bundled`` the copy that ships with edueval."""
    from ..io import InputError

    if given is None:
        if not bundled:
            raise InputError(f"missing {what}: give the file, or --bundled for the copy in edueval")
        return copy
    if bundled:
        raise InputError(f"give {what} or --bundled, not both")
    return given


def say(message: str) -> None:
    """A line for the user on stderr (stdout stays free for data)."""
    print(message, file=sys.stderr)


def warn(message: str) -> None:
    say(f"warning: {message}")


def show(text: str, json: bool = False) -> None:
    """A table or summary for the user: on stdout, or on stderr with ``--json`` (whose stdout
    holds ``results.json`` alone)."""
    print(text, end="" if text.endswith("\n") else "\n", file=sys.stderr if json else sys.stdout)


def emit_results(path: Path, json: bool) -> None:
    """With ``--json``: the run's ``results.json``, as written, on stdout (and nothing else)."""
    if json:
        sys.stdout.write((path / "results.json").read_text(encoding="utf-8"))
        sys.stdout.flush()


def done(path: Path, what: str = "report.html", *, json: bool = False) -> None:
    """The closing line (on stderr); with ``--json`` also the run's ``results.json`` on stdout."""
    say(f"wrote {path}/ (open {path / what})")
    emit_results(path, json)
