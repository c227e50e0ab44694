"""Moment of learning: when did the student learn, and when did the model say so?

Pardos & Yudelson (Sec. 6.2): for each student x skill, ``t_true`` is the first opportunity whose
true state is known and ``t_est`` the first opportunity whose posterior P(known) reaches the
threshold (0.95).  Moment-of-learning MAD = mean |t_true - t_est|.

Censoring (our convention, the paper is silent): a student who never reaches the known state, or
whose estimate never crosses the threshold, gets ``T + 1`` (one past the last opportunity), so a
model that never declares mastery for a student who learned at ``t`` is charged ``T + 1 - t``.  The
counts of each case are reported beside the MAD.

A second estimator follows tutoring practice: mastery is declared at the ``n``-th correct answer in
a row (default 3).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..tables import takes_tables
from . import _common_kernels as K
from .data import RESPONSES, Columns, Sequences, pack

__all__ = ["first_crossing", "moment_of_learning", "n_correct_in_a_row", "mol_summary"]


def first_crossing(flag: np.ndarray, starts: np.ndarray, opportunity: np.ndarray) -> np.ndarray:
    """First opportunity (1-based) of each sequence where ``flag`` holds; length + 1 if never.

    ``starts`` delimits the sequences (see :class:`~edueval.kt.data.Sequences`) and
    ``opportunity`` numbers each response within its sequence.  ``flag`` may be (n,) or (m, n)
    for m models at once.
    """
    lengths = np.diff(starts)
    big = np.iinfo(np.int64).max
    vals = np.where(flag, opportunity, big)
    first = np.minimum.reduceat(vals, starts[:-1], axis=-1)
    return np.where(first == big, lengths + 1, first)


def mol_summary(t_true: np.ndarray, t_est: np.ndarray, lengths: np.ndarray) -> dict[str, float]:
    """MAD and the censoring counts for one model."""
    never_learned = t_true > lengths
    never_crossed = t_est > lengths
    return {
        "mol_mad": float(np.mean(np.abs(t_true - t_est))),
        "n_sequences": int(t_true.shape[0]),
        "n_never_learned": int(never_learned.sum()),
        "n_never_crossed": int(never_crossed.sum()),
        "n_both_censored": int((never_learned & never_crossed).sum()),
        "n_early": int((t_est < t_true).sum()),
        "n_late": int((t_est > t_true).sum()),
        "n_exact": int((t_est == t_true).sum()),
    }


def _table(seqs: Sequences, t_true: np.ndarray, t_est: np.ndarray) -> pd.DataFrame:
    lengths = np.diff(seqs.starts)
    return pd.DataFrame(
        {
            "student": seqs.students,
            "skill": seqs.skills[seqs.seq_skill],
            "n_opportunities": lengths,
            "t_true": t_true,
            "t_est": t_est,
            "abs_error": np.abs(t_true - t_est),
            "never_learned": t_true > lengths,
            "never_crossed": t_est > lengths,
        }
    )


@takes_tables(data=RESPONSES)
def moment_of_learning(
    data: pd.DataFrame, threshold: float = 0.95, columns: Columns | None = None
) -> tuple[pd.DataFrame, dict[str, float]]:
    """Moment-of-learning error of ``p_known`` against the true ``known`` state.

    Returns a per student x skill table (``t_true, t_est, abs_error`` and censoring flags) and a
    summary dict with ``mol_mad`` and the counts of censored cases.
    """
    seqs, _ = pack(data, columns, require_known=True)
    if "p_known" not in data.columns:
        raise ValueError("data needs a p_known column (run forward() first)")
    pk = np.asarray(data["p_known"], dtype=float)[seqs.row]
    t_true = first_crossing(seqs.known_states == 1, seqs.starts, seqs.opportunity)
    t_est = first_crossing(pk >= threshold, seqs.starts, seqs.opportunity)
    return _table(seqs, t_true, t_est), mol_summary(t_true, t_est, np.diff(seqs.starts))


@takes_tables(data=RESPONSES)
def n_correct_in_a_row(
    data: pd.DataFrame, n: int = 3, columns: Columns | None = None
) -> tuple[pd.DataFrame, dict[str, float]]:
    """Moment of learning declared at the ``n``-th consecutive correct answer."""
    if n < 1:
        raise ValueError("n must be at least 1")
    seqs, _ = pack(data, columns, require_known=True)
    runs = K.run_lengths(seqs.obs, seqs.starts)
    t_true = first_crossing(seqs.known_states == 1, seqs.starts, seqs.opportunity)
    t_est = first_crossing(runs >= n, seqs.starts, seqs.opportunity)
    return _table(seqs, t_true, t_est), mol_summary(t_true, t_est, np.diff(seqs.starts))
