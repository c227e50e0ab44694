"""Small helpers shared by the family modules: digits, seeded picks, number text, and the
construction of a family of question variants (:func:`variant_family`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any, TypeVar

import numpy as np

from ..model import Family, Params, RuleImpl, Variants

T = TypeVar("T")

PLACES = ("ones", "tens", "hundreds", "thousands", "ten-thousands")


def digits(n: int, width: int = 0) -> list[int]:
    """Decimal digits of ``n`` >= 0, ones first, zero-padded to ``width``."""
    ds = [int(c) for c in reversed(str(n))]
    return ds + [0] * (width - len(ds))


def from_digits(ds: Sequence[int]) -> int:
    """Inverse of :func:`digits` (ones first); entries may exceed 9 (they are place values)."""
    return sum(d * 10**i for i, d in enumerate(ds))


def number(rng: np.random.Generator, n_digits: int, low: int = 0) -> int:
    """A random ``n_digits``-digit number whose digits are all >= ``low`` (leading digit >= 1)."""
    first = int(rng.integers(max(low, 1), 10))
    rest = [int(d) for d in rng.integers(low, 10, size=n_digits - 1)]
    return int(str(first) + "".join(map(str, rest)))


def pick(rng: np.random.Generator, options: Sequence[T]) -> T:
    """One element of ``options``, uniformly."""
    return options[int(rng.integers(len(options)))]


def txt(x: int | Fraction) -> str:
    """A number as it is written inside a sentence (integers plainly, fractions as ``a/b``)."""
    x = Fraction(x)
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def grid_labels(dims: Sequence[tuple[str, str]]) -> tuple[tuple[str, ...], ...]:
    """The labels of variants laid out on binary dimensions (variant ``v``'s bit ``d`` is its
    choice on dimension ``d``): ``dims[d]`` names the rule that takes a student from choice 0 to
    choice 1 on dimension ``d``, and the rule back; a label joins, in dimension order, the rules of
    every dimension on which the two variants differ."""
    k = 2 ** len(dims)
    out = []
    for v in range(k):
        row = []
        for j in range(k):
            parts = [dims[d][(v >> d) & 1] for d in range(len(dims)) if (v ^ j) >> d & 1]
            row.append("+".join(parts))
        out.append(tuple(row))
    return tuple(out)


def variant_family(
    *,
    numbers: Callable[[np.random.Generator, int], Params],
    question: Callable[[Params, int], str],
    value: Callable[[Params, int], Fraction],
    text: Callable[[Params, int], str],
    names: tuple[str, ...],
    labels: tuple[tuple[str, ...], ...],
    **family: Any,
) -> tuple[Family, Variants]:
    """A family of question variants (:class:`~..model.Variants`) and the family itself.

    ``numbers(rng, grade)`` draws the given numbers (redrawn while two variants' answers
    coincide); ``question(p, v)``, ``value(p, v)`` and ``text(p, v)`` are variant ``v``'s question,
    answer and reasoning on numbers ``p`` (``text`` must not depend on the variant asked).  The
    family's params are the numbers plus ``variant``; each single rule of ``labels`` becomes a
    :class:`~..model.RuleImpl` giving the answer of the variant it leads to from the asked one
    (``None`` where it leads nowhere); ``family`` holds the other :class:`~..model.Family` fields.
    """
    k = len(names)

    def sample(rng: np.random.Generator, grade: int) -> Params:
        while True:
            p = numbers(rng, grade)
            if len({value(p, j) for j in range(k)}) == k:
                return {**p, "variant": int(rng.integers(k))}

    def target(p: Params, rule: str) -> int | None:
        row = labels[int(p["variant"])]
        return row.index(rule) if rule in row else None

    def impl(rule: str) -> RuleImpl:
        def answer(p: Params) -> Fraction | None:
            j = target(p, rule)
            return None if j is None else value(p, j)

        def explain(p: Params) -> str:
            j = target(p, rule)
            return "" if j is None else text(p, j)

        return RuleImpl(answer, explain)

    singles = sorted({r for row in labels for r in row if r and "+" not in r})
    fam = Family(
        sample=sample,
        question=lambda p: question(p, int(p["variant"])),
        solve=lambda p: value(p, int(p["variant"])),
        explain=lambda p: text(p, int(p["variant"])),
        rules={r: impl(r) for r in singles},
        **family,
    )
    return fam, Variants(family=fam.id, names=names, labels=labels)
