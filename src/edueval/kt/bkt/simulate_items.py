"""Item-level BKT data: each skill's responses on several items with their own guess and slip.

The generative model of ``BKT(multigs="item")`` (KT-IDEM, Pardos & Heffernan 2011), optionally
with learning per item (``multilearn="item"``, the learning effect of having done an item): at
every opportunity the student meets one of the skill's items, drawn uniformly; the response is
correct with probability ``1 - slip_i`` if the skill is known and ``guess_i`` if not; then the
state moves unknown -> known with ``learn`` (``learn_i`` with per-item learning) and known ->
unknown with ``forget``.

Item parameters are drawn around the skill's: ``guess_i`` and ``slip_i`` uniform within
``+-spread`` of the skill's value and ``learn_i`` uniform in ``learn * (1 +- 2 spread)``, each
clipped to ``[0.01, 0.45]`` (guess and slip) or ``[0.01, 0.95]`` (learn), so every item keeps the
"known state answers better" reading (guess, slip < 0.5) the fit assumes.

Items are named ``SKILL-J`` (J = 1 .. items per skill); the true parameters come back as a long
table (``skill, parameter, group, value``) that ``kt predict --params`` reads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...seeding import rng as make_rng
from .params import PARAM_NAMES, BKTParams, params_frame

__all__ = ["ItemParams", "draw_item_params", "simulate_items", "item_params_long"]

ITEM_COLUMN = "item"
_GS_RANGE = (0.01, 0.45)
_LEARN_RANGE = (0.01, 0.95)


@dataclass(frozen=True)
class ItemParams:
    """Per-skill parameters (``skills``, ``prior``, ``forget``: (n_skills,)) and per-item ones
    (``guess``, ``slip``, ``learn``: (n_skills, n_items)); ``item_learn`` says whether learn
    varies by item (else every item of a skill has the skill's learn)."""

    skills: np.ndarray
    prior: np.ndarray
    forget: np.ndarray
    guess: np.ndarray
    slip: np.ndarray
    learn: np.ndarray
    item_learn: bool

    @property
    def n_items(self) -> int:
        return self.guess.shape[1]

    def item_names(self) -> np.ndarray:
        """(n_skills, n_items) names ``SKILL-J``."""
        j = np.arange(1, self.n_items + 1).astype(str)
        return np.char.add(np.char.add(self.skills.astype(str)[:, None], "-"), j[None, :])


def draw_item_params(
    params: pd.DataFrame | dict[str, BKTParams],
    n_items: int,
    gen: np.random.Generator,
    *,
    spread: float = 0.15,
    item_learn: bool = False,
) -> ItemParams:
    """Item parameters drawn around each skill's (see the module docstring)."""
    if n_items < 1:
        raise ValueError("items per skill must be at least 1")
    if not 0 <= spread <= 0.5:
        raise ValueError("the item spread must be in [0, 0.5]")
    pf = params_frame(params)
    P = pf[list(PARAM_NAMES)].to_numpy(dtype=float)
    shape = (len(pf), n_items)
    prior, learn, guess, slip, forget = P.T

    def around(centre, width, bounds):
        return np.clip(centre[:, None] + gen.uniform(-width, width, shape), *bounds)

    g = around(guess, spread, _GS_RANGE)
    s = around(slip, spread, _GS_RANGE)
    if item_learn:
        lr = np.clip(learn[:, None] * (1 + gen.uniform(-2 * spread, 2 * spread, shape)),
                     *_LEARN_RANGE)  # fmt: skip
    else:
        lr = np.repeat(learn[:, None], n_items, axis=1)
    return ItemParams(pf.index.to_numpy(dtype=object), prior, forget, g, s, lr, item_learn)


def simulate_item_arrays(ip: ItemParams, n_students: int, n_opportunities: int, gen):
    """``(item, known, correct)``, each (n_skills, n_students, n_opportunities); ``item`` holds
    0-based item indices within the skill."""
    if n_students < 1 or n_opportunities < 1:
        raise ValueError("n_students and n_opportunities must be at least 1")
    shape = (len(ip.skills), n_students, n_opportunities)
    item = gen.integers(ip.n_items, size=shape)
    known = np.empty(shape, dtype=np.int8)
    correct = np.empty(shape, dtype=np.int8)
    sk = np.arange(shape[0])[:, None]
    forget = ip.forget[:, None]
    state = gen.random(shape[:2]) < ip.prior[:, None]
    for t in range(n_opportunities):
        it = item[:, :, t]
        known[:, :, t] = state
        p = np.where(state, 1.0 - ip.slip[sk, it], ip.guess[sk, it])
        correct[:, :, t] = gen.random(p.shape) < p
        move = gen.random(p.shape)
        state = move < np.where(state, 1.0 - forget, ip.learn[sk, it])
    return item, known, correct


def simulate_items(
    ip: ItemParams, n_students: int, n_opportunities: int, seed: int | None = None
) -> pd.DataFrame:
    """Responses ``student, skill, item, order, correct, known`` ordered by skill, student,
    order (students named as :func:`edueval.kt.bkt.model.simulate` names them)."""
    item, known, correct = simulate_item_arrays(ip, n_students, n_opportunities, make_rng(seed))
    n_skills = len(ip.skills)
    width = len(str(max(n_students - 1, 0)))
    students = np.array([f"s{i:0{width}d}" for i in range(n_students)], dtype=object)
    names = ip.item_names()
    per_skill = n_students * n_opportunities
    return pd.DataFrame(
        {
            "student": np.tile(np.repeat(students, n_opportunities), n_skills),
            "skill": np.repeat(ip.skills, per_skill),
            "item": names[np.repeat(np.arange(n_skills), per_skill), item.reshape(-1)],
            "order": np.tile(np.arange(1, n_opportunities + 1), n_skills * n_students),
            "correct": correct.reshape(-1),
            "known": known.reshape(-1),
        }
    )


def item_params_long(ip: ItemParams) -> pd.DataFrame:
    """The true parameters as a long table (``skill, parameter, group, value``): prior and
    forget per skill (group ``*``), guess and slip per item (group ``item=SKILL-J``), learn per
    item with ``item_learn``, else per skill."""
    rows = []
    names = ip.item_names()
    for k, skill in enumerate(ip.skills.astype(str)):
        groups = [f"{ITEM_COLUMN}={n}" for n in names[k]]
        rows.append((skill, "prior", "*", ip.prior[k]))
        if ip.item_learn:
            rows += [(skill, "learn", g, v) for g, v in zip(groups, ip.learn[k], strict=True)]
            rows += [(skill, "forget", g, ip.forget[k]) for g in groups]
        else:
            rows += [(skill, "learn", "*", ip.learn[k, 0]), (skill, "forget", "*", ip.forget[k])]
        rows += [(skill, "guess", g, v) for g, v in zip(groups, ip.guess[k], strict=True)]
        rows += [(skill, "slip", g, v) for g, v in zip(groups, ip.slip[k], strict=True)]
    table = pd.DataFrame(rows, columns=["skill", "parameter", "group", "value"])
    table["value"] = table["value"].astype(float)
    return table
