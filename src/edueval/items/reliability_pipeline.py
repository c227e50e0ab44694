"""``items reliability`` as a function writing a run directory (the CLI wraps it).

The same coefficients ``items analyze`` reports under ``reliability``, on a score table alone,
with the two choices a reliability analysis asks for: how blank cells (not administered) enter
(``pairwise`` or ``complete`` students only) and the level of Feldt's interval.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..io import InputError
from ..report import Report
from ..report.figures import plt
from ..runs import RunDir, saved_run
from .reliability import MISSING, Reliability, reliability
from .scores import load_scores, reading_params

__all__ = ["reliability_run", "save_reliability", "write_reliability"]

_HOW = {
    "pairwise": "Blank cells (not administered) enter pairwise: each covariance over the "
    "students who answered both items; Feldt's n is the smallest such count.",
    "complete": "Only students who answered every item enter (listwise).",
}


def _figure(res: Reliability):
    t = res.items
    fig, ax = plt.subplots(figsize=(max(5.0, 0.35 * len(t) + 2), 3.4), layout="constrained")
    drop = t["alpha_if_deleted"].to_numpy(dtype=float)
    ax.bar(np.arange(len(t)), np.nan_to_num(drop, nan=0.0), color="#4c72b0")
    if np.isfinite(res.alpha):
        ax.axhline(res.alpha, color="black", lw=0.9, ls="--")
    ax.set_xticks(np.arange(len(t)), [str(i) for i in t["item"]],
                  rotation=90 if len(t) > 12 else 0)  # fmt: skip
    ax.set_ylabel("alpha if the item is deleted")
    return fig


def _report(res: Reliability, source: str) -> str:
    rep = Report("Reliability", source)
    sec = rep.section("Coefficients")
    sec.text(
        "Cronbach's alpha (KR-20 on 0/1 items) with Feldt's interval, the standard error of "
        "measurement SEM = SD(total) x sqrt(1 - alpha), and the odd-even split half stepped up "
        "by Spearman-Brown. " + _HOW[res.missing]
    )
    sec.text(res.summary())
    sec.table(res.to_frame())
    rep.section("Items").table(res.items).figure(
        _figure(res), "alpha if each item is deleted (dashed: the test's alpha)"
    )
    return rep.render()


def _params(res: Reliability) -> dict:
    return {"missing": res.missing, "level": res.level}


def reliability_run(
    out: Path,
    scores: Path,
    *,
    missing: str = "pairwise",
    level: float = 0.95,
    freq: str | None = None,
    key: Path | None = None,
    row_ids: bool = False,
) -> dict:
    """Reliability of a score table (long or wide; ``freq``: the count column of a table of
    response patterns): ``reliability.csv`` (per item: n, mean, sd, alpha if deleted), the
    coefficients in ``results.json`` and the report."""
    if missing not in MISSING:
        raise InputError(f"missing= must be one of {', '.join(MISSING)}, got {missing!r}")
    if not 0 < level < 1:
        raise InputError("level= must be between 0 and 1")
    table = load_scores(scores, freq_col=freq, key=key,
                        student_col=None if row_ids else "student")  # fmt: skip
    res = reliability(table.scores, missing=missing, level=level)
    params = {**_params(res), **reading_params(freq, key, row_ids)}
    inputs = {"scores": scores, **({"key": key} if key is not None else {})}
    run = RunDir(out, command="items reliability", params=params, inputs=inputs)
    return write_reliability(run, res, str(scores))


def write_reliability(run: RunDir, res: Reliability, source: str) -> dict:
    """The run folder of ``items reliability`` from its results (the command and
    :meth:`Reliability.save` both write through here)."""
    run.table("reliability", res.items)
    results = dict(res.results())
    run.finish(results, _report(res, source))
    return results


def save_reliability(res: Reliability, folder: str | Path, *, overwrite: bool = False) -> Path:
    """:meth:`Reliability.save`: the folder ``items reliability`` writes."""
    run = saved_run(folder, "items reliability", params=_params(res), overwrite=overwrite)
    write_reliability(run, res, "results from Python")
    return run.path
