"""Reply metrics: unigram F1 against the real teacher reply, and perplexity from log-probabilities.

Unigram F1 is the token-overlap F1 of ParlAI (Miller et al., 2017), the framework the AI Teacher
Test used to generate and score replies (Tack & Piech, 2022, Section 3.2 and Figure 4), so that
our F1 and the paper's are the same number:

1. normalise both texts as ParlAI's ``normalize_answer`` does: lower-case; replace every ASCII
   punctuation character in ``!"#$%&()*+,-./:;<=>?@[\\]^`{|}~_'`` by a space (so "don't" becomes
   the two tokens ``don t`` and "well-known" ``well known``); replace the articles "a", "an",
   "the" (whole words) by a space; collapse white space;
2. split on white space;
3. precision = overlap / |candidate tokens|, recall = overlap / |reference tokens|, where the
   overlap counts each token as often as it occurs in *both* (multiset intersection), and
   F1 = 2PR / (P + R); no overlap (including two empty texts) gives 0.

As in ParlAI, characters outside that ASCII set -- typographic apostrophes and dashes (’ –) in
transcripts, for instance -- are not punctuation: "don’t" stays one token and a lone "–" is a
token.  The rule is ParlAI's, quirks included, so that numbers compare with papers built on it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

__all__ = ["normalize_answer", "words", "precision_recall_f1", "unigram_f1", "perplexity"]

#: ParlAI's punctuation: the ASCII punctuation characters (``string.punctuation``)
_PUNCTUATION = re.compile("[" + re.escape("!\"#$%&()*+,-./:;<=>?@[\\]^`{|}~_'") + "]")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


def normalize_answer(text: str) -> str:
    """Lower-case, punctuation and the articles a/an/the turned into spaces, white space collapsed
    (the normalisation of ParlAI's ``normalize_answer``; see the module docstring)."""
    text = _PUNCTUATION.sub(" ", str(text).lower())
    return " ".join(_ARTICLES.sub(" ", text).split())


def words(text: str) -> list[str]:
    """The tokens unigram F1 counts: :func:`normalize_answer` split on white space."""
    return normalize_answer(text).split()


def precision_recall_f1(candidate: Sequence[str], reference: Sequence[str]) -> tuple[float, ...]:
    """Precision, recall and F1 of ``candidate`` tokens against ``reference`` tokens, counting
    each token as often as it occurs in both (multiset intersection); (0, 0, 0) when nothing
    overlaps -- as ParlAI's ``_prec_recall_f1_score``."""
    overlap = sum((Counter(candidate) & Counter(reference)).values())
    if overlap == 0:
        return 0.0, 0.0, 0.0
    precision, recall = overlap / len(candidate), overlap / len(reference)
    return precision, recall, 2 * precision * recall / (precision + recall)


def unigram_f1(candidate: str, reference: str) -> float:
    """Unigram F1 of ``candidate`` against ``reference`` after ParlAI's normalisation (the
    module docstring gives the rule).  Equals ParlAI's ``F1Metric.compute(candidate,
    [reference])``; 0 when the normalised texts share no token, also when both are empty."""
    return precision_recall_f1(words(candidate), words(reference))[2]


def perplexity(logprobs: Sequence[float]) -> float:
    """``exp(-mean(log p))`` over tokens; NaN when there are none."""
    if len(logprobs) == 0:
        return math.nan
    return math.exp(-sum(logprobs) / len(logprobs))
