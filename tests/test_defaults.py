"""One source of defaults (issue 39, 4): with no option set, the library and the command line
run the same analysis.

For each protocol, each command is paired with the library callables it stands for, and every
parameter they share (by name, or by the alias below: ``--restarts`` is ``n_restarts=``) must
have the same default -- a seed, a threshold, a tie rule.  :mod:`edueval.defaults` holds the
ones both sides read.  A number that differs fails here before a notebook and the command line
disagree; a command without a pairing fails :func:`test_every_analysis_command_is_paired`.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import pytest

#: protocol -> command -> "module:callable" names of the library entry points it runs
PAIRS: dict[str, dict[str, list[str]]] = {
    "kt": {
        "kt fit": ["edueval.kt:BKT"],
        "kt simulate": ["edueval.kt.bkt.model:simulate"],
        "kt compare": [
            "edueval.kt.models.compare:compare_models",
            "edueval.kt.models.registry:make_model",
        ],
        "kt crossvalidate": ["edueval.kt.models.crossval:cross_validate"],
        "kt evaluate": ["edueval.kt:KTEvaluation"],
        "kt study": ["edueval.kt.replication.study:StudyConfig"],
    },
    "pairwise": {
        "pairwise fit": ["edueval.pairwise:BradleyTerry"],
        "pairwise hierarchical": ["edueval.pairwise:HierarchicalBradleyTerry"],
        "pairwise raters": ["edueval.pairwise:RaterModel"],
        "pairwise simulate": ["edueval.pairwise.simulation:SimulationConfig"],
    },
    "malalgo": {
        "malalgo run": ["edueval.malalgo:evaluate", "edueval.malalgo:build_tasks"],
        "malalgo audit": ["edueval.malalgo.audit:audit_key_cues"],
        "malalgo generate": ["edueval.misconceptions:generate_items"],
    },
    "items": {
        "items analyze": ["edueval.items:analyze_items"],
        "items pairs": ["edueval.items:make_pairs"],
        "items simulate": ["edueval.items:ClassroomConfig"],
        "items dif": ["edueval.items.dif:dif"],
        "items irt": ["edueval.items:IRT"],
        "items reliability": ["edueval.items.reliability:reliability"],
        "items irt-compare": ["edueval.items:compare_irt", "edueval.items:IRT"],
    },
    "qgsms": {"qgsms run": ["edueval.qgsms:evaluate"], "qgsms score": ["edueval.qgsms:score"]},
    "turing": {
        "turing analyze": ["edueval.turing:analyze_choices"],
        "turing simulate": ["edueval.turing:SimConfig"],
        "turing assemble": ["edueval.turing:assemble_mcqs"],
        "turing generate": ["edueval.turing:generate"],
    },
    "tutor": {
        "tutor reply": ["edueval.tutor:reply"],
        "tutor make-study": ["edueval.tutor:make_study"],
    },
}
#: command-line name -> library name
ALIAS = {"restarts": "n_restarts", "students": "n_students", "skills": "n_skills",
         "opportunities": "n_opportunities", "questions": "n_questions", "reps": "n_reps",
         "bt": "bradley_terry", "folds": "n_folds", "in_a_row": "n_in_a_row",
         "random_sets": "n_random_sets"}  # fmt: skip
#: parameters whose command-line form is text the library parses (the same value either way)
SAME_VALUE = {("max_failures", "5%"), ("budgets", None)}  # budgets: the default list either way


def _command(path: str) -> Any:
    import typer

    from edueval.cli.main import app

    command = typer.main.get_command(app)
    for word in path.split():
        command = command.commands[word]
    return command


def _callable(name: str) -> Any:
    module, _, attr = name.partition(":")
    return getattr(importlib.import_module(module), attr)


def _shared_defaults(command: str, target: str) -> list[tuple[str, Any, Any]]:
    """(parameter, command-line default, library default) for every parameter both have."""
    sig = inspect.signature(_callable(target))
    shared = []
    for param in _command(command).params:
        for name in (param.name, ALIAS.get(param.name)):
            if name is None or name not in sig.parameters:
                continue
            lib = sig.parameters[name].default
            if lib is inspect.Parameter.empty:
                continue
            shared.append((name, param.default, lib))
    return shared


@pytest.mark.parametrize("protocol", sorted(PAIRS))
def test_library_and_command_line_defaults_agree(protocol) -> None:
    differ, seen = [], 0
    for command, targets in PAIRS[protocol].items():
        for target in targets:
            for name, cli, lib in _shared_defaults(command, target):
                seen += 1
                if cli is None and lib is not None and name == "frequencies":
                    continue  # the command's None means the library's default table
                if cli == lib or (name, cli) in SAME_VALUE:
                    continue
                if isinstance(cli, (list, tuple)) and list(cli) == list(lib or []):
                    continue
                differ.append(f"{command} --{name}: {cli!r} vs {target}({name}={lib!r})")
    assert seen, f"{protocol}: no parameter shared between the commands and the library"
    assert not differ, "defaults that differ:\n" + "\n".join(differ)


def test_max_failures_text_is_the_library_default() -> None:
    from edueval.models.budget import DEFAULT_MAX_FAILURES, MaxFailures

    assert MaxFailures.parse("5%") == DEFAULT_MAX_FAILURES


def test_every_analysis_command_is_paired() -> None:
    import typer

    from edueval.cli.main import app

    def leaves(command: Any, path: tuple[str, ...] = ()) -> list[str]:
        subs = getattr(command, "commands", None)
        if not subs:
            return [" ".join(path)]
        return [n for name, sub in subs.items() for n in leaves(sub, (*path, name))]

    paired = {c for commands in PAIRS.values() for c in commands}
    no_library_defaults = {  # the command has no option with a library counterpart
        "demo", "compare", "export inspect", "models check", "kt predict", "kt roster",
        "malalgo score", "pairwise import-teacher-test", "pairwise summarize",
        "pairwise replicate-teacher-test", "turing power", "study serve", "study invite",
        "study export", "tutor import-ncte", "formats",
    }  # fmt: skip
    missing = sorted(set(leaves(typer.main.get_command(app))) - paired - no_library_defaults)
    assert not missing, f"commands whose defaults no test compares with the library: {missing}"


def test_seeds_are_never_none_by_default() -> None:
    """The convention of :mod:`edueval.defaults`: a library seed is seeded by default."""
    unseeded = []
    for commands in PAIRS.values():
        for targets in commands.values():
            for target in targets:
                param = inspect.signature(_callable(target)).parameters.get("seed")
                if param is not None and param.default is None:
                    unseeded.append(target)
    assert not unseeded, unseeded
