"""Notebook-style tests of the documentation's "From Python" snippets (issues 19, 38).

Each test takes one snippet out of the documentation (the docs pages, ``docs/**/*.md``, and
README.md) by its heading (``## From Python: <name>``, any level), so it runs exactly the text a
researcher copies: if the page changes, the test follows.  The
snippet runs in a fresh namespace, in an empty working directory holding only the input files it
names, with ``HOME`` (and ``TMPDIR``) pointed at empty folders and ``EDUEVAL_CACHE_DIR`` at a
named cache folder.  Then:

* the results object is there and its ``summary()`` is a non-empty string (and was printed);
* its numbers equal the ``results.json`` (and tables) that the matching command writes on the
  same inputs, to 1e-12 -- the command runs in-process into a folder of its own, with its own
  ``HOME`` and cache, before the snippet;
* no file or folder appeared anywhere in the test's temporary tree (working directory, ``HOME``,
  ``TMPDIR``, the command's folder) except under the cache folder the test named.

LLM protocols talk to the repo's scripted OpenAI-compatible server
(:class:`support.scripted_server.ScriptedServer`) through ``OPENAI_BASE_URL``, which the
``openai/<model>`` backend honours; nothing here loads the embedded model.

Adding a protocol (QG-SMS, ``turing generate``): its snippet under ``## From Python: <name>`` on
its protocol's page in docs/, and a ``test_api_<name>.py`` that makes the inputs with ``sandbox.cli(...)`` (or
writes them into ``sandbox.cli_dir``), copies them in with ``sandbox.give(...)``, runs
``sandbox.run_snippet(name)`` (with ``serve(script)`` first for an LLM protocol) and compares
with :func:`assert_same` / :func:`assert_same_table`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
#: where the snippets live: README.md and every page of the docs site
DOC_FILES = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))
TOL = 1e-12

# Environment variables that would send a file somewhere other than HOME, TMPDIR or the cache
# folder the test names (unset while a snippet runs, so their defaults fall under HOME).
_REDIRECTS = ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
              "MPLCONFIGDIR", "EDUEVAL_MODEL", "OPENAI_API_KEY", "EDUEVAL_SCHEDULER")  # fmt: skip


# --------------------------------------------------------------------------------------------
# The documentation's snippets


def readme_snippet(name: str) -> str:
    """The first ```python block under the heading ``From Python: <name>`` (any level, ``##`` to
    ``####``; before the next heading; a ``#`` line inside a code block is no heading) in README.md
    or a docs page.  The heading must occur exactly once over those files."""
    title = re.compile(rf"#{{2,4}} From Python: {re.escape(name)}(\s+\(|\s*$)")
    found = []
    for path in DOC_FILES:
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        found += [(path, lines, i) for i, line in enumerate(lines) if title.match(line)]
    where = f"heading 'From Python: {name}'"
    assert found, f"neither README.md nor docs/ has a {where}"
    assert len(found) == 1, f"{where} occurs {len(found)} times: " + ", ".join(
        str(p.relative_to(ROOT)) for p, _, _ in found
    )
    path, lines, start = found[0]
    block: list[str] | None = None
    for line in lines[start + 1 :]:
        if block is None:
            if line.startswith("```python"):
                block = []
            elif line.startswith("#"):
                break
        elif line.startswith("```"):
            return "".join(block)
        else:
            block.append(line)
    raise AssertionError(f"{path.relative_to(ROOT)}: {where} has no python block")


# --------------------------------------------------------------------------------------------
# File listings


def listing(*roots: Path) -> set[Path]:
    """Every file and folder under ``roots`` (the roots themselves left out)."""
    found: set[Path] = set()
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for n in (*dirnames, *filenames):
                found.add(Path(dirpath) / n)
    return found


# --------------------------------------------------------------------------------------------
# Comparing numbers


def _is_missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _plain(v: Any) -> Any:
    """numpy scalars, tuples and DataFrames as the JSON types results.json holds."""
    if isinstance(v, pd.DataFrame):
        return [_plain(r) for r in v.to_dict(orient="records")]
    if isinstance(v, pd.Series):
        return _plain(v.to_dict())
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple | np.ndarray):
        return [_plain(x) for x in v]
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    return v


