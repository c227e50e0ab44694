"""Each command's ``--help`` names the input tables it reads, as ``edueval formats`` lists them
(issue 38), and every table ``edueval formats`` lists is read by some command.

"Reads a table" is found here independently of :data:`edueval.cli.inputs.READS`: every file or
folder parameter of every command (Click's command tree, walked) but ``--out`` is an input, and
each must name a table in its help unless it is listed below with the reason it reads none."""

from __future__ import annotations

import re

import pytest

from edueval.cli.main import command_tree, main
from edueval.formats import find_schemas

#: (command, parameter) -> why that input is not one of the tables `edueval formats` lists
NO_TABLE = {
    ("compare", "runs"): "run folders of edueval commands",
    ("export inspect", "run_dir"): "a run folder",
    ("malalgo run", "endpoints"): "the model servers' YAML",
    ("models check", "endpoints"): "the model servers' YAML",
    ("qgsms run", "endpoints"): "the model servers' YAML",
    ("tutor reply", "endpoints"): "the model servers' YAML",
    ("pairwise fit", "exclude_raters"): "a list of rater ids",
    ("pairwise hierarchical", "exclude_raters"): "a list of rater ids",
    ("pairwise raters", "compare"): "a list of rater ids",
    ("pairwise import-teacher-test", "items"): "the AI Teacher Test release, read by its importer",
    ("pairwise replicate-teacher-test", "folder"): "the AI Teacher Test release folder",
    ("study serve", "admin_token_file"): "a token",
    ("study serve", "ssl_certfile"): "a PEM certificate",
    ("study serve", "ssl_keyfile"): "a PEM key",
    ("study invite", "participants"): "a list of participant ids",
}

NAME = re.compile(r"\b[a-z]+\.[a-z0-9]+(?:-[a-z0-9]+)*\b")


def _is_path(param) -> bool:
    descriptor = getattr(param, "type_descriptor", None)  # Typer >= 0.29
    if descriptor is not None:  # a Path, or a list of them
        return bool(descriptor.is_path) or "pathlib.Path" in str(descriptor.annotation)
    return type(getattr(param, "type", None)).__name__ == "Path"  # Click's Path


def _leaves(command, path=()):
    subs = getattr(command, "commands", None)
    if not subs:
        yield " ".join(path), command
        return
    for name, sub in subs.items():
        yield from _leaves(sub, (*path, name))


LEAVES = dict(_leaves(command_tree()))


def _inputs(command) -> list[str]:
    return [p.name for p in command.params if _is_path(p) and p.name != "out"]


@pytest.fixture(scope="module")
def listed() -> set[str]:
    return {t.name for t in find_schemas()}


def _help(capsys, name: str) -> str:
    assert main([*name.split(), "--help"]) == 0
    return capsys.readouterr().out


def _tables(param) -> set[str]:
    """The tables a parameter's help names: its "Input table(s)" paragraph, as Click keeps it."""
    _, _, note = (getattr(param, "help", None) or "").partition("Input table")
    return set(NAME.findall(note))


def test_the_walk_finds_the_commands_and_their_inputs() -> None:
    # a walk that found nothing would pass every test below
    assert len(LEAVES) >= 40
    assert _inputs(LEAVES["kt predict"]) == ["data", "params"]
    assert _inputs(LEAVES["turing assemble"]) == ["ai", "human", "random"]
    for command, param in NO_TABLE:  # the list names real inputs (it cannot rot unseen)
        assert param in _inputs(LEAVES[command]), (command, param)


@pytest.mark.parametrize("name", sorted(LEAVES))
def test_each_input_names_its_tables_in_help(name, capsys, listed) -> None:
    command = LEAVES[name]
    text = _help(capsys, name)
    lines = {line.strip() for line in text.splitlines()}
    for param in command.params:
        tables = _tables(param)
        if param.name in _inputs(command) and (name, param.name) not in NO_TABLE:
            assert tables, f"edueval {name}: {param.name} reads a file but names no table"
        assert tables <= listed, f"edueval {name}: not in edueval formats: {tables - listed}"
        assert (getattr(param, "help", None) or "").count("Input table") <= 1
        for table in tables:  # as the user sees it: whole, on a line of its own
            assert any(line.split("  [")[0].endswith(table) for line in lines), (name, table)
    notes = sum(bool(_tables(p)) for p in command.params)
    assert text.count("Input table") == notes  # each once, however often the tree was named


def test_every_listed_table_is_read_by_some_command(listed) -> None:
    named = {t for command in LEAVES.values() for p in command.params for t in _tables(p)}
    assert named <= listed
    assert not listed - named, f"tables no command's --help names: {sorted(listed - named)}"


def test_formats_shows_a_table_named_in_help(capsys) -> None:
    """The line in ``--help`` is a command that works: ``edueval formats NAME``."""
    text = _help(capsys, "kt fit")
    line = next(x for x in text.splitlines() if "edueval formats kt." in x)
    name = line.split("edueval formats ", 1)[1].split(")")[0]
    assert main(["formats", name]) == 0
    assert capsys.readouterr().out.startswith("kt.response-file: response file")
