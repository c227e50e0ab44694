"""Usage mistakes, interrupts and ``--out``: the contract every command keeps (issue 11, 1-3)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import Run, assert_refused, cli_command

# --- 1. usage mistakes: Click's usage block, exit 2, no traceback --------------------------------

USAGE_MISTAKES = [
    (("kt", "fit", "x.csv", "--bogus", "1"), "No such option"),
    (("kt", "fit"), "Missing argument"),
    (("no-such-command",), "No such command"),
    (("kt", "fit", "x.csv", "--restarts", "many"), "--restarts"),
    (("kt", "fit", "x.csv", "--restarts"), "--restarts"),
    ((), "Missing command"),
    (("kt",), "Missing command"),
    (("study",), "Missing command"),
    (("kt", "no-such-command"), "No such command"),
    (("pairwise", "fit", "c.csv", "--ties", "sometimes"), "--ties"),
    (("malalgo", "run", "q.csv", "--prompt", "fancy"), "--prompt"),
    (("turing", "power", "--eps", "abc"), "--eps"),
    (("study", "serve"), "Missing argument"),
    (("kt", "simulate", "--students", "1e3"), "--students"),
    (("demo", "--quick", "extra"), "extra"),
]


@pytest.mark.parametrize(
    ("args", "says"), USAGE_MISTAKES, ids=[" ".join(a) or "bare" for a, _ in USAGE_MISTAKES]
)
def test_a_usage_mistake_gives_one_error_and_exit_2(edueval, args, says) -> None:
    """Click's usage block (or, for a value our code checks, one line), naming the mistake."""
    run = edueval(*args)
    assert_refused(run, code=2, contains=says)
    assert run.err_lines[-1].lower().startswith("error"), run
    assert run.out == "", run


@pytest.mark.parametrize(
    ("args", "says"), [USAGE_MISTAKES[0], USAGE_MISTAKES[5]], ids=["option", "bare"]
)
def test_a_usage_mistake_through_the_console_script(edueval_process, args, says) -> None:
    """The same, as a separate process started from the installed script (the others run the
    same command line in process)."""
    run = edueval_process(*args)
    assert_refused(run, code=2, contains=says)
    assert run.err_lines[-1].lower().startswith("error"), run
    assert run.out == "", run


@pytest.mark.parametrize(
    "args", [("--help",), ("kt", "--help"), ("kt", "fit", "--help"), ("tutor", "reply", "--help"),
             ("malalgo", "run", "--help"), ("study", "invite", "--help"), ("pairwise", "--help")],
    ids=" ".join,
)  # fmt: skip
def test_help_pages_read_like_a_normal_cli(edueval_process, args) -> None:
    run = edueval_process(*args)
    assert run.code == 0, run
    assert run.out.startswith("Usage: edueval"), run
    # Typer >= 0.29 prints Python types and metavars such as '<bool>', '<list[str]>', '{data}'
    for leak in ("<bool>", "list[str]", "{", "<path>", "<str>", "<int>", "NoneType", "│"):
        assert leak not in run.out, (leak, run)


def test_version(edueval_process) -> None:
    run = edueval_process("--version")
    assert run.code == 0 and run.out.startswith("edueval "), run


# --- 2. interrupts ------------------------------------------------------------------------------


def _interrupt_when_running(args: list[str], out: Path, cwd: Path, *, after: float = 0.0,
                            timeout: float = 120) -> Run:  # fmt: skip
    """Start ``edueval args``; once ``out/config.json`` says running, wait ``after`` seconds and
    send SIGINT (what Ctrl-C sends) to the process."""
    env = {**os.environ, "EDUEVAL_CACHE_DIR": str(cwd / ".cache")}
    proc = subprocess.Popen([*cli_command(), *args], cwd=cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.monotonic() + timeout
    config = out / "config.json"
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if json.loads(config.read_text())["status"] == "running":
                break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.05)
    time.sleep(after)
    assert proc.poll() is None, "the command finished before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    out_text, err_text = proc.communicate(timeout=timeout)
    return Run(tuple(args), proc.returncode, out_text, err_text)


def _assert_interrupted(run: Run, out: Path) -> None:
    assert run.code == 130, run
    assert "Traceback" not in run.err, run
    assert run.err_lines[-1].startswith("interrupted"), run
    assert json.loads((out / "config.json").read_text())["status"] == "interrupted", run
    assert not (out / "results.json").exists(), run


