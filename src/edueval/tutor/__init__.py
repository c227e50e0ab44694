"""AI teacher replies for comparative judgement (P2's generation side).

* :mod:`.dialogues` -- the dialogues JSONL format and the NCTE uptake importer;
* :mod:`.metrics` -- unigram F1 against the real reply (ParlAI's normalisation), perplexity from
  token log-probabilities;
* :mod:`.personas` -- the teacher personas (the paper's, the default; ``uptake``);
* :mod:`.pipeline` -- ``tutor reply`` (context truncation, persona prompt, model calls, run
  directory);
* :mod:`.selection` -- which teacher turns become study items, and the raters' context;
* :mod:`.study` -- ``tutor make-study`` (a comparative-judgement study from real + AI replies).
"""

from .dialogues import Target, import_ncte, read_dialogues, reply_targets
from .metrics import normalize_answer, perplexity, unigram_f1, words
from .personas import DEFAULT_PERSONA, PERSONAS, UPTAKE_PERSONA, resolve_persona
from .pipeline import build_messages, reply_run, truncate_context
from .selection import eliciting_cue, rater_context
from .study import make_study

__all__ = [
    "DEFAULT_PERSONA",
    "PERSONAS",
    "Target",
    "UPTAKE_PERSONA",
    "build_messages",
    "eliciting_cue",
    "import_ncte",
    "make_study",
    "normalize_answer",
    "perplexity",
    "rater_context",
    "read_dialogues",
    "reply_run",
    "reply_targets",
    "resolve_persona",
    "truncate_context",
    "unigram_f1",
    "words",
]
