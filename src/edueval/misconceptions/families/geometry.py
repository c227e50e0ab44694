"""Area of a right triangle, area of a circle, volume of a rectangular box.

Measurement errors mix up which measure is asked (the boundary - perimeter, circumference, surface
area - instead of the size), add lengths where the formula multiplies them, or misuse a part of a
formula (the half in the triangle formula, radius versus diameter, the height of a box).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..model import Family, Params, RuleImpl
from ._util import pick

_UNITS = ("cm", "m", "in", "ft")

# --- right triangle -------------------------------------------------------------------------------

_TRIPLES = ((3, 4, 5), (5, 12, 13), (8, 15, 17), (7, 24, 25), (20, 21, 29))


def _tri_sample(rng: np.random.Generator, grade: int) -> Params:
    while True:
        t = pick(rng, _TRIPLES)
        k = int(rng.integers(1, 5))
        if t[2] * k <= 60:
            a, b, c = (k * s for s in t)
            legs = (a, b) if rng.random() < 0.5 else (b, a)
            sides = [legs[0], legs[1], c]
            order = [int(i) for i in rng.permutation(3)]
            return {"sides": [sides[i] for i in order], "unit": pick(rng, _UNITS)}


def _legs(p: Params) -> tuple[int, int, int]:
    a, b, c = sorted(p["sides"])
    return a, b, c


def _tri_question(p: Params) -> str:
    s, u = p["sides"], p["unit"]
    return (
        f"A right triangle has sides of length {s[0]} {u}, {s[1]} {u} and {s[2]} {u}. What is "
        f"its area in square {_plural(u)}?"
    )


def _plural(u: str) -> str:
    return {"cm": "centimeters", "m": "meters", "in": "inches", "ft": "feet"}[u]


def _tri_explain(p: Params) -> str:
    a, b, c = _legs(p)
    return (
        f"In a right triangle the two shorter sides, {a} and {b}, are the legs and are "
        f"perpendicular, so one is the base and the other the height; {c} is the hypotenuse and "
        f"is not needed. Area = 1/2 × {a} × {b}."
    )


def _tri_no_half_explain(p: Params) -> str:
    a, b, _ = _legs(p)
    return (
        f"Used the legs {a} and {b} as base and height and multiplied them, {a} × {b}, but did "
        "not take half."
    )


def _tri_perimeter_explain(p: Params) -> str:
    a, b, c = _legs(p)
    return (
        f"Added all three sides, {a} + {b} + {c}, which measures the distance around the triangle."
    )


def _tri_add_explain(p: Params) -> str:
    a, b, _ = _legs(p)
    return (
        f"Picked the base {a} and the height {b} correctly but added them, {a} + {b}, instead of "
        "multiplying."
    )


RIGHT_TRIANGLE = Family(
    id="right_triangle_area",
    name="Area of a right triangle from its sides",
    content="Geometry & Measurement",
    grades=(6, 7),
    dok=2,
    kind="int",
    sample=_tri_sample,
    question=_tri_question,
    solve=lambda p: Fraction(_legs(p)[0] * _legs(p)[1], 2),
    explain=_tri_explain,
    rules={
        "forget_half_triangle": RuleImpl(lambda p: _legs(p)[0] * _legs(p)[1], _tri_no_half_explain),
        "perimeter_area_confusion": RuleImpl(lambda p: sum(p["sides"]), _tri_perimeter_explain),
        "add_sides_for_area": RuleImpl(lambda p: _legs(p)[0] + _legs(p)[1], _tri_add_explain),
    },
    difficulty=0.2,
)

# --- circle ---------------------------------------------------------------------------------------


def _circ_sample(rng: np.random.Generator, grade: int) -> Params:
    given = "diameter" if rng.random() < 0.5 else "radius"
    size = 2 * int(rng.integers(2, 16))  # even, so every answer is a whole multiple of π
    return {"given": given, "size": size, "unit": pick(rng, _UNITS)}


def _radius(p: Params) -> Fraction:
    return Fraction(p["size"], 2) if p["given"] == "diameter" else Fraction(p["size"])


def _circ_question(p: Params) -> str:
    return (
        f"A circle has a {p['given']} of {p['size']} {p['unit']}. What is its area in square "
        f"{_plural(p['unit'])}? Give the answer in terms of π."
    )


def _circ_explain(p: Params) -> str:
    r = _radius(p)
    if p["given"] == "diameter":
        start = f"The radius is half the diameter: {p['size']} ÷ 2 = {r}. "
    else:
        start = f"The radius is {r}. "
    return start + f"Area = π × r² = π × {r} × {r}."


def _circ_swap(p: Params) -> Fraction:
    if p["given"] == "diameter":
        return Fraction(p["size"]) ** 2
    return Fraction(p["size"], 2) ** 2


def _circ_swap_explain(p: Params) -> str:
    s = p["size"]
    if p["given"] == "diameter":
        return f"Used the diameter {s} as the radius in π × r², computing π × {s} × {s}."
    return (
        f"Treated the radius {s} as if it were the diameter and halved it to {s // 2}, then "
        f"computed π × {s // 2} × {s // 2}."
    )


def _circ_perimeter_explain(p: Params) -> str:
    r = _radius(p)
    return (
        f"Used the circumference formula 2 × π × r with r = {r}, which measures the distance "
        "around the circle."
    )


def _circ_drop_explain(p: Params) -> str:
    r = _radius(p)
    return (
        f"Found the radius {r} correctly but left out the square, multiplying π by the radius "
        "only once."
    )


CIRCLE = Family(
    id="circle_area",
    name="Area of a circle in terms of π",
    content="Geometry & Measurement",
    grades=(7,),
    dok=2,
    kind="pi",
    sample=_circ_sample,
    question=_circ_question,
    solve=lambda p: _radius(p) ** 2,
    explain=_circ_explain,
    rules={
        "radius_diameter_swap": RuleImpl(_circ_swap, _circ_swap_explain),
        "perimeter_area_confusion": RuleImpl(lambda p: 2 * _radius(p), _circ_perimeter_explain),
        "drop_exponent": RuleImpl(_radius, _circ_drop_explain),
    },
    difficulty=0.4,
)

# --- rectangular box ------------------------------------------------------------------------------


def _box_sample(rng: np.random.Generator, grade: int) -> Params:
    dims = [int(v) for v in rng.choice(np.arange(2, 13), size=3, replace=False)]
    return {"length": dims[0], "width": dims[1], "height": dims[2], "unit": pick(rng, _UNITS)}


def _box_question(p: Params) -> str:
    u = p["unit"]
    return (
        f"A box shaped like a rectangular prism is {p['length']} {u} long, {p['width']} {u} wide "
        "and "
        f"{p['height']} {u} tall. What is its volume in cubic {_plural(u)}?"
    )


def _box_explain(p: Params) -> str:
    ln, wd, ht = p["length"], p["width"], p["height"]
    return (
        f"Volume = length × width × height: the base covers {ln} × {wd} = {ln * wd} unit squares, "
        f"and there are {ht} layers of them."
    )


def _box_surface_explain(p: Params) -> str:
    ln, wd, ht = p["length"], p["width"], p["height"]
    return (
        f"Found the area of the six faces and added them: 2 × ({ln} × {wd} + {ln} × {ht} + {wd} × "
        f"{ht}), "
        "which measures the outside of the box, not the space inside."
    )


def _box_add_explain(p: Params) -> str:
    ln, wd, ht = p["length"], p["width"], p["height"]
    return f"Added the three dimensions, {ln} + {wd} + {ht}, instead of multiplying them."


def _box_base_explain(p: Params) -> str:
    ln, wd = p["length"], p["width"]
    return (
        f"Multiplied the length and the width, {ln} × {wd}, and stopped: that is the area of the "
        "base, without the height."
    )


BOX = Family(
    id="prism_volume",
    name="Volume of a rectangular prism",
    content="Geometry & Measurement",
    grades=(5, 6),
    dok=1,
    kind="int",
    sample=_box_sample,
    question=_box_question,
    solve=lambda p: p["length"] * p["width"] * p["height"],
    explain=_box_explain,
    rules={
        "perimeter_area_confusion": RuleImpl(
            lambda p: (
                2
                * (p["length"] * p["width"] + p["length"] * p["height"] + p["width"] * p["height"])
            ),
            _box_surface_explain,
        ),
        "add_sides_for_area": RuleImpl(
            lambda p: p["length"] + p["width"] + p["height"], _box_add_explain
        ),
        "base_area_for_volume": RuleImpl(lambda p: p["length"] * p["width"], _box_base_explain),
    },
    difficulty=-0.4,
)

FAMILIES = (RIGHT_TRIANGLE, CIRCLE, BOX)

__all__ = ["FAMILIES"]
