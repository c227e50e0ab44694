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
``dask.dataframe`` on the executor's client), and :mod:`edueval.worker_setup`, what each worker
does first.

Before a cluster or client starts, the thread that starts it imports everything the cluster path
imports (:data:`CLUSTER_MODULES`) and silences third-party logging; each worker does the same in
its main thread before its first task, and imports the modules of the task functions before
they are submitted (:func:`prepare_workers`).  Two threads importing one package at once leave
it half-initialised for one of them; the client's and the workers' threads are the other thread.

>>> with open_executor(cluster="local:2") as ex:
...     squares = ex.map(pow, [(2, 2), (3, 2)])
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

from .extras import install_command, require
from .io import InputError
from .process_setup import _SILENT, import_modules, silence_third_party_logs

__all__ = [
    "ENV_SCHEDULER",
    "DaskExecutor",
    "Executor",
    "InProcess",
    "open_executor",
    "parse_cluster",
]

ENV_SCHEDULER = "EDUEVAL_SCHEDULER"
INSTALL_HINT = install_command("scale")
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
        prepare_workers(self.client, fn, *tasks[0])
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
            "cluster= must be local:N with N >= 1 worker processes, optionally :MEMORY per "
            f"worker (e.g. local:4 or local:2:3GB), got {value!r}"
        )
    return int(m.group(1)), m.group(2)


def _distributed():
    return require("distributed", "scale", "running on a Dask cluster")


#: what the cluster path imports: Dask's dataframe stack (with its query planner, dask_expr),
#: pyarrow, and distributed's shuffle and Arrow (de)serialisation.  Imported in the thread that
#: starts the cluster before it starts, and on each worker in its main thread before its first
#: task: Python imports a package half-way when two threads import it at once, and the second
#: thread fails with "cannot import name ... from partially initialized module" (a worker
#: unpickling a dask_expr graph while its task thread first imported dask.dataframe did)
CLUSTER_MODULES = (
    "pandas",
    "pyarrow",
    "pyarrow.parquet",
    "pyarrow.dataset",
    "dask.dataframe",
    "dask.dataframe.dask_expr",
    "dask.dataframe.dispatch",
    "dask.dataframe.io.parquet",
    "dask.dataframe.dask_expr.io.parquet",
    "dask.dataframe.dask_expr._shuffle",
    "distributed.protocol.arrow",
    "distributed.shuffle._shuffle",
    "distributed.shuffle._arrow",
    "distributed.shuffle._merge",
)


def _prepare_this_process() -> None:
    """Before a client or cluster starts (its threads import on their own): the cluster path's
    modules imported in this thread, third-party logging silenced."""
    import_modules(CLUSTER_MODULES)
    silence_third_party_logs()


def _module_of(obj: Any) -> str | None:
    import functools

    while isinstance(obj, functools.partial):
        obj = obj.func
    name = getattr(obj, "__module__", None) if callable(obj) else type(obj).__module__
    return None if name in (None, "builtins", "__main__") else name


def prepare_workers(client: Any, *objects: Any) -> None:
    """Before tasks that use ``objects`` (task functions, their arguments) are submitted:
    import on every worker, in its main thread, the modules these come from.

    A worker unpickles tasks in its main thread while its task thread runs an earlier one; a
    module first imported by both at once is half-initialised for one of them.  The imports run
    as a worker plugin, so a worker started later (one replacing a worker that died) does them
    too, before its first task; registering the same modules again is a no-op."""
    from .worker_setup import ImportFirst

    modules = tuple(sorted({m for o in objects if (m := _module_of(o))}))
    if modules:
        client.register_plugin(ImportFirst(modules), name="edueval-import:" + ",".join(modules))


def _start_workers(client: Any, local: bool) -> None:
    """Every worker (and each started later) imports :data:`CLUSTER_MODULES` in its main
    thread before its first task; a local cluster's workers, which print on this terminal,
    also silence third-party logging."""
    from .worker_setup import ImportFirst

    client.register_plugin(ImportFirst(CLUSTER_MODULES, silence=local), name="edueval-cluster")


def _start_remote_workers(client: Any, address: str) -> None:
    try:
        _start_workers(client, local=False)
    except Exception as exc:  # e.g. workers without edueval cannot unpickle the plugin
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(
            f"the workers of the Dask scheduler {address!r} could not be prepared for the run "
            f"(is edueval installed where they run?): {type(exc).__name__}: {reason}"
        ) from None


@contextmanager
def _local_cluster(n_workers: int, memory: str | None) -> Iterator[DaskExecutor]:
    distributed = _distributed()
    _prepare_this_process()
    cluster = distributed.LocalCluster(
        n_workers=n_workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        # no dashboard; its HTTP server (health routes) still starts: on a free local port, not
        # 8787, which a second run (or the user's own cluster) may hold
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
        memory_limit=memory or "auto",
        silence_logs=_SILENT,
        # one thread per worker process: numba's parallel loops would otherwise oversubscribe
        env={"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"},
    )
    try:
        with distributed.Client(cluster) as client:
            _start_workers(client, local=True)
            description = {"kind": "dask", "cluster": f"local:{n_workers}"}
            if memory:
                description["worker_memory"] = memory
            yield DaskExecutor(client, description)
    finally:
        cluster.close()


@contextmanager
def _remote(address: str, source: str) -> Iterator[DaskExecutor]:
    distributed = _distributed()
    _prepare_this_process()
    try:
        timeout = os.environ.get("EDUEVAL_CONNECT_TIMEOUT", _CONNECT_TIMEOUT)
        client = distributed.Client(address, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(
            f"cannot reach the Dask scheduler {address!r} ({source}): {reason}"
        ) from None
    try:
        _start_remote_workers(client, address)
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
        raise InputError("give cluster= or scheduler=, not both")
    if cluster:
        n, memory = parse_cluster(cluster)
        with _local_cluster(n, memory) as ex:
            yield ex
        return
    source = "scheduler="
    if not scheduler:
        scheduler = os.environ.get(ENV_SCHEDULER, "").strip() or None
        source = f"${ENV_SCHEDULER}"
    if scheduler:
        with _remote(scheduler, source) as ex:
            yield ex
        return
    yield InProcess()
