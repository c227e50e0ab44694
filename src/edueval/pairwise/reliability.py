"""Reliability of a comparative-judgement scale, per (item, attribute) group.

**Scale separation reliability** (SSR; Andrich 1982's person separation index as used in
comparative judgement by Pollitt 2012, Bramley 2015, sirt's ``btm``): the share of the variance of
the estimated abilities that is not measurement error,

    SSR = (var(estimates) - mean(SE^2)) / var(estimates),

with ``var`` the sample variance over the group's agents with ``ddof = 1`` (:data:`VAR_DDOF`, as
R's ``var`` in sirt) and ``SE`` each agent's standard error under the sum-to-zero identification:
the ML standard error (:mod:`.ml`) or, under NUTS, the posterior s.d. of the agent's ability
minus the group's mean ability (``alpha_se``; the raw posterior s.d. ``alpha_sd`` also carries the
prior uncertainty of the common shift, which no comparison informs).  The separation index
``G = sqrt(var - mean SE^2) / sqrt(mean SE^2)`` (true s.d. over error s.d.) is reported beside it.

SSR is computed from the model's own standard errors, so it trusts the model and the design:
under **adaptive pairing** (pairs chosen from the current estimates) it is inflated, up to ~0.9
on coin-flip judgements (Bramley 2015; Bramley & Vitello 2019), because the design follows the
noise.  The **split-half reliability across raters** does not lean on the SEs: the raters of each
group are split at random into two halves, each half's comparisons are fitted alone (penalised ML,
:mod:`.ml`), the two halves' abilities are correlated (Pearson, over the agents estimated in
both), and the mean correlation over ``repeats`` splits is stepped up to the full set of raters by
Spearman-Brown, ``2 r / (1 + r)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..tables import Table, takes_tables

__all__ = ["VAR_DDOF", "spearman_brown", "split_half", "ssr", "ssr_table"]

#: the variance convention of the SSR (sample variance, as R's ``var``)
VAR_DDOF = 1


def ssr(estimates: np.ndarray, se: np.ndarray) -> float:
    """Scale separation reliability of one set of estimates with their standard errors."""
    est = np.asarray(estimates, float)
    se = np.asarray(se, float)
    ok = np.isfinite(est) & np.isfinite(se)
    if ok.sum() < 2:
        return float("nan")
    v = float(np.var(est[ok], ddof=VAR_DDOF))
    if v <= 0:
        return float("nan")
    return (v - float(np.mean(se[ok] ** 2))) / v


@takes_tables(
    abilities=Table(
        "abilities",
        (),
        ("agent",),
        paths=False,
        depends=lambda a: [
            *(a.get("groups") or ()),
            a.get("estimate") or "alpha_mean",
            a.get("se") or "alpha_se",
        ],
    )
)
def ssr_table(
    abilities: pd.DataFrame,
    groups: Sequence[str],
    *,
    estimate: str = "alpha_mean",
    se: str = "alpha_se",
) -> pd.DataFrame:
    """Per group: agents, ``var_estimates`` (ddof 1), ``mean_se2``, ``ssr`` and ``separation``."""
    rows = []
    for key, sub in abilities.groupby(list(groups), sort=True):
        est = sub[estimate].to_numpy(float)
        s = sub[se].to_numpy(float)
        ok = np.isfinite(est) & np.isfinite(s)
        v = float(np.var(est[ok], ddof=VAR_DDOF)) if ok.sum() >= 2 else np.nan
        m = float(np.mean(s[ok] ** 2)) if ok.any() else np.nan
        rows.append(
            (
                *(key if isinstance(key, tuple) else (key,)),
                v,
                m,
                ssr(est, s),
                np.sqrt(max(v - m, 0.0) / m) if m > 0 and np.isfinite(v) else np.nan,
            )
        )
    return pd.DataFrame(rows, columns=[*groups, "var_estimates", "mean_se2", "ssr", "separation"])


def spearman_brown(r: np.ndarray | float, factor: float = 2.0):
    """Reliability of a test ``factor`` times as long as one with reliability ``r``."""
    r = np.asarray(r, float)
    return factor * r / (1 + (factor - 1) * r)


class _Halves:
    """Random halves of each group's raters, drawn fast: rows -> (group, rater) cells once."""

    def __init__(self, g: np.ndarray, rater: np.ndarray) -> None:
        r_codes, _ = pd.factorize(rater)
        cell_codes, cells = pd.factorize(g.astype(np.int64) * (r_codes.max() + 1) + r_codes)
        self.row_cell = cell_codes
        self.cell_group = np.asarray(cells) // (r_codes.max() + 1)
        self.size = np.bincount(self.cell_group)[self.cell_group]  # raters in the cell's group

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        """True for the rows of half A: each group's raters shuffled and cut in two."""
        u = rng.random(len(self.cell_group))
        order = np.lexsort((u, self.cell_group))
        start = np.searchsorted(self.cell_group[order], self.cell_group[order], side="left")
        pos = np.empty(len(order), dtype=np.int64)
        pos[order] = np.arange(len(order)) - start
        return (pos < self.size // 2)[self.row_cell]


def _row_correlations(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson correlation of each row of ``a`` and ``b`` over the columns finite in both (NaN
    with fewer than 3 such columns or a constant row)."""
    both = np.isfinite(a) & np.isfinite(b)
    n = both.sum(axis=1)
    x = np.where(both, a, 0.0)
    y = np.where(both, b, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        x = np.where(both, x - x.sum(axis=1, keepdims=True) / n[:, None], 0.0)
        y = np.where(both, y - y.sum(axis=1, keepdims=True) / n[:, None], 0.0)
        sxx, syy = (x * x).sum(axis=1), (y * y).sum(axis=1)
        r = (x * y).sum(axis=1) / np.sqrt(sxx * syy)
    tiny = 1e-12 * np.maximum(1.0, np.maximum(sxx, syy))
    return np.where((n >= 3) & (sxx > tiny) & (syy > tiny), r, np.nan)


def _sub_design(keys, agents, g, i, j, w1, w2, G: int, K: int):
    """A :class:`~edueval.pairwise.bradley_terry.Design` over all ``G`` groups of the rows given
    as index arrays (a group without rows has no agent present)."""
    from .design import Design, _observed_pairs

    pg, pi, pj, pw1, pw2 = _observed_pairs(g, i, j, w1, w2, K)
    n_agent = np.zeros((G, K), dtype=np.int64)
    np.add.at(n_agent, (g, i), 1)
    np.add.at(n_agent, (g, j), 1)
    return Design(
        groups=tuple(keys.columns),
        keys=keys,
        agents=np.asarray(agents, dtype=object),
        pair_group=pg,
        pair_first=pi,
        pair_second=pj,
        pair_w1=pw1,
        pair_w2=pw2,
        present=n_agent > 0,
        n_comparisons=np.bincount(g, minlength=G),
        n_ties=np.zeros(G, dtype=np.int64),
        n_agent=n_agent,
    )


@takes_tables(
    data=Table(
        "comparisons",
        ("rater", "first", "second", "w_first", "w_second"),
        depends=lambda a: a.get("groups") or (),
        paths=False,
    ),
    keys=Table("groups", paths=False, depends=lambda a: a.get("groups") or ()),
)
def split_half(
    data: pd.DataFrame,
    groups: Sequence[str],
    *,
    repeats: int = 20,
    seed: int | None = None,
    ridge: float = 1.0,
    order_effect: bool = True,
    keys: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Split-half reliability across raters per group (see the module docstring).

    ``data`` are tie-resolved comparisons (``w_first``/``w_second``) with a ``rater`` column.
    Returns per group: ``split_half_r`` (mean correlation of the halves over the splits where it
    is defined: both halves fitted, at least 3 agents in common, neither half constant),
    ``split_half`` (its Spearman-Brown step-up) and ``split_half_n`` (splits used).  A group with
    fewer than 2 raters or 3 agents gets NaN."""
    from ..seeding import rng as make_rng
    from .ml import fit_ml_design

    groups = list(groups)
    agents = sorted(set(data["first"]).union(data["second"]))
    if keys is None:
        keys = data[groups].drop_duplicates().sort_values(groups).reset_index(drop=True)
    g_index = pd.MultiIndex.from_frame(keys[groups])
    g = g_index.get_indexer(pd.MultiIndex.from_frame(data[groups]))
    a_index = pd.Index(agents)
    i, j = a_index.get_indexer(data["first"]), a_index.get_indexer(data["second"])
    w1 = data["w_first"].to_numpy(float)
    w2 = data["w_second"].to_numpy(float)
    G, K = len(keys), len(agents)
    sums = np.zeros(G)
    counts = np.zeros(G, dtype=int)
    gen = make_rng(seed)
    halves = _Halves(g, data["rater"].to_numpy())
    for _ in range(int(repeats)):
        in_a = halves.draw(gen)
        est = [
            fit_ml_design(
                _sub_design(keys, agents, g[m], i[m], j[m], w1[m], w2[m], G, K),
                ridge=ridge,
                order_effect=order_effect,
            ).alpha
            for m in (in_a, ~in_a)
        ]
        r = _row_correlations(*est)
        ok = np.isfinite(r)
        sums[ok] += r[ok]
        counts[ok] += 1
    out = keys[groups].copy()
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    out["split_half_r"] = r
    out["split_half"] = spearman_brown(r)
    out["split_half_n"] = counts
    return out
