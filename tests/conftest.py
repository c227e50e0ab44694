"""Shared fixtures, and how the suite runs in parallel.

The README's test command runs the suite on every core (pytest-xdist, ``-n auto --dist
loadgroup``): tests are handed out one by one to worker processes, each a fresh Python with its
own ``tmp_path`` tree.  Tests that share something outside their process (the one PostgreSQL
database of ``$EDUEVAL_TEST_PG_URL``) run in one worker, one after another: they carry
``xdist_group`` (set here for every test that takes the ``pg_url`` fixture or the PostgreSQL
parameter of ``db_url``; mark a new one ``@pytest.mark.xdist_group("postgresql")``).  The tests of
a module that take a module-scoped fixture go to one worker together (a group per module, set
here), so that fixture is built once per run, unless the module is marked ``spread`` (its module
fixtures are cheap: a large module then uses every worker); a session-scoped fixture is built
once per worker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def fixtures() -> Path:
    """The folder of stored test data (pyBKT's fit, the QG-SMS repository's questions, mirt's)."""
    return FIXTURES


#: xdist group of the tests that use the shared PostgreSQL database (one worker runs them all)
POSTGRESQL_GROUP = "postgresql"


def _uses_postgresql(item: pytest.Item) -> bool:
    names = getattr(item, "fixturenames", ())
    if "pg_url" in names:
        return True
    callspec = getattr(item, "callspec", None)
    return callspec is not None and callspec.params.get("db_url") == "postgresql"


def _uses_a_module_fixture(item: pytest.Item) -> bool:
    """Whether the test takes a fixture built once per module (or class, or package)."""
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.values() if info is not None else ()
    return any(d[-1].scope in ("module", "class", "package") for d in defs if d)


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """xdist groups (``--dist loadgroup``): every test on the shared PostgreSQL database in one
    group; the tests of a module that share a module-scoped fixture (an expensive fit, a server)
    in one group per module, so that the fixture is built once per run, not once per worker.
    Then the modules that hold a ``slow`` test are moved to the front."""
    for item in items:
        if item.get_closest_marker("xdist_group"):
            continue
        if _uses_postgresql(item):
            item.add_marker(pytest.mark.xdist_group(POSTGRESQL_GROUP))
        elif _uses_a_module_fixture(item) and not item.get_closest_marker("spread"):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
    # modules with a slow test first (each module kept whole and in order, so its module-scoped
    # fixtures are built once): on several workers the long tests start early instead of
    # finishing last on one worker while the others are idle
    slow = {item.nodeid.split("::", 1)[0] for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.nodeid.split("::", 1)[0] not in slow)


def pytest_configure(config: pytest.Config) -> None:
    """Refuse, in one line, the one combination under which ``--dist loadgroup`` silently does
    nothing: pytest >= 9.2 with pytest-xdist <= 3.8 (xdist groups a test by rewriting its private
    ``_nodeid``, which pytest 9.2 no longer reads). The PostgreSQL tests would then run on two
    workers at once and drop each other's tables."""
    if config.getoption("dist", "no") != "loadgroup" or not config.getoption("numprocesses", None):
        return
    from importlib.metadata import version

    from packaging.version import Version

    if Version(pytest.__version__) >= Version("9.2") and Version(
        version("pytest-xdist")
    ) <= Version("3.8.0"):
        raise pytest.UsageError(
            f"pytest {pytest.__version__} with pytest-xdist {version('pytest-xdist')}: "
            "--dist loadgroup has no effect (the xdist groups are dropped); install the test "
            "extra's pins (pyproject.toml: pytest<9.2)"
        )


def _typer_tree_key(app: Any) -> tuple[Any, ...]:
    """What the Click tree built from a Typer ``app`` depends on that a test may change: the
    commands and groups registered on it, recursively."""
    groups = getattr(app, "registered_groups", [])
    return (
        id(app),
        tuple(id(c) for c in getattr(app, "registered_commands", [])),
        tuple((id(g), _typer_tree_key(g.typer_instance)) for g in groups),
    )


@pytest.fixture(scope="session", autouse=True)
def _command_tree_built_once() -> Iterator[None]:
    """``edueval.cli.main.main`` builds Typer's Click tree of the whole command line on every call
    (0.3-0.9 s); a test process calls it a few thousand times with the same tree, so it is built
    once per tree (a test that registers a command gets a new one)."""
    import typer.main

    built: dict[tuple[Any, ...], Any] = {}
    original = typer.main.get_command

    def get_command(app: Any) -> Any:
        key = _typer_tree_key(app)
        if key not in built:
            built[key] = original(app)
        return built[key]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(typer.main, "get_command", get_command)
        yield


@dataclass
class CliResult:
    """Exit code and what one in-process run of the command line printed."""

    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return self.err.splitlines()


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    """``cli("kt", "fit", path, "--out", dir)`` -> exit code, stdout and stderr of that run only."""

    from edueval.cli.main import main

    def run(*args: object) -> CliResult:
        capsys.readouterr()  # drop anything printed before
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str | bytes], Path]:
    """``write("name.csv", text)`` -> path of a new file in the test's tmp folder."""

    def _write(name: str, content: str | bytes) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return _write
