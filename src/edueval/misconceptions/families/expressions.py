"""Order of operations, evaluating algebraic expressions, and two-step linear equations.

Order-of-operations rules reappear inside the algebra families: a student who works left to right
does so in ``40 − 3 × 4 + 5`` and in ``x² + 3x`` at ``x = 5`` alike, which is what makes an error
on one question predictive of the error on a related one.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..model import Choice, Family, Params, RuleImpl, Steps
from ._util import grid_labels, pick, variant_family

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

# --- the procedures as steps (:mod:`..compose`) ----------------------------------------------------


def _quad_first(p: Params, rule: str | None) -> tuple[int, str] | None:
    """The first term ``k·n²`` (value, text) under the squaring step's ``rule``."""
    n, k = p["n"], _k(p)
    if rule is None:
        return k * n * n, f"({_kx(p, f'{n} × {n}')})"
    if rule == "square_as_double":
        return k * 2 * n, f"({_kx(p, f'2 × {n}')})"
    if rule == "drop_exponent":
        return k * n, _kx(p, f"{n}")
    if k == 1:  # square_the_coefficient: there is no coefficient to square
        return None
    return (k * n) ** 2, f"({k} × {n}) × ({k} × {n})"


def _quad_steps(p: Params, c: Choice) -> tuple[int, str] | None:
    """``k·x² + a·x`` at ``x = n``: the squared term (step 0), then the ``a·x`` term and the sum
    (step 1)."""
    first = _quad_first(p, c[0])
    if first is None:
        return None
    (t, text), a, n = first, p["a"], p["n"]
    if c[1] is None:
        return t + a * n, f"{text} + ({a} × {n})"
    if c[1] == "concatenate_coefficient":
        return t + 10 * a + n, f"{text} + {a}{n}"
    if c[1] == "coefficient_as_addend":
        return t + a + n, f"{text} + ({a} + {n})"
    return (t + a) * n, f"({text} + {a}) × {n}"  # left_to_right


QUADRATIC_STEPS = Steps(
    family="evaluate_quadratic",
    steps=(
        ("square_as_double", "drop_exponent", "square_the_coefficient"),
        ("concatenate_coefficient", "coefficient_as_addend", "left_to_right"),
    ),
    answer=lambda p, c: None if (r := _quad_steps(p, c)) is None else r[0],
    explain=lambda p, c: _grouped("" if (r := _quad_steps(p, c)) is None else r[1]),
)


def _dist_steps(p: Params, c: Choice) -> tuple[int, str] | None:
    """``a(b·x + c)`` at ``x = n``: the term ``b·x`` (step 0), then the factor ``a`` and the
    grouping (step 1; adding before multiplying and multiplying everything regroup ``b·x``
    itself, so they do not compose with a flawed term)."""
    a, b, cc, n = p["a"], p["b"], p["c"], p["n"]
    inner = {
        None: (b * n, f"{b} × {n}"),
        "concatenate_coefficient": (10 * b + n, f"{b}{n}"),
        "coefficient_as_addend": (b + n, f"{b} + {n}"),
    }
    t, text = inner[c[0]]
    if c[1] in ("add_before_multiply", "multiply_all_numbers"):
        if c[0] is not None:  # both regroup the term b·x itself
            return None
        if c[1] == "add_before_multiply":
            return a * b * (n + cc), f"{a} × ({b} × ({n} + {cc}))"
        return a * b * n * cc, f"{a} × {b} × {n} × {cc}"
    if c[1] is None:
        return a * (t + cc), f"{a} × ({text} + {cc})"
    if c[1] == "drop_the_factor":
        return t + cc, f"({text}) + {cc}"
    if c[0] == "coefficient_as_addend":  # "a × b + n": which term is the first is unclear
        return None
    return a * t + cc, f"({a} × {text}) + {cc}"  # distribute_first_only


DISTRIBUTIVE_STEPS = Steps(
    family="distributive_evaluate",
    steps=(
        ("concatenate_coefficient", "coefficient_as_addend"),
        ("distribute_first_only", "drop_the_factor", "add_before_multiply", "multiply_all_numbers"),
    ),
    answer=lambda p, c: None if (r := _dist_steps(p, c)) is None else r[0],
    explain=lambda p, c: _grouped("" if (r := _dist_steps(p, c)) is None else r[1]),
)


def _lin_steps(p: Params, c: Choice) -> tuple[Fraction, str] | None:
    """``a·x ± b = c``: undo the constant (step 0), then the coefficient (step 1)."""
    a, b, cc = p["a"], p["b"], p["c"]
    if c[0] is None:
        rest, text = Fraction(_lin_rest(p)), f"({cc} {_undo(p)} {b})"
    elif c[0] == "move_term_no_sign_change":
        rest, text = Fraction(cc + b if p["plus"] else cc - b), f"({cc} {_same(p)} {b})"
    elif p["plus"]:  # subtract_in_reverse_order
        rest, text = Fraction(b - cc), f"({b} − {cc})"
    else:
        return None
    if c[1] is None:
        return rest / a, f"{text} ÷ {a}"
    if c[1] == "coefficient_as_addend":
        return rest - a, f"{text} − {a}"
    if c[1] == "multiply_instead_of_divide":
        return rest * a, f"{text} × {a}"
    if rest == 0:  # divide_the_wrong_way
        return None
    return Fraction(a) / rest, f"{a} ÷ {text}"


