"""Which teacher turns become comparative-judgement items, and what context raters see.

The AI Teacher Test (Tack & Piech, 2022, Section 3.3, "Item Selection") did not put every dialogue
turn before its raters: it kept the turns where the teacher was *eliciting* and *scaffolding* the
student's understanding, left out teacher replies that were single words or sentence fragments
("Perfect!", "Yay!"; footnote 3: this rule applied to the real teacher's reply only, not to the
generated ones), and showed raters a dialogue context limited to 100 tokens.  The paper selected by
hand, with the TSCC corpus' conversational-organisation labels; this module gives a documented,
reproducible rule for data without such labels (a user-supplied label column replaces it, see
:func:`edueval.tutor.study.make_study`).

Too short (:func:`too_short`)
    the real teacher reply has fewer than ``min_words`` tokens (default :data:`MIN_WORDS` = 2)
    after ParlAI's normalisation (:func:`edueval.tutor.metrics.words`: lower case, punctuation
    and the articles a/an/the removed).  "Yeah.", "Okay!", "The end." are too short; "By what?"
    is not.

Eliciting or scaffolding (:func:`eliciting_cue`)
    the reply is split into sentences (after ``.``, ``!`` or ``?`` followed by white space, and at
    line breaks) and, in each sentence, leading discourse markers (:data:`DISCOURSE`: "okay",
    "so", "now", "yes", "good", ...) and a vocative "Student X" (the NCTE anonymisation) are
    skipped.  The reply elicits or scaffolds when at least one sentence

    - ``question``: ends with ``?`` and has a word left after the skipping -- a real question,
      not a check-in tag such as "Okay?" or "Right?" or a bare "Student T?";
    - ``question-form``: has at least 3 words left and starts with a question word or an inverted
      auxiliary (:data:`QUESTION_OPENERS`: what, why, how, which, who, can, could, would, will,
      do, does, did, is, are, should, ...) -- transcripts often drop the question mark;
    - ``prompt``: starts with a verb that asks the student to think, say or do something
      (:data:`PROMPT_VERBS`: tell, explain, show, try, think, check, count, compare, solve,
      figure, remember, let('s), ...) or with "I want / need / would like you to".

    Classroom-management imperatives ("sit down", "look in your desk", "put it here") are not
    prompts; statements, praise and evaluations ("That would be a diameter.", "Very good.") are
    not eliciting.  The cue that fired first is recorded with each turn so a researcher can
    audit the rule.

Context shown to raters (:func:`rater_context`)
    the most recent turns, whole, while their tokens fit a budget (default
    :data:`CONTEXT_TOKENS` = 100, the paper's): turns are added from the student turn being
    answered backwards and the first turn that does not fit ends the context (it is contiguous;
    no older, shorter turn is slipped in).  The student turn being answered is always shown
    whole, even when it alone is longer than the budget.  A token is a run of letters, digits or
    underscores, or one punctuation mark -- the split of ParlAI's default ``re`` tokenizer; the
    paper does not say which tokenizer set its 100-token limit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..io import InputError
from .metrics import words

__all__ = [
    "MIN_WORDS",
    "CONTEXT_TOKENS",
    "DISCOURSE",
    "QUESTION_OPENERS",
    "PROMPT_VERBS",
    "too_short",
    "eliciting_cue",
    "count_tokens",
    "rater_context",
    "parse_transcript",
]

MIN_WORDS = 2
CONTEXT_TOKENS = 100

# fmt: off
#: leading words skipped before a sentence's first real word (discourse markers, praise, tags)
DISCOURSE = frozenset((
    "so", "and", "but", "or", "then", "now", "well", "okay", "ok", "alright", "right", "yes",
    "yeah", "yep", "no", "nope", "um", "uh", "oh", "ah", "hm", "hmm", "huh", "good", "great",
    "very", "nice", "excellent", "exactly", "sure", "correct", "please", "also", "just", "all",
))
#: words that start a question without a question mark (question words, inverted auxiliaries)
QUESTION_OPENERS = frozenset((
    "what", "why", "how", "which", "who", "can", "could", "would", "will", "do", "does", "did",
    "is", "are", "was", "were", "should", "shall", "isn", "aren", "doesn", "didn", "wouldn",
    "couldn", "shouldn",
))
#: imperatives that ask the student to think, say or do something about the task
PROMPT_VERBS = frozenset((
    "tell", "explain", "show", "think", "try", "check", "count", "compare", "describe", "prove",
    "justify", "figure", "solve", "find", "estimate", "remember", "say", "draw", "write", "use",
    "work", "let", "imagine", "predict", "decide", "notice", "name", "list", "talk", "discuss",
    "share", "repeat", "answer", "complete", "continue", "calculate", "measure", "add",
    "subtract", "multiply", "divide", "simplify", "reduce", "convert", "label", "read", "give",
    "walk", "help", "keep",
))
# fmt: on
_WANT_YOU = re.compile(r"^i (?:want|need|would like|d like) you to\b")
_WORD = re.compile(r"[a-z0-9]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_TOKEN = re.compile(r"\w+|[^\w\s]")
_SPEAKER_LINE = re.compile(r"^(Teacher|Student): ?(.*)$", re.DOTALL)


def too_short(reply: str, min_words: int = MIN_WORDS) -> bool:
    """True when ``reply`` has fewer than ``min_words`` tokens after ParlAI's normalisation."""
    return len(words(reply)) < min_words


