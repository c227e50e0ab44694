"""Reliability and fit added to a Bradley-Terry fit's tables (NUTS or ML alike).

Given the tie-resolved comparisons, the design and point estimates (posterior means under NUTS, the
estimates under ML), :func:`assess` adds to the abilities table each object's infit/outfit
(:mod:`.misfit`) and its group's SSR and split-half reliability (:mod:`.reliability`), to the
groups table the reliabilities, and returns the per-rater fit table.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .design import Design
from .misfit import T_CUT, expected_first, object_fit, rater_fit
from .reliability import VAR_DDOF, split_half, ssr_table

__all__ = ["RELIABILITY_COLUMNS", "assess", "quality_summary", "reliability_sentence"]

RELIABILITY_COLUMNS = ("ssr", "separation", "split_half", "split_half_r", "split_half_n")


def split_seed(seed: int | None) -> int:
    """The split-half stream, independent of the tie flips and the sampler."""
    from ..seeding import DEFAULT_SEED

    s = DEFAULT_SEED if seed is None else int(seed)
    return int(np.random.SeedSequence([s, 11]).generate_state(1)[0])


def assess(
    data: pd.DataFrame,
    design: Design,
    alpha: np.ndarray,
    alpha0: np.ndarray,
    abilities: pd.DataFrame,
    groups_table: pd.DataFrame,
    *,
    seed: int | None,
    repeats: int,
    ridge: float,
    order_effect: bool = True,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``(abilities, groups, raters)`` with fit statistics and reliabilities (module docstring);
    ``alpha`` (G, K) and ``alpha0`` (G,) are the point estimates; ``ridge`` and ``order_effect``
    are those of the half fits of the split-half reliability."""
    keys = list(design.groups)
    ok = np.isfinite(alpha0)[:, None] & np.isfinite(alpha)
    a = np.where(ok, alpha, 0.0)
    p = expected_first(data, design, a, np.nan_to_num(alpha0))
    g_rows = pd.MultiIndex.from_frame(data[keys]).isin(
        pd.MultiIndex.from_frame(design.keys[keys][np.isfinite(alpha0)])
    )
    used = data[g_rows]
    p = p[g_rows]
    raters = rater_fit(used, p)
    objects = object_fit(used, p, keys)
    ab = abilities.merge(
        objects.drop(columns=["n_judgements", "infit_above_2sd"]), on=[*keys, "agent"], how="left"
    )
    rel = ssr_table(ab, keys)
    sh = split_half(
        data,
        keys,
        repeats=repeats,
        seed=split_seed(seed),
        ridge=ridge,
        order_effect=order_effect,
        keys=design.keys,
    )
    rel = rel.merge(sh, on=keys, how="right")
    gr = groups_table.merge(rel, on=keys, how="left")
    ab = ab.merge(rel[[*keys, "ssr", "split_half"]], on=keys, how="left")
    return ab, gr, raters


def fit_headline(res: Any, method: str) -> dict[str, Any]:
    """``pairwise fit``'s results.json (less ``tables`` and ``status``) of a NUTS or an ML fit:
    the headline numbers of both results objects' ``results()``."""
    return {
        "method": method,
        "n_groups": len(res.groups),
        "n_comparisons": int(res.groups["n_comparisons"].sum()),
        "n_excluded_raters": len(res.excluded_raters),
        "n_skipped_groups": len(res.skipped),
        **quality_summary(res.groups, res.raters, list(res.design.groups)),
        **res.diagnostics(),
        "warnings": res.warnings(),
        "agents": res.agent_table(),
    }


def quality_summary(groups: pd.DataFrame, raters: pd.DataFrame, keys: list[str]) -> dict[str, Any]:
    """The headline reliability and fit numbers for results.json."""
    out: dict[str, Any] = {
        "ssr_median": _median(groups["ssr"]),
        "ssr_mean": _mean(groups["ssr"]),
        "split_half_median": _median(groups["split_half"]),
        "split_half_mean": _mean(groups["split_half"]),
        "reliability_variance_ddof": VAR_DDOF,
        "n_raters": len(raters),
        "n_raters_misfit": int(raters["misfit"].sum()),
        "raters_misfit": raters.loc[raters["misfit"], "rater"].astype(str).tolist(),
        "rater_infit_t_cut": T_CUT,
        "worst_infit_raters": raters.head(5)[["rater", "infit", "infit_t"]],
    }
    if len(groups) <= 100:
        out["reliability"] = groups[[*keys, *RELIABILITY_COLUMNS]]
    return out


def _median(s: pd.Series) -> float | None:
    s = s.dropna()
    return float(s.median()) if len(s) else None


def _mean(s: pd.Series) -> float | None:
    s = s.dropna()
    return float(s.mean()) if len(s) else None


def reliability_sentence(groups: pd.DataFrame, repeats: int) -> str:
    """The report's paragraph on the two reliabilities."""
    ssr_m, sh_m = _median(groups["ssr"]), _median(groups["split_half"])
    fmt = lambda v: "n/a" if v is None else f"{v:.3f}"  # noqa: E731
    few = ""
    if "n_agents" in groups.columns and groups["n_agents"].median() < 10:
        few = (
            f" Groups hold a median of {groups['n_agents'].median():.0f} agents: a variance "
            "over so few estimates is imprecise, and a group's reliability can fall far below 0 "
            "(SSR) or swing widely (split-half); read them across groups, not one by one."
        )
    return (
        f"Scale separation reliability SSR = (var(estimates) - mean(SE^2)) / var(estimates) per "
        f"group (variance with ddof={VAR_DDOF}; SE under sum-to-zero identification): median "
        f"{fmt(ssr_m)} over {int(groups['ssr'].notna().sum())} group(s). Split-half reliability "
        f"across raters (raters split at random into halves {repeats} times, each half fitted "
        f"alone, mean correlation stepped up by Spearman-Brown): median {fmt(sh_m)} over "
        f"{int(groups['split_half'].notna().sum())} group(s) where it is defined. SSR trusts the "
        "model's standard errors and the design: if pairs were chosen adaptively from current "
        "estimates it is inflated (Bramley 2015), and so is a split-half whose halves share the "
        "adaptive design (benchmarks/RESULTS.md); only halves that chose their pairs "
        "independently (pairwise simulate --pairing adaptive) give a figure to trust." + few
    )
