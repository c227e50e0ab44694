"""AI teacher replies for comparative judgement (P2's generation side).

* :mod:`.dialogues` -- the dialogues JSONL format and the NCTE uptake importer;
* :mod:`.metrics` -- unigram F1 against the real reply (ParlAI's normalisation), perplexity from
  token log-probabilities;
* :mod:`.personas` -- the teacher personas (the paper's, the default; ``uptake``);
* :mod:`.replies` -- :func:`reply` in memory (context truncation, persona prompt, model calls,
  F1): ``res = reply(dialogues, "local"); print(res.summary()); res.mean_f1; res.replies``;
* :mod:`.pipeline` -- ``tutor reply`` (the same, writing a run directory);
* :mod:`.selection` -- which teacher turns become study items, and the raters' context;
* :mod:`.study` -- ``tutor make-study`` (a comparative-judgement study from real + AI replies).
"""

import importlib
from typing import Any

from .dialogues import Target, as_dialogues, import_ncte, read_dialogues, reply_targets
from .metrics import normalize_answer, perplexity, unigram_f1, words
from .personas import DEFAULT_PERSONA, PERSONAS, UPTAKE_PERSONA, resolve_persona
from .replies import TutorReplies, build_messages, reply, truncate_context
from .selection import eliciting_cue, rater_context

# The run layer (run folders, reports: jinja2) is imported on first use (PEP 562), so importing
# the science does not load it.
_LAZY = {
    "reply_run": "pipeline",
    "make_study": "study",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_PERSONA",
    "PERSONAS",
    "Target",
    "TutorReplies",
    "UPTAKE_PERSONA",
    "as_dialogues",
    "build_messages",
    "eliciting_cue",
    "import_ncte",
    "make_study",
    "normalize_answer",
    "perplexity",
    "rater_context",
    "read_dialogues",
    "reply",
    "reply_run",
    "reply_targets",
    "resolve_persona",
    "truncate_context",
    "unigram_f1",
    "words",
]
