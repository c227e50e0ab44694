"""A synthetic classroom: questions, students and their answers with a known ground truth.

* **Learning materials** are lessons, one per content area of the mal-rule library (Number &
  Operation, Algebra, Geometry & Measurement, Data Analysis); each lesson's **topics** are the
  problem families it covers, and its text (``material_text``) names the topics and the common
  mistakes the lesson warns about.
* **Questions** come from :func:`edueval.misconceptions.generate_items` restricted to the lesson's
  content area (families dealt in rounds, so every topic gets questions). Each item's three
  distractors are the answers of three mal-rules.
* **Students** (:func:`edueval.misconceptions.sample_students`) have an ability θ ~
  N(``ability_mean``, 1) and hold each mal-rule independently with a frequency drawn once per rule:
  0 for a ``rare_fraction`` of the rules (misconceptions absent from this class, so their
  distractors attract only guesses), otherwise U(``rule_low``, ``rule_high``) -- a few rules per
  student. Items whose distractors attract only guesses end up with low DE.
* **Answers** follow :class:`edueval.misconceptions.ResponseModel`: a student holding the rule
  behind a distractor picks it with probability ``p_rule``; otherwise they solve the item with the
  2PL probability σ(a_j (θ − b_j)) and else guess a distractor. ``b_j`` is the item's generated
  difficulty; the slope ``a_j`` is drawn per item from a log-normal (median 1, sd ``a_sd`` on the
  log scale) so that items differ in discrimination.

The ground truth written beside the data: each item's ``difficulty`` (b), ``discrimination`` (a),
its mal-rules, and ``DF_expected`` -- the model's expected proportion correct in this classroom
(the mean over students of P(key), from :func:`edueval.misconceptions.choice_probabilities`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..misconceptions import (
    CONTENTS,
    FAMILIES,
    RULES,
    ResponseModel,
    choice_probabilities,
    generate_items,
    sample_students,
    simulate_responses,
)
from ..seeding import child_rngs
from .data import ItemData

__all__ = ["ClassroomConfig", "Classroom", "simulate_classroom"]

LETTERS = ("A", "B", "C", "D")


@dataclass(frozen=True)
class ClassroomConfig:
    """Sizes and parameters of a synthetic classroom (see the module docstring)."""

    n_students: int = 60
    n_materials: int = 2
    questions_per_material: int = 8
    rule_low: float = 0.0
    rule_high: float = 0.25
    rare_fraction: float = 0.5
    ability_mean: float = 1.0
    p_rule: float = 0.9
    a_sd: float = 0.6
    seed: int = 0

    def __post_init__(self) -> None:
        if self.n_students < 2:
            raise ValueError("n_students must be at least 2")
        if not 1 <= self.n_materials <= len(CONTENTS):
            raise ValueError(f"n_materials must be between 1 and {len(CONTENTS)}")
        if self.questions_per_material < 2:
            raise ValueError("questions_per_material must be at least 2")
        if not 0 <= self.rule_low <= self.rule_high <= 1:
            raise ValueError("need 0 <= rule_low <= rule_high <= 1")


@dataclass
class Classroom:
    """``items`` (items-file rows plus ground truth), ``responses`` (``student, item, choice,
    correct, malrule``), ``students`` (``student, ability, malrules``)."""

    items: pd.DataFrame
    responses: pd.DataFrame
    students: pd.DataFrame

    def items_jsonl(self) -> str:
        cols = ["item", "text", "choices", "answer", "material", "topic", "material_text"]
        extra = ["family", "difficulty", "discrimination", "DF_expected"]
        extra += [f"malrule_{x}" for x in LETTERS]
        lines = []
        for rec in self.items[cols + extra].to_dict("records"):
            lines.append(json.dumps(rec, ensure_ascii=False))
        return "\n".join(lines) + "\n"

    def to_item_data(self) -> ItemData:
        from .data import ItemData

        items = self.items.copy()
        items["options"] = [tuple(LETTERS)] * len(items)
        items["option_text"] = [dict(zip(LETTERS, c, strict=True)) for c in items["choices"]]
        cols = ["item", "text", "options", "option_text", "answer", "material", "material_text",
                "topic"]  # fmt: skip
        return ItemData(
            items[cols].reset_index(drop=True),
            self.responses[["student", "item", "choice", "correct"]].reset_index(drop=True),
        )


def _material_text(content: str, families: list[str]) -> str:
    fams = [FAMILIES[f] for f in families]
    topics = "; ".join(f.name for f in fams)
    mistakes = sorted({RULES[r].name for f in fams for r in f.rules})
    return (
        f"Lesson on {content}. Topics: {topics}. For each topic the lesson works through "
        f"examples step by step and warns about common mistakes: {', '.join(mistakes)}."
    )


def simulate_classroom(cfg: ClassroomConfig) -> Classroom:
    """Draw a classroom (reproducible from ``cfg.seed``)."""
    r_rules, r_students, r_slopes, r_answers = child_rngs(cfg.seed, 4)
    contents = list(CONTENTS)[: cfg.n_materials]
    frames = []
    for m, content in enumerate(contents):
        items = generate_items(cfg.questions_per_material, seed=cfg.seed * 100 + m,
                               contents=[content])  # fmt: skip
        items["material"] = f"M{m + 1}"
        items["id"] = [f"M{m + 1}-q{k + 1:02d}" for k in range(len(items))]
        fams = list(dict.fromkeys(items["family"]))
        items["material_text"] = _material_text(content, fams)
        frames.append(items)
    items = pd.concat(frames, ignore_index=True)
    items["topic"] = [FAMILIES[f].name for f in items["family"]]
    used = sorted({r for x in LETTERS for r in items[f"malrule_{x}"] if r})
    freq = r_rules.uniform(cfg.rule_low, cfg.rule_high, size=len(used))
    rare = r_rules.random(len(used)) < cfg.rare_fraction
    freq = np.where(rare, 0.0, freq)
    students = sample_students(
        cfg.n_students,
        r_students,
        dict(zip(used, freq, strict=True)),
        ability_mean=cfg.ability_mean,
    )
    slopes = np.exp(r_slopes.normal(0.0, cfg.a_sd, size=len(items)))
    items["discrimination"] = np.round(slopes, 4)
    frames = []
    expected = []
    for j, item in enumerate(items.to_dict("records")):
        model = ResponseModel(
            p_rule=cfg.p_rule, discrimination=float(items.at[j, "discrimination"])
        )
        frames.append(simulate_responses(students, items.iloc[[j]], r_answers, model))
        key = item["answer"]
        expected.append(
            float(np.mean([choice_probabilities(s, item, model)[key] for s in students]))
        )
    responses = pd.concat(frames, ignore_index=True)
    items["DF_expected"] = expected
    items = items.rename(columns={"id": "item", "question": "text"})
    items["choices"] = [[str(r[f"choice_{x}"]) for x in LETTERS] for r in items.to_dict("records")]
    studs = pd.DataFrame(
        {
            "student": [s.id for s in students],
            "ability": [s.ability for s in students],
            "malrules": [";".join(s.malrules) for s in students],
        }
    )
    return Classroom(items=items, responses=responses, students=studs)
