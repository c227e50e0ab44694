"""Library messages name Python parameters; the command line shows them as its flags."""

import typer

from edueval.cli.flags import cli_message, command_for, flag_names, to_flags
from edueval.cli.main import app
from edueval.io import InputError


def _root():
    return typer.main.get_command(app)


def test_input_error_is_a_value_error():
    assert issubclass(InputError, ValueError)
    try:
        raise InputError("bad", file="x.csv", line=3)
    except ValueError as exc:  # what Python callers catch
        assert str(exc) == "x.csv, line 3: bad"


def test_command_for_walks_the_groups():
    cmd = command_for(_root(), ["kt", "fit", "data.csv", "--multigs", "tmpl", "--out", "o"])
    assert cmd.name == "fit"
    assert command_for(_root(), ["--version"]).name == "edueval"
    assert command_for(_root(), ["kt", "no-such"]).name == "kt"


def test_flag_names_of_a_command():
    names = flag_names(command_for(_root(), ["kt", "fit"]))
    assert names["multigs"] == "--multigs"
    assert names["guess_max"] == "--guess-max"
    assert names["out"] == "--out"


def test_to_flags_rewrites_parameter_names_only():
    names = {"multigs": "--multigs", "max_failures": "--max-failures", "n": "--n"}
    assert to_flags("unknown column 'tmpl' for multigs=", names) == (
        "unknown column 'tmpl' for --multigs"
    )
    # a value shown after name= stays as written; names that are not parameters stay too
    assert to_flags("got max_failures='5%'", names) == "got max_failures='5%'"
    assert to_flags("n=5 is too small", names) == "n=5 is too small"
    assert to_flags("other= must be > 0; max_failures= too", names) == (
        "other= must be > 0; --max-failures too"
    )


def test_cli_message_uses_the_command_run():
    msg = cli_message("guess_max= must be in (0, 1], got 2.0", _root(), ["kt", "fit", "d.csv"])
    assert msg == "--guess-max must be in (0, 1], got 2.0"
