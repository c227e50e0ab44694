"""Reply metrics: unigram F1 against the real teacher reply, and perplexity from log-probabilities."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

__all__ = ["words", "unigram_f1", "perplexity"]

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters/digits, with an inner apostrophe: "don't" is one word).
    Punctuation is dropped and typographic apostrophes are read as ``'``."""
    return _WORD.findall(str(text).lower().replace("\u2019", "'").replace("\u2018", "'"))


def unigram_f1(candidate: str, reference: str) -> float:
    """Unigram F1 of ``candidate`` against ``reference`` (bag-of-words overlap with counts, as in
    the SQuAD evaluation script): precision = overlap / |candidate|, recall = overlap /
    |reference|.  Both empty -> 1.0; exactly one empty -> 0.0."""
    c, r = words(candidate), words(reference)
    if not c and not r:
        return 1.0
    if not c or not r:
        return 0.0
    overlap = sum((Counter(c) & Counter(r)).values())
    if overlap == 0:
        return 0.0
    p, rec = overlap / len(c), overlap / len(r)
    return 2 * p * rec / (p + rec)


def perplexity(logprobs: Sequence[float]) -> float:
    """``exp(-mean(log p))`` over tokens; NaN when there are none."""
    if len(logprobs) == 0:
        return math.nan
    return math.exp(-sum(logprobs) / len(logprobs))
