"""Target ranks for the key: where its value falls among the four and how central its rationale is
(the structural half of issue 34's fix; :mod:`.adversarial` is the learned half).

Every mal-rule perturbs the correct procedure, so left to itself the key is the *centre* of its
item: its value sits between the distractors' (a borrowing bug adds, a dropped carry subtracts)
and its rationale is the one the other three resemble (each is the key's with one step changed).
Balancing averages over a set (:mod:`.balance`) cannot remove that within a family.  Instead each
item of a family is given a target: the key's rank among the four values (1 = smallest) and its
rationale's rank in centrality (1 = the most similar to the other three, character 3-gram
Jaccard, :func:`~.key_cues.trigram_similarity`), dealt in blocks of four so that every rank comes
up equally often in every family (:func:`deal`), and the item is drawn among the valid sets of
three distractor rules whose key has those ranks (:func:`closest`) - drawing more problems when
none does.  Where a family's rules never put the key at some rank the closest sets are taken; the
adversarial filter then removes what stays predictable.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .key_cues import _trigrams
from .library import _value, rationale
from .model import Problem

__all__ = ["closest", "deal", "ranks"]

Candidate = tuple[Problem, list[str], np.ndarray, np.ndarray]


def deal(rng: np.random.Generator, count: int) -> list[tuple[int, int]]:
    """``count`` targets ``(value rank, centrality rank)``: in every block of four, each value
    rank once and each centrality rank once, in two independent seeded orders."""
    out: list[tuple[int, int]] = []
    while len(out) < count:
        a, b = rng.permutation(4) + 1, rng.permutation(4) + 1
        out += [(int(x), int(y)) for x, y in zip(a, b, strict=True)]
    return out[:count]


def ranks(problem: Problem, rules: list[str], trios: np.ndarray) -> np.ndarray:
    """``[k, 2]``: for each trio of distractor rules, the key's value rank (1 = smallest) and
    its rationale's centrality rank (1 = most central) among the four options."""
    answers = [_value(problem, None)] + [_value(problem, r) for r in rules]
    vals: np.ndarray = np.array([float(a) for a in answers if a is not None], dtype=float)
    grams = [_trigrams(rationale(problem))] + [_trigrams(rationale(problem, r)) for r in rules]
    m = len(grams)
    sim = np.zeros((m, m))
    for i in range(m):
        for j in range(i + 1, m):
            sim[i, j] = sim[j, i] = len(grams[i] & grams[j]) / max(1, len(grams[i] | grams[j]))
    idx = np.concatenate([np.zeros((len(trios), 1), dtype=int), trios + 1], axis=1)
    v = vals[idx]
    value_rank = 1 + (v[:, 1:] < v[:, :1]).sum(axis=1)
    s = sim[idx[:, :, None], idx[:, None, :]].sum(axis=2)  # [k, 4]: summed similarity
    central_rank = 1 + (s[:, 1:] > s[:, :1] + 1e-12).sum(axis=1)
    return np.stack([value_rank, central_rank], axis=1)


def closest(
    found: list[Candidate],
    target: tuple[int, int],
    more: Callable[[], list[Candidate]],
    rounds: int,
) -> list[Candidate]:
    """The candidates whose trios come closest to ``target``: a missed value rank costs 4, a
    centrality rank ``d`` places from its target ``d`` (so that an unattainable "least central"
    falls back on the next least central, not on any); new problems (``more()``) are drawn up to
    ``rounds`` times while no trio has the target value rank."""
    pool = list(found)
    for attempt in range(rounds):
        scored = []
        for problem, rules, trios, delta in pool:
            r = ranks(problem, rules, trios)
            miss = 4 * (r[:, 0] != target[0]) + np.abs(r[:, 1] - target[1])
            scored.append((problem, rules, trios, delta, miss))
        best = min(int(s[4].min()) for s in scored)
        if best == 0 or attempt == rounds - 1:
            break
        pool += more()
    out = []
    for problem, rules, trios, delta, miss in scored:
        keep = miss == best
        if keep.any():
            out.append((problem, rules, trios[keep], delta[keep]))
    return out
