"""Dialogues for ``tutor reply``, and the NCTE uptake importer.

Dialogues JSONL: one object per line::

    {"id": "d1", "turns": [{"speaker": "teacher", "text": "..."},
                           {"speaker": "student", "text": "..."},
                           {"speaker": "teacher", "text": "..."}],
     "meta": {...}}            # optional, copied into the replies table as meta_<key>

``speaker`` is ``teacher`` or ``student``.  Every student turn that is directly followed by a teacher
turn is a *target*: the AI replies to it given the turns before (and including) it, and the
following teacher turn is the real reply it is compared with.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import (
    InputError,
    atomic_write,
    check_regular_file,
    identifier_problem,
    jsonl_lines,
    line_of,
    load_json,
    read_table,
    read_text,
    shown,
    to_numbers,
)
from ..tables import Col, Schema, near_miss

__all__ = ["DIALOGUE_SCHEMA", "NCTE_SCHEMA", "Target", "as_dialogues", "read_dialogues",
           "reply_targets", "import_ncte", "SPEAKERS"]  # fmt: skip

SPEAKERS = ("teacher", "student")

#: One dialogue (a JSONL record): ``id`` taken exactly as written (text or a whole number; no
#: surrounding spaces, NUL or other control characters; not null, true/false, a list or an
#: object) and unique; ``turns`` a non-empty list of ``{speaker, text}``; ``meta`` an optional
#: object.  Open: other keys are ignored, but a near miss of a missing key (``turn``, ``ID``) is
#: refused with that key.
DIALOGUE_SCHEMA = Schema("dialogue", (Col("id", "id"), Col("turns"), Col("meta", required=False)),
                         key=("id",))  # fmt: skip


def _dialogue_id(obj: dict, path: str | Path, line: int | None) -> str:
    """The record's id as written (see :data:`DIALOGUE_SCHEMA`), or an :class:`InputError`."""
    absent = [k for k in DIALOGUE_SCHEMA.known if k not in obj]
    for key in obj:
        hint = None if key in DIALOGUE_SCHEMA.known else near_miss(str(key), absent)
        if hint is not None:
            raise InputError(f"unknown key {key!r} (did you mean {hint!r}?)", file=path,
                             line=line, column=str(key))  # fmt: skip
    did = obj.get("id")
    if did is None or isinstance(did, bool) or not isinstance(did, str | int) or did == "":
        shown = "null" if did is None else json.dumps(did)[:40]
        raise InputError(f"expected a non-empty 'id' (text or a whole number), got {shown}",
                         file=path, line=line, column="id")  # fmt: skip
    problem = identifier_problem(did)
    if problem is not None:
        raise InputError(f"dialogue id {did!r} has {problem}: ids are taken exactly as written",
                         file=path, line=line, column="id")  # fmt: skip
    return str(did)


@dataclass(frozen=True)
class Target:
    """One student turn to reply to."""

    dialogue: str
    turn: int  # index (0-based) of the real teacher reply in the dialogue's turns
    context: tuple[tuple[str, str], ...]  # (speaker, text) up to and including the student turn
    real_reply: str
    meta: dict = field(default_factory=dict, compare=False)


def _dialogue(obj: object, path: str | Path, n: int | None, seen: set[str]) -> dict:
    """One dialogue record checked (:data:`DIALOGUE_SCHEMA`; errors name ``path`` and line
    ``n``): ``{"id", "turns": [(speaker, text)], "meta", "line"}``."""
    if not isinstance(obj, dict):
        raise InputError("expected a JSON object", file=path, line=n)
    did = _dialogue_id(obj, path, n)
    if did in seen:
        raise InputError(f"duplicate dialogue id {did!r}", file=path, line=n, column="id")
    seen.add(did)
    turns = obj.get("turns")
    if not isinstance(turns, list) or not turns:
        raise InputError("expected a non-empty list 'turns'", file=path, line=n,
                         column="turns")  # fmt: skip
    clean = []
    for i, t in enumerate(turns):
        if (
            not isinstance(t, dict)
            or t.get("speaker") not in SPEAKERS
            or not isinstance(t.get("text"), str)
        ):
            raise InputError(
                f"turn {i + 1}: expected {{\"speaker\": \"teacher\"|\"student\", "
                f"\"text\": string}}, got {json.dumps(t)[:80]}",
                file=path, line=n, column="turns",
            )  # fmt: skip
        clean.append((t["speaker"], t["text"].strip()))
    meta = obj.get("meta") or {}
    if not isinstance(meta, dict):
        raise InputError("'meta' must be an object", file=path, line=n, column="meta")
    return {"id": did, "turns": clean, "meta": meta, "line": n}


def read_dialogues(path: str | Path) -> list[dict]:
    """Read and validate a dialogues JSONL file (errors name the file, line and key)."""
    path = check_regular_file(path)  # a folder or a FIFO refused before opening
    out: list[dict] = []
    seen: set[str] = set()
    for n, raw in jsonl_lines(read_text(path)):
        out.append(_dialogue(load_json(raw, file=path, line=n), path, n, seen))
    if not out:
        raise InputError("no dialogues", file=path)
    return out


