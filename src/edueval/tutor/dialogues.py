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
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import (
    InputError,
    check_unique,
    jsonl_lines,
    line_of,
    load_json,
    read_table,
    read_text,
    require_columns,
    text_column,
)
from ..runs import atomic_write

__all__ = ["Target", "read_dialogues", "reply_targets", "import_ncte", "SPEAKERS"]

SPEAKERS = ("teacher", "student")


@dataclass(frozen=True)
class Target:
    """One student turn to reply to."""

    dialogue: str
    turn: int  # index (0-based) of the real teacher reply in the dialogue's turns
    context: tuple[tuple[str, str], ...]  # (speaker, text) up to and including the student turn
    real_reply: str
    meta: dict = field(default_factory=dict, compare=False)


def read_dialogues(path: str | Path) -> list[dict]:
    """Read and validate a dialogues JSONL file (errors name the file, line and key)."""
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", file=path)
    out: list[dict] = []
    seen: set[str] = set()
    for n, raw in jsonl_lines(read_text(path)):
        obj = load_json(raw, file=path, line=n)
        if not isinstance(obj, dict):
            raise InputError("expected a JSON object", file=path, line=n)
        did = obj.get("id")
        if not isinstance(did, (str, int)) or str(did).strip() == "":
            raise InputError("expected a non-empty 'id'", file=path, line=n, column="id")
        did = str(did)
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
        out.append({"id": did, "turns": clean, "meta": meta, "line": n})
    if not out:
        raise InputError("no dialogues", file=path)
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


_RATINGS = ("uptake", "teacher_on_task", "student_on_task")


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
    """A rating column: numbers, finite; an empty cell is a missing rating."""
    values = pd.to_numeric(df[column], errors="coerce").to_numpy(dtype=float)
    bad = df[column].notna().to_numpy() & ~np.isfinite(values)
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise InputError(f"expected a finite number or an empty cell, got "
                         f"{df[column].iloc[pos]!r}", file=df.attrs.get("file"),
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
    require_columns(df, ["obs_id", "exchange_idx", "student_text", "teacher_text"],
                    what="the NCTE uptake CSV")  # fmt: skip
    for col in ("obs_id", "exchange_idx", "student_text", "teacher_text"):
        text_column(df, col, identifier=col in ("obs_id", "exchange_idx"))
    check_unique(df, ["obs_id", "exchange_idx"], what="exchange (the same obs_id and exchange_idx)")
    ratings = {col: _rating(df, col) for col in _RATINGS if col in df.columns}
    if limit is not None:
        if limit < 1:
            raise InputError("--limit must be at least 1")
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
