"""Helpers shared by the command groups: the Typer app factory, options, output folders."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ..runs import check_out_dir, check_out_file, default_out
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


def out_dir(out: Path | None, command: str, overwrite: bool = False) -> Path:
    """The run directory for ``command``: ``--out`` checked before any work starts (one line and
    exit 2 when it cannot be written or holds another command's run), else the default."""
    path = out if out is not None else default_out(command)
    return check_out_dir(path, command, overwrite=overwrite)


def out_file(path: Path) -> Path:
    """An output file given by ``--out``, checked before any work starts."""
    return check_out_file(path)


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
