"""The ``edueval`` command line (Typer): argument parsing and printing only, no domain logic."""

from __future__ import annotations

import signal
import sys


def run() -> None:
    """Console script: :func:`edueval.cli.main.main` with its exit code.

    Ctrl-C while the command line is still being imported (a second or so) is remembered rather
    than raised: third-party modules imported then may swallow a ``KeyboardInterrupt`` in a bare
    ``except``, and the command would go on as if nothing happened.  Once the imports are done,
    a remembered Ctrl-C exits 130 with one line, before any work starts.
    """
    pressed: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum))
    try:
        from .main import interrupted, main
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if pressed:
        sys.exit(interrupted())
    try:
        code = main()
    except KeyboardInterrupt:
        code = interrupted()
    sys.exit(code)
