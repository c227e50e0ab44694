"""Checking the answer key of a generated question q′ (``turing generate``).

The generator f_LLM writes q′ and its correct answer; that key becomes the MCQ's correct option,
so a wrong key turns a student's right answer into a "distractor chosen". Each key is checked
once, in one of two ways:

* ``evaluated`` - q′ is a bare arithmetic expression ("What is 39 × 36?", "What is the value of
  75 − 5 × 9 + 8? ...", "Compute 1/4 + 1/2."): it is evaluated exactly (fractions, the usual
  precedence) by :func:`evaluate_question` and the key compared with the value;
* ``second_solve`` - otherwise the generator is asked, in a separate call that shows only q′
  (not its key), for the answer, and the two answers are compared with
  :func:`~.data.same_answer` (by value when both read as numbers).

The outcome (:func:`key_check`): ``agree``, ``disagree`` (the key is disputed: flagged in
``distractors.csv`` and left out of ``turing assemble`` unless ``--keep-disputed``) or
``unchecked`` (the second solve failed or gave no answer: kept, counted).
"""

from __future__ import annotations

import ast
import operator
import re
from fractions import Fraction

from .data import Number, parse_number, same_answer, same_number

__all__ = ["KEY_CHECKS", "evaluate_question", "key_check"]

KEY_CHECKS = ("agree", "disagree", "unchecked")

#: Longer questions are not read as an expression (they are solved a second time instead).
_MAX_LENGTH = 300

_LEAD = re.compile(
    r"^\s*(?:what\s+is|what's|compute|calculate|evaluate|work\s+out|find)"
    r"(?:\s+the\s+value\s+of)?\s*:?\s*(?P<expr>[0-9\s.,+\-*/()^²³×÷·−–x]+?)\s*(?:=\s*)?[?.]"
    r"(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def _eval(node: ast.AST) -> Fraction:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return Fraction(str(node.value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        v = _eval(node.operand)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.left), _eval(node.right))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        base, exp = _eval(node.left), _eval(node.right)
        if exp.denominator != 1 or abs(exp) > 12:
            raise ValueError("only small whole powers")
        return base ** int(exp)
    raise ValueError("not arithmetic")


def evaluate_question(question: str) -> Fraction | None:
    """The exact value of a question that only asks to compute an arithmetic expression, else
    ``None`` (any further number in the question - "when x = 9" - means it is not one)."""
    if len(str(question)) > _MAX_LENGTH:
        return None
    m = _LEAD.match(str(question))
    if m is None or re.search(r"\d", m.group("rest")):
        return None
    expr = m.group("expr").strip()
    expr = re.sub(r"(?<=\d),(?=\d{3}\b)", "", expr)  # thousands separators
    expr = (
        expr.replace("×", "*").replace("·", "*").replace("÷", "/").replace("−", "-")
        .replace("–", "-").replace("^", "**").replace("²", "**2").replace("³", "**3")
    )  # fmt: skip
    expr = re.sub(r"(?<=[\d)])\s*x\s*(?=[\d(])", "*", expr)  # 3 x 4
    if "," in expr or "x" in expr or not re.search(r"[-+*/]", expr.lstrip("+-")):
        return None
    try:
        return _eval(ast.parse(expr, mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError, RecursionError):
        return None


def key_check(key: str, *, evaluated: Fraction | None = None, answer: str | None = None) -> str:
    """``agree`` / ``disagree`` / ``unchecked`` for ``key`` against an exact ``evaluated`` value
    (preferred) or a second solve's ``answer`` (``None`` when that call gave none)."""
    if evaluated is not None:
        n = parse_number(key)
        return "agree" if n is not None and same_number(n, Number(evaluated)) else "disagree"
    if answer is None or not str(answer).strip():
        return "unchecked"
    return "agree" if same_answer(key, answer) else "disagree"
