"""``tutor make-study``: a comparative-judgement study from real and AI teacher replies.

Each target of the ``tutor reply`` tables (a student turn and the real teacher's reply to it) is
one candidate item; its candidates are the real teacher (agent ``teacher``) and each model's reply
(agent = the ``model`` column).  As in the AI Teacher Test (Tack & Piech, 2022, Section 3.3), not
every turn becomes an item.  A turn is left out, for the first of these reasons that applies
(the order is fixed so that every turn has one reason, and the counts add up):

``short_reply``
    the real teacher's reply has fewer than ``min_words`` normalised words (the paper's
    single-word replies; like the paper, only the real reply is held to this);
``not_eliciting``
    the real reply does not elicit or scaffold by :func:`edueval.tutor.selection.eliciting_cue`
    (``select="eliciting"``, the default), or the user's label column says no
    (``select_column``); ``select="all"`` keeps every turn here;
``missing_reply``
    some model has no usable reply (its call failed or returned nothing);
``degenerate_reply``
    some model's reply loops (:mod:`edueval.tutor.quality`), unless ``keep_degenerate``.

Raters see the dialogue context cut as the paper's: the most recent whole turns within
``context_tokens`` tokens (:func:`edueval.tutor.selection.rater_context`).  The context comes
from the replies table's ``context_turns`` column (the turns as JSON, exact); tables written
before it existed are read from the ``context`` transcript, where only a line starting with
``Teacher:`` or ``Student:`` opens a turn, so a line break inside a turn stays inside it.

The study folder is a run directory: ``study.yaml`` and ``items.jsonl`` (what ``study serve``
reads), ``selection.csv`` (every turn, whether it is in the study, and why not),
``results.json`` (the counts per reason), ``config.json`` and ``report.html``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import yaml

from ..io import InputError, line_of, load_json, numeric_column, read_table
from ..report import Report
from ..runs import RunDir
from ..tables import Col, Schema
from .selection import CONTEXT_TOKENS, MIN_WORDS, eliciting_cue, parse_transcript, rater_context
from .selection import too_short as _too_short

__all__ = ["DEFAULT_QUESTIONS", "REASONS", "REPLIES_SCHEMA", "make_study"]

DEFAULT_QUESTIONS = [
    {"id": "speak like a teacher", "text": "Which reply is more likely to have been said by a teacher?"},
    {"id": "understand the student", "text": "Which reply shows more understanding of the student?"},
    {"id": "help the student", "text": "Which reply helps the student more?"},
]  # fmt: skip

#: why a turn is not an item, in the order the reasons are checked
REASONS = ("short_reply", "not_eliciting", "missing_reply", "degenerate_reply")
_COLUMNS = ["dialogue", "turn", "model", "context", "real_reply", "ai_reply", "status"]

#: A ``replies.csv`` of ``tutor reply``: ``dialogue`` and ``model`` (the study's agent) taken
#: exactly as written, ``turn`` a whole number >= 1 (the index of the real teacher reply, after
#: the student turn it answers; with ``dialogue`` it makes the item id ``dialogue:turn``),
#: one row per (dialogue, turn), one model per file.  Open: the scores beside them (``ignored``)
#: and ``meta_*`` columns are kept (``--select-column`` reads them), but a near miss of a missing
#: column is refused.
REPLIES_SCHEMA = Schema(
    "tutor replies table",
    (Col("dialogue", "id"), Col("turn", "integer", low=1), Col("model", "id"),
     *(Col(c) for c in _COLUMNS[3:]), Col("context_turns", required=False)),
    key=("dialogue", "turn"),
    ignored=("student", "degenerate", "error", "f1", "ai_perplexity", "context_words",
             "turns_dropped", "latency_s", "cached"),
)  # fmt: skip
_TRUE, _FALSE = {"1", "1.0", "true", "yes", "y", "t"}, {"0", "0.0", "false", "no", "n", "f"}


def read_replies_table(path: str | Path) -> pd.DataFrame:
    """A ``tutor reply`` run's ``replies.csv`` read back (``compare``, ``export inspect``):
    checked by :data:`REPLIES_SCHEMA` (ids as written, ``turn`` a whole number, one row per
    dialogue and turn), and ``f1`` a number in [0, 1] wherever it is not empty (a failed call
    has none)."""
    df = read_table(path, text_columns=[*_COLUMNS, "context_turns"])
    REPLIES_SCHEMA.validate(df)
    if "f1" in df.columns:
        present = ~(df["f1"].isna() | (df["f1"].astype("string").str.strip() == "")).fillna(True)
        present_rows = df[present.to_numpy(dtype=bool)]
        if len(present_rows):
            numeric_column(present_rows, "f1", low=0, high=1)
    return df


def _read_replies(paths: list[Path]) -> tuple[list[pd.DataFrame], list[str]]:
    if not paths:
        raise InputError("give at least one replies.csv")
    tables = []
    for p in paths:
        df = read_table(p, text_columns=[*_COLUMNS, "context_turns"])
        REPLIES_SCHEMA.validate(df)
        models = pd.unique(df["model"].to_numpy())
        if len(models) > 1:
            pos = int((df["model"] != models[0]).to_numpy().argmax())
            raise InputError(f"a replies table holds one model's replies; this one has "
                             f"{models[0]!r} and {models[1]!r}", file=p, line=line_of(df, pos),
                             column="model")  # fmt: skip
        tables.append(df)
    agents = [str(t["model"].iloc[0]) for t in tables]
    if len(set(agents)) != len(agents) or "teacher" in agents:
        raise InputError(f"each replies file must come from a different model (not 'teacher'); "
                         f"got {agents}")  # fmt: skip
    return tables, agents


def _label(df: pd.DataFrame, column: str, pos: int) -> bool:
    """The user's selection label of row ``pos``: 1/0, true/false, yes/no (any case)."""
    raw = df[column].iloc[pos]
    value = "" if pd.isna(raw) else str(raw).strip().lower()
    if value in _TRUE or value in _FALSE:
        return value in _TRUE
    raise InputError(f"expected 1/0, true/false or yes/no, got {raw!r}",
                     file=df.attrs.get("file"), line=line_of(df, pos), column=column)  # fmt: skip