def test_ctrl_c_during_kt_simulate_exits_130_and_marks_the_run(tmp_path) -> None:
    out = tmp_path / "sim"
    args = ["kt", "simulate", "--students", "3000", "--skills", "50", "--opportunities", "50",
            "--out", str(out)]  # fmt: skip
    _assert_interrupted(_interrupt_when_running(args, out, tmp_path), out)


def test_ctrl_c_during_kt_study_exits_130_and_marks_the_run(tmp_path) -> None:
    out = tmp_path / "study"
    args = ["kt", "study", "--out", str(out)]
    _assert_interrupted(_interrupt_when_running(args, out, tmp_path, after=1.0), out)


def test_sigint_before_any_run_directory_exits_130(tmp_path) -> None:
    """Interrupted while the program still starts up: no run to mark, still 130."""
    proc = subprocess.Popen([*cli_command(), "turing", "power", "--out", str(tmp_path / "p")],
                            cwd=tmp_path, stderr=subprocess.PIPE, text=True)  # fmt: skip
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err, err


def test_typer_exit_keeps_its_code(monkeypatch) -> None:
    """A command that raises ``typer.Exit(n)`` exits with ``n``, not 0."""
    import typer

    from edueval.cli import main as cli_main

    @cli_main.app.command("exit-with")
    def _exit_with(code: int) -> None:
        raise typer.Exit(code)

    try:
        assert cli_main.main(["exit-with", "4"]) == 4
        assert cli_main.main(["exit-with", "0"]) == 0
    finally:
        cli_main.app.registered_commands.pop()


# --- 3. --out -----------------------------------------------------------------------------------

#: every command that writes a run directory or an output file, with arguments that pass the
#: command line's own checks (the input files exist, but are empty: --out is checked first)
OUT_COMMANDS = {
    "kt simulate": ["kt", "simulate"],
    "kt fit": ["kt", "fit", "{data}"],
    "kt predict": ["kt", "predict", "{data}", "--params", "{data}"],
    "kt evaluate": ["kt", "evaluate", "{data}"],
    "kt study": ["kt", "study"],
    "items analyze": ["items", "analyze", "{data}", "{data}"],
    "items pairs": ["items", "pairs", "{data}", "{data}"],
    "items simulate": ["items", "simulate"],
    "malalgo generate": ["malalgo", "generate"],
    "malalgo run": ["malalgo", "run", "{data}"],
    "malalgo score": ["malalgo", "score", "{data}"],
    "pairwise import-teacher-test": ["pairwise", "import-teacher-test", "{data}"],
    "pairwise fit": ["pairwise", "fit", "{data}"],
    "pairwise raters": ["pairwise", "raters", "{data}"],
    "pairwise summarize": ["pairwise", "summarize", "{data}"],
    "pairwise hierarchical": ["pairwise", "hierarchical", "{data}"],
    "pairwise replicate-teacher-test": ["pairwise", "replicate-teacher-test"],
    "pairwise simulate": ["pairwise", "simulate"],
    "qgsms run": ["qgsms", "run", "{data}", "{data}"],
    "qgsms score": ["qgsms", "score", "{data}"],
    "turing analyze": ["turing", "analyze", "{data}"],
    "turing power": ["turing", "power"],
    "turing simulate": ["turing", "simulate"],
    "turing generate": ["turing", "generate", "{data}"],
    "turing assemble": ["turing", "assemble", "{data}", "--human", "{data}"],
    "tutor reply": ["tutor", "reply", "{data}"],
    "tutor import-ncte": ["tutor", "import-ncte", "{data}"],
    "tutor make-study": ["tutor", "make-study", "{data}"],
    "study export": ["study", "export", "{data}"],
    "demo": ["demo", "--quick"],
}


def _args(command: str, data: Path, out: Path) -> list[str]:
    return [a.replace("{data}", str(data)) for a in OUT_COMMANDS[command]] + ["--out", str(out)]


@pytest.fixture
def empty_input(tmp_path: Path) -> Path:
    path = tmp_path / "input.csv"
    path.write_text("")
    return path


#: commands whose --out is a file, not a run directory: an existing file is theirs to replace
FILE_OUT = {"tutor import-ncte"}


