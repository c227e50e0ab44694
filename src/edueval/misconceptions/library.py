"""The mal-rule library: every family and rule, and the functions that work on problems.

``FAMILIES``, ``VARIANT_FAMILIES`` and ``RULES`` are read-only mappings built at import from
:mod:`.families` and :mod:`.catalogue`, and checked for consistency (every catalogued rule is
implemented by at least one family, every implementation is catalogued, every family plain
generation draws has at least three rules, every variant family's labels name catalogued rules).
The functions below take problems of either kind of family.

Functions on a :class:`~.model.Problem`:

* :func:`build_problem` / :func:`sample_problem` - a problem from given numbers / seeded numbers
  (optionally for a given family, rule, grades or content);
* :func:`correct_answer`, :func:`rule_answer` - the canonical answer text, correct or under a rule;
* :func:`applicable_rules` - rules that give a wrong answer on this problem;
* :func:`rationale` - the correct reasoning or a rule's flawed reasoning for this problem;
* :func:`is_correct`, :func:`diagnose` - judge a free-text answer, and name the rules that explain
  a wrong one (what P5's oracle "AI" does with a Phase-1 error).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from types import MappingProxyType
from typing import overload

import numpy as np
import pandas as pd

from .catalogue import CATALOGUE
from .families import ALL, VARIANTS
from .families import VARIANT_FAMILIES as VARIANT_ALL
from .model import CONTENTS, Family, MalRule, Params, Problem, Variants
from .values import KINDS, format_value, parse_value

__all__ = [
    "FAMILIES",
    "RULES",
    "VARIANT_FAMILIES",
    "applicable_rules",
    "baseline_difficulty",
    "build_problem",
    "correct_answer",
    "diagnose",
    "eligible_families",
    "get_family",
    "is_correct",
    "rationale",
    "rule_answer",
    "rules_frame",
    "sample_problem",
]


def _check_family(fam: Family) -> None:
    if fam.kind not in KINDS or fam.content not in CONTENTS or fam.dok not in (1, 2, 3):
        raise RuntimeError(f"family {fam.id} has a bad kind, content or DOK")
    for rid in fam.rules:
        if rid not in CATALOGUE:
            raise RuntimeError(f"family {fam.id} implements uncatalogued rule {rid}")


def _check_variants(variants: Iterable[Variants], families: Iterable[Family]) -> None:
    """Every variant family has a square table of labels naming catalogued rules, distinct
    within a row and empty on the diagonal only."""
    ids = {f.id for f in families}
    for var in variants:
        k = len(var.names)
        if var.family not in ids or len(var.labels) != k or k < 4:
            raise RuntimeError(f"variants of {var.family}: no such family or a bad label table")
        for v, row in enumerate(var.labels):
            rest = [lab for j, lab in enumerate(row) if j != v]
            if len(row) != k or row[v] or len(set(rest)) != k - 1 or not all(rest):
                raise RuntimeError(f"variants of {var.family}: bad labels for variant {v}")
            unknown = {r for lab in rest for r in lab.split("+")} - set(CATALOGUE)
            if unknown:
                raise RuntimeError(f"variants of {var.family} name uncatalogued {sorted(unknown)}")


def _build_rules(
    families: Iterable[Family], variant_families: Iterable[Family] = ()
) -> dict[str, MalRule]:
    families, variant_families = tuple(families), tuple(variant_families)
    used: dict[str, list[Family]] = {}
    for fam in families:
        if len(fam.rules) < 3:
            raise RuntimeError(f"family {fam.id} has fewer than 3 mal-rules")
        _check_family(fam)
        for rid in fam.rules:
            used.setdefault(rid, []).append(fam)
    varied: dict[str, list[Family]] = {}
    for fam in variant_families:
        _check_family(fam)
        for rid in fam.rules:
            varied.setdefault(rid, []).append(fam)
    missing = sorted(set(CATALOGUE) - set(used) - set(varied))
    if missing:
        raise RuntimeError(f"catalogued mal-rules without a family: {', '.join(missing)}")
    rules = {}
    for rid, (name, content, description) in CATALOGUE.items():
        fams, vfams = used.get(rid, []), varied.get(rid, [])
        # a rule's grade band is its plain families' (unchanged by the variants) where it has any
        grades = [g for f in (fams or vfams) for g in f.grades]
        rules[rid] = MalRule(
            id=rid,
            name=name,
            content=content,
            description=description,
            families=tuple(f.id for f in fams),
            grades=(min(grades), max(grades)),
            variants=tuple(f.id for f in vfams),
        )
    return rules


#: Every problem family plain generation draws, by id, in a fixed order (grouped by topic).
FAMILIES: Mapping[str, Family] = MappingProxyType({f.id: f for f in ALL})
#: The families written as question variants over the same numbers (:mod:`.variants`), by id.
VARIANT_FAMILIES: Mapping[str, Family] = MappingProxyType({f.id: f for f in VARIANT_ALL})
_check_variants(VARIANTS, VARIANT_ALL)
#: Every mal-rule by id, in catalogue order.
RULES: Mapping[str, MalRule] = MappingProxyType(_build_rules(ALL, VARIANT_ALL))


def rules_frame() -> pd.DataFrame:
    """The rule catalogue as a table: ``id, name, content, grade_low, grade_high, families,
    description`` (``families`` - then the variant families - joined with ``;``)."""
    return pd.DataFrame(
        [
            {
                "id": r.id,
                "name": r.name,
                "content": r.content,
                "grade_low": r.grades[0],
                "grade_high": r.grades[1],
                "families": ";".join((*r.families, *r.variants)),
                "description": r.description,
            }
            for r in RULES.values()
        ]
    )


def _family(family: str) -> Family:
    found = FAMILIES.get(family) or VARIANT_FAMILIES.get(family)
    if found is None:
        raise ValueError(
            f"unknown problem family {family!r}; expected one of "
            + ", ".join([*FAMILIES, *VARIANT_FAMILIES])
        )
    return found


def get_family(family: str) -> Family:
    """The family ``family`` - one that plain generation draws (:data:`FAMILIES`) or a family of
    question variants (:data:`VARIANT_FAMILIES`); ``ValueError`` for an unknown id."""
    return _family(family)


def _check_rule(rule: str) -> None:
    if rule not in RULES:
        raise ValueError(f"unknown mal-rule {rule!r}; expected one of {', '.join(RULES)}")


def baseline_difficulty(family: str, grade: int) -> float:
    """IRT difficulty (logits) of a family at a grade before item-level noise.

    ``0.3 × (grade − 6) + 0.5 × (DOK − 2) + family offset``: higher grades and deeper DOK are
    harder; the offsets encode that, e.g., column addition is easier than undoing a percent change.
    """
    fam = _family(family)
    return 0.3 * (grade - 6) + 0.5 * (fam.dok - 2) + fam.difficulty


def build_problem(
    family: str, params: Params, grade: int | None = None, difficulty: float | None = None
) -> Problem:
    """The problem of ``family`` with the given numbers (hand-chosen examples, tests, reloading
    an item). ``grade`` defaults to the family's lowest grade, ``difficulty`` to
    :func:`baseline_difficulty`."""
    fam = _family(family)
    grade = fam.grades[0] if grade is None else int(grade)
    if difficulty is None:
        difficulty = baseline_difficulty(family, grade)
    return Problem(
        family=fam.id,
        params=dict(params),
        question=fam.question(params),
        grade=grade,
        content=fam.content,
        dok=fam.dok,
        difficulty=float(difficulty),
    )


def family_order(schedule: np.random.Generator, fams: list[str], n: int) -> list[str]:
    """The families of ``n`` items in turn: shuffled blocks, each family once per block (the
    plain, the targeted and the hub generators deal their items this way)."""
    order: list[str] = []
    while len(order) < n:
        order += [fams[int(k)] for k in schedule.permutation(len(fams))]
    return order


def select_families(
    fams: Iterable[Family], grades: Iterable[int] | None, contents: Iterable[str] | None
) -> list[Family]:
    """``fams`` taught at one of ``grades`` and in one of ``contents`` (all when ``None``);
    ``ValueError`` for an unknown content."""
    out = list(fams)
    if grades is not None:
        gs = {int(g) for g in grades}
        out = [f for f in out if gs & set(f.grades)]
    if contents is not None:
        cs = {c.strip().lower() for c in contents}
        unknown = cs - {c.lower() for c in CONTENTS}
        if unknown:
            raise ValueError(
                f"unknown content {sorted(unknown)[0]!r}; expected one of {', '.join(CONTENTS)}"
            )
        out = [f for f in out if f.content.lower() in cs]
    return out


def eligible_families(
    grades: Iterable[int] | None = None,
    contents: Iterable[str] | None = None,
    rule: str | None = None,
) -> list[Family]:
    """Families taught at one of ``grades``, in one of ``contents``, and (if given) that ``rule``
    applies to; raises ``ValueError`` when the filters leave nothing."""
    fams = select_families(FAMILIES.values(), grades, contents)
    if rule is not None:
        _check_rule(rule)
        fams = [f for f in fams if rule in f.rules]
    if not fams:
        raise ValueError("no problem family matches the requested grades/contents/rule")
    return fams


def _grade_for(fam: Family, grades: Iterable[int] | None, rng: np.random.Generator) -> int:
    allowed = [g for g in fam.grades if grades is None or g in {int(x) for x in grades}]
    return allowed[int(rng.integers(len(allowed)))]


def sample_problem(
    rng: np.random.Generator,
    *,
    family: str | None = None,
    rule: str | None = None,
    grades: Iterable[int] | None = None,
    contents: Iterable[str] | None = None,
    difficulty_sd: float = 0.3,
) -> Problem:
    """A seeded problem.

    The family is ``family`` or drawn uniformly among :func:`eligible_families` (for a rule
    that only question variants use, among those variant families); with ``rule``
    the numbers are redrawn until that rule gives a wrong answer on them (a "related question"
    that targets the same misconception, as P5's Phase 2 needs). The difficulty is
    :func:`baseline_difficulty` plus normal noise of sd ``difficulty_sd``, rounded to 3 places.
    """
    grades = None if grades is None else list(grades)
    if family is not None:
        fam = _family(family)
        if rule is not None and rule not in fam.rules:
            raise ValueError(f"mal-rule {rule!r} does not apply to family {family!r}")
        if grades is not None and not set(grades) & set(fam.grades):
            raise ValueError(f"family {family!r} is not taught in grades {grades}")
    elif rule is not None and rule in RULES and not RULES[rule].families:
        # a rule that only question variants use: a problem of one of those families
        fams = [VARIANT_FAMILIES[f] for f in RULES[rule].variants]
        fams = [f for f in fams if grades is None or set(grades) & set(f.grades)]
        if contents is not None:
            fams = [f for f in fams if f.content.lower() in {c.strip().lower() for c in contents}]
        if not fams:
            raise ValueError("no problem family matches the requested grades/contents/rule")
        fam = fams[int(rng.integers(len(fams)))]
    else:
        fams = eligible_families(grades, contents, rule)
        fam = fams[int(rng.integers(len(fams)))]
    grade = _grade_for(fam, grades, rng)
    for _ in range(1000):
        params = fam.sample(rng, grade)
        if rule is None or rule in applicable_rules(build_problem(fam.id, params, grade, 0.0)):
            break
    else:  # pragma: no cover - every rule applies to most problems of its families
        raise RuntimeError(f"could not draw a {fam.id} problem on which {rule} errs")
    noise = float(rng.normal(0.0, difficulty_sd)) if difficulty_sd > 0 else 0.0
    difficulty = round(baseline_difficulty(fam.id, grade) + noise, 3)
    return build_problem(fam.id, params, grade, difficulty)


@overload
def _value(problem: Problem, rule: None) -> Fraction: ...
@overload
def _value(problem: Problem, rule: str | None) -> Fraction | None: ...
def _value(problem: Problem, rule: str | None) -> Fraction | None:
    """The problem's answer (``rule=None``: the correct one, always defined) or a rule's."""
    fam = _family(problem.family)
    if rule is None:
        return Fraction(fam.solve(problem.params))
    _check_rule(rule)
    impl = fam.rules.get(rule)
    if impl is None:
        return None
    v = impl.answer(problem.params)
    return None if v is None else Fraction(v)


def correct_answer(problem: Problem) -> str:
    """The correct answer in canonical form (see :mod:`.values`)."""
    return format_value(_value(problem, None), _family(problem.family).kind)


def rule_answer(problem: Problem, rule: str) -> str | None:
    """The answer a student holding ``rule`` gives, or ``None`` if the rule does not apply to this
    kind of problem. (It may equal the correct answer when the numbers do not trigger the error;
    :func:`applicable_rules` leaves those out.)"""
    v = _value(problem, rule)
    return None if v is None else format_value(v, _family(problem.family).kind)


def applicable_rules(problem: Problem) -> tuple[str, ...]:
    """Rules that give a *wrong* answer on this problem, in catalogue order."""
    fam = _family(problem.family)
    right = _value(problem, None)
    out = []
    for rid in RULES:
        if rid in fam.rules:
            v = _value(problem, rid)
            if v is not None and v != right:
                out.append(rid)
    return tuple(out)


def rationale(problem: Problem, rule: str | None = None) -> str:
    """The correct reasoning (``rule=None``) or ``rule``'s flawed reasoning on this problem.

    Rationales walk through the steps on the problem's own numbers but never state the final
    answer, so matching a rationale to a choice (P3's task) requires following the steps.
    """
    fam = _family(problem.family)
    if rule is None:
        return fam.explain(problem.params)
    _check_rule(rule)
    if rule not in fam.rules:
        raise ValueError(f"mal-rule {rule!r} does not apply to family {problem.family!r}")
    return fam.rules[rule].explain(problem.params)


def is_correct(problem: Problem, answer: str) -> bool:
    """Whether a free-text ``answer`` has the correct value (``0.50`` is ``0.5``, ``2/4`` is
    ``1/2``)."""
    v = parse_value(answer, _family(problem.family).kind)
    return v is not None and v == _value(problem, None)


def diagnose(problem: Problem, answer: str) -> tuple[str, ...]:
    """The mal-rules whose wrong answer on ``problem`` equals ``answer`` (by value), in catalogue
    order; empty for a correct answer, a slip, or an unreadable answer."""
    v = parse_value(answer, _family(problem.family).kind)
    if v is None or v == _value(problem, None):
        return ()
    return tuple(r for r in applicable_rules(problem) if _value(problem, r) == v)
