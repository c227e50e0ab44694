"""MalAlgoQA-format multiple-choice items whose distractors come from mal-rules (P3 ``malalgo
generate``; the question bank of P4's synthetic classroom).

Each item is one problem with four choices: the correct answer and three distractors, each the
answer of a *different* mal-rule applicable to the problem, with one rationale per choice - the
correct reasoning for the key, the flawed reasoning (the "malgorithm", Sonkar et al.) for each
distractor. Guarantees, for every item: four distinct choices, no distractor equal to the key,
three distinct rules, four distinct rationales, choices written in the family's one canonical
form (:mod:`.values`), the key's position drawn uniformly. Which problem and which three rules
an item gets is chosen by :mod:`.balance` among the valid sets on a few freshly drawn problems,
so that over the generated set the key is not marked by surface features (its rank among the
values, its rationale's length, its order of magnitude, ...; issue 18). That does not hide the
key from readers who compare the options (issue 34: the key's rationale is the one the others
resemble); ``generate_items(..., adversarial=True)`` adds target ranks (:mod:`.targets`) and
adversarial filtering (:mod:`.adversarial`), which lower but do not remove that cue
(benchmarks/RESULTS.md).

Columns (:data:`ITEM_COLUMNS`): ``id, question, choice_A..choice_D, answer`` (the key's letter),
``rationale_A..rationale_D, grade, content, dok, malrule_A..malrule_D`` (the rule behind each
distractor, empty for the key) - the columns ``malalgo run`` reads - plus ``family``,
``difficulty`` (IRT logits, used by the simulated students) and ``params`` (JSON of the numbers;
:func:`problem_from_item` rebuilds the problem from it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..defaults import SEED
from ..io import load_json
from ..seeding import DEFAULT_SEED
from . import adversarial, balance, targets
from .library import (
    FAMILIES,
    RULES,
    baseline_difficulty,
    build_problem,
    correct_answer,
    eligible_families,
    family_order,
    rationale,
    rule_answer,
)
from .model import Problem

__all__ = ["ITEM_COLUMNS", "LETTERS", "generate_items", "make_item", "problem_from_item"]

LETTERS = ("A", "B", "C", "D")

ITEM_COLUMNS = (
    ["id", "question"]
    + [f"choice_{x}" for x in LETTERS]
    + ["answer"]
    + [f"rationale_{x}" for x in LETTERS]
    + ["grade", "content", "dok"]
    + [f"malrule_{x}" for x in LETTERS]
    + ["family", "difficulty", "params"]
)

_MAX_DRAWS = 2000
#: at most this many rounds of problems are drawn to meet an item's target ranks
_TARGET_ROUNDS = 3


def _valid(problem: Problem, rules: tuple[str, ...]) -> bool:
    answers = [correct_answer(problem)] + [rule_answer(problem, r) for r in rules]
    return None not in answers and len(set(answers)) == len(answers)


def _row(problem: Problem, rules: tuple[str, ...], rng: np.random.Generator, item_id: str) -> dict:
    """Place the key and the three rule distractors at seeded positions."""
    sources: list[str | None] = [None, *rules]
    order = rng.permutation(len(sources))
    row: dict[str, Any] = {"id": item_id, "question": problem.question}
    for letter, k in zip(LETTERS, order, strict=True):
        src = sources[int(k)]
        if src is None:
            row[f"choice_{letter}"] = correct_answer(problem)
            row["answer"] = letter
        else:
            row[f"choice_{letter}"] = rule_answer(problem, src)
        row[f"rationale_{letter}"] = rationale(problem, src)
        row[f"malrule_{letter}"] = src or ""
    row.update(
        grade=problem.grade,
        content=problem.content,
        dok=problem.dok,
        family=problem.family,
        difficulty=problem.difficulty,
        params=json.dumps(problem.params, sort_keys=True),
    )
    return {c: row[c] for c in ITEM_COLUMNS}


def make_item(
    problem: Problem,
    rng: np.random.Generator,
    item_id: str = "q1",
    rules: Iterable[str] | None = None,
) -> dict[str, Any]:
    """One item (a dict with :data:`ITEM_COLUMNS`) for a given problem.

    ``rules`` names the three distractor rules; by default three are drawn (seeded) among the
    rules whose answers on this problem are wrong and pairwise distinct. Raises ``ValueError``
    when that is impossible for this problem's numbers.
    """
    fam = FAMILIES[problem.family]
    if rules is not None:
        given = tuple(rules)
        if len(given) != 3 or len(set(given)) != 3 or not _valid(problem, given):
            raise ValueError(
                "rules must be 3 distinct mal-rules of the family whose answers differ from each "
                "other and from the correct answer"
            )
        return _row(problem, given, rng, item_id)
    candidates = [r for r in RULES if r in fam.rules]
    # a random order, then greedily keep rules whose answers are new
    order = [candidates[int(k)] for k in rng.permutation(len(candidates))]
    chosen: tuple[str, ...] = ()
    for r in order:
        if _valid(problem, (*chosen, r)):
            chosen = (*chosen, r)
        if len(chosen) == 3:
            return _row(problem, chosen, rng, item_id)
    raise ValueError(f"fewer than 3 mal-rules give distinct wrong answers on: {problem.question}")


def _draw(
    family: str,
    grade: int,
    rng: np.random.Generator,
    balancer: balance.Balancer,
    target: tuple[int, int] | None = None,
) -> tuple[Problem, tuple[str, ...]]:
    """A problem of ``family`` and its three distractor rules, chosen by ``balancer`` among the
    valid sets on :data:`~.balance.PROBLEMS_PER_ITEM` freshly drawn problems (:mod:`.balance`).

    With a ``target`` ``(value rank, centrality rank)`` only the sets whose key has that rank
    among the four values (1 = smallest) and that rank of rationale centrality (1 = the most
    central) are offered to the balancer - or, when none has both, those closest to it, more
    problems being drawn (up to :data:`_TARGET_ROUNDS` times as many) while none has the value
    rank (:func:`~.targets.ranks`)."""
    found = balance.candidates(family, grade, rng, _MAX_DRAWS)
    if not found:
        raise RuntimeError(f"could not draw a valid {family} item in {_MAX_DRAWS} tries")
    if target is not None:
        found = targets.closest(found, target, lambda: balance.candidates(family, grade, rng,
                                _MAX_DRAWS), _TARGET_ROUNDS)  # fmt: skip
    k = balancer.choose(family, np.concatenate([f[3] for f in found]), rng)
    for problem, rules, trios, _ in found:
        if k < len(trios):
            return problem, tuple(rules[i] for i in trios[k])
        k -= len(trios)
    raise AssertionError("unreachable")  # pragma: no cover


def _targets(seed: int, families: list[str]) -> dict[str, Iterator[tuple[int, int]]]:
    """Each family's stream of target ranks (:func:`~.targets.deal`), seeded by family name so
    that the ``j``-th item of a family gets the same target whatever ``n``."""

    def stream(rng: np.random.Generator) -> Iterator[tuple[int, int]]:
        while True:
            yield from targets.deal(rng, 4)

    return {fam: stream(np.random.default_rng([seed, *fam.encode()])) for fam in families}


def _generate(
    n: int,
    seed: int,
    grades: list[int] | None,
    contents: list[str] | None,
    targeted: bool,
) -> pd.DataFrame:
    """The item stream (see :func:`generate_items`); ``targeted`` deals target ranks."""
    fams = [f.id for f in eligible_families(grades, contents)]
    schedule_ss, items_ss = np.random.SeedSequence(seed).spawn(2)
    order = family_order(np.random.default_rng(schedule_ss), fams, n)
    width = max(4, len(str(n)))
    balancer = balance.Balancer()
    dealt = _targets(seed, fams) if targeted else {}
    rows = []
    for i, item_ss in enumerate(items_ss.spawn(n)):
        rng = np.random.default_rng(item_ss)
        fam = FAMILIES[order[i]]
        allowed = [g for g in fam.grades if grades is None or g in grades]
        grade = allowed[int(rng.integers(len(allowed)))]
        target = next(dealt[fam.id]) if targeted else None
        problem, rules = _draw(fam.id, grade, rng, balancer, target)
        difficulty = round(baseline_difficulty(fam.id, grade) + rng.normal(0.0, 0.3), 3)
        problem = build_problem(fam.id, problem.params, grade, difficulty)
        rows.append(_row(problem, rules, rng, f"mal{i + 1:0{width}d}"))
    return pd.DataFrame(rows, columns=ITEM_COLUMNS)


def generate_items(
    n: int,
    seed: int | None = SEED,
    grades: Iterable[int] | None = None,
    contents: Iterable[str] | None = None,
    adversarial: bool | str = False,
) -> pd.DataFrame:
    """``n`` seeded MalAlgoQA-format items (one row each, columns :data:`ITEM_COLUMNS`).

    Families are dealt in rounds - each round a seeded permutation of the families eligible for
    ``grades`` and ``contents`` - so that every family appears about equally often; an item's grade
    is drawn among the family's grades that were asked for. Item ``i`` has its own random stream
    (``SeedSequence(seed)``'s children), so the first ``k`` items of ``generate_items(n, seed)``
    are ``generate_items(k, seed)``. Ids are ``mal0001``, ``mal0002``, ... The choice of each
    item's problem and distractor rules balances surface features over the set
    (:class:`~.balance.Balancer`; it depends on the items before, which keeps the prefix
    property).

    ``adversarial=True`` (``malalgo generate --adversarial``; issue 34) builds a benchmark no cheap
    reader can solve without the mathematics: a larger candidate pool drawn with target ranks
    for the key (:mod:`.targets`), filtered by cross-validated models that try to find the key
    from per-choice features (:func:`~.adversarial.aflite`), then ``n`` survivors taken so that
    within every family the key's value rank is each of 1-4 equally often
    (:func:`~.adversarial.select_balanced`). Reproducible bit for bit; no prefix property; ids
    are renumbered in the order kept.

    ``adversarial="hub"`` (``malalgo generate --hub``; issue 34) builds each item around a hub
    drawn among its four options, the distractors being one- and two-flaw malgorithms
    (:mod:`.compose`), so that the key is the option the others resemble a quarter of the time;
    only the families whose procedures are written as steps (:data:`~.compose.STEPS`).

    ``adversarial="variants"`` (``malalgo generate --variants``; issue 34) writes each item's
    four options as the answers of four question variants over the same numbers, each correct
    for one variant and a classic malgorithm for the others (:mod:`.variants`), so that the
    option set is the same whichever variant is asked and only the question decides the key;
    only the families written as variants (:data:`~.library.VARIANT_FAMILIES`).
    """
    if n < 0:
        raise ValueError("n must be >= 0")
    grades = None if grades is None else [int(g) for g in grades]
    contents = None if contents is None else list(contents)
    seed = DEFAULT_SEED if seed is None else int(seed)
    if adversarial == "hub":
        from . import compose

        return pd.DataFrame(compose.generate(n, seed, grades, contents), columns=ITEM_COLUMNS)
    if adversarial == "variants":
        from . import variants

        return pd.DataFrame(variants.generate(n, seed, grades, contents), columns=ITEM_COLUMNS)
    if adversarial not in (True, False):
        raise ValueError(
            f"adversarial must be True, False, 'hub' or 'variants', got {adversarial!r}"
        )
    if not adversarial:
        return _generate(n, seed, grades, contents, targeted=False)
    return _adversarial(n, seed, grades, contents)


def _adversarial(
    n: int, seed: int, grades: list[int] | None, contents: list[str] | None
) -> pd.DataFrame:
    """Pool, filter, balanced selection (see :func:`generate_items`); the pool grows by half
    while the survivors cannot fill ``n`` balanced items."""
    size = max(int(np.ceil(adversarial.POOL_FACTOR * n)), adversarial.MIN_POOL)
    for _ in range(adversarial.MAX_GROWTH + 1):
        pool = _generate(size, seed, grades, contents, targeted=True)
        keep = adversarial.aflite_items(pool, seed=seed, floor=adversarial.floor(n)).keep
        chosen = adversarial.select_balanced(pool, keep, n, seed)
        if chosen is not None:
            out = pool.iloc[chosen].reset_index(drop=True)
            width = max(4, len(str(n)))
            out["id"] = [f"mal{i + 1:0{width}d}" for i in range(len(out))]
            return out
        size = int(size * 1.5)
    raise RuntimeError(
        f"the adversarial filter left too few items for {n} balanced questions; "
        "ask for fewer or for more families"
    )


def problem_from_item(item: Mapping[str, Any]) -> Problem:
    """The problem behind a generated item (a row of :func:`generate_items` or a dict)."""
    params = item["params"]
    if isinstance(params, str):
        params = load_json(params)  # refuses a lone surrogate or an over-long number
    return build_problem(
        str(item["family"]), params, int(item["grade"]), float(item.get("difficulty", 0.0))
    )
