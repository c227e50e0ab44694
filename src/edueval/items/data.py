"""Readers and validators for P4's inputs: responses, items, and the QG-SMS question format.

Formats
-------
Responses (CSV/JSONL): one row per answer, ``student, item`` and either ``choice`` (the option's
label, e.g. ``B``, or its exact text) or ``correct`` (0/1, when the options chosen are unknown).
When both are present, ``choice`` decides and ``correct`` must agree with it.

Items (JSONL/CSV/JSON): ``item, text, choices, answer, material, topic`` and optionally
``material_text`` (the learning material itself; without it the material's id stands in).
``choices`` is a JSON list (labelled ``A``, ``B``, ... in order) or an object ``{label: text}``;
``answer`` is the correct option's label or its exact text.

QG-SMS format, as the QG-SMS repository publishes it (JSON list or JSONL): one object per
question with ``q_id, learning_mat_id, q_text, answer, learning_mat, topic, stud_perf``.  The
options are the ``A) ...`` lines of ``q_text`` (the text before them is the stem); ``answer`` is
written ``"D: text"`` (a bare label or the option's text also work); ``stud_perf`` is a list of
``{"s_id": 167, "accuracy": "correct" | "incorrect", "choice": "D: text"}`` (``accuracy`` may
also be 1/0 or true/false).  Optional ``choices`` as above overrides the options in ``q_text``;
a question with neither is refused (its options are not guessed from what students chose).

Identifiers (``item``, ``material``, ``student``, ``q_id``, ``learning_mat_id``, ``s_id``) are
taken as written: an empty one, one with surrounding spaces or a control character, or a JSON
null, true/false, list or object is refused.  Each table is declared once below
(:data:`ITEMS_SCHEMA`, :data:`RESPONSES_SCHEMA`, :data:`QGSMS_SCHEMA`): all three are open --
other columns are kept and ignored, but one that is a near miss of an absent column is refused --
and keyed (one row per item; per student and item; per ``q_id``).

Everything is returned as an :class:`ItemData`: ``items`` (one row per question: ``item, text,
options, option_text, answer, material, material_text, topic``) and ``responses`` (``student,
item, choice, correct``; ``choice`` empty when unknown).
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..io import InputError, as_table, identifier_problem, line_of, load_json, shown
from ..tables import Col, Schema, Table, takes_tables
from .scores import is_dichotomous, looks_like_scores, read_scores, scores_to_long

__all__ = [
    "ItemData",
    "as_item_data",
    "item_data_from_scores",
    "read_item_source",
    "read_items",
    "read_responses",
    "read_qgsms_questions",
    "load_item_data",
]

#: An items file (``items simulate`` writes its ground truth beside these columns: open).
ITEMS_SCHEMA = Schema(
    "items file",
    (Col("item", "id"), Col("text", "text"), Col("choices", "raw"), Col("answer", "text"),
     Col("material", "id"), Col("topic", "text"), Col("material_text", "raw", required=False)),
    key=("item",),
)  # fmt: skip

#: A response file: ``student, item`` and ``choice`` or ``correct`` (or both; checked by
#: :func:`read_responses`).  Open: exported by other tools.
RESPONSES_SCHEMA = Schema(
    "response file",
    (Col("student", "id"), Col("item", "id"), Col("choice", "text", required=False),
     Col("correct", "binary", required=False)),
    key=("student", "item"),
)  # fmt: skip


#: The gates of the items and response tables (:func:`takes_tables`; the readers check them).
ITEMS = Table.of(ITEMS_SCHEMA, "items", self_checked=True)
RESPONSES = Table.of(RESPONSES_SCHEMA, "responses", self_checked=True)


@dataclass
class ItemData:
    """Validated questions and the answers given to them."""

    items: pd.DataFrame
    responses: pd.DataFrame

    @property
    def has_choices(self) -> bool:
        return bool(self.responses["choice"].notna().all())

    def checked(self) -> ItemData:
        """This data when it is already in the readers' form; otherwise the user's own items and
        responses tables (as the files hold them) validated exactly as the files are."""
        items_ok = set(self.items.columns) >= _READ_ITEMS
        if items_ok and set(self.responses.columns) >= _READ_RESPONSES:
            return self
        items = self.items if items_ok else read_items(self.items)
        responses = read_responses(self.responses, items)
        _check_coverage(items, responses, "responses DataFrame")
        return ItemData(items, responses)


#: The columns of the tables the readers return (``ItemData`` already in this form is trusted).
_READ_ITEMS = {"item", "options", "option_text", "answer", "material", "material_text", "topic"}
_READ_RESPONSES = {"student", "item", "choice", "correct"}


def as_item_data(
    data: ItemData | str | Path | pd.DataFrame, items: str | Path | pd.DataFrame | None = None
) -> ItemData:
    """Validated :class:`ItemData` from an ``ItemData``, from responses and items (files or
    DataFrames, as :func:`load_item_data`), or (``items`` None) from QG-SMS questions."""
    if isinstance(data, ItemData):
        if items is not None:
            raise TypeError("pass an ItemData, or responses and items -- not both")
        return data.checked()
    if items is None:
        return read_item_source(data)
    return load_item_data(data, items)


def read_item_source(data: str | Path | pd.DataFrame) -> ItemData:
    """One table without an items file: QG-SMS questions when it has ``q_id`` or ``stud_perf``,
    otherwise a score table (long or wide, :mod:`.scores`) of 0/1 scores."""
    columns = data.columns if isinstance(data, pd.DataFrame) else _columns_of(data)
    if looks_like_scores([str(c) for c in columns]):
        return item_data_from_scores(read_scores(data), source=_source(data))
    return read_qgsms_questions(data)


def _source(data: str | Path | pd.DataFrame) -> str:
    return "scores DataFrame" if isinstance(data, pd.DataFrame) else str(data)


def _columns_of(path: str | Path) -> list[str]:
    """The columns of a table file (the QG-SMS format is JSON, a score table any table)."""
    return [str(c) for c in as_table(path, name="scores").columns]


def item_data_from_scores(scores: pd.DataFrame, *, source: str | None = None) -> ItemData:
    """:class:`ItemData` for a wide 0/1 score frame (:func:`~.scores.read_scores`): items
    without text, options or answer (no DE, no distractor table); blank cells are not
    responses.  Scores other than 0/1 are refused (DF and DC are defined on right/wrong)."""
    if not is_dichotomous(scores):
        v = scores.to_numpy(dtype=float)
        s, i = np.argwhere(~np.isnan(v) & ~np.isin(v, (0.0, 1.0)))[0]
        raise InputError(
            f"item analysis takes 0/1 scores; student {scores.index[s]!r} has "
            f"{v[s, i]:g} on item {scores.columns[i]!r}",
            file=source,
        )
    long = scores_to_long(scores)
    items = pd.DataFrame({
        "item": [str(c) for c in scores.columns], "text": "", "options": [()] * scores.shape[1],
        "option_text": [{}] * scores.shape[1], "answer": "", "material": "",
        "material_text": "", "topic": "",
    })  # fmt: skip
    responses = pd.DataFrame({"student": long["student"].astype(str), "item": long["item"].astype(str),
                              "choice": None, "correct": long["score"].astype(int)})  # fmt: skip
    return ItemData(items, responses)


def _labels(n: int) -> list[str]:
    return list(string.ascii_uppercase[:n])


def _parse_choices(value: Any, *, file: str, line: int | None) -> dict[str, str]:
    if isinstance(value, str):
        try:
            value = load_json(value)  # nesting bounded: no RecursionError
        except InputError:
            raise InputError(
                "expected a JSON list or object of options", file=file, line=line, column="choices"
            ) from None
    if isinstance(value, list):
        out = dict(zip(_labels(len(value)), (str(v) for v in value), strict=False))
        if len(value) > 26:
            raise InputError("at most 26 options", file=file, line=line, column="choices")
    elif isinstance(value, dict):
        out = {str(k).strip(): str(v) for k, v in value.items()}
    else:
        raise InputError(
            f"expected a list or object of options, got {shown(value)}",
            file=file,
            line=line,
            column="choices",
        )
    if len(out) < 2:
        raise InputError("expected at least two options", file=file, line=line, column="choices")
    if len(set(out.values())) != len(out):
        raise InputError("two options have the same text", file=file, line=line, column="choices")
    return out


_LABELLED = re.compile(r"^\s*([A-Za-z])\s*[:)]\s*(.*?)\s*$", re.S)
_OPTION_LINE = re.compile(r"^\s*([A-Z])\)\s*(.*?)\s*$", re.M)


def _resolve_option(value: Any, options: dict[str, str]) -> str | None:
    """The label of ``value`` given as a label, as an option's exact text, or as both
    (``"D: text"`` or ``"D) text"``, as the QG-SMS release writes answers) -- None if neither."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    text = str(value).strip()
    if text in options:
        return text
    if text.upper() in options:
        return text.upper()
    for label, option in options.items():
        if option.strip() == text:
            return label
    m = _LABELLED.match(text)
    if m and m.group(1).upper() in options:
        label = m.group(1).upper()
        if not m.group(2) or m.group(2) == options[label].strip():
            return label
    return None


