"""Distractors chosen so that the key carries no surface cue (P3 ``malalgo generate``; issue 18).

Left to themselves the mal-rules mark the key: borrowing bugs always *add* to a difference,
fraction "whole-number" rules always give less than the sum, a place-value slip gives a value ten
times too large while the key is never an outlier, and the correct reasoning often has one step
more than a malgorithm.  Over 3,000 items of the first generator the longest rationale was the
key's in 41% (chance 25%), the key was one of the two middle values in 63% (chance 50%), and a
logistic model on such features picked the key in 46%.

Two things remove the cues:

1. **A larger pool.** Every family has more mal-rules than an item needs (5-7; comparing
   decimals keeps 3, its four choices being the four numbers it lists), with answers on both
   sides of the correct one and rationales of varied length, so that a problem admits several
   valid sets of three distractors (:func:`table`: distinct answers, distinct
   rationales, none equal to the key's); each item chooses among the sets of
   :data:`PROBLEMS_PER_ITEM` freshly drawn problems (:func:`candidates`).
2. **Balancing by herding** (Welling 2009; Chen, Welling & Smola 2010).  Each option of a
   candidate item is described by :data:`FEATURES` - what a reader sees without solving: the
   value's rank among the four, its order of magnitude and its distance from the other three
   (and that distance's rank), the choice's text length and rank, whether it is a whole number
   or written in the question, the rationale's length in characters and words, how many
   numbers and operation symbols it writes, and the ranks of these.  A candidate's
   **imbalance** ``δ`` is the key's features minus the mean of the four options' (a rank as the
   key's one-hot rank minus 1/4, ties shared as a random tie-break shares them, and again with
   ties given their lowest rank).  :class:`Balancer` keeps the running sums ``S_f`` of the
   chosen ``δ`` over the items of each family and ``S`` over all items, and takes, for every
   new item, the candidate minimising ``H(S_f + δ) + w·|S + δ|²`` in the Mahalanobis metric of
   the candidates' spread (``H``: Huber with threshold :data:`HUBER`; ``w`` =
   :data:`POOLED_WEIGHT`).  ``S`` stays bounded, so the mean imbalance of every feature over the
   generated set goes to zero like ``1/n`` - the first-order condition of every linear "which
   option is the key" model, and for a one-hot rank exactly "each single cue picks the key a
   quarter of the time".  ``S_f`` is held back too, with a bounded force (Huber), so that a
   family keeps what balance its rules allow while the directions it cannot balance (the order
   of operations has only two wrong groupings below the correct value, so its key is never the
   largest) are offset by the other families.

What this does not give: balance *within* every family.  Where a family's rules leave the key
no room (order of operations, prism volume) or the pooled balance leans on a family, per-family
rates stay far from chance - ``malalgo audit`` reports them per family, and the docs' P3
page (docs/protocols/p3-malalgo.md) lists them.  And because each choice depends on the items
before it, the imbalances of different items are slightly negatively correlated: a model
cross-validated on a balanced set tends to land a little *below* chance (it learns the training items' residual imbalance, which the test
items offset), which the audit reports like any other deviation.

Items stay reproducible and prefix-stable (the first ``k`` items of ``n`` are the ``k`` items):
what is random - the numbers, the problems drawn, the key's position - comes from each item's
own seeded stream.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from fractions import Fraction
from functools import cache
from itertools import combinations

import numpy as np

from .library import FAMILIES, RULES, _value, build_problem, correct_answer, rationale, rule_answer
from .model import Problem

__all__ = [
    "FEATURES",
    "HUBER",
    "POOLED_WEIGHT",
    "PRIOR_WEIGHT",
    "PROBLEMS_PER_ITEM",
    "Balancer",
    "candidates",
    "imbalance",
    "table",
]

#: problems drawn per item; the item chooses among the valid sets of rules on all of them
PROBLEMS_PER_ITEM = 6
#: weight of the running imbalance over all families against the family's own
POOLED_WEIGHT = 0.5
#: where a family's imbalance (in whitened units) stops counting quadratically
HUBER = 4.0
#: items between two updates of the Mahalanobis metric (an eigendecomposition)
WHITEN_EVERY = 25
#: weight, in candidates, of the prior (unit-scale) covariance in the Mahalanobis metric
PRIOR_WEIGHT = 50.0

_RANKS = ("1", "2", "3", "4")
#: the per-option features balanced, with the scale each is divided by (about its spread
#: between the options of one item, so that every component weighs alike)
FEATURES: tuple[tuple[str, float], ...] = (
    *((f"value rank={r}", 0.43) for r in _RANKS),
    ("magnitude", 0.49),
    ("distance from the others", 0.34),
    *((f"distance rank={r}", 0.43) for r in _RANKS),
    ("choice length", 0.17),
    *((f"choice length rank={r}", 0.35) for r in _RANKS),
    ("whole number", 0.22),
    ("in question", 0.20),
    ("rationale characters", 0.055),
    *((f"rationale characters rank={r}", 0.35) for r in _RANKS),
    ("rationale words", 0.082),
    *((f"rationale words rank={r}", 0.3) for r in _RANKS),
    ("rationale numbers", 0.89),
    *((f"rationale numbers rank={r}", 0.35) for r in _RANKS),
    ("rationale symbols", 1.31),
    *((f"rationale symbols rank={r}", 0.35) for r in _RANKS),
    ("rationale characters ties", 0.5),
    ("rationale words ties", 0.5),
    *((f"rationale characters lowest rank={r}", 0.4) for r in _RANKS),
    *((f"rationale words lowest rank={r}", 0.4) for r in _RANKS),
    *((f"choice length lowest rank={r}", 0.4) for r in _RANKS),
)
_SCALE = np.array([s for _, s in FEATURES])

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:/\d+)?")
_SYMBOLS = re.compile(r"[+\-−×÷=/()*]")


@cache
def _family_rules(family: str) -> tuple[str, ...]:
    """The family's rules in catalogue order."""
    return tuple(r for r in RULES if r in FAMILIES[family].rules)


