"""Whole-number addition, subtraction and multiplication with the written column algorithms.

The classic procedural bugs of Brown & Burton (1978) and VanLehn (1990) live here: they act on
the digits column by column, so each rule is computed on the digit lists, never by patching the
correct result.
"""

from __future__ import annotations

import numpy as np

from ..model import Family, Params, RuleImpl
from ._util import PLACES, digits, from_digits, number

# --- addition -----------------------------------------------------------------------------------

_ADD_TEMPLATES = (
    "What is {a} + {b}?",
    "Find the sum of {a} and {b}.",
    "A library had {a} books and bought {b} more. How many books does it have now?",
)


def _add_sample(rng: np.random.Generator, grade: int) -> Params:
    la = 3 if grade <= 3 else 4
    while True:
        a = number(rng, la)
        b = number(rng, la - 1)
        da, db = digits(a), digits(b, la)
        if any(x + y >= 10 for x, y in zip(da[:-1], db[:-1], strict=True)):
            return {"a": a, "b": b, "template": int(rng.integers(len(_ADD_TEMPLATES)))}


def _cols(p: Params) -> tuple[list[int], list[int]]:
    a, b = p["a"], p["b"]
    w = len(str(a))
    return digits(a, w), digits(b, w)


def _first_carry(p: Params) -> tuple[int, int, int]:
    da, db = _cols(p)
    i = next(i for i, (x, y) in enumerate(zip(da, db, strict=True)) if x + y >= 10)
    return i, da[i], db[i]


def _add_forget_carry(p: Params) -> int:
    da, db = _cols(p)
    top = len(da) - 1
    return sum(
        ((x + y) % 10 if i < top else x + y) * 10**i
        for i, (x, y) in enumerate(zip(da, db, strict=True))
    )


def _add_column_sums(p: Params) -> int:
    da, db = _cols(p)
    return int("".join(str(x + y) for x, y in zip(reversed(da), reversed(db), strict=True)))


def _add_left_align(p: Params) -> int:
    a, b = p["a"], p["b"]
    return a + b * 10 ** (len(str(a)) - len(str(b)))


def _add_explain(p: Params) -> str:
    i, x, y = _first_carry(p)
    return (
        f"Line up {p['a']} and {p['b']} by their ones digits and add column by column from the "
        f"right. In the {PLACES[i]} column {x} + {y} = {x + y}: write {x + y - 10} and carry 1 "
        "into the next column; do the same wherever a column reaches 10 or more."
    )


def _add_forget_explain(p: Params) -> str:
    i, x, y = _first_carry(p)
    return (
        f"Added {p['a']} and {p['b']} column by column, but in the {PLACES[i]} column wrote only "
        f"the {x + y - 10} of {x} + {y} = {x + y} and never carried the 1 into the next column "
        "(and likewise in every other column)."
    )


def _add_column_explain(p: Params) -> str:
    i, x, y = _first_carry(p)
    return (
        f"Added each column of {p['a']} + {p['b']} on its own and wrote the whole column sum "
        f"under it: the {PLACES[i]} column gave {x} + {y} = {x + y}, and all of {x + y} was "
        "written in the answer instead of writing one digit and carrying the other."
    )


def _add_left_explain(p: Params) -> str:
    a, b = p["a"], p["b"]
    shifted = b * 10 ** (len(str(a)) - len(str(b)))
    return (
        f"Wrote {b} under {a} lined up by their first digits instead of their ones digits, so "
        f"{b} was added as if it were {shifted}."
    )


ADDITION = Family(
    id="whole_addition",
    name="Add whole numbers with regrouping",
    content="Number & Operation",
    grades=(3, 4),
    dok=1,
    kind="int",
    sample=_add_sample,
    question=lambda p: _ADD_TEMPLATES[p["template"]].format(**p),
    solve=lambda p: p["a"] + p["b"],
    explain=_add_explain,
    rules={
        "forget_carry": RuleImpl(_add_forget_carry, _add_forget_explain),
        "write_column_sum": RuleImpl(_add_column_sums, _add_column_explain),
        "left_align_addends": RuleImpl(_add_left_align, _add_left_explain),
    },
    difficulty=-1.0,
)

# --- subtraction ---------------------------------------------------------------------------------

_SUB_TEMPLATES = (
    "What is {a} − {b}?",
    "Subtract {b} from {a}.",
    "A school has {a} students. {b} of them are on a field trip. How many students are not on "
    "the trip?",
)


def _sub_sample(rng: np.random.Generator, grade: int) -> Params:
    la = 3 if grade <= 3 else 4
    while True:
        a = number(rng, la, low=1)  # no zeros on top: borrowing across zero is another bug family
        b = number(rng, la - int(rng.integers(2)))
        da, db = digits(a), digits(b, la)
        if a > b and any(x < y for x, y in zip(da, db, strict=True)):
            return {"a": a, "b": b, "template": int(rng.integers(len(_SUB_TEMPLATES)))}


def _sub_columns(p: Params, rule) -> int:
    da, db = _cols(p)
    return from_digits([rule(x, y) for x, y in zip(da, db, strict=True)])


def _first_borrow(p: Params) -> tuple[int, int, int]:
    da, db = _cols(p)
    i = next(i for i, (x, y) in enumerate(zip(da, db, strict=True)) if x < y)
    return i, da[i], db[i]


def _sub_explain(p: Params) -> str:
    i, x, y = _first_borrow(p)
    nxt = PLACES[i + 1]
    return (
        f"Line up {p['a']} and {p['b']} by place value and subtract column by column from the "
        f"right. In the {PLACES[i]} column {x} is less than {y}, so regroup one {nxt[:-1]} from "
        "the "
        f"{nxt} column: {x + 10} − {y} = {x + 10 - y}, and the {nxt} digit on top goes down by 1."
    )


