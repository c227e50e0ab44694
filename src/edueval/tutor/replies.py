"""AI teacher replies in memory: dialogues and a model in, a results object out.

::

    from edueval.tutor import reply

    res = reply("dialogues.jsonl", "local")     # or a list of dialogue dicts, a DataFrame
    print(res.summary())                        # replies, failed calls, mean unigram F1
    res.mean_f1, res.n_failed, res.replies      # one row per student turn replied to

No output folder, no file written, nothing printed.  The rows and numbers are those of
``tutor reply`` on the same dialogues and options (its ``replies.csv`` and ``results.json``):
both cut the context (:func:`truncate_context`), build the messages (:func:`build_messages`,
:func:`build_requests`), ask through :func:`edueval.models.evaluate.evaluate_requests` and score
with :func:`reply_rows` and :func:`reply_counts`.  The context budget, personas and perplexity
are described in :mod:`edueval.tutor.pipeline`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..io import InputError
from ..models.budget import (
    DEFAULT_MAX_FAILURES,
    BudgetDecision,
    FailureBudgetExceeded,
    MaxFailures,
    as_max_failures,
)
from ..models.evaluate import EvalOutcome, evaluate_requests, model_label
from ..models.types import ChatRequest, ModelStats
from ..results import RunResults
from .dialogues import Target, as_dialogues, reply_targets
from .metrics import perplexity, unigram_f1
from .personas import resolve_persona
from .quality import degenerate_reason

__all__ = [
    "TutorReplies",
    "ask_targets",
    "build_messages",
    "build_requests",
    "reply",
    "reply_counts",
    "reply_rows",
    "select_targets",
    "truncate_context",
]


def truncate_context(
    context: tuple[tuple[str, str], ...] | list[tuple[str, str]], budget: int
) -> tuple[list[tuple[str, str]], int]:
    """Keep the last turns whose word count fits ``budget``; returns (turns, turns dropped)."""
    if budget < 1:
        raise InputError("budget= must be at least 1")
    kept: list[tuple[str, str]] = []
    used = 0
    for speaker, text in reversed(list(context)):
        n = len(text.split())
        if used + n > budget:
            if not kept:  # the turn being answered is always kept, cut to its last words
                kept.append((speaker, " ".join(text.split()[-budget:])))
            break
        kept.append((speaker, text))
        used += n
    kept.reverse()
    return kept, len(context) - len(kept)


def build_messages(turns: list[tuple[str, str]], persona: str) -> list[dict[str, str]]:
    """Chat messages: the persona as system message, student turns as ``user`` and teacher turns as
    ``assistant`` (consecutive turns of one speaker joined), ending with the student."""
    msgs: list[dict[str, str]] = [{"role": "system", "content": persona}]
    for speaker, text in turns:
        role = "user" if speaker == "student" else "assistant"
        if len(msgs) > 1 and msgs[-1]["role"] == role:
            msgs[-1]["content"] += "\n" + text
        else:
            msgs.append({"role": role, "content": text})
    return msgs


def build_requests(
    targets: list[Target],
    *,
    budget: int,
    persona: str,
    max_tokens: int,
    logprobs: bool,
    seed: int,
) -> tuple[list[ChatRequest], list[tuple[list[tuple[str, str]], int]]]:
    """One request per target (its context cut to ``budget`` words), and the cut contexts."""
    requests, cut = [], []
    for t in targets:
        turns, dropped = truncate_context(t.context, budget)
        cut.append((turns, dropped))
        requests.append(
            ChatRequest(
                messages=tuple(build_messages(turns, persona)),
                max_tokens=max_tokens,
                temperature=0.0,
                top_logprobs=0 if logprobs else None,
                seed=seed,
                tag=f"{t.dialogue}:{t.turn}",
            )
        )
    return requests, cut  # fmt: skip


def _transcript(turns: list[tuple[str, str]]) -> str:
    """``Speaker: text`` lines for people to read; a turn's own line breaks stay in it (the exact
    turns are in the ``context_turns`` column)."""
    return "\n".join(f"{s.capitalize()}: {t}" for s, t in turns)


def _nonempty(result) -> str | None:
    """The reply's text, or ``None`` for an empty one (the one reply that cannot be read as a
    teacher's turn)."""
    return result.text.strip() or None


def ask_targets(
    model: Any,
    requests: list[ChatRequest],
    *,
    max_failures: MaxFailures = DEFAULT_MAX_FAILURES,
    log_path: str | Path | None = None,
    progress: str | None = None,
) -> EvalOutcome:
    """Every request asked through the shared loop; an empty reply counts against
    ``max_failures``."""
    return evaluate_requests(model, requests, parse=_nonempty, max_failures=max_failures,
                             log_path=log_path, progress=progress)  # fmt: skip


