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
    pairing: random              # comparative: random (default) | adaptive | adaptive-shared,
                                 # or {policy, question, refit_every, random_rounds, ridge}

Items by kind:

* ``comparative``: ``{"id", "context": str | [{"speaker", "text"}], "replies": {agent: text}}``
  (at least two replies; every unordered pair of agents is a unit of assignment);
* ``open`` (P5 Phase 1): ``{"id", "question", "correct_answer"}``;
* ``mcq`` (P5 Phase 2, e.g. ``mcqs.csv`` of ``turing assemble``): ``student, question,
  related_question, option_1..4, source_1..4``; a participant's label is their student id.
  ``option_k`` and ``source_k`` go together; a source is ``correct``, ``ai``, ``human`` or
  ``random`` (several sharing one option joined by ``+``, as ``turing assemble`` writes them).

Rules (checked when any ``study`` command loads the study, before a database is touched): ids --
item ids, agents, question ids, MCQ students and questions -- are taken exactly as written (see
:mod:`.inputs`: no surrounding spaces or control characters, no ``null``/list/object; ``007``
stays ``007``); no id is given twice (two questions with one id would each be answered and one
answer would overwrite the other), nor a key twice in one YAML mapping or JSON object; unknown
settings are refused with the nearest known one; ``seed`` is a whole number 0 ... 2**63 - 1 and
``items_per_participant`` at least 1; ``pairing`` names a known policy (:class:`Pairing`).  Each
refusal is one line naming the file and line.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import pandas as pd

from ..io import InputError, check_regular_file, line_of, load_yaml, read_table, read_text
from ..tables import Col, Schema
from .inputs import (
    both_places,
    check_identifier,
    check_keys,
    first_duplicate,
    read_items_json,
    read_items_jsonl,
    unpaired_surrogate,
    yaml_duplicate_key,
    yaml_questions,
)

__all__ = ["ITEM_SCHEMAS", "KINDS", "Pairing", "Study", "load_study"]

KINDS = ("comparative", "open", "mcq")

_OPTIONS = tuple(Col(f"{c}_{k}", "text", required=k == 1) for k in range(1, 5)
                 for c in ("option", "source"))  # fmt: skip

#: An item of each kind of study (a JSON/JSONL record or a table row).  Ids exactly as written
#: and unique -- the item id; for ``mcq`` the (student, question) pair -- and each agent (a key of
#: ``replies``) too.  Open: other keys are kept out of the study (``mcqs.csv`` of ``turing
#: assemble`` has ``position_ai`` and more), but a near miss of a key the item lacks (``replys``)
#: is refused with that key.  The checks themselves are :func:`_check_item`'s.
ITEM_SCHEMAS = {
    "comparative": Schema("comparative item", (Col("id", "id"), Col("context", required=False),
                                               Col("replies")), key=("id",)),
    "open": Schema("open item", (Col("id", "id"), Col("question", "text"),
                                 Col("correct_answer", "text")), key=("id",)),
    "mcq": Schema("MCQ item", (Col("student", "id"), Col("question", "id"),
                               Col("related_question", "text"), *_OPTIONS),
                  key=("student", "question"), ignored=("n_options",)),
}  # fmt: skip


@dataclass(frozen=True)
class Pairing:
    """How a comparative study pairs the agents of an item (``pairing:`` in ``study.yaml``).

    ``policy``: ``random`` (the default: every pair of every item laid out evenly when a
    participant is invited, :func:`.db.assign_units`), or ``adaptive`` / ``adaptive-shared``
    (:mod:`edueval.pairwise.pairing`, the policies of ``pairwise simulate``): the item of each
    slot is laid out as under ``random``, but the pair is chosen only when the participant comes
    to the slot (with the answer to the slot before, or when opening the first), from the
    estimates of the judgements stored so far (:mod:`.pairing`).
    ``question``: the question whose answers the estimates are fitted on (default: the first);
    ``refit_every``: judgements of an item between refits of its estimates; ``random_rounds``:
    rounds of random pairs before the adaptive ones; ``ridge``: the fit's penalty (MAP under
    N(0, 1/ridge))."""

    policy: str = "random"
    question: str | None = None
    refit_every: int = 10
    random_rounds: int = 2
    ridge: float = 0.1

    @property
    def adaptive(self) -> bool:
        return self.policy != "random"


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
    pairing: Pairing = field(default_factory=Pairing)

    def item(self, item_id: str, student: str | None = None) -> dict[str, Any]:
        key = (student, item_id) if self.kind == "mcq" else item_id
        return self._index[key]

    def __post_init__(self) -> None:
        # MCQ items are keyed by (student, id): one question per participant
        self._index: dict[tuple[str | None, str] | str, dict[str, Any]]
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


