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


def _add_steps(p: Params, under: tuple[str, str], column: tuple[int, int, int], write: int,
               carry: int) -> str:  # fmt: skip
    """The words every addition rationale shares; only the numbers differ."""
    i, x, y = column
    return (
        f"Write {p['b']} under {p['a']}, with the digit {under[0]} under the digit {under[1]}. "
        f"Add the columns from the right. In the {PLACES[i]} column, {x} + {y} = {x + y}: write "
        f"{write} and add {carry} to the next column; do the same in each column."
    )


def _ones(p: Params) -> tuple[str, str]:
    return str(p["b"])[-1], str(p["a"])[-1]


def _add_explain(p: Params) -> str:
    _, x, y = col = _first_carry(p)
    return _add_steps(p, _ones(p), col, x + y - 10, 1)


def _add_forget_explain(p: Params) -> str:
    _, x, y = col = _first_carry(p)
    return _add_steps(p, _ones(p), col, x + y - 10, 0)


def _add_column_explain(p: Params) -> str:
    _, x, y = col = _first_carry(p)
    return _add_steps(p, _ones(p), col, x + y, 0)


def _add_left_explain(p: Params) -> str:
    a, b = str(p["a"]), str(p["b"])
    x = p["a"] % 10
    return _add_steps(p, (b[0], a[0]), (0, x, 0), x, 0)


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


def _sub_steps(p: Params, digit: str, take: int) -> str:
    """The words every subtraction rationale shares; only the numbers differ."""
    i, x, y = _first_borrow(p)
    return (
        f"Write {p['b']} under {p['a']}, lined up by place, and subtract the columns from the "
        f"right. In the {PLACES[i]} column the top digit is {x} and the bottom digit is {y}: the "
        f"digit there is {digit}, and take {take} from the top digit of the next column; do the "
        "same in each column."
    )


def _sub_explain(p: Params) -> str:
    _, x, y = _first_borrow(p)
    return _sub_steps(p, f"{x + 10} − {y} = {x + 10 - y}", 1)


def _sub_smaller_explain(p: Params) -> str:
    _, x, y = _first_borrow(p)
    return _sub_steps(p, f"{y} − {x} = {y - x}", 0)


def _sub_no_decrement_explain(p: Params) -> str:
    _, x, y = _first_borrow(p)
    return _sub_steps(p, f"{x + 10} − {y} = {x + 10 - y}", 0)


def _sub_zero_explain(p: Params) -> str:
    return _sub_steps(p, "0", 0)


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


def _mul_steps(p: Params, first: str, second: str) -> str:
    """The words every multiplication rationale shares; only the numbers differ."""
    return (
        f"Multiply {p['a']} by {p['b']} in two rows. First row: {first}. Second row: {second}. "
        "Add the two rows."
    )


def _mul_explain(p: Params) -> str:
    a, b = p["a"], p["b"]
    b1, b0 = divmod(b, 10)
    return _mul_steps(p, f"{a} × {b0} = {a * b0}", f"{a} × {b1 * 10} = {a * b1 * 10}")


def _mul_shift_explain(p: Params) -> str:
    a, b = p["a"], p["b"]
    b1, b0 = divmod(b, 10)
    return _mul_steps(p, f"{a} × {b0} = {a * b0}", f"{a} × {b1} = {a * b1}")


def _mul_matching_explain(p: Params) -> str:
    (a1, a0), (b1, b0) = divmod(p["a"], 10), divmod(p["b"], 10)
    return _mul_steps(p, f"{a0} × {b0} = {a0 * b0}", f"{a1 * 10} × {b1 * 10} = {a1 * b1 * 100}")


def _mul_carry_explain(p: Params) -> str:
    a, b = p["a"], p["b"]
    b1, b0 = divmod(b, 10)
    return _mul_steps(
        p,
        f"{a} × {b0} = {_partial_no_carry(a, b0)}",
        f"{a} × {b1 * 10} = {10 * _partial_no_carry(a, b1)}",
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
