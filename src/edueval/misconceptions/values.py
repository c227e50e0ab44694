"""Exact answer values and their one canonical text form.

Every answer in the mal-rule library is computed exactly, as a :class:`fractions.Fraction`, and
turned into text only at the end by :func:`format_value`, according to the *kind* of answer its
problem family asks for. One canonical form per value is what makes the generator's guarantees
checkable ("no two choices alike" is a string comparison) and keeps choices free of float noise:

=========== =============================== ==========================
kind        form                            examples
=========== =============================== ==========================
``int``     integer                         ``372``, ``-4``
``fraction`` lowest terms, ``a/b`` or ``n``  ``11/15``, ``3``, ``-2/3``
``decimal`` terminating decimal, no         ``4.65``, ``0.125``, ``12``
            trailing zeros
``percent`` decimal followed by ``%``       ``25%``, ``12.5%``
``money``   ``$`` + whole dollars or cents  ``$60``, ``$57.60``
``pi``      multiple of pi                  ``25π``, ``π``, ``25π/4``
=========== =============================== ==========================

:func:`parse_value` reads a person's or a model's free-text answer back into a value (it accepts
``0.50``, ``2/4``, ``$60.00``, ``25 pi`` ...), so that open-ended answers can be compared with the
library's answers by value rather than by spelling.
"""

from __future__ import annotations

import re
from fractions import Fraction

__all__ = ["KINDS", "MAX_PLACES", "decimal_str", "format_value", "parse_value", "to_fraction"]

KINDS = ("int", "fraction", "decimal", "percent", "money", "pi")

#: Longest decimal expansion the library ever writes; values needing more are rejected.
MAX_PLACES = 6


def to_fraction(x: int | Fraction | str) -> Fraction:
    """``x`` as an exact fraction (strings as ``Fraction`` reads them: ``"0.125"``, ``"3/4"``)."""
    return x if isinstance(x, Fraction) else Fraction(x)


def decimal_str(x: int | Fraction) -> str:
    """Exact terminating decimal of ``x`` without trailing zeros (``Fraction(93, 20)`` -> ``4.65``).

    Raises ``ValueError`` when ``x`` has no terminating expansion within :data:`MAX_PLACES` places
    (the problem generators choose numbers so that this never happens for a value they show).
    """
    x = to_fraction(x)
    sign = "-" if x < 0 else ""
    x = abs(x)
    whole, rem = divmod(x.numerator, x.denominator)
    digits: list[str] = []
    while rem and len(digits) < MAX_PLACES:
        d, rem = divmod(rem * 10, x.denominator)
        digits.append(str(d))
    if rem:
        raise ValueError(f"{x} has no terminating decimal within {MAX_PLACES} places")
    return sign + str(whole) + ("." + "".join(digits) if digits else "")


def _fraction_str(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def format_value(x: int | Fraction, kind: str) -> str:
    """The canonical text of value ``x`` for answer ``kind`` (see the module table)."""
    x = to_fraction(x)
    if kind == "int":
        if x.denominator != 1:
            raise ValueError(f"{x} is not an integer")
        return str(x.numerator)
    if kind == "fraction":
        return _fraction_str(x)
    if kind == "decimal":
        return decimal_str(x)
    if kind == "percent":
        return decimal_str(x) + "%"
    if kind == "money":
        sign = "-" if x < 0 else ""
        cents = abs(x) * 100
        if cents.denominator != 1:
            raise ValueError(f"{x} is not a whole number of cents")
        dollars, c = divmod(cents.numerator, 100)
        return f"{sign}${dollars}" + (f".{c:02d}" if c else "")
    if kind == "pi":
        if x == 0:
            return "0"
        sign = "-" if x < 0 else ""
        x = abs(x)
        num = "" if x.numerator == 1 else str(x.numerator)
        return f"{sign}{num}π" + ("" if x.denominator == 1 else f"/{x.denominator}")
    raise ValueError(f"unknown answer kind {kind!r}; expected one of {', '.join(KINDS)}")


_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)(/\d+(\.\d*)?)?$")


def parse_value(text: str, kind: str) -> Fraction | None:
    """Read a free-text answer as a value of ``kind``; ``None`` when it is not a number.

    Lenient about spelling (spaces, thousands commas, ``$``, ``%``, ``pi``/``π``, trailing zeros,
    unreduced fractions, a trailing full stop) but not about meaning: ``25`` is not ``25π``.
    """
    s = str(text).strip().lower().replace(",", "").replace(" ", "").replace("−", "-")
    s = s.rstrip(".")
    if kind == "money":
        s = s.replace("$", "")
    if kind == "percent":
        if not s.endswith("%"):
            return None
        s = s[:-1]
    if kind == "pi":
        s = s.replace("pi", "π").replace("*", "").replace("×", "")
        if "π" not in s and _NUMBER.match(s) and "/" not in s and Fraction(s) == 0:
            return Fraction(0)  # zero is written without π
        if s.count("π") != 1:
            return None
        before, after = s.split("π")
        if after and not after.startswith("/"):
            return None
        coef = before or "1"
        if coef in ("-", "+"):
            coef += "1"
        s = coef + after
    if not _NUMBER.match(s):
        return None
    if "/" in s:
        num, den = s.split("/")
        if Fraction(den) == 0:
            return None
        return Fraction(num) / Fraction(den)
    return Fraction(s)