#: Keys ``study.yaml`` may hold; anything else (``item_per_participant``) is refused, naming the
#: nearest known key, instead of being ignored.
KEYS = ("title", "kind", "items", "items_per_participant", "seed", "consent", "questions",
        "practice", "pairing")  # fmt: skip
#: Keys of a ``pairing:`` mapping (:class:`Pairing`).
PAIRING_KEYS = ("policy", "question", "refit_every", "random_rounds", "ridge")

#: Seeds are numpy ``SeedSequence`` entropy: a whole number 0 <= seed <= 2**63 - 1.
MAX_SEED = 2**63 - 1


def _integer(path: Path, cfg: dict[str, Any], key: str, default: int, low: int, high: int) -> int:
    """``cfg[key]`` as a whole number in ``[low, high]``; ``2.7`` or ``"two"`` is refused, not
    rounded, and a long integer is read exactly (not through a float)."""
    value = cfg.get(key, default)
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str):
        try:
            number = int(value.strip())
        except ValueError:
            try:
                as_float = float(value)
            except ValueError:
                as_float = float("nan")
            number = int(as_float) if as_float.is_integer() else None
    if number is None:
        raise _fail(path, f"{key} must be a whole number, got {value!r}", key)
    if not low <= number <= high:
        raise _fail(path, f"{key} must be between {low} and {high:,}, got {number}", key)
    return number


def _key_line(root: Any, key: str) -> int | None:
    """The line of ``key`` in the top mapping of a composed ``study.yaml``."""
    for k, _ in getattr(root, "value", []):
        if getattr(k, "value", None) == key:
            return k.start_mark.line + 1
    return None


def _pairing(path: Path, cfg: dict[str, Any], root: Any, kind: str,
             questions: list[dict[str, str]]) -> Pairing:  # fmt: skip
    """``pairing:`` of ``study.yaml`` (a policy name, or a mapping with ``policy``)."""
    raw = cfg.get("pairing")
    if raw is None:
        return Pairing()
    from ..pairwise.pairing import POLICIES

    line = _key_line(root, "pairing")

    def bad(msg: str) -> InputError:
        return InputError(msg, file=path, line=line, column="pairing")

    spec = {"policy": raw} if isinstance(raw, str) else raw
    if not isinstance(spec, dict):
        raise bad(f"expected a policy ({', '.join(POLICIES)}) or a mapping with 'policy'")
    for key in spec:
        if key not in PAIRING_KEYS:
            near = difflib.get_close_matches(str(key), PAIRING_KEYS, n=1)
            hint = (
                f"; did you mean {near[0]!r}?" if near else f" (known: {', '.join(PAIRING_KEYS)})"
            )
            raise bad(f"unknown pairing setting {key!r}{hint}")
    policy = spec.get("policy", "random")
    if policy not in POLICIES:
        near = difflib.get_close_matches(str(policy), POLICIES, n=1)
        hint = f"did you mean {near[0]!r}? " if near else ""
        raise bad(f"unknown pairing policy {policy!r}; {hint}(known: {', '.join(POLICIES)})")
    if policy != "random" and kind != "comparative":
        raise bad(f"pairing {policy!r} is for comparative studies; this one is {kind!r}")
    ids = [q["id"] for q in questions]
    question = spec.get("question")
    if question is not None and str(question) not in ids:
        raise bad(f"pairing question {question!r} is not a question id of the study "
                  f"(known: {', '.join(ids)})")  # fmt: skip
    ridge = spec.get("ridge", Pairing.ridge)
    if isinstance(ridge, bool) or not isinstance(ridge, int | float) or not 0 < ridge <= 100:
        raise bad(f"pairing ridge must be a number > 0 and <= 100, got {ridge!r}")
    return Pairing(policy=policy, question=None if question is None else str(question),
                   refit_every=_integer(path, spec, "refit_every", Pairing.refit_every, 1, 10**6),
                   random_rounds=_integer(path, spec, "random_rounds", Pairing.random_rounds,
                                          0, 10**6),
                   ridge=float(ridge))  # fmt: skip


