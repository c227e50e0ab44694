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

from ..io import InputError, line_of, read_table
from ..tables import Col, Schema
from .data import QUESTION_SCHEMA
from .tasks import LETTERS

__all__ = ["KINDS", "RESPONSES_SCHEMA", "STATUSES", "read_responses"]

KINDS = ("identify", "mcq")
STATUSES = ("json", "logprob", "json (no logprobs)", "unparseable", "failed")
_NO_ANSWER = ("unparseable", "failed")
_TEXT = ["question_id", "task_id", "kind", "status", "target", "answer_label", "choice", "order"]

#: ``responses.csv`` as ``malalgo score`` reads it: ``task_id`` and ``question_id`` are ids taken
#: exactly as written; ``is_correct_choice`` is 0/1 (true/false); ``kind``, ``status``, ``target``
#: and ``answer_label`` are checked against their vocabularies below; one row per (question, kind,
#: choice).  Open: the prompt, reply and per-question columns (``grade``, ``content``, ``dok``,
#: asked for as ``meta``) are kept; a near miss of a missing column is refused.  The per-question
#: columns are optional, as in the question file: a run of questions without them (MalAlgoQA's
#: release format) writes them empty, and an empty or absent one reads back as missing.
RESPONSES_SCHEMA = Schema(
    "malalgo responses file",
    (Col("task_id", "id"), Col("question_id", "id"), Col("kind"), Col("choice"),
     Col("is_correct_choice", "binary"), Col("target"), Col("answer_label"), Col("status")),
    key=("question_id", "kind", "choice"),
)  # fmt: skip
#: The per-question columns as the question file declares them (:data:`.data.QUESTION_SCHEMA`).
_META_COLUMNS = {c.name: c for c in QUESTION_SCHEMA.columns if c.kind == "integer"}


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


def _optional(col: Col) -> Col:
    return Col(col.name, col.kind, required=False, low=col.low, high=col.high, empty_ok=True)


def read_responses(path: str | Path, meta: list[str]) -> pd.DataFrame:
    """The ``responses.csv`` of a ``malalgo run``, checked (see the module docstring)."""
    df = read_table(path, text_columns=_TEXT)
    extra = tuple(_optional(_META_COLUMNS.get(m, Col(m))) for m in meta)
    schema = Schema(RESPONSES_SCHEMA.what, RESPONSES_SCHEMA.columns + extra,
                    key=RESPONSES_SCHEMA.key)  # fmt: skip
    checked = schema.validate(df)
    _one_of(df, "kind", KINDS)
    _one_of(df, "status", STATUSES)
    _one_of(df, "target", LETTERS)
    _one_of(df, "answer_label", LETTERS, empty_ok=df["status"].isin(_NO_ANSWER).to_numpy())
    df["is_correct_choice"] = checked["is_correct_choice"].astype(bool)
    for m in meta:
        if m not in df.columns:
            df[m] = np.nan
    _one_key_per_question(df)
    return df
