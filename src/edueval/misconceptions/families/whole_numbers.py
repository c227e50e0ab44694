"""Whole-number addition, subtraction and multiplication with the written column algorithms.

The classic procedural bugs of Brown & Burton (1978) and VanLehn (1990) live here: they act on
the digits column by column, so each rule is computed on the digit lists, never by patching the
correct result.
"""

from __future__ import annotations

import numpy as np

from ..model import Choice, Family, Params, RuleImpl, Steps
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


def _add_carry_ones(p: Params) -> int:
    """Column addition that writes the tens digit of a column sum and carries its ones digit."""
    da, db = _cols(p)
    top, carry, total = len(da) - 1, 0, 0
    for i, (x, y) in enumerate(zip(da, db, strict=True)):
        s = x + y + carry
        if i == top:
            return total + s * 10**i
        write, carry = (s // 10, s % 10) if s >= 10 else (s, 0)
        total += write * 10**i
    return total  # pragma: no cover - the loop returns at the top column


def _lower(p: Params) -> str:
    """The digits of ``a`` that have a digit of ``b`` under them (zero-padded)."""
    return str(p["a"])[-len(str(p["b"])) :]


def _add_quit(p: Params) -> int:
    return int(_lower(p)) + p["b"]


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


def _add_carry_ones_explain(p: Params) -> str:
    _, x, y = col = _first_carry(p)
    return _add_steps(p, _ones(p), col, (x + y) // 10, (x + y) % 10)


def _add_quit_explain(p: Params) -> str:
    _, x, y = col = _first_carry(p)
    return _add_steps({**p, "a": _lower(p)}, _ones(p), col, x + y - 10, 1)


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
        "carry_ones_digit": RuleImpl(_add_carry_ones, _add_carry_ones_explain),
        "quit_when_bottom_blank": RuleImpl(_add_quit, _add_quit_explain),
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


def _sub_steps(
    p: Params, digit: str, take: int, lender: int | None = None, row: str = "top"
) -> str:
    """The words every subtraction rationale shares; only the numbers (and place names) differ.
    ``lender`` is the column the ``take`` comes from (the next one by default), ``row`` the
    number it is taken from."""
    i, x, y = _first_borrow(p)
    lender = i + 1 if lender is None else lender
    return (
        f"Write {p['b']} under {p['a']}, lined up by place, and subtract the columns from the "
        f"right. In the {PLACES[i]} column the top digit is {x} and the bottom digit is {y}: the "
        f"digit there is {digit}, and take {take} from the {row} digit of the {PLACES[lender]} "
        "column; do the same in each column."
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


def _sub_borrowing(p: Params, lender_of, regroup: bool) -> int | None:
    """Column subtraction that takes 1 from column ``lender_of(i, top)`` whenever column ``i``'s
    top digit is too small; the column's digit is ``x + 10 − y`` (``regroup``) or ``y − x``.
    ``None`` when the leftmost column ends up negative (the procedure breaks down)."""
    da, db = _cols(p)
    tops, top, digits_out = list(da), len(da) - 1, []
    for i, y in enumerate(db):
        x = tops[i]
        if i < top and x < y:
            tops[lender_of(i, top)] -= 1
            digits_out.append(x + 10 - y if regroup else y - x)
        elif x < y:
            return None
        else:
            digits_out.append(x - y)
    return from_digits(digits_out)


def _sub_from_bottom(p: Params) -> int | None:
    """Regrouping that takes the 1 from the next column's bottom digit instead of its top digit
    (``None`` when that bottom digit is 0 or there is no next column)."""
    da, db = _cols(p)
    bottoms, digits_out = list(db), []
    for i, x in enumerate(da):
        y = bottoms[i]
        if x < y:
            if i == len(da) - 1 or bottoms[i + 1] == 0:
                return None
            bottoms[i + 1] -= 1
            digits_out.append(x + 10 - y)
        else:
            digits_out.append(x - y)
    return from_digits(digits_out)


def _sub_from_bottom_explain(p: Params) -> str:
    _, x, y = _first_borrow(p)
    return _sub_steps(p, f"{x + 10} − {y} = {x + 10 - y}", 1, row="bottom")


def _sub_leftmost(p: Params) -> int | None:
    """``None`` when the first column to regroup is next to the leftmost one: taking from the
    leftmost digit is then the correct step."""
    da, db = _cols(p)
    first = next((i for i, (x, y) in enumerate(zip(da, db, strict=True)) if x < y), None)
    if first is None or first + 1 >= len(da) - 1:
        return None
    return _sub_borrowing(p, lambda i, top: top, regroup=True)


def _sub_take_no_regroup(p: Params) -> int | None:
    return _sub_borrowing(p, lambda i, top: i + 1, regroup=False)


def _sub_quit(p: Params) -> int | None:
    lb = len(str(p["b"]))
    if lb == len(str(p["a"])):
        return None
    return (p["a"] - p["b"]) % 10**lb


def _sub_leftmost_explain(p: Params) -> str:
    _, x, y = _first_borrow(p)
    return _sub_steps(p, f"{x + 10} − {y} = {x + 10 - y}", 1, len(str(p["a"])) - 1)


def _sub_take_no_regroup_explain(p: Params) -> str:
    _, x, y = _first_borrow(p)
    return _sub_steps(p, f"{y} − {x} = {y - x}", 1)


def _sub_quit_explain(p: Params) -> str:
    _, x, y = _first_borrow(p)
    return _sub_steps({**p, "a": _lower(p)}, f"{x + 10} − {y} = {x + 10 - y}", 1)


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
        "borrow_from_leftmost": RuleImpl(_sub_leftmost, _sub_leftmost_explain),
        "take_without_regrouping": RuleImpl(_sub_take_no_regroup, _sub_take_no_regroup_explain),
        "quit_when_bottom_blank": RuleImpl(_sub_quit, _sub_quit_explain),
        "borrow_from_bottom": RuleImpl(_sub_from_bottom, _sub_from_bottom_explain),
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


def _row_carry_first(a: int, d: int) -> int:
    """``a × d`` (``a`` two-digit) adding the ones product's carry to the tens digit *before*
    multiplying it."""
    a1, (c, w) = a // 10, divmod((a % 10) * d, 10)
    return (a1 + c) * d * 10 + w


def _row_in_full(a: int, d: int) -> int:
    """``a × d`` writing each digit product in full, side by side (34 × 6 -> "18" "24")."""
    a1, a0 = divmod(a, 10)
    return int(f"{a1 * d}{a0 * d}")


def _mul_rows(p: Params, row) -> tuple[int, int]:
    b1, b0 = divmod(p["b"], 10)
    return row(p["a"], b0), 10 * row(p["a"], b1)


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


def _mul_rows_explain(p: Params, row) -> str:
    b1, b0 = divmod(p["b"], 10)
    r0, r1 = _mul_rows(p, row)
    return _mul_steps(p, f"{p['a']} × {b0} = {r0}", f"{p['a']} × {b1 * 10} = {r1}")


def _mul_two_zeros_explain(p: Params) -> str:
    a, b = p["a"], p["b"]
    b1, b0 = divmod(b, 10)
    return _mul_steps(p, f"{a} × {b0} = {a * b0}", f"{a} × {b1 * 100} = {a * b1 * 100}")


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
        "carry_before_multiply": RuleImpl(
            lambda p: sum(_mul_rows(p, _row_carry_first)),
            lambda p: _mul_rows_explain(p, _row_carry_first),
        ),
        "two_placeholder_zeros": RuleImpl(
            lambda p: p["a"] * (p["b"] % 10) + p["a"] * (p["b"] // 10) * 100,
            _mul_two_zeros_explain,
        ),
        "write_digit_products": RuleImpl(
            lambda p: sum(_mul_rows(p, _row_in_full)),
            lambda p: _mul_rows_explain(p, _row_in_full),
        ),
    },
    difficulty=-0.3,
)

# --- the procedures as steps (:mod:`..compose`) ----------------------------------------------------

#: how each row ``a × digit`` is worked (step 0 of multiplication)
_ROWS = {
    None: lambda a, d: a * d,
    "forget_carry": _partial_no_carry,
    "carry_before_multiply": _row_carry_first,
    "write_digit_products": _row_in_full,
}
#: the place value given to the second row (step 1)
_SHIFTS = {None: 10, "place_value_shift": 1, "two_placeholder_zeros": 100}


def _mul_compose(p: Params, c: Choice) -> tuple[int, str]:
    """Two rows, each ``a × digit`` worked by step 0's procedure, the second shifted by step 1's
    place value, then added."""
    a, (b1, b0) = p["a"], divmod(p["b"], 10)
    row, shift = _ROWS[c[0]], _SHIFTS[c[1]]
    r0, r1 = row(a, b0), shift * row(a, b1)
    return r0 + r1, _mul_steps(p, f"{a} × {b0} = {r0}", f"{a} × {b1 * shift} = {r1}")


MULTIPLICATION_STEPS = Steps(
    family="whole_multiplication",
    steps=(
        ("forget_carry", "carry_before_multiply", "write_digit_products"),
        ("place_value_shift", "two_placeholder_zeros"),
    ),
    answer=lambda p, c: _mul_compose(p, c)[0],
    explain=lambda p, c: _mul_compose(p, c)[1],
)

FAMILIES = (ADDITION, SUBTRACTION, MULTIPLICATION)
STEPS = (MULTIPLICATION_STEPS,)

__all__ = ["FAMILIES", "STEPS"]
