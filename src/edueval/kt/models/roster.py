"""Online knowledge tracing: a roster of students updated one response at a time.

:class:`Roster` holds, for every (student, skill), the probability that the skill is known
before the next opportunity, and updates it with exactly the recursion of the batch forward
filter (:func:`edueval.kt.bkt.model.forward` and, for the variants, the forward filter of
:mod:`edueval.kt.bkt.variants`: the same floating-point operations in the same order), so replaying a
log gives the batch predictions to the last bits.

Parameters are classic BKT (one row per skill, as :func:`~edueval.kt.bkt.params.read_params` reads)
or any BKT variant's long table (``skill, parameter, group, value``, as a variant's
``BKT.params_`` holds or ``kt fit --multigs ...`` writes).  Every variant is tracked online, as
each only needs what is known when a response arrives:

* ``multigs`` / ``multilearn`` / ``multipair`` on COLUMN: the response's COLUMN value, passed as
  a keyword (``update(student, skill, correct, item="k-3")``); multipair pairs it with the
  previous value of the student's sequence on the skill, the first move uses ``COLUMN=(first)``;
* ``multiprior`` by first-response class: before the first response the prior is mixed over the
  classes by their training share (what the batch prediction uses for a first response); the
  first response then picks the class and its prior, as in the batch filter;
* ``multiprior`` on COLUMN: the class is COLUMN's value at the first response (a keyword too).

A group the table lacks (an item not seen in fitting) gets the skill's mean over that
parameter's groups, as in batch prediction.

Saving a fitted model (no pickle) is :mod:`edueval.kt.models.model_files` (re-exported here).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...io import InputError, binary_column, order_column
from ...tables import takes_tables
from ..bkt.params import PARAM_NAMES, params_frame
from ..bkt.variant_design import FIRST, PAIR_FIRST
from ..bkt.variants import (
    _spec_of,
    group_value,
    is_long,
    mixed_prior,
    table_index,
    wide_to_long,
)
from ..data import RESPONSES, Columns
from .model_files import MODEL_FORMAT, load_model, save_model

__all__ = ["Roster", "replay", "save_model", "load_model", "MODEL_FORMAT"]


class _SkillParams:
    """One skill's rows of a long parameter table, looked up by group label (as the batch
    prediction looks them up: :func:`~edueval.kt.bkt.variants.group_value`)."""

    def __init__(self, skill: str, table: dict[str, dict[str, float]]) -> None:
        self.skill = skill
        self.table = table
        for name in ("prior", "learn", "guess", "slip"):
            if not table.get(name):
                raise InputError(f"no {name} parameter for skill {skill!r} in the parameter file")

    def get(self, name: str, group: str) -> float:
        """The value of ``name`` for ``group`` (``*`` rows apply to every group)."""
        rows = self.table.get(name)
        if not rows:
            return 0.0  # forget absent: no forgetting
        return group_value(rows, group)

    def mixed_prior(self) -> float:
        """Prior mixed over first-response classes by their training share."""
        return mixed_prior(self.table)


class Roster:
    """Students' knowledge states under fitted BKT parameters, updated online.

    Parameters
    ----------
    params : classic parameters, one row per skill with ``prior, learn, guess, slip[, forget]``
        (DataFrame indexed by skill or with a ``skill`` column), or a variant's long table
        ``skill, parameter, group, value`` (see the module docstring).
    threshold : P(known) at which :meth:`state` reports a skill as mastered.

    Examples
    --------
    >>> roster = Roster(model.params_)                       # doctest: +SKIP
    >>> roster.add("ana")                                    # doctest: +SKIP
    >>> roster.predict("ana", "fractions")                   # P(correct) before answering
    >>> roster.update("ana", "fractions", 1)                 # P(known) after the answer
    >>> Roster(idem.params_).update("ana", "fractions", 1, item="f-2")  # a multigs model
    """

    def __init__(self, params: pd.DataFrame, *, threshold: float = 0.95) -> None:
        classic = not is_long(params)
        long = wide_to_long(params_frame(params)[list(PARAM_NAMES)]) if classic else params
        long = long.assign(skill=long["skill"].astype(str), group=long["group"].astype(str))
        self.spec = _spec_of(long)
        self.params = {s: _SkillParams(s, t) for s, t in table_index(long).items()}
        self.threshold = threshold
        self._students: dict[str, dict[str, list]] = {}

    @classmethod
    def from_model(cls, model, **kwargs) -> Roster:
        """A roster on a fitted BKT model's parameters (classic or variant)."""
        return cls(model.params_, **kwargs)

    @property
    def group_columns(self) -> list[str]:
        """Columns whose values :meth:`update` and :meth:`predict` need as keywords."""
        return self.spec.columns

    def _params(self, skill: str) -> _SkillParams:
        try:
            return self.params[skill]
        except KeyError:
            raise InputError(f"no parameters for skill {skill!r}") from None

    def _cell(self, student: str, skill: str) -> list:
        """[P(known), P(unknown), n responses, last posterior, previous transition value]."""
        if student not in self._students:
            raise InputError(f"unknown student {student!r}: add() them first")
        cells = self._students[student]
        if skill not in cells:
            sp = self._params(skill)
            prior = sp.mixed_prior() if self.spec.multiprior is True else sp.get("prior", "*")
            cells[skill] = [prior, 1.0 - prior, 0, prior, None]
        return cells[skill]

    def _group(self, column: str | None, groups: dict, what: str) -> str:
        if not column:
            return "*"
        if column not in groups:
            raise InputError(f"this model's {what} depend on column {column!r}: pass "
                             f"{column}=VALUE for every response")  # fmt: skip
        return f"{column}={groups[column]}"

    def _start(self, cell: list, sp: _SkillParams, correct: int, groups: dict) -> None:
        """Before a sequence's first response: its class's prior (multiprior)."""
        prior_by = self.spec.multiprior
        if prior_by is True:
            label = f"{FIRST}={int(correct)}"
        elif prior_by:
            label = self._group(str(prior_by), groups, "priors")
        else:
            return
        cell[0] = sp.get("prior", label)
        cell[1] = 1.0 - cell[0]

    def add(self, student: str) -> None:
        """Start tracking a student (every skill at its prior); adding twice is an error."""
        if student in self._students:
            raise InputError(f"student {student!r} is already on the roster")
        self._students[student] = {}

    def __contains__(self, student: str) -> bool:
        return student in self._students

    def predict(self, student: str, skill: str, **groups) -> float:
        """P(correct) at the student's next opportunity on the skill (the response's group
        values as keywords for a variant, e.g. ``item=...``)."""
        cell = self._cell(student, skill)
        sp = self._params(skill)
        L, U = cell[0], cell[1]
        if cell[2] == 0 and self.spec.multiprior and self.spec.multiprior is not True:
            L = sp.get("prior", self._group(str(self.spec.multiprior), groups, "priors"))
            U = 1.0 - L
        emission = self._group(self.spec.multigs, groups, "guess and slip")
        return L * (1.0 - sp.get("slip", emission)) + U * sp.get("guess", emission)

    def _transition(self, cell: list, groups: dict) -> str:
        column = self.spec.multilearn or self.spec.multipair
        label = self._group(column, groups, "learn and forget")
        if not self.spec.multipair:
            return label
        current = str(groups[column])
        previous, cell[4] = cell[4], current
        if previous is None:
            return f"{column}={PAIR_FIRST}"
        return f"{column}={previous}>{current}"

    def update(self, student: str, skill: str, correct: int | bool, **groups) -> float:
        """Observe a response; returns P(known) after it (the batch filter's ``p_known``).
        A variant's group values come as keywords (``item="k-3"``)."""
        if correct not in (0, 1):
            raise InputError(f"correct must be 0 or 1, got {correct!r}")
        cell = self._cell(student, skill)
        sp = self._params(skill)
        if cell[2] == 0:
            self._start(cell, sp, int(correct), groups)
        emission = self._group(self.spec.multigs, groups, "guess and slip")
        guess, slip = sp.get("guess", emission), sp.get("slip", emission)
        move = self._transition(cell, groups)
        learn, forget = sp.get("learn", move), sp.get("forget", move)
        L, U = cell[0], cell[1]
        k = L * (1.0 - slip) if correct else L * slip
        u = U * guess if correct else U * (1.0 - guess)
        inv = 1.0 / max(k + u, 1e-300)
        a, b = k * inv, u * inv
        cell[0] = a * (1.0 - forget) + b * learn
        cell[1] = a * forget + b * (1.0 - learn)
        cell[2] += 1
        cell[3] = a
        return a

    def mastery(self, student: str, skill: str) -> float:
        """P(known) after the student's last response on the skill (the prior before any)."""
        return self._cell(student, skill)[3]

    def state(self) -> pd.DataFrame:
        """One row per student and practised skill: responses, P(known), next P(correct)
        (classic models only: a variant's next P(correct) depends on the next item), mastered
        (P(known) >= threshold)."""
        by_column = self.spec.multiprior and self.spec.multiprior is not True
        grouped = bool(self.spec.multigs or by_column)
        rows = [
            {"student": st, "skill": sk, "n_responses": int(c[2]), "p_known": c[3],
             "p_correct_next": np.nan if grouped else self.predict(st, sk),
             "mastered": c[3] >= self.threshold}
            for st, cells in self._students.items() for sk, c in cells.items()
        ]  # fmt: skip
        cols = ["student", "skill", "n_responses", "p_known", "p_correct_next", "mastered"]
        return pd.DataFrame(rows, columns=cols)


