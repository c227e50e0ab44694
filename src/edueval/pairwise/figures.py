"""Figures of P2 reports (matplotlib, Agg backend)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..report.figures import plt

__all__ = ["alpha_boxplots", "difference_forest", "order_effects"]

_COLOURS = ["#3b6ea5", "#c9a227", "#7a9e48", "#a54b3b", "#6b4ba5", "#3ba59a"]


def alpha_boxplots(
    abilities: pd.DataFrame,
    *,
    attributes: Sequence[str],
    agents: Sequence[str],
    labels: dict[str, str] | None = None,
    value: str = "alpha_mean",
    title: str = "Posterior mean ability per item",
):
    """One panel per attribute: the distribution over items of each agent's alpha (Fig. 5)."""
    labels = labels or {}
    fig, axes = plt.subplots(
        1, len(attributes), figsize=(3.2 * len(attributes), 3.6), sharey=True, layout="constrained"
    )
    axes = np.atleast_1d(axes)
    for ax, attr in zip(axes, attributes, strict=True):
        sub = abilities[abilities["attribute"] == attr]
        data = [sub.loc[sub["agent"] == a, value].to_numpy(float) for a in agents]
        bp = ax.boxplot(data, notch=True, patch_artist=True, widths=0.6)
        for patch, colour in zip(bp["boxes"], _COLOURS, strict=False):
            patch.set_facecolor(colour)
            patch.set_alpha(0.55)
        ax.axhline(0, color="grey", lw=0.8, ls=":")
        ax.set_xticks(range(1, len(agents) + 1), [labels.get(a, a) for a in agents], fontsize=8)
        ax.set_title(labels.get(attr, attr), fontsize=9)
    axes[0].set_ylabel("alpha (posterior mean)")
    fig.suptitle(title, fontsize=10)
    return fig


def difference_forest(rows: pd.DataFrame, *, title: str):
    """Horizontal interval plot: ``label``, ``estimate``, ``low``, ``high``, ``source`` columns;
    optional ``paper`` column drawn as a cross."""
    n = len(rows)
    fig, ax = plt.subplots(figsize=(8.0, 0.3 * n + 1.6), layout="constrained")
    sources = list(dict.fromkeys(rows["source"]))
    y = np.arange(n)[::-1]
    for k, src in enumerate(sources):
        m = (rows["source"] == src).to_numpy()
        ax.errorbar(
            rows.loc[m, "estimate"],
            y[m],
            xerr=[
                rows.loc[m, "estimate"] - rows.loc[m, "low"],
                rows.loc[m, "high"] - rows.loc[m, "estimate"],
            ],
            fmt="o",
            color=_COLOURS[k % len(_COLOURS)],
            label=src,
            capsize=3,
            ms=4,
        )
    if "paper" in rows.columns:
        m = rows["paper"].notna().to_numpy()
        ax.scatter(
            rows.loc[m, "paper"],
            y[m],
            marker="D",
            s=22,
            facecolors="none",
            edgecolors="black",
            zorder=5,
            label="paper",
        )
    ax.axvline(0, color="grey", lw=0.8, ls=":")
    ax.set_yticks(y, rows["label"], fontsize=8)
    ax.set_xlabel("difference in ability (logit scale)")
    ax.set_ylim(-0.8, n - 0.2)
    fig.legend(fontsize=7, loc="outside lower center", ncols=len(sources) + 1)
    fig.suptitle(title, fontsize=10)
    return fig


def order_effects(groups: pd.DataFrame, *, title: str, label_col: str = "rater", top: int = 40):
    """Interval plot of alpha0 per group, most extreme first; flagged ones in red."""
    g = groups.reindex(groups["alpha0_mean"].abs().sort_values(ascending=False).index).head(top)
    g = g.iloc[::-1]
    fig, ax = plt.subplots(figsize=(7.2, 0.2 * len(g) + 1.2), layout="constrained")
    flagged = ((g["alpha0_hdi_low"] > 0) | (g["alpha0_hdi_high"] < 0)).to_numpy()
    y = np.arange(len(g))
    for mask, colour in ((~flagged, "#3b6ea5"), (flagged, "#a54b3b")):
        ax.errorbar(
            g.loc[mask, "alpha0_mean"],
            y[mask],
            xerr=[
                g.loc[mask, "alpha0_mean"] - g.loc[mask, "alpha0_hdi_low"],
                g.loc[mask, "alpha0_hdi_high"] - g.loc[mask, "alpha0_mean"],
            ],
            fmt="o",
            ms=3,
            color=colour,
            capsize=2,
        )
    labels = g[label_col].astype(str)
    if "attribute" in g.columns:
        labels = labels + " / " + g["attribute"].astype(str)
    ax.set_yticks(y, labels, fontsize=6)
    ax.axvline(0, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("alpha0 (order effect; > 0 favours the first option), 95% HDI")
    ax.set_title(title, fontsize=10)
    return fig


def reliability_curves(budgets: pd.DataFrame, *, title: str):
    """Per pairing policy: true reliability, SSR and split-half against judgements."""
    pairings = list(dict.fromkeys(budgets["pairing"]))
    fig, axes = plt.subplots(
        1, len(pairings), figsize=(3.6 * len(pairings), 3.2), sharey=True, layout="constrained"
    )
    axes = np.atleast_1d(axes)
    styles = {
        "true_reliability": ("true (r^2 with the truth)", "#222222", "-"),
        "ssr": ("SSR", "#a54b3b", "--"),
        "split_half": ("split-half", "#3b6ea5", "-."),
    }
    for ax, p in zip(axes, pairings, strict=True):
        t = budgets[budgets["pairing"] == p]
        for col, (label, colour, ls) in styles.items():
            ax.plot(t["judgements"], t[col], ls, color=colour, label=label)
        ax.set_title(p)
        ax.set_xlabel("judgements")
        ax.axhline(0.8, color="#999999", lw=0.6)
    axes[0].set_ylabel("reliability")
    axes[0].legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    return fig
