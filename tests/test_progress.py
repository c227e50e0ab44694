"""Progress bars: on a terminal, in a notebook (detected from a running IPython kernel), and
off when not interactive (issue 39, point 6)."""

from __future__ import annotations

import sys
import types

import pytest

from edueval import progress


@pytest.fixture(autouse=True)
def _decide_from_the_environment(monkeypatch):
    monkeypatch.setattr(progress, "_FORCE", None)


def _fake_ipython(monkeypatch, shell):
    module = types.ModuleType("IPython")
    module.get_ipython = lambda: shell  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", module)


def test_a_kernel_is_a_notebook_and_the_ipython_terminal_is_not(monkeypatch):
    _fake_ipython(monkeypatch, types.SimpleNamespace(kernel=object()))
    assert progress.in_notebook()
    _fake_ipython(monkeypatch, types.SimpleNamespace())  # TerminalInteractiveShell: no kernel
    assert not progress.in_notebook()
    _fake_ipython(monkeypatch, None)  # IPython imported, no shell running
    assert not progress.in_notebook()
    monkeypatch.delitem(sys.modules, "IPython")
    assert not progress.in_notebook()


def test_off_when_neither_a_terminal_nor_a_notebook(monkeypatch, capsys):
    monkeypatch.setattr(progress, "in_notebook", lambda: False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    assert not progress.enabled()
    assert list(progress.track(range(5), "work")) == [0, 1, 2, 3, 4]
    assert capsys.readouterr().err == ""


def test_a_notebook_with_ipywidgets_gets_richs_jupyter_rendering(monkeypatch):
    import rich.progress

    seen = {}

    def fake_track(items, *, description, total, console, transient):
        seen.update(jupyter=console.is_jupyter, description=description, total=total)
        yield from items

    monkeypatch.setattr(progress, "in_notebook", lambda: True)
    monkeypatch.setattr(progress, "_installed", lambda name: True)
    monkeypatch.setattr(rich.progress, "track", fake_track)
    assert progress.enabled()
    assert list(progress.track(range(3), "calls", total=3)) == [0, 1, 2]
    assert seen == {"jupyter": True, "description": "calls", "total": 3}


def test_a_notebook_without_ipywidgets_gets_tqdms_text_bar(monkeypatch, capsys):
    pytest.importorskip("tqdm")
    monkeypatch.setattr(progress, "in_notebook", lambda: True)
    monkeypatch.setattr(progress, "_installed", lambda name: name != "ipywidgets")
    assert list(progress.track(range(4), "calls", total=4)) == [0, 1, 2, 3]
    err = capsys.readouterr().err
    assert "calls:" in err and "/4 [" in err  # the bar drawn, then cleared (leave=False)


def test_a_terminal_keeps_richs_bar_on_stderr(monkeypatch):
    import rich.progress

    seen = {}

    def fake_track(items, *, description, total, console, transient):
        seen.update(jupyter=console.is_jupyter, stderr=console.stderr)
        yield from items

    monkeypatch.setattr(progress, "in_notebook", lambda: False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(rich.progress, "track", fake_track)
    assert list(progress.track(range(2), "x")) == [0, 1]
    assert seen == {"jupyter": False, "stderr": True}
