"""Adding fractions with unlike denominators and dividing fractions.

The distractor rules are the "whole-number" treatments of fractions documented since the 1980s:
operate on numerators and denominators as independent whole numbers (add across, multiply
across), or apply the invert-and-multiply rule to the wrong operand.
"""

from __future__ import annotations

from fractions import Fraction
from math import gcd, lcm

import numpy as np

from ..model import Family, Params, RuleImpl


def _proper(rng: np.random.Generator, lo_den: int, hi_den: int) -> tuple[int, int]:
    while True:
        d = int(rng.integers(lo_den, hi_den + 1))
        n = int(rng.integers(1, d))
        if gcd(n, d) == 1:
            return n, d


_LOWEST = " Write the answer as a fraction in lowest terms."

# --- addition ------------------------------------------------------------------------------------

_ADD_TEMPLATES = (
    "What is {a}/{b} + {c}/{d}?" + _LOWEST,
    "Add {a}/{b} and {c}/{d}." + _LOWEST,
    "Maya ate {a}/{b} of a pizza and her brother ate {c}/{d} of the same pizza. What fraction of "
    "the pizza did they eat altogether?" + _LOWEST,
)


def _add_sample(rng: np.random.Generator, grade: int) -> Params:
    hi = 8 if grade <= 5 else 12
    while True:
        (a, b), (c, d) = _proper(rng, 2, hi), _proper(rng, 2, hi)
        if b != d:
            t = int(rng.integers(len(_ADD_TEMPLATES)))
            return {"a": a, "b": b, "c": c, "d": d, "template": t}


def _one_fraction(what: str, numerator: str, denominator: str) -> str:
    """The words every fraction rationale shares; only the numbers differ."""
    return (
        f"Write the {what} as one fraction: the numerator is {numerator} and the denominator is "
        f"{denominator}. Then simplify."
    )


def _add_explain(p: Params) -> str:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    m = lcm(b, d)
    return _one_fraction("sum", f"{a} × {m // b} + {c} × {m // d}", f"{m}")


def _add_across_explain(p: Params) -> str:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    return _one_fraction("sum", f"{a} + {c}", f"{b} + {d}")


def _add_no_scale_explain(p: Params) -> str:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    return _one_fraction("sum", f"{a} + {c}", f"{lcm(b, d)}")


def _add_multiply_explain(p: Params) -> str:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    return _one_fraction("sum", f"{a} × {c}", f"{b} × {d}")


