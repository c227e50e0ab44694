"""Is a generated reply usable as a study item?  Degenerate replies are flagged, not hidden.

A small model at greedy decoding often loops ("I'm so glad you're having fun with math! I'm so
glad you're having fun with math! ...").  Such a reply is a real output -- it stays in the
replies table and in its F1 -- but it is no candidate for a comparative-judgement study, where
raters would only learn that the model looped.  The rule, documented here and in the docs
("Running a study", "Methods and deviations"):

- ``empty``: nothing but white space;
- ``repetitive``: at least :data:`MIN_WORDS` words and at least :data:`MAX_REPEATED_SHARE` of its
  word 3-grams (lower-cased) repeat an earlier 3-gram of the same reply.

A normal reply of a few sentences repeats almost no 3-gram (share near 0); a reply that says the
same sentence twice has a share near 0.5, three times near 0.67.
"""

from __future__ import annotations

import re

__all__ = ["MIN_WORDS", "MAX_REPEATED_SHARE", "repeated_share", "degenerate_reason"]

MIN_WORDS = 8
MAX_REPEATED_SHARE = 0.4
_WORD = re.compile(r"\w+(?:'\w+)?")


def repeated_share(text: str, n: int = 3) -> float:
    """Share of the reply's word n-grams that repeat an earlier n-gram (0 when too short)."""
    words = _WORD.findall(text.lower())
    grams = [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]
    if not grams:
        return 0.0
    return 1.0 - len(set(grams)) / len(grams)


def degenerate_reason(text: str) -> str | None:
    """``"empty"``, ``"repetitive"`` or None for a usable reply (see the module docstring)."""
    if not text.strip():
        return "empty"
    if len(_WORD.findall(text)) >= MIN_WORDS and repeated_share(text) >= MAX_REPEATED_SHARE:
        return "repetitive"
    return None
