"""Run folders exported to other tools' formats (the run/report layer: it reads run folders).

* :func:`to_inspect_log` / :func:`write_inspect_log`: an `inspect_ai <https://inspect.aisi.org.uk>`_
  eval log of a finished LLM run (``malalgo run``, ``qgsms run``, ``tutor reply``), one sample
  per item, so the run opens in ``inspect view`` (needs ``pip install "edueval[inspect]"``).
  Command line: ``edueval export inspect RUN_DIR [--out FILE]``.
"""

from __future__ import annotations

from .inspect_log import INSPECT_INSTALL, default_log_path, to_inspect_log, write_inspect_log
from .run_items import EXPORTABLE, read_llm_run

__all__ = [
    "EXPORTABLE",
    "INSPECT_INSTALL",
    "default_log_path",
    "read_llm_run",
    "to_inspect_log",
    "write_inspect_log",
]
