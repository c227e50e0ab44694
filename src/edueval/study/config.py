"""``study.yaml``: what a study shows, to whom, and how many items each participant gets.

::

    title: Which reply is better?
    kind: comparative            # comparative | open | mcq
    items: items.jsonl           # path relative to this file (JSONL, JSON or CSV)
    items_per_participant: 10    # comparative/open; mcq participants get all their own MCQs
    seed: 0                      # order of items, pairs and A/B sides
    consent: "text shown before the study"
    questions:                   # comparative: asked about every pair (id = attribute in export)
      - {id: help the student, text: Which reply helps the student more?}
    practice: {...}              # optional: one item of the study's kind, answers not stored

Items by kind:

* ``comparative``: ``{"id", "context": str | [{"speaker", "text"}], "replies": {agent: text}}``
  (at least two replies; every unordered pair of agents is a unit of assignment);
* ``open`` (P5 Phase 1): ``{"id", "question", "correct_answer"}``;
* ``mcq`` (P5 Phase 2, e.g. ``mcqs.csv`` of ``turing assemble``): ``student, question,
  related_question, option_1..4, source_1..4``; a participant's label is their student id.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from ..io import InputError, read_table, read_text

__all__ = ["Study", "load_study", "KINDS"]

KINDS = ("comparative", "open", "mcq")


@dataclass
class Study:
    path: Path
    title: str
    kind: str
    items: list[dict[str, Any]]
    items_per_participant: int
    seed: int
    consent: str
    questions: list[dict[str, str]] = field(default_factory=list)
    practice: dict[str, Any] | None = None
    fingerprint: str = ""

    def item(self, item_id: str, student: str | None = None) -> dict[str, Any]:
        key = (student, item_id) if self.kind == "mcq" else item_id
        return self._index[key]

    def __post_init__(self) -> None:
        if self.kind == "mcq":
            self._index = {(i["student"], i["id"]): i for i in self.items}
        else:
            self._index = {i["id"]: i for i in self.items}

    def units(self) -> list[tuple[str, str | None, str | None]]:
        """Units of assignment ``(item, agent_a, agent_b)`` for comparative (every unordered pair
        of an item's agents), ``(item, None, None)`` for open."""
        if self.kind == "comparative":
            return [(i["id"], a, b) for i in self.items for a, b in
                    combinations(sorted(i["replies"]), 2)]  # fmt: skip
        return [(i["id"], None, None) for i in self.items]

    def students(self) -> list[str]:
        return sorted({i["student"] for i in self.items}) if self.kind == "mcq" else []


def _fail(path: Path, msg: str, column: str | None = None) -> InputError:
    return InputError(msg, file=path, column=column)


def _integer(path: Path, cfg: dict[str, Any], key: str, default: int) -> int:
    """``cfg[key]`` as a whole number; ``2.7`` or ``"two"`` is refused, not rounded."""
    value = cfg.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise _fail(path, f"{key} must be a whole number, got {value!r}", key)
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not number.is_integer():
        raise _fail(path, f"{key} must be a whole number, got {value!r}", key)
    return int(number)


def _read_items(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise InputError("items file not found", file=path)
    if path.suffix.lower() in {".jsonl", ".ndjson"}:
        items = []
        for n, line in enumerate(read_text(path).splitlines(), start=1):
            if line.strip():
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(f"not valid JSON ({exc.msg})", file=path, line=n) from None
                if not isinstance(obj, dict):
                    raise InputError("expected a JSON object", file=path, line=n)
                obj["_line"] = n
                items.append(obj)
        return items
    df = read_table(path, text_columns=["id", "student", "question"])
    df = df.astype(object).where(pd.notna(df), "")
    return [dict(r, _line=int(n)) for n, r in zip(df.index, df.to_dict("records"), strict=True)]


def _check_item(kind: str, it: dict[str, Any], path: Path) -> dict[str, Any]:
    line = it.pop("_line", None)

    def bad(msg: str, col: str) -> InputError:
        return InputError(msg, file=path, line=line, column=col)

    if kind == "comparative":
        if not str(it.get("id", "")).strip():
            raise bad("expected a non-empty id", "id")
        replies = it.get("replies")
        if (
            not isinstance(replies, dict)
            or len(replies) < 2
            or not all(isinstance(v, str) and v.strip() for v in replies.values())
        ):
            raise bad("expected at least two non-empty replies {agent: text}", "replies")
        ctx = it.get("context", "")
        if isinstance(ctx, str):
            ctx = [{"speaker": "", "text": ctx}] if ctx else []
        if not isinstance(ctx, list) or not all(isinstance(t, dict) and "text" in t for t in ctx):
            raise bad("expected a string or a list of {speaker, text}", "context")
        return {"id": str(it["id"]), "context": ctx,
                "replies": {str(k): v.strip() for k, v in replies.items()}}  # fmt: skip
    if kind == "open":
        for col in ("id", "question", "correct_answer"):
            if not str(it.get(col, "")).strip():
                raise bad(f"expected a non-empty {col}", col)
        return {"id": str(it["id"]), "question": str(it["question"]),
                "correct_answer": str(it["correct_answer"])}  # fmt: skip
    for col in ("student", "question", "related_question", "option_1", "source_1"):
        if not str(it.get(col, "")).strip():
            raise bad(f"expected a non-empty {col}", col)
    options = []
    for k in range(1, 5):
        text, src = str(it.get(f"option_{k}", "")).strip(), str(it.get(f"source_{k}", "")).strip()
        if text and src:
            options.append({"position": k, "text": text, "source": src})
    return {"id": str(it["question"]), "student": str(it["student"]),
            "question": str(it["related_question"]), "options": options}  # fmt: skip


def load_study(path: str | Path) -> Study:
    """Read and validate ``study.yaml`` and its items (errors name file, line and key)."""
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", file=path)
    try:
        cfg = yaml.safe_load(read_text(path))
    except yaml.YAMLError as exc:
        raise InputError(
            f"not valid YAML ({' '.join(str(exc).split())[:120]})", file=path
        ) from None
    if not isinstance(cfg, dict):
        raise _fail(path, "expected a mapping of study settings")
    kind = cfg.get("kind")
    if kind not in KINDS:
        raise _fail(path, f"expected kind one of {', '.join(KINDS)}, got {kind!r}", "kind")
    if not isinstance(cfg.get("items"), str):
        raise _fail(path, "expected 'items': path of the items file", "items")
    items_path = (path.parent / cfg["items"]).resolve()
    items = [_check_item(kind, it, items_path) for it in _read_items(items_path)]
    if not items:
        raise InputError("no items", file=items_path)
    keys = [(i.get("student"), i["id"]) for i in items]
    if len(set(keys)) != len(keys):
        raise InputError("duplicate item id", file=items_path, column="id")
    questions = cfg.get("questions") or []
    if kind == "comparative":
        if not questions or not all(
            isinstance(q, dict) and str(q.get("id", "")).strip() and str(q.get("text", "")).strip()
            for q in questions
        ):
            raise _fail(path, "comparative studies need questions: [{id, text}, ...]", "questions")
        questions = [{"id": str(q["id"]), "text": str(q["text"])} for q in questions]
    per = _integer(path, cfg, "items_per_participant", len(items))
    seed = _integer(path, cfg, "seed", 0)
    if per < 1:
        raise _fail(path, "items_per_participant must be at least 1", "items_per_participant")
    practice = cfg.get("practice")
    if practice is not None:
        if not isinstance(practice, dict) or kind == "mcq":
            raise _fail(path, "practice must be one item (comparative or open studies)", "practice")
        practice = _check_item(kind, dict(practice, id=practice.get("id", "practice")), path)
    fingerprint = hashlib.sha256(
        json.dumps([kind, items, questions], sort_keys=True).encode()
    ).hexdigest()[:16]
    return Study(path=path, title=str(cfg.get("title", "Study")), kind=kind, items=items,
                 items_per_participant=per, seed=seed, consent=str(cfg.get("consent", "")),
                 questions=questions, practice=practice, fingerprint=fingerprint)  # fmt: skip
