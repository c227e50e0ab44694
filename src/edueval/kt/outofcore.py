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

from ..io import InputError
from .bkt import BKT, forward_sequences
from .data import Columns, RowFilter, pack
from .params import PARAM_NAMES, params_frame

__all__ = [
    "TARGET_ROWS",
    "block_counts",
    "plan_parts",
    "part_of",
    "fit_part",
    "predict_part",
    "merge_counts",
]

#: rows per partition aimed at: a partition's packing and EM need ~100 bytes per row
TARGET_ROWS = 4_000_000


def block_counts(block: pd.DataFrame, cols: Columns, rows: RowFilter) -> dict:
    """Responses per skill in one block after the row selection, and the rows each rule left
    out; refuses an empty skill cell unless the selection skips them."""
    keep, dropped = rows.mask(block, cols)
    skill = block[cols.skill][keep]
    missing = int(skill.isna().sum())
    if missing:
        raise InputError(
            f"expected a skill, got an empty cell ({missing} rows of one block have none; "
            "--skip-no-skill leaves them out)",
            column=cols.skill,
        )
    counts = skill.astype(str).value_counts(sort=False)
    return {"counts": counts, "dropped": dropped, "n_rows": int(len(block))}


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
        "pid": os.getpid(),
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
    from .pipeline import _impossible_responses, _per_skill_summary

    if len(part) == 0:
        return None
    frame = _frame(part)
    seqs, _ = pack(frame, cols)
    P = params_frame(params).loc[seqs.skills.astype(str), list(PARAM_NAMES)].to_numpy(float)
    pc, pk = forward_sequences(seqs, P)
    out = frame.iloc[seqs.row].reset_index(drop=True)
    out["p_correct"] = pc
    out["p_known"] = pk
    _write_parquet(out, Path(folder) / f"part-{number:05d}.parquet")
    return {
        "per_skill": _per_skill_summary(seqs, pc, pk),
        "n_impossible": _impossible_responses(seqs, pc),
        "n_rows": int(seqs.n_responses),
        "sum_p_correct": float(pc.sum()),
        "sum_p_known": float(pk.sum()),
    }
