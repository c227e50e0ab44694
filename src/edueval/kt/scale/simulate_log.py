"""Large synthetic tutor logs for out-of-core runs: BKT responses written as Parquet in chunks.

Students are simulated a chunk at a time (each chunk from its own spawned seed), so memory stays
at one chunk whatever the size of the log.  Within a chunk the rows are in time order, as a
tutoring platform logs them: at each round every student answers one question on every skill, in
an order of skills drawn per student, so each file holds every skill and a skill's rows are spread
over all files.  ``order`` is the student's time step (1, 2, ...), which orders each student's
responses on a skill.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from ...extras import require
from ..bkt.model import simulate_arrays
from ..bkt.params import PARAM_NAMES, params_frame

__all__ = ["chunk_frame", "write_log"]


def chunk_frame(
    P: np.ndarray,
    skills: np.ndarray,
    first_student: int,
    n_students: int,
    n_opportunities: int,
    gen: np.random.Generator,
    width: int,
) -> pd.DataFrame:
    """Responses of students ``first_student ..`` in time order (round, position, student)."""
    known, correct = simulate_arrays(P, n_students, n_opportunities, gen)  # (K, S, T)
    n_skills = P.shape[0]
    # perm[s, j] = the skill student s practises j-th in every round
    perm = gen.permuted(np.tile(np.arange(n_skills), (n_students, 1)), axis=1)
    t = np.arange(n_opportunities)[:, None, None]
    j = np.arange(n_skills)[None, :, None]
    s = np.arange(n_students)[None, None, :]
    k = perm.T[None, :, :]  # (1, K, S): skill at position j for student s
    shape = (n_opportunities, n_skills, n_students)
    names = np.array(
        [f"s{i:0{width}d}" for i in range(first_student, first_student + n_students)], dtype=object
    )
    return pd.DataFrame(
        {
            "student": np.broadcast_to(names[None, None, :], shape).reshape(-1),
            "skill": skills[np.broadcast_to(k, shape).reshape(-1)],
            "order": np.broadcast_to(t * n_skills + j + 1, shape).reshape(-1).astype(np.int32),
            "correct": correct[k, s, t].reshape(-1),
            "known": known[k, s, t].reshape(-1),
        }
    )


def write_log(
    params: pd.DataFrame,
    n_students: int,
    n_opportunities: int,
    seed: int,
    folder: Path,
    *,
    rows_per_file: int = 1_000_000,
) -> dict:
    """Simulate ``n_students`` x every skill x ``n_opportunities`` responses into
    ``folder/part-NNNNN.parquet`` (about ``rows_per_file`` rows each); returns counts."""
    pa = require("pyarrow", "scale", "writing Parquet")
    pq = require("pyarrow.parquet", "scale", "writing Parquet")

    pf = params_frame(params)
    P = pf[list(PARAM_NAMES)].to_numpy(dtype=float)
    skills = pf.index.to_numpy(dtype=object)
    per_student = len(skills) * n_opportunities
    chunk = max(1, rows_per_file // per_student)
    n_files = -(-n_students // chunk)
    width = len(str(max(n_students - 1, 0)))
    folder.mkdir(parents=True, exist_ok=True)
    n_rows = n_correct = n_known = 0
    for f, ss in enumerate(np.random.SeedSequence(seed).spawn(n_files)):
        lo = f * chunk
        df = chunk_frame(P, skills, lo, min(chunk, n_students - lo), n_opportunities,
                         np.random.default_rng(ss), width)  # fmt: skip
        path = folder / f"part-{f:05d}.parquet"
        tmp = path.with_name(f".{path.name}.tmp")
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp)
        os.replace(tmp, path)
        n_rows += len(df)
        n_correct += int(df["correct"].sum())
        n_known += int(df["known"].sum())
    return {
        "n_responses": n_rows,
        "n_files": n_files,
        "mean_correct": n_correct / n_rows,
        "mean_known": n_known / n_rows,
    }