def _numbers(text: str) -> set[Fraction]:
    return {Fraction(m.group(0)) for m in _NUMBER.finditer(text)}


def _raw(value: Fraction, choice: str, text: str, asked: set[Fraction]) -> list[float]:
    """An option's raw measurements: value, choice length, whole, in question, rationale
    characters, words, numbers and symbols."""
    return [
        float(value),
        len(choice),
        float(value.denominator == 1),
        float(value in asked),
        len(text),
        len(text.split()),
        len(_NUMBER.findall(text)),
        len(_SYMBOLS.findall(text)),
    ]


def _options(problem: Problem) -> tuple[list[str], np.ndarray, list[Fraction], list[str]]:
    """Every rule that errs on ``problem`` with a rationale of its own, and the raw measurements
    of the key (row 0) and of each such rule's option (rows 1..)."""
    asked = _numbers(problem.question)
    key_value, key_text = _value(problem, None), rationale(problem)
    rows = [_raw(key_value, correct_answer(problem), key_text, asked)]
    rules, values, texts = [], [key_value], [key_text]
    for rule in _family_rules(problem.family):
        v = _value(problem, rule)
        if v is None or v == key_value:
            continue
        text = rationale(problem, rule)
        if text == key_text:
            continue
        rules.append(rule)
        values.append(v)
        texts.append(text)
        rows.append(_raw(v, rule_answer(problem, rule) or "", text, asked))
    return rules, np.array(rows, dtype=float), values, texts


@cache
def _all_trios(n: int) -> np.ndarray:
    return np.array(list(combinations(range(n), 3)), dtype=int).reshape(-1, 3)


def _ids(items: Sequence) -> np.ndarray:
    """Equal items get equal small integers (cheap equality tests)."""
    seen: dict = {}
    return np.array([seen.setdefault(x, len(seen)) for x in items])


def table(problem: Problem) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Every valid set of three distractor rules for ``problem`` - distinct answers, distinct
    rationales, none equal to the key's: ``(rules, trios, raw)`` where ``trios[k]`` indexes
    ``rules`` and ``raw[k]`` is ``[4, 8]``, the raw measurements of the key and the three."""
    rules, raw, values, texts = _options(problem)
    trios = _all_trios(len(rules))
    if len(trios):
        vid, tid = _ids(values[1:])[trios], _ids(texts[1:])[trios]
        ok = np.ones(len(trios), dtype=bool)
        for ids in (vid, tid):
            ok &= (ids[:, 0] != ids[:, 1]) & (ids[:, 1] != ids[:, 2]) & (ids[:, 0] != ids[:, 2])
        trios = trios[ok]
    sets = np.concatenate([np.zeros((len(trios), 1), dtype=int), trios + 1], axis=1)
    return rules, trios, raw[sets]


def _key_rank_one_hot(x: np.ndarray) -> np.ndarray:
    """``[k, 4]``: the key's (column 0's) rank among the four, one-hot, ties shared equally
    (the expected one-hot under a random tie-break) - minus 1/4."""
    below = (x[:, 1:] < x[:, :1]).sum(axis=1)
    tied = (x[:, 1:] == x[:, :1]).sum(axis=1)
    ranks = np.arange(4)[None, :]
    inside = (ranks >= below[:, None]) & (ranks <= (below + tied)[:, None])
    return inside / (tied + 1)[:, None] - 0.25


def _lowest_rank_dev(x: np.ndarray) -> np.ndarray:
    """``[k, 4]``: the key's rank one-hot with ties given their lowest rank (1 + the number
    strictly below), minus the mean of the four options' one-hots."""
    rank = (x[:, None, :] < x[:, :, None]).sum(axis=2)  # [k, option]: options strictly below
    hot = rank[:, :, None] == np.arange(4)[None, None, :]
    return hot[:, 0, :] - hot.mean(axis=1)


def _ties(x: np.ndarray) -> np.ndarray:
    """How many of the other three options equal each option."""
    return (x[:, :, None] == x[:, None, :]).sum(axis=2) - 1.0


