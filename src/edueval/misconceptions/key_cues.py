"""Per-choice structural features of four-option items: what a reader who does no mathematics can
measure to guess the key (issue 34).

Shared by the adversarial filter of ``malalgo generate`` (:mod:`.adversarial`) and by
``malalgo audit`` (its similarity cues and its learned models), so that the generator is filtered
against the very readers the audit reports.  Pure NumPy on ``[n_questions, 4]`` grids: the choices'
values (NaN where a choice is not a number), the choices' texts, the rationales' texts and,
optionally, the question texts.

The feature that motivated it: mal-rules perturb the correct procedure, so a distractor's
rationale is the key's with one step changed, and the key's rationale is the one the other three
resemble most - the **most central** rationale.  Similarity is measured two ways:

* ``difflib`` - :class:`difflib.SequenceMatcher` ratio (``2·matches / total length``, Ratcliff &
  Obershelp's gestalt matching; ``autojunk`` off), "character similarity";
* ``trigram`` - Jaccard similarity of the sets of character 3-grams (cheap; used while drawing).

Every feature is a per-option value; "rank" features are ranks within the question (1 = smallest,
ties sharing the lowest rank) and ``…dev`` features are deviations from the question's mean, since
only differences between the four options can point at one of them.
"""

from __future__ import annotations

import re
import warnings
from difflib import SequenceMatcher
from fractions import Fraction
from itertools import combinations

import numpy as np

__all__ = [
    "CHOICE_GROUP",
    "RATIONALE_GROUP",
    "centrality",
    "char_similarity",
    "choice_value",
    "feature_grids",
    "most_central",
    "trigram_similarity",
    "within_rank",
]

#: names of the choice-only features (what an MCQ answerer sees) and of the rationale features
CHOICE_GROUP = "choices"
RATIONALE_GROUP = "rationales"

_NUMBER = re.compile(r"(?<![\w.])[-−]?\d+(?:\.\d+)?(?:/\d+)?")
_PAIRS = tuple(combinations(range(4), 2))
_PLAIN = re.compile(r"^[-]?\d+(?:\.\d+)?(?:/\d+)?$")


def plain_fraction(s: str) -> Fraction | None:
    """``12``, ``-3.4``, ``2/5`` as an exact value; ``None`` for anything else."""
    s = s.replace("−", "-")
    if not _PLAIN.match(s):
        return None
    if "/" in s:
        num, den = s.split("/")
        return None if Fraction(den) == 0 else Fraction(num) / Fraction(den)
    return Fraction(s)


def choice_value(text: str) -> Fraction | None:
    """The number a choice writes (``$57.60`` -> 57.6, ``25%`` -> 25, ``25π/4`` -> 25/4, ``π`` ->
    1), or ``None`` when the choice is not a number."""
    s = str(text).strip().replace(",", "").replace(" ", "").replace("−", "-").rstrip(".")
    s = s.replace("$", "")
    if s.endswith("%"):
        s = s[:-1]
    if s.count("π") == 1:
        before, after = s.split("π")
        if after and not after.startswith("/"):
            return None
        coef = {"": "1", "-": "-1"}.get(before, before)
        s = coef + after
    return plain_fraction(s)


def char_similarity(a: str, b: str) -> float:
    """``difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()``."""
    return SequenceMatcher(None, a, b, autojunk=False).ratio()


def _trigrams(text: str) -> frozenset[str]:
    t = f"  {text} "
    return frozenset(t[i : i + 3] for i in range(len(t) - 2))


def trigram_similarity(a: str, b: str) -> float:
    """Jaccard similarity of the character 3-gram sets of ``a`` and ``b``."""
    x, y = _trigrams(a), _trigrams(b)
    return len(x & y) / max(1, len(x | y))


def _pairwise(texts: list[list[str]], kind: str) -> np.ndarray:
    """``[n, 4, 4]`` similarities between the four texts of every question (diagonal NaN)."""
    n = len(texts)
    out = np.full((n, 4, 4), np.nan)
    for q, row in enumerate(texts):
        if kind == "trigram":
            grams = [_trigrams(t) for t in row]
            sims = [len(grams[i] & grams[j]) / max(1, len(grams[i] | grams[j])) for i, j in _PAIRS]
        else:
            sims = [char_similarity(row[i], row[j]) for i, j in _PAIRS]
        for (i, j), s in zip(_PAIRS, sims, strict=True):
            out[q, i, j] = out[q, j, i] = s
    return out


def centrality(texts: list[list[str]], kind: str = "difflib") -> np.ndarray:
    """``[n, 4]``: each text's mean similarity to the other three of its question."""
    return np.nanmean(_pairwise(texts, kind), axis=2)


def most_central(sim_mean: np.ndarray) -> np.ndarray:
    """Score for "the most central option": the mean similarity itself (the audit picks the
    highest, exact ties at random)."""
    return sim_mean


def within_rank(x: np.ndarray) -> np.ndarray:
    """Rank 1-4 within each row, ties sharing the lowest rank; rows with a NaN are all 0."""
    ok = ~np.isnan(x).any(axis=1)
    out = np.zeros(x.shape)
    xs = x[ok]
    out[ok] = 1 + (xs[:, None, :] < xs[:, :, None]).sum(axis=2)
    return out