def _content(sentence: str) -> list[str]:
    """The sentence's words (lower case, typographic apostrophes split like ASCII ones) after
    the leading discourse markers and a leading vocative "Student X"."""
    toks = _WORD.findall(sentence.lower())
    i = 0
    while i < len(toks):
        if toks[i] in DISCOURSE:
            i += 1
        elif toks[i] == "student" and i + 1 < len(toks) and len(toks[i + 1]) == 1:
            i += 2
        else:
            break
    return toks[i:]


def _sentence_cue(sentence: str) -> str | None:
    rest = _content(sentence)
    if not rest:
        return None
    if sentence.rstrip(" \"'\u201d\u2019)]").endswith("?"):
        return "question"
    if rest[0] in QUESTION_OPENERS and len(rest) >= 3:
        return "question-form"
    if rest[0] in PROMPT_VERBS or _WANT_YOU.match(" ".join(rest)):
        return "prompt"
    return None


def eliciting_cue(reply: str) -> str | None:
    """The first cue by which ``reply`` elicits or scaffolds (``"question"``,
    ``"question-form"`` or ``"prompt"``), or None; the rule is in the module docstring."""
    for sentence in _SENTENCE_END.split(str(reply)):
        cue = _sentence_cue(sentence)
        if cue:
            return cue
    return None


def count_tokens(text: str) -> int:
    """Tokens as ParlAI's ``re`` tokenizer splits them: runs of word characters, and each other
    non-space character on its own."""
    return len(_TOKEN.findall(text))


def rater_context(
    turns: Sequence[tuple[str, str]], budget: int = CONTEXT_TOKENS
) -> tuple[list[tuple[str, str]], int]:
    """The most recent whole turns within ``budget`` tokens (the last turn always, whole);
    returns (turns kept in dialogue order, number of earlier turns dropped)."""
    if budget < 1:
        raise InputError("budget= must be at least 1")
    kept: list[tuple[str, str]] = []
    used = 0
    for speaker, text in reversed(list(turns)):
        n = count_tokens(text)
        if kept and used + n > budget:
            break
        kept.append((speaker, text))
        used += n
    kept.reverse()
    return kept, len(turns) - len(kept)


def parse_transcript(text: str) -> list[tuple[str, str]]:
    """Turns from a ``Speaker: text`` transcript (the ``context`` column of replies tables written
    before ``context_turns`` existed).  Only a line that starts with ``Teacher: `` or
    ``Student: `` opens a turn; any other line belongs to the turn before it, so a line break
    inside a turn never creates a speaker.  (A turn whose own text has a line starting with
    ``Student: `` cannot be told apart: ``context_turns`` stores the turns exactly.)"""
    turns: list[tuple[str, str]] = []
    for line in str(text).split("\n"):
        m = _SPEAKER_LINE.match(line)
        if m:
            turns.append((m.group(1).lower(), m.group(2)))
        elif turns:
            turns[-1] = (turns[-1][0], turns[-1][1] + "\n" + line)
        elif line.strip():
            turns.append(("", line))
    return turns
