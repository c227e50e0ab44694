"""The design of a BKT variant (lower layer of :mod:`edueval.kt.bkt.variants`, pure computation):
which parameters are split by which grouping (:class:`VariantSpec`), the group of every response
and sequence as the data has them (:class:`Design`, :func:`design_for_fit`), and one run of exact
EM over restarts in the kernels' time-major layout.  :mod:`edueval.kt.bkt.variants` (fitting,
prediction, parameter files) and :mod:`edueval.kt.bkt.first_response` (the first-response classes'
likelihood) both build on it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...io import InputError
from ..data import Sequences, time_major
from . import _variant_kernels as VK

__all__ = ["Design", "VariantSpec", "design_for_fit"]

FIRST = "first_response"
PAIR_FIRST = "(first)"
_BLOCKS = ("prior", "learn", "forget", "guess", "slip")  # layout of a skill's theta


@dataclass(frozen=True)
class VariantSpec:
    """Which parameters are split by which grouping."""

    forgets: bool = False
    multigs: str | None = None
    multilearn: str | None = None
    multiprior: bool | str = False
    multipair: str | None = None

    def check(self) -> None:
        if self.multilearn and self.multipair:
            raise InputError("multilearn= and multipair= both set the learn groups; use one")
        if self.multiprior == FIRST:
            raise InputError(f"multiprior= may not name a column {FIRST!r} (reserved)")

    @property
    def columns(self) -> list[str]:
        cols = [self.multigs, self.multilearn, self.multipair]
        if isinstance(self.multiprior, str):
            cols.append(self.multiprior)
        return [c for c in cols if c]


# -- groups ------------------------------------------------------------------------------------
@dataclass
class Design:
    """Group indices of packed sequences and the labels of each skill's groups.

    ``pg`` (per sequence), ``tg`` and ``eg`` (per response) are local indices; ``labels[k]``
    maps each block name to skill ``k``'s group labels; ``dims[k] = (theta offset, n_p, n_t,
    n_e)``.
    """

    pg: np.ndarray
    tg: np.ndarray
    eg: np.ndarray
    labels: list[dict[str, list[str]]]
    dims: np.ndarray

    @property
    def n_theta(self) -> int:
        lo, n_p, n_t, n_e = self.dims[-1]
        return int(lo + n_p + 2 * n_t + 2 * n_e)

    def block_slice(self, k: int, block: str) -> slice:
        lo, n_p, n_t, n_e = (int(x) for x in self.dims[k])
        sizes = {"prior": n_p, "learn": n_t, "forget": n_t, "guess": n_e, "slip": n_e}
        start = lo
        for name in _BLOCKS:
            if name == block:
                return slice(start, start + sizes[name])
            start += sizes[name]
        raise KeyError(block)


def _local_groups(item_skill: np.ndarray, keys: np.ndarray, n_skills: int):
    """Number each skill's distinct ``keys`` 0, 1, ... (by key); returns (local index of each
    item, per-skill arrays of the keys)."""
    if len(keys) == 0:
        return np.zeros(0, np.int64), [np.zeros(0, np.int64) for _ in range(n_skills)]
    span = int(keys.max()) + 1
    combined = item_skill.astype(np.int64) * span + keys
    uniq, inv = np.unique(combined, return_inverse=True)
    first = np.searchsorted(uniq // span, np.arange(n_skills + 1))
    local = inv - first[item_skill]
    per_skill = [uniq[first[k] : first[k + 1]] % span for k in range(n_skills)]
    return local.astype(np.int64), per_skill


def _column_codes(df: pd.DataFrame, seqs: Sequences, column: str, what: str):
    """COLUMN as codes in packed order and the text of each code (factorised on the original
    values: hashing the cells once is much cheaper than turning them into text first)."""
    if column not in df.columns:
        raise InputError(
            f"unknown column {column!r} for {what}: the response data has "
            + ", ".join(map(str, df.columns)),
            file=df.attrs.get("file"),
        )
    col = df[column]
    if col.isna().any():
        raise InputError(
            f"column {column!r} ({what}) has empty cells; every response needs a value",
            file=df.attrs.get("file"),
            column=column,
        )
    codes, uniques = pd.factorize(col.to_numpy(dtype=object) if col.dtype == object else col)
    names = np.asarray(uniques)
    if np.issubdtype(names.dtype, np.floating) and np.all(names == np.floor(names)):
        names = names.astype(np.int64)
    return codes.astype(np.int64)[seqs.row], names.astype(str).astype(object)


def _seq_first(seqs: Sequences) -> np.ndarray:
    first = np.zeros(seqs.n_responses, dtype=bool)
    first[seqs.starts[:-1]] = True
    return first


def _labelled(column: str, names: np.ndarray) -> np.ndarray:
    return np.array([f"{column}={v}" for v in names], dtype=object)


def _emission_keys(df, seqs, spec) -> tuple[np.ndarray, np.ndarray]:
    if not spec.multigs:
        return np.zeros(seqs.n_responses, np.int64), np.array(["*"], dtype=object)
    codes, names = _column_codes(df, seqs, spec.multigs, "multigs=")
    return codes, _labelled(spec.multigs, names)


def _no_gt(names: np.ndarray, column: str, option: str) -> None:
    bad = [v for v in names if ">" in v]
    if bad:
        raise InputError(
            f"value {bad[0]!r} of column {column!r} ({option}) contains '>', which parameter "
            "files use to write pairs"
        )


def _transition_keys(df, seqs, spec) -> tuple[np.ndarray, np.ndarray]:
    """Group of the move after each response: its item (multilearn) or its (previous, current)
    item pair (multipair)."""
    column = spec.multilearn or spec.multipair
    if not column:
        return np.zeros(seqs.n_responses, np.int64), np.array(["*"], dtype=object)
    option = "multilearn=" if spec.multilearn else "multipair="
    codes, names = _column_codes(df, seqs, column, option)
    _no_gt(names, column, option)
    if spec.multilearn:
        return codes, _labelled(column, names)
    n = len(names)
    first = _seq_first(seqs)
    prev = np.empty_like(codes)
    prev[1:] = codes[:-1]
    keys = np.where(first, n * n, prev * n + codes)  # n * n: a sequence's first move
    used, keys = np.unique(keys, return_inverse=True)
    labels = np.array(
        [f"{column}={PAIR_FIRST}" if k == n * n else f"{column}={names[k // n]}>{names[k % n]}"
         for k in used],
        dtype=object,
    )  # fmt: skip
    return keys.astype(np.int64), labels


def _prior_keys(df, seqs, spec) -> tuple[np.ndarray, np.ndarray]:
    """Class of each sequence: first-response correctness or COLUMN's first value."""
    first_pos = seqs.starts[:-1]
    if spec.multiprior is True:
        codes = seqs.obs[first_pos].astype(np.int64)
        return codes, np.array([f"{FIRST}=0", f"{FIRST}=1"], dtype=object)
    if not spec.multiprior:
        return np.zeros(seqs.n_sequences, np.int64), np.array(["*"], dtype=object)
    column = str(spec.multiprior)
    codes, names = _column_codes(df, seqs, column, "multiprior=")
    per_seq = np.repeat(codes[first_pos], np.diff(seqs.starts))
    if (per_seq != codes).any():
        s = int(np.searchsorted(seqs.starts, np.flatnonzero(per_seq != codes)[0], "right") - 1)
        raise InputError(
            f"column {column!r} (multiprior=) must be constant within each student's "
            f"sequence on a skill; it changes for student {str(seqs.students[s])!r} on skill "
            f"{str(seqs.skills[seqs.seq_skill[s]])!r}",
            file=df.attrs.get("file"),
            column=column,
        )
    return codes[first_pos], _labelled(column, names)


