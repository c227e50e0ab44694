"""Reading a ``responses.csv`` back, for ``malalgo score``: every key value checked.

The scores are computed from a handful of key columns; a value outside their vocabulary would
otherwise be silently miscounted (a ``kind`` of ``Identify`` drops the row from AIA and MIA, a
``status`` of ``JSON`` scores a right answer as wrong, ``is_correct_choice`` = ``yes`` moves
the row from AIA to MIA, a repeated row counts twice).  So each is refused with one line naming
the file, line, column and the values allowed:

- ``kind``: ``identify`` or ``mcq``;
- ``status``: ``json``, ``logprob``, ``json (no logprobs)``, ``unparseable`` or ``failed``;
- ``target``: a letter A-D; ``answer_label``: a letter A-D, or empty when the status is
  ``unparseable`` or ``failed``;
- ``is_correct_choice``: true/false (or 1/0); on each question exactly one ``identify`` row is
  the correct choice;
- one row per (question, kind, choice): a duplicated prompt is refused.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..io import InputError, binary_column, check_unique, line_of, read_table, require_columns
from .tasks import LETTERS

__all__ = ["KINDS", "STATUSES", "read_responses"]

KINDS = ("identify", "mcq")
STATUSES = ("json", "logprob", "json (no logprobs)", "unparseable", "failed")
_NO_ANSWER = ("unparseable", "failed")
_TEXT = ["question_id", "task_id", "kind", "status", "target", "answer_label", "choice", "order"]


def _refuse(df: pd.DataFrame, mask: np.ndarray, column: str, expected: str) -> None:
    if mask.any():
        pos = int(np.flatnonzero(mask)[0])
        value = df[column].iloc[pos]
        shown = "empty" if pd.isna(value) else repr(str(value))
        more = f" ({int(mask.sum())} bad rows in all)" if mask.sum() > 1 else ""
        raise InputError(f"expected {expected}, got {shown}{more}", file=df.attrs.get("file"),
                         line=line_of(df, pos), column=column)  # fmt: skip


def _one_of(df: pd.DataFrame, column: str, allowed: tuple[str, ...], *, empty_ok=None) -> None:
    values = df[column]
    bad = ~values.isin(allowed).to_numpy()
    if empty_ok is not None:
        bad &= ~(values.isna().to_numpy() & empty_ok)
    _refuse(df, bad, column, " or ".join(repr(a) for a in allowed))


def _one_key_per_question(df: pd.DataFrame) -> None:
    ident = df[df["kind"] == "identify"]
    keys = ident.groupby("question_id", sort=False)["is_correct_choice"].sum()
    bad = keys[keys != 1]
    if len(bad):
        qid = bad.index[0]
        pos = int(np.flatnonzero((df["question_id"] == qid).to_numpy())[0])
        raise InputError(f"question {qid!r} has {int(bad.iloc[0])} identify rows marked as the "
                         "correct choice; expected exactly 1", file=df.attrs.get("file"),
                         line=line_of(df, pos), column="is_correct_choice")  # fmt: skip


def read_responses(path: str | Path, meta: list[str]) -> pd.DataFrame:
    """The ``responses.csv`` of a ``malalgo run``, checked (see the module docstring)."""
    df = read_table(path, text_columns=_TEXT)
    require_columns(df, ["task_id", "question_id", "kind", "is_correct_choice", "target",
                         "answer_label", "status", *meta])  # fmt: skip
    _one_of(df, "kind", KINDS)
    _one_of(df, "status", STATUSES)
    _one_of(df, "target", LETTERS)
    _one_of(df, "answer_label", LETTERS, empty_ok=df["status"].isin(_NO_ANSWER).to_numpy())
    df["is_correct_choice"] = binary_column(df, "is_correct_choice").astype(bool)
    check_unique(df, ["question_id", "kind", "choice"], what="prompt")
    _one_key_per_question(df)
    return df
