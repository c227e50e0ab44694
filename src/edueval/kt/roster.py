"""Online knowledge tracing: a roster of students updated one response at a time.

:class:`Roster` holds, for every (student, skill), the probability that the skill is known
before the next opportunity, and updates it with exactly the recursion of the batch forward
filter (:func:`edueval.kt.bkt.forward`, the same floating-point operations in the same order),
so replaying a log gives the batch predictions to the last bits.  Parameters are classic BKT
(with or without forgetting): one row per skill, as :func:`~edueval.kt.params.read_params`
reads or :attr:`BKT.params_ <edueval.kt.bkt.BKT>` holds.

Saving a fitted model for a tutoring service (no pickle): :func:`save_model` writes
``params.csv`` and ``model.json`` (format, estimator options, skills, fit summary);
:func:`load_model` reads them back into a fitted :class:`~edueval.kt.bkt.BKT`.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import InputError, binary_column
from ..runs import atomic_write
from .bkt import BKT
from .data import Columns
from .params import PARAM_NAMES, params_frame, read_params

__all__ = ["Roster", "save_model", "load_model", "MODEL_FORMAT"]

MODEL_FORMAT = "edueval-bkt/1"
_OPTIONS = ("forgets", "n_restarts", "max_iter", "tol", "guess_max", "slip_max", "seed")


class Roster:
    """Students' knowledge states under fitted BKT parameters, updated online.

    Parameters
    ----------
    params : one row per skill with ``prior, learn, guess, slip[, forget]`` (DataFrame indexed by
        skill or with a ``skill`` column).
    threshold : P(known) at which :meth:`state` reports a skill as mastered.

    Examples
    --------
    >>> roster = Roster(model.params_)                       # doctest: +SKIP
    >>> roster.add("ana")                                    # doctest: +SKIP
    >>> roster.predict("ana", "fractions")                   # P(correct) before answering
    >>> roster.update("ana", "fractions", 1)                 # P(known) after the answer
    """

    def __init__(self, params: pd.DataFrame, *, threshold: float = 0.95) -> None:
        pf = params_frame(params)
        self.params = {str(s): tuple(map(float, row)) for s, row in
                       zip(pf.index, pf[list(PARAM_NAMES)].to_numpy(), strict=True)}  # fmt: skip
        self.threshold = threshold
        self._students: dict[str, dict[str, list[float]]] = {}

    @classmethod
    def from_model(cls, model: BKT, **kwargs) -> Roster:
        """A roster on a fitted classic BKT model's parameters."""
        return cls(model.params_, **kwargs)

    def _params(self, skill: str) -> tuple[float, ...]:
        try:
            return self.params[skill]
        except KeyError:
            raise InputError(f"no parameters for skill {skill!r}") from None

    def _cell(self, student: str, skill: str) -> list[float]:
        """[P(known), P(unknown), n responses, last posterior] before the next opportunity."""
        if student not in self._students:
            raise InputError(f"unknown student {student!r}: add() them first")
        cells = self._students[student]
        if skill not in cells:
            prior = self._params(skill)[0]
            cells[skill] = [prior, 1.0 - prior, 0, prior]
        return cells[skill]

    def add(self, student: str) -> None:
        """Start tracking a student (every skill at its prior); adding twice is an error."""
        if student in self._students:
            raise InputError(f"student {student!r} is already on the roster")
        self._students[student] = {}

    def __contains__(self, student: str) -> bool:
        return student in self._students

    def predict(self, student: str, skill: str) -> float:
        """P(correct) at the student's next opportunity on the skill."""
        L, U, _, _ = self._cell(student, skill)
        _, _, guess, slip, _ = self._params(skill)
        return L * (1.0 - slip) + U * guess

    def update(self, student: str, skill: str, correct: int | bool) -> float:
        """Observe a response; returns P(known) after it (the batch filter's ``p_known``)."""
        if correct not in (0, 1):
            raise InputError(f"correct must be 0 or 1, got {correct!r}")
        cell = self._cell(student, skill)
        _, learn, guess, slip, forget = self._params(skill)
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
        """One row per student and practised skill: responses, P(known), next P(correct),
        mastered (P(known) >= threshold)."""
        rows = [
            {"student": st, "skill": sk, "n_responses": int(c[2]), "p_known": c[3],
             "p_correct_next": self.predict(st, sk), "mastered": c[3] >= self.threshold}
            for st, cells in self._students.items() for sk, c in cells.items()
        ]  # fmt: skip
        cols = ["student", "skill", "n_responses", "p_known", "p_correct_next", "mastered"]
        return pd.DataFrame(rows, columns=cols)


