"""mkdocs hook: the "Input formats" page, generated at build time from edueval's schemas by the
same functions as ``edueval formats`` (:mod:`edueval.formats`), so a format is written once."""

from __future__ import annotations

import sys
from pathlib import Path

from mkdocs.structure.files import File, Files

SRC = Path(__file__).resolve().parents[2] / "src"


def _page() -> str:
    if str(SRC) not in sys.path:  # document this checkout, not an installed copy
        sys.path.insert(0, str(SRC))
    from edueval.formats import find_schemas, table_markdown

    tables = find_schemas()
    head = [
        "# Input formats",
        "",
        "Every input table edueval reads, generated from its `Schema` declaration (the same",
        "declaration the readers check files against). In the terminal, `edueval formats` prints",
        "the same and `edueval formats NAME` one table. Kinds: `id` (taken exactly as written),",
        "`text`, `binary` (0/1), `number`/`integer` (with a range), `order`, `raw` (checked by the",
        "reader itself). An *open* table keeps other columns, a *closed* one refuses them.",
        "",
        *(f"- [`{t.name}`](#{t.name.replace('.', '')}): {t.schema.what}" for t in tables),
        "",
    ]
    return "\n".join(head) + "\n" + "\n".join(table_markdown(t) for t in tables)


def on_files(files: Files, config) -> Files:
    files.append(File.generated(config, "formats.md", content=_page()))
    return files
