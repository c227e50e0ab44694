"""Order of operations, evaluating algebraic expressions, and two-step linear equations.

Order-of-operations rules reappear inside the algebra families: a student who works left to right
does so in ``40 − 3 × 4 + 5`` and in ``x² + 3x`` at ``x = 5`` alike, which is what makes an error
on one question predictive of the error on a related one.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..model import Family, Params, RuleImpl
from ._util import pick

# --- order of operations: a − b × c + d -----------------------------------------------------------

_OOO_TEMPLATES = (
    "What is the value of {a} − {b} × {c} + {d}?",
    "Evaluate {a} − {b} × {c} + {d}.",
)


def _grouped(expr: str, var: str | None = None) -> str:
    """The words every expression rationale shares: the operations grouped in the order they
    are done; only the numbers differ."""
    lhs = f"{var} = " if var else ""
    return f"Group the operations as {lhs}{expr} and evaluate."


def _undo(p: Params) -> str:
    return "−" if p["plus"] else "+"


def _same(p: Params) -> str:
    return "+" if p["plus"] else "−"


def _ooo_sample(rng: np.random.Generator, grade: int) -> Params:
    b, c, d = (int(v) for v in rng.integers(2, 10, size=3))
    a = b * c + d + int(rng.integers(1, 31))
    return {"a": a, "b": b, "c": c, "d": d, "template": int(rng.integers(len(_OOO_TEMPLATES)))}


def _ooo_explain(p: Params) -> str:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    return _grouped(f"({a} − ({b} × {c})) + {d}")


def _ooo_l2r_explain(p: Params) -> str:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    return _grouped(f"(({a} − {b}) × {c}) + {d}")


def _ooo_add_first_explain(p: Params) -> str:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    return _grouped(f"({a} − {b}) × ({c} + {d})")


def _ooo_add_sub_explain(p: Params) -> str:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    return _grouped(f"{a} − (({b} × {c}) + {d})")


def _ooo_r2l_explain(p: Params) -> str:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    return _grouped(f"{a} − ({b} × ({c} + {d}))")


def _ooo_all_explain(p: Params) -> str:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    return _grouped(f"{a} × {b} × {c} × {d}")


ORDER_OF_OPERATIONS = Family(
    id="order_of_operations",
    name="Evaluate a numerical expression (order of operations)",
    content="Algebra",
    grades=(5, 6),
    dok=1,
    kind="int",
    sample=_ooo_sample,
    question=lambda p: _OOO_TEMPLATES[p["template"]].format(**p),
    solve=lambda p: p["a"] - p["b"] * p["c"] + p["d"],
    explain=_ooo_explain,
    rules={
        "left_to_right": RuleImpl(lambda p: (p["a"] - p["b"]) * p["c"] + p["d"], _ooo_l2r_explain),
        "add_before_multiply": RuleImpl(
            lambda p: (p["a"] - p["b"]) * (p["c"] + p["d"]), _ooo_add_first_explain
        ),
        "add_before_subtract": RuleImpl(
            lambda p: p["a"] - (p["b"] * p["c"] + p["d"]), _ooo_add_sub_explain
        ),
        "right_to_left": RuleImpl(lambda p: p["a"] - p["b"] * (p["c"] + p["d"]), _ooo_r2l_explain),
        "multiply_all_numbers": RuleImpl(
            lambda p: p["a"] * p["b"] * p["c"] * p["d"], _ooo_all_explain
        ),
    },
    difficulty=-0.2,
)

# --- evaluate kx² + ax ----------------------------------------------------------------------------

_VARS = ("x", "y", "n", "m")


def _quad_sample(rng: np.random.Generator, grade: int) -> Params:
    a, n = (int(v) for v in rng.integers(2, 10, size=2))
    k = int(rng.integers(1, 5))
    return {"a": a, "n": n, "var": pick(rng, _VARS), "k": k}


def _k(p: Params) -> int:
    """The leading coefficient (1 when the problem has none: ``x² + ax``)."""
    return int(p.get("k", 1))


def _quad_expr(p: Params) -> str:
    lead = "" if _k(p) == 1 else str(_k(p))
    return f"{lead}{p['var']}² + {p['a']}{p['var']}"


def _kx(p: Params, square: str) -> str:
    """The first term's product: ``n × n`` or ``k × n × n``."""
    return square if _k(p) == 1 else f"{_k(p)} × {square}"


def _quad_explain(p: Params) -> str:
    a, n = p["a"], p["n"]
    return _grouped(f"({_kx(p, f'{n} × {n}')}) + ({a} × {n})")


def _quad_double_explain(p: Params) -> str:
    a, n = p["a"], p["n"]
    return _grouped(f"({_kx(p, f'2 × {n}')}) + ({a} × {n})")


def _quad_concat_explain(p: Params) -> str:
    a, n = p["a"], p["n"]
    return _grouped(f"({_kx(p, f'{n} × {n}')}) + {a}{n}")


