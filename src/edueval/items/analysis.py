"""Classical test-item analysis: difficulty, discrimination, distractor efficiency.

Definitions (Nguyen et al., QG-SMS, §2.1; Mahjabeen et al. 2017 for DE). For an item, ``S`` is the
set of students who answered it, ``x_s`` ∈ {0, 1} their score on it, ``n_s`` the number of items
student ``s`` answered, ``c_s`` how many of them they got right, and ``t_s`` their total score:
by default (``total_score="proportion"``, the authors' code: the share correct of the items the
student answered) ``t_s = c_s / n_s``; with ``total_score="count"`` (edueval before issue 34)
``t_s = c_s``. When every student answers every item the two are proportional and every
discrimination index below is the same under both; with missing responses they differ (a
student who skipped items has a smaller count but not a smaller share).

* **DF** (difficulty index) = Σ x_s / |S|, the proportion correct (higher = easier).
* **DC** (discrimination, as the paper) = Pearson r(x, t) over ``S`` (item–total correlation).
* **DC_rest** = the corrected item–rest correlation (the item does not correlate with itself):
  Pearson r(x, r) with the rest score ``r_s`` = the total score on the student's *other* answered
  items -- ``(c_s − x_s) / (n_s − 1)`` for the proportion (a student who answered only this item
  has none and is left out), ``c_s − x_s`` for the count.
* **DC_ul** = the upper/lower 27% index: proportion correct among the ``k`` students with the
  highest totals minus that among the ``k`` lowest, ``k = max(1, round(0.27 |S|))`` (at most
  ``|S| // 2``), students ranked by ``t``. Students tied in total at a group's cut-off share its
  remaining places equally: when ``m`` students lie strictly above the cut-off total and ``T``
  students sit at it, each of the ``T`` counts with weight ``(k - m) / T`` (every other member
  with weight 1). This equals the index averaged over every order of the tied students, and it
  depends on the totals and the scores alone -- never on the students' ids or the order of the
  rows.
* **p(o)** = |{s : s chose distractor o}| / |S|, the selection rate of each distractor.
* **DE** (distractor efficiency) = number of distractors with p(o) ≥ 5%; the others are
  *non-functional*. Compared as integers (100·count ≥ 5·|S|), so a rate of exactly 5% counts.

A correlation with a constant variable (everyone right, or everyone with the same total) is
undefined and reported as NaN, as are DE and the distractor rates when only ``correct`` is known.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..io import InputError
from ..results import RunResults
from ..stats import pearson
from ..tables import Table, takes_tables
from .data import ITEMS, RESPONSES, ItemData, as_item_data
from .reliability import Reliability, reliability

__all__ = ["ItemAnalysis", "analyze_items", "pearson", "TOTAL_SCORES"]  # pearson: edueval.stats

#: The total scores DC, DC_rest and DC_ul can correlate with (see the module docstring).
TOTAL_SCORES = ("proportion", "count")


def _group_mean(x: np.ndarray, total: np.ndarray, k: int) -> float:
    """Mean score of the ``k`` students with the highest totals, ties at the cut-off shared.

    With ``m`` students strictly above the ``k``-th highest total ``v`` and ``T`` students at ``v``,
    each tied student counts with weight ``(k - m) / T``: the expectation of the group mean over a
    uniformly random order of the tied students.
    """
    cut = np.sort(total)[::-1][k - 1]
    above = total > cut
    tied = total == cut
    m = int(above.sum())
    share = (k - m) / int(tied.sum())
    return float((x[above].sum() + share * x[tied].sum()) / k)


def _upper_lower(x: np.ndarray, total: np.ndarray, fraction: float) -> float:
    """The upper/lower 27% index, ties at either cut-off shared (see the module docstring)."""
    n = x.size
    if n < 2:
        return float("nan")
    k = min(max(1, int(round(fraction * n))), n // 2)
    return _group_mean(x, total, k) - _group_mean(x, -total, k)


@dataclass
class ItemAnalysis(RunResults):
    """Results of :func:`analyze_items`.

    ``items``: one row per item -- ``item, material, topic, n, n_correct, DF, DC, DC_rest,
    DC_ul, n_distractors, DE, nonfunctional`` (labels, ``;``-separated), ``alpha_if_deleted``.
    ``reliability``: Cronbach's alpha, SEM, split half (:mod:`.reliability`, blanks pairwise).
    ``distractors``: one row per item and option -- ``item, option, is_key, n_chosen, rate, functional`` (``functional`` only for
    distractors). ``students``: ``student, n_answered, total``.
    """

    items: pd.DataFrame
    distractors: pd.DataFrame
    students: pd.DataFrame
    threshold: float
    group_fraction: float
    total_score: str = "proportion"

    reliability: Reliability | None = None
    format: str = "csv+items"
    questions: pd.DataFrame | None = field(default=None, repr=False)

    _writer = "edueval.items.pipeline:save_analysis"

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def n_students(self) -> int:
        return len(self.students)

    @property
    def n_responses(self) -> int:
        return int(self.items["n"].sum())

    @property
    def has_choices(self) -> bool:
        """Whether the options chosen are known (DE and the distractor table need them)."""
        return len(self.distractors) > 0

    @property
    def mean(self) -> dict[str, float]:
        """Mean DF, DC, DC_rest, DC_ul and DE over the items (as ``results.json`` holds them)."""
        return {k: float(self.items[k].mean()) for k in ("DF", "DC", "DC_rest", "DC_ul", "DE")}

    @property
    def n_nonfunctional(self) -> int:
        return int((self.distractors["functional"] == False).sum())  # noqa: E712

    def headline(self) -> dict[str, Any]:
        return {
            "n_items": self.n_items,
            "n_students": self.n_students,
            "n_responses": self.n_responses,
            "has_choices": self.has_choices,
            "mean": self.mean,
            "n_nonfunctional": self.n_nonfunctional,
            "reliability": self.reliability.as_dict() if self.reliability is not None else None,
        }

    def to_frame(self) -> pd.DataFrame:
        """Tidy rows: ``item, material, topic, measure, value`` (n, n_correct, DF, DC, DC_rest,
        DC_ul, n_distractors, DE, alpha_if_deleted per item)."""
        measures = ["n", "n_correct", "DF", "DC", "DC_rest", "DC_ul", "n_distractors", "DE",
                    "alpha_if_deleted"]  # fmt: skip
        return self.items.melt(id_vars=["item", "material", "topic"], value_vars=measures,
                               var_name="measure", value_name="value")  # fmt: skip

    def summary(self) -> str:
        t = self.items
        lines = [
            f"{len(t)} items, {len(self.students)} students, {int(t['n'].sum())} responses",
            f"DF mean {t['DF'].mean():.3f} (range {t['DF'].min():.3f}-{t['DF'].max():.3f})",
            f"DC mean {t['DC'].mean():.3f}; DC_rest mean {t['DC_rest'].mean():.3f}; "
            f"DC_ul mean {t['DC_ul'].mean():.3f}",
        ]
        if t["DE"].notna().any():
            lines.append(
                f"DE mean {t['DE'].mean():.2f}; non-functional distractors "
                f"{int((self.distractors['functional'] == False).sum())}"  # noqa: E712
            )
        if self.reliability is not None:
            lines.append(self.reliability.summary())
        return "\n".join(lines)


def _r(x: np.ndarray, y: np.ndarray) -> float:
    """:func:`pearson`, NaN when either variable is constant (shares such as 1/3 and 2/6 are the
    same float, so equal totals compare equal; this keeps rounding in a mean from making a
    correlation out of a constant)."""
    if x.size < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return float("nan")
    return pearson(x, y)


def _rest(x: np.ndarray, c: np.ndarray, n: np.ndarray, total_score: str):
    """Each student's score on their other answered items, and which students have one."""
    if total_score == "count":
        return c - x, np.ones(x.size, dtype=bool)
    has = n > 1
    return np.where(has, (c - x) / np.maximum(n - 1, 1), np.nan), has


