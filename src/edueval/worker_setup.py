"""What a Dask worker of a run does before its first task (see :mod:`edueval.executor`).

A worker unpickles the tasks it receives in its main thread while its task thread runs earlier
tasks.  When both threads import a package for the first time at once, Python hands one of them
the package half-initialised ("cannot import name ... from partially initialized module ...
(most likely due to a circular import)"), and the worker's connection to the scheduler breaks
with a traceback on the terminal.  :class:`ImportFirst` imports the modules the run's tasks need
in the worker's main thread, when the plugin is registered and, on a worker started later, while
it registers with the scheduler: in both cases before the worker reads a task.

This module imports ``distributed``: only the executor's cluster path imports it.
"""

from __future__ import annotations

from collections.abc import Sequence

from distributed.diagnostics.plugin import WorkerPlugin

from .process_setup import import_modules, silence_third_party_logs

__all__ = ["ImportFirst"]


class ImportFirst(WorkerPlugin):
    """Import ``modules`` on the worker, in order; with ``silence`` (a local cluster, whose
    workers print on the command's terminal) also raise third-party loggers above CRITICAL.

    ``idempotent``: registering a plugin of the same name again is a no-op, so a run can ask
    for the modules of each batch of tasks it submits at the cost of one round trip."""

    idempotent = True

    def __init__(self, modules: Sequence[str], silence: bool = False) -> None:
        self.modules = tuple(modules)
        self.silence = silence

    def setup(self, worker: object) -> None:
        if self.silence:
            silence_third_party_logs()
        # what cannot be imported here fails where it is used, as it would have without this
        import_modules(self.modules)
