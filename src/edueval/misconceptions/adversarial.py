"""Adversarial filtering of generated items: drop what cheap readers solve (issue 34).

Balancing a listed set of features (:mod:`.balance`) leaves whatever is not listed; benchmark
builders instead filter against *learned* readers - SWAG's adversarial filtering (Zellers et al.
2018) and AFLite (Le Bras et al. 2020): generate a pool of candidates, train cheap models on
held-out folds, drop the instances they solve, and iterate.  Here each round

1. describes every option by its per-choice structural features (:func:`~.key_cues.feature_grids`:
   value ranks, distances and arithmetic relations to the other values, choice-text similarity
   and length; rationale similarity to the other three - character and 3-gram -, its rank,
   shared numbers, lengths; and the family);
2. trains two model kinds - a logistic regression on standardised features and a gradient-boosted
   tree ensemble (scikit-learn's ``HistGradientBoostingClassifier``, the family as a categorical
   feature) - on all features and on the choices' features alone (what an MCQ answerer sees),
   each cross-validated in :data:`FOLDS` folds of whole questions, to give every option of every
   question a held-out probability of being the key (normalised over its four options);
3. scores each question by the mean held-out probability of its key over the four models and
   drops those above :data:`THRESHOLD` (chance: 0.25), at most :data:`MAX_DROP` of the
   remaining questions per round, the most predictable first;

until every model picks the key in at most :data:`TARGET` of the remaining questions, or none
does so significantly more often than chance (Wilson 95% lower limit at or below 1/4: dropping
on noise would plant the opposite cue), or :data:`ROUNDS` rounds have run.  Only *confidently* solved questions are dropped: dropping every
question a model happens to get right would leave the key systematically away from where the
model looks - a cue of its own.  Everything is seeded (folds, trees), so the same pool gives the
same survivors bit for bit.

:func:`select_balanced` then takes the items: within each family, the key's value rank 1, 2, 3
and 4 equally often, families in turn.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..stats import wilson_interval
from .key_cues import CHOICE_GROUP, choice_value, feature_grids

__all__ = [
    "FOLDS",
    "MAX_DROP",
    "MIN_POOL",
    "POOL_FACTOR",
    "ROUNDS",
    "TARGET",
    "THRESHOLD",
    "FilterResult",
    "aflite",
    "aflite_items",
    "item_arrays",
    "key_value_rank",
    "oof_key_probabilities",
    "select_balanced",
]

LETTERS = ("A", "B", "C", "D")
#: folds of whole questions in every cross-validation
FOLDS = 4
#: a question is dropped when its key's mean held-out probability exceeds this (chance 0.25)
THRESHOLD = 0.33
#: at most this share of the remaining questions is dropped per round
MAX_DROP = 0.2
#: the filter stops once every model's held-out accuracy is at most this
TARGET = 0.26
#: at most this many rounds
ROUNDS = 8
#: the candidate pool is this many times ``n`` ...
POOL_FACTOR = 2.6
#: the filter stops dropping when this many times ``n`` questions remain (for the balanced
#: selection, which needs every value rank of a family)
SPARE = 2.0
#: ... and at least this many items
MIN_POOL = 400
#: times the pool may grow by half when the survivors cannot fill ``n`` balanced items
MAX_GROWTH = 1
#: the model kinds of the filter
KINDS = ("linear", "trees")


def item_arrays(
    items: pd.DataFrame,
) -> tuple[dict[str, np.ndarray], dict[str, list[str]], np.ndarray, np.ndarray]:
    """Features (``name -> [n, 4]``), their groups, each question's key index and family code,
    from a MalAlgoQA-format frame (``family`` optional)."""
    choices = [[str(r[f"choice_{x}"]) for x in LETTERS] for r in items.to_dict("records")]
    rationales = [[str(r[f"rationale_{x}"]) for x in LETTERS] for r in items.to_dict("records")]
    values = np.array(
        [[np.nan if (v := choice_value(c)) is None else float(v) for c in row] for row in choices]
    ).reshape(-1, 4)
    feats, groups = feature_grids(
        values, choices, rationales, items["question"].astype(str).tolist()
    )
    key = items["answer"].map({x: i for i, x in enumerate(LETTERS)}).to_numpy(dtype=int)
    fam = items["family"] if "family" in items else pd.Series([""] * len(items))
    codes = pd.factorize(fam.fillna("").astype(str), sort=True)[0]
    return feats, groups, key, codes


def _stack(feats: dict[str, np.ndarray], names: list[str]) -> np.ndarray:
    return np.stack([feats[k] for k in names], axis=-1)


def _model(kind: str, seed: int, categorical: int | None):
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if kind == "linear":
        return make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=1000))
    if kind == "trees":
        return HistGradientBoostingClassifier(
            max_iter=80, learning_rate=0.1, max_leaf_nodes=15, min_samples_leaf=20,
            l2_regularization=1.0, early_stopping=False, random_state=seed,
            categorical_features=None if categorical is None else [categorical],
        )  # fmt: skip
    raise ValueError(f"unknown model kind {kind!r}; expected linear or trees")


def question_folds(n: int, folds: int, seed: int) -> np.ndarray:
    """A seeded fold for each of ``n`` questions (sizes differ by at most one)."""
    fold = np.empty(n, dtype=int)
    fold[np.random.default_rng(seed).permutation(n)] = np.arange(n) % folds
    return fold


def oof_key_probabilities(
    x: np.ndarray,
    key: np.ndarray,
    kind: str,
    *,
    family: np.ndarray | None = None,
    folds: int = FOLDS,
    seed: int = 0,
) -> np.ndarray:
    """``[n, 4]`` held-out probability that each option is the key, normalised over the four.

    ``x`` is ``[n, 4, p]`` per-option features; the model (``kind``: ``"linear"`` or
    ``"trees"``) is a per-option binary classifier, fitted on the options of the other folds'
    questions (folds of whole questions, seeded); ``family`` (integer codes) is given to the
    trees as a categorical feature.
    """
    n, m, p = x.shape
    rows = x.reshape(n * m, p)
    cat = family is not None and kind == "trees"
    if family is not None and cat:
        rows = np.concatenate([rows, np.repeat(family, m)[:, None].astype(float)], axis=1)
    y = (np.arange(m)[None, :] == key[:, None]).ravel().astype(int)
    fold = question_folds(n, folds, seed)
    out = np.full((n, m), 1.0 / m)
    opt_fold = np.repeat(fold, m)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # one thread: no OpenMP spinning on a busy machine
        _fit_folds(rows, y, fold, opt_fold, folds, kind, seed, p if cat else None, out)
    return out


def _fit_folds(rows, y, fold, opt_fold, folds, kind, seed, cat, out) -> None:
    m = out.shape[1]
    for f in range(folds):
        train, test = opt_fold != f, opt_fold == f
        if not test.any() or len(np.unique(y[train])) < 2:
            continue
        model = _model(kind, seed + f, cat).fit(rows[train], y[train])
        prob = model.predict_proba(rows[test])[:, 1].reshape(-1, m)
        out[fold == f] = prob / np.maximum(prob.sum(axis=1, keepdims=True), 1e-12)


@dataclass
class FilterResult:
    """Outcome of :func:`aflite`: ``keep`` (bool per question) and ``history`` (one row per
    round and model: ``round, questions, kind, group, accuracy``)."""

    keep: np.ndarray
    history: pd.DataFrame


def aflite(
    feats: dict[str, np.ndarray],
    groups: dict[str, list[str]],
    key: np.ndarray,
    family: np.ndarray,
    *,
    seed: int = 0,
    rounds: int = ROUNDS,
    threshold: float = THRESHOLD,
    max_drop: float = MAX_DROP,
    target: float = TARGET,
    folds: int = FOLDS,
    floor: int = 0,
) -> FilterResult:
    """Iterated adversarial filtering (see the module docstring): which questions survive."""
    sets = {"all": [k for g in groups.values() for k in g], CHOICE_GROUP: groups[CHOICE_GROUP]}
    x = {name: _stack(feats, cols) for name, cols in sets.items()}
    keep = np.ones(len(key), dtype=bool)
    log = []
    for r in range(rounds):
        idx = np.flatnonzero(keep)
        if len(idx) < 4 * folds:
            break
        score = np.zeros(len(idx))
        worst = 0.0
        for name, xs in x.items():
            for kind in KINDS:
                prob = oof_key_probabilities(xs[idx], key[idx], kind, family=family[idx],
                                             folds=folds, seed=seed * 1009 + r)  # fmt: skip
                acc = float((prob.argmax(axis=1) == key[idx]).mean())
                log.append({"round": r, "questions": len(idx), "kind": kind, "group": name,
                            "accuracy": acc})  # fmt: skip
                worst = max(worst, acc)
                score += prob[np.arange(len(idx)), key[idx]] / (len(x) * len(KINDS))
        if worst <= target or wilson_interval(round(worst * len(idx)), len(idx), 0.05)[0] <= 0.25:
            break  # at the target, or no model above chance beyond sampling error
        over = np.flatnonzero(score > threshold)
        if not len(over):
            break
        cap = min(max(1, int(max_drop * len(idx))), len(idx) - floor)
        if cap <= 0:
            break
        drop = over[np.argsort(-score[over], kind="stable")[:cap]]
        keep[idx[drop]] = False
    return FilterResult(keep=keep, history=pd.DataFrame(log))


def floor(n: int) -> int:
    """Survivors the filter keeps at least, for ``n`` balanced items: :data:`SPARE` more."""
    return int(np.ceil(SPARE * n))


def aflite_items(items: pd.DataFrame, *, seed: int = 0, floor: int = 0) -> FilterResult:
    """:func:`aflite` on a MalAlgoQA-format frame (at least ``floor`` questions kept)."""
    feats, groups, key, family = item_arrays(items)
    return aflite(feats, groups, key, family, seed=seed, floor=floor)


def key_value_rank(items: pd.DataFrame) -> np.ndarray:
    """The key's rank among its question's four values (1 = smallest; 0 where a choice is not a
    number)."""
    vals = np.array(
        [
            [np.nan if (v := choice_value(str(r[f"choice_{x}"]))) is None else float(v)
             for x in LETTERS]
            for r in items.to_dict("records")
        ]
    ).reshape(-1, 4)  # fmt: skip
    key = items["answer"].map({x: i for i, x in enumerate(LETTERS)}).to_numpy(dtype=int)
    kv = vals[np.arange(len(vals)), key]
    rank = 1 + (vals < kv[:, None]).sum(axis=1)
    return np.where(np.isnan(vals).any(axis=1), 0, rank)


def select_balanced(items: pd.DataFrame, keep: np.ndarray, n: int, seed: int) -> np.ndarray | None:
    """Indices (in pool order) of ``n`` kept items such that, within every family, the key's
    value rank is 1, 2, 3 and 4 equally often (to within one): families in a seeded turn each
    give one kept item of every rank, the earliest in the pool first, until ``n`` are taken;
    a family stops giving when one of its ranks runs out.  ``None`` when fewer than ``n``
    can be taken so."""
    rank = key_value_rank(items)
    fam = (
        items["family"].astype(str).to_numpy() if "family" in items else np.array([""] * len(items))
    )
    buckets: dict[str, list[list[int]]] = {}
    for i in np.flatnonzero(keep):
        if rank[i] == 0:
            continue
        buckets.setdefault(fam[i], [[], [], [], []])[rank[i] - 1].append(int(i))
    rng = np.random.default_rng([seed, 34])
    names = sorted(buckets)
    names = [names[int(k)] for k in rng.permutation(len(names))]
    chosen: list[int] = []
    depth = 0
    while len(chosen) < n:
        active = [f for f in names if all(len(b) > depth for b in buckets[f])]
        if not active:
            return None
        for f in active:
            for r in rng.permutation(4):
                if len(chosen) < n:
                    chosen.append(buckets[f][int(r)][depth])
        depth += 1
    return np.sort(np.array(chosen, dtype=int))
