"""Progress bars for long work: shown on a terminal and in a Jupyter notebook, silent in pipes,
tests and CI.

On a terminal the bar is rich's, on stderr.  In a notebook (an IPython kernel) it is rich's
Jupyter rendering, a widget that updates in place, when ``ipywidgets`` is installed; without it,
tqdm's text bar on stderr (the notebook shows its carriage-return updates in place), or nothing
when tqdm is not installed either.  Anywhere else (a pipe, a file, a plain script under CI) there
is none.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

__all__ = ["track", "enabled", "in_notebook"]

_FORCE: bool | None = None


def in_notebook() -> bool:
    """True inside a Jupyter (IPython kernel) session: a shell with a kernel, not the IPython
    terminal.  IPython is never imported here: only an IPython already running counts."""
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    shell = get() if callable(get) else None
    return shell is not None and getattr(shell, "kernel", None) is not None


def enabled() -> bool:
    """True when stderr is a terminal or this is a notebook (or progress was forced on with
    :func:`set_enabled`)."""
    if _FORCE is not None:
        return _FORCE
    return sys.stderr.isatty() or in_notebook()


def set_enabled(value: bool | None) -> None:
    """Force progress bars on/off (``None`` = decide from the terminal or notebook)."""
    global _FORCE
    _FORCE = value


def _installed(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def track(items: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
    """Iterate over ``items`` with a progress bar when :func:`enabled`: rich's on a terminal and
    (with ipywidgets) in a notebook, tqdm's text bar in a notebook without ipywidgets."""
    if not enabled():
        yield from items
        return
    notebook = in_notebook()
    if notebook and not _installed("ipywidgets"):
        if not _installed("tqdm"):
            yield from items
            return
        from tqdm.std import tqdm  # type: ignore[import-untyped]

        yield from tqdm(items, desc=description, total=total, file=sys.stderr, leave=False)
        return
    from rich.console import Console
    from rich.progress import track as rich_track

    console = Console(force_jupyter=True) if notebook else Console(stderr=True)
    yield from rich_track(
        items, description=description, total=total, console=console, transient=True
    )
