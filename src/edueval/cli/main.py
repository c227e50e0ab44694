"""Entry point: ``edueval <group> <command>``.

The exit codes are a contract that scripts rely on, kept the same whatever Typer/Click release
is installed (Typer 0.29 bundles its own copy of Click, whose exceptions are not ``click``'s):

====  =====================================================================================
0     success
1     an unexpected error (a bug: the traceback is printed)
2     a usage mistake (Click's usage block) or bad input (:class:`edueval.io.InputError`) or an
      unusable model backend (:class:`edueval.models.errors.ModelError`) or a missing optional
      extra (:class:`edueval.extras.MissingExtra`: the line names ``pip install "edueval[X]"``):
      one line on stderr
3     the run ended but its results are incomplete (:class:`edueval.runs.RunFailed`, e.g. too
      many failed model calls); the run directory says ``failed``
130   interrupted (Ctrl-C / SIGINT): "interrupted" on stderr, open run directories marked
      ``interrupted``
====  =====================================================================================

A command that raises ``typer.Exit(n)`` exits with ``n``.
"""

from __future__ import annotations

import contextlib
import importlib
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

import typer

from .. import __version__
from ..extras import MissingExtra
from ..io import InputError
from ..models.errors import ModelError
from ..runs import RunFailed, mark_open_runs
from . import compare as compare_cmd
from . import demo as demo_cmd
from . import export as export_cmd
from . import formats as formats_cmd
from . import items as items_cmd
from . import kt, malalgo
from . import models as models_cmd
from . import pairwise as pairwise_cmd
from . import qgsms as qgsms_cmd
from . import study as study_cmd
from . import turing as turing_cmd
from . import tutor as tutor_cmd
from .common import typer_app
from .flags import cli_message
from .help import classic_help
from .inputs import name_tables

app = typer_app(
    "Evaluate educational AI the way education researchers do: against real and simulated "
    "students.",
    name="edueval",
)
app.add_typer(kt.app, name="kt")
app.add_typer(items_cmd.app, name="items")
app.add_typer(malalgo.app, name="malalgo")
app.add_typer(models_cmd.app, name="models")
app.add_typer(pairwise_cmd.app, name="pairwise")
app.add_typer(qgsms_cmd.app, name="qgsms")
app.add_typer(study_cmd.app, name="study")
app.add_typer(turing_cmd.app, name="turing")
app.add_typer(tutor_cmd.app, name="tutor")
app.add_typer(export_cmd.app, name="export")
app.command("demo")(demo_cmd.demo)
app.command("compare")(compare_cmd.compare)
app.command("formats")(formats_cmd.formats)


def _version(value: bool) -> None:
    if value:
        print(f"edueval {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """edueval command line."""


class Interrupted(BaseException):
    """Raised by our SIGINT handler.  Not a ``KeyboardInterrupt``: Click and Typer turn that
    into ``Abort`` or ``Exit(130)`` depending on the release, and ``except Exception`` in
    library code must not swallow it."""


def _click_exception_types(name: str) -> tuple[type[BaseException], ...]:
    """``name`` (``ClickException``, ``Abort``) from every Click this process may use: the
    ``click`` package and the copy bundled in Typer >= 0.29."""
    found: list[type[BaseException]] = []
    for module in ("click.exceptions", "typer._click.exceptions", "typer.exceptions"):
        with contextlib.suppress(ImportError, AttributeError):
            found.append(getattr(importlib.import_module(module), name))
    return tuple(found)


@contextlib.contextmanager
def _sigint_raises_interrupted() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise Interrupted

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _quiet_unraisable(unraisable: object) -> None:
    """After Ctrl-C, objects torn down half-built (e.g. numba's compiler interrupted mid-way)
    may fail in their ``__del__``; those are consequences of the interrupt, not news."""


def interrupted() -> int:
    """Mark open runs ``interrupted``, say so in one line, and return the exit code 130."""
    sys.unraisablehook = _quiet_unraisable
    marked = mark_open_runs("interrupted")
    where = f" ({', '.join(map(str, marked))} marked 'interrupted')" if marked else ""
    print(f"interrupted{where}", file=sys.stderr)
    return 130


def _failed(message: str, code: int) -> int:
    mark_open_runs("error")
    print(f"error: {message}", file=sys.stderr)
    return code


def _as_flags(message: str, argv: list[str] | None) -> str:
    """A library message (it names Python parameters, ``multigs=``) as the command line says it
    (``--multigs``): :mod:`.flags`."""
    try:
        root = typer.main.get_command(app)
        return cli_message(message, root, sys.argv[1:] if argv is None else argv)
    except Exception:  # the message as raised is still a clear line
        return message


def command_tree() -> Any:
    """The Click command tree as ``edueval`` runs it: Click-style metavars
    (:func:`.help.classic_help`) and each input's table named in its help
    (:func:`.inputs.name_tables`)."""
    return name_tables(classic_help(typer.main.get_command(app)))


def _invoke(argv: list[str] | None) -> int:
    command = command_tree()
    rv = command.main(args=argv, prog_name="edueval", standalone_mode=False)
    # Without standalone mode Click returns the code of ``Exit(n)`` instead of raising it.
    return rv if isinstance(rv, int) and not isinstance(rv, bool) else 0


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code (see the module docstring for the table)."""
    click_errors = _click_exception_types("ClickException")
    aborts = _click_exception_types("Abort")
    try:
        with _sigint_raises_interrupted():
            return _invoke(argv)
    except (Interrupted, KeyboardInterrupt):
        return interrupted()
    except InputError as exc:
        return _failed(_as_flags(str(exc), argv), 2)
    except MissingExtra as exc:
        return _failed(str(exc), 2)
    except ModelError as exc:
        return _failed(str(exc), 2)
    except RunFailed as exc:
        return _failed(str(exc), RunFailed.exit_code)
    except typer.Exit as exc:  # raised past Click by code outside a command
        return exc.exit_code
    except click_errors as exc:
        mark_open_runs("error")
        exc.show()  # type: ignore[attr-defined]  # ClickException (each Click copy's) has show()
        return int(getattr(exc, "exit_code", 2))
    except aborts:  # Click turns Ctrl-C / end of input at a prompt into Abort
        return interrupted()
    except BaseException:
        mark_open_runs("error")
        raise


def run() -> None:
    """The console script as earlier installs name it (``edueval.cli.main:run``): as
    :func:`edueval.cli.run`, whose start-up Ctrl-C handling has nothing left to guard here (this
    module is imported already)."""
    try:
        code = main()
    except KeyboardInterrupt:
        code = interrupted()
    sys.exit(code)
