"""Surface features of the four options of a MalAlgoQA-format question, for ``malalgo audit``.

One row per option (``question_id, letter, position, is_key``) with what a reader can see
without doing the problem:

* the **choice**: its value (``value``, a float; NaN when the text is not a number - ``$57.60``,
  ``25%``, ``11/15`` and ``25π`` are numbers, the coefficient of π being the value), its text
  length, whether it is a whole number, and whether its value is one of the numbers written in
  the question (``in_question``; a choice that is not a number is "in the question" when its
  text occurs there);
* the **rationale**: its length in characters and in words (whitespace-separated), how many
  numbers it writes and how many operation symbols (``+ − × ÷ = / ( )``);
* the **position** (A-D).

:func:`within_question` turns these into the per-option feature matrix of the combined models
(ranks one-hot, and deviations from the question's mean), centred within each question, since
only differences between the options of one question can point at its key.
"""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pandas as pd

from ..misconceptions.key_cues import choice_value
from ..misconceptions.key_cues import plain_fraction as _fraction
from .data import LETTERS

__all__ = [
    "CHOICE_FEATURES",
    "RATIONALE_FEATURES",
    "choice_value",
    "option_table",
    "question_numbers",
    "within_question",
]

#: a number as written in a question or a rationale: 12, 3.4, 2/5, -7 (no thousands commas)
_NUMBER = re.compile(r"(?<![\w.])[-−]?\d+(?:\.\d+)?(?:/\d+)?")
_SYMBOLS = re.compile(r"[+\-−×÷=/()*]")


def question_numbers(question: str) -> set[Fraction]:
    """Every number written in a question's text, as exact values."""
    out = set()
    for m in _NUMBER.finditer(str(question)):
        v = _fraction(m.group(0))
        if v is not None:
            out.add(v)
    return out


def _in_question(
    choice: str, value: Fraction | None, numbers: set[Fraction], question: str
) -> bool:
    if value is not None:
        return value in numbers
    text = str(choice).strip().lower()
    return (
        bool(text) and re.search(rf"(?<!\w){re.escape(text)}(?!\w)", question.lower()) is not None
    )


def option_table(questions: pd.DataFrame) -> pd.DataFrame:
    """One row per option of every question (four per question, in letter order).

    ``questions`` as read by :func:`~edueval.malalgo.data.read_questions`.
    """
    rows = []
    for q in questions.to_dict(orient="records"):
        question = str(q["question"])
        numbers = question_numbers(question)
        for pos, x in enumerate(LETTERS):
            choice, rationale = str(q[f"choice_{x}"]), str(q[f"rationale_{x}"])
            value = choice_value(choice)
            rows.append(
                {
                    "question_id": str(q["id"]),
                    "family": q.get("family"),
                    "letter": x,
                    "position": pos,
                    "is_key": q["answer"] == x,
                    "value": np.nan if value is None else float(value),
                    "choice_chars": len(choice.strip()),
                    "is_whole": np.nan if value is None else float(value.denominator == 1),
                    "in_question": float(_in_question(choice, value, numbers, question)),
                    "rationale_chars": len(rationale.strip()),
                    "rationale_words": len(rationale.split()),
                    "rationale_numbers": len(_NUMBER.findall(rationale)),
                    "rationale_symbols": len(_SYMBOLS.findall(rationale)),
                }
            )
    return pd.DataFrame(rows)


def signed_log(v: np.ndarray) -> np.ndarray:
    """``sign(v)·log10(1 + |v|)``: an order-of-magnitude scale that keeps 0 and negatives."""
    return np.sign(v) * np.log10(1.0 + np.abs(v))


def _grid(options: pd.DataFrame, col: str) -> np.ndarray:
    """A column as an ``[n_questions, 4]`` array (rows of ``options`` are in question order)."""
    return options[col].to_numpy(dtype=float).reshape(-1, len(LETTERS))


def _rank(x: np.ndarray) -> np.ndarray:
    """Rank 1-4 within each question (ties share the lowest rank); NaN rows stay NaN."""
    out = np.full(x.shape, np.nan)
    ok = ~np.isnan(x).any(axis=1)
    xs = x[ok]
    out[ok] = 1 + (xs[:, None, :] < xs[:, :, None]).sum(axis=2)
    return out


def _one_hot(rank: np.ndarray, name: str) -> dict[str, np.ndarray]:
    return {f"{name}={r}": np.nan_to_num((rank == r).astype(float)) for r in (1, 2, 3, 4)}


def _row_mean(x: np.ndarray) -> np.ndarray:
    """Mean of each question's options, ignoring NaN (NaN when all four are NaN)."""
    ok = ~np.isnan(x)
    total = np.where(ok, x, 0.0).sum(axis=1, keepdims=True)
    count = ok.sum(axis=1, keepdims=True)
    return np.divide(total, count, out=np.full(total.shape, np.nan), where=count > 0)


def _deviation(x: np.ndarray) -> np.ndarray:
    return np.nan_to_num(x - _row_mean(x))


def _choice_features(options: pd.DataFrame) -> dict[str, np.ndarray]:
    value = _grid(options, "value")
    numeric = ~np.isnan(value).any(axis=1, keepdims=True)
    value = np.where(numeric, value, np.nan)
    mag = signed_log(value)
    others = (np.nan_to_num(mag).sum(axis=1, keepdims=True) - mag) / 3
    chars = _grid(options, "choice_chars")
    pos = _grid(options, "position")
    feats = {f"position={x}": (pos == i).astype(float) for i, x in enumerate(LETTERS)}
    feats |= _one_hot(_rank(value), "value rank")
    feats["magnitude"] = _deviation(mag)
    feats["distance from the others"] = _deviation(np.abs(mag - others))
    feats["in question"] = _grid(options, "in_question")
    feats |= _one_hot(_rank(chars), "choice length rank")
    feats["choice length"] = _deviation(np.log(chars + 1))
    feats["whole number"] = np.nan_to_num(np.where(numeric, _grid(options, "is_whole"), np.nan))
    return feats


def _rationale_features(options: pd.DataFrame) -> dict[str, np.ndarray]:
    feats: dict[str, np.ndarray] = {}
    for col, label in (("rationale_chars", "characters"), ("rationale_words", "words")):
        x = _grid(options, col)
        feats |= _one_hot(_rank(x), f"rationale {label} rank")
        feats[f"rationale {label}"] = _deviation(np.log(x + 1))
    feats["rationale numbers"] = _deviation(_grid(options, "rationale_numbers"))
    feats["rationale symbols"] = _deviation(_grid(options, "rationale_symbols"))
    return feats


#: names of the feature groups, in the order :func:`within_question` stacks them
CHOICE_FEATURES = "choices"
RATIONALE_FEATURES = "rationales"


def within_question(options: pd.DataFrame, group: str) -> tuple[np.ndarray, list[str]]:
    """The ``[n_questions, 4, p]`` feature array of a group (``"choices"``, ``"rationales"`` or
    ``"all"``), each feature centred within its question, and the feature names."""
    feats: dict[str, np.ndarray] = {}
    if group in (CHOICE_FEATURES, "all"):
        feats |= _choice_features(options)
    if group in (RATIONALE_FEATURES, "all"):
        feats |= _rationale_features(options)
    if not feats:
        raise ValueError(f"unknown feature group {group!r}")
    names = list(feats)
    x = np.stack([feats[k] for k in names], axis=-1)
    x = x - x.mean(axis=1, keepdims=True)
    return x, names
