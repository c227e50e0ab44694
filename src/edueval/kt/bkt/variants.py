"""BKT variants: parameters per group of responses or of students, fitted by exact EM.

The variants of pyBKT's users, each a BKT model whose parameters are looked up per group:

* ``multigs=COLUMN`` -- guess and slip per value of COLUMN at the response (KT-IDEM, Pardos &
  Heffernan 2011);
* ``multilearn=COLUMN`` -- learn (and forget) of the move *after* a response, per value of COLUMN
  at that response (as pyBKT: the learning effect of having done that item);
* ``multipair=COLUMN`` -- learn (and forget) of the move after a response, per ordered pair
  (previous value, current value) of COLUMN; a sequence's first response has no previous value
  and its move uses one shared group ``COLUMN=(first)`` (item-order effect, Pardos & Heffernan
  2009; pyBKT does the same);
* ``multiprior=True`` -- a prior per class of student sequence, the class being the correctness
  of the student's *first response* on the skill (KT-PPS's first-response heuristic, Pardos &
  Heffernan 2010; pyBKT's ``multiprior`` uses the ``correct`` column's first value by default,
  i.e. the same classes).  ``multiprior=COLUMN`` takes the class from COLUMN's value at the
  sequence's first response (e.g. a pretest group), which is a proper generative model.
  Why the first-response classes rather than one prior per student (the other reading of
  pyBKT's documentation): with one sequence per student and skill, a prior per student has as
  many parameters as sequences and its maximum-likelihood value sits at 0 or 1; two classes
  are what KT-PPS published and estimate well.  Because the class *is* the first response,
  ``p_correct`` of a sequence's first response uses the prior mixed over classes by their
  share in the training data (stored as parameter ``share``), so a prediction never sees the
  answer it predicts; the likelihood that is fitted and reported is that of these
  predictions (the first response under the mixed prior, the rest under the class's prior),
  not KT-PPS's pseudo-likelihood (the whole sequence under the prior its first response
  selects), which is inflated: see :mod:`edueval.kt.bkt.first_response`.  With
  ``multiprior=COLUMN`` the class is observed and the likelihood is that of the sequence
  given its class, fitted by EM as the other variants.

Each variant combines with ``forgets`` and with the others, except ``multilearn`` with
``multipair`` (both define the transition groups).  ``fixed`` holds parameters at given values
and ``init`` gives the first restart's starting values (both long tables, see below).

EM is exact (for every variant but first-response classes, whose likelihood is maximised as
:mod:`edueval.kt.bkt.first_response` says): the expected complete-data log-likelihood is a sum of
one Bernoulli term per (parameter, group), so the M-step of each is a ratio of expected
counts accumulated over the responses (or sequences) of that group (see
:func:`._variant_kernels.e_step`), clipped to its bounds (guess, slip < ``guess_max``,
``slip_max`` in every group).

Parameter files (long format), one row per (skill, parameter, group)::

    skill, parameter, group, value[, free]

``parameter`` is prior, learn, forget, guess, slip (or ``share``, the training share of a
first-response class); ``group`` is ``*`` (one value for the skill), ``COLUMN=VALUE``,
``COLUMN=PREV>CUR`` / ``COLUMN=(first)`` (pairs) or ``first_response=0|1``; ``free`` is 1 for an
estimated parameter and 0 for a held one (optional).  In ``fixed`` / ``init`` tables ``skill``
and ``group`` may be ``*`` (every skill / every group).  Values of a ``multilearn`` or
``multipair`` column must not contain ``>``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ...io import InputError, as_table, line_of
from ...seeding import rng as make_rng
from ...tables import Col, Schema, check_complete, check_complete_groups, near_miss
from ..data import Columns, Sequences, pack
from . import _variant_kernels as VK
from .params import PARAM_NAMES
from .variant_design import (
    _BLOCKS,
    FIRST,
    Design,
    VariantSpec,
    _run_em,
    _time_major_groups,
    design_for_fit,
)

__all__ = [
    "LONG_COLUMNS",
    "LONG_SCHEMA",
    "VariantSpec",
    "Design",
    "fit_variant",
    "forward_long",
    "score_long",
    "read_param_file",
    "wide_to_long",
    "long_to_wide",
]

LONG_COLUMNS = ("skill", "parameter", "group", "value")
_EPS = 1e-9


def _block_labels(design: Design, k: int, block: str) -> list[str]:
    kind = {"prior": "prior", "learn": "transition", "forget": "transition",
            "guess": "emission", "slip": "emission"}[block]  # fmt: skip
    return design.labels[k][kind]


# -- starting points, bounds, held values -----------------------------------------------------
def _bounds(design: Design, spec: VariantSpec, guess_max: float, slip_max: float):
    lo = np.full(design.n_theta, _EPS)
    hi = np.full(design.n_theta, 1 - _EPS)
    free = np.ones(design.n_theta, dtype=bool)
    for k in range(len(design.labels)):
        hi[design.block_slice(k, "guess")] = guess_max - _EPS
        hi[design.block_slice(k, "slip")] = slip_max - _EPS
        f = design.block_slice(k, "forget")
        lo[f] = 0.0
        if not spec.forgets:
            hi[f] = 0.0
            free[f] = False
    return lo, hi, free


def _fill(theta: np.ndarray, design: Design, values: dict[str, float]) -> None:
    for k in range(len(design.labels)):
        for name, v in values.items():
            theta[..., design.block_slice(k, name)] = v


def initial_points(design, spec, n_restarts, seed, guess_max, slip_max, boundary=True):
    """(n_restarts, n_theta): a neutral start, starts near guess = 0 and near slip = 0 (with
    three restarts or more; BKT's optima often lie there), then random ones (seeded), as
    classic BKT's restarts."""
    gen = make_rng(seed)
    f0 = 0.02 if spec.forgets else 0.0
    inits = np.empty((n_restarts, design.n_theta))
    _fill(inits[0], design, {"prior": 0.3, "learn": 0.1, "forget": f0, "guess": 0.2, "slip": 0.1})
    ranges = {"prior": (0.05, 0.95), "learn": (0.01, 0.5), "forget": (0.0, 0.2 if f0 else 0.0),
              "guess": (0.01, min(0.45, guess_max)), "slip": (0.01, min(0.45, slip_max))}  # fmt: skip
    for r in range(1, n_restarts):
        for k in range(len(design.labels)):
            for name, (a, b) in ranges.items():
                sl = design.block_slice(k, name)
                inits[r, sl] = gen.uniform(a, b, size=sl.stop - sl.start)
    if boundary and n_restarts >= 3:
        base = {"prior": 0.5, "learn": 0.2, "forget": f0}
        _fill(inits[1], design, {**base, "guess": 0.02, "slip": 0.2})
        _fill(inits[2], design, {**base, "guess": 0.2, "slip": 0.02})
    return inits


#: The long parameter table: one row per skill, parameter and group (``kt fit`` writes it for a
#: variant, ``kt simulate --items-per-skill`` for its items; ``kt fit --fixed``/``--init`` read
#: it).  ``parameter`` is prior, learn, forget, guess, slip or share; ``group`` is ``*`` or
#: ``COLUMN=VALUE`` (see :mod:`edueval.kt.bkt.variants`); ``skill`` ``*`` means every skill
#: (``--fixed``/``--init`` only); ``free`` is 1 for an estimated value, 0 for a held one.
LONG_SCHEMA = Schema(
    "long parameter file",
    (Col("skill", "id", required=False, default="*"), Col("parameter", "id"),
     Col("group", "id", required=False, default="*"),
     Col("value", "number", low=0.0, high=1.0),
     Col("free", "integer", required=False, low=0, high=1)),
    key=("skill", "parameter", "group"),
    closed=True,
)  # fmt: skip


def _long_schema(what: str) -> Schema:
    """:data:`LONG_SCHEMA` named ``what`` in its messages ("init= table")."""
    return dataclasses.replace(LONG_SCHEMA, what=what)


def _check_long(table: pd.DataFrame, what: str, extra: tuple[str, ...] = ()) -> pd.DataFrame:
    """Validate a long table (skill and group default to '*'); refuse unknown columns and
    parameters and a second row for the same skill, parameter and group."""
    t = _long_schema(what).validate(table)
    t["skill"] = t["skill"].astype(str)
    t["group"] = t["group"].astype(str)
    t["parameter"] = t["parameter"].astype(str)
    bad = ~t["parameter"].isin(list(PARAM_NAMES) + list(extra))
    if bad.any():
        pos = int(np.flatnonzero(bad.to_numpy())[0])
        name = t["parameter"].iloc[pos]
        hint = near_miss(name, PARAM_NAMES + extra)
        raise InputError(
            f"unknown parameter {name!r}" + (f" (did you mean {hint!r}?)" if hint else "")
            + " (expected one of " + ", ".join(PARAM_NAMES + extra) + ")",
            file=table.attrs.get("file"), line=line_of(t, pos), column="parameter",
        )  # fmt: skip
    if "free" in t.columns:
        t["free"] = t["free"].astype(int)
    return t


def _apply_table(table, design, skills, theta, what, free=None, lo=None, hi=None) -> None:
    """Write a long table's values into ``theta`` (and hold them when ``free`` is given)."""
    skill_index = {str(s): k for k, s in enumerate(skills)}
    for row in table.itertuples(index=False):
        one = None if row.skill == "*" else skill_index.get(row.skill)  # None: every skill
        if row.skill != "*" and one is None:
            raise InputError(f"{what}: unknown skill {row.skill!r}: not in the response data")
        hit = False
        for k in range(len(skills)) if one is None else [one]:
            labels = _block_labels(design, k, row.parameter)
            sl = design.block_slice(k, row.parameter)
            pos = range(len(labels)) if row.group == "*" else (
                [i for i, g in enumerate(labels) if g == row.group])  # fmt: skip
            for i in pos:
                theta[..., sl.start + i] = row.value
                if free is not None:
                    free[sl.start + i] = False
                    lo[sl.start + i] = hi[sl.start + i] = row.value
                hit = True
        if not hit:
            raise InputError(
                f"{what}: unknown group {row.group!r} of {row.parameter} (skill {row.skill}); "
                f"groups look like * or COLUMN=VALUE as the fitted parameter file writes them"
            )


# -- fitting -----------------------------------------------------------------------------------
@dataclass
class VariantFit:
    params: pd.DataFrame  # long: skill, parameter, group, value, free
    log_likelihood: pd.Series
    n_iter: pd.Series
    converged: pd.Series
    restarts: pd.DataFrame
    n_params: int


def _shares(seqs: Sequences, design: Design, spec: VariantSpec) -> np.ndarray | None:
    """Share of each skill's sequences in each first-response class (per theta prior slot)."""
    if spec.multiprior is not True:
        return None
    counts = np.zeros(design.n_theta)
    np.add.at(counts, design.dims[seqs.seq_skill, 0] + design.pg, 1.0)
    out = np.zeros(design.n_theta)
    for k in range(len(design.labels)):
        sl = design.block_slice(k, "prior")
        out[sl] = counts[sl] / counts[sl].sum()
    return out


def fit_variant(model, data: pd.DataFrame, spec: VariantSpec) -> VariantFit:
    """Fit every skill's grouped parameters by EM with restarts (as ``BKT.fit_sequences``: all
    restarts to a loose tolerance, the best on to ``model.tol``)."""
    spec.check()
    if model.n_restarts < 1:
        raise ValueError(f"n_restarts= must be >= 1, got {model.n_restarts}")
    seqs, _ = pack(data, model.columns)
    design = design_for_fit(data, seqs, spec)
    lo, hi, free = _bounds(design, spec, model.guess_max, model.slip_max)
    R = model.n_restarts
    inits = initial_points(design, spec, R, model.seed, model.guess_max, model.slip_max,
                           boundary=model.BOUNDARY_STARTS)  # fmt: skip
    if model.init is not None:
        _apply_table(_check_long(model.init, "init= table"), design, seqs.skills, inits[0], "init")
    if model.fixed is not None:
        fixed = _check_long(model.fixed, "fixed= table")
        _apply_table(fixed, design, seqs.skills, inits, "fixed", free, lo, hi)
    n_skills = len(seqs.skills)
    layout = (*_time_major_groups(seqs, design), seqs.skill_starts)
    loose = max(model.tol, model.LOOSE_TOL) if R > 1 else model.tol
    job_skill = np.repeat(np.arange(n_skills, dtype=np.int64), R)
    job_restart = np.tile(np.arange(R, dtype=np.int64), n_skills)
    if spec.multiprior is True:  # the proper likelihood, maximised to model.tol in every restart
        from .first_response import fit_restarts

        theta, info = fit_restarts(model, data, seqs, spec, design, inits, free, lo, hi,
                                   job_skill, job_restart)  # fmt: skip
        loose = model.tol
    else:
        theta, info = _run_em(model, layout, design, inits, free, lo, hi, job_skill, job_restart,
                              loose)  # fmt: skip
    info = info.reshape(n_skills, R, 3)
    best = np.argmax(info[:, :, 0], axis=1)
    chosen = np.empty(design.n_theta)
    for k in range(n_skills):
        sl = slice(design.dims[k, 0], design.block_slice(k, "slip").stop)
        chosen[sl] = theta[best[k], sl]
    final = info[np.arange(n_skills), best].copy()
    if loose > model.tol:
        polished, pinfo = _run_em(model, layout, design, chosen[None, :].copy(), free, lo, hi,
                                  np.arange(n_skills, dtype=np.int64),
                                  np.zeros(n_skills, dtype=np.int64), model.tol)  # fmt: skip
        chosen = polished[0]
        pinfo[:, 1] += final[:, 1]
        final = pinfo
    index = pd.Index(seqs.skills.astype(str), name="skill")
    params = _long_table(design, seqs.skills, chosen, free, _shares(seqs, design, spec))
    restarts = pd.DataFrame({
        "skill": np.repeat(index.to_numpy(), R), "restart": np.tile(np.arange(R), n_skills),
        "log_likelihood": info[:, :, 0].reshape(-1), "n_iter": info[:, :, 1].reshape(-1).astype(int),
        "converged": info[:, :, 2].reshape(-1).astype(bool)})  # fmt: skip
    return VariantFit(
        params=params,
        log_likelihood=pd.Series(final[:, 0], index=index, name="log_likelihood"),
        n_iter=pd.Series(final[:, 1].astype(int), index=index, name="n_iter"),
        converged=pd.Series(final[:, 2].astype(bool), index=index, name="converged"),
        restarts=restarts,
        n_params=int(free.sum()),
    )


def _long_table(design, skills, theta, free, shares) -> pd.DataFrame:
    rows = []
    for k, skill in enumerate(skills):
        for block in _BLOCKS:
            sl = design.block_slice(k, block)
            for i, label in enumerate(_block_labels(design, k, block)):
                j = sl.start + i
                rows.append((str(skill), block, label, float(theta[j]), int(free[j])))
        if shares is not None:
            sl = design.block_slice(k, "prior")
            for i, label in enumerate(design.labels[k]["prior"]):
                rows.append((str(skill), "share", label, float(shares[sl.start + i]), 0))
    return pd.DataFrame(rows, columns=[*LONG_COLUMNS, "free"])


# -- prediction from a long table --------------------------------------------------------------
def _spec_of(params: pd.DataFrame) -> VariantSpec:
    """The groupings a long parameter table was fitted with, read off its group labels."""

    def column_of(labels: pd.Series, what: str) -> str | None:
        labels = labels[labels != "*"]
        if labels.empty:
            return None
        cols = labels.str.partition("=")[0].unique()
        if len(cols) > 1 or not labels.str.contains("=", regex=False).all():
            raise InputError(f"unknown group {labels.iloc[0]!r} of {what}: groups of one "
                             "parameter are * or COLUMN=VALUE with one COLUMN")  # fmt: skip
        return str(cols[0])

    by = {p: params.loc[params["parameter"] == p, "group"] for p in _BLOCKS}
    em = column_of(pd.concat([by["guess"], by["slip"]]), "guess/slip")
    tr = pd.concat([by["learn"], by["forget"]])
    tc = column_of(tr, "learn/forget")
    is_pair = tc is not None and tr.str.partition("=")[2].str.contains(">|^\\(first\\)$").any()
    pc = column_of(by["prior"], "prior")
    prior: bool | str = False if pc is None else (True if pc == FIRST else pc)
    forgets = bool((params.loc[params["parameter"] == "forget", "value"] > 0).any())
    return VariantSpec(forgets=forgets, multigs=em, multiprior=prior,
                       multilearn=None if is_pair else tc, multipair=tc if is_pair else None)  # fmt: skip


def _theta_from_long(params, seqs, design) -> tuple[Design, np.ndarray, np.ndarray | None]:
    """Map the table's values onto the data's groups; a data group the table lacks (an item not
    seen in fitting) gets the skill's mean over that parameter's groups.  The third value is
    each skill's :func:`mixed_prior` when the table has ``share`` rows, else None."""
    by_skill = table_index(params)
    missing = [str(s) for s in seqs.skills if str(s) not in by_skill]
    if missing:
        raise InputError(f"no parameters for skill {missing[0]!r} of the data; the parameter "
                         "file must have rows for every skill")  # fmt: skip
    has_shares = (params["parameter"] == "share").any()
    chunks, mixed, dims = [], np.zeros(len(seqs.skills)), np.zeros_like(design.dims)
    lo = 0
    for k, skill in enumerate(seqs.skills):
        table = by_skill[str(skill)]
        n_p, n_t, n_e = (int(x) for x in design.dims[k, 1:])
        dims[k] = (lo, n_p, n_t, n_e)
        for block in _BLOCKS:
            labels = _block_labels(design, k, block)
            chunks.append(_block_values(table.get(block, {}), block, labels, skill))
        mixed[k] = mixed_prior(table) if has_shares else 0.0
        lo += n_p + 2 * n_t + 2 * n_e
    theta = np.concatenate(chunks)
    out = Design(design.pg, design.tg, design.eg, design.labels, dims)
    return out, theta, mixed if has_shares else None


def table_index(params: pd.DataFrame) -> dict[str, dict[str, dict[str, float]]]:
    """A long table as ``{skill: {parameter: {group: value}}}`` (rows in table order):
    looking values up in dicts, not by filtering the frame per skill and parameter."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for s, p, g, v in zip(params["skill"].astype(str).to_numpy(object),
                          params["parameter"].astype(str).to_numpy(object),
                          params["group"].astype(str).to_numpy(object),
                          params["value"].to_numpy(dtype=float), strict=True):  # fmt: skip
        out.setdefault(s, {}).setdefault(p, {})[g] = float(v)
    return out


def group_mean(rows: dict[str, float]) -> float:
    """The value a group missing from a parameter's rows gets: the mean over its groups."""
    return float(np.mean(np.fromiter(rows.values(), dtype=float, count=len(rows))))


def group_value(rows: dict[str, float], group: str) -> float:
    """A parameter's value for ``group``: the ``*`` row, the group's row, else the mean."""
    if "*" in rows:
        return rows["*"]
    return rows[group] if group in rows else group_mean(rows)


def mixed_prior(table: dict[str, dict[str, float]]) -> float:
    """A skill's prior mixed over its first-response classes by their training share (the
    ``share`` rows, in table order; a class without a prior row gets the mean prior): what a
    sequence's first response is predicted with.  Sums over the classes of the table, not of
    the data being predicted, so no prediction depends on other students' answers."""
    priors = table.get("prior", {})
    total = 0.0
    for group, share in table.get("share", {}).items():
        total += share * group_value(priors, group)
    return total


def _block_values(rows: dict[str, float], block, labels, skill) -> np.ndarray:
    if not rows:
        if block == "forget":
            return np.zeros(len(labels))
        raise InputError(f"no {block} parameter for skill {skill!r} in the parameter file")
    if "*" in rows:
        return np.full(len(labels), rows["*"])
    return np.array([group_value(rows, g) for g in labels], dtype=float)


def _forward_theta(seqs, design, theta, mixed):
    pc = np.empty(seqs.n_responses)
    pk = np.empty(seqs.n_responses)
    VK.forward(seqs.obs, seqs.starts, seqs.seq_skill, design.pg, design.tg, design.eg,
               design.dims, theta, pc, pk)  # fmt: skip
    if mixed is not None:  # a sequence's first response: the skill's prior mixed by share
        first = seqs.starts[:-1]
        k = seqs.seq_skill
        lo, n_p, n_t, n_e = (design.dims[k, j] for j in range(4))
        prior = mixed[k]
        guess = theta[lo + n_p + 2 * n_t + design.eg[first]]
        slip = theta[lo + n_p + 2 * n_t + n_e + design.eg[first]]
        pc[first] = prior * (1 - slip) + (1 - prior) * guess
    return pc, pk


def prepare(data: pd.DataFrame, params: pd.DataFrame, columns: Columns | None):
    """Pack ``data`` and line up a long parameter table with it."""
    params = _check_long(params, "parameter file", extra=("share",))
    seqs, _ = pack(data, columns)
    spec = _spec_of(params)
    design = design_for_fit(data, seqs, spec)
    design, theta, mixed = _theta_from_long(params, seqs, design)
    return seqs, design, theta, mixed


def forward_sequences_long(data, params, columns=None) -> tuple[Sequences, np.ndarray, np.ndarray]:
    """``(seqs, p_correct, p_known)`` in packed order."""
    seqs, design, theta, mixed = prepare(data, params, columns)
    pc, pk = _forward_theta(seqs, design, theta, mixed)
    return seqs, pc, pk


def forward_long(data: pd.DataFrame, params: pd.DataFrame, columns=None) -> pd.DataFrame:
    """``data`` with ``p_correct`` and ``p_known`` (row order kept), for a long table."""
    seqs, pc, pk = forward_sequences_long(data, params, columns)
    out = data.copy()
    out["p_correct"] = seqs.unpack(pc)
    out["p_known"] = seqs.unpack(pk)
    return out


def score_long(data: pd.DataFrame, params: pd.DataFrame, columns=None) -> pd.Series:
    """Log-likelihood of each skill's responses under a long table: that of the predictions
    of :func:`forward_long` (with first-response classes, the first response under the mixed
    prior: :mod:`edueval.kt.bkt.first_response`)."""
    seqs, design, theta, mixed = prepare(data, params, columns)
    ll = VK.loglik_skills(seqs.obs, seqs.starts, seqs.skill_starts, design.pg, design.tg,
                          design.eg, design.dims, theta)  # fmt: skip
    if mixed is not None:  # the first response under the mixed prior, as predicted
        from .first_response import delta_by_skill

        ll = ll + delta_by_skill(seqs, design, theta, mixed)
    return pd.Series(ll, index=pd.Index(seqs.skills.astype(str), name="skill"))


# -- files -------------------------------------------------------------------------------------
def wide_to_long(params: pd.DataFrame) -> pd.DataFrame:
    """Classic one-row-per-skill parameters as a long table (group ``*``)."""
    p = params.reset_index() if "skill" not in params.columns else params
    long = p.melt(id_vars="skill", value_vars=[c for c in _BLOCKS if c in p.columns],
                  var_name="parameter", value_name="value")  # fmt: skip
    long.insert(2, "group", "*")
    return long[list(LONG_COLUMNS)]


def long_to_wide(params: pd.DataFrame) -> pd.DataFrame | None:
    """The classic wide table when every group is ``*``; None for a variant's table."""
    if (params["group"] != "*").any() or (params["parameter"] == "share").any():
        return None
    wide = params.pivot(index="skill", columns="parameter", values="value")
    for name in PARAM_NAMES:
        if name not in wide.columns:
            wide[name] = np.nan
        if name == "forget":
            wide[name] = wide[name].fillna(0.0)
        elif wide[name].isna().any():
            skill = wide.index[int(np.flatnonzero(wide[name].isna().to_numpy())[0])]
            raise InputError(f"parameter table: no {name!r} for skill {skill!r}")
    wide.index = wide.index.astype(str)
    wide.index.name = "skill"
    return wide[list(PARAM_NAMES)]


def is_long(table: pd.DataFrame) -> bool:
    return {"parameter", "value"} <= set(table.columns)


def read_param_file(data: str | Path | pd.DataFrame, *, collapse: bool = True) -> pd.DataFrame:
    """Read a parameter file in either format (or check a DataFrame the same way); returns a wide
    table when it is classic (one value per skill and parameter; with ``collapse``, also for a
    long file whose groups are all ``*``) and a validated long table otherwise."""
    from .params import skill_column, wide_params

    df = as_table(skill_column(data), name="parameters",
                  text_columns=["skill", "group", "parameter"])  # fmt: skip
    if not is_long(df):
        return wide_params(df)
    out = _check_long(df, "long parameter file", extra=("share",))
    check_complete(out[out["parameter"] != "share"], "skill", "parameter",
                   [p for p in PARAM_NAMES if p != "forget"], what="a parameter file")  # fmt: skip
    check_complete_groups(out, [("guess", "slip"), ("learn", "forget")], what="a parameter file")
    _spec_of(out)  # refuses malformed group labels now rather than at prediction
    if not collapse:
        return out
    wide = long_to_wide(out)
    return wide if wide is not None else out


def free_counts(params: pd.DataFrame) -> pd.Series:
    """Free parameters per skill of a parameter table (for AIC/BIC): the ``free`` column of a
    long table when present, otherwise every row but ``share`` rows and all-zero ``forget``."""
    long = wide_to_long(params) if not is_long(params) else params
    long = long[long["parameter"] != "share"]
    if "free" in long.columns:
        return long.groupby("skill")["free"].sum().astype(int)
    zero_forget = long.groupby("skill").apply(
        lambda g: bool((g.loc[g["parameter"] == "forget", "value"] == 0).all())
    )
    n = long.groupby("skill").size()
    n_forget = long[long["parameter"] == "forget"].groupby("skill").size().reindex(n.index)
    return (n - n_forget.fillna(0) * zero_forget.reindex(n.index)).astype(int)


def read_long_table(data: str | Path | pd.DataFrame) -> pd.DataFrame:
    """Read a ``--fixed`` / ``--init`` table (skill and group optional, default ``*``), from a
    file or a DataFrame."""
    df = as_table(data, name="parameter table", text_columns=["skill", "group", "parameter"])
    return _check_long(df, "parameter table")
