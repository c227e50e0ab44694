"""Errors of the model layer.

Two kinds of trouble are kept apart on purpose:

* a **single request** that fails (a 500 that outlives the retries, a timeout, a 400 for a prompt that
  is too long) does *not* raise: it comes back as a :class:`~edueval.models.ChatResult` with
  ``ok=False`` and ``error`` set, so a run goes on and records that item as failed;
* a **backend that cannot work at all** (wrong API key, a server that never answered, an unknown model
  name, a missing optional dependency) raises a :class:`ModelError`.  Its message is one line; the
  command line prints it and exits with code 2.
"""

from __future__ import annotations

__all__ = [
    "ModelError",
    "ModelConfigError",
    "ModelAuthError",
    "ModelUnreachableError",
]


class ModelError(Exception):
    """A model backend cannot be used at all; the message is one line for people."""

    def __init__(self, message: str) -> None:
        self.message = " ".join(str(message).split())  # always a single line
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


class ModelConfigError(ModelError):
    """Bad model spec, unknown model, missing optional package or model file."""


class ModelAuthError(ModelError):
    """The server rejected the credentials (HTTP 401/403)."""


class ModelUnreachableError(ModelError):
    """The server could not be reached (no answer has ever come back from it)."""