def _sub_smaller_explain(p: Params) -> str:
    i, x, y = _first_borrow(p)
    return (
        f"Subtracted column by column, always taking the smaller digit from the larger: in the "
        f"{PLACES[i]} column computed {y} − {x} = {y - x} instead of regrouping to get {x + 10} − "
        f"{y}."
    )


def _sub_no_decrement_explain(p: Params) -> str:
    i, x, y = _first_borrow(p)
    return (
        f"Regrouped in the {PLACES[i]} column ({x + 10} − {y} = {x + 10 - y}) but did not reduce "
        f"the {PLACES[i + 1]} digit on top by 1, so what was borrowed was never taken away."
    )


def _sub_zero_explain(p: Params) -> str:
    i, x, y = _first_borrow(p)
    return (
        f"In the {PLACES[i]} column the top digit {x} is smaller than {y}, so wrote 0 there "
        "instead of regrouping, and subtracted the other columns normally."
    )


SUBTRACTION = Family(
    id="whole_subtraction",
    name="Subtract whole numbers with regrouping",
    content="Number & Operation",
    grades=(3, 4),
    dok=1,
    kind="int",
    sample=_sub_sample,
    question=lambda p: _SUB_TEMPLATES[p["template"]].format(**p),
    solve=lambda p: p["a"] - p["b"],
    explain=_sub_explain,
    rules={
        "smaller_from_larger": RuleImpl(
            lambda p: _sub_columns(p, lambda x, y: abs(x - y)), _sub_smaller_explain
        ),
        "borrow_no_decrement": RuleImpl(
            lambda p: _sub_columns(p, lambda x, y: (x - y) % 10), _sub_no_decrement_explain
        ),
        "zero_instead_of_borrow": RuleImpl(
            lambda p: _sub_columns(p, lambda x, y: max(x - y, 0)), _sub_zero_explain
        ),
    },
    difficulty=-0.8,
)

# --- multiplication ------------------------------------------------------------------------------

_MUL_TEMPLATES = (
    "What is {a} × {b}?",
    "Multiply {a} by {b}.",
    "A theater has {b} rows with {a} seats in each row. How many seats are there in all?",
)


def _mul_sample(rng: np.random.Generator, grade: int) -> Params:
    low = 2 if grade <= 4 else 3
    while True:
        a, b = number(rng, 2, low=low), number(rng, 2, low=low)
        if (a % 10) * (b % 10) >= 10 and a != b:
            return {"a": a, "b": b, "template": int(rng.integers(len(_MUL_TEMPLATES)))}


def _partial_no_carry(a: int, d: int) -> int:
    da = digits(a)
    top = len(da) - 1
    return sum(((x * d) % 10 if i < top else x * d) * 10**i for i, x in enumerate(da))


def _mul_explain(p: Params) -> str:
    a, b = p["a"], p["b"]
    b1, b0 = divmod(b, 10)
    return (
        f"Multiply {a} by the ones digit {b0}: {a} × {b0} = {a * b0}. Multiply {a} by the tens "
        f"digit, which is worth {b1 * 10}: {a} × {b1 * 10} = {a * b1 * 10} (the placeholder zero "
        "keeps it in the tens place). Add the two partial products."
    )


def _mul_shift_explain(p: Params) -> str:
    a, b = p["a"], p["b"]
    b1, b0 = divmod(b, 10)
    return (
        f"Multiplied {a} × {b0} = {a * b0} and {a} × {b1} = {a * b1}, but wrote the second partial "
        f"product without the placeholder zero (as {a * b1} instead of {a * b1 * 10}) before "
        "adding."
    )


def _mul_matching_explain(p: Params) -> str:
    (a1, a0), (b1, b0) = divmod(p["a"], 10), divmod(p["b"], 10)
    return (
        f"Multiplied only digits in matching places: tens by tens ({a1 * 10} × {b1 * 10} = "
        f"{a1 * b1 * 100}) and ones by ones ({a0} × {b0} = {a0 * b0}), then added; the cross "
        f"products {a1 * 10} × {b0} and {a0} × {b1 * 10} were left out."
    )


def _mul_carry_explain(p: Params) -> str:
    a, b = p["a"], p["b"]
    a0, b0 = a % 10, b % 10
    return (
        f"Used the column algorithm but never added carried digits: in {a} × {b0}, "
        f"{a0} × {b0} = {a0 * b0} was written as {a0 * b0 % 10} and the {a0 * b0 // 10} was not "
        "added to the next product; the same happened in the second row before adding the rows."
    )


MULTIPLICATION = Family(
    id="whole_multiplication",
    name="Multiply two-digit numbers",
    content="Number & Operation",
    grades=(4, 5),
    dok=1,
    kind="int",
    sample=_mul_sample,
    question=lambda p: _MUL_TEMPLATES[p["template"]].format(**p),
    solve=lambda p: p["a"] * p["b"],
    explain=_mul_explain,
    rules={
        "place_value_shift": RuleImpl(
            lambda p: p["a"] * (p["b"] % 10) + p["a"] * (p["b"] // 10), _mul_shift_explain
        ),
        "multiply_matching_places": RuleImpl(
            lambda p: (p["a"] // 10) * (p["b"] // 10) * 100 + (p["a"] % 10) * (p["b"] % 10),
            _mul_matching_explain,
        ),
        "forget_carry": RuleImpl(
            lambda p: (
                _partial_no_carry(p["a"], p["b"] % 10)
                + 10 * _partial_no_carry(p["a"], p["b"] // 10)
            ),
            _mul_carry_explain,
        ),
    },
    difficulty=-0.3,
)

FAMILIES = (ADDITION, SUBTRACTION, MULTIPLICATION)

__all__ = ["FAMILIES"]
