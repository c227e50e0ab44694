"""``edueval formats [TABLE]``: the input tables, from their schemas (:mod:`edueval.formats`)."""

from __future__ import annotations

from typing import Annotated

import typer


def formats(
    table: Annotated[
        str | None,
        typer.Argument(help="One table (e.g. kt.response-file); all of them when omitted."),
    ] = None,
    names: Annotated[bool, typer.Option("--names", help="Only the tables' names.")] = False,
) -> None:
    """List every input table: its columns, kinds, ranges, required/optional/defaults, key."""
    from ..formats import find_schemas, find_table, table_text

    tables = [find_table(table)] if table else list(find_schemas())
    if names:
        print("\n".join(t.name for t in tables))
        return
    print("\n\n".join(table_text(t) for t in tables))
