"""Library messages name Python parameters (``multigs=``); the command line shows its flags.

The library raises :class:`edueval.io.InputError` (a ``ValueError``) with messages that speak
Python: ``BKT(multigs="tmpl")`` says "unknown column 'tmpl' for multigs=".  When the same error
reaches the command line, :func:`cli_message` rewrites each ``name=`` that is a parameter of the
command being run into the flag that sets it (``--multigs``), or the argument's metavar
(``RUN_DIR``); anything else in the message is left as written.  ``name=`` followed by a value
(``max_failures='5%'``, ``n=5``) is a value being shown, not a parameter named, and stays.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

__all__ = ["cli_message", "command_for", "flag_names", "to_flags"]

#: ``name=`` not preceded by a word character, dot or dash, and not followed by a value
_PARAM = re.compile(r"(?<![\w.\-])([A-Za-z_][A-Za-z0-9_]*)=(?![\w'\"(\[{+\-.])")


def command_for(root: Any, argv: Sequence[str]) -> Any:
    """The (sub)command that ``argv`` runs, walking the Click groups from ``root`` by the first
    word of each level that names a subcommand (options before it are skipped)."""
    command, rest = root, list(argv)
    while getattr(command, "commands", None):
        words = [i for i, arg in enumerate(rest) if not arg.startswith("-")]
        found = next((i for i in words if rest[i] in command.commands), None)
        if found is None:
            break
        command, rest = command.commands[rest[found]], rest[found + 1 :]
    return command


def flag_names(command: Any) -> dict[str, str]:
    """Python parameter name -> how the command line writes it: an option's longest flag
    (``--multigs``), an argument's metavar (``RUN_DIR``)."""
    names: dict[str, str] = {}
    for param in getattr(command, "params", ()):
        if not param.name:
            continue
        if getattr(param, "param_type_name", "") == "argument":
            names[param.name] = getattr(param, "metavar", None) or param.name.upper()
        elif param.opts:
            names[param.name] = max(param.opts, key=len)
    return names


def to_flags(message: str, names: dict[str, str]) -> str:
    """``message`` with every ``name=`` that is in ``names`` written as ``names[name]``."""
    return _PARAM.sub(lambda m: names.get(m.group(1), m.group(0)), message)


def cli_message(message: str, root: Any, argv: Sequence[str]) -> str:
    """``message`` as the command line shows it for the command ``argv`` runs under ``root``."""
    return to_flags(message, flag_names(command_for(root, argv)))