def _read_items(path: Path, kind: str) -> Sequence[tuple[int | None, Any]]:
    """``(line, raw item)`` of the items file (JSONL, JSON, or a table: its header checked)."""
    if not os.path.lexists(path):
        raise InputError("items file not found", file=path)
    check_regular_file(path)  # a folder or a FIFO refused before opening
    suffix = path.suffix.lower()
    if suffix in {".jsonl", ".ndjson"}:
        return read_items_jsonl(path)
    if suffix == ".json":
        return read_items_json(path)
    df = read_table(path, text_columns=_TEXT_COLUMNS)
    ITEM_SCHEMAS[kind].check_header(df)
    df = df.astype(object).where(pd.notna(df), None)
    return [(line_of(df, n), r) for n, r in enumerate(df.to_dict("records"))]


#: Columns of a table of items read as text exactly as written ("1.50" is not 1.5).
_TEXT_COLUMNS = ["id", "student", "question", "related_question", "correct_answer", "context",
                 *(f"{c}_{k}" for c in ("option", "source") for k in range(1, 5))]  # fmt: skip


def _text(
    value: Any, what: str, bad: Any, *, required: bool = True, column: str | None = None
) -> str:
    """A text field (not an identifier): text or a number; ``null``/missing is empty."""
    column = column or what
    if value is None:
        value = ""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise bad(f"expected {what} as text", column)
    text = str(value)
    if required and not text.strip():
        raise bad(f"expected a non-empty {what}", column)
    if unpaired_surrogate(text):
        raise bad(f"expected {what} as UTF-8 text (it holds an unpaired surrogate)", column)
    return text


def _check_item(kind: str, it: Any, path: Path, line: int | None) -> dict[str, Any]:
    def bad(msg: str, col: str | None = None) -> InputError:
        return InputError(msg, file=path, line=line, column=col)

    def ident(col: str, what: str) -> str:
        return check_identifier(it.get(col), what, file=path, line=line, column=col)

    if not isinstance(it, dict):
        raise bad("expected an object (one item)")
    check_keys(it, ITEM_SCHEMAS[kind], file=path, line=line)
    if kind == "comparative":
        item_id = ident("id", "item id")
        replies = it.get("replies")
        if not isinstance(replies, dict) or len(replies) < 2:
            raise bad("expected at least two non-empty replies {agent: text}", "replies")
        agents = {}
        for agent, reply in replies.items():
            agent = check_identifier(agent, "agent id", file=path, line=line, column="replies")
            agents[agent] = _text(reply, f"reply of agent {agent!r}", bad, column="replies")
            agents[agent] = agents[agent].strip()
        ctx = it.get("context", "")
        if isinstance(ctx, str):
            ctx = [{"speaker": "", "text": ctx}] if ctx else []
        if not isinstance(ctx, list) or not all(isinstance(t, dict) and "text" in t for t in ctx):
            raise bad("expected a string or a list of {speaker, text}", "context")
        return {"id": item_id, "context": ctx, "replies": agents}
    if kind == "open":
        return {"id": ident("id", "item id"), "question": _text(it.get("question"), "question", bad),
                "correct_answer": _text(it.get("correct_answer"), "correct_answer", bad)}  # fmt: skip
    student, question = ident("student", "student id"), ident("question", "question id")
    options = []
    for k in range(1, 5):
        text = _text(it.get(f"option_{k}"), f"option_{k}", bad, required=k == 1).strip()
        src = _text(it.get(f"source_{k}"), f"source_{k}", bad, required=k == 1).strip()
        if bool(text) != bool(src):
            raise bad(f"option_{k} and source_{k} go together (one is empty)",
                      f"option_{k}" if not text else f"source_{k}")  # fmt: skip
        if text:
            options.append({"position": k, "text": text, "source": src})
    _check_sources(options, bad)
    return {"id": question, "student": student,
            "question": _text(it.get("related_question"), "related_question", bad),
            "options": options}  # fmt: skip


#: Sources of an MCQ option (``turing assemble``); one option proposed by several is written
#: ``ai+human``.  ``turing analyze`` reads exactly these, so anything else is refused at load,
#: not after participants have answered.
SOURCES = ("correct", "ai", "human", "random")


