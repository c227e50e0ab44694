"""Items built around a hub: the key is the centre of its item only a quarter of the time
(``malalgo generate --hub``; issue 34).

Every mal-rule perturbs one step of the correct procedure, so in a plain item the key is the centre
of a star: each distractor's rationale (and often its value) is the key's with one step changed,
and "the option the other three resemble" is the key (54% of items by character similarity, and a
tree ensemble on per-choice features finds it in 90%; benchmarks/RESULTS.md).  Filtering cannot
remove a cue that nearly every item carries.

Here the star's centre - the **hub** - is drawn among the four options.  A family whose procedure
is written as steps (:class:`~.model.Steps`: each mal-rule replaces one step by its flawed
version) has *malgorithms* with several flawed steps: rules on different steps compose, the answer
being the flawed procedure run on the problem's numbers and the rationale the family's template
with every flawed step's words and numbers (a student holding two bugs at once; VanLehn 1990).
An item is four malgorithms - the correct one (no flawed step: the key) and three others - such
that one of them, the hub, differs from each of the other three in exactly one step:

* hub = the key: the three distractors are one-flaw malgorithms (a plain item's star);
* hub = a one-flaw malgorithm ``M``: the other options are the key (``M`` with its flaw removed)
  and two of ``M``'s other neighbours - ``M`` with a second step flawed (a two-flaw malgorithm) or
  with its flawed step flawed another way.

In both cases the hub's neighbours are one step from it and the shape of the item (which options
share which step) does not say which option is the key: whether a one-step difference adds or
removes a flaw is what the mathematics decides.  Within every family the key is the hub a quarter
of the time, and its value rank and its rationale's rank in character similarity to the other
three (which need not follow the hub) are each of 1-4 a quarter of the time: each item is taken
among the
candidates (all valid hub items on :data:`~.balance.PROBLEMS_PER_ITEM` freshly drawn problems,
more drawn while none is what the family's counts need) whose ranks and role bring those counts
nearest their targets (:class:`Deficit`), and among those the surface features are balanced by
herding (:class:`~.balance.Balancer`), as in plain generation.

Families whose procedures are not written as steps have no hub items: :func:`generate` draws only
the families of :data:`STEPS` (:func:`hub_families`).  Items keep :data:`~.items.ITEM_COLUMNS`;
a composed distractor's ``malrule_X`` names its rules joined by ``+``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations, product
from types import MappingProxyType
from typing import Any

import numpy as np

from . import balance
from .families import STEPS as _ALL_STEPS
from .key_cues import char_similarity
from .library import FAMILIES, baseline_difficulty, build_problem, eligible_families, family_order
from .model import Choice, Problem, Steps
from .values import format_value

__all__ = [
    "HUB",
    "LEAF",
    "STEPS",
    "Candidate",
    "candidates",
    "explain",
    "generate",
    "hub_families",
    "label",
    "malgorithms",
    "run",
]

#: the families whose procedures are written as steps, by id
STEPS: Mapping[str, Steps] = MappingProxyType({s.family: s for s in _ALL_STEPS})
#: the key's role in an item: the hub, or one of the hub's three neighbours
HUB, LEAF = 1, 2
#: a malgorithm has at most this many flawed steps
MAX_FLAWS = 2
#: rounds of :data:`~.balance.PROBLEMS_PER_ITEM` problems drawn to meet an item's target
ROUNDS = 12
#: ... while the best candidate's cost exceeds the ideal by more than this (2: one margin one
#: count off, which the next items of the family make up)
SLACK = 2.0
#: at most this many of the candidates meeting the value rank and role are measured for the
#: key's rationale centrality (character similarity is slow)
CENTRAL_CAP = 24
_MAX_DRAWS = 2000
LETTERS = ("A", "B", "C", "D")


def _steps(family: str) -> Steps:
    if family not in STEPS:
        raise ValueError(
            f"family {family!r} has no step procedure; hub items exist for: "
            + ", ".join(sorted(STEPS))
        )
    return STEPS[family]


def label(choice: Choice) -> str:
    """The rules of a malgorithm joined by ``+`` (``""`` for the correct procedure)."""
    return "+".join(r for r in choice if r is not None)


def malgorithms(family: str, max_flaws: int = MAX_FLAWS) -> list[Choice]:
    """Every choice of steps with at most ``max_flaws`` flawed steps, the correct one first."""
    st = _steps(family)
    out = [c for c in product(*[(None, *alts) for alts in st.steps])]
    out = [c for c in out if sum(r is not None for r in c) <= max_flaws]
    return sorted(out, key=lambda c: sum(r is not None for r in c))


def run(problem: Problem, choice: Choice) -> Fraction | None:
    """The answer of the malgorithm ``choice`` on ``problem`` (``None`` where it has no meaning)."""
    v = _steps(problem.family).answer(problem.params, choice)
    return None if v is None else Fraction(v)


def explain(problem: Problem, choice: Choice) -> str:
    """The reasoning of the malgorithm ``choice`` on ``problem`` (never its final result)."""
    return _steps(problem.family).explain(problem.params, choice)


def _differ(a: Choice, b: Choice) -> int:
    return sum(x != y for x, y in zip(a, b, strict=True))


@dataclass(frozen=True)
class Candidate:
    """The hub items of one problem: ``options[k]`` the four malgorithms of item ``k`` (the key's
    first, then the hub's if it is not the key), ``role[k]`` :data:`HUB` or :data:`LEAF`,
    ``value_rank[k]`` the key's rank among the four values (1 = smallest) and ``delta[k]`` its
    surface imbalance (:func:`~.balance.imbalance`); ``texts[i]`` is the rationale of
    ``choices[i]``."""

    problem: Problem
    choices: list[Choice]
    options: np.ndarray
    role: np.ndarray
    value_rank: np.ndarray
    delta: np.ndarray
    texts: list[str]


def _shapes(choices: list[Choice]) -> tuple[list[tuple[int, int, int, int]], list[int]]:
    """Every hub item over ``choices`` (index 0 the correct one): four indices, key first."""
    flaws = [sum(r is not None for r in c) for c in choices]
    near = [[j for j in range(len(choices)) if _differ(choices[i], choices[j]) == 1]
            for i in range(len(choices))]  # fmt: skip
    items: list[tuple[int, int, int, int]] = []
    roles: list[int] = []
    for trio in combinations(near[0], 3):
        items.append((0, *trio))
        roles.append(HUB)
    for hub in near[0]:
        if flaws[hub] != 1:
            continue
        for pair in combinations([j for j in near[hub] if j != 0], 2):
            items.append((0, hub, *pair))
            roles.append(LEAF)
    # exactly one hub: when the three neighbours share one step, all four options are hubs
    one = [sum(all(_differ(choices[i], choices[j]) == 1 for j in s if j != i) for i in s) == 1
           for s in items]  # fmt: skip
    return ([s for s, k in zip(items, one, strict=True) if k],
            [r for r, k in zip(roles, one, strict=True) if k])  # fmt: skip


def candidates(problem: Problem) -> Candidate | None:
    """Every valid hub item of ``problem`` - four distinct values, four distinct rationales -
    or ``None`` when it has none."""
    fam = FAMILIES[problem.family]
    choices, values, texts = [], [], []
    for c in malgorithms(problem.family):
        v = run(problem, c)
        if v is not None:
            choices.append(c)
            values.append(v)
            texts.append(explain(problem, c))
    if not choices or choices[0] != (None,) * len(choices[0]):
        return None
    shapes, roles = _shapes(choices)
    vid, tid = balance._ids(values), balance._ids(texts)
    ok = [len({vid[i] for i in s}) == 4 and len({tid[i] for i in s}) == 4 for s in shapes]
    if not any(ok):
        return None
    opts = np.array([s for s, k in zip(shapes, ok, strict=True) if k], dtype=int)
    role = np.array([r for r, k in zip(roles, ok, strict=True) if k], dtype=int)
    asked = balance._numbers(problem.question)
    raw = np.array([balance._raw(v, format_value(v, fam.kind), t, asked)
                    for v, t in zip(values, texts, strict=True)], dtype=float)  # fmt: skip
    vals = np.array([float(v) for v in values])[opts]
    rank = 1 + (vals[:, 1:] < vals[:, :1]).sum(axis=1)
    return Candidate(problem, choices, opts, role, rank, balance.imbalance(raw[opts]), texts)


def _draw(family: str, grade: int, rng: np.random.Generator) -> list[Candidate]:
    """:data:`~.balance.PROBLEMS_PER_ITEM` problems of ``family`` that have hub items."""
    fam = FAMILIES[family]
    found: list[Candidate] = []
    for _ in range(_MAX_DRAWS):
        cand = candidates(build_problem(family, fam.sample(rng, grade), grade, 0.0))
        if cand is not None:
            found.append(cand)
            if len(found) == balance.PROBLEMS_PER_ITEM:
                break
    if not found:
        raise RuntimeError(f"could not draw a {family} problem with hub items in {_MAX_DRAWS}")
    return found


class Deficit:
    """How far a family's items so far are from the targets - the key's value rank each of 1-4
    a quarter of the time, its rationale's centrality rank likewise, and the key the hub a
    quarter of the time - and the cost of a next item with value rank ``r``, centrality rank
    ``c`` and role ``h`` (herding on the one-hot counts: the squared distance of the counts after
    it from their targets), so that where a family's rules never give some combination the
    others make up for it and every margin stays even."""

    def __init__(self) -> None:
        self.items = 0
        self.ranks = np.zeros(4)
        self.central = np.zeros(4)
        self.hubs = 0.0

    def cost(
        self, rank: np.ndarray, role: np.ndarray, central: np.ndarray | None = None
    ) -> np.ndarray:
        """The cost of each candidate (without the centrality term when ``central`` is None)."""
        t = (self.items + 1) / 4
        four = np.arange(1, 5)[None, :]
        after = self.ranks[None, :] + (four == rank[:, None])
        hubs = self.hubs + (role == HUB)
        leaves = self.items + 1 - hubs
        out = ((after - t) ** 2).sum(axis=1) + (hubs - t) ** 2 + (leaves - 3 * t) ** 2
        if central is not None:
            out = out + ((self.central[None, :] + (four == central[:, None]) - t) ** 2).sum(axis=1)
        return out

    def ideal(self) -> float:
        """The least cost (without centrality) any next item could have."""
        r, h = np.repeat(np.arange(1, 5), 2), np.tile([HUB, LEAF], 4)
        return float(self.cost(r, h).min())

    def add(self, rank: int, role: int, central: int) -> None:
        self.items += 1
        self.ranks[rank - 1] += 1
        self.central[central - 1] += 1
        self.hubs += role == HUB


def _choose(
    family: str,
    grade: int,
    rng: np.random.Generator,
    balancer: balance.Balancer,
    deficit: Deficit,
) -> tuple[Problem, list[Choice]]:
    """The next item of ``family``: the candidates whose key's value rank and role cost least
    (:class:`Deficit`; problems drawn in up to :data:`ROUNDS` rounds while none comes within
    :data:`SLACK` of the ideal), at most :data:`CENTRAL_CAP` of them measured for the key's
    rationale centrality, those of least cost with it, and among them the one the balancer
    picks.  Returns the problem and the four malgorithms (key
    first)."""
    pool: list[Candidate] = []
    ideal = deficit.ideal()
    for _ in range(ROUNDS):
        pool += _draw(family, grade, rng)
        costs = [deficit.cost(c.value_rank, c.role) for c in pool]
        best = min(float(c.min()) for c in costs)
        if best <= ideal + SLACK:
            break
    flat = [
        (p, int(k)) for p, cost in enumerate(costs) for k in np.flatnonzero(cost <= best + 1e-9)
    ]
    if len(flat) > CENTRAL_CAP:
        flat = [flat[int(i)] for i in np.sort(rng.choice(len(flat), CENTRAL_CAP, replace=False))]
    memo: dict[tuple[int, int, int], float] = {}
    central = np.array([_central_rank(pool[p], p, k, memo) for p, k in flat])
    rank = np.array([pool[p].value_rank[k] for p, k in flat])
    role = np.array([pool[p].role[k] for p, k in flat])
    full = deficit.cost(rank, role, central)
    keep = np.flatnonzero(full <= full.min() + 1e-9)
    deltas = np.array([pool[flat[i][0]].delta[flat[i][1]] for i in keep])
    j = int(keep[balancer.choose(family, deltas, rng)])
    cand, k = pool[flat[j][0]], flat[j][1]
    deficit.add(int(rank[j]), int(role[j]), int(central[j]))
    return cand.problem, [cand.choices[i] for i in cand.options[k]]


def _central_rank(cand: Candidate, p: int, k: int, memo: dict[tuple[int, int, int], float]) -> int:
    """The key's rationale's rank in centrality in item ``k`` of ``cand`` (problem ``p`` of the
    pool; ``memo`` keeps the similarities measured): 1 + how many of the other three have a
    larger summed character similarity (difflib, as ``malalgo audit``) to the rest."""
    opts = [int(i) for i in cand.options[k]]
    sim = np.zeros((4, 4))
    for a in range(4):
        for b in range(a + 1, 4):
            pair = (p, min(opts[a], opts[b]), max(opts[a], opts[b]))
            if pair not in memo:
                memo[pair] = char_similarity(cand.texts[pair[1]], cand.texts[pair[2]])
            sim[a, b] = sim[b, a] = memo[pair]
    total = sim.sum(axis=1)
    return 1 + int((total[1:] > total[0] + 1e-12).sum())


def _row(problem: Problem, options: list[Choice], rng: np.random.Generator, item_id: str) -> dict:
    """The four malgorithms (key first) at seeded positions, as a row of
    :data:`~.items.ITEM_COLUMNS`."""
    kind = FAMILIES[problem.family].kind
    order = rng.permutation(4)
    row: dict[str, Any] = {"id": item_id, "question": problem.question}
    for letter, k in zip(LETTERS, order, strict=True):
        c = options[int(k)]
        value = run(problem, c)
        assert value is not None
        row[f"choice_{letter}"] = format_value(value, kind)
        row[f"rationale_{letter}"] = explain(problem, c)
        row[f"malrule_{letter}"] = label(c)
        if k == 0:
            row["answer"] = letter
    row.update(grade=problem.grade, content=problem.content, dok=problem.dok,
               family=problem.family, difficulty=problem.difficulty,
               params=json.dumps(problem.params, sort_keys=True))  # fmt: skip
    return row


def hub_families(grades: list[int] | None = None, contents: list[str] | None = None) -> list[str]:
    """The families with hub items among those eligible for ``grades`` and ``contents``."""
    return [f.id for f in eligible_families(grades, contents) if f.id in STEPS]


def generate(
    n: int, seed: int, grades: list[int] | None = None, contents: list[str] | None = None
) -> list[dict[str, Any]]:
    """``n`` seeded hub items (see the module docstring; one dict of
    :data:`~.items.ITEM_COLUMNS` each) of the families in :data:`STEPS`, families dealt in seeded
    rounds as in plain generation; item ``i`` has its own random stream, so the first ``k`` items
    of ``n`` are the ``k`` items."""
    fams = hub_families(grades, contents)
    if not fams:
        raise ValueError(
            "no family with hub items matches the grades and contents asked for; hub items "
            "exist for: " + ", ".join(sorted(STEPS))
        )
    schedule_ss, items_ss = np.random.SeedSequence([seed, 34]).spawn(2)
    order = family_order(np.random.default_rng(schedule_ss), fams, n)
    width = max(4, len(str(n)))
    balancer, deficits = balance.Balancer(), {f: Deficit() for f in fams}
    rows = []
    for i, item_ss in enumerate(items_ss.spawn(n)):
        rng = np.random.default_rng(item_ss)
        fam = FAMILIES[order[i]]
        allowed = [g for g in fam.grades if grades is None or g in grades]
        grade = allowed[int(rng.integers(len(allowed)))]
        problem, options = _choose(fam.id, grade, rng, balancer, deficits[fam.id])
        difficulty = round(baseline_difficulty(fam.id, grade) + rng.normal(0.0, 0.3), 3)
        problem = build_problem(fam.id, problem.params, grade, difficulty)
        rows.append(_row(problem, options, rng, f"mal{i + 1:0{width}d}"))
    return rows