def _quad_l2r_explain(p: Params) -> str:
    a, n = p["a"], p["n"]
    return _grouped(f"(({_kx(p, f'{n} × {n}')}) + {a}) × {n}")


def _quad_drop_explain(p: Params) -> str:
    a, n = p["a"], p["n"]
    return _grouped(f"{_kx(p, f'{n}')} + ({a} × {n})")


def _quad_addend_explain(p: Params) -> str:
    a, n = p["a"], p["n"]
    return _grouped(f"({_kx(p, f'{n} × {n}')}) + ({a} + {n})")


def _quad_square_k_explain(p: Params) -> str:
    a, n, k = p["a"], p["n"], _k(p)
    return _grouped(f"({k} × {n}) × ({k} × {n}) + ({a} × {n})")


QUADRATIC = Family(
    id="evaluate_quadratic",
    name="Evaluate an expression with a square",
    content="Algebra",
    grades=(6, 7, 8),
    dok=1,
    kind="int",
    sample=_quad_sample,
    question=lambda p: f"What is the value of {_quad_expr(p)} when {p['var']} = {p['n']}?",
    solve=lambda p: _k(p) * p["n"] ** 2 + p["a"] * p["n"],
    explain=_quad_explain,
    rules={
        "square_as_double": RuleImpl(
            lambda p: _k(p) * 2 * p["n"] + p["a"] * p["n"], _quad_double_explain
        ),
        "concatenate_coefficient": RuleImpl(
            lambda p: _k(p) * p["n"] ** 2 + 10 * p["a"] + p["n"], _quad_concat_explain
        ),
        "left_to_right": RuleImpl(
            lambda p: (_k(p) * p["n"] ** 2 + p["a"]) * p["n"], _quad_l2r_explain
        ),
        "drop_exponent": RuleImpl(lambda p: _k(p) * p["n"] + p["a"] * p["n"], _quad_drop_explain),
        "coefficient_as_addend": RuleImpl(
            lambda p: _k(p) * p["n"] ** 2 + p["a"] + p["n"], _quad_addend_explain
        ),
        "square_the_coefficient": RuleImpl(
            lambda p: (_k(p) * p["n"]) ** 2 + p["a"] * p["n"] if _k(p) > 1 else None,
            _quad_square_k_explain,
        ),
    },
    difficulty=0.0,
)

# --- evaluate a(bx + c) ---------------------------------------------------------------------------


def _dist_sample(rng: np.random.Generator, grade: int) -> Params:
    a, b = (int(v) for v in rng.integers(2, 7, size=2))
    c, n = int(rng.integers(1, 10)), int(rng.integers(2, 10))
    return {"a": a, "b": b, "c": c, "n": n, "var": pick(rng, _VARS)}


def _dist_expr(p: Params) -> str:
    return f"{p['a']}({p['b']}{p['var']} + {p['c']})"


def _dist_explain(p: Params) -> str:
    a, b, c, n = p["a"], p["b"], p["c"], p["n"]
    return _grouped(f"{a} × ({b} × {n} + {c})")


def _dist_first_explain(p: Params) -> str:
    a, b, c, n = p["a"], p["b"], p["c"], p["n"]
    return _grouped(f"({a} × {b} × {n}) + {c}")


def _dist_concat_explain(p: Params) -> str:
    a, b, c, n = p["a"], p["b"], p["c"], p["n"]
    return _grouped(f"{a} × ({b}{n} + {c})")


def _dist_add_first_explain(p: Params) -> str:
    a, b, c, n = p["a"], p["b"], p["c"], p["n"]
    return _grouped(f"{a} × ({b} × ({n} + {c}))")


def _dist_addend_explain(p: Params) -> str:
    a, b, c, n = p["a"], p["b"], p["c"], p["n"]
    return _grouped(f"{a} × ({b} + {n} + {c})")


def _dist_drop_explain(p: Params) -> str:
    b, c, n = p["b"], p["c"], p["n"]
    return _grouped(f"({b} × {n}) + {c}")


def _dist_all_explain(p: Params) -> str:
    a, b, c, n = p["a"], p["b"], p["c"], p["n"]
    return _grouped(f"{a} × {b} × {n} × {c}")


