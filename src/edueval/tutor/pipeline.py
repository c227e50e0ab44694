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

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from ..io import InputError
from ..model_runs import finish_model_run
from ..models.budget import DEFAULT_MAX_FAILURES, MaxFailures
from ..report import Report
from ..runs import RunDir, saved_run
from .dialogues import Target, read_dialogues
from .personas import DEFAULT_PERSONA, resolve_persona
from .replies import (
    TutorReplies,
    ask_targets,
    build_messages,
    build_requests,
    replies_from,
    reply_params,
    select_targets,
    truncate_context,
)

__all__ = [
    "DEFAULT_PERSONA",
    "truncate_context",
    "build_messages",
    "reply_run",
    "save_run",
    "write_run",
]


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
    targets: list[Target] = select_targets(dialogues, limit, dialogues_path)
    if max_tokens < 1:
        raise InputError("max_tokens= must be at least 1")
    params = reply_params(model_name, budget=budget, persona=persona_name, persona_text=persona,
                          max_tokens=max_tokens, logprobs=logprobs, limit=limit,
                          n_targets=len(targets), max_failures=str(max_failures),
                          seed=seed)  # fmt: skip
    run = RunDir(out, command="tutor reply", params={k: v for k, v in params.items() if k != "seed"},
                 seed=seed, inputs={"dialogues": dialogues_path})  # fmt: skip
    requests, cut = build_requests(targets, budget=budget, persona=persona,
                                   max_tokens=max_tokens, logprobs=logprobs, seed=seed)  # fmt: skip
    # an empty reply: counted against --max-failures
    outcome = ask_targets(open_model, requests, max_failures=max_failures,
                          log_path=run.path / "calls.jsonl", progress="tutor reply")  # fmt: skip
    res = replies_from(targets, cut, outcome, params)
    if log:
        log(res.stats.summary())
    return write_run(run, res, str(dialogues_path))


def write_run(run: RunDir, res: TutorReplies, source: str) -> dict:
    """replies.csv, the report and results.json of ``tutor reply`` from its results (the
    command and :meth:`TutorReplies.save` both write through here)."""
    p, table = res.params, res.replies
    run.table("replies", table)
    rep = Report("AI teacher replies", f"{source}, model {p['model']}, budget {p['budget']} "
                 f"words, seed {p['seed']}")  # fmt: skip
    counts = res.counts()
    summary = pd.DataFrame([{k: counts[k] for k in ("n_targets", "n_ok", "n_degenerate",
                            "n_failed", "n_empty", "mean_f1", "mean_ai_perplexity")}])  # fmt: skip
    rep.section("Summary").table(summary).text(
        "F1: unigram overlap with the real teacher reply. Perplexity: of the AI reply's own tokens "
        "(where the backend returns log-probabilities); the real reply's perplexity is not "
        "available from chat-completions backends.",
        res.stats.summary(),
    )
    rep.section("First replies").table(
        table[["dialogue", "student", "real_reply", "ai_reply", "status", "f1"]].head(20)
    )
    results = {
        k: v for k, v in dict(res.headline()).items() if k not in ("model_failures", "complete")
    }
    return finish_model_run(run, results, rep, res.budget)


def save_run(res: TutorReplies, folder: str | Path, *, overwrite: bool = False) -> Path:
    """:meth:`TutorReplies.save`: the folder ``tutor reply`` writes, less its call log
    (``calls.jsonl``: the calls were made in memory, and not logged)."""
    run = saved_run(folder, "tutor reply", params=res.run_params(), seed=res.params.get("seed"),
                    overwrite=overwrite)  # fmt: skip
    write_run(run, res, "results from Python")
    return run.path
