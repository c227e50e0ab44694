"""``items analyze | pairs | simulate`` as functions writing run directories (the CLI wraps them)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pandas as pd

from ..io import InputError
from ..report import Report
from ..report.figures import plt
from ..runs import RunDir, saved_run
from .analysis import TOTAL_SCORES, ItemAnalysis, analyze_items
from .data import ItemData, load_item_data, read_item_source
from .pairs import DEFAULT_ALPHA, DIMENSIONS, make_pairs
from .simulate import ClassroomConfig, simulate_classroom

__all__ = [
    "load_inputs",
    "analyze_run",
    "write_analysis",
    "save_analysis",
    "pairs_run",
    "simulate_run",
    "items_jsonl",
]


def load_inputs(responses: Path, items: Path | None) -> ItemData:
    """Responses + items files, or (``items`` None) one file: QG-SMS questions or a score table
    (:func:`~.data.read_item_source`)."""
    if items is None:
        return read_item_source(responses)
    return load_item_data(responses, items)


def _format(data: ItemData, items: Path | None) -> str:
    if items is not None:
        return "csv+items"
    return "qgsms" if data.items["text"].astype(bool).any() else "scores"


def _inputs(responses: Path, items: Path | None) -> dict[str, Path]:
    return {"responses": responses} if items is None else {"responses": responses, "items": items}


def items_jsonl(data: ItemData) -> str:
    """The questions as an items file (JSONL) that ``qgsms run`` reads."""
    lines = []
    for rec in data.items.to_dict("records"):
        lines.append(
            json.dumps(
                {
                    "item": rec["item"],
                    "text": rec["text"],
                    "choices": rec["option_text"],
                    "answer": rec["answer"],
                    "material": rec["material"],
                    "topic": rec["topic"],
                    "material_text": rec["material_text"],
                },
                ensure_ascii=False,
            )
        )
    return "\n".join(lines) + "\n"


def _analysis_report(res: ItemAnalysis, rep: Report) -> None:
    t = res.items
    sec = rep.section("Item statistics")
    sec.text(
        "DF = proportion correct; DC = item-total Pearson correlation (the paper's definition), "
        + (
            "the total being the share correct of the items a student answered (the authors' "
            "code); "
            if res.total_score == "proportion"
            else "the total being the count of correct answers; "
        )
        + "DC_rest = item-rest correlation; DC_ul = upper minus lower "
        f"{100 * res.group_fraction:.0f}% proportion correct; DE = distractors chosen by at "
        f"least {100 * res.threshold:g}% of the students who answered."
    )
    sec.table(t)
    fig, axes = plt.subplots(1, 3, figsize=(9, 3.2), layout="constrained")
    axes[0].hist(t["DF"], bins=10, color="#4c72b0")
    axes[0].set_xlabel("DF (proportion correct)")
    axes[1].scatter(t["DF"], t["DC"], s=14)
    axes[1].set_xlabel("DF")
    axes[1].set_ylabel("DC (item-total r)")
    de = t["DE"].dropna()
    if len(de):
        counts = de.astype(int).value_counts().sort_index()
        axes[2].bar(counts.index.astype(str), counts.to_numpy(), color="#55a868")
    axes[2].set_xlabel("DE (effective distractors)")
    sec.figure(fig, "Distribution of difficulty, difficulty vs discrimination, DE")
    if res.reliability is not None:
        _reliability_report(res, rep)
    if len(res.distractors):
        rep.section("Options: selection rates").table(res.distractors)


def _check_total(total_score: str) -> None:
    if total_score not in TOTAL_SCORES:
        raise InputError(f"total_score= must be one of {', '.join(TOTAL_SCORES)}")


def _reliability_report(res: ItemAnalysis, rep: Report) -> None:
    rel = res.reliability
    assert rel is not None
    sec = rep.section("Reliability")
    sec.text(
        "Cronbach's alpha (KR-20 on 0/1 items) with Feldt's interval, the standard error of "
        "measurement SEM = SD(total) x sqrt(1 - alpha), and the odd-even split half stepped up "
        "by Spearman-Brown. Blank cells (not administered) enter pairwise: each covariance over "
        "the students who answered both items; Feldt's n is the smallest such count. "
        "alpha_if_deleted is in the item table."
    )
    sec.text(rel.summary())
    sec.table(rel.to_frame())


def analyze_run(
    out: Path,
    responses: Path,
    items: Path | None = None,
    *,
    threshold: float = 0.05,
    total_score: str = "proportion",
) -> dict:
    """Item statistics of a response set: ``item_stats.csv``, ``distractors.csv``."""
    if not 0 < threshold < 1:
        raise InputError("threshold= must be between 0 and 1")
    _check_total(total_score)
    data = load_inputs(responses, items)
    res = analyze_items(data, threshold=threshold, total_score=total_score)
    res.format = _format(data, items)  # one file: QG-SMS questions or scores, as read
    run = RunDir(out, command="items analyze", params=_analysis_params(res),
                 inputs=_inputs(responses, items))  # fmt: skip
    return write_analysis(run, res, f"{responses}" + (f" + {items}" if items else ""))


def _analysis_params(res: ItemAnalysis) -> dict:
    return {"threshold": res.threshold, "total_score": res.total_score, "format": res.format}


def write_analysis(run: RunDir, res: ItemAnalysis, source: str) -> dict:
    """The run folder of ``items analyze`` from its results (the command and
    :meth:`ItemAnalysis.save` both write through here)."""
    run.table("item_stats", res.items)
    run.table("distractors", res.distractors)
    run.table("students", res.students)
    if res.questions is not None:  # a score table has no question text to write
        run.text("items.jsonl", items_jsonl(ItemData(res.questions, pd.DataFrame())))
    rep = Report("Test-item analysis", source)
    _analysis_report(res, rep)
    results = dict(res.headline())
    run.finish(results, rep.render())
    return results


def save_analysis(res: ItemAnalysis, folder: str | Path, *, overwrite: bool = False) -> Path:
    """:meth:`ItemAnalysis.save`: the folder ``items analyze`` writes."""
    run = saved_run(folder, "items analyze", params=_analysis_params(res), overwrite=overwrite)
    write_analysis(run, res, "results from Python")
    return run.path


def pairs_run(
    out: Path,
    responses: Path,
    items: Path | None = None,
    *,
    dimensions: list[str] | None = None,
    alpha: dict[str, float] | None = None,
    seed: int = 0,
    max_pairs: int | None = None,
    dc_measure: str = "DC",
    total_score: str = "proportion",
) -> dict:
    """The paper's labelled pairs: ``pairs.csv`` (+ ``item_stats.csv`` and ``items.jsonl``)."""
    if dc_measure not in ("DC", "DC_rest", "DC_ul"):
        raise InputError("dc_measure= must be DC, DC_rest or DC_ul")
    _check_total(total_score)
    dims = [d.upper() for d in (dimensions or list(DIMENSIONS))]
    thresholds = {**DEFAULT_ALPHA, **(alpha or {})}
    data = load_inputs(responses, items)
    res = analyze_items(data, total_score=total_score)
    if "DE" in dims and not data.has_choices:
        dims = [d for d in dims if d != "DE"]
    run = RunDir(
        out,
        command="items pairs",
        params={
            "dimensions": dims,
            "alpha": thresholds,
            "max_pairs": max_pairs,
            "dc_measure": dc_measure,
            "total_score": total_score,
        },  # fmt: skip
        seed=seed,
        inputs=_inputs(responses, items),
    )
    pairs = make_pairs(
        res.items,
        dimensions=dims,
        alpha=thresholds,
        seed=seed,
        max_pairs=max_pairs,
        dc_measure=dc_measure,
    )
    run.table("pairs", pairs)
    run.table("item_stats", res.items)
    if _format(data, items) != "scores":
        run.text("items.jsonl", items_jsonl(data))
    counts = (
        pairs.groupby(["dimension", "material"]).size().rename("pairs").reset_index()
        if len(pairs)
        else pd.DataFrame(columns=["dimension", "material", "pairs"])
    )
    rep = Report("Question pairs for test-item analysis", f"seed {seed}")
    rep.section("Pairs per dimension and material").text(
        "Pairs of questions on the same learning material whose measure differs by at least "
        "alpha: " + ", ".join(f"{d} {thresholds[d]:g}" for d in dims) + "."
    ).table(counts)
    rep.section("Pairs").table(pairs)
    results = {
        "n_pairs": len(pairs),
        "per_dimension": {d: int((pairs["dimension"] == d).sum()) for d in dims},
        "alpha": thresholds,
        "label_is_q1": float((pairs["label"] == 1).mean()) if len(pairs) else None,
    }
    run.finish(results, rep.render())
    return results