def _dev(x: np.ndarray) -> np.ndarray:
    """The key's value minus the mean of the four."""
    return x[:, 0] - x.mean(axis=1)


def imbalance(raw: np.ndarray) -> np.ndarray:
    """``δ`` of every candidate (``raw``: ``[k, 4, 8]`` from :func:`table`), scaled: ``[k, p]``
    in the order of :data:`FEATURES`."""
    value, chars = raw[..., 0], raw[..., 1]
    mag = np.sign(value) * np.log10(1.0 + np.abs(value))
    dist = np.abs(mag - (mag.sum(axis=1, keepdims=True) - mag) / 3)
    parts = [
        _key_rank_one_hot(value),
        _dev(mag)[:, None],
        _dev(dist)[:, None],
        _key_rank_one_hot(dist),
        _dev(np.log(chars + 1))[:, None],
        _key_rank_one_hot(chars),
        _dev(raw[..., 2])[:, None],
        _dev(raw[..., 3])[:, None],
        _dev(np.log(raw[..., 4] + 1))[:, None],
        _key_rank_one_hot(raw[..., 4]),
        _dev(np.log(raw[..., 5] + 1))[:, None],
        _key_rank_one_hot(raw[..., 5]),
        _dev(raw[..., 6])[:, None],
        _key_rank_one_hot(raw[..., 6]),
        _dev(raw[..., 7])[:, None],
        _key_rank_one_hot(raw[..., 7]),
        _dev(_ties(raw[..., 4]))[:, None],
        _dev(_ties(raw[..., 5]))[:, None],
        _lowest_rank_dev(raw[..., 4]),
        _lowest_rank_dev(raw[..., 5]),
        _lowest_rank_dev(chars),
    ]
    return np.concatenate(parts, axis=1) / _SCALE


def candidates(
    family: str, grade: int, rng: np.random.Generator, draws: int = 2000
) -> list[tuple[Problem, list[str], np.ndarray, np.ndarray]]:
    """:data:`PROBLEMS_PER_ITEM` problems of ``family`` that admit a valid set of distractor
    rules: ``(problem, rules, trios, δ)`` each (:func:`table`, :func:`imbalance`); at most
    ``draws`` problems are drawn."""
    fam = FAMILIES[family]
    found = []
    for _ in range(draws):
        problem = build_problem(family, fam.sample(rng, grade), grade, 0.0)
        rules, trios, raw = table(problem)
        if len(trios):
            found.append((problem, rules, trios, imbalance(raw)))
            if len(found) == PROBLEMS_PER_ITEM:
                break
    return found


def _huber(z: np.ndarray) -> np.ndarray:
    """Squared below :data:`HUBER` and linear above it: a component a family cannot balance
    pulls with a bounded force instead of one growing with the number of items."""
    a = np.abs(z)
    return np.where(a <= HUBER, z**2, 2 * HUBER * a - HUBER**2)


class Balancer:
    """The running imbalance of a generated set, per family and overall (see the module
    docstring); :meth:`choose` picks the next item's candidate and records it.

    Imbalances are measured in the Mahalanobis metric of the candidates' own spread (their
    running covariance, started from :data:`FEATURES`' scales with the weight of
    :data:`PRIOR_WEIGHT` candidates), so that a direction in which the options hardly differ -
    numbers minus symbols in a rationale - counts as much as one in which they differ a lot.
    """

    def __init__(self) -> None:
        p = len(FEATURES)
        self.total = np.zeros(p)
        self.by_family: dict[str, np.ndarray] = {}
        self._n = PRIOR_WEIGHT
        self._sum = np.zeros(p)
        self._outer = PRIOR_WEIGHT * np.eye(p)
        self._white: np.ndarray | None = None
        self._items = 0

    def _whitener(self) -> np.ndarray:
        mean = self._sum / self._n
        cov = self._outer / self._n - np.outer(mean, mean) + 1e-3 * np.eye(len(mean))
        vals, vecs = np.linalg.eigh(cov)
        return vecs / np.sqrt(np.maximum(vals, 1e-6))

    def choose(self, family: str, deltas: np.ndarray, rng: np.random.Generator) -> int:
        """Index of the candidate (row of ``deltas``) minimising ``H(S_f + δ) + w·|S + δ|²``
        (``H``: Huber, ``w`` = :data:`POOLED_WEIGHT`, whitened); exact ties at random."""
        self._n += len(deltas)
        self._sum += deltas.sum(axis=0)
        self._outer += deltas.T @ deltas
        if self._white is None or self._items % WHITEN_EVERY == 0:
            self._white = self._whitener()
        self._items += 1
        white = self._white
        own = self.by_family.get(family, np.zeros_like(self.total))
        cost = _huber((own + deltas) @ white).sum(axis=1)
        cost += POOLED_WEIGHT * (((self.total + deltas) @ white) ** 2).sum(axis=1)
        best = np.flatnonzero(cost <= cost.min() + 1e-9)
        k = int(best[int(rng.integers(len(best)))])
        self.total = self.total + deltas[k]
        self.by_family[family] = own + deltas[k]
        return k
