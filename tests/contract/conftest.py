"""The command-line contract: what a user or a script sees from ``edueval``.

The tests check what SPEC.md promises: a mistake gives one clear line (or click's usage block), a
documented exit code, no traceback, and nothing half-written that looks complete.

Two drivers with the same :class:`Run` result:

* ``edueval`` runs the command line in this process (``edueval.cli.main.main``, the function the
  console script calls), in the test's folder, with a private model cache, the given environment
  and stdin; stdout and stderr are captured apart at the file descriptors (what C code prints
  too), and a warning the command lets out is added to
  stderr as Python prints it.  An exception that escapes ``main`` (a process would print a
  traceback and exit 1) fails the test.  Most contract tests use it: they are about messages,
  codes and files, not about the process.
* ``edueval_process`` runs the installed console script as a separate process, exactly as a user
  would, for what only a process shows: the script itself, help pages on a terminal-less stdout,
  signals (Ctrl-C), servers and clusters.  The script is the ``edueval`` next to the running
  Python (``pip install .`` puts it there), else the one on ``PATH``; ``EDUEVAL_CLI`` overrides
  both (e.g. ``EDUEVAL_CLI="python -m edueval"``).
"""

from __future__ import annotations

import io
import json
import os
import shlex
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest


def cli_command() -> list[str]:
    """The command that starts the installed console script."""
    override = os.environ.get("EDUEVAL_CLI")
    if override:
        return shlex.split(override)
    beside = Path(sys.executable).parent / "edueval"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("edueval")
    if found is None:
        pytest.fail("the edueval console script is not installed (pip install .)")
    return [found]


@dataclass
class Run:
    """Exit code and output of one ``edueval`` process."""

    args: tuple[str, ...]
    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.strip()]

    def __str__(self) -> str:  # shown by pytest when an assertion fails
        return (f"edueval {shlex.join(self.args)} -> exit {self.code}\n"
                f"--- stdout ---\n{self.out[-3000:]}\n--- stderr ---\n{self.err[-3000:]}")  # fmt: skip


@pytest.fixture
def edueval_process(tmp_path: Path) -> Callable[..., Run]:
    """``edueval_process("kt", "fit", path, cwd=..., env=..., stdin=..., timeout=...)`` -> :class:`Run`.

    Runs the console script in ``tmp_path`` by default, with a private model cache and no terminal.
    """

    base = cli_command()

    def run(*args: object, cwd: Path | None = None, env: dict[str, str] | None = None,
            stdin: str | None = None, timeout: float = 300) -> Run:  # fmt: skip
        full_env = {**os.environ, "EDUEVAL_CACHE_DIR": str(tmp_path / ".cache"),
                    "COLUMNS": "100", **(env or {})}  # fmt: skip
        proc = subprocess.run(
            [*base, *map(str, args)], cwd=cwd or tmp_path, env=full_env, input=stdin,
            capture_output=True, text=True, timeout=timeout, check=False,
        )  # fmt: skip
        return Run(tuple(map(str, args)), proc.returncode, proc.stdout, proc.stderr)

    return run


# Python's default warning filters (what a process started from the console script applies), with
# the suite's own "error" filters for edueval (pyproject.toml) kept in front
_PROCESS_FILTERS = (("ignore", DeprecationWarning), ("ignore", PendingDeprecationWarning),
                    ("ignore", ImportWarning), ("ignore", ResourceWarning))  # fmt: skip


@pytest.fixture
def edueval(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> Callable[..., Run]:
    """``edueval("kt", "fit", path, cwd=..., env=..., stdin=...)`` -> :class:`Run`, in process.

    As :func:`edueval_process` (folder, private model cache, environment, stdin, ``COLUMNS``),
    through ``edueval.cli.main.main``; ``timeout`` is accepted and not enforced.
    """
    from edueval.cli.main import main

    def run(*args: object, cwd: Path | None = None, env: dict[str, str] | None = None,
            stdin: str | None = None, timeout: float = 300) -> Run:  # fmt: skip
        del timeout
        with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings(record=True) as caught:
            mp.chdir(cwd or tmp_path)
            for name, value in {"EDUEVAL_CACHE_DIR": str(tmp_path / ".cache"), "COLUMNS": "100",
                                **(env or {})}.items():  # fmt: skip
                mp.setenv(name, value)
            mp.setattr(sys, "stdin", io.StringIO(stdin or ""))
            warnings.simplefilter("default")
            for action, category in _PROCESS_FILTERS:
                warnings.filterwarnings(action, category=category)
            warnings.filterwarnings("error", category=DeprecationWarning, module="edueval")
            warnings.filterwarnings("error", category=FutureWarning, module="edueval")
            capfd.readouterr()  # drop anything printed before
            code = main([str(a) for a in args])
            out, err = capfd.readouterr()
        shown = "".join(warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line)
                        for w in caught)  # fmt: skip
        return Run(tuple(map(str, args)), code, out, err + shown)

    return run


def assert_refused(run: Run, *, code: int = 2, out: Path | None = None,
                   contains: str | None = None) -> None:  # fmt: skip
    """A refusal as SPEC.md defines it: ``code``, no traceback, one line on stderr (or click's
    usage block, which ends in one ``Error:`` line), and in ``out`` no ``results.json`` and no
    ``config.json`` that says ``complete``."""
    assert run.code == code, run
    assert "Traceback" not in run.err and "Traceback" not in run.out, run
    lines = run.err_lines
    if lines and lines[0].startswith("Usage:"):
        errors = [line for line in lines if line.startswith("Error:")]
        assert len(errors) == 1, run
    else:
        assert len(lines) == 1, run
    if contains is not None:
        assert contains.lower() in run.err.lower(), run
    if out is not None:
        assert not (out / "results.json").exists(), run
        config = out / "config.json"
        if config.exists():
            assert json.loads(config.read_text()).get("status") != "complete", run
