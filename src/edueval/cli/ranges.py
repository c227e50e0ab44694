"""Ranges of the command-line options, and a memory check before a large allocation.

Every numeric option declares both bounds (``typer.Option(min=..., max=...)``; the contract test
``tests/contract/test_option_ranges.py`` walks the whole command tree and fails on one without),
so that a value out of range is Click's usage error: exit 2 and one line naming the option.

* seeds: ``0 .. SEED_MAX`` (numpy's ``SeedSequence`` takes no negative seed);
* probabilities and shares: ``[0, 1]``; an open end (a margin > 0) is refined by the command's
  own one-line check;
* counts: ``1 .. COUNT_MAX`` (or ``0`` where zero means "none" or "off").  ``COUNT_MAX`` is
  numpy's largest index (int64), not a smaller guess: a count that drives an allocation is
  refused by :func:`check_memory` before any work starts when it cannot fit in this machine's
  memory, and a count that drives time only (iterations, model calls) is the user's to spend;
* ``--limit``: ``1 .. COUNT_MAX`` (a limit beyond the data means all of it).

List-valued options written as comma-separated text (``--sizes 5,10``) check each element in a
callback from :func:`int_list` or :func:`float_list`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

#: Largest seed: numpy's seeds are non-negative; 63 bits keep them a signed 64-bit integer.
SEED_MAX = 2**63 - 1
#: Largest count: numpy's largest array index (int64).  See the module docstring.
COUNT_MAX = 2**63 - 1
#: Largest seconds for one model call attempt (a day).
TIMEOUT_MAX = 86_400.0
#: Most model calls in flight at once per server.
CONNECTIONS_MAX = 4096


def _element_check(
    text: str,
    convert: Callable[[str], float],
    low: float,
    high: float,
    high_open: bool,
    what: str,
    allow_empty: bool = False,
) -> str:
    if not allow_empty and not any(part.strip() for part in str(text).split(",")):
        raise typer.BadParameter(f"needs at least one value (comma-separated), got {text!r}")
    for part in str(text).split(","):
        if not part.strip():
            continue
        try:
            value = convert(part.strip())
        except ValueError:
            raise typer.BadParameter(f"{part.strip()!r} is not {what}") from None
        above = value >= high if high_open else value > high
        if not (value >= low and not above):  # also refuses nan
            if high == COUNT_MAX:
                raise typer.BadParameter(f"{part.strip()} is not at least {low}")
            end = ")" if high_open else "]"
            raise typer.BadParameter(f"{part.strip()} is not in [{low:g}, {high:g}{end}")
    return text


def int_list(low: int, high: int = COUNT_MAX) -> Callable[[Any], Any]:
    """Callback for a comma-separated list of at least one integer, each in ``[low, high]``."""

    def check(value: Any) -> Any:
        if value is None:
            return value
        return _element_check(value, int, low, high, False, "an integer")

    return check


def float_list(
    low: float, high: float, *, high_open: bool = False, allow_empty: bool = False
) -> Callable[[Any], Any]:
    """Callback for a comma-separated list of numbers, each in ``[low, high]`` (or
    ``[low, high)`` with ``high_open``); at least one unless ``allow_empty``."""

    def check(value: Any) -> Any:
        if value is None:
            return value
        return _element_check(value, float, low, high, high_open, "a number", allow_empty)

    return check


def _physical_memory() -> int | None:
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    return pages * size if pages > 0 and size > 0 else None


def _read_limit(path: Path) -> int | None:
    """A cgroup memory limit file's value in bytes; None for "max", absent or unreadable."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _cgroup_limits(proc_cgroup: Path, root: Path) -> list[int]:
    """The memory limits of this process's cgroup and of every cgroup above it (v2's
    ``memory.max``, v1's ``memory.limit_in_bytes``): the smallest is what the process may use."""
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        return []
    limits = []
    for line in lines:
        _, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if controllers == "":  # cgroup v2: one unified hierarchy
            base, name = root, "memory.max"
        elif "memory" in controllers.split(","):
            base, name = root / "memory", "memory.limit_in_bytes"
        else:
            continue
        here = base / path.lstrip("/")
        while True:
            value = _read_limit(here / name)
            if value is not None:
                limits.append(value)
            if here == base or base not in here.parents:
                break
            here = here.parent
    return limits


def memory_limit(
    proc_cgroup: Path = Path("/proc/self/cgroup"), cgroup_root: Path = Path("/sys/fs/cgroup")
) -> tuple[int, str] | None:
    """The memory this process may use, in bytes, and where the limit comes from: the smallest
    of the machine's physical memory, the memory limit of its cgroup (a container's or a batch
    job's: v2 or v1) and its address-space and data rlimits; None where none is known."""
    found: list[tuple[int, str]] = []
    physical = _physical_memory()
    if physical is not None:
        found.append((physical, "this machine has"))
    found += [(v, "this process's cgroup allows") for v in _cgroup_limits(proc_cgroup, cgroup_root)]
    try:
        import resource

        for which, name in (
            (resource.RLIMIT_AS, "RLIMIT_AS"),
            (resource.RLIMIT_DATA, "RLIMIT_DATA"),
        ):
            soft = resource.getrlimit(which)[0]
            if soft != resource.RLIM_INFINITY and soft > 0:
                found.append((soft, f"this process's {name} allows"))
    except (ImportError, OSError, ValueError):  # pragma: no cover - resource is POSIX-only
        pass
    return min(found, key=lambda f: f[0]) if found else None


def memory_bytes() -> int | None:
    """The memory this process may use in bytes (:func:`memory_limit`), or None where the
    system does not say."""
    limit = memory_limit()
    return limit[0] if limit else None


def _gb(nbytes: float) -> str:
    gb = nbytes / 1e9
    return f"{gb:,.0f}" if gb >= 10 else f"{gb:.2g}"


def check_memory(nbytes: float, *drivers: tuple[str, int]) -> None:
    """Refuse (one line, exit 2) work whose estimated memory ``nbytes`` exceeds what this process
    may use (:func:`memory_limit`: physical memory, its cgroup's limit, its rlimits), before
    anything is allocated.  ``drivers`` are the (option, value) pairs the estimate multiplies;
    the message names the largest."""
    from ..io import InputError

    limit = memory_limit()
    if limit is None or nbytes <= limit[0]:
        return
    total, source = limit
    option, value = max(drivers, key=lambda d: d[1])
    raise InputError(
        f"{option} {value} needs about {_gb(nbytes)} GB of memory; {source} {_gb(total)} GB"
    )
