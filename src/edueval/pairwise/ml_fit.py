"""The results object of a maximum-likelihood fit (:mod:`.ml`) and the fit itself, with fit
statistics and reliabilities (:mod:`.quality`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..results import RunResults
from .design import Design, agent_table, tidy_rows
from .ml import estimate_table, fit_ml_design

__all__ = ["MLResults", "fit_ml"]


@dataclass
class MLResults(RunResults):
    """A maximum-likelihood Bradley-Terry fit (statsmodels-style results object).

    Attributes
    ----------
    abilities : one row per (group, agent): ``alpha_mean`` (the ML estimate, in the column a NUTS
        fit uses for its posterior mean, so that ``pairwise summarize`` reads either), ``alpha_se``,
        Wald 95% ``alpha_ci_*``, ``rank``, infit/outfit (:mod:`.misfit`) and the group's ``ssr`` and
        ``split_half``.
    groups : one row per group: ``alpha0`` with SE and CI, log-likelihood, iterations,
        ``converged``, ``ml_exists``, and the reliabilities (:mod:`.reliability`).
    raters : per rater infit/outfit, worst infit first.
    """

    abilities: pd.DataFrame
    groups: pd.DataFrame
    raters: pd.DataFrame
    design: Design
    ties: str
    skipped: pd.DataFrame
    seconds: float
    params: dict[str, Any] = field(default_factory=dict)
    method: str = "ml"
    #: raters whose comparisons were left out before the fit (as :class:`BradleyTerryResults`)
    excluded_raters: list[str] = field(default_factory=list)

    _writer = "edueval.pairwise.pipeline:save_fit"

    def headline(self) -> dict[str, Any]:
        from .quality import fit_headline

        return fit_headline(self, "ml")

    @property
    def n_missing(self) -> int:
        """Groups whose plain ML estimate does not exist (see the module docstring)."""
        return int((~self.groups["ml_exists"].astype(bool)).sum())

    def diagnostics(self) -> dict[str, Any]:
        return {
            "method": "ml" if self.params.get("ridge", 0) == 0 else "map",
            "ridge": self.params.get("ridge", 0.0),
            "order_effect": self.params.get("order_effect", True),
            "identification": "sum-to-zero abilities per group",
            "n_not_converged": int((~self.groups["converged"].astype(bool)).sum()),
            "n_ml_missing": self.n_missing,
            "max_iterations": int(self.groups["iterations"].max()),
            "fit_seconds": self.seconds,
        }

    def warnings(self) -> list[str]:
        out = []
        if self.n_missing:
            out.append(
                f"{self.n_missing} group(s) have no finite ML estimate (an agent won or lost all "
                "its comparisons, or the win graph is not strongly connected); their estimates "
                "are NaN: a small ridge= (1 = the Bayesian model's posterior mode) gives finite "
                "ones"
            )
        return out

    def agent_table(self, by: Sequence[str] | None = None) -> pd.DataFrame:
        """Per agent (and ``by`` columns): groups, mean estimate, % > 0, % CI excluding 0."""
        by = list(by or [c for c in self.design.groups if c != "item"][:1])
        return agent_table(self.abilities.dropna(subset=["alpha_mean"]), by, low="alpha_ci_low", high="alpha_ci_high",
                           excl="pct_ci_excludes_0", rank="rank")  # fmt: skip

    def to_frame(self) -> pd.DataFrame:
        """Tidy rows: the group columns, ``agent, measure, value, ci_low, ci_high`` -- per group
        and agent ``alpha`` (Wald 95% CI), ``se``, ``infit``, ``outfit``; per group ``alpha0``,
        ``ssr`` and ``split_half`` (``agent`` empty)."""
        keys = list(self.design.groups)
        ab = tidy_rows(
            self.abilities,
            [*keys, "agent"],
            {
                "alpha": ("alpha_mean", "alpha_ci_low", "alpha_ci_high"),
                "se": ("alpha_se", None, None),
                "infit": ("infit", None, None),
                "outfit": ("outfit", None, None),
            },
        )
        gr = tidy_rows(
            self.groups.assign(agent=None),
            [*keys, "agent"],
            {
                "alpha0": ("alpha0", "alpha0_ci_low", "alpha0_ci_high"),
                "ssr": ("ssr", None, None),
                "split_half": ("split_half", None, None),
            },
        )
        return pd.concat([ab, gr], ignore_index=True)

    def summary(self) -> str:
        d = self.diagnostics()
        g = self.groups
        lines = [
            f"Bradley-Terry with order effect, {d['method'].upper()} (Newton-Raphson), "
            f"ridge {d['ridge']}, sum-to-zero abilities",
            "=" * 72,
            f"groups ({' x '.join(self.design.groups)}): {len(g)}   comparisons: "
            f"{int(g['n_comparisons'].sum())}   ties: {self.ties}   {self.seconds:.2f} s",
            f"SSR median {g['ssr'].median():.3f}   split-half (raters) median "
            f"{g['split_half'].median():.3f}",
            f"raters: {len(self.raters)}, misfitting (infit t > 2): "
            f"{int(self.raters['misfit'].sum())}",
            "-" * 72,
            self.agent_table().to_string(index=False, float_format=lambda v: f"{v:.3f}"),
        ]
        lines += [f"warning: {w}" for w in self.warnings()]
        return "\n".join(lines)


def fit_ml(
    model, *, ridge: float = 0.0, order_effect: bool = True, split_half_repeats: int = 20
) -> MLResults:
    """ML fit of a :class:`~edueval.pairwise.bradley_terry.BradleyTerry` specification."""
    import time

    from .quality import assess

    if split_half_repeats < 1:
        raise ValueError(f"split_half_repeats must be at least 1; got {split_half_repeats}")
    start = time.perf_counter()
    est = fit_ml_design(model.design, ridge=ridge, order_effect=order_effect)
    seconds = time.perf_counter() - start
    ab, gr = estimate_table(model.design, est)
    ab, gr, raters = assess(
        model.data,
        model.design,
        est.alpha,
        est.alpha0,
        ab,
        gr,
        seed=model.seed,
        repeats=split_half_repeats,
        ridge=ridge,
        order_effect=order_effect,
    )
    return MLResults(
        abilities=ab,
        groups=gr,
        raters=raters,
        design=model.design,
        ties=model.ties,
        skipped=model.skipped,
        seconds=seconds,
        params={
            "groups": list(model.groups),
            "ties": model.ties,
            "seed": model.seed,
            "min_comparisons": model.min_comparisons,
            "ridge": ridge,
            "order_effect": order_effect,
            "split_half_repeats": split_half_repeats,
        },
    )