def _check_sources(options: list[dict[str, Any]], bad: Any) -> None:
    seen: set[str] = set()
    for k, source in ((o["position"], o["source"]) for o in options):
        for part in source.split("+"):
            if part not in SOURCES:
                raise bad(f"expected a source among {', '.join(SOURCES)} (or several joined by "
                          f"'+'), got {source!r}", f"source_{k}")  # fmt: skip
            if part in seen:
                raise bad(f"source {part!r} is given to two options", f"source_{k}")
            seen.add(part)


def _checked_items(kind: str, items_path: Path) -> list[dict[str, Any]]:
    """The study's items, each checked; two items with one id (one MCQ per student and
    question) are refused naming both lines."""
    raw = _read_items(items_path, kind)
    items = [_check_item(kind, it, items_path, line) for line, it in raw]
    if not items:
        raise InputError("no items", file=items_path)
    has_lines = all(line is not None for line, _ in raw)
    keys = [((i.get("student"), i["id"]), line if has_lines else n)
            for n, (i, (line, _)) in enumerate(zip(items, raw, strict=True), start=1)]  # fmt: skip
    dup = first_duplicate(keys)
    if dup is not None:
        (student, item_id), a, b = dup
        what = (f"MCQ of student {student!r} on question {item_id!r}" if kind == "mcq"
                else f"item id {item_id!r}")  # fmt: skip
        raise InputError(f"{what} is given twice ({both_places(a, b, 'line' if has_lines else 'item')})",
                         file=items_path, line=b if has_lines else None,
                         column="question" if kind == "mcq" else "id")  # fmt: skip
    return items


def _settings(path: Path) -> tuple[dict[str, Any], Any]:
    """``study.yaml`` as data and as a YAML node tree (for lines and scalars as written)."""
    import yaml

    text = read_text(path)
    cfg = load_yaml(text, file=path)  # one line for bad YAML or nesting too deep
    if not isinstance(cfg, dict):
        raise _fail(path, "expected a mapping of study settings")
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    dup = yaml_duplicate_key(root)
    if dup is not None:
        key, a, b = dup
        raise InputError(f"key {key!r} is given twice ({both_places(a, b)}): which one is meant?",
                         file=path, line=b)  # fmt: skip
    for key in cfg:
        if key not in KEYS:
            near = difflib.get_close_matches(str(key), KEYS, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else f" (known: {', '.join(KEYS)})"
            raise _fail(path, f"unknown setting {key!r}{hint}", str(key))
    return cfg, root


def load_study(path: str | Path) -> Study:
    """Read and validate ``study.yaml`` and its items (errors name file, line and key).

    Ids (items, agents, questions, MCQ students) are taken exactly as written and must be
    unique: see :mod:`edueval.study.inputs`."""
    path = check_regular_file(path)  # a folder or a FIFO refused before opening
    cfg, root = _settings(path)
    kind = cfg.get("kind")
    if kind not in KINDS:
        raise _fail(path, f"expected kind one of {', '.join(KINDS)}, got {kind!r}", "kind")
    if not isinstance(cfg.get("items"), str):
        raise _fail(path, "expected 'items': path of the items file", "items")
    items_path = (path.parent / cfg["items"]).resolve()
    items = _checked_items(kind, items_path)
    questions = yaml_questions(root, path) or []
    if kind == "comparative" and not questions:
        raise _fail(path, "comparative studies need questions: [{id, text}, ...]", "questions")
    per = _integer(path, cfg, "items_per_participant", len(items), 1, 10**9)
    seed = _integer(path, cfg, "seed", 0, 0, MAX_SEED)
    practice = cfg.get("practice")
    if practice is not None:
        if not isinstance(practice, dict) or kind == "mcq":
            raise _fail(path, "practice must be one item (comparative or open studies)", "practice")
        practice = _check_item(kind, dict(practice, id=practice.get("id", "practice")), path, None)
    pairing = _pairing(path, cfg, root, kind, questions)
    fingerprint = hashlib.sha256(
        json.dumps([kind, items, questions], sort_keys=True).encode()
    ).hexdigest()[:16]
    title, consent = cfg.get("title"), cfg.get("consent")
    return Study(path=path, title="Study" if title is None else str(title), kind=kind,
                 items=items, items_per_participant=per, seed=seed,
                 consent="" if consent is None else str(consent), questions=questions,
                 practice=practice, fingerprint=fingerprint, pairing=pairing)  # fmt: skip
