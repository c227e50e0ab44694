"""Comparing decimals and adding decimals with different numbers of places.

Comparison follows Steinle & Stacey's classification of decimal misconceptions: "longer is
larger" (whole-number thinking about the digits after the point), "shorter is larger"
(denominator-focused thinking) and ignoring the zero in the tenths place. The comparison problem
is built so that each of the three rules picks a different number and none picks the largest.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..model import Family, Params, RuleImpl

# --- comparison -----------------------------------------------------------------------------------

_CMP_TEMPLATES = (
    "Which of these numbers is the greatest: {list}?",
    "Four students measured seeds in centimeters: {list}. Which measurement is the greatest?",
)


def _cmp_sample(rng: np.random.Generator, grade: int) -> Params:
    w = 0 if grade <= 4 else int(rng.integers(0, 10))
    e = int(rng.integers(2, 9))  # tenths digit of the two-place number (the greatest)
    two = f"{w}.{e}{int(rng.integers(1, 10))}"
    one = f"{w}.{int(rng.integers(1, e + 1))}"  # fewest places, smaller than two
    while True:  # three places, smaller than two
        three = (
            f"{w}.{int(rng.integers(1, e + 1))}{int(rng.integers(0, 10))}{int(rng.integers(1, 10))}"
        )
        if Fraction(three) < Fraction(two):
            break
    zero = f"{w}.0{int(rng.integers(e + 1, 10))}"  # read as w.d, larger than two
    numbers = [one, two, three, zero]
    order = [int(i) for i in rng.permutation(4)]
    return {
        "numbers": [numbers[i] for i in order],
        "template": int(rng.integers(len(_CMP_TEMPLATES))),
    }


def _tail(s: str) -> str:
    return s.split(".")[1]


def _pick_by(p: Params, key) -> Fraction:
    return Fraction(max(p["numbers"], key=key))


def _cmp_list(p: Params) -> str:
    return ", ".join(p["numbers"])


def _cmp_steps(p: Params, read) -> str:
    """The words every comparison rationale shares: each number is read as a value (``read``)
    and the number with the greatest value is chosen; only the numbers differ."""
    pairs = ", ".join(f"{s} as {read(s)}" for s in p["numbers"])
    return f"Read the numbers as values to compare: {pairs}. Choose the number with the greatest value."


def _cmp_explain(p: Params) -> str:
    width = max(len(_tail(s)) for s in p["numbers"])
    return _cmp_steps(p, lambda s: s + "0" * (width - len(_tail(s))))


def _longer_explain(p: Params) -> str:
    return _cmp_steps(p, _tail)


def _shorter_explain(p: Params) -> str:
    return _cmp_steps(p, lambda s: "0." + "0" * (len(_tail(s)) - 1) + "1")


def _zero_explain(p: Params) -> str:
    return _cmp_steps(p, lambda s: s.split(".")[0] + "." + _tail(s).lstrip("0"))


def _without_zero(s: str) -> Fraction:
    whole, tail = s.split(".")
    return Fraction(f"{whole}.{tail.lstrip('0')}")


def _other_listed(p: Params, rng: np.random.Generator) -> Fraction:
    best = max(Fraction(s) for s in p["numbers"])
    others = [Fraction(s) for s in p["numbers"] if Fraction(s) != best]
    return others[int(rng.integers(len(others)))]


COMPARISON = Family(
    id="decimal_compare",
    name="Compare decimals",
    content="Number & Operation",
    grades=(4, 5),
    dok=1,
    kind="decimal",
    sample=_cmp_sample,
    question=lambda p: _CMP_TEMPLATES[p["template"]].format(list=_cmp_list(p)),
    solve=lambda p: max(Fraction(s) for s in p["numbers"]),
    explain=_cmp_explain,
    rules={
        "longer_is_larger": RuleImpl(
            lambda p: _pick_by(p, lambda s: (int(s.split(".")[0]), int(_tail(s)))),
            _longer_explain,
        ),
        "shorter_is_larger": RuleImpl(
            lambda p: _pick_by(p, lambda s: (-len(_tail(s)), Fraction(s))), _shorter_explain
        ),
        "ignore_zero_after_point": RuleImpl(lambda p: _pick_by(p, _without_zero), _zero_explain),
    },
    difficulty=-0.5,
    slip=lambda p, rng: _other_listed(p, rng),
)

# --- addition -------------------------------------------------------------------------------------

_ADD_TEMPLATES = (
    "What is {x} + {y}?",
    "Add {x} and {y}.",
    "A runner ran {x} km on Monday and {y} km on Tuesday. How many kilometers did she run in all?",
)


def _add_sample(rng: np.random.Generator, grade: int) -> Params:
    one = f"{int(rng.integers(1, 20))}.{int(rng.integers(1, 10))}"
    two = f"{int(rng.integers(1, 20))}.{int(rng.integers(1, 10))}{int(rng.integers(1, 10))}"
    x, y = (one, two) if rng.random() < 0.5 else (two, one)
    return {"x": x, "y": y, "template": int(rng.integers(len(_ADD_TEMPLATES)))}


def _digits_only(s: str) -> int:
    return int(s.replace(".", ""))


def _places(s: str) -> int:
    return len(_tail(s))


def _right_align(p: Params) -> Fraction:
    x, y = p["x"], p["y"]
    return Fraction(_digits_only(x) + _digits_only(y), 10 ** max(_places(x), _places(y)))


def _parts_separately(p: Params) -> Fraction:
    x, y = p["x"], p["y"]
    whole = int(x.split(".")[0]) + int(y.split(".")[0])
    part = int(_tail(x)) + int(_tail(y))
    return whole + Fraction(part, 10 ** len(str(part)))


def _places_as_mult(p: Params) -> Fraction:
    x, y = p["x"], p["y"]
    return Fraction(_digits_only(x) + _digits_only(y), 10 ** (_places(x) + _places(y)))


def _add_steps(p: Params, x: str, y: str, total: str, point: int) -> str:
    """The words every decimal-addition rationale shares; only the numbers differ."""
    return (
        f"Write {p['x']} as {x} and {p['y']} as {y}, and add these as whole numbers: {total}. "
        f"Put the decimal point {point} places from the right."
    )


def _add_explain(p: Params) -> str:
    x, y = (
        (p["x"] + "0" if _places(p["x"]) == 1 else p["x"]),
        (p["y"] + "0" if _places(p["y"]) == 1 else p["y"]),
    )
    dx, dy = _digits_only(x), _digits_only(y)
    return _add_steps(p, str(dx), str(dy), f"{dx} + {dy}", 2)


def _right_align_explain(p: Params) -> str:
    dx, dy = _digits_only(p["x"]), _digits_only(p["y"])
    return _add_steps(p, str(dx), str(dy), f"{dx} + {dy}", 2)


def _parts_explain(p: Params) -> str:
    (wx, tx), (wy, ty) = p["x"].split("."), p["y"].split(".")
    part = str(int(tx) + int(ty))
    return _add_steps(p, f"({wx}, {tx})", f"({wy}, {ty})", f"({wx} + {wy}, {tx} + {ty})", len(part))


def _places_mult_explain(p: Params) -> str:
    dx, dy = _digits_only(p["x"]), _digits_only(p["y"])
    return _add_steps(p, str(dx), str(dy), f"{dx} + {dy}", _places(p["x"]) + _places(p["y"]))


ADDITION = Family(
    id="decimal_addition",
    name="Add decimals with different numbers of places",
    content="Number & Operation",
    grades=(5, 6),
    dok=1,
    kind="decimal",
    sample=_add_sample,
    question=lambda p: _ADD_TEMPLATES[p["template"]].format(**p),
    solve=lambda p: Fraction(p["x"]) + Fraction(p["y"]),
    explain=_add_explain,
    rules={
        "right_align_decimals": RuleImpl(_right_align, _right_align_explain),
        "decimal_parts_separately": RuleImpl(_parts_separately, _parts_explain),
        "decimal_places_as_multiplication": RuleImpl(_places_as_mult, _places_mult_explain),
    },
    difficulty=-0.3,
)

FAMILIES = (COMPARISON, ADDITION)

__all__ = ["FAMILIES"]
