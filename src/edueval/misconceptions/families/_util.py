"""Small helpers shared by the family modules: digits, seeded picks, number text."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TypeVar

import numpy as np

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
