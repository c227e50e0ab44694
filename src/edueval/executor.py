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
imports Dask, and only then, with :mod:`edueval.partitioned`, its data side (datasets read through
``dask.dataframe`` on the executor's client).

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

    #: no Dask client: datasets (:mod:`edueval.partitioned`) are read in this process
    dask_client = None

    def map(self, fn: Callable[..., Any], tasks: Sequence[tuple]) -> list:
        return [fn(*t) for t in tasks]

    def describe(self) -> dict[str, Any]:
        return {"kind": "in-process"}


class DaskExecutor:
    """Tasks on a Dask ``distributed`` client; results gathered in task order."""

    def __init__(self, client: Any, description: dict[str, Any]) -> None:
        self.client = client
        self.description = description

    @property
    def dask_client(self) -> Any:
        """The client that :mod:`edueval.partitioned` reads and shuffles datasets with."""
        return self.client

    def map(self, fn: Callable[..., Any], tasks: Sequence[tuple]) -> list:
        if not tasks:
            return []
        columns = list(zip(*tasks, strict=True))
        # pure=False: every task runs (no key hashing of possibly large arguments)
        futures = self.client.map(fn, *columns, pure=False)
        return self.client.gather(futures)

    def describe(self) -> dict[str, Any]:
        return dict(self.description)


def parse_cluster(value: str) -> tuple[int, str | None]:
    """Worker count and memory limit of ``--cluster local:N`` or ``local:N:MEMORY`` (e.g.
    ``local:2:3GB``, each worker's limit; by default the machine's memory is shared out)."""
    m = re.fullmatch(r"local:(\d+)(?::(\d+(?:\.\d+)?\s*[KMGT]i?B))?", value.strip(), re.IGNORECASE)
    if m is None or int(m.group(1)) < 1:
        raise InputError(
            "--cluster must be local:N with N >= 1 worker processes, optionally :MEMORY per "
            f"worker (e.g. local:4 or local:2:3GB), got {value!r}"
        )
    return int(m.group(1)), m.group(2)


def _distributed():
    try:
        import distributed
    except ImportError:
        raise InputError(
            f"running on a Dask cluster needs dask and distributed: {INSTALL_HINT}"
        ) from None
    return distributed


#: above CRITICAL: Dask's own log lines never reach the terminal (a connection torn down as the
#: cluster closes is logged as CRITICAL "Failed to deserialize" on a run that succeeded); what
#: fails is raised and said in one line by the command
_SILENT = 60


def _quiet(distributed: Any) -> None:
    """Dask logs every shuffle's start and end at WARNING, and a failed task (with its traceback)
    at ERROR; a run prints only its own lines, and says itself in one line what failed."""
    import logging

    for name in ("distributed", "distributed.shuffle"):
        logging.getLogger(name).setLevel(_SILENT)


@contextmanager
def _local_cluster(n_workers: int, memory: str | None) -> Iterator[DaskExecutor]:
    distributed = _distributed()
    _quiet(distributed)
    cluster = distributed.LocalCluster(
        n_workers=n_workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        memory_limit=memory or "auto",
        silence_logs=_SILENT,
        # one thread per worker process: numba's parallel loops would otherwise oversubscribe
        env={"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"},
    )
    try:
        with distributed.Client(cluster) as client:
            description = {"kind": "dask", "cluster": f"local:{n_workers}"}
            if memory:
                description["worker_memory"] = memory
            yield DaskExecutor(client, description)
    finally:
        cluster.close()


@contextmanager
def _remote(address: str, source: str) -> Iterator[DaskExecutor]:
    distributed = _distributed()
    _quiet(distributed)
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
        n, memory = parse_cluster(cluster)
        with _local_cluster(n, memory) as ex:
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
