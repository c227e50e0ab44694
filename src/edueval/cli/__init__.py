"""The ``edueval`` command line (Typer): argument parsing and printing only, no domain logic."""

from __future__ import annotations

import sys


def run() -> None:
    """Console script: :func:`edueval.cli.main.main` with its exit code.

    Ctrl-C while the command line is still being imported (a second or so) also exits 130 with
    one line, before :func:`~edueval.cli.main.main` installs its own handler.
    """
    try:
        from .main import main

        code = main()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        code = 130
    sys.exit(code)
