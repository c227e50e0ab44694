"""Evaluation of knowledge-tracing predictions in memory: what ``kt evaluate`` computes, as a
results object (no run folder, nothing written or printed).

>>> from edueval.kt import BKT, evaluate                           # doctest: +SKIP
>>> model = BKT(seed=1).fit(train)                                 # doctest: +SKIP
>>> ev = evaluate(model.predict(test), params=model)               # doctest: +SKIP
>>> print(ev.summary()); ev.performance["auc"]; ev.to_frame()      # doctest: +SKIP

``predictions`` is a response table (a DataFrame or a file) with ``p_correct`` and, for the
knowledge metrics and the moment of learning, the true state ``known`` (simulated data) and
``p_known``.  The metrics are those of :mod:`edueval.kt.metrics`, pooled over every skill (row
``scope == "all"``, with ``k`` counting every skill's parameters) and per skill; the moment of
learning is the first opportunity at which P(known) reaches ``threshold`` (and, as a baseline,
the ``n_in_a_row``-th consecutive correct answer), compared with the first known opportunity.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..io import InputError, numeric_column, require_columns
from ..results import RunResults
from ..tables import takes_tables
from . import _common_kernels as K
from .data import RESPONSES, Columns, RowFilter, Sequences, read_responses
from .mastery import first_crossing, mol_summary
from .metrics import evaluate as metric_values

if TYPE_CHECKING:
    from .bkt.model import BKT

__all__ = ["KTEvaluation", "evaluate", "evaluation_tables", "free_parameters"]


@dataclass
class KTEvaluation(RunResults):
    """Results of :func:`evaluate` (``kt evaluate``'s ``metrics.csv``,
    ``moment_of_learning.csv`` and ``results.json``, in memory).

    ``metrics``: one row per scope (``all``, then each skill) and target (``performance``: the
    answers; ``knowledge``: the true state) -- ``scope, target, n, k`` and the metrics.
    ``sequences``: one row per student x skill sequence -- ``student, skill, n_opportunities,
    t_true, t_est, t_in_a_row`` (None without ``known`` and ``p_known``).  The pooled numbers
    are attributes: ``performance``, ``knowledge``, ``moment_of_learning`` and
    ``moment_of_learning_in_a_row`` (dicts, as ``results.json`` holds them), ``auc``, ``rmse``
    and ``mol_mad``.
    """

    metrics: pd.DataFrame
    sequences: pd.DataFrame | None = None
    threshold: float = 0.95
    n_in_a_row: int = 3
    rows_left_out: dict[str, int] = field(default_factory=dict)
    #: the parameters of the evaluation, as ``kt evaluate`` records them in config.json
    run_params: dict[str, Any] = field(default_factory=dict, repr=False)

    _writer = "edueval.kt.commands.pipeline:save_evaluation"

    def _pooled(self, target: str) -> dict[str, Any]:
        m = self.metrics
        row = m[(m.scope == "all") & (m.target == target)].iloc[0]
        return row.drop(["scope", "target"]).to_dict()

    @property
    def performance(self) -> dict[str, Any]:
        """Pooled metrics of ``p_correct`` against the answers."""
        return self._pooled("performance")

    @property
    def knowledge(self) -> dict[str, Any] | None:
        """Pooled metrics of ``p_known`` against the true state (None without them)."""
        return None if self.sequences is None else self._pooled("knowledge")

    def _mol(self, column: str) -> dict[str, float]:
        s = self.sequences
        assert s is not None
        return mol_summary(
            s["t_true"].to_numpy(), s[column].to_numpy(), s["n_opportunities"].to_numpy()
        )

    @property
    def moment_of_learning(self) -> dict[str, float] | None:
        """MoL error of P(known) >= ``threshold``: ``mol_mad`` and the censoring counts."""
        if self.sequences is None:
            return None
        return {"threshold": self.threshold, **self._mol("t_est")}

    @property
    def moment_of_learning_in_a_row(self) -> dict[str, float] | None:
        """MoL error of the ``n_in_a_row``-correct-in-a-row rule (the baseline)."""
        if self.sequences is None:
            return None
        return {"n_in_a_row": self.n_in_a_row, **self._mol("t_in_a_row")}

    @property
    def auc(self) -> float:
        return float(self.performance["auc"])

    @property
    def rmse(self) -> float:
        return float(self.performance["rmse"])

    @property
    def mol_mad(self) -> float | None:
        mol = self.moment_of_learning
        return None if mol is None else float(mol["mol_mad"])

    def results(self) -> dict[str, Any]:
        """The numbers ``kt evaluate`` writes to ``results.json`` (same keys, same order)."""
        out: dict[str, Any] = {
            "rows_left_out": dict(self.rows_left_out),
            "performance": self.performance,
        }
        if self.sequences is not None:
            out["knowledge"] = self.knowledge
            out["moment_of_learning"] = self.moment_of_learning
            out["moment_of_learning_in_a_row"] = self.moment_of_learning_in_a_row
        return out

    def to_frame(self) -> pd.DataFrame:
        """Tidy rows ``scope, target, measure, value``: every metric of every scope and target,
        then (with the true state) the pooled moment-of-learning numbers under the targets
        ``moment_of_learning`` and ``moment_of_learning_in_a_row``."""
        m = self.metrics
        names = [c for c in m.columns if c not in ("scope", "target")]
        parts = [
            pd.DataFrame(
                {
                    "scope": np.repeat(m["scope"].to_numpy(), len(names)),
                    "target": np.repeat(m["target"].to_numpy(), len(names)),
                    "measure": np.tile(names, len(m)),
                    "value": m[names].to_numpy(dtype=float).ravel(),
                }
            )
        ]
        for target in ("moment_of_learning", "moment_of_learning_in_a_row"):
            mol = getattr(self, target)
            if mol is not None:
                parts.append(
                    pd.DataFrame(
                        {
                            "scope": "all",
                            "target": target,
                            "measure": list(mol),
                            "value": list(mol.values()),
                        }
                    )
                )
        return pd.concat(parts, ignore_index=True).astype({"value": float})

    def summary(self) -> str:
        """A printable table: the pooled metrics per target, then the moment of learning."""
        m = self.metrics[self.metrics["scope"] == "all"].set_index("target")
        shown = ["n", "k", "auc", "rmse", "accuracy", "f1", "r2", "loglik", "aic", "bic", "cbd"]
        n_skills = self.metrics.loc[self.metrics["scope"] != "all", "scope"].nunique()
        lines = [
            f"Knowledge-tracing evaluation: {int(m['n'].iloc[0])} responses, {n_skills} skills",
            m[shown].to_string(float_format=lambda v: f"{v:.4f}"),
        ]
        if self.sequences is None:
            lines.append(
                "no knowledge metrics or moment of learning (they need 'known' and "
                "'p_known' columns)"
            )
            return "\n".join(lines)
        mol, row = self.moment_of_learning, self.moment_of_learning_in_a_row
        assert mol is not None and row is not None
        table = (
            pd.DataFrame(
                [
                    {"rule": f"P(known) >= {self.threshold:g}", **mol},
                    {"rule": f"{self.n_in_a_row} correct in a row", **row},
                ]
            )
            .drop(columns=["threshold", "n_in_a_row"])
            .set_index("rule")
        )
        lines += [
            "",
            "Moment of learning (opportunities; censored at T+1)",
            table.to_string(float_format=lambda v: f"{v:.4f}"),
        ]
        return "\n".join(lines)


def free_parameters(params: str | Path | pd.DataFrame | BKT | None) -> dict[str, int] | None:
    """Free parameters per skill (for AIC/BIC) of a parameter file or table (wide or long, as
    ``kt fit`` writes them) or of a fitted :class:`~edueval.kt.BKT`; None for None."""
    if params is None:
        return None
    from .bkt.variants import free_counts, read_param_file

    if isinstance(params, str | Path | pd.DataFrame):
        table = read_param_file(params)
    else:  # a fitted model
        params._check_fitted()
        table = params.params_
    return {str(s): int(v) for s, v in free_counts(table).items()}


def evaluation_tables(
    df: pd.DataFrame,
    seqs: Sequences,
    k_of: dict[str, int] | None = None,
    *,
    n_params: int = 4,
    threshold: float = 0.95,
    n_in_a_row: int = 3,
    source: str | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The metrics table (pooled rows first, then per skill) and, with the true state, the
    moment of learning of each sequence (``df`` and ``seqs`` as :func:`read_responses` returns
    them; ``k_of`` the free parameters per skill, else ``n_params`` for every skill)."""
    require_columns(df, ["p_correct"], what="predicted probability of a correct answer")
    pc = numeric_column(df, "p_correct", low=0.0, high=1.0)[seqs.row]
    has_knowledge = seqs.known is not None and "p_known" in df.columns
    pk = numeric_column(df, "p_known", low=0.0, high=1.0)[seqs.row] if has_knowledge else None
    k_of = k_of or {str(s): n_params for s in seqs.skills}
    unknown = [str(s) for s in seqs.skills if str(s) not in k_of]
    if unknown:
        raise InputError(f"no parameters for skill {unknown[0]!r}", file=source)
    targets = [("performance", seqs.obs, pc)] + (
        [("knowledge", seqs.known_states, pk)] if pk is not None else []
    )
    rows = []
    scopes = [("all", slice(None))] + [
        (str(s), seqs.skill_slice(k)) for k, s in enumerate(seqs.skills)
    ]
    for scope, sl in scopes:
        # the pooled row scores every skill's model at once: k counts all their parameters
        k = sum(k_of[str(s)] for s in seqs.skills) if scope == "all" else k_of[scope]
        for target, y, p in targets:
            rows.append(
                {
                    "scope": scope,
                    "target": target,
                    "n": int(y[sl].shape[0]),
                    "k": k,
                    **metric_values(y[sl], p[sl], k=k),
                }
            )
    if pk is None:
        return pd.DataFrame(rows), None
    runs_ = K.run_lengths(seqs.obs, seqs.starts)
    mol = pd.DataFrame(
        {
            "student": seqs.students,
            "skill": seqs.skills[seqs.seq_skill],
            "n_opportunities": np.diff(seqs.starts),
            "t_true": first_crossing(seqs.known_states == 1, seqs.starts, seqs.opportunity),
            "t_est": first_crossing(pk >= threshold, seqs.starts, seqs.opportunity),
            "t_in_a_row": first_crossing(runs_ >= n_in_a_row, seqs.starts, seqs.opportunity),
        }
    )
    return pd.DataFrame(rows), mol