def _options_in_text(q_text: str) -> tuple[str, dict[str, str]] | None:
    """The stem and the ``A) ...`` option lines of a QG-SMS ``q_text`` (None without them)."""
    found = list(_OPTION_LINE.finditer(q_text))
    if len(found) < 2:
        return None
    return q_text[: found[0].start()].strip(), {m.group(1): m.group(2) for m in found}


_ACCURACY = {"1": 1, "0": 0, "true": 1, "false": 0, "correct": 1, "incorrect": 0}


def _accuracy(value: Any) -> int | None:
    """1/0 from 0/1, true/false or the release's ``"correct"``/``"incorrect"`` (any case)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float) and value in (0, 1):
        return int(value)
    return _ACCURACY.get(str(value).strip().lower()) if isinstance(value, str) else None


@takes_tables(data=ITEMS)
def read_items(data: str | Path | pd.DataFrame) -> pd.DataFrame:
    """Read and validate an items file, or check the user's own items DataFrame the same way
    (see the module docstring; ``choices`` may then hold Python lists or dicts)."""
    df = as_table(data, name="items", text_columns=["item", "material", "topic", "answer"])
    file = df.attrs.get("file")
    ITEMS_SCHEMA.validate(df)
    rows = []
    has_mt = "material_text" in df.columns
    for pos, rec in enumerate(df.to_dict("records")):
        line = line_of(df, pos)
        options = _parse_choices(rec["choices"], file=file, line=line)
        answer = _resolve_option(rec["answer"], options)
        if answer is None:
            raise InputError(
                f"answer {rec['answer']!r} is not one of the options ({', '.join(options)})",
                file=file,
                line=line,
                column="answer",
            )
        mt = rec.get("material_text") if has_mt else None
        if mt is None or (isinstance(mt, float) and np.isnan(mt)) or not str(mt).strip():
            mt = str(rec["material"])
        rows.append(
            {
                "item": str(rec["item"]),
                "text": str(rec["text"]),
                "options": tuple(options),
                "option_text": options,
                "answer": answer,
                "material": str(rec["material"]),
                "material_text": str(mt),
                "topic": str(rec["topic"]),
            }
        )
    return pd.DataFrame(rows)


@takes_tables(data=RESPONSES, items=Table("items", tuple(sorted(_READ_ITEMS)), paths=False))
def read_responses(data: str | Path | pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Read responses (a file or a DataFrame) and check them against ``items``, as
    :func:`read_items` returns them (see the module docstring)."""
    df = as_table(data, name="responses", text_columns=["student", "item", "choice"])
    file = df.attrs.get("file")
    RESPONSES_SCHEMA.check_header(df)
    if "choice" not in df.columns and "correct" not in df.columns:
        raise InputError(
            "expected a 'choice' or a 'correct' column; the file has: " + ", ".join(df.columns),
            file=file,
        )
    checked = RESPONSES_SCHEMA.validate(df)
    student = checked["student"].to_numpy()
    item = checked["item"].to_numpy()
    by_id = items.set_index("item")
    unknown = ~pd.Series(item).isin(by_id.index).to_numpy()
    if unknown.any():
        pos = int(np.flatnonzero(unknown)[0])
        raise InputError(
            f"item {item[pos]!r} is not in the items file",
            file=file,
            line=line_of(df, pos),
            column="item",
        )
    choice = np.full(len(df), None, dtype=object)
    if "choice" in df.columns:
        # resolve each distinct (item, choice) once: a class answers few distinct options
        ic, iu = pd.factorize(np.asarray(item, dtype=object))
        cc, cu = pd.factorize(df["choice"].to_numpy(dtype=object), use_na_sentinel=False)
        codes, keys = pd.factorize(ic.astype(np.int64) * len(cu) + cc)
        labels = np.empty(len(keys), dtype=object)
        option_text = by_id["option_text"]
        for k, key in enumerate(keys):
            it = iu[key // len(cu)]
            labels[k] = _resolve_option(cu[key % len(cu)], option_text[it])
        bad = pd.isna(labels)
        if bad.any():
            pos = int(np.flatnonzero(bad[codes])[0])
            it, value = item[pos], df["choice"].iloc[pos]
            raise InputError(
                f"choice {value!r} is not among the options of item {it!r} "
                f"({', '.join(option_text[it])})",
                file=file,
                line=line_of(df, pos),
                column="choice",
            )
        choice = labels[codes]
        answer = by_id.loc[item, "answer"].to_numpy()
        correct = (choice == answer).astype(np.int8)
        if "correct" in df.columns:
            given = checked["correct"].to_numpy()
            bad = given != correct
            if bad.any():
                pos = int(np.flatnonzero(bad)[0])
                raise InputError(
                    f"correct={int(given[pos])} disagrees with choice {choice[pos]!r} "
                    f"(the answer of item {item[pos]!r} is {answer[pos]!r})",
                    file=file,
                    line=line_of(df, pos),
                    column="correct",
                )
    else:
        correct = checked["correct"].to_numpy()
    return pd.DataFrame(
        {"student": student, "item": item, "choice": choice, "correct": correct.astype(int)}
    )


def _check_coverage(items: pd.DataFrame, responses: pd.DataFrame, file: str | None) -> None:
    seen = set(responses["item"].unique())
    missing = [i for i in items["item"] if i not in seen]
    if missing:
        raise InputError(
            f"question {missing[0]!r} has no responses"
            + (f" ({len(missing)} questions in all)" if len(missing) > 1 else "")
            + "; every question needs at least one answer",
            file=file,
        )


@takes_tables(responses=RESPONSES, items=ITEMS)
def load_item_data(
    responses: str | Path | pd.DataFrame, items: str | Path | pd.DataFrame
) -> ItemData:
    """Responses + items (files or DataFrames) -> :class:`ItemData`, validated as the files are
    (every question must have responses)."""
    item_table = read_items(items)
    answers = read_responses(responses, item_table)
    source = "responses DataFrame" if isinstance(responses, pd.DataFrame) else str(responses)
    _check_coverage(item_table, answers, source)
    return ItemData(item_table, answers)


#: The QG-SMS question format (the release's JSON list or JSONL).  Open: other keys are kept and
#: ignored; ``topic`` and ``learning_mat`` are read as written (the release leaves some empty).
QGSMS_SCHEMA = Schema(
    "QG-SMS question file",
    (Col("q_id", "id"), Col("learning_mat_id", "id"), Col("q_text", "text"),
     Col("answer", "text"), Col("learning_mat", "raw"), Col("topic", "raw"),
     Col("stud_perf", "raw"), Col("choices", "raw", required=False)),
    key=("q_id",),
)  # fmt: skip


@takes_tables(data=Table.of(QGSMS_SCHEMA, "questions", self_checked=True))
def read_qgsms_questions(data: str | Path | pd.DataFrame) -> ItemData:
    """Read the QG-SMS question format (JSON list or JSONL, or a DataFrame of its records; see
    the module docstring)."""
    df = as_table(data, name="questions",
                  text_columns=["q_id", "learning_mat_id", "answer", "topic"])  # fmt: skip
    file = df.attrs.get("file")
    QGSMS_SCHEMA.validate(df)
    items, responses = [], []
    for pos, rec in enumerate(df.to_dict("records")):
        line = line_of(df, pos)
        where = f"question {pos + 1}" if line is None else None
        qid = str(rec["q_id"])
        perf = rec["stud_perf"]
        if not isinstance(perf, list) or not perf:
            raise InputError(
                f"{where + ': ' if where else ''}question {qid!r} has no responses "
                "(stud_perf must be a non-empty list)",
                file=file,
                line=line,
                column="stud_perf",
            )
        answer_text = str(rec["answer"]).strip()
        stem, options = _qg_options(rec, qid, file, line)
        answer = _resolve_option(answer_text, options)
        if answer is None:
            raise InputError(
                f"answer {answer_text!r} of question {qid!r} is not one of its options",
                file=file,
                line=line,
                column="answer",
            )
        responses += _qg_responses(perf, qid, options, answer, file, line)
        items.append(
            {
                "item": qid,
                "text": stem,
                "options": tuple(options),
                "option_text": options,
                "answer": answer,
                "material": str(rec["learning_mat_id"]),
                "material_text": str(rec["learning_mat"]),
                "topic": str(rec["topic"]),
            }
        )
    resp = pd.DataFrame(responses, columns=["student", "item", "choice", "correct"])
    if resp["choice"].isna().any():  # a wrong answer without its choice: distractors unknown
        resp["choice"] = None
    return ItemData(pd.DataFrame(items), resp)


def _qg_options(rec: dict, qid: str, file: str, line: int | None) -> tuple[str, dict[str, str]]:
    """The stem and options of a QG-SMS question: ``choices`` when given, else the ``A) ...``
    lines of ``q_text``; a question with neither is refused (never guessed from the answers)."""
    raw_choices = rec.get("choices")
    stem, in_text = str(rec["q_text"]), _options_in_text(str(rec["q_text"]))
    if raw_choices is not None and not isinstance(raw_choices, float):
        return stem, _parse_choices(raw_choices, file=file, line=line)
    if in_text is None:
        raise InputError(
            f"question {qid!r} has no options: expected at least two 'A) ...' lines in q_text "
            "or a 'choices' list (options are not guessed from what students chose)",
            file=file,
            line=line,
            column="q_text",
        )
    return in_text


def _qg_student(value: object, qid: str, file: str, line: int | None) -> str:
    """An ``s_id`` as written (a number or text), or an :class:`InputError`."""
    problem = "null" if value is None else identifier_problem(value)
    if problem is None and not str(value).strip():
        problem = "an empty id"
    if problem:
        raise InputError(
            f"question {qid!r}: s_id {value!r} is not a student id ({problem}); ids are taken "
            "as written",
            file=file,
            line=line,
            column="stud_perf",
        )
    return str(value)


def _qg_responses(
    perf: list, qid: str, options: dict[str, str], answer: str, file: str, line: int | None
) -> list[dict]:
    """The responses in one question's ``stud_perf``."""
    rows = []
    students: set[str] = set()
    for p in perf:
        if not isinstance(p, dict) or "s_id" not in p or "accuracy" not in p:
            raise InputError(
                f"question {qid!r}: each stud_perf entry needs s_id and accuracy",
                file=file,
                line=line,
                column="stud_perf",
            )
        sid = _qg_student(p["s_id"], qid, file, line)
        if sid in students:
            raise InputError(
                f"question {qid!r}: student {sid!r} appears twice", file=file, line=line
            )
        students.add(sid)
        acc = p["accuracy"]
        correct = _accuracy(acc)
        if correct is None:
            raise InputError(
                f"question {qid!r}, student {sid!r}: accuracy must be correct/incorrect or "
                f"1/0, got {shown(acc)}",
                file=file,
                line=line,
                column="stud_perf",
            )
        choice = p.get("choice")
        label = None
        if choice is not None and str(choice).strip():
            label = _resolve_option(choice, options)
            if label is None:
                raise InputError(
                    f"question {qid!r}, student {sid!r}: choice {choice!r} is not among "
                    "the options",
                    file=file,
                    line=line,
                    column="stud_perf",
                )
            if int(label == answer) != correct:
                raise InputError(
                    f"question {qid!r}, student {sid!r}: accuracy {correct} disagrees with "
                    f"choice {choice!r}",
                    file=file,
                    line=line,
                    column="stud_perf",
                )
        if label is None and correct:
            label = answer  # a correct answer's choice is the key
        rows.append({"student": sid, "item": qid, "choice": label, "correct": correct})
    return rows
