"""The three objects of the mal-rule library: problem families, mal-rules, problems.

* A :class:`Family` is a kind of problem ("subtract two whole numbers", "add two fractions with
  unlike denominators"): a seeded generator of its numbers, the question text, the correct solver
  and the correct reasoning, and - for every mal-rule that applies to it - a :class:`RuleImpl`,
  the deterministic wrong answer a student holding that rule gives and the flawed reasoning.
* A :class:`MalRule` is a named systematic error ("subtract the smaller digit from the larger in
  every column") in the sense of Brown & VanLehn (1980) and Payne & Squibb (1990); MalAlgoQA calls
  the reasoning chain that contains it a *malgorithm*. One rule can apply to several families
  (left-to-right evaluation breaks both ``40 − 3 × 4 + 5`` and ``x² + 3x`` at ``x = 5``), which is
  what lets a simulated student's error on one question predict their error on a related one (P5).
* A :class:`Problem` is one concrete instance: a family plus its numbers, question text and
  metadata (grade, content, DOK, IRT difficulty).

Answers are exact :class:`fractions.Fraction` values (see :mod:`.values`); a rule returns ``None``
for a problem variant it does not apply to (asking for the mean leaves "did not sort the data"
without effect).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = [
    "CONTENTS",
    "Choice",
    "Family",
    "MalRule",
    "Params",
    "Problem",
    "RuleImpl",
    "Steps",
    "Variants",
]

#: Content classifications of MalAlgoQA's math set (the paper's Table 3).
CONTENTS = (
    "Number & Operation",
    "Algebra",
    "Geometry & Measurement",
    "Data Analysis",
)

#: The numbers (and variant/template choices) that define one problem of a family.
Params = dict[str, Any]


@dataclass(frozen=True)
class RuleImpl:
    """How one mal-rule acts on one family.

    ``answer(params)`` is the wrong answer a student holding the rule gives (``None`` when the rule
    does not apply to this variant of the family); ``explain(params)`` the flawed reasoning as a
    short description of its steps on these numbers. Explanations never state the final result, so
    matching a rationale to a choice means following the steps, not comparing strings.
    """

    answer: Callable[[Params], Fraction | int | None]
    explain: Callable[[Params], str]


#: One way of doing each step of a family's procedure (:class:`Steps`): ``None`` the correct way,
#: otherwise the mal-rule whose flawed version of that step is used.
Choice = tuple[str | None, ...]


@dataclass(frozen=True)
class Steps:
    """A family's correct procedure as a sequence of steps, each of which a mal-rule may replace
    by its flawed version (:mod:`.compose`).

    ``steps[s]`` names the mal-rules that act on step ``s`` (each rule on one step only);
    ``answer(params, choice)`` runs the procedure with ``choice[s]`` for step ``s`` (``None``: the
    correct step) and ``explain(params, choice)`` writes its reasoning from the family's template,
    without the final result.  With one flawed step they are the rule's :class:`RuleImpl`; with
    several they compose the rules into one malgorithm (a student holding several bugs at once).
    ``answer`` is ``None`` where a combination has no meaning.
    """

    family: str
    steps: tuple[tuple[str, ...], ...]
    answer: Callable[[Params, Choice], Fraction | int | None]
    explain: Callable[[Params, Choice], str]


@dataclass(frozen=True)
class Variants:
    """A family written as question variants over the same numbers (:mod:`.variants`; issue 34).

    The family's params carry ``variant`` (an index into ``names``), and its question, correct
    answer and reasoning are those of that variant; the same numbers with another ``variant``
    give that variant's answer and reasoning, whose words do not depend on which variant was
    asked.  Each variant's answer is a classic malgorithm's answer to every other variant:
    ``labels[v][j]`` names what leads a student asked variant ``v`` to variant ``j``'s answer -
    a mal-rule, or several joined by ``+`` (``""`` where ``j == v``); within a row the labels are
    distinct.
    """

    family: str
    names: tuple[str, ...]
    labels: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Family:
    """A kind of problem, its correct solution, and the mal-rules that apply to it.

    ``sample(rng, grade)`` draws the numbers of one problem for a grade in ``grades``;
    ``question`` writes the question; ``solve`` gives the exact correct answer and ``explain`` the
    correct reasoning (without the final result); ``kind`` is how answers are written
    (:func:`.values.format_value`); ``dok`` the Webb depth-of-knowledge level (1-3);
    ``difficulty`` an offset (logits) added to the grade/DOK baseline of the IRT difficulty;
    ``slip`` (optional) draws a careless wrong answer when a plain numeric slip makes no sense
    (for "which number is greatest" a slip is picking another listed number).
    """

    id: str
    name: str
    content: str
    grades: tuple[int, ...]
    dok: int
    kind: str
    sample: Callable[[np.random.Generator, int], Params]
    question: Callable[[Params], str]
    solve: Callable[[Params], Fraction | int]
    explain: Callable[[Params], str]
    rules: Mapping[str, RuleImpl]
    difficulty: float = 0.0
    slip: Callable[[Params, np.random.Generator], Fraction] | None = None


@dataclass(frozen=True)
class MalRule:
    """A named systematic error.

    ``content`` is the content area the rule belongs to, ``description`` states the flawed
    reasoning in general terms, ``families`` lists the problem families it applies to and
    ``grades`` the grade band ``(lowest, highest)`` spanned by those families; ``variants`` lists the
    variant families (:class:`Variants`, which plain generation does not draw) that use it.
    """

    id: str
    name: str
    content: str
    description: str
    families: tuple[str, ...] = ()
    grades: tuple[int, int] = (0, 0)
    variants: tuple[str, ...] = ()


@dataclass(frozen=True)
class Problem:
    """One concrete problem: a family, its numbers and metadata.

    ``difficulty`` is the IRT difficulty (logits) used by the simulated students
    (:mod:`.students`): a student of ability ``difficulty`` who holds no relevant mal-rule solves
    it with probability 1/2.
    """

    family: str
    params: Params = field(hash=False)
    question: str
    grade: int
    content: str
    dok: int
    difficulty: float
