"""Across-item analyses of per-item abilities (Tack & Piech 2022, Sec. 4.2, Tables 2 and 3).

Per attribute, from the per-(item, agent) posterior means of alpha:

* a one-way ANOVA across agents (``scipy.stats.f_oneway``), with a Shapiro-Wilk test of the
  residuals (the paper's footnote 4);
* Tukey's HSD for every pair of agents (``statsmodels.stats.multicomp.pairwise_tukeyhsd``) with 95%
  family-wise confidence intervals and adjusted p-values, written as ``a - b``;
* Table 3: per agent, the percentage of items whose posterior mean alpha is > 0 and the percentage
  whose 95% HDI excludes 0 (either side);
* optionally, the Pearson correlation (r, t, df, p, 95% CI) of alpha with an external per-reply
  score (the paper correlates with predicted conversational uptake, Table 2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ..io import InputError, as_table
from ..results import RunResults
from ..tables import Col, Schema, Table, takes_tables
from .bradley_terry import tidy_rows

__all__ = ["SummaryResults", "read_abilities", "read_scores", "summarize"]

ABILITY_COLUMNS = ("item", "attribute", "agent", "alpha_mean", "alpha_hdi_low", "alpha_hdi_high")

#: ``abilities.csv`` of ``pairwise fit``: open (the fit writes ranks, probabilities and
#: diagnostics beside these, kept and ignored); one row per item, attribute and agent -- a
#: repeated row would be counted twice in the ANOVA, so it is refused.
ABILITIES_SCHEMA = Schema(
    "abilities table of 'pairwise fit'",
    (
        *(Col(c, "id") for c in ABILITY_COLUMNS[:3]),
        *(Col(c, "number") for c in ABILITY_COLUMNS[3:]),
    ),
    key=("item", "attribute", "agent"),
)

#: An external per-reply score file: ``item, agent``, the score column (``--score-column``) and
#: optionally ``attribute``; one score per item and agent (and attribute, when given).  Open.
SCORES_SCHEMA = Schema(
    "per-reply score file",
    (Col("item", "id"), Col("agent", "id"), Col("attribute", "id", required=False),
     Col("score", "number")),
    key=("item", "agent"),
)  # fmt: skip


#: The gate of an abilities table (``pairwise fit``'s ``abilities.csv`` or its results' frame).
ABILITIES = Table.of(ABILITIES_SCHEMA, "abilities")


#: the interval columns of ``pairwise fit --method ml``'s abilities table (a Wald interval)
ML_INTERVAL = {"alpha_ci_low": "alpha_hdi_low", "alpha_ci_high": "alpha_hdi_high"}


def _ml_interval_as_hdi(df: pd.DataFrame) -> pd.DataFrame:
    """An abilities table of the ML fit (``alpha_ci_low/high``, no HDI columns) with its
    interval in the HDI's place: the summary's interval columns are the posterior HDI under
    NUTS and the Wald interval under ML, as each fit reports it.  Rows the ML fit left empty
    (no finite estimate exists: a group whose judgements separate perfectly, ``ml_exists`` false
    in its groups table) are left out, as the fit itself leaves them out of its agent table."""
    if set(ML_INTERVAL) <= set(df.columns) and not set(ML_INTERVAL.values()) & set(df.columns):
        mean = df["alpha_mean"]
        empty = mean.isna() | (mean.astype("string").str.strip() == "").fillna(True)
        out = df.loc[~empty.to_numpy()].rename(columns=ML_INTERVAL)
        out.attrs = {**df.attrs, "ml_rows_without_estimate": int(empty.sum())}
        return out
    return df


@takes_tables(path=Table.of(ABILITIES_SCHEMA, "abilities", self_checked=True))
def read_abilities(path: str | Path | pd.DataFrame) -> pd.DataFrame:
    """Read ``abilities.csv`` of a ``pairwise fit`` run (or the run directory itself), or check
    a DataFrame of it the same way."""
    if not isinstance(path, pd.DataFrame) and Path(path).is_dir():
        path = Path(path)
        path = path / "abilities.csv"
        if not path.exists():
            raise InputError(
                "no abilities.csv in this folder; expected the run directory of 'pairwise fit'",
                file=path.parent,
            )
    df = as_table(path, name="abilities", text_columns=("item", "attribute", "agent"))
    df = _ml_interval_as_hdi(df)
    checked = ABILITIES_SCHEMA.validate(df)
    for c in ABILITY_COLUMNS[3:]:
        df[c] = checked[c].to_numpy()
    return df


@takes_tables(path=Table.of(SCORES_SCHEMA, "scores", self_checked=True))
def read_scores(path: str | Path | pd.DataFrame, column: str = "score") -> pd.DataFrame:
    """Read an external per-reply score file: ``item, agent, <column>`` (and optionally
    ``attribute``, to give a different score per attribute), or check a DataFrame of it."""
    df = as_table(path, name="scores", text_columns=("item", "agent", "attribute"))
    schema = SCORES_SCHEMA.renamed(score=column)
    if "attribute" in df.columns:
        schema = replace(schema, key=(*schema.key, "attribute"))
    df[column] = schema.validate(df)["score"].to_numpy()
    return df


@dataclass
class SummaryResults(RunResults):
    """ANOVA, Tukey HSD, Table 3 and (optionally) correlations, per attribute; ``params``: the
    options, as ``pairwise summarize`` records them."""

    anova: pd.DataFrame
    tukey: pd.DataFrame
    table3: pd.DataFrame
    correlation: pd.DataFrame | None = None
    params: dict[str, Any] = field(default_factory=dict)

    _writer = "edueval.pairwise.pipeline:save_summary"

    def headline(self) -> dict[str, Any]:
        """``pairwise summarize``'s results.json: the tables, as records."""
        out: dict[str, Any] = {"anova": self.anova, "tukey": self.tukey, "table3": self.table3}
        if self.correlation is not None:
            out["correlation"] = self.correlation
        return out

    def to_frame(self) -> pd.DataFrame:
        """Tidy rows ``table, attribute, agent, measure, value, ci_low, ci_high``: ``anova``
        (``F``, ``df_between``, ``df_within``, ``p``, ``shapiro_W``, ``shapiro_p``), ``tukey``
        (``agent`` is ``a - b``; ``diff`` with its 95% family-wise CI, ``p_adj``), ``table3`` (per
        agent: ``n_items``, ``mean_alpha`` and the four percentages) and, when computed,
        ``correlation`` (``r`` with its 95% CI, ``n``, ``t``, ``df``, ``p``)."""
        ids = ["table", "attribute", "agent"]
        anova = ("F", "df_between", "df_within", "p", "shapiro_W", "shapiro_p")
        t3 = [c for c in self.table3.columns if c not in ("attribute", "agent")]
        tk = self.tukey
        parts = [
            tidy_rows(
                self.anova.assign(table="anova", agent=None),
                ids,
                {c: (c, None, None) for c in anova},
            ),
            tidy_rows(
                tk.assign(table="tukey", agent=tk["agent_a"] + " - " + tk["agent_b"]),
                ids,
                {"diff": ("diff", "ci_low", "ci_high"), "p_adj": ("p_adj", None, None)},
            ),
            tidy_rows(self.table3.assign(table="table3"), ids, {c: (c, None, None) for c in t3}),
        ]
        if self.correlation is not None:
            parts.append(
                tidy_rows(
                    self.correlation.assign(table="correlation", agent=None),
                    ids,
                    {
                        "r": ("r", "r_ci_low", "r_ci_high"),
                        **{c: (c, None, None) for c in ("n", "t", "df", "p")},
                    },
                )
            )
        return pd.concat([p for p in parts if len(p)] or parts, ignore_index=True)

    def summary(self) -> str:
        f = lambda v: f"{v:.3f}"  # noqa: E731
        parts = [
            "Per-attribute analysis of per-item abilities",
            "=" * 72,
            "One-way ANOVA of per-item alpha means across agents:",
            self.anova.to_string(index=False, float_format=f),
            "",
            "Tukey HSD (a - b, 95% family-wise CI):",
            self.tukey.to_string(index=False, float_format=f),
            "",
            "Table 3 (% of items):",
            self.table3.to_string(index=False, float_format=lambda v: f"{v:.1f}"),
        ]
        if self.correlation is not None:
            parts += ["", "Pearson correlation with the external score:"]
            parts.append(self.correlation.to_string(index=False, float_format=f))
        return "\n".join(parts)


