"""The style rule of issue 19: no function in ``src/edueval`` is longer than 120 lines.

Length is counted as ``end_lineno - lineno + 1`` of every ``def`` / ``async def`` (decorators
and docstring excluded from neither; nested functions count on their own and inside their
parent).  A function that truly cannot be split goes in ``EXEMPT`` with the reason; none does
today.
"""

from __future__ import annotations

import ast
from pathlib import Path

import edueval

MAX_LINES = 120
PACKAGE = Path(edueval.__file__).resolve().parent

#: "module path relative to the package:qualified name" -> why it cannot be split
EXEMPT: dict[str, str] = {}


def _functions(tree: ast.AST, prefix: str = ""):
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = f"{prefix}{node.name}"
            yield name, node
            yield from _functions(node, f"{name}.")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.")
        else:
            yield from _functions(node, prefix)


def _long_functions() -> dict[str, int]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name, node in _functions(tree):
            length = node.end_lineno - node.lineno + 1
            if length > MAX_LINES:
                found[f"{rel}:{name}"] = length
    return found


def test_no_function_over_120_lines():
    too_long = {k: n for k, n in _long_functions().items() if k not in EXEMPT}
    assert not too_long, (
        f"functions over {MAX_LINES} lines (split them into helpers, issue 19): "
        + ", ".join(f"{k} ({n})" for k, n in sorted(too_long.items(), key=lambda kv: -kv[1]))
    )


def test_exemptions_are_still_needed_and_justified():
    long = _long_functions()
    for key, reason in EXEMPT.items():
        assert reason.strip(), f"{key}: an exemption needs its reason"
        assert key in long, f"{key} is no longer over {MAX_LINES} lines: drop its exemption"


def test_the_walk_sees_nested_functions():
    src = "def outer():\n    def inner():\n        pass\n    class C:\n        def m(self):\n            pass\n"
    names = [n for n, _ in _functions(ast.parse(src))]
    assert names == ["outer", "outer.inner", "outer.C.m"]
