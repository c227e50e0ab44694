"""Phase-1 data: open answers and the misconception tuples they contain.

Phase 1 file: ``student, question, answer, correct_answer`` (CSV/JSONL/JSON), one row per open
answer. A *misconception tuple* is a row whose answer differs from the correct answer - compared by
value when both parse as numbers (``0.50`` = ``1/2``), otherwise as trimmed, case-folded text.
Optional columns are kept (e.g. ``family``/``params`` from :func:`edueval.turing.simulate.phase1_sample`).
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pandas as pd

from ..io import InputError, check_unique, read_table, require_columns, text_column

__all__ = ["PHASE1_COLUMNS", "misconception_tuples", "read_phase1", "same_answer"]

PHASE1_COLUMNS = ("student", "question", "answer", "correct_answer")


def _value(text: str) -> Fraction | None:
    from ..misconceptions.values import parse_value

    for kind in ("fraction", "decimal", "money", "percent", "pi", "int"):
        v = parse_value(text, kind)
        if v is not None:
            return v
    return None


def same_answer(a: str, b: str) -> bool:
    """Whether two answers agree: by value when both read as numbers, else as normalised text."""
    a, b = str(a).strip(), str(b).strip()
    if a.casefold() == b.casefold():
        return True
    va, vb = _value(a), _value(b)
    return va is not None and vb is not None and va == vb


def read_phase1(path: str | Path) -> pd.DataFrame:
    """Read and validate a Phase-1 file (student and question ids kept as text)."""
    df = read_table(path, text_columns=["student", "question", "answer", "correct_answer"])
    require_columns(df, PHASE1_COLUMNS, what="Phase-1 open answers")
    for c in PHASE1_COLUMNS:
        text_column(df, c)
    check_unique(
        df, ["student", "question"], what="answer of the same student to the same question"
    )
    return df


def misconception_tuples(phase1: pd.DataFrame) -> pd.DataFrame:
    """The rows whose answer is wrong (the paper's (student, question, incorrect answer) tuples)."""
    wrong = [
        not same_answer(a, c)
        for a, c in zip(phase1["answer"], phase1["correct_answer"], strict=True)
    ]
    out = phase1[wrong].copy()
    if out.empty:
        raise InputError(
            "no misconception tuples: every Phase-1 answer equals its correct answer",
            file=phase1.attrs.get("file"),
        )
    return out
