"""A finished LLM run folder read as items: one per prompt the protocol scores.

Read only: nothing in the run folder is written or changed.  Each protocol's per-item table
(``responses.csv``, ``judgements.csv``, ``replies.csv``) gives the items, their target, the parsed
answer and edueval's score; ``calls.jsonl`` gives each item's prompt messages and the model's
reply (matched by the call's ``tag``); ``config.json`` the command, the model and the times;
``results.json`` the headline metrics.  No third-party package beyond pandas is needed here.

========================  ==============================  =========================================
command                   one item per                    score (name: value)
========================  ==============================  =========================================
``malalgo run``           prompt (``responses.csv`` row)  ``mcq`` / ``aia`` / ``mia``: correct 0/1
``qgsms run``             method, pair and order          the method's name: correct 0/1 (``n/a``
                          (``judgements.csv`` row)        judgements unscored, as in AA)
``tutor reply``           target turn (``replies.csv``)   ``f1``: unigram F1 with the real reply
                                                          (failed and empty replies unscored)
========================  ==============================  =========================================
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..io import InputError, jsonl_lines, read_text

__all__ = ["EXPORTABLE", "Item", "LLMRun", "Measure", "read_llm_run"]

#: run commands that can be exported -> the protocol's name (the task is ``edueval/<protocol>``)
EXPORTABLE = {"malalgo run": "malalgo", "qgsms run": "qgsms", "tutor reply": "tutor"}


@dataclass(frozen=True)
class Item:
    """One scored prompt of a run.  ``tags`` name its calls in ``calls.jsonl`` (earlier steps
    first: the last call's reply is the one the answer was read from)."""

    id: str
    tags: tuple[str, ...]
    target: str
    answer: str | None
    score_name: str | None  # None: not scored (e.g. a failed call where the metric skips it)
    value: float | None
    explanation: str
    metadata: dict[str, Any]
    reply: str | None = None  # the reply as the table has it (used when no call is logged)


@dataclass(frozen=True)
class Measure:
    """A headline metric group of ``results.json``: the score of the items named ``name``."""

    name: str
    metrics: dict[str, float]


@dataclass(frozen=True)
class LLMRun:
    """A finished LLM run folder, read."""

    path: Path
    command: str
    protocol: str
    config: dict[str, Any]
    results: dict[str, Any]
    items: list[Item]
    measures: list[Measure]
    calls: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    dataset: Path | None = None

    @property
    def model(self) -> str:
        """The model the run recorded in ``config.json``: the resolved client's spec
        (``"model": {"spec": ...}``), else the ``model`` parameter of the run."""
        recorded = self.config.get("model")
        if isinstance(recorded, dict):
            recorded = recorded.get("spec") or recorded.get("model")
        recorded = recorded or (self.config.get("params") or {}).get("model")
        return str(recorded) if recorded else "unknown"

    @property
    def base_urls(self) -> list[str]:
        """The servers recorded in ``config.json`` (where recorded), else those of the call log."""
        recorded = self.config.get("model")
        urls = recorded.get("base_urls") if isinstance(recorded, dict) else None
        if not urls:
            urls = {c["server"] for calls in self.calls.values() for c in calls if c.get("server")}
        return sorted(str(u) for u in urls)


def _json(path: Path) -> dict[str, Any]:
    text = read_text(path)  # a folder or a FIFO refused before opening
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"cannot read {path.name}: {exc}", file=path) from None
    if not isinstance(data, dict):
        raise InputError(f"{path.name} is not a JSON object", file=path)
    return data


def _table(path: Path, needed: tuple[str, ...]) -> pd.DataFrame:
    """Every cell as text ('' when empty): ids such as '007' stay as written."""
    if not path.is_file():
        raise InputError(f"{path.name} is missing: not a complete run", file=path.parent)
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read {path.name}: {exc}", file=path) from None
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise InputError(f"{path.name} has no column {', '.join(missing)}", file=path)
    return df


