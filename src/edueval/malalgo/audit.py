"""Does the wording of the rationales give the key away?  (``malalgo audit``)

A benchmark of malgorithm identification is only fair if the key's rationale cannot be told from
the malgorithms by its style alone -- a model that learns "the rationale in the imperative is
the correct one" scores AIA without following a single step.  This audit trains a text-only
classifier on the rationales, *never* the question or the choices, and asks it to pick each
question's key:

- features: bag of words and word pairs of each rationale (lower-cased words of letters; the
  numbers and arithmetic symbols are left out, being the content the model must work with);
- model: a logistic regression on "is this rationale the key's?" (scikit-learn), one row per
  rationale; in each question the rationale with the highest score is the classifier's pick
  (exact ties broken at random, seeded);
- cross-validation: ``folds`` folds of whole questions (a question's four rationales are always
  in the same fold), so every pick is made by a model that never saw that question.

The accuracy of the picks is compared with chance (one in four):

- ``ci_low, ci_high``: Wilson 95% interval of the accuracy, one observation per question;
- ``chance_high``: the upper end of chance's 95% range, the 97.5th percentile of
  Binomial(n, 1/4) divided by n;
- ``p_value``: exact one-sided binomial test of "accuracy > 1/4";
- ``within_chance``: the accuracy's interval contains 1/4 and the accuracy is at most
  ``chance_high``; ``cue_detected``: ``p_value < 0.05``.

An accuracy well above chance means the rationales carry a cue: the report lists the words that
weigh most towards "key" and towards "malgorithm" (from a model fitted on every question).
Passing the audit shows only that *this* classifier finds no cue in the words; it says nothing
about cues it cannot see (for example the number of arithmetic steps written with symbols).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from statsmodels.stats.proportion import proportion_confint

from .data import LETTERS

__all__ = ["AuditResult", "audit_key_cues", "rationale_rows"]

CHANCE = 1 / len(LETTERS)
#: words of letters, single letters included; numbers are left out: they are the problem's
#: content, and working with them is the task itself (a cue must be in the wording)
TOKENS = r"(?u)\b[^\W\d_]+\b"


def rationale_rows(questions: pd.DataFrame) -> pd.DataFrame:
    """One row per rationale: ``question_id, letter, text, is_key`` (from a frame read by
    :func:`~edueval.malalgo.data.read_questions`)."""
    parts = [
        pd.DataFrame(
            {
                "question_id": questions["id"].astype(str),
                "letter": letter,
                "text": questions[f"rationale_{letter}"].astype(str),
                "is_key": questions["answer"] == letter,
            }
        )
        for letter in LETTERS
    ]
    return pd.concat(parts).sort_values(["question_id", "letter"], kind="stable")


def _vectorizer() -> CountVectorizer:
    return CountVectorizer(lowercase=True, ngram_range=(1, 2), token_pattern=TOKENS, binary=True)


def _fit(texts: pd.Series, is_key: pd.Series) -> tuple[CountVectorizer, LogisticRegression]:
    vec = _vectorizer()
    x = vec.fit_transform(texts)
    clf = LogisticRegression(C=1.0, max_iter=2000, class_weight="balanced")
    clf.fit(x, is_key.astype(int))
    return vec, clf


def _fold_of_questions(ids: np.ndarray, folds: int, rng: np.random.Generator) -> dict[str, int]:
    shuffled = rng.permutation(ids)
    return {qid: i % folds for i, qid in enumerate(shuffled)}


def _picks(test: pd.DataFrame, scores: np.ndarray, rng: np.random.Generator) -> pd.DataFrame:
    """Per question, the letter with the highest score (exact ties broken at random)."""
    scored = test.assign(score=scores, tie=rng.random(len(test)))
    best = scored.sort_values(["question_id", "score", "tie"], ascending=[True, False, False])
    return best.groupby("question_id", sort=False).head(1)


def _cross_validated(rows: pd.DataFrame, folds: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    ids = rows["question_id"].unique()
    fold = rows["question_id"].map(_fold_of_questions(ids, folds, rng)).to_numpy()
    picked = []
    for f in range(folds):
        train, test = rows[fold != f], rows[fold == f]
        if not len(test):
            continue
        vec, clf = _fit(train["text"], train["is_key"])
        scores = clf.decision_function(vec.transform(test["text"]))
        picked.append(_picks(test, scores, rng).assign(fold=f))
    out = pd.concat(picked)
    keys = rows[rows["is_key"]].set_index("question_id")["letter"]
    out = out.rename(columns={"letter": "picked"})[["question_id", "picked", "fold"]]
    out["key"] = out["question_id"].map(keys).to_numpy()
    out["correct"] = out["picked"] == out["key"]
    return out.sort_values("question_id").reset_index(drop=True)


def _weights(rows: pd.DataFrame, top: int) -> pd.DataFrame:
    vec, clf = _fit(rows["text"], rows["is_key"])
    coef = clf.coef_[0]
    names = vec.get_feature_names_out()
    order = np.argsort(coef)
    pick = list(order[::-1][:top]) + list(order[:top])
    return pd.DataFrame(
        {
            "feature": names[pick],
            "weight": coef[pick],
            "towards": ["key"] * min(top, len(coef)) + ["malgorithm"] * min(top, len(coef)),
        }
    )


def _longest_is_key(rows: pd.DataFrame, seed: int) -> float:
    """Share of questions whose longest rationale (in characters) is the key's."""
    rng = np.random.default_rng(seed)
    picks = _picks(rows, rows["text"].str.len().to_numpy(dtype=float), rng)
    return float(picks["is_key"].mean())


@dataclass
class AuditResult:
    """Outcome of :func:`audit_key_cues` (see the module docstring for each figure)."""

    n_questions: int
    n_correct: int
    accuracy: float
    ci_low: float
    ci_high: float
    chance: float
    chance_high: float
    p_value: float
    within_chance: bool
    cue_detected: bool
    longest_is_key: float
    folds: int
    picks: pd.DataFrame
    weights: pd.DataFrame

    def as_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if not isinstance(v, pd.DataFrame)} | {
            "ci_method": "Wilson, one observation per question"
        }


def audit_key_cues(
    questions: pd.DataFrame, *, folds: int = 5, seed: int = 0, top: int = 15
) -> AuditResult:
    """Cross-validated key-picking accuracy of a words-only classifier on the rationales.

    ``questions`` as read by :func:`~edueval.malalgo.data.read_questions`.  Raises
    ``ValueError`` with fewer than 2 folds or fewer questions than folds."""
    n = len(questions)
    if folds < 2:
        raise ValueError("--folds must be at least 2")
    if n < folds:
        raise ValueError(f"the audit needs at least as many questions as folds ({folds}); got {n}")
    rows = rationale_rows(questions)
    picks = _cross_validated(rows, folds, seed)
    k = int(picks["correct"].sum())
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    chance_high = float(stats.binom.ppf(0.975, n, CHANCE)) / n
    p_value = float(stats.binomtest(k, n, CHANCE, alternative="greater").pvalue)
    return AuditResult(
        n_questions=n,
        n_correct=k,
        accuracy=k / n,
        ci_low=float(lo),
        ci_high=float(hi),
        chance=CHANCE,
        chance_high=chance_high,
        p_value=p_value,
        within_chance=bool(lo <= CHANCE <= hi and k / n <= chance_high),
        cue_detected=p_value < 0.05,
        longest_is_key=_longest_is_key(rows, seed),
        folds=folds,
        picks=picks,
        weights=_weights(rows, top),
    )
