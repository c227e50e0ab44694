"""Entry point: ``edueval <group> <command>``.

Bad input (:class:`edueval.io.InputError`) and an unusable model backend
(:class:`edueval.models.errors.ModelError`: wrong API key, unreachable server, unknown model) are
printed as one line on stderr with exit code 2.
"""

from __future__ import annotations

import sys

import typer

from .. import __version__
from ..io import InputError
from ..models.errors import ModelError
from ..runs import RunFailed
from . import demo as demo_cmd
from . import items as items_cmd
from . import kt, malalgo
from . import models as models_cmd
from . import pairwise as pairwise_cmd
from . import qgsms as qgsms_cmd
from . import study as study_cmd
from . import turing as turing_cmd
from . import tutor as tutor_cmd

app = typer.Typer(
    name="edueval",
    help="Evaluate educational AI the way education researchers do: against real and simulated "
    "students.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
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
app.command("demo")(demo_cmd.demo)


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


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (2 for bad input)."""
    try:
        app(args=argv, standalone_mode=False)
    except (InputError, ModelError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except RunFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return RunFailed.exit_code
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        print("aborted", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # click usage errors carry their own exit code
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            return exc.exit_code
        raise
    return 0


def run() -> None:  # console script
    sys.exit(main())
