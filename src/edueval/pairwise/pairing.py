"""Pairing policies for comparative judgement: which two objects to compare next.

One policy, used by ``edueval pairwise simulate --pairing ...`` (:mod:`.simulation`) and by the
study app (``pairing:`` in ``study.yaml``, :mod:`edueval.study.pairing`), so that what the
simulation measures -- the judgements saved, the inflation of the SSR -- is what the app does.

Judgements come in **rounds**: a round pairs every object of a group once (a perfect matching;
with an odd number ``k`` of objects, object ``r mod k`` sits round ``r`` out), so exposure stays
balanced whatever the policy: after any number of whole rounds every object has been compared
equally often.  Within a round the pairs are made one at a time by :func:`next_pair`: the
**anchor** is the first object of the round's seeded random ``order`` not yet paired in the
round, and its **partner**, among the objects not yet paired,

* ``random`` rounds -- the next one in ``order`` (so a round is a uniformly random matching);
* ``adaptive`` rounds -- the one with the most Fisher information ``p (1 - p)`` at the current
  estimates, i.e. the closest estimate (Pollitt 2012's adaptive comparative judgement in its
  simplest form), preferring a partner the anchor has not met before.

The app adds one preference the simulation does not need: a judge should not see the same pair
twice where that is avoidable (``avoid``: above all else, and if every free partner of the anchor
is one the judge has judged with it, the next free anchor in ``order`` is tried first).

Policies (the names of ``--pairing`` and of ``pairing.policy`` in ``study.yaml``):

* ``random`` -- every round random (the balanced random design);
* ``adaptive`` -- after ``random_rounds`` random rounds, adaptive rounds chosen in **two panels**
  of judges, each pairing from the estimates of its own judgements only; the correlation of the
  two panels' estimates (Spearman-Brown) is then an honest reliability, which the SSR under
  adaptive pairing is not (Bramley 2015; Bramley & Vitello 2019);
* ``adaptive-shared`` -- one adaptive stream from all judgements, as adaptive CJ services run it
  (its SSR and its split-half across judges are both inflated).

Estimates: penalised ML (:func:`fit_estimates`, no order effect, ``ridge`` 0.1 by default: the
MAP under N(0, 10) priors, finite when an object has won or lost every comparison so far).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from .design import Design, _observed_pairs
from .ml import fit_ml_design

__all__ = [
    "MET_PENALTY",
    "PANELS",
    "POLICIES",
    "REPEAT_PENALTY",
    "array_design",
    "fit_estimates",
    "next_in_stream",
    "next_pair",
    "round_pairs",
    "sitting_out",
]

#: pairing policies: random; adaptive in two independent panels (the default adaptive design);
#: adaptive-shared, one adaptive stream from all judgements (as adaptive CJ services run it)
POLICIES = ("random", "adaptive", "adaptive-shared")
#: panels of judges per policy (each panel pairs from the estimates of its own judgements)
PANELS = {"random": 1, "adaptive": 2, "adaptive-shared": 1}
#: cost of a partner the anchor has met before, in logits of estimate difference: any unmet
#: partner comes first
MET_PENALTY = 1e3
#: cost of a pair the judge has already judged: avoided before anything else
REPEAT_PENALTY = 1e6


def sitting_out(rnd: int, k: int) -> int | None:
    """The object that sits round ``rnd`` out: ``rnd mod k`` when ``k`` is odd, else none."""
    return rnd % k if k % 2 else None


def next_pair(
    order: np.ndarray,
    free: np.ndarray,
    est: np.ndarray | None = None,
    met: np.ndarray | None = None,
    avoid: np.ndarray | None = None,
) -> tuple[int, int] | None:
    """The next pair ``(anchor, partner)`` of a round (see the module docstring), or None when
    fewer than two objects are free.

    ``order``: the round's random order of the ``k`` objects; ``free`` (k,) bool: not yet paired
    in the round; ``est`` (k,): current estimates (None: a random round); ``met`` (k, k): pairs
    compared before (counts or 0/1); ``avoid`` (k, k): pairs this judge has judged."""
    anchors = [int(a) for a in order if free[a]]
    if len(anchors) < 2:
        return None
    best: tuple[int, int] | None = None
    rank = np.empty(len(order), dtype=float)
    rank[np.asarray(order)] = np.arange(len(order))
    for a in anchors:
        cand = np.flatnonzero(free)
        cand = cand[cand != a]
        cost = rank[cand] if est is None else np.abs(est[cand] - est[a])
        if met is not None:
            cost = cost + MET_PENALTY * (met[a, cand] > 0)
        if avoid is not None:
            cost = cost + REPEAT_PENALTY * (avoid[a, cand] > 0)
        b = int(cand[np.argmin(cost)])
        if best is None:
            best = (a, b)
        if avoid is None or not avoid[a, b]:
            return a, b
    return best


def round_pairs(
    k: int,
    rng: np.random.Generator,
    sit_out: int | None,
    est: np.ndarray | None = None,
    met: np.ndarray | None = None,
) -> list[tuple[int, int]]:
    """A whole round at once (the simulation's rounds): :func:`next_pair` until no pair is left,
    the order drawn from ``rng``; ``est`` None: a random round."""
    order = rng.permutation(k)
    free = np.ones(k, dtype=bool)
    if sit_out is not None:
        free[sit_out] = False
    pairs = []
    while (pair := next_pair(order, free, est, met)) is not None:
        free[list(pair)] = False
        pairs.append(pair)
    return pairs


def next_in_stream(
    k: int,
    pairs: Sequence[tuple[int, int]],
    rounds: Sequence[int],
    order_of: Callable[[int], np.ndarray],
    est: np.ndarray | None = None,
    met: np.ndarray | None = None,
    avoid: np.ndarray | None = None,
    random_rounds: int = 0,
) -> tuple[tuple[int, int], int]:
    """The next pair of a stream made one pair at a time (the study app), and its round.

    ``pairs`` and ``rounds``: the stream so far; ``order_of(r)``: round ``r``'s seeded order.
    The pair is the next one of the current round (:func:`next_pair`; a new round once fewer than
    two objects are free), random in the first ``random_rounds`` rounds and from ``est`` after.
    If it is a pair the judge has judged (``avoid``) and the round is under way, the round is
    closed early and the pair taken from a new one, where all are free again: a judge sees a
    pair twice only when every pair is one they have judged.  (One exposure fewer for the
    objects left in a closed round; rounds made whole, as :func:`round_pairs` makes them, give
    the same pairs as the simulation.)"""

    def free_in(r: int) -> np.ndarray:
        free = np.ones(k, dtype=bool)
        for (i, j), q in zip(reversed(pairs), reversed(rounds), strict=True):
            if q != r:
                break
            free[[i, j]] = False
        out = sitting_out(r, k)
        if out is not None:
            free[out] = False
        return free

    def pick(r: int) -> tuple[int, int] | None:
        return next_pair(order_of(r), free_in(r), est if r >= random_rounds else None, met, avoid)

    rnd = rounds[-1] if len(rounds) else 0
    pair = pick(rnd)
    if pair is None:  # the round is complete
        rnd += 1
        pair = pick(rnd)
    elif avoid is not None and avoid[pair] and len(rounds) and rounds[-1] == rnd:
        fresh = pick(rnd + 1)  # close the round early if a new one holds a pair not seen
        if fresh is not None and not avoid[fresh]:
            pair, rnd = fresh, rnd + 1
    if pair is None:
        raise ValueError(f"no pair can be made of {k} objects")
    return pair, rnd


def array_design(first: np.ndarray, second: np.ndarray, won_first: np.ndarray, k: int) -> Design:
    """One group's :class:`Design` straight from arrays of object indices and outcomes
    (``won_first``: 1 the first won, 0 the second, 0.5 a tie)."""
    w1 = np.asarray(won_first, dtype=float)
    g = np.zeros(len(first), dtype=np.int64)
    pg, pi, pj, pw1, pw2 = _observed_pairs(g, first, second, w1, 1.0 - w1, k)
    n_agent = (np.bincount(first, minlength=k) + np.bincount(second, minlength=k))[None]
    return Design(
        groups=("item",),
        keys=pd.DataFrame({"item": ["sim"]}),
        agents=np.arange(k).astype(object),
        pair_group=pg,
        pair_first=pi,
        pair_second=pj,
        pair_w1=pw1,
        pair_w2=pw2,
        present=np.ones((1, k), dtype=bool),
        n_comparisons=np.array([len(first)]),
        n_ties=np.zeros(1, dtype=np.int64),
        n_agent=n_agent,
    )


def fit_estimates(
    first: np.ndarray,
    second: np.ndarray,
    won_first: np.ndarray,
    k: int,
    ridge: float = 0.1,
    init: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Estimates and standard errors (k,) of ``k`` objects from judgements ``first`` vs
    ``second`` (object indices; ``won_first`` 1, 0 or 0.5 for a tie): penalised ML
    (:func:`.ml.fit_ml_design`, no order effect, sum-to-zero)."""
    design = array_design(
        np.asarray(first, dtype=np.int64), np.asarray(second, dtype=np.int64), won_first, k
    )
    est = fit_ml_design(
        design, ridge=ridge, order_effect=False, init=None if init is None else init[None]
    )
    return est.alpha[0], est.se[0]
