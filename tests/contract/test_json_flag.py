"""``--json`` on every run command prints the run's ``results.json`` to stdout (issue 20, 7).

With ``--json`` stdout holds ``results.json`` exactly as written in the run folder, and nothing
else (progress, summaries and tables go to stderr), so ``edueval ... --json | jq`` works.
Without the flag the output is unchanged.  The walker checks that every command that writes a
run folder has the flag.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from typing import Any

import pytest

#: Commands that write a run folder through ``out_dir`` but no ``results.json`` at its top.
NO_RESULTS = {
    "demo": "a folder of runs (one per protocol) and index.html, no results.json of its own",
}


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    subs = getattr(command, "commands", None)
    if subs:
        for name, sub in subs.items():
            yield from _commands(sub, (*path, name))
    else:
        yield " ".join(path), command


def _tree() -> list[tuple[str, Any]]:
    import typer

    from edueval.cli.main import app

    return list(_commands(typer.main.get_command(app)))


def _writes_run_folder(command: Any) -> bool:
    """The command's run folder comes from ``out_dir`` (or ``model_paths``, one per model)."""
    source = inspect.getsource(command.callback)
    return "out_dir(" in source or "model_paths(" in source


def test_every_run_command_has_json() -> None:
    tree = _tree()
    runs = [name for name, cmd in tree if _writes_run_folder(cmd) and name not in NO_RESULTS]
    assert len(runs) > 20, runs  # the walker sees the run commands
    missing = [
        name
        for name, cmd in tree
        if name in runs and "--json" not in [o for p in cmd.params for o in p.opts]
    ]
    assert not missing, f"run commands without --json: {missing}"


def test_json_only_where_a_run_folder_is_written() -> None:
    stray = [
        name
        for name, cmd in _tree()
        if "--json" in [o for p in cmd.params for o in p.opts]
        and (not _writes_run_folder(cmd) or name in NO_RESULTS)
    ]
    assert not stray, stray


@pytest.mark.parametrize(
    "args",
    [
        ["kt", "simulate", "--students", "6", "--skills", "2", "--opportunities", "5"],
        ["items", "simulate", "--students", "10", "--materials", "1", "--questions", "4"],
        ["turing", "power", "--reps", "20", "--students", "20", "--questions", "5"],
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_json_prints_results_json_and_nothing_else(edueval, tmp_path, args) -> None:
    out = tmp_path / "run"
    run = edueval(*args, "--out", out, "--json")
    assert run.code == 0, run
    written = (out / "results.json").read_text(encoding="utf-8")
    assert run.out == written, run
    assert json.loads(run.out) == json.loads(written)
    assert "wrote" in run.err, run  # the closing line stays on stderr


def test_without_json_the_output_is_unchanged(edueval, tmp_path) -> None:
    args = ["turing", "power", "--reps", "20", "--students", "20", "--questions", "5"]
    run = edueval(*args, "--out", tmp_path / "plain")
    assert run.code == 0, run
    assert "design_effect" in run.out  # the power table on stdout, as before
    assert "results.json" not in run.out and not run.out.lstrip().startswith("{")
    quiet = edueval("kt", "simulate", "--students", "4", "--skills", "1", "--out", tmp_path / "k")
    assert quiet.code == 0 and quiet.out == "", quiet
