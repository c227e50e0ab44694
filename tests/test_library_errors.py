"""Library errors speak Python; the command line speaks its flags (issue 20, point 3).

* No ``raise`` outside ``src/edueval/cli/`` names a command-line flag (``--eps``): the library
  names the Python parameter (``eps=``) and :mod:`edueval.cli.flags` shows it as the flag of the
  command being run.
* Each protocol's public Python API refuses a bad parameter or table with a ``ValueError`` whose
  message names the parameter (``x=``) or the table and column.
* On the command line the same message names the flag.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pandas as pd

import edueval

SRC = Path(edueval.__file__).resolve().parent

#: a command-line flag in a string literal: ``--eps``, or ``--`` followed by a formatted name
FLAG = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*")

#: (file under src/edueval, flag) pairs allowed to stay in raised messages, with the reason
ALLOWED: dict[tuple[str, str], str] = {
    # RunFailed is printed by the command line as raised (only InputError is translated), and
    # finish_model_run is the run layer of the model commands, called only from them
    ("model_runs.py", "--max-failures"): "run layer; RunFailed is not translated by the CLI",
    ("partitioned.py", "--cluster"): "RunFailed is not translated by the CLI",
    # ModelError is printed by the command line as raised (cli/main.py translates InputError
    # only): until it is translated too, these name the flags the command line user typed
    ("models/openai_compat.py", "--base-url"): "ModelConfigError is not translated by the CLI",
    ("models/registry.py", "--base-url"): "ModelConfigError is not translated by the CLI",
    ("models/registry.py", "--endpoints"): "ModelConfigError is not translated by the CLI",
    # a pip command line to run, not an edueval flag
    ("models/local.py", "--force-reinstall"): "pip's flag in the pip command to run",
    ("models/local.py", "--no-deps"): "pip's flag in the pip command to run",
}


def _is_error(call: ast.Call) -> bool:
    """A call that builds an exception (``InputError(...)``, ``errors.ModelConfigError(...)``)."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name.endswith(("Error", "Exception", "Exceeded", "Failed"))


def _literal_flags(node: ast.AST) -> set[str]:
    """The flags written in the string literals of an exception's expression: plain and
    f-string parts, and ``f"--{name}"`` (a flag built from a name) as ``--{...}``."""
    flags: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            flags.update(FLAG.findall(sub.value))
        if isinstance(sub, ast.JoinedStr):
            for part, nxt in zip(sub.values, sub.values[1:], strict=False):
                if (isinstance(part, ast.Constant) and isinstance(part.value, str)
                        and re.search(r"(?<![\w-])--$", part.value)
                        and isinstance(nxt, ast.FormattedValue)):  # fmt: skip
                    flags.add("--{...}")
    return flags


