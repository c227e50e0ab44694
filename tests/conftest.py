"""Shared fixtures."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


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