def _calls(path: Path) -> dict[str, list[dict[str, Any]]]:
    """``calls.jsonl`` by tag, each tag's calls in the order they were logged (none if absent)."""
    by_tag: dict[str, list[dict[str, Any]]] = {}
    if not path.is_file():
        return by_tag
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read {path.name}: {exc}", file=path) from None
    for number, line in jsonl_lines(text):  # LF only: a raw U+2028 in a reply is text
        try:
            call = json.loads(line)
        except ValueError:
            raise InputError("not a JSON line", file=path, line=number) from None
        if isinstance(call, dict):
            by_tag.setdefault(str(call.get("tag")), []).append(call)
    for calls in by_tag.values():
        calls.sort(key=lambda c: c.get("seq", 0))
    return by_tag


def _meta(row: dict[str, str], leave_out: tuple[str, ...] = ()) -> dict[str, Any]:
    return {k: v for k, v in row.items() if v != "" and k not in leave_out}


def _flag(text: str) -> float:
    return 1.0 if text.strip().lower() in ("1", "1.0", "true") else 0.0


def _explain(row: dict[str, str], *keys: str) -> str:
    return "; ".join(f"{k}: {row[k]}" for k in keys if row.get(k, "") != "")


def _numbers(values: dict[str, Any], keys: tuple[str, ...]) -> dict[str, float]:
    return {k: float(values[k]) for k in keys if isinstance(values.get(k), (int, float))}


def _checked(path: Path, protocol: str) -> None:
    """The run's table read back through the schema its own protocol reads it with (``compare``
    does the same): ids as written, 0/1 columns that are 0 or 1 ('2' or 'yes' refused, not
    counted as 0), numbers that are numbers -- before its cells are read as text."""
    if not path.is_file():
        raise InputError(f"{path.name} is missing: not a complete run", file=path.parent)
    if protocol == "malalgo":
        from ..malalgo.responses import read_responses

        read_responses(path, [])
    elif protocol == "qgsms":
        from ..qgsms.data import read_judgements

        read_judgements(path)
    else:
        from ..tutor.study import read_replies_table

        read_replies_table(path)


def _malalgo(path: Path, results: dict[str, Any]) -> tuple[list[Item], list[Measure]]:
    _checked(path / "responses.csv", "malalgo")
    df = _table(path / "responses.csv", ("task_id", "kind", "target", "correct", "status"))
    items = []
    for row in df.to_dict("records"):
        if row["kind"] == "mcq":
            name = "mcq"
        else:
            name = "aia" if _flag(row.get("is_correct_choice", "")) else "mia"
        items.append(Item(id=row["task_id"], tags=(row["task_id"],), target=row["target"],
                          answer=row.get("answer_label") or None, score_name=name,
                          value=_flag(row["correct"]),
                          explanation=_explain(row, "status", "error"),
                          metadata={"measure": name, **_meta(row, ("text",))},
                          reply=row.get("text", "")))  # fmt: skip
    keys = ("accuracy", "ci_low", "ci_high", "ci_low_clustered", "ci_high_clustered", "n",
            "correct", "failed", "unparseable")  # fmt: skip
    measures = [Measure(k, _numbers(results[k], keys)) for k in ("mcq", "aia", "mia")
                if isinstance(results.get(k), dict) and results[k].get("n")]  # fmt: skip
    return items, measures


#: QG-SMS methods whose judgement rests on the simulated students (Step 2, tagged ``simulate:``)
_SIMULATING = ("qg-sms", "direct")


def _qgsms(path: Path, results: dict[str, Any]) -> tuple[list[Item], list[Measure]]:
    cols = ("method", "pair_id", "order", "a", "b", "better", "verdict", "correct", "status")
    _checked(path / "judgements.csv", "qgsms")
    df = _table(path / "judgements.csv", cols)
    items = []
    for row in df.to_dict("records"):
        tag = f"{row['method']}:{row['pair_id']}:{row['order']}"
        shared: tuple[str, ...] = (
            f"simulate:{row['pair_id']}",
            f"simulate:{row['pair_id']}:{row['order']}",
        )
        shared = shared if row["method"] in _SIMULATING else ()
        scored = row["status"] != "n/a"  # a judgement the method cannot make by design
        items.append(Item(id=tag, tags=(*shared, tag),
                          target="a" if row["better"] == row["a"] else "b",
                          answer=row["verdict"] or None,
                          score_name=row["method"] if scored else None,
                          value=_flag(row["correct"]) if scored else None,
                          explanation=_explain(row, "status", "step", "error"),
                          metadata=_meta(row)))  # fmt: skip
    measures = []
    accuracy = results.get("accuracy") or {}
    seen = {m: i for i, m in enumerate(dict.fromkeys(df["method"]))}
    for method in sorted(accuracy, key=lambda m: seen.get(m, len(seen))):
        dims = accuracy[method]
        metrics: dict[str, float] = {}
        for dim, got in sorted(dims.items(), key=lambda kv: (kv[0] != "all", kv[0])):
            suffix = "" if dim == "all" else f"_{dim}"
            metrics.update({f"{k}{suffix}": v for k, v in _numbers(got, ("AA", "CA")).items()})
        measures.append(Measure(method, metrics))
    return items, measures