def _agent_order(agents: Sequence[str], order: Sequence[str] | None) -> list[str]:
    agents = list(agents)
    if not order:
        return sorted(agents)
    head = [a for a in order if a in agents]
    return head + sorted(a for a in agents if a not in head)


@takes_tables(
    abilities=ABILITIES,
    scores=Table(
        "scores",
        ("item", "agent"),
        ("attribute",),
        paths=False,
        depends=lambda a: [a.get("score_column") or "score"],
    ),
)
def summarize(
    abilities: pd.DataFrame,
    *,
    scores: pd.DataFrame | None = None,
    score_column: str | None = None,
    agent_order: Sequence[str] | None = None,
    attribute_order: Sequence[str] | None = None,
) -> SummaryResults:
    """ANOVA, Tukey HSD and Table 3 per attribute (and correlations with ``scores``)."""
    ab = abilities.copy()
    ab["attribute"] = ab["attribute"].astype(str)
    ab["agent"] = ab["agent"].astype(str)
    attrs = list(dict.fromkeys(attribute_order or [])) + sorted(
        set(ab["attribute"]) - set(attribute_order or [])
    )
    attrs = [a for a in attrs if a in set(ab["attribute"])]
    anova_rows, tukey_rows, t3_rows, corr_rows = [], [], [], []
    for attr in attrs:
        sub = ab[ab["attribute"] == attr]
        agents = _agent_order(sub["agent"].unique(), agent_order)
        groups = [sub.loc[sub["agent"] == a, "alpha_mean"].to_numpy(float) for a in agents]
        t3_rows += [_table3_row(sub, attr, a) for a in agents]
        usable = [g for g in groups if len(g) > 0]
        n_total = sum(len(g) for g in usable)
        if len(usable) >= 2 and n_total > len(usable) and all(len(g) >= 2 for g in usable):
            anova_rows.append(_anova_row(attr, usable))
            tukey_rows += _tukey_rows(sub, attr, agents)
        if scores is not None and score_column is not None:
            corr_rows.append(_correlation_row(sub, attr, scores, score_column))
    if scores is not None and score_column is not None and all(r["n"] == 0 for r in corr_rows):
        raise InputError(
            "no (item, agent) of the scores file matches the abilities; check the item and agent "
            "names",
            file=scores.attrs.get("file"),
        )
    return SummaryResults(
        anova=pd.DataFrame(
            anova_rows,
            columns=["attribute", "F", "df_between", "df_within", "p", "shapiro_W", "shapiro_p"],
        ),
        tukey=pd.DataFrame(
            tukey_rows,
            columns=[
                "attribute",
                "agent_a",
                "agent_b",
                "diff",
                "ci_low",
                "ci_high",
                "p_adj",
                "reject_at_0.05",
            ],
        ),
        table3=pd.DataFrame(t3_rows),
        correlation=pd.DataFrame(corr_rows) if corr_rows else None,
        params={"score_column": (score_column or "score") if scores is not None else None,
                "agent_order": list(agent_order) if agent_order is not None else None},
    )  # fmt: skip