def reply_rows(targets, cut, results, model_name: str | None) -> list[dict]:
    """One row per target: the AI reply, how it was read (``ok``, ``degenerate``, ``empty``,
    ``failed``) and its scores."""
    rows = []
    for t, (turns, dropped), res in zip(targets, cut, results, strict=True):
        ai = res.text.strip() if res.ok else ""
        ok = res.ok and bool(ai)
        flag = degenerate_reason(ai) if ok else None
        ppl = perplexity([lp.logprob for lp in res.logprobs]) if ok and res.logprobs else math.nan
        rows.append(
            {
                "dialogue": t.dialogue,
                "turn": t.turn,
                "model": model_name,
                "context": _transcript(list(t.context)),
                "context_turns": json.dumps([list(x) for x in t.context], ensure_ascii=False),
                "student": t.context[-1][1],
                "real_reply": t.real_reply,
                "ai_reply": ai,
                "status": ("degenerate" if flag else "ok")
                if ok
                else ("empty" if res.ok else "failed"),
                "degenerate": flag,
                "error": res.error if not res.ok else None,
                "f1": unigram_f1(ai, t.real_reply) if ok else math.nan,
                "ai_perplexity": ppl,
                "context_words": sum(len(x.split()) for _, x in turns),
                "turns_dropped": dropped,
                "latency_s": res.latency_s,
                "cached": res.cached,
                **{f"meta_{k}": v for k, v in t.meta.items()},
            }
        )
    return rows


def reply_counts(table: pd.DataFrame) -> dict[str, Any]:
    """The counts and means of ``tutor reply``'s ``results.json``: F1 and perplexity averaged
    over real replies (``ok`` and ``degenerate``) only."""
    ok = table["status"].isin(["ok", "degenerate"])  # real replies, looping ones included
    f1 = table.loc[ok, "f1"]
    ppl = table.loc[ok, "ai_perplexity"].dropna()
    return {
        "n_targets": len(table),
        "n_ok": int((table["status"] == "ok").sum()),
        "n_failed": int((table["status"] == "failed").sum()),
        "n_empty": int((table["status"] == "empty").sum()),
        "n_degenerate": int((table["status"] == "degenerate").sum()),
        "mean_f1": float(f1.mean()) if len(f1) else None,
        "mean_ai_perplexity": float(ppl.mean()) if len(ppl) else None,
        "n_with_logprobs": int(len(ppl)),
    }


def select_targets(dialogues: list[dict], limit: int | None, where: Any = None) -> list[Target]:
    """The targets of ``dialogues`` (the first ``limit``); none is an :class:`InputError`."""
    targets = reply_targets(dialogues)
    if limit is not None:
        if limit < 1:
            raise InputError("limit= must be at least 1")
        targets = targets[:limit]
    if not targets:
        raise InputError("no student turn followed by a teacher reply", file=where)
    return targets


#: results.json's note on the real reply's perplexity
REAL_PERPLEXITY_NOTE = ("not available: chat-completions backends do not return "
                        "log-probabilities of given (prompt) tokens")  # fmt: skip


@dataclass
class TutorReplies(RunResults):
    """Results of :func:`reply`.

    ``replies``: one row per target (the ``replies.csv`` of ``tutor reply``: the AI reply, the
    real teacher reply, ``status``, ``f1``, ``ai_perplexity``, ...).  ``mean_f1`` and
    ``mean_ai_perplexity`` average over real replies only (``None`` when there is none); failed
    calls and empty replies count in ``n_failed`` and ``n_empty``.  ``budget``: the failure
    budget's decision; ``stats``: the model calls; ``params``: the options used."""

    replies: pd.DataFrame = field(repr=False)
    n_targets: int
    n_ok: int
    n_failed: int
    n_empty: int
    n_degenerate: int
    mean_f1: float | None
    mean_ai_perplexity: float | None
    n_with_logprobs: int
    budget: BudgetDecision
    stats: ModelStats = field(repr=False)
    seconds: float
    params: dict[str, Any] = field(default_factory=dict)

    _writer = "edueval.tutor.pipeline:save_run"
    #: the command whose run this is (what ``compare`` records as the protocol)
    command = "tutor reply"

    @property
    def complete(self) -> bool:
        """Whether failed calls + empty replies are within ``max_failures``."""
        return self.budget.complete

    def counts(self) -> dict[str, Any]:
        """The counts and means of ``results.json`` (not the timings, the options or the
        failure budget)."""
        keys = ("n_targets", "n_ok", "n_failed", "n_empty", "n_degenerate", "mean_f1",
                "mean_ai_perplexity", "n_with_logprobs")  # fmt: skip
        return {k: getattr(self, k) for k in keys}

    def run_params(self) -> dict[str, Any]:
        """The options as ``tutor reply``'s config.json records them (the seed apart)."""
        return {k: v for k, v in self.params.items() if k != "seed"}

    def headline(self) -> dict[str, Any]:
        """``tutor reply``'s results.json: the counts and means, the note on the real reply's
        perplexity, ``seconds``, ``model_calls``, the options, ``model_failures`` and
        ``complete``."""
        return {**self.counts(), "real_reply_perplexity": REAL_PERPLEXITY_NOTE,
                "seconds": self.seconds, "model_calls": self.stats.as_dict(),
                **self.run_params(), "model_failures": self.budget.as_dict(),
                "complete": self.complete}  # fmt: skip

    def to_frame(self) -> pd.DataFrame:
        """Tidy rows, one per target: ``dialogue, turn, student, real_reply, ai_reply, status,
        f1, ai_perplexity`` (the whole table is :attr:`replies`)."""
        cols = ["dialogue", "turn", "student", "real_reply", "ai_reply", "status", "f1",
                "ai_perplexity"]  # fmt: skip
        return self.replies[cols].copy()

    def summary(self) -> str:
        """A printable table: the counts and the mean F1 and perplexity, then the budget."""
        head = pd.DataFrame([{k: v for k, v in self.counts().items() if k.startswith(("n_",
                             "mean_")) and k != "n_with_logprobs"}])  # fmt: skip
        model = self.params.get("model")
        return "\n".join([
            "AI teacher replies" + (f", model {model}" if model else "")
            + f": {self.n_targets} student turns",
            head.to_string(index=False, float_format=lambda v: f"{v:.4f}", na_rep="-"),
            "F1: unigram overlap with the real teacher reply (ParlAI's); failed calls and empty "
            f"replies are left out of the means ({self.budget.allowed} allowed by max_failures "
            f"{self.budget.max_failures}): {self.budget.status}",
        ])  # fmt: skip