def _bad_out(kind: str, tmp_path: Path, command: str) -> Path:
    a_file = tmp_path / "a-file.txt"
    a_file.write_text("keep me\n")
    if kind == "existing file":
        if command in FILE_OUT:  # the file's counterpart: a directory where a file is wanted
            (tmp_path / "a-dir").mkdir()
            return tmp_path / "a-dir"
        return a_file
    if kind == "under a file":
        return a_file / "run"
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    # root writes anywhere but in kernel file systems: there, mkdir fails as it would for anyone
    return Path("/proc/edueval-run/out") if os.geteuid() == 0 else locked / "run"


@pytest.mark.parametrize("kind", ["existing file", "under a file", "unwritable directory"])
@pytest.mark.parametrize("command", sorted(OUT_COMMANDS))
def test_a_bad_out_is_refused_in_one_line_before_any_work(
    edueval, tmp_path, empty_input, command, kind
) -> None:
    out = _bad_out(kind, tmp_path, command)
    before = sorted(p.name for p in tmp_path.iterdir())
    run = edueval(*_args(command, empty_input, out))
    assert_refused(run, code=2, contains=str(out))
    assert (tmp_path / "a-file.txt").read_text() == "keep me\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != ".cache") == [
        n for n in before if n != ".cache"
    ], "nothing may be created"


def test_a_run_directory_of_another_command_is_kept_unless_overwrite(edueval, tmp_path) -> None:
    out = tmp_path / "runs" / "sim"
    first = edueval("kt", "simulate", "--students", "20", "--skills", "2", "--opportunities", "5",
                    "--out", out)  # fmt: skip
    assert first.code == 0, first
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}

    refused = edueval(
        "turing", "simulate", "--reps", "5", "--sizes", "5", "--p-rules", "0.5", "--out", out
    )
    assert_refused(refused, code=2, contains="kt simulate")
    assert "--overwrite" in refused.err
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before

    again = edueval("kt", "simulate", "--students", "20", "--skills", "2", "--opportunities",
                    "5", "--seed", "3", "--out", out)  # fmt: skip
    assert again.code == 0, again  # the same command may replace its own run

    replaced = edueval(
        "turing",
        "simulate",
        "--reps",
        "5",
        "--sizes",
        "5",
        "--p-rules",
        "0.5",
        "--out",
        out,
        "--overwrite",
    )
    assert replaced.code == 0, replaced
    config = json.loads((out / "config.json").read_text())
    assert config["command"] == "turing simulate" and config["status"] == "complete"
    assert not (out / "responses.csv").exists(), "the other command's tables are removed"


def test_ctrl_c_during_malalgo_run_then_a_rerun_repeats_only_the_calls_in_flight(
    edueval, tmp_path
) -> None:
    from support.scripted_server import ScriptedServer

    made = edueval("malalgo", "generate", "--n", "6", "--seed", "1", "--out", tmp_path / "q")
    assert made.code == 0, made
    questions = tmp_path / "q" / "questions.csv"
    out = tmp_path / "p3"
    connections = 2
    with ScriptedServer(lambda body: '{"Correct Choice": "A"}', latency=0.25) as server:
        args = ["malalgo", "run", str(questions), "--model", "openai/scripted", "--base-url",
                server.url, "--max-connections", str(connections), "--out", str(out)]  # fmt: skip
        env = {**os.environ, "OPENAI_API_KEY": "test-key",
               "EDUEVAL_CACHE_DIR": str(tmp_path / ".cache")}  # fmt: skip
        proc = subprocess.Popen([*cli_command(), *args], cwd=tmp_path, env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        deadline = time.monotonic() + 120
        while server.calls < 8 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        assert proc.poll() is None, "the run ended before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        out_text, err_text = proc.communicate(timeout=60)
        _assert_interrupted(Run(tuple(args), proc.returncode, out_text, err_text), out)
        sent = server.calls
        answered = sum(1 for line in (out / "calls.jsonl").read_text().splitlines()
                       if json.loads(line)["ok"])  # fmt: skip
        # a call is abandoned only if it was in flight when Ctrl-C came (one per connection, and
        # one per connection that a reply freed before the interrupt reached the event loop)
        assert 0 <= sent - answered <= 2 * connections, (sent, answered)

        server.reset()
        rerun = edueval(*args, env=env)
        assert rerun.code == 0, rerun
        prompts = 6 * 5  # four choices and the question itself, per question
        # every answer received before Ctrl-C came from the cache; only the others are asked
        assert server.calls == prompts - answered, (sent, answered, server.calls)
        assert server.calls < prompts
    assert json.loads((out / "config.json").read_text())["status"] == "complete"
