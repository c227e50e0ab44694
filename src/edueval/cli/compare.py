"""``edueval compare RUN RUN ...``: paired leaderboards across runs, the items as the unit."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import JsonOption, OutOption, OverwriteOption, done, out_dir, say

RunsArg = Annotated[
    list[Path],
    typer.Argument(
        file_okay=False,
        help="Run folders of one protocol on the same inputs (malalgo run; qgsms run: each "
        "method is a row; tutor reply: token F1, clustered by dialogue).",
    ),
]


def compare(
    runs: RunsArg,
    reference: Annotated[
        str | None,
        typer.Option(
            "--reference",
            metavar="RUN",
            help="The run (folder, or row name) every other is compared with (default: the "
            "best on each metric).",
        ),
    ] = None,
    detect: Annotated[
        float | None,
        typer.Option(
            "--detect",
            min=0.0,
            max=1.0,
            help="A difference in (0, 1] (e.g. 0.05) for which to report the number of items "
            "needed (80% power).",
        ),
    ] = None,
    allow_subset: Annotated[
        bool,
        typer.Option(
            "--allow-subset",
            help="Runs on different inputs or items: compare on the items common to all runs "
            "(by default refused).",
        ),
    ] = False,
    failures: Annotated[
        str,
        typer.Option(
            help="wrong (failed calls and unparseable answers count as wrong, as the protocol "
            "scores them) | exclude (left out, pairwise); counted either way."
        ),
    ] = "wrong",
    alpha: Annotated[
        float,
        typer.Option(min=0.0, max=1.0, help="Level of the tests and intervals (0 < alpha < 1)."),
    ] = 0.05,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    json_out: JsonOption = False,
) -> None:
    """Compare runs on the same items: each run's estimate with its 95% CI and its paired
    difference from the reference (exact McNemar; question-clustered for MIA), Holm-adjusted,
    with the discordant counts and the smallest detectable difference.  Writes results.json,
    estimates.csv, differences.csv, discordant.csv, runs.csv and report.html."""
    from ..compare.pipeline import compare_run

    path = out_dir(out, "compare", overwrite, inputs=())
    res = compare_run(path, runs, reference=reference, detect=detect, allow_subset=allow_subset,
                      failures=failures, alpha=alpha)  # fmt: skip
    for metric, ref in res["reference"].items():
        rows = [d for d in res["differences"] if d["metric"] == metric]
        worse = ", ".join(f"{d['run']} {d['difference']:+.3f} (p Holm {d['p_holm']:.3g})"
                          for d in rows)  # fmt: skip
        say(f"{metric}: reference {ref}; {worse}")
    done(path, json=json_out)
