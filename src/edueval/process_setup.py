"""What a process of a run does before a cluster or client starts, or before a Dask worker's first
task: import the modules the tasks need in this thread, and silence third-party logging.

No third-party import: both :mod:`edueval.executor` (the thread that starts a cluster) and
:mod:`edueval.worker_setup` (each worker, which imports ``distributed``) use it.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["THIRD_PARTY_LOGGERS", "import_modules", "silence_third_party_logs"]

#: above CRITICAL: no third-party log line reaches the terminal (a connection torn down as the
#: cluster closes is logged as CRITICAL "Failed to deserialize" on a run that succeeded); what
#: fails is raised and said in one line by the command
_SILENT = 60

#: the loggers of the cluster path: Dask and distributed, and the event loop they run on
#: (tornado's "Exception in callback", asyncio's "Task exception was never retrieved")
THIRD_PARTY_LOGGERS = ("distributed", "dask", "tornado", "asyncio", "bokeh")


def import_modules(names: Sequence[str]) -> list[str]:
    """Import ``names`` in this thread, in order; return those that could not be imported.

    A missing optional piece (pyarrow on a worker that never reads data) is left to fail where
    it is used, in one line there."""
    import importlib

    missing = []
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    return missing


def silence_third_party_logs() -> None:
    """Raise every logger of :data:`THIRD_PARTY_LOGGERS` (and each child given its own level,
    e.g. distributed's ``tornado.application`` at ERROR with its own stderr handler) above
    CRITICAL, for the rest of this process.

    Dask logs every shuffle's start and end at WARNING and a failed task at ERROR; the event
    loop logs exceptions in callbacks.  A command prints only its own lines and says itself, in
    one line, what failed: a task's error is raised to the command by ``gather``."""
    import logging

    roots = set(THIRD_PARTY_LOGGERS)
    known = [n for n, x in logging.root.manager.loggerDict.items() if isinstance(x, logging.Logger)]
    for name in [*THIRD_PARTY_LOGGERS, *known]:
        if name.split(".")[0] in roots:
            logging.getLogger(name).setLevel(_SILENT)