def reply(
    dialogues: str | Path | pd.DataFrame | list[dict],
    model: Any,
    *,
    budget: int = 200,
    persona: str | None = None,
    max_tokens: int = 80,
    logprobs: bool = True,
    limit: int | None = None,
    seed: int = 0,
    max_failures: MaxFailures | str | int | float = DEFAULT_MAX_FAILURES,
    model_name: str | None = None,
) -> TutorReplies:
    """One AI teacher reply per student turn that a teacher answered, scored against the real
    teacher turn (unigram F1; the reply's perplexity where the backend gives log-probabilities).

    ``dialogues``: a dialogues JSONL file, a list of ``{"id", "turns": [{"speaker", "text"}],
    "meta"}`` records or a DataFrame of them (validated as ``tutor reply`` validates its file:
    :class:`~edueval.io.InputError`).  ``model``: a model spec (``"local"``,
    ``"openai/<model>"``), an opener ``open(log_path)`` or an open
    :class:`~edueval.models.ModelClient`.  ``budget`` (context words), ``persona`` (``paper``,
    ``uptake`` or the text), ``max_tokens``, ``logprobs``, ``limit``, ``seed``: as the ``tutor
    reply`` options.  ``max_failures``: a count, a share (``"5%"``) or a
    :class:`~edueval.models.MaxFailures`.  ``model_name``: the replies' ``model`` column (by
    default the model spec; ``None`` for an opener or a client).

    Failed calls and empty replies are kept as rows (F1 empty) and counted.  When together they
    are past ``max_failures``, raises :class:`~edueval.models.FailureBudgetExceeded` (a
    ``RuntimeError`` naming the counts; its ``.result`` is this object, ``complete`` False) --
    as ``tutor reply`` marks its run failed.  Nothing is written or printed."""
    limit_ = as_max_failures(max_failures)
    persona_name, persona_text = resolve_persona(persona)
    read = as_dialogues(dialogues)
    targets = select_targets(read, limit, None if not isinstance(dialogues, str | Path)
                             else dialogues)  # fmt: skip
    if max_tokens < 1:
        raise InputError("max_tokens= must be at least 1")
    requests, cut = build_requests(targets, budget=budget, persona=persona_text,
                                   max_tokens=max_tokens, logprobs=logprobs, seed=seed)  # fmt: skip
    outcome = ask_targets(model, requests, max_failures=limit_)
    name = model_name if model_name is not None else model_label(model)
    params = reply_params(name, budget=budget, persona=persona_name, persona_text=persona_text,
                          max_tokens=max_tokens, logprobs=logprobs, limit=limit,
                          n_targets=len(targets), max_failures=str(limit_), seed=seed)  # fmt: skip
    result = replies_from(targets, cut, outcome, params)
    if not result.complete:
        raise FailureBudgetExceeded(outcome.budget, result)
    return result


def reply_params(model: str | None, **options: Any) -> dict[str, Any]:
    """The options of a reply run as ``tutor reply`` records them (``budget_unit`` added)."""
    out = {"model": model, "budget": options.pop("budget"), "budget_unit": "words"}
    return {**out, **options}


def replies_from(
    targets: list[Target], cut: Any, outcome: EvalOutcome, params: dict[str, Any]
) -> TutorReplies:
    """The results object of the replies in ``outcome`` (``reply`` and ``tutor reply``)."""
    table = pd.DataFrame(reply_rows(targets, cut, outcome.results, params["model"]))
    return TutorReplies(replies=table, **reply_counts(table), budget=outcome.budget,
                        stats=outcome.stats, seconds=outcome.seconds, params=params)  # fmt: skip