def _table3_row(sub: pd.DataFrame, attr: str, agent: str) -> dict:
    """Table 3 for one agent on one attribute (``sub``: the attribute's abilities)."""
    s = sub[sub["agent"] == agent]
    excl = (s["alpha_hdi_low"] > 0) | (s["alpha_hdi_high"] < 0)
    return {
        "attribute": attr,
        "agent": agent,
        "n_items": len(s),
        "mean_alpha": float(s["alpha_mean"].mean()),
        "pct_alpha_positive": 100.0 * float((s["alpha_mean"] > 0).mean()),
        "pct_hdi_excludes_0": 100.0 * float(excl.mean()),
        "pct_hdi_above_0": 100.0 * float((s["alpha_hdi_low"] > 0).mean()),
        "pct_hdi_below_0": 100.0 * float((s["alpha_hdi_high"] < 0).mean()),
    }


def _anova_row(attr: str, usable: list[np.ndarray]) -> dict:
    """One-way ANOVA across the agents' alpha means, with Shapiro-Wilk on the residuals."""
    n_total = sum(len(g) for g in usable)
    F, p = stats.f_oneway(*usable)
    resid = np.concatenate([g - g.mean() for g in usable])
    sw = stats.shapiro(resid) if len(resid) >= 3 else (np.nan, np.nan)
    return {
        "attribute": attr,
        "F": float(F),
        "df_between": len(usable) - 1,
        "df_within": n_total - len(usable),
        "p": float(p),
        "shapiro_W": float(sw[0]),
        "shapiro_p": float(sw[1]),
    }


