"""What every results object offers (issue 39, 5): ``summary()``, ``to_frame()``, ``results()``
and ``save(folder)``.

* ``results()`` -- the headline numbers exactly as the command's ``results.json`` holds them
  (JSON values: NaN as None), less the two entries every run folder adds itself: ``tables``
  (the file of each table) and ``status``.
* ``save(folder)`` -- the run folder the command would write (``config.json``, the tables,
  ``report.html``, ``results.json``), written by the same function of the run layer that the
  command calls, so a notebook and the command line cannot write different folders.  The
  folder is checked as the command checks ``--out`` (a folder holding files edueval did not
  write is refused; another command's run is replaced only with ``overwrite=True``).  Returns
  the folder.  ``config.json`` records the parameters the results object knows; its
  ``inputs`` are empty (the tables came from Python, not from files).

The layering: results objects live in the pure protocol layer, which never imports the run
layer (reports, figures: jinja2, matplotlib), not even inside a function -- the import-linter
contracts of pyproject.toml count lazy imports too.  So :meth:`RunResults.save` names its
writer (``"edueval.items.pipeline:save_analysis"``) and imports it by name on first use, as
the protocol packages' ``__init__`` offer their run-layer names (PEP 562): importing a
protocol still loads no run-layer module, and the writer stays in the run layer beside the
command it serves.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

__all__ = ["RunResults", "save", "to_jsonable"]


def to_jsonable(obj: Any) -> Any:
    """Convert numpy/pandas scalars and containers into plain JSON values (NaN -> null)."""
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [to_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, pd.DataFrame):
        return [to_jsonable(r) for r in obj.to_dict(orient="records")]
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return None if not np.isfinite(f) else f
    if isinstance(obj, Path):
        return str(obj)
    return obj


class RunResults:
    """Mixin of the results objects that a command writes as a run folder.

    A subclass sets :attr:`_writer` (``"module:function"``, a function of the run layer taking
    ``(results, folder, *, overwrite)`` and returning the folder) and implements
    :meth:`headline` (the numbers of ``results.json``); it has ``summary()`` and ``to_frame()``
    of its own.
    """

    #: the run-layer function that writes this result's run folder, ``"module:function"``
    _writer: ClassVar[str]

    def headline(self) -> Mapping[str, Any]:
        """The headline numbers (``results.json`` less ``tables`` and ``status``)."""
        raise NotImplementedError

    def results(self) -> dict[str, Any]:
        """The content of the command's ``results.json`` (JSON values; see the module
        docstring), less ``tables`` and ``status``."""
        return to_jsonable(dict(self.headline()))

    def save(self, folder: str | Path, *, overwrite: bool = False) -> Path:
        """Write the run folder (and ``report.html``) the command would write; returns it."""
        module, _, name = self._writer.partition(":")
        writer = getattr(importlib.import_module(module), name)
        return Path(writer(self, folder, overwrite=overwrite))


def save(results: RunResults, folder: str | Path, *, overwrite: bool = False) -> Path:
    """``results.save(folder)``, as a function."""
    if not isinstance(results, RunResults):
        raise TypeError(f"expected an edueval results object, got {type(results).__name__}")
    return results.save(folder, overwrite=overwrite)
