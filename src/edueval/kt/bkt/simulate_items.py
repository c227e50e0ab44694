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

from ...io import InputError
from ...seeding import rng as make_rng
from .params import PARAM_NAMES, BKTParams, params_frame

__all__ = [
    "ItemParams",
    "draw_item_params",
    "simulate_items",
    "item_params_long",
    "item_params_from_long",
]

ITEM_COLUMN = "item"
_GS_RANGE = (0.01, 0.45)
_LEARN_RANGE = (0.01, 0.95)


@dataclass(frozen=True)
class ItemParams:
    """Per-skill parameters (``skills``, ``prior``: (n_skills,)) and per-item ones (``guess``,
    ``slip``, ``learn``: (n_skills, n_items)); ``forget`` per skill (n_skills,) or per item (like
    ``learn``); ``item_learn`` says whether learn and forget vary by item (else every item of a
    skill has the skill's), ``pair_learn``/``pair_forget`` replace them per pair of items.  Items drawn here are named ``SKILL-J``; items read from a parameter
    file keep their ``names`` (n_skills, n_items), a skill with fewer items than the widest
    padded, ``counts`` items each; ``column`` names the response column that holds the item."""

    skills: np.ndarray
    prior: np.ndarray
    forget: np.ndarray
    guess: np.ndarray
    slip: np.ndarray
    learn: np.ndarray
    item_learn: bool
    names: np.ndarray | None = None
    counts: np.ndarray | None = None
    column: str = ITEM_COLUMN
    #: learn and forget per ordered pair of items (``kt fit --multipair``): (n_skills, n_items + 1,
    #: n_items), index 0 of the middle axis the sequence's first move (``COLUMN=(first)``), j + 1
    #: the previous item j; ``pair_given`` marks the pairs the parameter file named
    pair_learn: np.ndarray | None = None
    pair_forget: np.ndarray | None = None
    pair_given: np.ndarray | None = None

    @property
    def n_items(self) -> int:
        return self.guess.shape[1]

    def item_names(self) -> np.ndarray:
        """(n_skills, n_items) names: as read, or ``SKILL-J``."""
        if self.names is not None:
            return self.names
        j = np.arange(1, self.n_items + 1).astype(str)
        return np.char.add(np.char.add(self.skills.astype(str)[:, None], "-"), j[None, :])

    def items_of(self, k: int) -> int:
        """How many items skill ``k`` has."""
        return self.n_items if self.counts is None else int(self.counts[k])


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
    if ip.counts is None or (ip.counts == ip.n_items).all():
        item = gen.integers(ip.n_items, size=shape)
    else:  # skills with fewer items than the widest: each drawn among its own
        item = gen.integers(0, np.asarray(ip.counts)[:, None, None], size=shape)
    known = np.empty(shape, dtype=np.int8)
    correct = np.empty(shape, dtype=np.int8)
    sk = np.arange(shape[0])[:, None]
    state = gen.random(shape[:2]) < ip.prior[:, None]
    previous = np.zeros(shape[:2], dtype=np.intp)  # 0: no previous item (the first move)
    for t in range(n_opportunities):
        it = item[:, :, t]
        known[:, :, t] = state
        p = np.where(state, 1.0 - ip.slip[sk, it], ip.guess[sk, it])
        correct[:, :, t] = gen.random(p.shape) < p
        move = gen.random(p.shape)
        if ip.pair_learn is not None and ip.pair_forget is not None:
            learn, forget = ip.pair_learn[sk, previous, it], ip.pair_forget[sk, previous, it]
            previous = it + 1
        else:
            learn = ip.learn[sk, it]
            forget = ip.forget[sk, it] if ip.forget.ndim == 2 else ip.forget[:, None]
        state = move < np.where(state, 1.0 - forget, learn)
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
            ip.column: names[np.repeat(np.arange(n_skills), per_skill), item.reshape(-1)],
            "order": np.tile(np.arange(1, n_opportunities + 1), n_skills * n_students),
            "correct": correct.reshape(-1),
            "known": known.reshape(-1),
        }
    )


def item_params_long(ip: ItemParams) -> pd.DataFrame:
    """The true parameters as a long table (``skill, parameter, group, value``): prior per skill
    (group ``*``), guess and slip per item (group ``item=SKILL-J``), learn and forget per item
    with ``item_learn``, else per skill."""
    rows = []
    names = ip.item_names()
    for k, skill in enumerate(ip.skills.astype(str)):
        n = ip.items_of(k)
        groups = [f"{ip.column}={name}" for name in names[k, :n]]
        forget = ip.forget[k] if ip.forget.ndim == 2 else np.full(n, ip.forget[k])
        rows.append((skill, "prior", "*", ip.prior[k]))
        if ip.pair_learn is not None:
            rows += _pair_rows(ip, k, skill)
        elif ip.item_learn:
            rows += [(skill, "learn", g, v) for g, v in zip(groups, ip.learn[k, :n], strict=True)]
            rows += [(skill, "forget", g, v) for g, v in zip(groups, forget[:n], strict=True)]
        else:
            rows += [(skill, "learn", "*", ip.learn[k, 0]), (skill, "forget", "*", forget[0])]
        rows += [(skill, "guess", g, v) for g, v in zip(groups, ip.guess[k, :n], strict=True)]
        rows += [(skill, "slip", g, v) for g, v in zip(groups, ip.slip[k, :n], strict=True)]
    table = pd.DataFrame(rows, columns=["skill", "parameter", "group", "value"])
    table["value"] = table["value"].astype(float)
    return table