LINEAR_STEPS = Steps(
    family="linear_equation",
    steps=(
        ("move_term_no_sign_change", "subtract_in_reverse_order"),
        ("coefficient_as_addend", "multiply_instead_of_divide", "divide_the_wrong_way"),
    ),
    answer=lambda p, c: None if (r := _lin_steps(p, c)) is None else r[0],
    explain=lambda p, c: _grouped("" if (r := _lin_steps(p, c)) is None else r[1], p["var"]),
)

# --- question variants over the same numbers (:mod:`..variants`) ----------------------------------

#: a·x + b = c, a·x − b = c, a(x + b) = c, a(x − b) = c: bit 0 the sign, bit 1 the parentheses
_FORMS = ("{a}{x} + {b}", "{a}{x} − {b}", "{a}({x} + {b})", "{a}({x} − {b})")


def _forms_numbers(rng: np.random.Generator, grade: int) -> Params:
    """``a`` divides ``b`` and ``c``, and ``c > a·b``: every variant's answer is a whole number
    above 0."""
    a, k = int(rng.integers(2, 10)), int(rng.integers(1, 6))
    m = k * a + int(rng.integers(1, 13))
    return {"a": a, "b": a * k, "c": a * m, "var": pick(rng, _VARS)}


def _forms_value(p: Params, v: int) -> Fraction:
    a, b, c = p["a"], p["b"], p["c"]
    b = -b if v & 1 else b
    return Fraction(c, a) - b if v & 2 else Fraction(c - b, a)


def _forms_text(p: Params, v: int) -> str:
    a, b, c = p["a"], p["b"], p["c"]
    undo = "+" if v & 1 else "−"
    expr = f"({c} ÷ {a}) {undo} {b}" if v & 2 else f"({c} {undo} {b}) ÷ {a}"
    return _grouped(expr, p["var"])


LINEAR_FORMS, LINEAR_FORMS_VARIANTS = variant_family(
    id="linear_equation_forms",
    name="Solve a two-step linear equation with or without parentheses",
    content="Algebra",
    grades=(7, 8),
    dok=2,
    kind="fraction",
    numbers=_forms_numbers,
    question=lambda p, v: (
        f"Solve for {p['var']}: "
        + _FORMS[v].format(a=p["a"], b=p["b"], x=p["var"])
        + f" = {p['c']}."
    ),
    value=_forms_value,
    text=_forms_text,
    names=("a·x + b", "a·x − b", "a(x + b)", "a(x − b)"),
    labels=grid_labels(
        [
            ("move_term_no_sign_change", "move_term_no_sign_change"),
            ("inverse_ops_wrong_order", "distribute_first_only"),
        ]
    ),
    difficulty=0.5,
)

#: a + b × c − d and its groupings: bit 0 groups a + b, bit 1 groups c − d
_GROUPINGS = (
    "{a} + {b} × {c} − {d}",
    "({a} + {b}) × {c} − {d}",
    "{a} + {b} × ({c} − {d})",
    "({a} + {b}) × ({c} − {d})",
)
#: how each grouping is worked, fully bracketed
_WORKED = (
    "({a} + ({b} × {c})) − {d}",
    "(({a} + {b}) × {c}) − {d}",
    "{a} + ({b} × ({c} − {d}))",
    "({a} + {b}) × ({c} − {d})",
)
_NOP, _L2R, _R2L = "ignore_parentheses", "left_to_right", "right_to_left"


def _groups_numbers(rng: np.random.Generator, grade: int) -> Params:
    b, c = int(rng.integers(2, 10)), int(rng.integers(3, 10))
    d, a = int(rng.integers(1, c - 1)), int(rng.integers(2, 21))
    return {"a": a, "b": b, "c": c, "d": d}


def _groups_value(p: Params, v: int) -> Fraction:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    left = a + b if v & 1 else None
    right = c - d if v & 2 else None
    if left is None:
        return Fraction(a + b * right if right is not None else a + b * c - d)
    return Fraction(left * right if right is not None else left * c - d)


GROUPING, GROUPING_VARIANTS = variant_family(
    id="order_of_operations_grouping",
    name="Evaluate a numerical expression with or without parentheses",
    content="Algebra",
    grades=(5, 6),
    dok=1,
    kind="int",
    numbers=_groups_numbers,
    question=lambda p, v: f"What is the value of {_GROUPINGS[v].format(**p)}?",
    value=_groups_value,
    text=lambda p, v: _grouped(_WORKED[v].format(**p)),
    names=("a + b × c − d", "(a + b) × c − d", "a + b × (c − d)", "(a + b) × (c − d)"),
    # asked without parentheses, working left to right groups a + b, right to left c − d, and
    # adding (subtracting) before multiplying both; asked with them, ignoring them gives the
    # plain precedence, or - worked left to right or right to left - the other groupings
    labels=(
        ("", _L2R, _R2L, "add_before_multiply"),
        (_NOP, "", f"{_NOP}+{_R2L}", _R2L),
        (_NOP, f"{_NOP}+{_L2R}", "", _L2R),
        (_NOP, f"{_NOP}+{_L2R}", f"{_NOP}+{_R2L}", ""),
    ),
    difficulty=-0.2,
)

FAMILIES = (ORDER_OF_OPERATIONS, QUADRATIC, DISTRIBUTIVE, LINEAR)
STEPS = (QUADRATIC_STEPS, DISTRIBUTIVE_STEPS, LINEAR_STEPS)
VARIANT_FAMILIES = (LINEAR_FORMS, GROUPING)
VARIANTS = (LINEAR_FORMS_VARIANTS, GROUPING_VARIANTS)

__all__ = ["FAMILIES", "STEPS", "VARIANTS", "VARIANT_FAMILIES"]
