"""The paper's pair construction (Nguyen et al., QG-SMS, §2.2 and §4.1, Appendix A.2).

Two questions on the same learning material form a pair for dimension ``d`` when their measures
differ by at least ``α_d``: ``|m(Q1) − m(Q2)| ≥ α_d`` (compared with a 1e-9 tolerance, so that
0.60 − 0.45 counts as 0.15). Defaults are the paper's: TC 1, DE 2, DF 0.15, DC 0.15. The label is
the question that better meets the requirement:

* ``DF`` -- the easier question (higher proportion correct);
* ``DC`` -- the more discriminating question (higher item–total correlation, or the variant chosen
  with ``dc_measure``);
* ``DE`` -- the question with more effective distractors;
* ``TC`` -- topic coverage: two questions on the same material with *different* topics; one of
  them, drawn at random (seeded), is the label and its topic is the target topic (TC = 1 vs 0).

Which question is shown as ``q1`` is drawn at random (seeded), so the label is not always first.
Columns: ``pair_id, dimension, material, q1, q2, label`` (1 or 2), ``better`` (the label's item
id), ``measure_q1, measure_q2, diff`` (|difference|), ``alpha``, ``target_topic`` (TC only).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..io import InputError
from ..tables import Table, takes_tables

__all__ = ["DIMENSIONS", "DEFAULT_ALPHA", "REQUIREMENTS", "make_pairs", "parse_alpha"]

DIMENSIONS = ("TC", "DF", "DC", "DE")
DEFAULT_ALPHA: dict[str, float] = {"TC": 1.0, "DE": 2.0, "DF": 0.15, "DC": 0.15}
REQUIREMENTS = {
    "TC": "the question that covers the target topic",
    "DF": "the question that is easier to answer",
    "DC": "the question that is more effective at distinguishing between high-performing and "
    "low-performing students",
    "DE": "the question that has a higher number of effective distractors",
}
PAIR_COLUMNS = [
    "pair_id",
    "dimension",
    "material",
    "q1",
    "q2",
    "label",
    "better",
    "measure_q1",
    "measure_q2",
    "diff",
    "alpha",
    "target_topic",
]
_TOL = 1e-9


def parse_alpha(values: list[str] | None) -> dict[str, float]:
    """``["DF=0.1", "DE=1"]`` -> the default thresholds with those replaced."""
    out = dict(DEFAULT_ALPHA)
    for v in values or []:
        name, sep, num = v.partition("=")
        name = name.strip().upper()
        if not sep or name not in DIMENSIONS:
            raise InputError(f"alpha= expects DIM=VALUE with DIM one of TC, DF, DC, DE; got {v!r}")
        try:
            out[name] = float(num)
        except ValueError:
            raise InputError(f"alpha= {name}: expected a number, got {num!r}") from None
        if not out[name] >= 0:
            raise InputError(f"alpha= {name}: must be >= 0")
    return out


@takes_tables(
    stats=Table(
        "item statistics",
        ("item", "material", "topic", "DF", "DC"),
        ("DE", "DC_rest", "DC_ul"),
        paths=False,
    )
)
def make_pairs(
    stats: pd.DataFrame,
    *,
    dimensions: tuple[str, ...] | list[str] = DIMENSIONS,
    alpha: Mapping[str, float] | None = None,
    seed: int = 0,
    max_pairs: int | None = None,
    dc_measure: str = "DC",
) -> pd.DataFrame:
    """Labelled pairs from an item table (``item, material, topic, DF, DC, DE`` as written by
    :func:`~edueval.items.analysis.analyze_items`).

    ``max_pairs`` keeps at most that many pairs per dimension (a seeded sample, in pair order).
    Randomness (which question is ``q1``, the TC label, the sample) comes from one generator seeded
    with ``seed``, drawn in a fixed order, so the output is reproducible.
    """
    thresholds = dict(DEFAULT_ALPHA)
    thresholds.update(alpha or {})
    for d in dimensions:
        if d not in DIMENSIONS:
            raise InputError(f"unknown dimension {d!r}; expected TC, DF, DC or DE")
    rng = np.random.default_rng(seed)
    rows = []
    stats = stats.reset_index(drop=True)
    for d in dimensions:
        col = dc_measure if d == "DC" else d
        a = float(thresholds[d])
        found: list[tuple[Any, dict, dict, float, float]] = []  # (material, p, q, m_p, m_q)
        for material, g in stats.groupby("material", sort=True):
            recs = g.sort_values("item", kind="stable").to_dict("records")
            for i in range(len(recs)):
                for j in range(i + 1, len(recs)):
                    p, q = recs[i], recs[j]
                    if d == "TC":
                        if p["topic"] == q["topic"] or a > 1.0 + _TOL:
                            continue
                        found.append((material, p, q, np.nan, np.nan))  # measures unused
                        continue
                    mp, mq = float(p[col]), float(q[col])
                    if not (np.isfinite(mp) and np.isfinite(mq)):
                        continue
                    if abs(mp - mq) >= a - _TOL and mp != mq:
                        found.append((material, p, q, mp, mq))
        flips = rng.random(len(found)) < 0.5
        tc_label = rng.random(len(found)) < 0.5
        keep = np.arange(len(found))
        if max_pairs is not None and len(found) > max_pairs:
            keep = np.sort(rng.choice(len(found), size=max_pairs, replace=False))
        for k in keep:
            material, p, q, mp, mq = found[k]
            if d == "TC":
                better = p if tc_label[k] else q
                m_p, m_q = float(better is p), float(better is q)
            else:
                better = p if mp > mq else q
                m_p, m_q = mp, mq
            first, second, m1, m2 = (q, p, m_q, m_p) if flips[k] else (p, q, m_p, m_q)
            rows.append(
                {
                    "dimension": d,
                    "material": material,
                    "q1": first["item"],
                    "q2": second["item"],
                    "label": 1 if better is first else 2,
                    "better": better["item"],
                    "measure_q1": m1,
                    "measure_q2": m2,
                    "diff": abs(m1 - m2),
                    "alpha": a,
                    "target_topic": better["topic"] if d == "TC" else "",
                }
            )
    out = pd.DataFrame(rows, columns=[c for c in PAIR_COLUMNS if c != "pair_id"])
    out.insert(0, "pair_id", [f"{r}-{i + 1:04d}" for i, r in enumerate(out["dimension"])])
    return out