def _label_column(tables: list[pd.DataFrame], column: str) -> str:
    """``column`` as given, or ``meta_<column>`` (dialogue meta keys get that prefix)."""
    for name in (column, f"meta_{column}"):
        if all(name in t.columns for t in tables):
            return name
    raise InputError(f"select_column= {column!r}: no such column (nor meta_{column}) in every "
                     f"replies table", file=tables[0].attrs.get("file"))  # fmt: skip


def _context(df: pd.DataFrame, pos: int) -> list[tuple[str, str]]:
    raw = df["context_turns"].iloc[pos] if "context_turns" in df.columns else None
    if raw is None or pd.isna(raw) or not str(raw).strip():
        return parse_transcript(str(df["context"].iloc[pos]))
    # load_json: a lone surrogate or an over-long number is refused with this line
    turns = load_json(str(raw), file=df.attrs.get("file"), line=line_of(df, pos) or 1)
    try:
        if not isinstance(turns, list) or not all(
            isinstance(t, list) and len(t) == 2 for t in turns
        ):
            raise ValueError
        return [(str(s), str(x)) for s, x in turns]
    except (ValueError, TypeError, RecursionError):
        raise InputError("expected a JSON list of [speaker, text] pairs",
                         file=df.attrs.get("file"), line=line_of(df, pos), column="context_turns") from None  # fmt: skip


def _collect(tables: list[pd.DataFrame], agents: list[str], label_col: str | None) -> dict:
    """Per target (dialogue, turn), in first-seen order: context, real reply, each model's usable
    reply, which models failed or looped, and the user's label."""
    targets: dict[tuple[str, str], dict] = {}
    for agent, df in zip(agents, tables, strict=True):
        for pos, r in enumerate(df.itertuples(index=False)):
            key = (str(r.dialogue), str(r.turn))
            if key not in targets:
                targets[key] = {"context": _context(df, pos), "real": str(r.real_reply),
                                "replies": {}, "degenerate": set(), "labels": []}  # fmt: skip
            entry = targets[key]
            text = r.ai_reply.strip() if isinstance(r.ai_reply, str) else ""
            if str(r.status) in ("ok", "degenerate") and text:
                entry["replies"][agent] = text
                if str(r.status) == "degenerate":
                    entry["degenerate"].add(agent)
            if label_col is not None:
                entry["labels"].append(_label(df, label_col, pos))
    if label_col is not None:
        for key, entry in targets.items():
            if len(set(entry["labels"])) > 1:
                raise InputError(f"select_column= {label_col!r}: the replies tables disagree "
                                 f"on turn {key[1]} of dialogue {key[0]!r}")  # fmt: skip
    return targets