def mismatches(got: Any, expected: Any, where: str = "") -> list[str]:
    """Where ``got`` (in memory) differs from ``expected`` (as written): numbers by more than
    1e-12 (relative or absolute), anything else when not equal; NaN equals null; a key on one
    side only is a difference (callers pick the written keys the in-memory object has)."""
    got, expected = _plain(got), _plain(expected)
    if _is_missing(got) and _is_missing(expected):
        return []
    if isinstance(got, dict) and isinstance(expected, dict):
        out = []
        for k in sorted(set(got) | set(expected)):
            if k not in expected:
                out.append(f"{where}.{k}: in memory only")
            elif k not in got:
                out.append(f"{where}.{k}: in results.json only")
            else:
                out += mismatches(got[k], expected[k], f"{where}.{k}")
        return out
    if isinstance(got, list) and isinstance(expected, list):
        if len(got) != len(expected):
            return [f"{where}: {len(got)} items in memory, {len(expected)} written"]
        return [m for i, (a, b) in enumerate(zip(got, expected, strict=True))
                for m in mismatches(a, b, f"{where}[{i}]")]  # fmt: skip
    num = (int, float)
    if (isinstance(got, num) and not isinstance(got, bool) and isinstance(expected, num)
            and not isinstance(expected, bool)):  # fmt: skip
        if math.isinf(got) or math.isinf(expected):
            return [] if got == expected else [f"{where}: {got!r} != {expected!r}"]
        if math.isclose(got, expected, rel_tol=TOL, abs_tol=TOL):
            return []
        return [f"{where}: {got!r} in memory, {expected!r} written (diff {got - expected:.3g})"]
    return [] if got == expected else [f"{where}: {got!r} in memory, {expected!r} written"]


def assert_same(got: Any, expected: Any, what: str) -> None:
    bad = mismatches(got, expected)
    assert not bad, f"{what}: in-memory numbers differ from the command's:\n" + "\n".join(bad[:40])


def assert_same_table(got: pd.DataFrame, path: Path, columns: list[str] | None = None) -> None:
    """``got`` equals the CSV table the command wrote (numbers to 1e-12; same rows in order)."""
    written = pd.read_csv(path)
    cols = columns or [c for c in got.columns if c in written.columns]
    assert cols, f"no common columns between the in-memory table and {path.name}"
    assert len(got) == len(written), (
        f"{path.name}: {len(got)} rows in memory, {len(written)} written"
    )
    bad = []
    for c in cols:
        a, b = got[c].reset_index(drop=True), written[c]
        if pd.api.types.is_numeric_dtype(a) and pd.api.types.is_numeric_dtype(b):
            bad += mismatches(
                a.astype(float).tolist(), b.astype(float).tolist(), f"{path.name}:{c}"
            )
        else:
            sa = a.astype(object).where(a.notna(), "").astype(str)
            sb = b.astype(object).where(b.notna(), "").astype(str)
            bad += [f"{path.name}:{c}[{i}]: {x!r} != {y!r}"
                    for i, (x, y) in enumerate(zip(sa, sb, strict=True)) if x != y]  # fmt: skip
    assert not bad, "in-memory table differs from the command's:\n" + "\n".join(bad[:40])


# --------------------------------------------------------------------------------------------
# The mock model


def mock_script(body: dict) -> str:
    """Deterministic answers: to a MalAlgoQA prompt a letter picked by a hash of the prompt (some
    right, some wrong), as the JSON it asks for; to anything else (a tutor turn) a short reply
    that reuses some of the student's words."""
    from support.scripted_server import last_user_message

    text = last_user_message(body)
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    if any("Correct Choice" in str(m.get("content", "")) for m in body.get("messages", [])):
        return json.dumps({"Correct Choice": "ABCD"[digest[0] % 4]})
    words = text.split()
    return " ".join(["Good", "question,", *words[: 1 + digest[0] % 4], "is", "the", "answer."])


# --------------------------------------------------------------------------------------------
# The sandbox


