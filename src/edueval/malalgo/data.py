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

from ..io import InputError, as_table, line_of, shown
from ..tables import Col, Schema, Table, takes_tables

__all__ = ["LETTERS", "QUESTION_SCHEMA", "read_questions", "normalise_questions"]

LETTERS = ("A", "B", "C", "D")
REQUIRED = [
    "id",
    "question",
    *(f"choice_{x}" for x in LETTERS),
    "answer",
    *(f"rationale_{x}" for x in LETTERS),
]
OPTIONAL = ["passage", "grade", "content", "dok", "family"]

#: The question table (after the release's names are mapped to these): ``id`` taken exactly as
#: written (no surrounding spaces, control characters or JSON null/list/object/true/false) and
#: unique; the texts non-empty (read with their surrounding spaces trimmed); ``grade`` (0-12) and
#: ``dok`` (Webb's depth of knowledge, 1-4) whole numbers when given.  Open: other columns
#: (``malrule_A``, ``params`` of ``malalgo generate``) are kept out of the result, but one that is
#: a near miss of an absent column (``rationale_a``, ``pasage``) is refused.
QUESTION_SCHEMA = Schema(
    "MalAlgoQA question file",
    (Col("id", "id"), *(Col(c, "text") for c in REQUIRED[1:]),
     Col("passage", required=False), Col("grade", "integer", required=False, low=0, high=12),
     Col("content", required=False), Col("dok", "integer", required=False, low=1, high=4),
     Col("family", required=False)),
    key=("id",),
)  # fmt: skip

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

#: Columns read as text exactly as written (a JSON ``true`` or object in them is refused).
_ID_COLUMNS = ["id", *_ALIASES["id"], "answer", *_ALIASES["answer"]]


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


#: The gates of a question table (:func:`takes_tables`): as given (release names accepted, the
#: readers check it), and as read (canonical names, for the functions that take read questions).
QUESTIONS = Table.of(QUESTION_SCHEMA, "questions", self_checked=True)
READ_QUESTIONS = Table.of(QUESTION_SCHEMA, "questions", paths=False)


@takes_tables(df=QUESTIONS)
def normalise_questions(df: pd.DataFrame) -> pd.DataFrame:
    """Validate a question table and return it with the canonical column names.

    Raises :class:`InputError` naming the file, line and column of the first problem: a missing
    column (rationales included), an empty cell, an answer letter outside A-D, a duplicate id, or
    two identical choices in one question.
    """
    df = _rename(df)
    checked = QUESTION_SCHEMA.validate(df)
    out = pd.DataFrame(index=df.index)
    out.attrs.update(df.attrs)
    out["id"] = checked["id"]
    for col in REQUIRED[1:]:
        out[col] = pd.Series(checked[col], index=df.index).str.strip()
    answer = out["answer"].str.upper().str.replace(r"^\(?([A-D])\)?\.?$", r"\1", regex=True)
    bad = ~answer.isin(LETTERS).to_numpy()
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"expected an answer letter A, B, C or D, got {shown(df['answer'].iloc[pos])}",
            file=df.attrs.get("file"),
            line=line_of(df, pos),
            column="answer",
        )
    out["answer"] = answer
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
    passage = out["passage"].astype(object)  # an all-empty column is read as float NaN
    out["passage"] = passage.where(passage.notna(), "").astype(str)
    return out.reset_index(drop=True).pipe(_keep_attrs, df)


def _keep_attrs(out: pd.DataFrame, src: pd.DataFrame) -> pd.DataFrame:
    out.attrs.update(src.attrs)
    out.attrs["index_is_line"] = False
    return out


@takes_tables(data=QUESTIONS)
def read_questions(data: str | Path | pd.DataFrame) -> pd.DataFrame:
    """Read and validate a MalAlgoQA-format file, or the user's own DataFrame (validated the
    same way, errors naming "questions DataFrame"; the frame itself is not modified)."""
    df = as_table(data, name="questions", text_columns=_ID_COLUMNS)
    return normalise_questions(df)
