"""P1 on response logs larger than memory: the per-partition computations.

A dataset (:mod:`edueval.partitioned`) is read block by block; a first pass counts each skill's
responses (:func:`block_counts`), :func:`plan_parts` packs the skills into partitions of about
:data:`TARGET_ROWS` rows (largest first, into the lightest partition), the rows are shuffled so
every skill lands whole in its partition, and each partition is packed and fitted
(:func:`fit_part`) or filtered (:func:`predict_part`) exactly as a file is in memory.

A skill's fit depends on its own rows alone -- its random starts come from the seed and its name,
and its sequences are laid out in sorted student order -- so the parameters equal those of an
in-memory fit of the same rows, on any number of workers and partitions.
"""

from __future__ import annotations

import heapq
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ...io import (
    InputError,
    binary_column,
    check_identifiers,
    numeric_column,
    order_column,
    to_numbers,
)
from ..bkt.model import BKT, forward_sequences
from ..bkt.params import PARAM_NAMES, params_frame
from ..data import Columns, RowFilter, pack
from ..prediction_stats import impossible_responses, per_skill_summary

__all__ = [
    "TARGET_ROWS",
    "block_counts",
    "plan_parts",
    "part_of",
    "fit_part",
    "predict_part",
    "merge_counts",
]

#: rows per partition aimed at (a worker's peak was ~350-450 bytes per row at 4 M rows,
#: shuffle buffers included; benchmarks/RESULTS.md)
TARGET_ROWS = 4_000_000
#: the predicted probabilities of a predictions dataset, checked in [0, 1] when read
PROBABILITIES = ("p_correct", "p_known")
#: the column numbering a dataset's rows (files in name order) when it has no order column
FILE_ORDER = "_row"


def block_counts(block: pd.DataFrame, cols: Columns, rows: RowFilter) -> dict:
    """Responses per skill in one block after the row selection, and the rows each rule left
    out; refuses an empty skill cell unless the selection skips them."""
    keep, dropped = rows.mask(block, cols)
    skill = block[cols.skill][keep]
    missing = int(skill.isna().sum())
    if missing:
        raise InputError(
            f"expected a skill, got an empty cell ({missing} rows of one block have none; "
            "skip_no_skill= leaves them out)",
            column=cols.skill,
        )
    check_block(block[keep] if not keep.all() else block, cols)
    counts = skill.astype(str).value_counts(sort=False)
    return {"counts": counts, "dropped": dropped, "n_rows": int(len(block))}


def check_block(block: pd.DataFrame, cols: Columns) -> None:
    """The checks a response file gets in memory, on one block of a dataset (the rows the
    selection keeps): student and skill ids (the identifier
    rules: no surrounding spaces, invisible or look-alike characters), ``correct`` and
    ``known`` 0/1, ``order`` a finite number, and -- when read -- the predicted probabilities
    (:data:`PROBABILITIES`) in [0, 1]."""
    for name in (cols.student, cols.skill):
        check_identifiers(block, name)
    for name in (cols.correct, cols.known):
        if name in block.columns:
            binary_column(block, name)
    if cols.order in block.columns and cols.order != FILE_ORDER:
        order_column(block, cols.order)
    for name in PROBABILITIES:  # a predictions dataset (kt evaluate)
        if name in block.columns:
            numeric_column(block, name, low=0, high=1)


def merge_counts(parts: list[dict]) -> tuple[pd.Series, dict[str, int], int]:
    """Responses per skill (sorted by name), rows left out by each rule, rows read."""
    counts = pd.concat([p["counts"] for p in parts]).groupby(level=0).sum().sort_index()
    dropped: dict[str, int] = {}
    for p in parts:
        for k, v in p["dropped"].items():
            dropped[k] = dropped.get(k, 0) + v
    return counts.astype(np.int64), dropped, sum(p["n_rows"] for p in parts)


