"""Progress bars for long work: shown on a terminal, silent in pipes, tests and CI."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

__all__ = ["track", "enabled"]

_FORCE: bool | None = None


def enabled() -> bool:
    """True when stderr is a terminal (or progress was forced on with :func:`set_enabled`)."""
    if _FORCE is not None:
        return _FORCE
    return sys.stderr.isatty()


def set_enabled(value: bool | None) -> None:
    """Force progress bars on/off (``None`` = decide from the terminal)."""
    global _FORCE
    _FORCE = value


def track(items: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
    """Iterate over ``items`` with a rich progress bar on stderr when :func:`enabled`."""
    if not enabled():
        yield from items
        return
    from rich.console import Console
    from rich.progress import track as rich_track

    yield from rich_track(
        items, description=description, total=total, console=Console(stderr=True), transient=True
    )