def _reason(entry: dict, agents: list[str], *, select: str, min_words: int,
            keep_degenerate: bool) -> tuple[str | None, str | None]:  # fmt: skip
    """(reason the turn is left out or None, the eliciting cue) -- the order of :data:`REASONS`."""
    cue = eliciting_cue(entry["real"])
    if _too_short(entry["real"], min_words):
        return "short_reply", cue
    if select == "eliciting" and cue is None:
        return "not_eliciting", cue
    if select == "column" and not entry["labels"][0]:
        return "not_eliciting", cue
    if any(a not in entry["replies"] for a in agents):
        return "missing_reply", cue
    if entry["degenerate"] and not keep_degenerate:
        return "degenerate_reply", cue
    return None, cue


def _select(targets: dict, agents: list[str], *, select: str, min_words: int,
            keep_degenerate: bool, context_tokens: int, limit: int | None) -> tuple[list, pd.DataFrame]:  # fmt: skip
    """The study items and the per-turn selection table."""
    items: list[dict] = []
    rows: list[dict] = []
    for (dialogue, turn), entry in targets.items():
        reason, cue = _reason(entry, agents, select=select, min_words=min_words,
                              keep_degenerate=keep_degenerate)  # fmt: skip
        shown, dropped = rater_context(entry["context"], context_tokens)
        in_study = reason is None and (limit is None or len(items) < limit)
        if in_study:
            replies = {"teacher": entry["real"].strip(), **{a: entry["replies"][a] for a in agents}}
            items.append({"id": f"{dialogue}:{turn}", "replies": replies,
                          "context": [{"speaker": s, "text": t} for s, t in shown]})  # fmt: skip
        rows.append({"item": f"{dialogue}:{turn}", "dialogue": dialogue, "turn": turn,
                     "real_reply": entry["real"], "eliciting_cue": cue,
                     "label": entry["labels"][0] if entry["labels"] else None,
                     "selected": reason is None, "reason": reason, "in_study": in_study,
                     "context_turns_shown": len(shown), "context_turns_dropped": dropped,
                     "degenerate_models": ",".join(sorted(entry["degenerate"]))})  # fmt: skip
    return items, pd.DataFrame(rows)


def _study_yaml(title: str, n_shown: int, seed: int) -> str:
    practice = {
        "id": "practice",
        "context": [{"speaker": "student", "text": "I think 3 times 4 is 7."}],
        "replies": {"a": "Not quite. What does 3 times 4 mean? Can you show it with groups?",
                    "b": "Okay, next question."},
    }  # fmt: skip
    study = {
        "title": title,
        "kind": "comparative",
        "items": "items.jsonl",
        "items_per_participant": int(n_shown),
        "seed": int(seed),
        "questions": DEFAULT_QUESTIONS,
        "consent": "This is a research study on teacher replies. Your answers are stored without "
        "your name and used only for research. You may stop at any time.",
        "practice": practice,
    }
    return yaml.safe_dump(study, sort_keys=False, allow_unicode=True)