@takes_tables(df=RESPONSES)
def replay(roster: Roster, df: pd.DataFrame, columns: Columns | None = None) -> pd.DataFrame:
    """Feed a response table to the roster: in ``order`` within student x skill when the column
    exists, else file order (as :func:`~edueval.kt.data.pack` orders sequences; responses of
    different sequences do not interact, so any interleaving gives the same numbers).

    Returns ``df`` (row order kept) with ``p_correct`` (before) and ``p_known`` (after) added.
    """
    cols = (columns or Columns()).resolve(df)
    if cols.order in df.columns:
        sequence = np.argsort(order_column(df, cols.order), kind="stable")
    else:
        sequence = np.arange(len(df))
    students = df[cols.student].astype(str).to_numpy()
    skills = df[cols.skill].astype(str).to_numpy()
    correct = binary_column(df, cols.correct)
    extra = {c: _group_values(df, c) for c in roster.group_columns}
    pc, pk = np.empty(len(df)), np.empty(len(df))
    for i in sequence:
        if students[i] not in roster:
            roster.add(students[i])
        groups = {c: v[i] for c, v in extra.items()}
        pc[i] = roster.predict(students[i], skills[i], **groups)
        pk[i] = roster.update(students[i], skills[i], int(correct[i]), **groups)
    out = df.copy()
    out["p_correct"], out["p_known"] = pc, pk
    return out


def _group_values(df: pd.DataFrame, column: str) -> np.ndarray:
    """COLUMN's cells as the text the parameter file's group labels use."""
    if column not in df.columns:
        raise InputError(f"the model's groups need column {column!r}; the updates have "
                         + ", ".join(map(str, df.columns)))  # fmt: skip
    col = df[column]
    if col.isna().any():
        raise InputError(f"column {column!r} has empty cells; every response needs a value")
    if pd.api.types.is_float_dtype(col) and np.all(col == np.floor(col)):
        col = col.astype(np.int64)
    return col.astype(str).to_numpy()
