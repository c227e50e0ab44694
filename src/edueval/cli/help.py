"""Help pages in the classic Click style, whatever Typer release renders them.

Typer 0.29 prints Python types as metavars (``--restarts <int>``, ``--base-url <list[str]>``)
and wraps required arguments in braces (``Usage: edueval kt fit [OPTIONS] {data}``).  Older
releases print what Click prints (``--restarts INTEGER``, ``DATA``).  :func:`classic_help`
sets every metavar explicitly on the built Click command tree, so the pages read the same on
every release the lower bounds allow.
"""

from __future__ import annotations

from typing import Any

_TYPE_NAMES = {
    "int": "INTEGER",
    "integer": "INTEGER",
    "float": "FLOAT",
    "str": "TEXT",
    "text": "TEXT",
    "path": "PATH",
    "file": "PATH",
    "directory": "PATH",
    "bool": "BOOLEAN",
    "boolean": "BOOLEAN",
}


def _choices(param: Any) -> list[str] | None:
    descriptor = getattr(param, "type_descriptor", None)  # Typer >= 0.29
    if descriptor is not None:
        return [str(getattr(c, "value", c)) for c in descriptor.choices or ()] or None
    choices = getattr(getattr(param, "type", None), "choices", None)  # Click's Choice
    return [str(getattr(c, "value", c)) for c in choices] if choices else None


def _type_name(param: Any) -> str:
    if hasattr(param, "type_descriptor"):  # Typer >= 0.29: 'int', 'list[str]', 'path', ...
        descriptor = param.type_descriptor
        raw = "path" if descriptor.is_path else param.bare_type()
        raw = raw.removeprefix("list[").removesuffix("]")
    else:
        raw = str(getattr(getattr(param, "type", None), "name", "text"))
    return _TYPE_NAMES.get(raw.lower(), raw.upper())


def _option_metavar(param: Any) -> str:
    choices = _choices(param)
    return f"[{'|'.join(choices)}]" if choices else _type_name(param)


def _classic_argument(param: Any) -> None:
    name = param.metavar or param.name.upper()
    param.metavar = name
    piece = name if param.required else f"[{name}]"
    piece += "..." if param.nargs != 1 else ""
    param.get_usage_pieces = lambda ctx, piece=piece: [piece]
    if hasattr(param, "display_type_rich"):  # Typer >= 0.29 adds '<path>' after the name
        param.display_type_rich = lambda ctx: None


def _short_range(param: Any) -> None:
    """The help shows ``x>=1``, not ``1<=x<=9223372036854775807``, for an open-ended count
    (its declared maximum is :data:`~edueval.cli.ranges.COUNT_MAX`, numpy's int64)."""
    from .ranges import COUNT_MAX

    if hasattr(param, "_get_number_range_help_str"):  # Typer >= 0.29
        if getattr(param, "max", None) == COUNT_MAX and getattr(param, "min", None) is not None:
            param._get_number_range_help_str = lambda low=param.min: f"x>={low}"
    elif getattr(getattr(param, "type", None), "max", None) == COUNT_MAX:  # Click's IntRange
        kind = param.type
        kind._describe_range = lambda low=kind.min: f"x>={low}"


def _classic_param(param: Any) -> None:
    _short_range(param)
    if param.param_type_name == "argument":
        _classic_argument(param)
    elif not getattr(param, "is_flag", False) and param.metavar is None:
        param.metavar = _option_metavar(param)


def classic_help(command: Any) -> Any:
    """Give every parameter of ``command`` and its sub-commands a Click-style metavar."""
    for param in command.params:
        _classic_param(param)
    for sub in getattr(command, "commands", {}).values():
        classic_help(sub)
    return command