def _dev(x: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings(), np.errstate(invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nan_to_num(
            x - np.nanmean(np.where(np.isnan(x), np.nan, x), axis=1, keepdims=True)
        )


def _slog(v: np.ndarray) -> np.ndarray:
    return np.sign(v) * np.log10(1.0 + np.abs(v))


def _value_features(value: np.ndarray) -> dict[str, np.ndarray]:
    with warnings.catch_warnings():  # all-NaN rows (choices that are not numbers) give NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        return _value_features_of(value)


def _value_features_of(value: np.ndarray) -> dict[str, np.ndarray]:
    """Value ranks and relations: distances to the others on an order-of-magnitude scale, the
    nearest other, the gap to the others' median, and simple arithmetic relations (×10, ÷10,
    ×2, ÷2, negation) with another option."""
    numeric = ~np.isnan(value).any(axis=1, keepdims=True)
    v = np.where(numeric, value, np.nan)
    mag = _slog(v)
    diff = np.abs(mag[:, :, None] - mag[:, None, :])
    eye = np.eye(4, dtype=bool)[None]
    diff = np.where(eye, np.nan, diff)
    with np.errstate(invalid="ignore", divide="ignore"):
        dist_mean = np.nanmean(diff, axis=2) if numeric.any() else np.zeros(v.shape)
        dist_min = np.nanmin(np.where(numeric[:, :, None], diff, 0.0), axis=2)
        others = np.where(eye, np.nan, np.broadcast_to(v[:, None, :], (len(v), 4, 4)))
        med = np.nanmedian(others, axis=2)
        gap = np.abs(v - med) / (np.abs(med) + 1.0)
        rel = np.zeros(v.shape)
        for f in (10.0, 0.1, 2.0, 0.5, -1.0):
            hit = np.isclose(v[:, :, None] * f, v[:, None, :]) & ~eye
            rel += hit.sum(axis=2)
    feats = {
        "value rank": within_rank(v),
        "value magnitude dev": _dev(mag),
        "value distance mean": np.nan_to_num(dist_mean),
        "value distance mean rank": within_rank(dist_mean),
        "value distance nearest": np.nan_to_num(dist_min),
        "value distance nearest rank": within_rank(dist_min),
        "value gap to others' median": np.nan_to_num(np.log1p(gap)),
        "value gap rank": within_rank(gap),
        "value relations": rel,
        "whole number": np.nan_to_num(np.where(numeric, (v == np.round(v)).astype(float), 0.0)),
        "negative": np.nan_to_num((v < 0).astype(float)),
    }
    return feats


def _text_features(texts: list[list[str]], prefix: str, difflib: bool) -> dict[str, np.ndarray]:
    length = np.array([[len(t) for t in row] for row in texts], dtype=float)
    words = np.array([[len(t.split()) for t in row] for row in texts], dtype=float)
    pair = _pairwise(texts, "difflib" if difflib else "trigram")
    sim = np.nanmean(pair, axis=2)
    feats = {
        f"{prefix} similarity": _dev(sim),
        f"{prefix} similarity rank": within_rank(sim),
        f"{prefix} similarity max": _dev(np.nanmax(pair, axis=2)),
        f"{prefix} similarity min": _dev(np.nanmin(pair, axis=2)),
        f"{prefix} length": _dev(np.log1p(length)),
        f"{prefix} length rank": within_rank(length),
        f"{prefix} words": _dev(np.log1p(words)),
    }
    if difflib:
        tri = centrality(texts, "trigram")
        feats[f"{prefix} trigram similarity"] = _dev(tri)
        feats[f"{prefix} trigram similarity rank"] = within_rank(tri)
    return feats


def _number_overlap(texts: list[list[str]]) -> np.ndarray:
    """How many of a rationale's numbers appear in each other rationale, on average."""
    nums = [[set(_NUMBER.findall(t)) for t in row] for row in texts]
    out = np.zeros((len(texts), 4))
    for q, row in enumerate(nums):
        for i in range(4):
            out[q, i] = np.mean([len(row[i] & row[j]) for j in range(4) if j != i])
    return out


def feature_grids(
    values: np.ndarray,
    choices: list[list[str]],
    rationales: list[list[str]] | None,
    questions: list[str] | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, list[str]]]:
    """Every per-option feature (``name -> [n, 4]``) and the names in each group
    (:data:`CHOICE_GROUP`: values and choice texts; :data:`RATIONALE_GROUP`: the rationales).

    ``values`` is ``[n, 4]`` (NaN where a choice is not a number); ``choices`` and
    ``rationales`` are ``n`` lists of four texts; ``questions`` (optional) adds whether each
    choice's text is written in the question.
    """
    feats = _value_features(np.asarray(values, dtype=float))
    feats |= _text_features(choices, "choice", difflib=True)
    if questions is not None:
        feats["in question"] = np.array(
            [
                [float(re.search(rf"(?<![\w.]){re.escape(c.strip())}(?![\w])", q) is not None)
                 for c in row]
                for row, q in zip(choices, questions, strict=True)
            ]
        )  # fmt: skip
    groups = {CHOICE_GROUP: list(feats)}
    if rationales is not None:
        rat = _text_features(rationales, "rationale", difflib=True)
        overlap = _number_overlap(rationales)
        rat["rationale shared numbers"] = _dev(overlap)
        rat["rationale shared numbers rank"] = within_rank(overlap)
        feats |= rat
        groups[RATIONALE_GROUP] = list(rat)
    return feats, groups