@takes_tables(
    data=Table(
        RESPONSES.name, RESPONSES.required, RESPONSES.optional, self_checked=True, also=(ItemData,)
    ),
    items=ITEMS,
)
def analyze_items(
    data: ItemData | str | Path | pd.DataFrame,
    items: str | Path | pd.DataFrame | None = None,
    *,
    threshold: float = 0.05,
    group_fraction: float = 0.27,
    total_score: str = "proportion",
) -> ItemAnalysis:
    """Item statistics for every item (see the module docstring), from an :class:`ItemData`, from
    responses and items (the user's own DataFrames or files: ``analyze_items(responses_df,
    items_df)``, validated as ``items analyze`` validates its files, raising
    :class:`~edueval.io.InputError`), or from QG-SMS questions alone.  Nothing is written.

    ``total_score``: ``"proportion"`` (default; the authors' code) or ``"count"`` -- the total
    score the discrimination indices correlate with; they differ only with missing responses."""
    if total_score not in TOTAL_SCORES:
        raise InputError(f"total_score= must be one of {', '.join(TOTAL_SCORES)}; "
                         f"got {total_score!r}")  # fmt: skip
    data_in = data
    data = as_item_data(data, items)
    fmt = _input_format(data_in, items, data)
    resp = data.responses
    item_table = data.items
    totals = resp.groupby("student", sort=True)["correct"].agg(["size", "sum"])
    count_of = totals["sum"].to_dict()
    size_of = totals["size"].to_dict()
    has_choice = data.has_choices
    thr_num = round(threshold * 10000)  # compare 10000*count >= thr_num*n in integers
    rows, drows = [], []
    by_item = {k: g for k, g in resp.groupby("item", sort=False)}
    for rec in item_table.to_dict("records"):
        g = by_item[rec["item"]]
        x = g["correct"].to_numpy(dtype=float)
        ids = g["student"].to_numpy(dtype=str)
        right = np.array([count_of[s] for s in ids], dtype=float)
        answered = np.array([size_of[s] for s in ids], dtype=float)
        t = right / answered if total_score == "proportion" else right
        rest, has_rest = _rest(x, right, answered, total_score)
        n = x.size
        row = {
            "item": rec["item"],
            "material": rec["material"],
            "topic": rec["topic"],
            "n": n,
            "n_correct": int(x.sum()),
            "DF": float(x.sum() / n),
            "DC": _r(x, t),
            "DC_rest": _r(x[has_rest], rest[has_rest]),
            "DC_ul": _upper_lower(x, t, group_fraction),
        }
        distractors = [o for o in rec["options"] if o != rec["answer"]]
        row["n_distractors"] = len(distractors) if len(rec["options"]) else np.nan
        if has_choice:
            counts = g["choice"].value_counts().to_dict()
            nonfunctional = []
            de = 0
            for o in rec["options"]:
                c = int(counts.get(o, 0))
                is_key = o == rec["answer"]
                functional = None if is_key else bool(c * 10000 >= thr_num * n)
                if functional is True:
                    de += 1
                elif functional is False:
                    nonfunctional.append(o)
                drows.append(
                    {
                        "item": rec["item"],
                        "option": o,
                        "is_key": is_key,
                        "n_chosen": c,
                        "rate": c / n,
                        "functional": functional,
                    }
                )
            row["DE"] = de
            row["nonfunctional"] = ";".join(nonfunctional)
        else:
            row["DE"] = np.nan
            row["nonfunctional"] = ""
        rows.append(row)
    students = (
        totals.rename(columns={"size": "n_answered", "sum": "total"})
        .reset_index()
        .astype({"n_answered": int, "total": int})
    )
    students["proportion"] = students["total"] / students["n_answered"]
    dcols = ["item", "option", "is_key", "n_chosen", "rate", "functional"]
    wide = resp.pivot(index="student", columns="item", values="correct")
    rel = reliability(wide[list(item_table["item"])].astype(float))
    table = pd.DataFrame(rows)
    table["alpha_if_deleted"] = rel.items["alpha_if_deleted"].to_numpy()
    return ItemAnalysis(
        items=table,
        distractors=pd.DataFrame(drows, columns=dcols),
        students=students,
        threshold=threshold,
        group_fraction=group_fraction,
        total_score=total_score,
        reliability=rel,
        format=fmt,
        questions=None if fmt == "scores" else item_table,
    )


def _input_format(given: object, items: object, data: ItemData) -> str:
    """``csv+items`` (responses and items), ``qgsms`` (QG-SMS questions) or ``scores`` (a score
    table: no question text), as ``items analyze`` records it."""
    if items is not None:
        return "csv+items"
    has_text = bool(data.items["text"].astype(bool).any())
    if isinstance(given, ItemData):
        return "csv+items" if has_text else "scores"
    return "qgsms" if has_text else "scores"