def _rename_only(p: Params) -> Fraction | None:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    m = lcm(b, d)
    if m == max(b, d):
        return None  # one denominator is the common one: renaming only the numerators is right
    return Fraction(a * (m // b) + c * (m // d), max(b, d))


def _add_rename_only_explain(p: Params) -> str:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    m = lcm(b, d)
    return _one_fraction("sum", f"{a} × {m // b} + {c} × {m // d}", f"{max(b, d)}")


def _add_cross_add_explain(p: Params) -> str:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    return _one_fraction("sum", f"{a} × {d} + {c} × {b}", f"{b} + {d}")


def _add_keep_first_explain(p: Params) -> str:
    a, b, c = p["a"], p["b"], p["c"]
    return _one_fraction("sum", f"{a} + {c}", f"{b}")


def _add_own_denominator_explain(p: Params) -> str:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    return _one_fraction("sum", f"{a} × {b} + {c} × {d}", f"{b} × {d}")


ADDITION = Family(
    id="fraction_addition",
    name="Add fractions with unlike denominators",
    content="Number & Operation",
    grades=(5, 6),
    dok=1,
    kind="fraction",
    sample=_add_sample,
    question=lambda p: _ADD_TEMPLATES[p["template"]].format(**p),
    solve=lambda p: Fraction(p["a"], p["b"]) + Fraction(p["c"], p["d"]),
    explain=_add_explain,
    rules={
        "add_across": RuleImpl(
            lambda p: Fraction(p["a"] + p["c"], p["b"] + p["d"]), _add_across_explain
        ),
        "common_denominator_no_scale": RuleImpl(
            lambda p: Fraction(p["a"] + p["c"], lcm(p["b"], p["d"])), _add_no_scale_explain
        ),
        "multiply_across": RuleImpl(
            lambda p: Fraction(p["a"] * p["c"], p["b"] * p["d"]), _add_multiply_explain
        ),
        "rename_numerators_only": RuleImpl(_rename_only, _add_rename_only_explain),
        "cross_multiply_add_denominators": RuleImpl(
            lambda p: Fraction(p["a"] * p["d"] + p["c"] * p["b"], p["b"] + p["d"]),
            _add_cross_add_explain,
        ),
        "keep_first_denominator": RuleImpl(
            lambda p: Fraction(p["a"] + p["c"], p["b"]), _add_keep_first_explain
        ),
        "scale_by_own_denominator": RuleImpl(
            # with equal numerators the wrong scaling gives the right sum: (a − c)(b − d) = 0
            lambda p: (
                None
                if p["a"] == p["c"]
                else Fraction(p["a"] * p["b"] + p["c"] * p["d"], p["b"] * p["d"])
            ),
            _add_own_denominator_explain,
        ),
    },
    difficulty=0.0,
)

# --- division ------------------------------------------------------------------------------------

_DIV_TEMPLATES = (
    "What is {a}/{b} ÷ {c}/{d}?" + _LOWEST,
    "Divide {a}/{b} by {c}/{d}." + _LOWEST,
    "How many times does {c}/{d} go into {a}/{b}?" + _LOWEST,
)


def _div_sample(rng: np.random.Generator, grade: int) -> Params:
    while True:
        (a, b), (c, d) = _proper(rng, 2, 10), _proper(rng, 2, 10)
        if (a, b) != (c, d):
            t = int(rng.integers(len(_DIV_TEMPLATES)))
            return {"a": a, "b": b, "c": c, "d": d, "template": t}


def _div_explain(p: Params) -> str:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    return _one_fraction("quotient", f"{a} × {d}", f"{b} × {c}")


def _div_invert_first_explain(p: Params) -> str:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    return _one_fraction("quotient", f"{b} × {c}", f"{a} × {d}")


def _div_multiply_explain(p: Params) -> str:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    return _one_fraction("quotient", f"{a} × {c}", f"{b} × {d}")


def _div_invert_both_explain(p: Params) -> str:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    return _one_fraction("quotient", f"{b} × {d}", f"{a} × {c}")


def _div_common_den_explain(p: Params) -> str:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    return _one_fraction("quotient", f"{a} × {d}", f"{b} × {c} × {b * d}")


def _div_cross_only_explain(p: Params) -> str:
    a, d = p["a"], p["d"]
    return _one_fraction("quotient", f"{a} × {d}", "1")


DIVISION = Family(
    id="fraction_division",
    name="Divide fractions",
    content="Number & Operation",
    grades=(6, 7),
    dok=1,
    kind="fraction",
    sample=_div_sample,
    question=lambda p: _DIV_TEMPLATES[p["template"]].format(**p),
    solve=lambda p: Fraction(p["a"], p["b"]) / Fraction(p["c"], p["d"]),
    explain=_div_explain,
    rules={
        "invert_dividend": RuleImpl(
            lambda p: Fraction(p["b"] * p["c"], p["a"] * p["d"]), _div_invert_first_explain
        ),
        "multiply_across": RuleImpl(
            lambda p: Fraction(p["a"] * p["c"], p["b"] * p["d"]), _div_multiply_explain
        ),
        "invert_both": RuleImpl(
            lambda p: Fraction(p["b"] * p["d"], p["a"] * p["c"]), _div_invert_both_explain
        ),
        "divide_keep_common_denominator": RuleImpl(
            lambda p: Fraction(p["a"] * p["d"], p["b"] * p["c"] * p["b"] * p["d"]),
            _div_common_den_explain,
        ),
        "cross_multiply_only": RuleImpl(lambda p: p["a"] * p["d"], _div_cross_only_explain),
    },
    difficulty=0.2,
)

FAMILIES = (ADDITION, DIVISION)

__all__ = ["FAMILIES"]
