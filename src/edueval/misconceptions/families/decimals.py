"""Comparing decimals and adding decimals with different numbers of places.

Comparison follows Steinle & Stacey's classification of decimal misconceptions: "longer is
larger" (whole-number thinking about the digits after the point), "shorter is larger"
(denominator-focused thinking) and ignoring the zero in the tenths place. A comparison asks for
the greatest, second greatest, second smallest or smallest of four numbers (drawn uniformly, so
the key is equally often each place in the order) and is built so that each of the three rules
picks a different number and none picks the key: the four choices are the four numbers.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..model import Family, Params, RuleImpl

# --- comparison -----------------------------------------------------------------------------------

#: which number a comparison asks for, by its place when the numbers are sorted from the greatest
RANKS = ("greatest", "second greatest", "second smallest", "smallest")

_CMP_TEMPLATES = (
    "Which of these numbers is the {rank}: {list}?",
    "Four students measured seeds in centimeters: {list}. Which measurement is the {rank}?",
)


def _digit(rng: np.random.Generator, low: int = 1) -> str:
    return str(int(rng.integers(low, 10)))


def _decimal(rng: np.random.Generator, whole: str, places: int, zero: bool = False) -> str:
    """``whole.`` followed by ``places`` digits, the last not 0; a 0 in the tenths if ``zero``
    (and no 0 there otherwise)."""
    digits = ["0" if zero else _digit(rng)]
    digits += [_digit(rng, 0) for _ in range(places - 2)] + ([_digit(rng)] if places > 1 else [])
    return f"{whole}." + "".join(digits[:places])


def _cmp_sample(rng: np.random.Generator, grade: int) -> Params:
    """Four numbers with the same whole part: one with 1 decimal place, one with a zero in the
    tenths (2 or 3 places) and two with 2-4 places; and the place asked for. Redrawn until the
    correct reading and the three rules each pick a different number, so the four choices are
    the four numbers."""
    w = "0" if grade <= 4 else _digit(rng, 0)
    rank = int(rng.integers(len(RANKS)))
    while True:
        numbers = [
            _decimal(rng, w, 1),
            _decimal(rng, w, int(rng.integers(2, 4)), zero=True),
            _decimal(rng, w, int(rng.integers(2, 4))),
            _decimal(rng, w, int(rng.integers(3, 5))),
        ]
        order = [int(i) for i in rng.permutation(4)]
        p = {
            "numbers": [numbers[i] for i in order],
            "template": int(rng.integers(len(_CMP_TEMPLATES))),
            "rank": rank,
        }
        picks = [_pick_by(p, _exact)] + [impl.answer(p) for impl in _CMP_RULES.values()]
        if None not in picks and len(set(picks)) == 4:
            return p


def _tail(s: str) -> str:
    return s.split(".")[1]


def _rank_of(p: Params) -> int:
    """0 for "greatest" ... 3 for "smallest" (problems without a rank ask for the greatest)."""
    return int(p.get("rank", 0))


def _pick_by(p: Params, key) -> Fraction | None:
    """The number in the asked-for place when the numbers are ordered by ``key`` (a reading of
    each number), greatest first; ``None`` when that number's reading ties with another's."""
    keys = [key(s) for s in p["numbers"]]
    order = sorted(range(len(keys)), key=keys.__getitem__, reverse=True)
    chosen = order[_rank_of(p)]
    if keys.count(keys[chosen]) > 1:
        return None
    return Fraction(p["numbers"][chosen])


def _scaled(whole: str, tail: str) -> int:
    """``whole.tail`` in millionths, exactly (tails have at most 6 digits)."""
    return int(whole) * 10**6 + int((tail + "000000")[:6])


def _exact(s: str) -> int:
    whole, tail = s.split(".")
    return _scaled(whole, tail)


def _cmp_solve(p: Params) -> Fraction:
    """The number asked for (:func:`_cmp_sample` draws no problem whose numbers tie)."""
    picked = _pick_by(p, _exact)
    if picked is None:
        raise ValueError(f"numbers {p['numbers']} tie in the asked-for place")
    return picked


def _cmp_list(p: Params) -> str:
    return ", ".join(p["numbers"])


def _cmp_steps(p: Params, key) -> str:
    """The words every comparison rationale shares: the four numbers in the order a way of
    reading them (``key``) puts them, greatest first, then the asked-for place. Every rationale
    writes the same four numbers, so none is longer than another: the reasoning is in the order."""
    ordered = ", ".join(sorted(p["numbers"], key=key, reverse=True))
    rank = RANKS[_rank_of(p)]
    return f"Order the numbers from the greatest to the smallest: {ordered}. Choose the {rank}."


def _longer_key(s: str) -> tuple[int, int]:
    """Whole-number thinking: the digits after the point read as a whole number."""
    return int(s.split(".")[0]), int(_tail(s))


def _shorter_key(s: str) -> int:
    """Denominator-focused thinking: more digits after the point means smaller pieces."""
    return -len(_tail(s))


def _cmp_explain(p: Params) -> str:
    return _cmp_steps(p, _exact)


def _longer_explain(p: Params) -> str:
    return _cmp_steps(p, _longer_key)


def _shorter_explain(p: Params) -> str:
    return _cmp_steps(p, _shorter_key)


def _zero_explain(p: Params) -> str:
    return _cmp_steps(p, _without_zero)


def _without_zero(s: str) -> int:
    """The number read with the zeros right after the point left out (0.08 as 0.8)."""
    whole, tail = s.split(".")
    return _scaled(whole, tail.lstrip("0"))


def _other_listed(p: Params, rng: np.random.Generator) -> Fraction:
    best = _cmp_solve(p)
    others = [Fraction(s) for s in p["numbers"] if Fraction(s) != best]
    return others[int(rng.integers(len(others)))]


_CMP_RULES = {
    "longer_is_larger": RuleImpl(
        lambda p: _pick_by(p, lambda s: (int(s.split(".")[0]), int(_tail(s)))),
        _longer_explain,
    ),
    "shorter_is_larger": RuleImpl(
        lambda p: _pick_by(p, lambda s: -len(_tail(s))), _shorter_explain
    ),
    "ignore_zero_after_point": RuleImpl(lambda p: _pick_by(p, _without_zero), _zero_explain),
}

COMPARISON = Family(
    id="decimal_compare",
    name="Compare decimals",
    content="Number & Operation",
    grades=(4, 5),
    dok=1,
    kind="decimal",
    sample=_cmp_sample,
    question=lambda p: _CMP_TEMPLATES[p["template"]].format(
        list=_cmp_list(p), rank=RANKS[_rank_of(p)]
    ),
    solve=_cmp_solve,
    explain=_cmp_explain,
    rules=_CMP_RULES,
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


def _misaligned(p: Params) -> tuple[str, str]:
    """Both addends' digits lined up on the right, the one-place addend written with a leading
    zero where its digits fall short (3.4 beside 1.25 as 034 and 125): the misalignment shown
    as it is written in columns."""
    sx, sy = (v.replace(".", "") for v in (p["x"], p["y"]))
    return (("0" + sx if _places(p["x"]) == 1 else sx), ("0" + sy if _places(p["y"]) == 1 else sy))


def _misaligned_steps(p: Params, point: int) -> str:
    sx, sy = _misaligned(p)
    return _add_steps(p, sx, sy, f"{sx} + {sy}", point)


def _right_align_explain(p: Params) -> str:
    return _misaligned_steps(p, 2)


def _parts_explain(p: Params) -> str:
    (wx, tx), (wy, ty) = p["x"].split("."), p["y"].split(".")
    part = str(int(tx) + int(ty))
    return _add_steps(p, f"({wx}, {tx})", f"({wy}, {ty})", f"({wx} + {wy}, {tx} + {ty})", len(part))


def _places_mult_explain(p: Params) -> str:
    return _misaligned_steps(p, _places(p["x"]) + _places(p["y"]))


def _annexed(p: Params) -> tuple[str, str]:
    """Both addends written with two decimal places (3.4 -> 3.40)."""
    return tuple(v + "0" if _places(v) == 1 else v for v in (p["x"], p["y"]))


def _ignore_point_explain(p: Params) -> str:
    return _misaligned_steps(p, 0)


def _fewer_places_explain(p: Params) -> str:
    return _misaligned_steps(p, min(_places(p["x"]), _places(p["y"])))


def _annex_no_point_explain(p: Params) -> str:
    dx, dy = (_digits_only(v) for v in _annexed(p))
    return _add_steps(p, str(dx), str(dy), f"{dx} + {dy}", 0)


def _over_annexed(p: Params) -> tuple[str, str]:
    """The one-place addend written with two zeros added (3.4 -> 3.400), the other as it is."""
    return tuple(v + "00" if _places(v) == 1 else v for v in (p["x"], p["y"]))


def _extra_zero(p: Params) -> Fraction:
    dx, dy = (_digits_only(v) for v in _over_annexed(p))
    return Fraction(dx + dy, 100)


def _extra_zero_explain(p: Params) -> str:
    dx, dy = (_digits_only(v) for v in _over_annexed(p))
    return _add_steps(p, str(dx), str(dy), f"{dx} + {dy}", 2)


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
        "ignore_decimal_point": RuleImpl(
            lambda p: _digits_only(p["x"]) + _digits_only(p["y"]), _ignore_point_explain
        ),
        "point_from_fewer_places": RuleImpl(
            lambda p: Fraction(
                _digits_only(p["x"]) + _digits_only(p["y"]),
                10 ** min(_places(p["x"]), _places(p["y"])),
            ),
            _fewer_places_explain,
        ),
        "forget_the_point": RuleImpl(
            lambda p: sum(_digits_only(v) for v in _annexed(p)), _annex_no_point_explain
        ),
        "annex_extra_zero": RuleImpl(_extra_zero, _extra_zero_explain),
    },
    difficulty=-0.3,
)

FAMILIES = (COMPARISON, ADDITION)

__all__ = ["FAMILIES"]
