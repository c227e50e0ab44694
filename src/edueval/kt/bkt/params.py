"""BKT parameter sets: one row per skill with prior, learn, guess, slip and forget."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import astuple, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ...io import InputError, as_table
from ...tables import Col, Schema, Table, takes_tables

__all__ = [
    "BKTParams",
    "PARAM_NAMES",
    "PAPER_RANGES",
    "params_frame",
    "random_params",
    "read_params",
    "params_matrix",
    "require_skills",
]

PARAM_NAMES = ("prior", "learn", "guess", "slip", "forget")

#: Uniform ranges used by Pardos & Yudelson (Sec. 5.1) to draw generating parameters.
PAPER_RANGES: dict[str, tuple[float, float]] = {
    "prior": (0.01, 0.80),
    "learn": (0.01, 0.60),
    "guess": (0.05, 0.40),
    "slip": (0.05, 0.40),
}


@dataclass(frozen=True)
class BKTParams:
    """One skill's parameters. ``forget`` is 0 in classic BKT."""

    prior: float
    learn: float
    guess: float
    slip: float
    forget: float = 0.0

    def __post_init__(self) -> None:
        for name, value in zip(PARAM_NAMES, astuple(self), strict=True):
            if not (0.0 <= float(value) <= 1.0):
                raise ValueError(f"{name} must be a probability in [0, 1], got {value}")

    def as_array(self) -> np.ndarray:
        return np.array(astuple(self), dtype=float)


def params_frame(params: pd.DataFrame | Mapping[str, BKTParams]) -> pd.DataFrame:
    """Normalise parameters to a DataFrame indexed by skill with the five parameter columns."""
    if isinstance(params, pd.DataFrame):
        df = params.copy()
        if "skill" in df.columns:
            df = df.set_index("skill")
        if "forget" not in df.columns:
            df["forget"] = 0.0
        df.index = df.index.astype(str)
        df.index.name = "skill"
        missing = [c for c in PARAM_NAMES if c not in df.columns]
        if missing:
            raise ValueError(f"parameter table lacks columns {missing}")
        return df
    rows = {str(k): (v if isinstance(v, BKTParams) else BKTParams(**v)) for k, v in params.items()}
    df = pd.DataFrame(
        [astuple(v) for v in rows.values()], index=list(rows), columns=list(PARAM_NAMES)
    )
    df.index.name = "skill"
    return df


def random_params(
    n_skills: int,
    rng: np.random.Generator,
    ranges: Mapping[str, tuple[float, float]] = PAPER_RANGES,
    *,
    forget: tuple[float, float] | None = None,
    prefix: str = "skill",
) -> pd.DataFrame:
    """Draw ``n_skills`` parameter sets uniformly within ``ranges`` (the paper's by default)."""
    width = len(str(max(n_skills - 1, 0)))
    cols = {}
    for name in ("prior", "learn", "guess", "slip"):
        lo, hi = ranges[name]
        cols[name] = rng.uniform(lo, hi, size=n_skills)
    cols["forget"] = rng.uniform(*forget, size=n_skills) if forget else np.zeros(n_skills)
    df = pd.DataFrame(cols, index=[f"{prefix}{i:0{width}d}" for i in range(n_skills)])
    df.index.name = "skill"
    return df


# What ``kt fit`` writes beside the parameters; read back and ignored.
FIT_COLUMNS = ("log_likelihood", "n_iter", "converged", "n_responses", "n_students")

WIDE_SCHEMA = Schema(
    "parameter file",
    (Col("skill", "id"),
     *(Col(n, "number", low=0.0, high=1.0, required=n != "forget", default=0.0 if n == "forget"
           else None) for n in PARAM_NAMES)),
    key=("skill",),
    closed=True,
    ignored=FIT_COLUMNS,
)  # fmt: skip


def skill_column(data: str | Path | pd.DataFrame) -> str | Path | pd.DataFrame:
    """A parameter DataFrame indexed by skill (as ``BKT.params_``) with ``skill`` as a column."""
    if (
        isinstance(data, pd.DataFrame)
        and "skill" not in data.columns
        and data.index.name == "skill"
    ):
        return data.reset_index()
    return data


@takes_tables(
    data=Table(
        "parameters", ("skill", "prior", "learn", "guess", "slip"), ("forget",), self_checked=True
    )
)
def read_params(data: str | Path | pd.DataFrame) -> pd.DataFrame:
    """Read a parameter file (CSV/JSON/JSONL with ``skill, prior, learn, guess, slip[, forget]``;
    the fit statistics ``kt fit`` writes beside them are ignored; any other column is refused),
    or check a DataFrame the same way (``skill`` a column or the index, as ``BKT.params_``)."""
    return wide_params(as_table(skill_column(data), name="parameters", text_columns=["skill"]))


def wide_params(table: pd.DataFrame) -> pd.DataFrame:
    """A wide parameter table as read (:func:`~edueval.io.as_table`), validated and indexed by
    skill."""
    df = WIDE_SCHEMA.validate(table)
    out = df.set_index("skill")[list(PARAM_NAMES)]
    out.index = pd.Index(out.index.astype(str), name="skill")
    return out


def require_skills(params: pd.DataFrame, skills, *, source: str | None = None) -> None:
    """Refuse a parameter table (indexed by skill) without a row for one of ``skills``."""
    known = set(params.index)
    missing = [str(s) for s in skills if str(s) not in known]
    if missing:
        raise InputError(
            f"no parameters for skill {missing[0]!r} of the data"
            + (f" ({len(missing)} skills in all)" if len(missing) > 1 else "")
            + "; the parameter file must have a row for every skill",
            file=source,
        )


def params_matrix(
    params: pd.DataFrame, skills: np.ndarray, *, source: str | None = None
) -> np.ndarray:
    """Rows of ``params`` in the order of ``skills`` as an (n_skills, 5) array.

    Raises :class:`InputError` when a skill of the data has no parameters, or when the parameter
    table names a skill that the data does not contain (almost always a typo).
    """
    params = params_frame(params)
    skills = np.asarray(skills, dtype=str)
    require_skills(params, skills, source=source)
    in_data = set(skills)
    extra = [s for s in params.index if s not in in_data]
    if extra:
        raise InputError(
            f"unknown skill {extra[0]!r}: it does not occur in the response data"
            + (f" ({len(extra)} unknown skills in all)" if len(extra) > 1 else ""),
            file=source,
            column="skill",
        )
    return np.ascontiguousarray(params.loc[skills, list(PARAM_NAMES)].to_numpy(dtype=float))
