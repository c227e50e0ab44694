"""The public AI Teacher Test data (Tack & Piech, EDM 2022): importer, bundled copy, paper values.

``items.jsonl`` holds one dialogue item per line; for each of three questions ("attributes") it maps
every rater to ``[FIRST_PLAYER, SECOND_PLAYER, OUTCOME]`` where OUTCOME is ``true`` when the first
(left, option A) reply was preferred, ``false`` when the second was and ``null`` for "I cannot tell".
:func:`import_teacher_test` turns it into the comparisons table of :mod:`.comparisons`, keeping the
timing of each rater on each item as extra columns.

The data are CC BY-NC-SA 4.0 (github.com/anaistack/ai-teacher-test, commit 6b97ec54); a copy
ships in ``edueval/pairwise/data/ai-teacher-test/`` with its licence (see NOTICE).
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import pandas as pd

from ..io import InputError, identifier_problem, jsonl_lines, load_json, read_text

__all__ = [
    "AGENT_LABELS",
    "ATTRIBUTE_LABELS",
    "ATTRIBUTES",
    "PAPER",
    "FILE_COUNTS",
    "read_released_abilities",
    "bundled_folder",
    "import_teacher_test",
]

#: The three questions, in the paper's order, as they are spelled in items.jsonl.
ATTRIBUTES = (
    "more likely said by a teacher",
    "understanding the student more",
    "helping the student more",
)
#: The paper's names for them (Table 3).
ATTRIBUTE_LABELS = {
    "more likely said by a teacher": "speak like a teacher",
    "understanding the student more": "understand the student",
    "helping the student more": "help the student",
}
AGENT_LABELS = {"Teacher": "Teacher", "blender_9B": "Blender 9B", "GPT-3 Davinci": "GPT-3 Davinci"}

#: Published numbers (Tack & Piech 2022, Sec. 4.2 and Table 3), keyed by attribute as in the data.
PAPER: dict[str, Any] = {
    # Tukey HSD mean differences of per-item alpha (Teacher minus agent) with 95% CIs.
    "diff": {
        ("Teacher", "blender_9B"): {
            "more likely said by a teacher": (0.60, 0.26, 0.93),
            "understanding the student more": (0.55, 0.20, 0.90),
            "helping the student more": (0.75, 0.40, 1.10),
        },
        ("Teacher", "GPT-3 Davinci"): {
            "more likely said by a teacher": (0.67, 0.33, 1.00),
            "understanding the student more": (0.67, 0.32, 1.02),
            "helping the student more": (0.93, 0.58, 1.28),
        },
        # Blender minus GPT-3 (the paper gives only the size and p: 0.071 p=.41, +0.12 p=.47,
        # +0.18 p=.53); no CIs published.
        ("blender_9B", "GPT-3 Davinci"): {
            "more likely said by a teacher": (0.071, None, None),
            "understanding the student more": (0.12, None, None),
            "helping the student more": (0.18, None, None),
        },
    },
    # One-way ANOVA F(2, 144).
    "anova_F": {
        "more likely said by a teacher": 13.1,
        "understanding the student more": 11.8,
        "helping the student more": 22.3,
    },
    # Table 3: % of items with posterior mean alpha > 0, and % whose 95% interval excludes 0.
    "table3": {
        ("Teacher", "more likely said by a teacher"): (69, 8),
        ("Teacher", "understanding the student more"): (71, 6),
        ("Teacher", "helping the student more"): (78, 14),
        ("blender_9B", "more likely said by a teacher"): (41, 6),
        ("blender_9B", "understanding the student more"): (45, 10),
        ("blender_9B", "helping the student more"): (35, 8),
        ("GPT-3 Davinci", "more likely said by a teacher"): (35, 6),
        ("GPT-3 Davinci", "understanding the student more"): (35, 2),
        ("GPT-3 Davinci", "helping the student more"): (33, 12),
    },
}

#: What the bundled items.jsonl holds, counted from the file itself (neither the paper nor the
#: data's README states these counts): a check that the importer reads every comparison.
FILE_COUNTS = {
    "n_comparisons": 5076,
    "n_ties": 264,
    "n_comparisons_without_outliers": 4782,
    "n_raters_without_outliers": 113,
}

#: attribute names of the authors' released abilities (3_abilities/) -> names in items.jsonl
_RELEASED_ATTRIBUTES = {
    "likely said by a teacher": "more likely said by a teacher",
    "understanding the student": "understanding the student more",
    "helping the student": "helping the student more",
}


def read_released_abilities(folder: str | Path | None = None) -> pd.DataFrame:
    """The authors' released posterior means of alpha per (item, attribute, agent), from their
    PyStan fit after outlier removal (``data/3_abilities/`` of the same commit; 441 values):
    columns ``item, attribute, agent, alpha_released``, named as :func:`import_teacher_test`
    names them."""
    folder = Path(folder) if folder is not None else bundled_folder() / "3_abilities"
    rows = []
    for path in sorted(folder.glob("*.jsonl")):
        for lineno, line in jsonl_lines(read_text(path)):
            obj = load_json(line, file=path, line=lineno)
            if not isinstance(obj, dict):
                raise InputError("expected one JSON object per line", file=path, line=lineno)
            rows.append({"item": _item_id(obj["wherefrom"], path, lineno),
                         "attribute": _RELEASED_ATTRIBUTES[obj["attribute"]],
                         "agent": obj["id"], "alpha_released": float(obj["alpha"])})  # fmt: skip
    return pd.DataFrame(rows)


_OUTCOME = {True: "first", False: "second", None: "tie"}
_TIMING = {
    "FIRST_CLICK": "first_click",
    "LAST_CLICK": "last_click",
    "PAGE_SUBMIT": "page_submit",
    "CLICK_COUNT": "click_count",
}


def bundled_folder() -> Path:
    """Folder of the copy of the public data that ships with edueval."""
    return Path(str(files("edueval.pairwise") / "data" / "ai-teacher-test"))


def _item_id(obj: dict, path: Path, lineno: int) -> str:
    name = obj.get("filename")
    idx = obj.get("line_idx")
    if not isinstance(name, str) or not name:
        raise InputError("expected a non-empty string 'filename'", file=path, line=lineno)
    if (
        not isinstance(idx, list)
        or not idx
        or not all(isinstance(i, int) and not isinstance(i, bool) for i in idx)
    ):
        raise InputError(
            "expected 'line_idx' to be a non-empty list of integers", file=path, line=lineno
        )
    _as_written(name, "'filename'", path, lineno)
    stem = name.rsplit(".", 1)[0]
    return f"{stem}:{idx[0]}-{idx[-1]}" if len(idx) > 1 else f"{stem}:{idx[0]}"


def _as_written(value: str, what: str, path: Path, lineno: int) -> None:
    """Refuse an id that would not stay itself (surrounding spaces, a control character)."""
    problem = identifier_problem(value)
    if problem:
        raise InputError(f"{what} {value!r} has {problem}; ids are taken as written", file=path,
                         line=lineno)  # fmt: skip


def import_teacher_test(path: str | Path) -> pd.DataFrame:
    """Read the AI Teacher Test ``items.jsonl`` into a comparisons table.

    Columns: ``item`` (``<dialogue file stem>:<first line>-<last line>``), ``attribute``, ``rater``,
    ``first``, ``second``, ``outcome`` (first/second/tie), then ``task``, ``first_click``,
    ``last_click``, ``page_submit`` (seconds) and ``click_count`` when the item records them.
    Any structural problem is an :class:`InputError` naming the line and the key.
    """
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", file=path)
    if path.is_dir():
        raise InputError("expected a file (items.jsonl), found a directory", file=path)
    rows: list[dict] = []
    seen: dict[str, int] = {}
    lines = read_text(path).split("\n")
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        obj = load_json(raw, file=path, line=lineno)  # nesting bounded: no RecursionError
        if not isinstance(obj, dict):
            raise InputError("expected a JSON object on each line", file=path, line=lineno)
        item = _item_id(obj, path, lineno)
        if item in seen:
            raise InputError(
                f"item {item!r} already appeared on line {seen[item]}", file=path, line=lineno
            )
        seen[item] = lineno
        comp = obj.get("comparisons")
        attrs = comp.get("attributes") if isinstance(comp, dict) else None
        if not isinstance(attrs, dict) or not attrs:
            raise InputError(
                "expected 'comparisons' -> 'attributes' to map each question to its judgements",
                file=path,
                line=lineno,
            )
        given = comp.get("timing") if isinstance(comp, dict) else None
        timing = given if isinstance(given, dict) else {}
        for attribute, judgements in attrs.items():
            _as_written(attribute, "attribute", path, lineno)
            if not isinstance(judgements, dict):
                raise InputError(
                    f"attribute {attribute!r}: expected a mapping rater -> [first, second, outcome]",
                    file=path,
                    line=lineno,
                )
            for rater, triple in judgements.items():
                if (
                    not isinstance(triple, list)
                    or len(triple) != 3
                    or not all(isinstance(p, str) and p for p in triple[:2])
                ):
                    raise InputError(
                        f"attribute {attribute!r}, rater {rater!r}: expected [FIRST_PLAYER, "
                        f"SECOND_PLAYER, true|false|null], got {json.dumps(triple)[:60]}",
                        file=path,
                        line=lineno,
                    )
                _as_written(rater, "rater", path, lineno)
                for agent in triple[:2]:
                    _as_written(agent, "agent", path, lineno)
                outcome = triple[2]
                if not (outcome is None or isinstance(outcome, bool)):
                    raise InputError(
                        f"attribute {attribute!r}, rater {rater!r}: expected the outcome to be "
                        f"true, false or null, got {json.dumps(outcome)}",
                        file=path,
                        line=lineno,
                    )
                row = {
                    "item": item,
                    "attribute": str(attribute),
                    "rater": str(rater),
                    "first": triple[0],
                    "second": triple[1],
                    "outcome": _OUTCOME[outcome],
                    "task": obj.get("task"),
                }
                for key, col in _TIMING.items():
                    values = timing.get(key)
                    if isinstance(values, dict) and rater in values:
                        row[col] = values[rater]
                rows.append(row)
    if not rows:
        raise InputError("no comparisons found; expected one dialogue item per line", file=path)
    df = pd.DataFrame(rows)
    df.attrs["file"] = str(path)
    return df