class Sandbox:
    """One test's folders: ``work`` (the snippet's cwd), ``home``, ``tmp``, ``cache`` (the
    snippet's named model cache) and ``cli`` (where the command runs, with its own HOME and
    cache).  All lie under ``root``, which is watched while the snippet runs."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch,
                 capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
        self.root = root
        self.work = root / "work"
        self.home = root / "home"
        self.tmp = root / "tmp"
        self.cache = root / "cache"  # created by whoever writes the cache, not here
        self.cli_dir = root / "cli"
        for d in (self.work, self.home, self.tmp, self.cli_dir / "home"):
            d.mkdir(parents=True)
        self.monkeypatch = monkeypatch
        self.capsys = capsys
        self.env: dict[str, str] = {}  # set for both the command and the snippet (e.g. the server)
        self.printed = ""

    # -- the command line, in-process, outside the snippet's folders --------------------------

    def cli(self, *args: object) -> Path:
        """Run ``edueval *args`` in ``cli/`` (HOME ``cli/home``, cache ``cli/cache``); exit code 0
        asserted; returns ``cli/``."""
        from edueval.cli.main import main

        with self.monkeypatch.context() as m:
            m.chdir(self.cli_dir)
            for k in _REDIRECTS:
                m.delenv(k, raising=False)
            m.setenv("HOME", str(self.cli_dir / "home"))
            m.setenv("EDUEVAL_CACHE_DIR", str(self.cli_dir / "cache"))
            for k, v in self.env.items():
                m.setenv(k, v)
            self.capsys.readouterr()
            code = main([str(a) for a in args])
            out, err = self.capsys.readouterr()
        assert code == 0, f"edueval {' '.join(map(str, args))} -> exit {code}\n{out}\n{err}"
        return self.cli_dir

    def results(self, run: str) -> dict:
        return json.loads((self.cli_dir / run / "results.json").read_text(encoding="utf-8"))

    def give(self, source: Path, name: str | None = None) -> Path:
        """Copy an input file into the working directory."""
        target = self.work / (name or source.name)
        shutil.copyfile(source, target)
        return target

    # -- the snippet -----------------------------------------------------------------------

    def run_snippet(self, name: str) -> dict[str, Any]:
        """Execute the documentation's snippet ``name`` in a fresh namespace in ``work``; returns the
        namespace.  Asserts afterwards that nothing was created outside ``cache``."""
        code = compile(readme_snippet(name), f"docs (From Python: {name})", "exec")
        namespace: dict[str, Any] = {"__name__": "__readme__"}
        before = listing(self.root)
        with self.monkeypatch.context() as m:
            m.chdir(self.work)
            for k in _REDIRECTS:
                m.delenv(k, raising=False)
            m.setenv("HOME", str(self.home))
            m.setenv("TMPDIR", str(self.tmp))
            m.setattr(tempfile, "tempdir", str(self.tmp))
            m.setenv("EDUEVAL_CACHE_DIR", str(self.cache))
            for k, v in self.env.items():
                m.setenv(k, v)
            self.capsys.readouterr()
            exec(code, namespace)  # noqa: S102 - the documentation's own text
            self.printed = self.capsys.readouterr().out
        created = sorted(p for p in listing(self.root) - before
                         if p != self.cache and self.cache not in p.parents)  # fmt: skip
        assert not created, "the snippet created files outside the cache folder:\n" + "\n".join(
            str(p.relative_to(self.root)) for p in created
        )
        return namespace

    def check_summary(self, obj: Any) -> str:
        """``obj.summary()`` is a non-empty string, and the snippet printed it."""
        text = obj.summary()
        assert isinstance(text, str) and text.strip(), "summary() gave no text"
        assert text.strip() in self.printed, "the snippet did not print summary()"
        return text


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
            capsys: pytest.CaptureFixture[str]) -> Sandbox:  # fmt: skip
    return Sandbox(tmp_path, monkeypatch, capsys)


@pytest.fixture
def serve(sandbox: Sandbox) -> Iterator[Callable[..., Any]]:
    """``serve(script=mock_script)`` -> a started scripted OpenAI-compatible server, reached
    through ``OPENAI_BASE_URL`` by both the command and the snippet (stopped after the test).
    A protocol whose prompts need other answers (e.g. QG-SMS judging) passes its own script."""
    from support.scripted_server import ScriptedServer

    started: list[Any] = []

    def _serve(script: Callable[[dict], Any] = mock_script, **kwargs: Any) -> Any:
        server = ScriptedServer(script, **kwargs).start()
        started.append(server)
        sandbox.env["OPENAI_BASE_URL"] = server.url
        return server

    yield _serve
    for server in started:
        server.stop()


@pytest.fixture
def mock_server(serve: Callable[..., Any]) -> Any:
    """The scripted server answering with :func:`mock_script`."""
    return serve()