def _pair_label(column: str, previous: str | None, item: str) -> str:
    return f"{column}=(first)" if previous is None else f"{column}={previous}>{item}"


def _pair_rows(ip: ItemParams, k: int, skill: str) -> list[tuple[str, str, str, float]]:
    """Learn and forget rows of the pairs the parameter file named (``kt fit --multipair``)."""
    assert ip.pair_learn is not None and ip.pair_forget is not None and ip.pair_given is not None
    names = ip.item_names()[k, : ip.items_of(k)]
    rows = []
    for parameter, values in (("learn", ip.pair_learn), ("forget", ip.pair_forget)):
        for i, previous in enumerate([None, *names]):
            for j, item in enumerate(names):
                if ip.pair_given[k, i, j]:
                    label = _pair_label(ip.column, previous, item)
                    rows.append((skill, parameter, label, float(values[k, i, j])))
                    if previous is None:
                        break  # one shared (first) group: its value is the same for every item
    return rows


def _item_column(long: pd.DataFrame) -> str:
    """The one column that the table's grouped guess, slip, learn and forget are per value of;
    a table that kt simulate cannot draw responses for is refused, naming why."""
    if (long["parameter"] == "share").any() or (long.loc[long["parameter"] == "prior", "group"]
                                                 != "*").any():  # fmt: skip
        raise InputError(
            "simulation draws one prior per skill; this parameter table has a prior per group "
            "(a multiprior fit's, per first-response class): simulate from a table without it"
        )
    grouped = long.loc[long["group"] != "*", "group"].astype(str)
    columns = sorted(set(grouped.str.partition("=")[0]))
    if len(columns) > 1:
        raise InputError(
            "kt simulate draws one grouping column per response; this parameter file groups by "
            + " and ".join(repr(c) for c in columns)
        )
    return columns[0] if columns else ITEM_COLUMN


def _is_pair(value: str) -> bool:
    return ">" in value or value == "(first)"


def _items(rows: dict[str, dict[str, float]], prefix: str, fallback: str) -> list[str]:
    """A skill's items: the values its groups name (both items of a pair), sorted."""
    found: set[str] = set()
    for groups in rows.values():
        for group in groups:
            if group.startswith(prefix):
                value = group[len(prefix) :]
                found.update(
                    value.split(">") if ">" in value else [] if _is_pair(value) else [value]
                )
    return sorted(found) or [fallback]


def item_params_from_long(long: pd.DataFrame) -> ItemParams:
    """Item parameters from a validated long parameter table (``kt simulate --items-per-skill``
    and ``kt fit --multigs``/``--multilearn``/``--multipair COLUMN`` write one;
    :func:`~.variants.read_param_file` reads it).  Each skill's items are the values of COLUMN its
    groups name (sorted); a parameter's value for an item (or pair of items) is that of kt
    predict (:func:`~.variants.group_value`): the skill's ``*`` row, else the group's row, else
    the mean over the parameter's groups (an item the fit never saw in that role); forget 0
    when the table has none.  A prior per group (first-response classes, ``--multiprior``) or
    groups of two columns are refused (:class:`InputError`)."""
    from .variants import group_value

    column = _item_column(long)
    prefix = f"{column}="
    table: dict[str, dict[str, dict[str, float]]] = {}
    for skill, parameter, group, value in zip(long["skill"].astype(str), long["parameter"].astype(str),
                                              long["group"].astype(str), long["value"].astype(float),
                                              strict=True):  # fmt: skip
        table.setdefault(skill, {}).setdefault(parameter, {})[group] = value
    skills = list(table)
    items = [_items(table[s], prefix, s) for s in skills]
    width = max(len(i) for i in items)
    values = {p: np.zeros((len(skills), width)) for p in ("guess", "slip", "learn", "forget")}
    transitions = [g for s in skills for p in ("learn", "forget") for g in table[s].get(p, {})]
    pairs = any(_is_pair(g[len(prefix) :]) for g in transitions if g.startswith(prefix))
    shape = (len(skills), width + 1, width)
    pair = {"learn": np.zeros(shape), "forget": np.zeros(shape)} if pairs else {}
    given = np.zeros(shape, dtype=bool)
    for k, skill in enumerate(skills):
        rows = table[skill]
        for parameter, out in values.items():
            if parameter in rows:  # forget may be absent: 0
                out[k, : len(items[k])] = [
                    group_value(rows[parameter], prefix + i) for i in items[k]
                ]
        for parameter, by_pair in pair.items():
            if parameter not in rows:
                continue
            for i, previous in enumerate([None, *items[k]]):
                for j, item in enumerate(items[k]):
                    label = _pair_label(column, previous, item)
                    by_pair[k, i, j] = group_value(rows[parameter], label)
                    given[k, i, j] |= label in rows[parameter]
    names = np.full((len(skills), width), "", dtype=object)
    for k, its in enumerate(items):
        names[k, : len(its)] = its
    return ItemParams(
        np.array(skills, dtype=object),
        np.array([table[s]["prior"]["*"] for s in skills], dtype=float),
        values["forget"], values["guess"], values["slip"], values["learn"],
        any(g != "*" for g in transitions), names, np.array([len(i) for i in items]), column,
        pair.get("learn"), pair.get("forget"), given if pairs else None,
    )  # fmt: skip