def simulate_run(out: Path, cfg: ClassroomConfig) -> dict:
    """A synthetic classroom: ``responses.csv``, ``items.jsonl``, ``students.csv``, the item
    statistics of the simulated answers and the labelled pairs (paper thresholds)."""
    run = RunDir(out, command="items simulate", params=asdict(cfg), seed=cfg.seed)
    room = simulate_classroom(cfg)
    run.table("responses", room.responses)
    run.text("items.jsonl", room.items_jsonl())
    run.table("students", room.students)
    res = analyze_items(room.to_item_data())
    truth = room.items[["item", "material", "topic", "family", "difficulty", "discrimination",
                        "DF_expected"]]  # fmt: skip
    stats = res.items.merge(truth[["item", "difficulty", "discrimination", "DF_expected"]])
    run.table("item_stats", stats)
    pairs = make_pairs(res.items, seed=cfg.seed)
    run.table("pairs", pairs)
    rep = Report(
        "Synthetic classroom",
        f"{cfg.n_students} students, {len(room.items)} questions on {cfg.n_materials} "
        f"learning materials, seed {cfg.seed}",
    )
    rep.section("Ground truth and observed statistics").table(stats)
    per_dim = {d: int((pairs["dimension"] == d).sum()) for d in DIMENSIONS}
    rep.section("Labelled pairs (paper thresholds)").table(
        pd.DataFrame({"dimension": list(per_dim), "pairs": list(per_dim.values())})
    )
    results = {
        "n_students": cfg.n_students,
        "n_items": len(room.items),
        "n_materials": cfg.n_materials,
        "pairs": per_dim,
        "r_DF_expected": float(stats["DF"].corr(stats["DF_expected"])),
    }
    run.finish(results, rep.render())
    return results