def design_for_fit(df: pd.DataFrame, seqs: Sequences, spec: VariantSpec) -> Design:
    """Groups as they occur in the data (each skill gets the groups seen in its responses)."""
    n_skills = len(seqs.skills)
    resp_skill = np.repeat(seqs.seq_skill, np.diff(seqs.starts))
    pk, pnames = _prior_keys(df, seqs, spec)
    tk, tnames = _transition_keys(df, seqs, spec)
    ek, enames = _emission_keys(df, seqs, spec)
    pg, p_per = _local_groups(seqs.seq_skill, pk, n_skills)
    tg, t_per = _local_groups(resp_skill, tk, n_skills)
    eg, e_per = _local_groups(resp_skill, ek, n_skills)
    labels = []
    dims = np.zeros((n_skills, 4), dtype=np.int64)
    lo = 0
    for k in range(n_skills):
        lab = {"prior": list(pnames[p_per[k]]), "transition": list(tnames[t_per[k]]),
               "emission": list(enames[e_per[k]])}  # fmt: skip
        labels.append(lab)
        n_p, n_t, n_e = len(lab["prior"]), len(lab["transition"]), len(lab["emission"])
        dims[k] = (lo, n_p, n_t, n_e)
        lo += n_p + 2 * n_t + 2 * n_e
    return Design(pg, tg, eg, labels, dims)


def _time_major_groups(seqs: Sequences, design: Design):
    """The time-major layout of ``data.time_major`` with the group indices moved along."""
    tm = time_major(seqs)
    tg = np.empty_like(design.tg)
    eg = np.empty_like(design.eg)
    tg[tm.position] = design.tg
    eg[tm.position] = design.eg
    # a sequence's place in its skill's time-major order = where its first response went
    k = seqs.seq_skill
    rank = tm.position[seqs.starts[:-1]] - tm.obs_lo[k]
    pg = np.empty_like(design.pg)
    pg[seqs.skill_starts[k] + rank] = design.pg
    return tm, pg, tg, eg


def _run_em(model, layout, design, inits, free, lo, hi, job_skill, job_restart, tol):
    tm, pg, tg, eg, seq_lo = layout
    return VK.em_jobs(
        tm.obs, tm.obs_lo, tm.bs, tm.bs_lo, tm.T, seq_lo, pg, tg, eg, design.dims, job_skill,
        job_restart, inits, free, lo, hi, int(model.max_iter), float(tol), bool(model.accelerate),
    )  # fmt: skip