DISTRIBUTIVE = Family(
    id="distributive_evaluate",
    name="Evaluate an expression with parentheses",
    content="Algebra",
    grades=(6, 7),
    dok=2,
    kind="int",
    sample=_dist_sample,
    question=lambda p: f"What is the value of {_dist_expr(p)} when {p['var']} = {p['n']}?",
    solve=lambda p: p["a"] * (p["b"] * p["n"] + p["c"]),
    explain=_dist_explain,
    rules={
        "distribute_first_only": RuleImpl(
            lambda p: p["a"] * p["b"] * p["n"] + p["c"], _dist_first_explain
        ),
        "concatenate_coefficient": RuleImpl(
            lambda p: p["a"] * (10 * p["b"] + p["n"] + p["c"]), _dist_concat_explain
        ),
        "add_before_multiply": RuleImpl(
            lambda p: p["a"] * p["b"] * (p["n"] + p["c"]), _dist_add_first_explain
        ),
        "coefficient_as_addend": RuleImpl(
            lambda p: p["a"] * (p["b"] + p["n"] + p["c"]), _dist_addend_explain
        ),
        "drop_the_factor": RuleImpl(lambda p: p["b"] * p["n"] + p["c"], _dist_drop_explain),
        "multiply_all_numbers": RuleImpl(
            lambda p: p["a"] * p["b"] * p["n"] * p["c"], _dist_all_explain
        ),
    },
    difficulty=0.3,
)

# --- solve ax ± b = c -----------------------------------------------------------------------------


def _lin_sample(rng: np.random.Generator, grade: int) -> Params:
    while True:
        a = int(rng.integers(2, 10))
        x = int(rng.integers(2, 13))
        b = a * int(rng.integers(1, 6))
        plus = bool(rng.random() < 0.6)
        c = a * x + b if plus else a * x - b
        if c > 0:
            return {"a": a, "b": b, "c": c, "plus": plus, "var": pick(rng, _VARS)}


def _op(p: Params) -> str:
    return "+" if p["plus"] else "−"


def _lin_equation(p: Params) -> str:
    return f"{p['a']}{p['var']} {_op(p)} {p['b']} = {p['c']}"


def _lin_solve(p: Params) -> Fraction:
    s = 1 if p["plus"] else -1
    return Fraction(p["c"] - s * p["b"], p["a"])


def _lin_explain(p: Params) -> str:
    a, b, c = p["a"], p["b"], p["c"]
    return _grouped(f"({c} {_undo(p)} {b}) ÷ {a}", p["var"])


def _lin_move_explain(p: Params) -> str:
    a, b, c = p["a"], p["b"], p["c"]
    return _grouped(f"({c} {_same(p)} {b}) ÷ {a}", p["var"])


def _lin_order_explain(p: Params) -> str:
    a, b, c = p["a"], p["b"], p["c"]
    return _grouped(f"({c} ÷ {a}) {_undo(p)} {b}", p["var"])


def _lin_coef_explain(p: Params) -> str:
    a, b, c = p["a"], p["b"], p["c"]
    return _grouped(f"({c} {_undo(p)} {b}) − {a}", p["var"])


def _lin_rest(p: Params) -> int:
    """``c ∓ b``: the right-hand side after the constant is undone."""
    return p["c"] - p["b"] if p["plus"] else p["c"] + p["b"]


def _lin_reversed_explain(p: Params) -> str:
    a, b, c = p["a"], p["b"], p["c"]
    return _grouped(f"{a} ÷ ({c} {_undo(p)} {b})", p["var"])


def _lin_multiply_explain(p: Params) -> str:
    a, b, c = p["a"], p["b"], p["c"]
    return _grouped(f"({c} {_undo(p)} {b}) × {a}", p["var"])


def _lin_swap_explain(p: Params) -> str:
    a, b, c = p["a"], p["b"], p["c"]
    return _grouped(f"({b} − {c}) ÷ {a}", p["var"])


LINEAR = Family(
    id="linear_equation",
    name="Solve a two-step linear equation",
    content="Algebra",
    grades=(7, 8),
    dok=2,
    kind="fraction",
    sample=_lin_sample,
    question=lambda p: f"Solve for {p['var']}: {_lin_equation(p)}.",
    solve=_lin_solve,
    explain=_lin_explain,
    rules={
        "move_term_no_sign_change": RuleImpl(
            lambda p: Fraction(p["c"] + (p["b"] if p["plus"] else -p["b"]), p["a"]),
            _lin_move_explain,
        ),
        "inverse_ops_wrong_order": RuleImpl(
            lambda p: Fraction(p["c"], p["a"]) + (-p["b"] if p["plus"] else p["b"]),
            _lin_order_explain,
        ),
        "coefficient_as_addend": RuleImpl(
            lambda p: p["c"] + (-p["b"] if p["plus"] else p["b"]) - p["a"], _lin_coef_explain
        ),
        "divide_the_wrong_way": RuleImpl(
            lambda p: Fraction(p["a"], _lin_rest(p)), _lin_reversed_explain
        ),
        "multiply_instead_of_divide": RuleImpl(
            lambda p: _lin_rest(p) * p["a"], _lin_multiply_explain
        ),
        "subtract_in_reverse_order": RuleImpl(
            lambda p: Fraction(p["b"] - p["c"], p["a"]) if p["plus"] else None,
            _lin_swap_explain,
        ),
    },
    difficulty=0.5,
)

FAMILIES = (ORDER_OF_OPERATIONS, QUADRATIC, DISTRIBUTIVE, LINEAR)

__all__ = ["FAMILIES"]