def _tukey_rows(sub: pd.DataFrame, attr: str, agents: list[str]) -> list[dict]:
    """Tukey HSD for every pair of agents (in ``agents`` order), written as ``a - b``."""
    from statsmodels.stats.multicomp import pairwise_tukeyhsd

    tk = pairwise_tukeyhsd(
        sub["alpha_mean"].to_numpy(float), sub["agent"].to_numpy(str), alpha=0.05
    )
    names = list(tk.groupsunique)
    # statsmodels reports group2 - group1 for each pair (group1 < group2 in sorted order)
    lookup = {}
    for (g1, g2), md, ci, pv, rej in zip(
        combinations(range(len(names)), 2),
        tk.meandiffs,
        tk.confint,
        tk.pvalues,
        tk.reject,
        strict=True,
    ):
        lookup[(names[g2], names[g1])] = (md, ci[0], ci[1], pv, rej)
        lookup[(names[g1], names[g2])] = (-md, -ci[1], -ci[0], pv, rej)
    rows = []
    for a, b in combinations(agents, 2):
        md, lo, hi, pv, rej = lookup[(a, b)]
        rows.append(
            {
                "attribute": attr,
                "agent_a": a,
                "agent_b": b,
                "diff": float(md),
                "ci_low": float(lo),
                "ci_high": float(hi),
                "p_adj": float(pv),
                "reject_at_0.05": bool(rej),
            }
        )
    return rows


def _correlation_row(sub: pd.DataFrame, attr: str, scores: pd.DataFrame, score_column: str) -> dict:
    """Pearson correlation (r, t, df, p, 95% CI) of alpha with the external score."""
    keys = ["item", "agent"] + (["attribute"] if "attribute" in scores.columns else [])
    sc = scores if "attribute" not in scores.columns else scores[scores["attribute"] == attr]
    merged = sub.merge(sc[[*keys, score_column]], on=keys, how="inner")
    n = len(merged)
    row = {
        "attribute": attr,
        "n": n,
        "r": np.nan,
        "t": np.nan,
        "df": n - 2,
        "p": np.nan,
        "r_ci_low": np.nan,
        "r_ci_high": np.nan,
    }
    if n >= 3 and merged["alpha_mean"].std() > 0 and merged[score_column].std() > 0:
        pr = stats.pearsonr(merged["alpha_mean"], merged[score_column])
        r = float(pr.statistic)
        ci = pr.confidence_interval(0.95)
        row.update(
            r=r,
            t=r * np.sqrt((n - 2) / (1 - r * r)) if abs(r) < 1 else np.inf,
            p=float(pr.pvalue),
            r_ci_low=float(ci.low),
            r_ci_high=float(ci.high),
        )
    return row
