"""Items whose four options are the answers of four question variants over the same numbers
(``malalgo generate --variants``; issue 34).

In a plain item every distractor is the key's procedure with one step changed, so the key is the
option the others resemble; hub items (:mod:`.compose`) move that centre, but in every item of a
family the key is still the same procedure, and per-choice features fingerprint it (a tree
ensemble finds it in 84% of hub items; benchmarks/RESULTS.md).  Here the key's procedure changes
from item to item.

A variant family (:class:`~.model.Variants`, defined with the problem families) writes four
questions over the same given numbers, each with its own correct procedure, such that each
variant's answer is a classic malgorithm's answer to the others - a circle with one given
length asks for its area or its circumference, the length being its radius or its diameter
(π·n², π·n²/4, 2π·n, π·n: radius/diameter and area/circumference confusions).  An item draws the
numbers, then the asked variant (independently of the numbers; each variant asked a quarter of
the time in every family, dealt in shuffled blocks of four), and its four options are the four
variants' answers with their reasoning, whose words do not depend on the variant asked ("Take
r = 10 ÷ 2 = 5, and compute π × 5 × 5": correct when 10 is the diameter and the area is asked,
a malgorithm otherwise).  So the option *set* - values, rationales, their lengths and
similarities, which option is most central, the values' ranks - is the same whichever variant
is asked, and only the question's words decide the key: a reader who does not do the
mathematics picks it with probability 1/4 whatever it measures, and the key's value rank is
uniform in every family.  Each distractor's ``malrule_X`` names the rule, or rules joined by
``+``, that leads from the asked variant to that option, so simulated students who hold them
pick it (:mod:`.students`).

Families without a clean set of four variants are not drawn (benchmarks/RESULTS.md lists them).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from fractions import Fraction
from types import MappingProxyType
from typing import Any

import numpy as np

from .families import VARIANTS as _ALL_VARIANTS
from .library import (
    VARIANT_FAMILIES,
    baseline_difficulty,
    build_problem,
    family_order,
    select_families,
)
from .model import Problem, Variants
from .values import format_value

__all__ = ["VARIANTS", "Herd", "generate", "option_values", "row", "variant_families"]

#: the variant families' label tables, by family id
VARIANTS: Mapping[str, Variants] = MappingProxyType({v.family: v for v in _ALL_VARIANTS})
LETTERS = ("A", "B", "C", "D")


def variant_families(
    grades: list[int] | None = None, contents: list[str] | None = None
) -> list[str]:
    """The variant families taught at one of ``grades`` and in one of ``contents`` (all when
    ``None``); ``ValueError`` for an unknown content or when nothing matches."""
    fams = select_families(VARIANT_FAMILIES.values(), grades, contents)
    if not fams:
        raise ValueError(
            "no family with question variants matches the grades and contents asked for; "
            "variant items exist for: "
            + ", ".join(
                f"{f.id} (grades {', '.join(map(str, f.grades))}; {f.content})"
                for f in VARIANT_FAMILIES.values()
            )  # fmt: skip
        )
    return [f.id for f in fams]


def option_values(problem: Problem) -> list[tuple[Fraction, str]]:
    """Every variant's answer and reasoning on ``problem``'s numbers (the same whichever variant
    ``problem`` asks), in variant order."""
    fam = VARIANT_FAMILIES[problem.family]
    out = []
    for j in range(len(VARIANTS[problem.family].names)):
        p = {**problem.params, "variant": j}
        out.append((Fraction(fam.solve(p)), fam.explain(p)))
    return out


def row(problem: Problem, rng: np.random.Generator, item_id: str) -> dict[str, Any]:
    """The item of ``problem`` (which asks variant ``params["variant"]``): the four variants'
    answers at seeded positions, as a row of :data:`~.items.ITEM_COLUMNS`."""
    fam = VARIANT_FAMILIES[problem.family]
    asked = int(problem.params["variant"])
    labels = VARIANTS[problem.family].labels[asked]
    opts = option_values(problem)
    out: dict[str, Any] = {"id": item_id, "question": problem.question}
    for letter, k in zip(LETTERS, rng.permutation(len(opts)), strict=True):
        value, text = opts[int(k)]
        out[f"choice_{letter}"] = format_value(value, fam.kind)
        out[f"rationale_{letter}"] = text
        out[f"malrule_{letter}"] = labels[int(k)]
        if k == asked:
            out["answer"] = letter
    out.update(grade=problem.grade, content=problem.content, dok=problem.dok,
               family=problem.family, difficulty=problem.difficulty,
               params=json.dumps(problem.params, sort_keys=True))  # fmt: skip
    return out


class Herd:
    """Which variant each item of a family asks: the variants dealt in shuffled blocks, so that
    after ``m`` items of a family every variant has been asked ``⌊m/k⌋`` or ``⌈m/k⌉`` times.
    The draw uses only the item's own random stream, never its numbers."""

    def __init__(self) -> None:
        self.left: dict[str, list[int]] = {}

    def next(self, family: str, rng: np.random.Generator) -> int:
        left = self.left.get(family) or list(range(len(VARIANTS[family].names)))
        v = left.pop(int(rng.integers(len(left))))
        self.left[family] = left
        return v


def generate(
    n: int, seed: int, grades: list[int] | None = None, contents: list[str] | None = None
) -> list[dict[str, Any]]:
    """``n`` seeded variant items (see the module docstring; one dict of
    :data:`~.items.ITEM_COLUMNS` each), families dealt in seeded rounds as in plain generation;
    item ``i`` has its own random stream, so the first ``k`` items of ``n`` are the ``k``
    items."""
    fams = variant_families(grades, contents)
    schedule_ss, items_ss = np.random.SeedSequence([seed, 34, 4]).spawn(2)
    order = family_order(np.random.default_rng(schedule_ss), fams, n)
    width = max(4, len(str(n)))
    herd, rows = Herd(), []
    for i, item_ss in enumerate(items_ss.spawn(n)):
        rng = np.random.default_rng(item_ss)
        fam = VARIANT_FAMILIES[order[i]]
        allowed = [g for g in fam.grades if grades is None or g in grades]
        grade = allowed[int(rng.integers(len(allowed)))]
        params = fam.sample(rng, grade)  # the numbers; the variant drawn with them is replaced
        params["variant"] = herd.next(fam.id, rng)
        difficulty = round(baseline_difficulty(fam.id, grade) + rng.normal(0.0, 0.3), 3)
        problem = build_problem(fam.id, params, grade, difficulty)
        rows.append(row(problem, rng, f"mal{i + 1:0{width}d}"))
    return rows
