"""``edueval export``: a run folder in another tool's format (``inspect``: an inspect_ai log)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import out_file, say, typer_app

app = typer_app("Export a run folder to another tool's format: inspect.")


@app.command("inspect")
def inspect_cmd(
    run_dir: Annotated[
        Path,
        typer.Argument(
            metavar="RUN_DIR",
            file_okay=False,
            help="A finished LLM run folder: malalgo run, qgsms run or tutor reply.",
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            metavar="FILE",
            dir_okay=False,
            help="Log file to write: .eval (inspect's default format) or .json (default: "
            "RUN_DIR/inspect/<created>_edueval-<protocol>_<id>.eval).",
        ),
    ] = None,
) -> None:
    """Write the run as an inspect_ai eval log (one sample per item: prompt, reply, parsed
    answer, score, model), to open with ``inspect view``.  Needs edueval[inspect]."""
    from ..export import write_inspect_log

    if out is not None:  # an inspect log: a zip (.eval) or inspect's JSON, which opens so
        out_file(out, inputs=(), own=b"PK\x03\x04" if out.suffix == ".eval" else b'{\n  "version"')
    path = write_inspect_log(run_dir, out)
    say(f"wrote {path} (open with: inspect view --log-dir {path.parent})")
