"""``tutor reply`` as a function writing a run directory (``tutor make-study`` is in :mod:`.study`).

Persona: the system message is the paper's description of a good teacher by default
(:mod:`.personas`).

Context budget: the preceding dialogue is cut to ``budget`` tokens, counted as whitespace-separated
words (no tokenizer is assumed: backends differ, and for English classroom talk one word is roughly
1.3 model tokens, so a budget of N words is about 1.3 N tokens).  Whole turns are dropped from the
*start* of the dialogue until the rest fits; the student turn being answered is always kept (its own
last ``budget`` words if it alone is too long).

Perplexity: the reply table reports the perplexity of the *AI reply* from the generated tokens'
log-probabilities where the backend returns them (the local model and most OpenAI-compatible
servers do).  The perplexity of the *real* teacher reply under the model would need the
log-probabilities of tokens the model is given rather than generates (prompt "echo"), which the
chat-completions protocol behind every backend does not return; it is therefore not reported
(``real_perplexity`` is not a column) rather than approximated.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from ..io import InputError
from ..model_runs import finish_model_run
from ..models import ChatRequest
from ..models.budget import DEFAULT_MAX_FAILURES, MaxFailures
from ..models.evaluate import evaluate_requests
from ..report import Report
from ..runs import RunDir
from .dialogues import Target, read_dialogues, reply_targets
from .metrics import perplexity, unigram_f1
from .personas import DEFAULT_PERSONA, resolve_persona
from .quality import degenerate_reason

__all__ = ["DEFAULT_PERSONA", "truncate_context", "build_messages", "reply_run"]


def truncate_context(
    context: tuple[tuple[str, str], ...] | list[tuple[str, str]], budget: int
) -> tuple[list[tuple[str, str]], int]:
    """Keep the last turns whose word count fits ``budget``; returns (turns, turns dropped)."""
    if budget < 1:
        raise InputError("--budget must be at least 1")
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


def _transcript(turns: list[tuple[str, str]]) -> str:
    """``Speaker: text`` lines for people to read; a turn's own line breaks stay in it (the exact
    turns are in the ``context_turns`` column)."""
    return "\n".join(f"{s.capitalize()}: {t}" for s, t in turns)


def _nonempty(result) -> str | None:
    """The reply's text, or ``None`` for an empty one (the one reply that cannot be read as a
    teacher's turn)."""
    return result.text.strip() or None


def _reply_rows(targets, cut, results, model_name: str) -> list[dict]:
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


def reply_run(
    out: Path,
    dialogues_path: Path,
    *,
    open_model: Callable,
    model_name: str,
    budget: int = 200,
    persona: str | None = None,
    max_tokens: int = 80,
    logprobs: bool = True,
    limit: int | None = None,
    seed: int = 0,
    max_failures: MaxFailures = DEFAULT_MAX_FAILURES,
    log: Callable[[str], None] | None = None,
) -> dict:
    """Generate one AI teacher reply per target and score it against the real reply.

    ``persona``: a built-in persona's name (``paper``, the default, or ``uptake``: see
    :mod:`edueval.tutor.personas`) or the instruction text itself.
    ``open_model(log_path)`` returns a :class:`~edueval.models.ModelClient` context manager.
    Failed calls are kept as rows with ``status`` ``failed`` and the error, and count in
    ``n_failed``; empty replies (the one reply that cannot be read as a teacher's turn) get
    ``empty`` and count in ``n_empty``; the F1 of both is empty (not zero) so that averages are
    over real replies only.  Failed calls and empty replies share the ``max_failures`` budget."""
    persona_name, persona = resolve_persona(persona)
    dialogues = read_dialogues(dialogues_path)
    targets: list[Target] = reply_targets(dialogues)
    if limit is not None:
        if limit < 1:
            raise InputError("--limit must be at least 1")
        targets = targets[:limit]
    if not targets:
        raise InputError("no student turn followed by a teacher reply", file=dialogues_path)
    if max_tokens < 1:
        raise InputError("--max-tokens must be at least 1")
    params = {"model": model_name, "budget": budget, "budget_unit": "words",
              "persona": persona_name, "persona_text": persona, "max_tokens": max_tokens,
              "logprobs": logprobs, "limit": limit, "n_targets": len(targets)}  # fmt: skip
    run = RunDir(out, command="tutor reply", params=params, seed=seed,
                 inputs={"dialogues": dialogues_path})  # fmt: skip
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
    t0 = time.perf_counter()
    outcome = evaluate_requests(
        open_model,
        requests,
        parse=_nonempty,  # an empty reply: counted against --max-failures
        max_failures=max_failures,
        log_path=run.path / "calls.jsonl",
        progress="tutor reply",
    )
    results, stats, seconds = outcome.results, outcome.stats, time.perf_counter() - t0
    rows = _reply_rows(targets, cut, results, model_name)
    table = pd.DataFrame(rows)
    run.table("replies", table)
    ok = table["status"].isin(["ok", "degenerate"])  # real replies, looping ones included
    f1 = table.loc[ok, "f1"]
    ppl = table.loc[ok, "ai_perplexity"].dropna()
    results_json = {
        "n_targets": len(table),
        "n_ok": int((table["status"] == "ok").sum()),
        "n_failed": int((table["status"] == "failed").sum()),
        "n_empty": int((table["status"] == "empty").sum()),
        "n_degenerate": int((table["status"] == "degenerate").sum()),
        "mean_f1": float(f1.mean()) if len(f1) else None,
        "mean_ai_perplexity": float(ppl.mean()) if len(ppl) else None,
        "n_with_logprobs": int(len(ppl)),
        "real_reply_perplexity": "not available: chat-completions backends do not return "
        "log-probabilities of given (prompt) tokens",
        "seconds": seconds,
        "model_calls": stats.as_dict(),
        **params,
    }
    rep = Report("AI teacher replies", f"{dialogues_path}, model {model_name}, budget {budget} "
                 f"words, seed {seed}")  # fmt: skip
    summary = pd.DataFrame([{k: results_json[k] for k in ("n_targets", "n_ok", "n_degenerate", "n_failed",
                            "n_empty", "mean_f1", "mean_ai_perplexity")}])  # fmt: skip
    rep.section("Summary").table(summary).text(
        "F1: unigram overlap with the real teacher reply. Perplexity: of the AI reply's own tokens "
        "(where the backend returns log-probabilities); the real reply's perplexity is not "
        "available from chat-completions backends.",
        stats.summary(),
    )
    rep.section("First replies").table(
        table[["dialogue", "student", "real_reply", "ai_reply", "status", "f1"]].head(20)
    )
    if log:
        log(stats.summary())
    return finish_model_run(run, results_json, rep, outcome.budget)