def replay(roster: Roster, df: pd.DataFrame, columns: Columns | None = None) -> pd.DataFrame:
    """Feed a response table to the roster: in ``order`` within student x skill when the column
    exists, else file order (as :func:`~edueval.kt.data.pack` orders sequences; responses of
    different sequences do not interact, so any interleaving gives the same numbers).

    Returns ``df`` (row order kept) with ``p_correct`` (before) and ``p_known`` (after) added.
    """
    cols = (columns or Columns()).resolve(df)
    if cols.order in df.columns:
        sequence = np.argsort(df[cols.order].to_numpy(dtype=float), kind="stable")
    else:
        sequence = np.arange(len(df))
    students = df[cols.student].astype(str).to_numpy()
    skills = df[cols.skill].astype(str).to_numpy()
    correct = binary_column(df, cols.correct)
    pc, pk = np.empty(len(df)), np.empty(len(df))
    for i in sequence:
        if students[i] not in roster:
            roster.add(students[i])
        pc[i] = roster.predict(students[i], skills[i])
        pk[i] = roster.update(students[i], skills[i], int(correct[i]))
    out = df.copy()
    out["p_correct"], out["p_known"] = pc, pk
    return out


def save_model(model: BKT, folder: str | Path) -> Path:
    """Write a fitted classic BKT model as ``params.csv`` plus ``model.json`` (no pickle)."""
    if not hasattr(model, "params_"):
        raise RuntimeError("the model is not fitted; nothing to save")
    if "parameter" in model.params_.columns:
        raise ValueError("save_model keeps classic BKT (one row per skill); this is a variant")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(folder / "params.csv", model.params_.reset_index().to_csv(index=False))
    meta = {
        "format": MODEL_FORMAT,
        "estimator": "BKT",
        "options": {name: getattr(model, name) for name in _OPTIONS},
        "columns": asdict(model.columns or Columns()),
        "skills": [str(s) for s in model.params_.index],
        "n_params": int(model.n_params_),
        "log_likelihood": {str(k): float(v) for k, v in model.log_likelihood_.items()},
    }
    atomic_write(folder / "model.json", json.dumps(meta, indent=2) + "\n")
    return folder


def load_model(folder: str | Path) -> BKT:
    """A fitted :class:`BKT` from a folder written by :func:`save_model` (predicts at once)."""
    folder = Path(folder)
    meta_path = folder / "model.json"
    if not meta_path.is_file():
        raise InputError("expected model.json (written by save_model)", file=meta_path)
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    if meta.get("format") != MODEL_FORMAT:
        raise InputError(f"expected format {MODEL_FORMAT!r}, got {meta.get('format')!r}",
                         file=meta_path)  # fmt: skip
    model = BKT(**meta["options"], columns=Columns(**meta["columns"]))
    model.params_ = read_params(folder / "params.csv")
    if list(model.params_.index) != meta["skills"]:
        raise InputError("params.csv does not hold the skills model.json lists",
                         file=folder / "params.csv")  # fmt: skip
    model.n_params_ = int(meta["n_params"])
    model.log_likelihood_ = pd.Series(meta["log_likelihood"], name="log_likelihood")
    return model
