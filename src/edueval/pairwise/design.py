"""Comparisons reduced to per-group sufficient statistics (:class:`Design`), shared by the
Bayesian fit (:mod:`.bradley_terry`), the ML fit (:mod:`.ml`), the fit statistics and the
reliabilities; and :func:`tidy_rows`, the long format of every results object's ``to_frame``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

__all__ = ["Design", "agent_table", "build_design", "tidy_rows"]


@dataclass
class Design:
    """Comparisons reduced to per-group sufficient statistics over the observed ordered pairs.

    Row ``p`` of the ``pair_*`` arrays is one ordered pair of agents compared in one group (first
    shown ``pair_first[p]``, second shown ``pair_second[p]``) with its summed weights; rows are
    sorted by group, then first, then second.  Memory is O(observed pairs + groups x agents);
    :attr:`w1` and :attr:`w2` give the dense ``(G, K, K)`` arrays on demand (small designs)."""

    groups: tuple[str, ...]
    keys: pd.DataFrame  # one row per group: the group columns
    agents: np.ndarray  # (K,) agent names
    pair_group: np.ndarray  # (P,) group of each observed ordered pair
    pair_first: np.ndarray  # (P,) agent shown first
    pair_second: np.ndarray  # (P,) agent shown second
    pair_w1: np.ndarray  # (P,) weight of wins of the first-shown agent
    pair_w2: np.ndarray  # (P,) weight of wins of the second-shown agent
    present: np.ndarray  # (G, K) agent appears in the group
    n_comparisons: np.ndarray  # (G,)
    n_ties: np.ndarray  # (G,) ties in the input (before resolution)
    n_agent: np.ndarray  # (G, K) comparisons involving each agent

    @property
    def n_groups(self) -> int:
        return len(self.keys)

    @property
    def n_pairs(self) -> int:
        """Observed ordered pairs, all groups together."""
        return len(self.pair_group)

    def _dense(self, weights: np.ndarray) -> np.ndarray:
        k = len(self.agents)
        out = np.zeros((self.n_groups, k, k))
        out[self.pair_group, self.pair_first, self.pair_second] = weights
        return out

    @property
    def w1(self) -> np.ndarray:
        """``(G, K, K)``: weight of wins of the first-shown agent i over the second-shown j (dense,
        built on demand: O(G K^2) memory, for small designs only)."""
        return self._dense(self.pair_w1)

    @property
    def w2(self) -> np.ndarray:
        """``(G, K, K)``: weight of wins of the second-shown agent j over i (dense, on demand)."""
        return self._dense(self.pair_w2)

    @property
    def wins(self) -> np.ndarray:
        """``(G, K)``: weighted wins of each agent in each group."""
        out = np.zeros((self.n_groups, len(self.agents)))
        np.add.at(out, (self.pair_group, self.pair_first), self.pair_w1)
        np.add.at(out, (self.pair_group, self.pair_second), self.pair_w2)
        return out

    def reorder(self, agent_order: Sequence[str]) -> Design:
        """The same design with agents in ``agent_order`` first (others keep their order)."""
        names = list(self.agents)
        first = [a for a in agent_order if a in names]
        perm = np.array([names.index(a) for a in first + [a for a in names if a not in first]])
        new_index = np.empty_like(perm)
        new_index[perm] = np.arange(len(perm))
        fi, se = new_index[self.pair_first], new_index[self.pair_second]
        order = np.lexsort((se, fi, self.pair_group))
        return replace(
            self,
            agents=self.agents[perm],
            pair_group=self.pair_group[order],
            pair_first=fi[order],
            pair_second=se[order],
            pair_w1=self.pair_w1[order],
            pair_w2=self.pair_w2[order],
            present=self.present[:, perm],
            n_agent=self.n_agent[:, perm],
        )


def _observed_pairs(
    g: np.ndarray, i: np.ndarray, j: np.ndarray, w1: np.ndarray, w2: np.ndarray, k: int
):
    """Comparisons summed per distinct ``(group, first, second)``, sorted: the ``pair_*`` arrays."""
    cell = (g.astype(np.int64) * k + i) * k + j
    cells, inverse = np.unique(cell, return_inverse=True)
    sums = np.zeros((2, len(cells)))
    np.add.at(sums[0], inverse, w1)
    np.add.at(sums[1], inverse, w2)
    return cells // (k * k), (cells // k) % k, cells % k, sums[0], sums[1]


def build_design(
    df: pd.DataFrame,
    groups: Sequence[str],
    *,
    agents: Sequence[str] | None = None,
    n_ties: pd.Series | None = None,
) -> Design:
    """Sufficient statistics of tie-resolved comparisons (columns ``w_first``/``w_second``).

    ``n_ties`` (indexed by the group columns) gives the ties of each group in the input when they
    were dropped before this point; otherwise the ``tie`` column of ``df`` is counted."""
    groups = tuple(groups)
    if agents is None:
        agents = sorted(set(df["first"]).union(df["second"]))
    agent_names = np.asarray(list(agents), dtype=object)
    a_index = {a: k for k, a in enumerate(agent_names)}
    keys_df = df[list(groups)].drop_duplicates().sort_values(list(groups)).reset_index(drop=True)
    g_index = pd.MultiIndex.from_frame(keys_df)
    g = g_index.get_indexer(pd.MultiIndex.from_frame(df[list(groups)]))
    i = df["first"].map(a_index).to_numpy()
    j = df["second"].map(a_index).to_numpy()
    G, K = len(keys_df), len(agent_names)
    pg, pi, pj, pw1, pw2 = _observed_pairs(
        g, i, j, df["w_first"].to_numpy(dtype=float), df["w_second"].to_numpy(dtype=float), K
    )
    n_agent = np.zeros((G, K), dtype=np.int64)
    np.add.at(n_agent, (g, i), 1)
    np.add.at(n_agent, (g, j), 1)
    n_comp = np.bincount(g, minlength=G)
    if n_ties is not None:
        tie_counts = (
            n_ties.reindex(g_index if len(groups) > 1 else g_index.get_level_values(0))
            .fillna(0)
            .to_numpy(dtype=np.int64)
        )
    else:
        ties = df["tie"].to_numpy(dtype=bool) if "tie" in df.columns else np.zeros(len(df), bool)
        tie_counts = np.bincount(g, weights=ties.astype(float), minlength=G).astype(np.int64)
    return Design(
        groups=groups,
        keys=keys_df,
        agents=agent_names,
        pair_group=pg,
        pair_first=pi,
        pair_second=pj,
        pair_w1=pw1,
        pair_w2=pw2,
        present=n_agent > 0,
        n_comparisons=n_comp,
        n_ties=tie_counts,
        n_agent=n_agent,
    )


def tidy_rows(
    table: pd.DataFrame, ids: Sequence[str], measures: dict[str, tuple[str, str | None, str | None]]
) -> pd.DataFrame:
    """Tidy rows ``*ids, measure, value, ci_low, ci_high`` of ``table``: for each measure, the
    columns of its value and of its interval's ends (``None``: no interval, NaN)."""
    parts = []
    for name, (value, low, high) in measures.items():
        part = table[list(ids)].copy()
        part["measure"] = name
        part["value"] = table[value].to_numpy(dtype=float)
        part["ci_low"] = table[low].to_numpy(dtype=float) if low else np.nan
        part["ci_high"] = table[high].to_numpy(dtype=float) if high else np.nan
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def agent_table(
    abilities: pd.DataFrame, by: Sequence[str], *, low: str, high: str, excl: str, rank: str
) -> pd.DataFrame:
    """Per agent (and ``by`` columns): groups, mean ``alpha_mean``, % of groups with alpha > 0 and
    % whose interval ``[low, high]`` excludes 0 (column ``excl``), mean of ``rank`` -- the
    paper's Table 3, for the NUTS (HDI) and the ML (Wald CI) fits alike."""
    ab = abilities
    out = (ab[low] > 0) | (ab[high] < 0)
    t = (
        ab.assign(pos=ab["alpha_mean"] > 0, excl=out)
        .groupby([*by, "agent"], sort=True)
        .agg(
            n_groups=("alpha_mean", "size"),
            alpha_mean=("alpha_mean", "mean"),
            pct_alpha_positive=("pos", "mean"),
            **{excl: ("excl", "mean")},
            mean_rank=(rank, "mean"),
        )
        .reset_index()
    )
    t["pct_alpha_positive"] *= 100
    t[excl] *= 100
    return t