def _tutor(path: Path, results: dict[str, Any]) -> tuple[list[Item], list[Measure]]:
    _checked(path / "replies.csv", "tutor")
    df = _table(path / "replies.csv", ("dialogue", "turn", "real_reply", "ai_reply", "status"))
    items = []
    for row in df.to_dict("records"):
        tag = f"{row['dialogue']}:{row['turn']}"
        scored = row["status"] in ("ok", "degenerate") and row.get("f1", "") != ""
        items.append(Item(id=tag, tags=(tag,), target=row["real_reply"],
                          answer=row["ai_reply"] or None, score_name="f1" if scored else None,
                          value=float(row["f1"]) if scored else None,
                          explanation=_explain(row, "status", "degenerate", "error"),
                          metadata=_meta(row, ("context_turns",)),
                          reply=row["ai_reply"]))  # fmt: skip
    keys = ("mean_f1", "mean_ai_perplexity", "n_targets", "n_ok", "n_degenerate", "n_failed",
            "n_empty")  # fmt: skip
    metrics = _numbers(results, keys)
    if "mean_f1" in metrics:
        metrics = {"mean": metrics.pop("mean_f1"), **metrics}
    return items, [Measure("f1", metrics)]


_READERS: dict[str, Callable[[Path, dict[str, Any]], tuple[list[Item], list[Measure]]]] = {
    "malalgo": _malalgo,
    "qgsms": _qgsms,
    "tutor": _tutor,
}
_DATASET_INPUT = {"malalgo": "questions", "qgsms": "pairs", "tutor": "dialogues"}


def _checked_config(path: Path) -> dict[str, Any]:
    """``config.json`` of a finished run of an exportable command, or one line why not."""
    if not path.is_dir():
        raise InputError(f"{path} is not a directory (give a run folder)")
    if not (path / "config.json").is_file():
        raise InputError(f"{path} is not a run folder (no config.json)")
    config = _json(path / "config.json")
    command = config.get("command")
    if command not in EXPORTABLE:
        known = ", ".join(f"'{c}'" for c in EXPORTABLE)
        raise InputError(f"{path} holds the results of '{command}'; only LLM runs can be "
                         f"exported ({known})")  # fmt: skip
    status = config.get("status")
    if status != "complete" or not (path / "results.json").is_file():
        raise InputError(f"{path}: the '{command}' run is not complete (status '{status}'); "
                         "only finished runs can be exported")  # fmt: skip
    started = config.get("started")
    if not isinstance(started, str) or not started.strip():
        raise InputError("config.json has no 'started' time (every run records it): not a run "
                         "folder as edueval wrote it", file=path / "config.json")  # fmt: skip
    return config


def read_llm_run(run_dir: str | Path) -> LLMRun:
    """Read a finished LLM run folder (``malalgo run``, ``qgsms run``, ``tutor reply``).

    Raises :class:`~edueval.io.InputError` (one line) for a folder that is not a run, holds
    another command's run, or whose run did not finish with status ``complete``."""
    path = Path(run_dir)
    config = _checked_config(path)
    protocol = EXPORTABLE[config["command"]]
    results = _json(path / "results.json")
    items, measures = _READERS[protocol](path, results)
    if not items:
        raise InputError(f"{path}: the run has no items to export")
    inputs = config.get("inputs") or {}
    given = (inputs.get(_DATASET_INPUT[protocol]) or {}).get("path")
    return LLMRun(path=path, command=config["command"], protocol=protocol, config=config,
                  results=results, items=items, measures=measures,
                  calls=_calls(path / "calls.jsonl"),
                  dataset=Path(given) if given else None)  # fmt: skip
