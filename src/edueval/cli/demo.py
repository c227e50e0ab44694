"""``edueval demo``: every protocol offline on bundled or simulated data, one index page."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from .common import out_dir, say
from .ranges import SEED_MAX


def demo(
    out: Annotated[
        Path, typer.Option("--out", "-o", file_okay=False, help="Folder for the demo.")
    ] = Path("demo"),
    quick: Annotated[bool, typer.Option(help="Small sizes (seconds), for a smoke test.")] = False,
    seed: Annotated[
        int, typer.Option(min=0, max=SEED_MAX, help="Seed of every random choice (0 to 2**63 - 1).")
    ] = 2013,
) -> None:
    """Run the demo and write DEMO/index.html linking each protocol's report."""
    from ..demo import DEMO_FILES, run_demo

    t0 = time.perf_counter()
    index = run_demo(
        out_dir(out, "demo", inputs=(), own=DEMO_FILES), quick=quick, seed=seed, log=say
    )
    say(f"demo finished in {time.perf_counter() - t0:.0f} s: open {index}")
