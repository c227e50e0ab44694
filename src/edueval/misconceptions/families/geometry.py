"""Area of a right triangle, area of a circle, volume of a rectangular box.

Measurement errors mix up which measure is asked (the boundary - perimeter, circumference, surface
area - instead of the size), add lengths where the formula multiplies them, or misuse a part of a
formula (the half in the triangle formula, radius versus diameter, the height of a box).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..model import Choice, Family, Params, RuleImpl, Steps
from ._util import grid_labels, pick, txt, variant_family

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


def _tri_steps(p: Params, expr: str) -> str:
    """The words every triangle rationale shares; only the numbers differ."""
    a, b, c = _legs(p)
    return f"Take the sides {a}, {b} and {c}, and compute {expr}."


def _tri_explain(p: Params) -> str:
    a, b, _ = _legs(p)
    return _tri_steps(p, f"1/2 × {a} × {b}")


def _tri_no_half_explain(p: Params) -> str:
    a, b, _ = _legs(p)
    return _tri_steps(p, f"{a} × {b}")


def _tri_perimeter_explain(p: Params) -> str:
    a, b, c = _legs(p)
    return _tri_steps(p, f"{a} + {b} + {c}")


def _tri_add_explain(p: Params) -> str:
    a, b, _ = _legs(p)
    return _tri_steps(p, f"{a} + {b}")


def _slant_area(p: Params) -> Fraction | None:
    _, b, c = _legs(p)
    return Fraction(b * c, 2) if b * c % 2 == 0 else None  # whole square units only


def _tri_hyp_explain(p: Params) -> str:
    _, b, c = _legs(p)
    return _tri_steps(p, f"1/2 × {b} × {c}")


def _tri_halves_explain(p: Params) -> str:
    a, b, _ = _legs(p)
    return _tri_steps(p, f"({a} ÷ 2) × ({b} ÷ 2)")


def _tri_all_explain(p: Params) -> str:
    a, b, c = _legs(p)
    return _tri_steps(p, f"1/2 × {a} × {b} × {c}")


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
        "slant_side_as_height": RuleImpl(_slant_area, _tri_hyp_explain),
        "multiply_all_numbers": RuleImpl(
            lambda p: Fraction(_legs(p)[0] * _legs(p)[1] * _legs(p)[2], 2), _tri_all_explain
        ),
        "halve_every_length": RuleImpl(
            lambda p: Fraction(_legs(p)[0] * _legs(p)[1], 4), _tri_halves_explain
        ),
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


def _circ_steps(p: Params, halve: bool, expr) -> str:
    """The words every circle rationale shares (the radius, halved or not, then a product);
    only the numbers differ."""
    s = p["size"]
    r = Fraction(s, 2) if halve else Fraction(s)
    take = f"{s} ÷ 2 = {txt(r)}" if halve else f"{s}"
    return f"Take r = {take}, and compute {expr(txt(r))}."


def _halve(p: Params) -> bool:
    return p["given"] == "diameter"


def _circ_explain(p: Params) -> str:
    return _circ_steps(p, _halve(p), lambda r: f"π × {r} × {r}")


def _circ_swap(p: Params) -> Fraction:
    if p["given"] == "diameter":
        return Fraction(p["size"]) ** 2
    return Fraction(p["size"], 2) ** 2


def _circ_swap_explain(p: Params) -> str:
    return _circ_steps(p, not _halve(p), lambda r: f"π × {r} × {r}")


def _circ_perimeter_explain(p: Params) -> str:
    return _circ_steps(p, _halve(p), lambda r: f"2 × π × {r}")


def _circ_drop_explain(p: Params) -> str:
    return _circ_steps(p, _halve(p), lambda r: f"π × {r}")


def _circ_mixed_explain(p: Params) -> str:
    return _circ_steps(p, _halve(p), lambda r: f"2 × π × {r} × {r}")


def _circ_diameter_explain(p: Params) -> str:
    d = txt(2 * _radius(p))
    return f"Take d = {d}, and compute π × {d} × {d}."


def _circ_cube_explain(p: Params) -> str:
    return _circ_steps(p, _halve(p), lambda r: f"π × {r} × {r} × {r}")


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
        "mix_circle_formulas": RuleImpl(lambda p: 2 * _radius(p) ** 2, _circ_mixed_explain),
        "square_the_diameter": RuleImpl(lambda p: (2 * _radius(p)) ** 2, _circ_diameter_explain),
        "cube_the_radius": RuleImpl(lambda p: _radius(p) ** 3, _circ_cube_explain),
    },
    difficulty=0.4,
)

# --- rectangular box ------------------------------------------------------------------------------


def _box_sample(rng: np.random.Generator, grade: int) -> Params:
    dims = [int(v) for v in rng.choice(np.arange(2, 11), size=3, replace=False)]
    return {"length": dims[0], "width": dims[1], "height": dims[2], "unit": pick(rng, _UNITS)}


def _box_question(p: Params) -> str:
    u = p["unit"]
    return (
        f"A box shaped like a rectangular prism is {p['length']} {u} long, {p['width']} {u} wide "
        "and "
        f"{p['height']} {u} tall. What is its volume in cubic {_plural(u)}?"
    )


def _box_steps(p: Params, expr: str) -> str:
    """The words every box rationale shares; only the numbers differ."""
    return f"Take the edges {p['length']}, {p['width']} and {p['height']}, and compute {expr}."


def _box_explain(p: Params) -> str:
    return _box_steps(p, f"{p['length']} × {p['width']} × {p['height']}")


def _box_surface_explain(p: Params) -> str:
    ln, wd, ht = p["length"], p["width"], p["height"]
    return _box_steps(p, f"2 × ({ln} × {wd} + {ln} × {ht} + {wd} × {ht})")


def _box_add_explain(p: Params) -> str:
    return _box_steps(p, f"{p['length']} + {p['width']} + {p['height']}")


def _box_base_explain(p: Params) -> str:
    return _box_steps(p, f"{p['length']} × {p['width']}")


def _box_faces_explain(p: Params) -> str:
    ln, wd, ht = p["length"], p["width"], p["height"]
    return _box_steps(p, f"{ln} × {wd} + {ln} × {ht} + {wd} × {ht}")


def _box_cube_explain(p: Params) -> str:
    e = max(p["length"], p["width"], p["height"])
    return _box_steps(p, f"{e} × {e} × {e}")


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
        "treat_as_cube": RuleImpl(
            lambda p: max(p["length"], p["width"], p["height"]) ** 3, _box_cube_explain
        ),
        "add_face_areas": RuleImpl(
            lambda p: (
                p["length"] * p["width"] + p["length"] * p["height"] + p["width"] * p["height"]
            ),
            _box_faces_explain,
        ),
    },
    difficulty=-0.4,
)

# --- the procedures as steps (:mod:`..compose`) ----------------------------------------------------


def _circ_compose(p: Params, c: Choice) -> tuple[Fraction, str] | None:
    """The radius (step 0: halve a diameter, or use the diameter itself) and the formula applied
    to it (step 1)."""
    formulas = {
        None: (lambda r: r * r, lambda r: f"π × {r} × {r}"),
        "perimeter_area_confusion": (lambda r: 2 * r, lambda r: f"2 × π × {r}"),
        "drop_exponent": (lambda r: r, lambda r: f"π × {r}"),
        "mix_circle_formulas": (lambda r: 2 * r * r, lambda r: f"2 × π × {r} × {r}"),
        "cube_the_radius": (lambda r: r * r * r, lambda r: f"π × {r} × {r} × {r}"),
    }
    value, expr = formulas[c[1]]
    if c[0] == "square_the_diameter":
        d = 2 * _radius(p)
        return value(d), f"Take d = {txt(d)}, and compute {expr(txt(d))}."
    halve = _halve(p) if c[0] is None else not _halve(p)
    r = Fraction(p["size"], 2) if halve else Fraction(p["size"])
    return value(r), _circ_steps(p, halve, expr)


CIRCLE_STEPS = Steps(
    family="circle_area",
    steps=(
        ("radius_diameter_swap", "square_the_diameter"),
        ("perimeter_area_confusion", "drop_exponent", "mix_circle_formulas", "cube_the_radius"),
    ),
    answer=lambda p, c: None if (r := _circ_compose(p, c)) is None else r[0],
    explain=lambda p, c: "" if (r := _circ_compose(p, c)) is None else r[1],
)


def _box_compose(p: Params, c: Choice) -> tuple[int, str] | None:
    """The edges used (step 0: all three, the longest three times, or the base's two) and how
    they are combined (step 1)."""
    ln, wd, ht = p["length"], p["width"], p["height"]
    if c[0] == "treat_as_cube":
        e = max(ln, wd, ht)
        ln = wd = ht = e
    elif c[0] == "base_area_for_volume":
        if c[1] in ("add_face_areas", "perimeter_area_confusion"):
            return None  # two edges have no faces to add
        if c[1] == "add_sides_for_area":
            return ln + wd, _box_steps(p, f"{ln} + {wd}")
        return ln * wd, _box_steps(p, f"{ln} × {wd}")
    faces = f"{ln} × {wd} + {ln} × {ht} + {wd} × {ht}"
    pairs = ln * wd + ln * ht + wd * ht
    if c[1] is None:
        return ln * wd * ht, _box_steps(p, f"{ln} × {wd} × {ht}")
    if c[1] == "add_sides_for_area":
        return ln + wd + ht, _box_steps(p, f"{ln} + {wd} + {ht}")
    if c[1] == "add_face_areas":
        return pairs, _box_steps(p, faces)
    return 2 * pairs, _box_steps(p, f"2 × ({faces})")  # perimeter_area_confusion


BOX_STEPS = Steps(
    family="prism_volume",
    steps=(
        ("treat_as_cube", "base_area_for_volume"),
        ("add_sides_for_area", "add_face_areas", "perimeter_area_confusion"),
    ),
    answer=lambda p, c: None if (r := _box_compose(p, c)) is None else r[0],
    explain=lambda p, c: "" if (r := _box_compose(p, c)) is None else r[1],
)

# --- question variants over the same numbers (:mod:`..variants`) ----------------------------------
#
# Variant ``v``'s bit 0 says whether the given length is the diameter, bit 1 which measure (or
# solid) is asked; a student who takes the diameter for the radius (or the radius for the
# diameter), or who computes the other measure, answers another variant's question.


def _given_length(rng: np.random.Generator, grade: int) -> Params:
    return {"size": int(rng.integers(3, 21)), "unit": pick(rng, _UNITS)}


def _r_of(p: Params, v: int) -> Fraction:
    return Fraction(p["size"], 2) if v & 1 else Fraction(p["size"])


def _given_name(v: int) -> str:
    return "diameter" if v & 1 else "radius"


def _measure_question(p: Params, v: int) -> str:
    n, u = p["size"], p["unit"]
    what = f"circumference in {_plural(u)}" if v & 2 else f"area in square {_plural(u)}"
    return (
        f"A circle has a {_given_name(v)} of {n} {u}. What is its {what}? Give the answer in "
        "terms of π."
    )


def _measure_value(p: Params, v: int) -> Fraction:
    r = _r_of(p, v)
    return 2 * r if v & 2 else r * r


def _measure_text(p: Params, v: int) -> str:
    expr = (lambda r: f"2 × π × {r}") if v & 2 else (lambda r: f"π × {r} × {r}")
    return _circ_steps(p, bool(v & 1), expr)


CIRCLE_MEASURE, CIRCLE_MEASURE_VARIANTS = variant_family(
    id="circle_measure",
    name="Area or circumference of a circle from its radius or diameter",
    content="Geometry & Measurement",
    grades=(7,),
    dok=2,
    kind="pi",
    numbers=_given_length,
    question=_measure_question,
    value=_measure_value,
    text=_measure_text,
    names=("radius, area", "diameter, area", "radius, circumference", "diameter, circumference"),
    labels=grid_labels(
        [
            ("radius_diameter_swap", "radius_diameter_swap"),
            ("perimeter_area_confusion", "perimeter_area_confusion"),
        ]
    ),
    difficulty=0.4,
)


def _round_solid(rng: np.random.Generator, grade: int) -> Params:
    return {**_given_length(rng, grade), "height": int(rng.integers(2, 16))}


def _solid_question(p: Params, v: int) -> str:
    n, h, u = p["size"], p["height"], p["unit"]
    solid = "cone" if v & 2 else "cylinder"
    return (
        f"A {solid} has a base {_given_name(v)} of {n} {u} and a height of {h} {u}. What is "
        f"its volume in cubic {_plural(u)}? Give the answer in terms of π."
    )


def _solid_value(p: Params, v: int) -> Fraction:
    r = _r_of(p, v)
    return r * r * p["height"] / (3 if v & 2 else 1)


def _solid_text(p: Params, v: int) -> str:
    h, third = p["height"], "1/3 × " if v & 2 else ""
    return _circ_steps(p, bool(v & 1), lambda r: f"{third}π × {r} × {r} × {h}")


CYLINDER_CONE, CYLINDER_CONE_VARIANTS = variant_family(
    id="cylinder_cone_volume",
    name="Volume of a cylinder or a cone from its radius or diameter",
    content="Geometry & Measurement",
    grades=(8,),
    dok=2,
    kind="pi",
    numbers=_round_solid,
    question=_solid_question,
    value=_solid_value,
    text=_solid_text,
    names=("cylinder, radius", "cylinder, diameter", "cone, radius", "cone, diameter"),
    labels=grid_labels(
        [
            ("radius_diameter_swap", "radius_diameter_swap"),
            ("cone_cylinder_confusion", "cone_cylinder_confusion"),
        ]
    ),
    difficulty=0.6,
)

FAMILIES = (RIGHT_TRIANGLE, CIRCLE, BOX)
STEPS = (CIRCLE_STEPS, BOX_STEPS)
VARIANT_FAMILIES = (CIRCLE_MEASURE, CYLINDER_CONE)
VARIANTS = (CIRCLE_MEASURE_VARIANTS, CYLINDER_CONE_VARIANTS)

__all__ = ["FAMILIES", "STEPS", "VARIANTS", "VARIANT_FAMILIES"]
