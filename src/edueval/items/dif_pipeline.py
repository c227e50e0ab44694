"""``items dif`` as a function writing a run directory (the CLI wraps it)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..io import InputError
from ..report import Report
from ..report.figures import plt
from ..runs import RunDir, saved_run
from .dif import DIFResult, dif
from .scores import load_scores, read_groups, reading_params

__all__ = ["dif_run", "save_dif", "write_dif"]


def _figure(res: DIFResult):
    t = res.items
    fig, ax = plt.subplots(figsize=(max(5.0, 0.35 * len(t) + 2), 3.4), layout="constrained")
    colours = t["ETS"].map({"A": "#8c8c8c", "B": "#dd8452", "C": "#c44e52"}).fillna("#8c8c8c")
    height = t["MH_D_DIF"].replace([np.inf, -np.inf], np.nan).fillna(0.0)  # undefined: no bar
    ax.bar(np.arange(len(t)), height, color=colours.to_list())
    for y in (-1.5, -1.0, 1.0, 1.5):
        ax.axhline(y, color="#555", lw=0.6, ls=":" if abs(y) == 1 else "--")
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(np.arange(len(t)), [str(i) for i in t["item"]],
                  rotation=90 if len(t) > 12 else 0)  # fmt: skip
    ax.set_ylabel("MH D-DIF (< 0: favours reference)")
    return fig


def _report(res: DIFResult, source: str) -> str:
    rep = Report("Differential item functioning",
                 f"{source}: focal {res.focal!r} vs reference {res.reference!r}")  # fmt: skip
    sec = rep.section("Summary")
    sec.text(
        f"{res.n_focal} focal and {res.n_reference} reference students"
        + (f" ({res.n_excluded} in neither group, left out)" if res.n_excluded else "")
        + "; students matched on their total score. Flagged: "
        + (", ".join(res.flagged) if res.flagged else "none")
        + "."
    )
    if "mh" in res.methods:
        sec = rep.section("Mantel-Haenszel")
        sec.text(
            "MH D-DIF = -2.35 ln(alpha_MH) over total-score strata, SE from Robins-Breslow-"
            "Greenland, MH chi-square with continuity correction. ETS categories (Zwick 2012): "
            "A if p >= 0.05 or |D| < 1; C if |D| >= 1.5 and (|D| - 1)/SE > 1.645; B otherwise."
        )
        sec.figure(_figure(res), "MH D-DIF per item (dotted: |D| = 1, dashed: |D| = 1.5)")
    if "lr" in res.methods:
        rep.section("Logistic regression").text(
            "Likelihood-ratio tests of y ~ total (+ group) (+ group x total): uniform (1 df), "
            "non-uniform (1 df), any DIF (2 df); delta_R2 is the gain in Nagelkerke R^2; "
            "p-values Holm-adjusted across items (p_*_holm)."
        )
    rep.section("Items").table(res.items)
    return rep.render()


def dif_run(
    out: Path,
    scores: Path,
    *,
    group: str,
    students: Path | None = None,
    focal: str | None = None,
    reference: str | None = None,
    methods: Sequence[str] = ("mh", "lr"),
    level: float = 0.05,
    freq: str | None = None,
    key: Path | None = None,
    row_ids: bool = False,
) -> dict:
    """DIF of a score table's items between two groups: ``dif.csv``.  The group is a column of
    the score table (long: one value per student; wide: a column that is not an item) or, with
    ``students``, of a students file (``student`` plus that column)."""
    if not 0 < level < 1:
        raise InputError("level= must be between 0 and 1")
    table = load_scores(scores, keep=() if students is not None else (group,), freq_col=freq,
                        key=key, student_col=None if row_ids else "student")  # fmt: skip
    if students is not None:
        groups = read_groups(students, group, table.scores.index)
    else:
        groups = table.students[group]
    try:
        res = dif(table.scores, groups, focal=focal, reference=reference, methods=methods,
                  level=level)  # fmt: skip
    except InputError as exc:
        raise InputError(exc.message, file=exc.file or str(students or scores)) from None
    inputs = {"scores": scores} if students is None else {"scores": scores, "students": students}
    if key is not None:
        inputs["key"] = key
    run = RunDir(
        out,
        command="items dif",
        params={
            "group": group,
            "focal": focal,
            "reference": reference,
            "methods": list(methods),
            "level": level,
            "layout": table.layout,
            **reading_params(freq, key, row_ids),
        },  # fmt: skip
        inputs=inputs,
    )
    return write_dif(run, res, str(scores))


def write_dif(run: RunDir, res: DIFResult, source: str) -> dict:
    """The run folder of ``items dif`` from its results (the command and
    :meth:`DIFResult.save` both write through here)."""
    run.table("dif", res.items)
    results = dict(res.headline())
    run.finish(results, _report(res, source))
    return results


def save_dif(res: DIFResult, folder: str | Path, *, overwrite: bool = False) -> Path:
    """:meth:`DIFResult.save`: the folder ``items dif`` writes.  Its ``config.json`` records
    the groups compared as resolved (``focal``, ``reference``); the group column and the score
    table's layout are the command's, not known to the results."""
    params = {"group": None, "focal": res.focal, "reference": res.reference,
              "methods": list(res.methods), "level": res.level, "layout": None}  # fmt: skip
    run = saved_run(folder, "items dif", params=params, overwrite=overwrite)
    write_dif(run, res, "results from Python")
    return run.path