def _raised_flags() -> list[tuple[str, int, str]]:
    """(file, line, flag) of every flag named in an exception raised or built outside cli/."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("cli/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and node.exc is not None:
                exprs = [node.exc]
            elif isinstance(node, ast.Call) and _is_error(node):
                exprs = [*node.args, *(k.value for k in node.keywords)]
            else:
                continue
            for expr in exprs:
                for flag in _literal_flags(expr):
                    found.append((rel, node.lineno, flag))
    return sorted(set(found))


def test_the_scan_sees_flags():
    tree = ast.parse('raise InputError(f"--eps must be > 0, got {eps}")\n'
                     'raise ValueError(f"--{name} must be in [0, 1]")\n'
                     'return ModelConfigError("give --base-url")')  # fmt: skip
    assert set().union(*(_literal_flags(n) for n in tree.body)) == {"--eps", "--{...}",
                                                                    "--base-url"}  # fmt: skip
    assert not _literal_flags(ast.parse('raise InputError("eps= must be > 0 -- or less")'))


def test_the_allowed_flags_are_still_there():
    """An allowed flag no longer raised is taken off the list (TODO entries: by their owner)."""
    live = {(rel, flag) for rel, _, flag in _raised_flags()}
    stale = [key for key, why in ALLOWED.items() if key not in live and "TODO" not in why]
    assert not stale, stale


def test_no_library_message_names_a_command_line_flag():
    bad = [f"src/edueval/{rel}:{line}: {flag}" for rel, line, flag in _raised_flags()
           if (rel, flag) not in ALLOWED]  # fmt: skip
    assert not bad, (
        "library messages name Python parameters (eps=), the command line translates them to "
        "its flags (edueval.cli.flags); these name flags:\n" + "\n".join(bad)
    )


# --- a ValueError per protocol, through the public Python API --------------------------------


def _refused(call, *needles: str) -> str:
    """The message of the ValueError ``call()`` raises (caught as a ValueError, as Python code
    would), which must contain each of ``needles`` and no command-line flag."""
    try:
        call()
    except ValueError as exc:
        message = str(exc)
    else:
        raise AssertionError("no ValueError raised")
    for needle in needles:
        assert needle in message, message
    assert "\n" not in message
    return message


def _no_flag(message: str) -> None:
    assert not FLAG.search(message), message


def test_kt():
    from edueval.kt import BKT

    df = pd.DataFrame({"student": ["a", "a", "b"], "skill": ["s"] * 3, "correct": [1, 0, 1]})
    _no_flag(_refused(lambda: BKT().fit(df.drop(columns=["correct"])), "'correct'"))
    _no_flag(_refused(lambda: BKT(guess_max=2.0).fit(df), "guess_max="))
    _no_flag(_refused(lambda: BKT(multigs="tmpl").fit(df), "'tmpl'", "multigs="))


def test_pairwise():
    from edueval.pairwise import BradleyTerry

    _no_flag(_refused(lambda: BradleyTerry(pd.DataFrame({"item": ["x"]})),
                      "comparisons table", "'rater'"))  # fmt: skip
    comparisons = pd.DataFrame({"item": ["x", "x"], "attribute": ["a", "a"], "rater": ["r", "r"],
                                "first": ["p", "q"], "second": ["q", "p"],
                                "outcome": ["first", "tie"]})  # fmt: skip
    _no_flag(_refused(lambda: BradleyTerry(comparisons, ties="bogus"), "ties=", "'bogus'"))


def test_items():
    from edueval.items import analyze_items

    # a wide score table (student + one column per item) is valid input; a non-number is not,
    # and a long one needs its score column
    bad = pd.DataFrame({"student": ["a"], "x": ["maybe"]})
    _no_flag(_refused(lambda: analyze_items(bad), "DataFrame", "column 'x'"))
    long_bad = pd.DataFrame({"student": ["a"], "item": ["i"]})
    _no_flag(_refused(lambda: analyze_items(long_bad), "DataFrame", "'correct'"))


def test_qgsms():
    from edueval.qgsms import evaluate

    # the options are checked before any table is read or model opened
    msg = _refused(lambda: evaluate([], [], "openai/never-called", profiles=3), "profiles=")
    _no_flag(msg)
    _no_flag(_refused(lambda: evaluate([], [], "openai/never-called", methods=[]), "methods="))
    _no_flag(_refused(lambda: evaluate([], [], "openai/never-called", temperature=9),
                      "temperature="))  # fmt: skip


def test_malalgo():
    from edueval.malalgo import evaluate
    from edueval.misconceptions import generate_items

    questions = generate_items(4, seed=1)
    _no_flag(_refused(lambda: evaluate(questions, "openai/never-called", prompt="nope"),
                      "prompt="))  # fmt: skip
    _no_flag(_refused(lambda: evaluate(questions, "openai/never-called", shots=99), "shots="))
    _no_flag(_refused(lambda: evaluate(questions.drop(columns=["rationale_B"]),
                                       "openai/never-called"),
                      "questions DataFrame", "rationale_B"))  # fmt: skip


def test_turing():
    from edueval.turing import analyze_choices, coverage_plan

    choices = pd.DataFrame({"student": ["s"], "question": ["q"], "chosen": ["ai"]})
    _no_flag(_refused(lambda: analyze_choices(choices, eps=-1), "eps= must be > 0"))
    _no_flag(_refused(lambda: analyze_choices(choices, se="nope"), "se= must be one of"))
    _no_flag(_refused(lambda: coverage_plan(p_min=0.05, zipf=1.0), "p_min=", "zipf="))
    _no_flag(_refused(lambda: coverage_plan(mass_eps=0.5, p_min=0.05), "mass_eps="))
    _no_flag(_refused(lambda: analyze_choices(choices.drop(columns=["chosen"])), "'chosen'"))


def test_tutor():
    from edueval.tutor import reply

    dialogue = [{"id": 1, "turns": [{"speaker": "student", "text": "2+2?"},
                                    {"speaker": "teacher", "text": "4"}]}]  # fmt: skip
    _no_flag(_refused(lambda: reply(dialogue, "openai/never-called", max_tokens=0),
                      "max_tokens="))  # fmt: skip
    _no_flag(_refused(lambda: reply(dialogue, "openai/never-called", limit=0), "limit="))
    bad = [{"id": "d1", "turns": [{"speaker": "pupil", "text": "hi"}]}]
    _no_flag(_refused(lambda: reply(bad, "openai/never-called"), "dialogues list", "'turns'"))


# --- the command line shows the same messages with its flags ---------------------------------


def test_the_command_line_names_its_flags(cli, write, tmp_path):
    choices = write("choices.csv", "student,question,chosen\ns1,q1,ai\ns1,q2,human\n")
    run = cli("turing", "analyze", choices, "--eps", "0", "--out", tmp_path / "a")
    assert run.code == 2
    assert run.err_lines == [
        "error: --eps must be > 0 (the equivalence margin |p_AI - p_Human| < eps), got 0.0"
    ]
    # a library parameter of another name (coverage_plan's k=, mass_eps=) shows the command's flag
    run = cli("turing", "power", "--coverage", "--zipf", "1", "--misconceptions", "5",
              "--top-k", "6", "--out", tmp_path / "b")  # fmt: skip
    assert run.code == 2
    assert run.err_lines == ["error: --top-k 6 exceeds the 5 misconceptions of the model"]
    run = cli("turing", "power", "--coverage", "--mass", "0.5", "--out", tmp_path / "c")
    assert run.code == 2
    assert run.err_lines == ["error: --mass (Theorem 1) needs a frequency model: give --zipf"]
