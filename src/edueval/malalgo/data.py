"""MalAlgoQA-format questions: reading and validating.

Columns (CSV, TSV, JSONL or JSON): ``id, question, choice_A..choice_D, answer`` (the correct
letter), ``rationale_A..rationale_D``, optional ``passage, grade, content, dok``.  The MalAlgoQA
release's names (``ID, Question, Answer, Choice_A, ..., Rationale_A, ..., Passage, Grade,
Content Classification, DOK``) are read as they are.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..io import InputError, check_unique, line_of, read_table, require_columns, text_column

__all__ = ["LETTERS", "read_questions", "normalise_questions"]

LETTERS = ("A", "B", "C", "D")
REQUIRED = [
    "id",
    "question",
    *(f"choice_{x}" for x in LETTERS),
    "answer",
    *(f"rationale_{x}" for x in LETTERS),
]
OPTIONAL = ["passage", "grade", "content", "dok", "family"]

_ALIASES = {
    "id": ("ID", "Id", "question_id"),
    "question": ("Question",),
    "answer": ("Answer", "correct", "Correct Answer", "correct_answer"),
    "passage": ("Passage",),
    "grade": ("Grade",),
    "content": (
        "Content",
        "Content Classification",
        "content_classification",
        "Content_Classification",
    ),
    "dok": ("DOK", "Dok", "dok_level", "DOK Level"),
    **{f"choice_{x}": (f"Choice_{x}", f"Choice {x}", f"choice {x}") for x in LETTERS},
    **{f"rationale_{x}": (f"Rationale_{x}", f"Rationale {x}", f"rationale {x}") for x in LETTERS},
}


def _rename(df: pd.DataFrame) -> pd.DataFrame:
    mapping = {}
    for canonical, names in _ALIASES.items():
        if canonical in df.columns:
            continue
        for name in names:
            if name in df.columns:
                mapping[name] = canonical
                break
    return df.rename(columns=mapping) if mapping else df


def normalise_questions(df: pd.DataFrame) -> pd.DataFrame:
    """Validate a question table and return it with the canonical column names.

    Raises :class:`InputError` naming the file, line and column of the first problem: a missing
    column (rationales included), an empty cell, an answer letter outside A-D, a duplicate id, or
    two identical choices in one question.
    """
    df = _rename(df)
    require_columns(df, REQUIRED, what="MalAlgoQA format")
    out = pd.DataFrame(index=df.index)
    out.attrs.update(df.attrs)
    for col in REQUIRED:
        out[col] = text_column(df, col)
        out[col] = out[col].str.strip()
    answer = out["answer"].str.upper().str.replace(r"^\(?([A-D])\)?\.?$", r"\1", regex=True)
    bad = ~answer.isin(LETTERS).to_numpy()
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"expected an answer letter A, B, C or D, got {df['answer'].iloc[pos]!r}",
            file=df.attrs.get("file"),
            line=line_of(df, pos),
            column="answer",
        )
    out["answer"] = answer
    check_unique(out, ["id"], what="id")
    choices = out[[f"choice_{x}" for x in LETTERS]].to_numpy()
    for pos, row in enumerate(choices):
        if len({c.lower() for c in row}) < 4:
            raise InputError(
                "two choices of this question have the same text; each choice must be distinct",
                file=df.attrs.get("file"),
                line=line_of(df, pos),
                column="choice_A..choice_D",
            )
    for col in OPTIONAL:
        if col in df.columns:
            values = df[col]
            out[col] = values.where(values.notna(), None)
        else:
            out[col] = None
    out["passage"] = out["passage"].fillna("").astype(str)
    return out.reset_index(drop=True).pipe(_keep_attrs, df)


def _keep_attrs(out: pd.DataFrame, src: pd.DataFrame) -> pd.DataFrame:
    out.attrs.update(src.attrs)
    out.attrs["index_is_line"] = False
    return out


def read_questions(path: str | Path) -> pd.DataFrame:
    """Read and validate a MalAlgoQA-format file."""
    df = read_table(path, text_columns=["id", "ID", "answer", "Answer"])
    return normalise_questions(df)