@takes_tables(predictions=RESPONSES)
def evaluate(
    predictions: str | Path | pd.DataFrame,
    *,
    params: str | Path | pd.DataFrame | BKT | None = None,
    n_params: int = 4,
    threshold: float = 0.95,
    n_in_a_row: int = 3,
    columns: Columns | None = None,
    rows: RowFilter | None = None,
    encoding: str = "utf-8",
) -> KTEvaluation:
    """Evaluate knowledge-tracing predictions in memory, as ``kt evaluate`` does.

    ``predictions``: a response table (DataFrame or file) with ``p_correct`` -- e.g.
    ``BKT.predict``'s output -- validated as ``kt evaluate`` validates its file
    (:class:`~edueval.io.InputError` naming the column).  ``params`` (a parameter file or table,
    or the fitted model) gives each skill's number of free parameters for AIC/BIC; without it
    every skill has ``n_params``.  ``threshold``: P(known) at which a student counts as having
    learned; ``n_in_a_row``: the correct-in-a-row baseline.  ``columns`` and ``rows`` as
    :func:`~edueval.kt.data.read_responses`.  Nothing is written or printed.
    """
    k_of = free_parameters(params)
    df, seqs, cols = read_responses(predictions, columns, encoding=encoding, rows=rows)
    source = _label(params) if isinstance(params, str | Path | pd.DataFrame) else None
    metrics, mol = evaluation_tables(
        df, seqs, k_of, n_params=n_params, threshold=threshold, n_in_a_row=n_in_a_row, source=source
    )
    rows = rows or RowFilter()
    run_params = {"n_params": n_params, "params_file": source, "threshold": threshold,
                  "n_in_a_row": n_in_a_row, "columns": asdict(cols), "encoding": encoding,
                  "only": [f"{c}={v}" for c, v in rows.only],
                  "skip_no_skill": rows.skip_no_skill}  # fmt: skip
    return KTEvaluation(metrics, mol, threshold, n_in_a_row, dict(df.attrs.get("dropped", {})),
                        run_params)  # fmt: skip


def _label(params: str | Path | pd.DataFrame) -> str:
    return "parameters DataFrame" if isinstance(params, pd.DataFrame) else str(params)