def plan_parts(
    counts: pd.Series, *, target_rows: int = TARGET_ROWS, min_parts: int = 1
) -> tuple[dict[str, int], np.ndarray]:
    """Skill -> partition, packing skills (largest first) into the lightest of ``n`` partitions,
    ``n`` = total rows / ``target_rows`` (at least ``min_parts``, at most one per skill).

    Returns the mapping and each partition's row count; a skill larger than the target has a
    partition of its own.
    """
    total = int(counts.sum())
    n = int(min(len(counts), max(min_parts, -(-total // max(target_rows, 1)))))
    heap = [(0, i) for i in range(n)]
    loads = np.zeros(n, dtype=np.int64)
    mapping: dict[str, int] = {}
    order = sorted(counts.items(), key=lambda kv: (-int(kv[1]), kv[0]))
    for skill, c in order:
        load, i = heapq.heappop(heap)
        mapping[str(skill)] = i
        loads[i] = load + int(c)
        heapq.heappush(heap, (int(loads[i]), i))
    return mapping, loads


def part_of(block: pd.DataFrame, mapping: dict[str, int], cols: Columns, rows: RowFilter):
    """Each row's partition: its skill's, or -1 for rows the selection leaves out and skills
    not fitted (too few responses)."""
    keep, _ = rows.mask(block, cols)
    codes, uniques = pd.factorize(block[cols.skill])  # the distinct skills of a block are few
    lookup = np.array([mapping.get(str(u), -1) for u in uniques] + [-1], dtype=np.int64)
    part = lookup[codes]  # a missing skill (code -1) takes the last entry, -1
    part[~keep] = -1
    return part


def _frame(part: pd.DataFrame) -> pd.DataFrame:
    """A shuffled partition as a plain table (the partition number was its index)."""
    return part.reset_index(drop=True)


def fit_part(part: pd.DataFrame, number: int, model: BKT, cols: Columns) -> dict | None:
    """Fit every skill of one partition: the parameter table (as ``kt fit`` writes it) and
    the restarts, with the seconds spent packing and in EM."""
    if len(part) == 0:
        return None
    t0 = time.perf_counter()
    seqs, _ = pack(_frame(part), cols)
    t1 = time.perf_counter()
    res = model.fit_sequences(seqs)
    t2 = time.perf_counter()
    table = res.params.copy()
    table["log_likelihood"] = res.log_likelihood
    table["n_iter"] = res.n_iter
    table["converged"] = res.converged
    table["n_responses"] = np.diff(seqs.starts[seqs.skill_starts])
    table["n_students"] = np.diff(seqs.skill_starts)
    return {
        "params": table,
        "restarts": res.restarts,
        "n_rows": int(seqs.n_responses),
        "seconds": {"pack": t1 - t0, "em": t2 - t1},
    }


def _write_parquet(df: pd.DataFrame, path: Path) -> None:
    """Write one Parquet file through a temporary name, so no part is seen half-written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp)
    os.replace(tmp, path)


def predict_part(
    part: pd.DataFrame, number: int, params: pd.DataFrame, cols: Columns, folder: str
) -> dict | None:
    """Forward-filter one partition with ``params``; write ``part-NNNNN.parquet`` (rows by skill,
    student, order, with ``p_correct`` and ``p_known``) and return the per-skill summary."""
    if len(part) == 0:
        return None
    frame = _frame(part)
    seqs, _ = pack(frame, cols)
    P = params_frame(params).loc[seqs.skills.astype(str), list(PARAM_NAMES)].to_numpy(float)
    pc, pk = forward_sequences(seqs, P)
    out = frame.iloc[seqs.row].reset_index(drop=True)
    if FILE_ORDER in out.columns and "row" not in out.columns:
        out = out.rename(columns={FILE_ORDER: "row"})  # the row's position in the dataset
    out["p_correct"] = pc
    out["p_known"] = pk
    _write_parquet(out, Path(folder) / f"part-{number:05d}.parquet")
    return {
        "per_skill": per_skill_summary(seqs, pc, pk),
        "n_impossible": impossible_responses(seqs, pc),
        "n_rows": int(seqs.n_responses),
        "sum_p_correct": float(pc.sum()),
        "sum_p_known": float(pk.sum()),
    }


# -- evaluation: per-skill metrics in the skill's partition, pooled ones from exact sums ---------
#: equal-width bins of a prediction histogram, from which the AUC pass cuts its value ranges
HIST_BINS = 4096


def metric_sums(y: np.ndarray, p: np.ndarray) -> dict[str, float | np.ndarray]:
    """Sums from which :func:`metrics_from_sums` gives every metric of
    :func:`edueval.kt.metrics.evaluate` but the AUC, exactly (up to the order of additions);
    ``hist`` is an array of counts, every other value a float."""
    from ..metrics import CBD_CAP, LL_CLIP, THRESHOLD

    yb = y.astype(bool)
    hit = p >= THRESHOLD
    pc = np.clip(p, LL_CLIP, 1.0 - LL_CLIP)
    pb = np.clip(p, CBD_CAP, 1 - CBD_CAP)
    return {
        "n": float(len(y)),
        "n1": float(yb.sum()),
        "tp": float((hit & yb).sum()),
        "fp": float((hit & ~yb).sum()),
        "fn": float((~hit & yb).sum()),
        "sse": float(np.sum((p - y) ** 2)),
        "ll": float(np.log(np.where(yb, pc, 1.0 - pc)).sum()),
        "cbd": float(-np.log10(np.where(yb, pb, 1.0 - pb)).sum()),
        "n_clipped": float(np.sum(np.where(yb, p, 1.0 - p) < LL_CLIP)),
        "hist": np.histogram(np.round(p, 12), bins=HIST_BINS, range=(0.0, 1.0))[0],
    }


def add_sums(parts: list[dict]) -> dict:
    """Sums of several partitions."""
    out = {k: sum(p[k] for p in parts) for k in parts[0] if k != "hist"}
    out["hist"] = np.sum([p["hist"] for p in parts], axis=0)
    return out


def metrics_from_sums(s: dict, k: int, auc: float) -> dict[str, float]:
    """The metrics of :func:`edueval.kt.metrics.evaluate` from :func:`metric_sums`."""
    n, n1, tp, fp, fn, ll = s["n"], s["n1"], s["tp"], s["fp"], s["fn"], s["ll"]
    ss_tot = n1 - n1 * n1 / n
    return {
        "accuracy": (n - fp - fn) / n,
        "precision": tp / (tp + fp) if tp + fp > 0 else 0.0,
        "recall": tp / (tp + fn) if tp + fn > 0 else 0.0,
        "f1": 2 * tp / (2 * tp + fp + fn) if 2 * tp + fp + fn > 0 else 0.0,
        "auc": auc,
        "rmse": float(np.sqrt(s["sse"] / n)),
        "r2": 1.0 - s["sse"] / ss_tot if ss_tot > 0 else float("nan"),
        "loglik": ll,
        "aic": -2 * ll + 2 * k,
        "aicc": -2 * ll + 2 * k + 2 * k * (k + 1) / (n - k - 1) if n - k - 1 > 0 else float("nan"),
        "bic": -2 * ll + k * float(np.log(n)),
        "cbd": s["cbd"] / n,
        "n_clipped": s["n_clipped"],
    }


def evaluate_part(
    part: pd.DataFrame,
    number: int,
    cols: Columns,
    k_of: dict[str, int],
    knowledge: bool,
    threshold: float,
    n_in_a_row: int,
) -> dict | None:
    """Per-skill metrics of one partition, its sums for the pooled metrics and, with the true
    state, each sequence's moment of learning (true, estimated, n correct in a row)."""
    from ...io import numeric_column
    from .. import _common_kernels as K
    from ..mastery import first_crossing
    from ..metrics import evaluate

    if len(part) == 0:
        return None
    frame = _frame(part)
    seqs, _ = pack(frame, cols, require_known=knowledge)
    targets = {"performance": (seqs.obs, numeric_column(frame, "p_correct", low=0.0, high=1.0))}
    if knowledge:
        targets["knowledge"] = (
            seqs.known_states,
            numeric_column(frame, "p_known", low=0.0, high=1.0),
        )
    targets = {t: (y, p[seqs.row]) for t, (y, p) in targets.items()}
    rows = []
    for k, skill in enumerate(seqs.skills):
        sl = seqs.skill_slice(k)
        for target, (y, p) in targets.items():
            kk = k_of[str(skill)]
            rows.append({"scope": str(skill), "target": target, "n": int(y[sl].shape[0]),
                         "k": kk, **evaluate(y[sl], p[sl], k=kk)})  # fmt: skip
    out = {"rows": rows, "sums": {t: metric_sums(y, p) for t, (y, p) in targets.items()}}
    if knowledge:
        runs = K.run_lengths(seqs.obs, seqs.starts)
        out["mol"] = pd.DataFrame(
            {
                "student": seqs.students,
                "skill": seqs.skills[seqs.seq_skill],
                "n_opportunities": np.diff(seqs.starts),
                "t_true": first_crossing(seqs.known_states == 1, seqs.starts, seqs.opportunity),
                "t_est": first_crossing(
                    targets["knowledge"][1] >= threshold, seqs.starts, seqs.opportunity
                ),  # fmt: skip
                "t_in_a_row": first_crossing(runs >= n_in_a_row, seqs.starts, seqs.opportunity),
            }
        )
    return out


def value_cuts(hist: np.ndarray, target_rows: int = TARGET_ROWS) -> np.ndarray:
    """Cut points in [0, 1] splitting a prediction histogram into ranges of about
    ``target_rows`` rows (a heavier single bin stays whole)."""
    edges = np.linspace(0.0, 1.0, len(hist) + 1)
    cum = np.cumsum(hist)
    cuts, last = [], 0
    for i, c in enumerate(cum[:-1]):
        if c - last >= target_rows:
            cuts.append(edges[i + 1])
            last = c
    return np.asarray(cuts, dtype=float)


def value_part_of(block: pd.DataFrame, column: str, cuts: np.ndarray, cols: Columns,
                  rows: RowFilter):  # fmt: skip
    """The value range (of ``cuts``) each row's rounded prediction falls in; -1 for rows the
    selection leaves out."""
    keep, _ = rows.mask(block, cols)
    v = np.round(to_numbers(block[column]).to_numpy(float), 12)
    part = np.searchsorted(cuts, v, side="right").astype(np.int64)
    part[~keep] = -1
    return part


def value_counts_block(block: pd.DataFrame, value: str, label: str) -> pd.DataFrame:
    """A block reduced, before the shuffle, to its positives and negatives per rounded
    prediction (with the value range): predictions tie massively (every mastered student of a
    skill has the same P(correct)), so this is far smaller than the block."""
    v = np.round(to_numbers(block[value]).to_numpy(float), 12)
    y = to_numbers(block[label]).to_numpy(float)
    bad = ~((y == 0) | (y == 1))
    if bad.any():
        raise InputError(f"expected 0 or 1, got {block[label].iloc[int(np.flatnonzero(bad)[0])]!r}",
                         column=label)  # fmt: skip
    frame = pd.DataFrame({"v": v, "pos": (y == 1).astype(np.int64), "neg": (y == 0).astype(np.int64),
                          "_part": block["_part"].to_numpy(np.int64)})  # fmt: skip
    return frame.groupby(["_part", "v"], as_index=False, sort=False).sum()


def auc_part(part: pd.DataFrame, number: int) -> dict:
    """Positives, negatives and twice the Mann-Whitney count of one value range, exactly, from
    the counts per value of :func:`value_counts_block`."""
    if len(part) == 0:
        return {"number": number, "pos": 0, "neg": 0, "u2": 0}
    counts = _frame(part).groupby("v", sort=True)[["pos", "neg"]].sum()
    pos = counts["pos"].to_numpy(np.int64)
    neg = counts["neg"].to_numpy(np.int64)
    below = np.cumsum(neg) - neg  # negatives strictly below each value
    u2 = int(np.sum(2 * pos * below + pos * neg))
    return {"number": number, "pos": int(pos.sum()), "neg": int(neg.sum()), "u2": u2}


def pooled_auc(parts: list[dict]) -> float:
    """The AUC of the whole dataset from its value ranges (in increasing order)."""
    parts = sorted(parts, key=lambda p: p["number"])
    n_pos = sum(p["pos"] for p in parts)
    n_neg = sum(p["neg"] for p in parts)
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    u2, below = 0, 0
    for p in parts:
        u2 += p["u2"] + 2 * p["pos"] * below
        below += p["neg"]
    return u2 / (2 * n_pos * n_neg)
