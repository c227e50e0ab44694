"""Summaries of a forward-filter's predictions (pure computation, no I/O): used by ``kt predict``
in memory (:mod:`edueval.kt.commands.pipeline`) and per partition (:mod:`edueval.kt.scale.outofcore`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["impossible_responses", "per_skill_summary"]


def impossible_responses(seqs, pc: np.ndarray) -> int:
    """Responses that the parameters give probability exactly 0 (degenerate parameters)."""
    return int(np.sum(((pc >= 1.0) & (seqs.obs == 0)) | ((pc <= 0.0) & (seqs.obs == 1))))


def per_skill_summary(seqs, pc: np.ndarray, pk: np.ndarray) -> pd.DataFrame:
    """One row per skill: responses, students, mean correctness, mean predicted P(correct) and
    the mean posterior P(known) after each student's last response."""
    rows = []
    for k, skill in enumerate(seqs.skills):
        sl = seqs.skill_slice(k)
        y = seqs.obs[sl]
        rows.append(
            {
                "skill": skill,
                "n_responses": int(y.shape[0]),
                "n_students": int(seqs.skill_starts[k + 1] - seqs.skill_starts[k]),
                "mean_correct": float(y.mean()),
                "mean_p_correct": float(pc[sl].mean()),
                "final_mean_p_known": float(
                    pk[
                        seqs.starts[seqs.skill_starts[k] + 1 : seqs.skill_starts[k + 1] + 1] - 1
                    ].mean()
                ),
            }
        )
    return pd.DataFrame(rows)
