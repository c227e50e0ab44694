"""Percent change and undoing a percent change (finding the original amount).

Both families hinge on the *base* of a percent: the change is a percent of the original amount.
The rules divide by or apply the percent to the wrong amount, confuse a percent with an amount of
money, or stop after one step.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..model import Family, Params, RuleImpl
from ..values import decimal_str, format_value
from ._util import pick, variant_family

# --- percent change -------------------------------------------------------------------------------

_CHANGE_CONTEXTS = (
    ("The price of a bike {went} from ${old} to ${new}.", "the price"),
    ("The number of members in a chess club {went} from {old} to {new}.", "the number of members"),
    (
        "The number of visitors to a museum {went} from {old} to {new} in a week.",
        "the number of visitors",
    ),
)


def _change_sample(rng: np.random.Generator, grade: int) -> Params:
    while True:
        old = int(pick(rng, (20, 25, 40, 50, 60, 75, 80, 120, 125, 150, 160, 200, 250, 400)))
        pct = int(pick(rng, (10, 20, 25, 30, 40, 50, 60, 75)))
        up = bool(rng.random() < 0.6)
        new = Fraction(old * (100 + pct if up else 100 - pct), 100)
        if new.denominator != 1:
            continue
        new_base = Fraction(abs(new - old) * 100, new)
        if (new_base * 100).denominator == 1:  # at most two decimal places
            return {
                "old": old,
                "new": int(new),
                "up": up,
                "context": int(rng.integers(len(_CHANGE_CONTEXTS))),
            }


def _change_question(p: Params) -> str:
    sentence, what = _CHANGE_CONTEXTS[p["context"]]
    went = "rose" if p["up"] else "fell"
    direction = "increase" if p["up"] else "decrease"
    return (
        sentence.format(went=went, old=p["old"], new=p["new"])
        + f" By what percent did {what} {direction}?"
    )


def _diff(p: Params) -> int:
    return abs(p["new"] - p["old"])


def _percent_steps(expr: str) -> str:
    """The words every percent-change rationale shares; only the numbers differ."""
    return f"Compute {expr}, and give the result as the percent."


def _hi_lo(p: Params) -> str:
    return f"({max(p['old'], p['new'])} − {min(p['old'], p['new'])})"


def _change_explain(p: Params) -> str:
    return _percent_steps(f"{_hi_lo(p)} ÷ {p['old']} × 100")


def _new_base_explain(p: Params) -> str:
    return _percent_steps(f"{_hi_lo(p)} ÷ {p['new']} × 100")


def _amount_explain(p: Params) -> str:
    return _percent_steps(_hi_lo(p))


def _ratio_explain(p: Params) -> str:
    return _percent_steps(f"{p['new']} ÷ {p['old']} × 100")


def _two_places(x: Fraction) -> Fraction | None:
    """``x`` when it has at most two decimal places, else ``None`` (not a value we write)."""
    return x if (x * 100).denominator == 1 else None


def _no_hundred_explain(p: Params) -> str:
    return _percent_steps(f"{_hi_lo(p)} ÷ {p['old']}")


def _wrong_way_explain(p: Params) -> str:
    return _percent_steps(f"{p['old']} ÷ {_hi_lo(p)} × 100")


def _average_base(p: Params) -> Fraction | None:
    return _two_places(Fraction(_diff(p) * 200, p["old"] + p["new"]))


def _average_explain(p: Params) -> str:
    return _percent_steps(f"{_hi_lo(p)} ÷ (({p['old']} + {p['new']}) ÷ 2) × 100")


CHANGE = Family(
    id="percent_change",
    name="Percent increase or decrease",
    content="Number & Operation",
    grades=(7,),
    dok=2,
    kind="percent",
    sample=_change_sample,
    question=_change_question,
    solve=lambda p: Fraction(_diff(p) * 100, p["old"]),
    explain=_change_explain,
    rules={
        "percent_change_new_base": RuleImpl(
            lambda p: Fraction(_diff(p) * 100, p["new"]), _new_base_explain
        ),
        "percent_amount_confusion": RuleImpl(_diff, _amount_explain),
        "ratio_as_percent_change": RuleImpl(
            lambda p: Fraction(p["new"] * 100, p["old"]), _ratio_explain
        ),
        "forget_times_100": RuleImpl(
            lambda p: _two_places(Fraction(_diff(p), p["old"])), _no_hundred_explain
        ),
        "divide_the_wrong_way": RuleImpl(
            lambda p: _two_places(Fraction(p["old"] * 100, _diff(p))), _wrong_way_explain
        ),
        "average_as_base": RuleImpl(_average_base, _average_explain),
    },
    difficulty=0.6,
)

# --- original amount before a percent change ------------------------------------------------------

_ORIG_ITEMS = ("jacket", "bicycle", "video game", "concert ticket", "backpack", "lamp")


def _orig_sample(rng: np.random.Generator, grade: int) -> Params:
    while True:
        up = bool(rng.random() < 0.4)
        pct = int(pick(rng, (10, 20, 25, 40, 50) if up else (10, 20, 25, 30, 40, 50, 60, 75)))
        orig = int(rng.integers(4, 61)) * 5
        p = {"orig": orig, "pct": pct, "up": up, "item": int(rng.integers(len(_ORIG_ITEMS)))}
        values = [_final(p), _orig_wrong_base(p), _orig_amount(p), _orig_part(p)]
        if all((v * 100).denominator == 1 and v > 0 for v in values):
            return p


def _final(p: Params) -> Fraction:
    sign = 1 if p["up"] else -1
    return Fraction(p["orig"] * (100 + sign * p["pct"]), 100)


def _money(x: Fraction) -> str:
    return format_value(x, "money")


def _orig_question(p: Params) -> str:
    item = _ORIG_ITEMS[p["item"]]
    if p["up"]:
        return (
            f"After a {p['pct']}% price increase, a {item} costs {_money(_final(p))}. What was "
            "the price before the increase?"
        )
    return (
        f"After a {p['pct']}% discount, a {item} costs {_money(_final(p))}. What was the price "
        "before the discount?"
    )


def _price_steps(expr: str) -> str:
    """The words every original-price rationale shares; only the numbers differ."""
    return f"Compute {expr}, and give the result as the price before the change."


def _orig_explain(p: Params) -> str:
    left = 100 + p["pct"] if p["up"] else 100 - p["pct"]
    return _price_steps(f"{_money(_final(p))} ÷ {decimal_str(Fraction(left, 100))}")


def _orig_wrong_base(p: Params) -> Fraction:
    sign = -1 if p["up"] else 1
    return _final(p) * Fraction(100 + sign * p["pct"], 100)


def _wrong_base_explain(p: Params) -> str:
    left = 100 - p["pct"] if p["up"] else 100 + p["pct"]
    return _price_steps(f"{_money(_final(p))} × {decimal_str(Fraction(left, 100))}")


def _orig_amount(p: Params) -> Fraction:
    return _final(p) + (-p["pct"] if p["up"] else p["pct"])


def _amount_orig_explain(p: Params) -> str:
    sign = "−" if p["up"] else "+"
    return _price_steps(f"{_money(_final(p))} {sign} {p['pct']}")


def _orig_part(p: Params) -> Fraction:
    return _final(p) * Fraction(p["pct"], 100)


def _part_explain(p: Params) -> str:
    return _price_steps(f"{_money(_final(p))} × {decimal_str(Fraction(p['pct'], 100))}")


def _cents(x: Fraction) -> Fraction | None:
    return x if (x * 100).denominator == 1 and x > 0 else None


def _rate(p: Params, sign: int) -> Fraction:
    """1 + sign·pct/100."""
    return Fraction(100 + sign * p["pct"], 100)


def _direction(p: Params) -> int:
    return 1 if p["up"] else -1


def _divide_by_change_explain(p: Params) -> str:
    return _price_steps(f"{_money(_final(p))} ÷ {decimal_str(Fraction(p['pct'], 100))}")


def _again_explain(p: Params) -> str:
    return _price_steps(f"{_money(_final(p))} × {decimal_str(_rate(p, _direction(p)))}")


def _opposite_explain(p: Params) -> str:
    return _price_steps(f"{_money(_final(p))} ÷ {decimal_str(_rate(p, -_direction(p)))}")


ORIGINAL = Family(
    id="percent_original",
    name="Find the amount before a percent change",
    content="Number & Operation",
    grades=(7, 8),
    dok=3,
    kind="money",
    sample=_orig_sample,
    question=_orig_question,
    solve=lambda p: p["orig"],
    explain=_orig_explain,
    rules={
        "percent_of_wrong_base": RuleImpl(_orig_wrong_base, _wrong_base_explain),
        "percent_amount_confusion": RuleImpl(_orig_amount, _amount_orig_explain),
        "percent_part_only": RuleImpl(_orig_part, _part_explain),
        "divide_by_the_change": RuleImpl(
            lambda p: _cents(_final(p) / Fraction(p["pct"], 100)), _divide_by_change_explain
        ),
        "apply_the_change_again": RuleImpl(
            lambda p: _cents(_final(p) * _rate(p, _direction(p))), _again_explain
        ),
        "undo_the_opposite_change": RuleImpl(
            lambda p: _cents(_final(p) / _rate(p, -_direction(p))), _opposite_explain
        ),
    },
    difficulty=0.9,
)

# --- question variants over the same numbers (:mod:`..variants`) ----------------------------------
#
# Two amounts A < B: the percent increase from A to B, the percent decrease from B to A, B as a
# percent of A and A as a percent of B.  Dividing by the other amount, and giving the percent
# change for "what percent of" (or the ratio for the change), turn one into another.

_COMPARE_PCTS = (20, 25, 40, 50, 60, 75, 150, 200, 300)


def _compare_numbers(rng: np.random.Generator, grade: int) -> Params:
    while True:
        low = int(pick(rng, (20, 25, 40, 50, 60, 80, 100, 120, 160, 200, 240, 400)))
        high = Fraction(low * (100 + int(pick(rng, _COMPARE_PCTS))), 100)
        p = {"low": low, "high": int(high), "context": int(rng.integers(len(_CHANGE_CONTEXTS)))}
        if high.denominator == 1 and all(
            _two_places(_compare_value(p, v)) is not None for v in range(4)
        ):
            return p


def _compare_value(p: Params, v: int) -> Fraction:
    low, high = p["low"], p["high"]
    base = high if v & 1 else low
    top = (low if v & 1 else high) if v & 2 else high - low
    return Fraction(top * 100, base)


def _compare_text(p: Params, v: int) -> str:
    low, high = p["low"], p["high"]
    base = high if v & 1 else low
    top = str(low if v & 1 else high) if v & 2 else f"({high} − {low})"
    return _percent_steps(f"{top} ÷ {base} × 100")


def _compare_question(p: Params, v: int) -> str:
    sentence, what = _CHANGE_CONTEXTS[p["context"]]
    cur = "$" if "$" in sentence else ""
    low, high = f"{cur}{p['low']}", f"{cur}{p['high']}"
    if v & 2:
        first, second = (high, low) if v & 1 else (low, high)
        return f"What percent of {first} is {second}?"
    went, direction = ("fell", "decrease") if v & 1 else ("rose", "increase")
    old, new = (p["high"], p["low"]) if v & 1 else (p["low"], p["high"])
    return (
        sentence.format(went=went, old=old, new=new) + f" By what percent did {what} {direction}?"
    )


_NEW, _RATIO, _WAY = "percent_change_new_base", "ratio_as_percent_change", "divide_the_wrong_way"

COMPARE, COMPARE_VARIANTS = variant_family(
    id="percent_compare",
    name="Percent change or percent of, between two amounts",
    content="Number & Operation",
    grades=(7,),
    dok=2,
    kind="percent",
    numbers=_compare_numbers,
    question=_compare_question,
    value=_compare_value,
    text=_compare_text,
    names=(
        "increase from A to B",
        "decrease from B to A",
        "B as a percent of A",
        "A as a percent of B",
    ),  # fmt: skip
    # the change divided by the new amount; the ratio for the change (or the change for the
    # ratio); the ratio turned round
    labels=(
        ("", _NEW, _RATIO, f"{_NEW}+{_RATIO}"),
        (_NEW, "", f"{_NEW}+{_RATIO}", _RATIO),
        (_RATIO, f"{_RATIO}+{_WAY}", "", _WAY),
        (f"{_RATIO}+{_WAY}", _RATIO, _WAY, ""),
    ),
    difficulty=0.9,
)

FAMILIES = (CHANGE, ORIGINAL)
VARIANT_FAMILIES = (COMPARE,)
VARIANTS = (COMPARE_VARIANTS,)

__all__ = ["FAMILIES", "VARIANTS", "VARIANT_FAMILIES"]