def as_dialogues(data: str | Path | pd.DataFrame | list[dict]) -> list[dict]:
    """Dialogues from a JSONL file (:func:`read_dialogues`), or from the user's own records: a
    list of ``{"id", "turns": [{"speaker", "text"}], "meta"}`` dicts or a DataFrame with those
    columns (as ``pd.read_json(path, lines=True)`` gives), validated the same way; errors name
    "dialogues list" or "dialogues DataFrame" and the record (1-based) as the line."""
    if isinstance(data, str | Path):
        return read_dialogues(data)
    if isinstance(data, pd.DataFrame):
        label = "dialogues DataFrame"
        records = [  # a missing cell (a dialogue without meta beside one with) is no meta
            {k: v for k, v in r.items() if not (isinstance(v, float) and math.isnan(v))}
            for r in data.to_dict(orient="records")
        ]
    elif isinstance(data, list | tuple):
        label, records = "dialogues list", list(data)
    else:
        raise TypeError(f"expected a path, a list of dialogues or a DataFrame, got "
                        f"{type(data).__name__}")  # fmt: skip
    seen: set[str] = set()
    out = [_dialogue(obj, label, i, seen) for i, obj in enumerate(records, start=1)]
    if not out:
        raise InputError("no dialogues", file=label)
    return out


def reply_targets(dialogues: list[dict]) -> list[Target]:
    """Every student turn directly followed by a non-empty teacher turn."""
    targets = []
    for d in dialogues:
        turns = d["turns"]
        for i in range(1, len(turns)):
            if turns[i][0] == "teacher" and turns[i - 1][0] == "student" and turns[i][1]:
                targets.append(
                    Target(d["id"], i, tuple(turns[:i]), turns[i][1], dict(d.get("meta", {})))
                )
    return targets


#: The NCTE ratings read into ``meta``, with their ranges (uptake: the mean of the raters' 0/1/2;
#: on-task: the share of raters saying yes).
_RATINGS = {"uptake": 2.0, "teacher_on_task": 1.0, "student_on_task": 1.0}

#: The NCTE uptake CSV: ``obs_id`` and ``exchange_idx`` ids taken exactly as written, one row per
#: exchange, both texts non-empty; the ratings optional (an empty cell is a missing rating; a
#: value is a finite number in its range).  Open: the other columns of the release are ignored,
#: but a near miss of a missing rating (``uptke``) is refused.
NCTE_SCHEMA = Schema(
    "NCTE uptake CSV",
    (Col("obs_id", "id"), Col("exchange_idx", "id"), Col("student_text", "text"),
     Col("teacher_text", "text"), *(Col(c, required=False) for c in _RATINGS)),
    key=("obs_id", "exchange_idx"),
)  # fmt: skip


def _strict_csv(path: Path) -> None:
    """Refuse a CSV whose quoting is broken: a stray quote opens a field that runs on over the
    next lines, and a lenient reader swallows those rows into one text cell."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            reader = csv.reader(fh, strict=True)
            for _ in reader:
                pass
    except csv.Error as exc:
        raise InputError(f"malformed CSV ({exc}): an unbalanced quote?", file=path,
                         line=reader.line_num) from None  # fmt: skip
    except UnicodeDecodeError:
        pass  # read_table names the byte


def _rating(df: pd.DataFrame, column: str) -> np.ndarray:
    """A rating column: numbers, finite, in [0, its maximum]; an empty cell is a missing rating."""
    values = to_numbers(df[column]).to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        outside = (values < 0) | (values > _RATINGS[column])
    bad = df[column].notna().to_numpy() & (~np.isfinite(values) | outside)
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise InputError(f"expected a finite number in [0, {_RATINGS[column]:g}] or an empty "
                         f"cell, got {shown(df[column].iloc[pos])}", file=df.attrs.get("file"),
                         line=line_of(df, pos), column=column)  # fmt: skip
    return values


def import_ncte(csv_path: str | Path, out_path: str | Path, *, limit: int | None = None) -> dict:
    """Convert the NCTE uptake CSV (Demszky et al., 2021) into dialogues JSONL.

    Each row (``obs_id, exchange_idx, student_text, teacher_text`` + ratings) becomes a two-turn
    dialogue ``student_text`` -> ``teacher_text`` with id ``<obs_id>-<exchange_idx>``; the ratings
    (``uptake``, ``teacher_on_task``, ``student_on_task`` means) go into ``meta`` so that a later
    ``pairwise summarize`` can correlate judgements with uptake.  The CSV is read
    from the path given."""
    if Path(csv_path).suffix.lower() in {".csv", ".txt"} and Path(csv_path).is_file():
        _strict_csv(Path(csv_path))
    df = read_table(csv_path, text_columns=["obs_id", "exchange_idx", "student_text",
                                             "teacher_text"])  # fmt: skip
    NCTE_SCHEMA.validate(df)
    ratings = {col: _rating(df, col) for col in _RATINGS if col in df.columns}
    if limit is not None:
        if limit < 1:
            raise InputError("limit= must be at least 1")
        df = df.head(limit)
    lines = []
    for r in df.reset_index(drop=True).itertuples(index=True):
        meta = {"obs_id": r.obs_id, "exchange_idx": r.exchange_idx}
        for col, values in ratings.items():
            v = values[r.Index]
            meta[col] = None if np.isnan(v) else float(v)
        obj = {
            "id": f"{r.obs_id}-{r.exchange_idx}",
            "turns": [
                {"speaker": "student", "text": str(r.student_text).strip()},
                {"speaker": "teacher", "text": str(r.teacher_text).strip()},
            ],
            "meta": meta,
        }
        lines.append(json.dumps(obj, ensure_ascii=False, allow_nan=False))
    atomic_write(out_path, "\n".join(lines) + "\n")
    return {"n_dialogues": len(lines), "n_observations": int(df["obs_id"].nunique())}
