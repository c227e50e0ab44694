"""The one executor seam: where independent units of work (replications, sizes, groups) run.

Protocol code cuts its work into independent tasks, each carrying its own seed (from
``numpy.random.SeedSequence(seed).spawn(n)``, :mod:`edueval.seeding`), and hands them to
``executor.map(fn, tasks)``, which returns the results in task order.  Because a task's result
depends only on the task, a run gives the same numbers in process and on any number of workers.

Without ``--cluster`` / ``--scheduler`` / ``$EDUEVAL_SCHEDULER`` the :class:`InProcess` executor
runs the tasks one after another in this process -- today's path, with no Dask import.  With them,
:class:`DaskExecutor` submits the tasks to a Dask ``distributed`` cluster: ``--cluster local:N``
starts a ``LocalCluster`` of N single-threaded worker processes for the run, ``--scheduler
ADDRESS`` (or the variable) connects to a running ``dask scheduler``.  This is the only module that
imports Dask, and only then.

>>> with open_executor(cluster="local:2") as ex:
...     squares = ex.map(pow, [(2, 2), (3, 2)])
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

from .io import InputError

__all__ = [
    "ENV_SCHEDULER",
    "DaskExecutor",
    "Executor",
    "InProcess",
    "open_executor",
    "parse_cluster",
]

ENV_SCHEDULER = "EDUEVAL_SCHEDULER"
INSTALL_HINT = "pip install 'edueval[scale]'"
#: how long to try a scheduler before giving up (``$EDUEVAL_CONNECT_TIMEOUT``, Dask's syntax)
_CONNECT_TIMEOUT = "10s"


class Executor(Protocol):
    """Runs independent tasks: ``map(fn, tasks)`` is ``[fn(*t) for t in tasks]``, in order."""

    def map(self, fn: Callable[..., Any], tasks: Sequence[tuple]) -> list: ...

    def describe(self) -> dict[str, Any]:
        """What ran the tasks, for config.json."""
        ...


class InProcess:
    """Tasks one after another in this process (the default; exactly the path without Dask)."""

    def map(self, fn: Callable[..., Any], tasks: Sequence[tuple]) -> list:
        return [fn(*t) for t in tasks]

    def describe(self) -> dict[str, Any]:
        return {"kind": "in-process"}


class DaskExecutor:
    """Tasks on a Dask ``distributed`` client; results gathered in task order."""

    def __init__(self, client: Any, description: dict[str, Any]) -> None:
        self.client = client
        self.description = description

    def map(self, fn: Callable[..., Any], tasks: Sequence[tuple]) -> list:
        if not tasks:
            return []
        columns = list(zip(*tasks, strict=True))
        # pure=False: every task runs (no key hashing of possibly large arguments)
        futures = self.client.map(fn, *columns, pure=False)
        return self.client.gather(futures)

    def describe(self) -> dict[str, Any]:
        return dict(self.description)


def parse_cluster(value: str) -> int:
    """Worker count of ``--cluster local:N`` (N >= 1); anything else is bad input."""
    m = re.fullmatch(r"local:(\d+)", value.strip())
    if m is None or int(m.group(1)) < 1:
        raise InputError(
            f"--cluster must be local:N with N >= 1 worker processes (e.g. local:4), got {value!r}"
        )
    return int(m.group(1))


def _distributed():
    try:
        import distributed
    except ImportError:
        raise InputError(
            f"running on a Dask cluster needs dask and distributed: {INSTALL_HINT}"
        ) from None
    return distributed


@contextmanager
def _local_cluster(n_workers: int) -> Iterator[DaskExecutor]:
    distributed = _distributed()
    cluster = distributed.LocalCluster(
        n_workers=n_workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
    )
    try:
        with distributed.Client(cluster) as client:
            yield DaskExecutor(client, {"kind": "dask", "cluster": f"local:{n_workers}"})
    finally:
        cluster.close()


@contextmanager
def _remote(address: str, source: str) -> Iterator[DaskExecutor]:
    distributed = _distributed()
    try:
        timeout = os.environ.get("EDUEVAL_CONNECT_TIMEOUT", _CONNECT_TIMEOUT)
        client = distributed.Client(address, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(
            f"cannot reach the Dask scheduler {address!r} ({source}): {reason}"
        ) from None
    try:
        yield DaskExecutor(client, {"kind": "dask", "scheduler": address})
    finally:
        client.close()


@contextmanager
def open_executor(cluster: str | None = None, scheduler: str | None = None) -> Iterator[Executor]:
    """The run's executor, started on entry and stopped on exit.

    ``cluster`` (``local:N``) and ``scheduler`` (an address) exclude each other; with neither,
    ``$EDUEVAL_SCHEDULER`` names a scheduler, and without that the tasks run in process.
    """
    if cluster and scheduler:
        raise InputError("give --cluster or --scheduler, not both")
    if cluster:
        n = parse_cluster(cluster)
        with _local_cluster(n) as ex:
            yield ex
        return
    source = "--scheduler"
    if not scheduler:
        scheduler = os.environ.get(ENV_SCHEDULER, "").strip() or None
        source = f"${ENV_SCHEDULER}"
    if scheduler:
        with _remote(scheduler, source) as ex:
            yield ex
        return
    yield InProcess()