def make_study(
    out: Path,
    replies_paths: list[Path],
    *,
    items_per_participant: int = 10,
    limit: int | None = None,
    seed: int = 0,
    title: str = "Which reply is better?",
    keep_degenerate: bool = False,
    select: str = "eliciting",
    select_column: str | None = None,
    min_words: int = MIN_WORDS,
    context_tokens: int = CONTEXT_TOKENS,
) -> dict:
    """Build a comparative-judgement study folder from ``tutor reply`` tables (module docstring).

    ``select``: ``eliciting`` (the heuristic of :mod:`edueval.tutor.selection`) or ``all``;
    ``select_column`` (a column of the replies tables, or a dialogue meta key, holding 1/0,
    true/false or yes/no) replaces the heuristic.  ``min_words``: real replies with fewer
    normalised words are left out (1 keeps all but empty ones).  ``context_tokens``: the raters'
    context budget.  ``limit``: at most this many items, the first selected in table order.
    Returns the counts written to ``results.json``."""
    if select not in ("eliciting", "all"):
        raise InputError(f"select=: expected eliciting or all, got {select!r}")
    if min_words < 1 or (limit is not None and limit < 1) or items_per_participant < 1:
        raise InputError("min_words=, limit= and items_per_participant= must be at least 1")
    if context_tokens < 1:
        raise InputError("context_tokens= must be at least 1")
    tables, agents = _read_replies(replies_paths)
    label_col = _label_column(tables, select_column) if select_column else None
    mode = "column" if label_col else select
    targets = _collect(tables, agents, label_col)
    items, selection = _select(targets, agents, select=mode, min_words=min_words,
                               keep_degenerate=keep_degenerate, context_tokens=context_tokens,
                               limit=limit)  # fmt: skip
    if not items:
        raise InputError(f"no turn passes the selection ({_counts_line(selection)})")
    n_pairs = len(agents) * (len(agents) + 1) // 2
    n_shown = min(items_per_participant, len(items) * n_pairs)
    params = {"select": mode, "select_column": label_col, "min_words": min_words,
              "context_tokens": context_tokens, "context_token_unit": "ParlAI re tokens",
              "keep_degenerate": keep_degenerate, "limit": limit,
              "items_per_participant": items_per_participant, "title": title}  # fmt: skip
    run = RunDir(out, command="tutor make-study", params=params, seed=seed,
                 inputs={f"replies_{a}": p for a, p in zip(agents, replies_paths, strict=True)})  # fmt: skip
    run.text("items.jsonl", "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items))
    run.text("study.yaml", _study_yaml(title, n_shown, seed))
    run.table("selection", selection)
    excluded = selection["reason"].value_counts()
    results = {
        "n_items": len(items),
        "n_turns": len(selection),
        "n_selected": int(selection["selected"].sum()),
        "n_skipped": int((~selection["selected"]).sum()),
        "excluded": {r: int(excluded.get(r, 0)) for r in REASONS},
        "eliciting_cues": {str(k): int(v) for k, v in
                           selection["eliciting_cue"].fillna("none").value_counts().items()},
        "n_degenerate": int(sum(len(e["degenerate"]) for e in targets.values())),
        "degenerate_kept": keep_degenerate,
        "agents": ["teacher", *agents],
        "n_pairs_per_item": n_pairs,
        "items_per_participant": n_shown,
        "seed": int(seed),
        **{k: v for k, v in params.items() if k not in ("keep_degenerate", "title",
                                                        "items_per_participant")},
    }  # fmt: skip
    run.finish(results, _report(results, selection).render())
    return results


def _counts_line(selection: pd.DataFrame) -> str:
    counts = selection["reason"].value_counts()
    return (
        ", ".join(f"{r} {int(counts.get(r, 0))}" for r in REASONS) + f" of {len(selection)} turns"
    )


def _report(results: dict, selection: pd.DataFrame) -> Report:
    rep = Report("Comparative-judgement study: item selection",
                 f"{results['n_items']} items from {results['n_turns']} teacher turns; agents "
                 f"{', '.join(results['agents'])}")  # fmt: skip
    counts = pd.DataFrame([{"turns": results["n_turns"], "selected": results["n_selected"],
                            "in study": results["n_items"], **results["excluded"]}])  # fmt: skip
    rep.section("Selection").table(counts).text(
        f"A turn is left out for the first reason that applies: the real reply has fewer than "
        f"{results['min_words']} normalised words (short_reply); it does not elicit or scaffold "
        f"(not_eliciting; selection: {results['select']}); a model has no reply (missing_reply); "
        f"a model's reply loops (degenerate_reply). Raters see the most recent whole turns within "
        f"{results['context_tokens']} tokens. See edueval.tutor.selection for the rule."
    )
    rep.section("Turns").table(
        selection[["item", "real_reply", "eliciting_cue", "reason", "in_study"]].head(30)
    )
    return rep
