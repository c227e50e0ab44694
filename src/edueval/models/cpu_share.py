"""How busy the machine's other processes keep its CPUs: the embedded model's thread choice.

llama.cpp generates a token as a chain of small steps that every worker thread must finish before
the next step starts, so one thread that the operating system does not schedule stalls the
others.  On 2 idle cores two generation threads are ~1.5x faster than one (19.5 vs 29 ms per
token for SmolLM2-135M, measured); on 2 cores shared with other jobs two threads were 5-10x
*slower* than one (issue 22).  :class:`OtherLoad` measures, between two calls, how many cores
other processes used -- the machine's busy time (``/proc/stat``) minus this process's own CPU
time -- so the backend can use every core only while nothing else wants them.

The thread count changes speed only: llama.cpp splits each operation over threads by output rows,
so the same prompt gives the same tokens and the same logits with 1 or 2 threads
(``tests/models/test_local_answers.py``).
"""

from __future__ import annotations

import os
import time

__all__ = ["OtherLoad", "machine_busy_seconds"]

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def machine_busy_seconds(stat_path: str = "/proc/stat") -> float | None:
    """CPU seconds all processes of the machine have used since boot (every CPU's time that was
    neither idle nor waiting for I/O), or ``None`` where ``/proc/stat`` cannot be read (not
    Linux)."""
    try:
        with open(stat_path, encoding="ascii") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu" or len(fields) < 6:
        return None
    ticks = [int(x) for x in fields[1:9]]  # user nice system idle iowait irq softirq steal
    return (sum(ticks) - ticks[3] - ticks[4]) / _TICK


class OtherLoad:
    """Cores the *other* processes kept busy on average since the previous :meth:`sample` (the
    first interval starts when the object is made, e.g. with the model backend, so the first call
    is measured too).

    ``sample()`` returns that average (``None`` when the interval is too short to measure and
    ``wait`` is false, or where the machine's busy time cannot be read)."""

    MIN_INTERVAL_S = 0.25  # /proc/stat counts in 10 ms ticks

    def __init__(self, stat_path: str = "/proc/stat") -> None:
        self._stat_path = stat_path
        self._last: tuple[float, float, float] | None = self._now()

    def _now(self) -> tuple[float, float, float] | None:
        busy = machine_busy_seconds(self._stat_path)
        if busy is None:
            return None
        return time.monotonic(), busy, time.process_time()

    def sample(self, wait: bool = False) -> float | None:
        """The other processes' average load since the previous sample; with ``wait``, an
        interval too short to measure is first extended to :attr:`MIN_INTERVAL_S` (a sleep of at
        most that long) instead of giving no answer."""
        now = self._now()
        if now is None:
            return None
        last = self._last
        if last is not None and now[0] - last[0] < self.MIN_INTERVAL_S:
            if not wait:
                return None  # keep the previous interval running
            time.sleep(self.MIN_INTERVAL_S - (now[0] - last[0]))
            now = self._now()
            if now is None:
                return None
        self._last = now
        if last is None:
            return None
        wall, busy, own = (a - b for a, b in zip(now, last, strict=True))
        return max(0.0, busy - own) / wall
