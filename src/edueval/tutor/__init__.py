"""AI teacher replies for comparative judgement (P2's generation side).

* :mod:`.dialogues` -- the dialogues JSONL format and the NCTE uptake importer;
* :mod:`.metrics` -- unigram F1 against the real reply, perplexity from token log-probabilities;
* :mod:`.pipeline` -- ``tutor reply`` (context truncation, persona prompt, model calls, run directory)
  and ``tutor make-study`` (a comparative-judgement study from real + AI replies).
"""

from .dialogues import Target, import_ncte, read_dialogues, reply_targets
from .metrics import perplexity, unigram_f1, words
from .pipeline import DEFAULT_PERSONA, build_messages, make_study, reply_run, truncate_context

__all__ = [
    "DEFAULT_PERSONA",
    "Target",
    "build_messages",
    "import_ncte",
    "make_study",
    "perplexity",
    "read_dialogues",
    "reply_run",
    "reply_targets",
    "truncate_context",
    "unigram_f1",
    "words",
]
