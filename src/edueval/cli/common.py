"""Helpers shared by the command groups: options, errors, output folders."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..runs import default_out

OutOption = Annotated[
    Path | None,
    typer.Option("--out", "-o", help="Run directory to write (default: runs/<command>-<time>)."),
]
SeedOption = Annotated[int, typer.Option("--seed", help="Seed of every random choice in the run.")]


def out_dir(out: Path | None, command: str) -> Path:
    return out if out is not None else default_out(command)


def say(message: str) -> None:
    """A line for the user on stderr (stdout stays free for data)."""
    print(message, file=sys.stderr)


def warn(message: str) -> None:
    say(f"warning: {message}")


def done(path: Path, what: str = "report.html") -> None:
    say(f"wrote {path}/ (open {path / what})")
