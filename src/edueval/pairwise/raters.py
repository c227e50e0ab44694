"""Rater quality: does a rater favour the first (or the second) position whatever is shown?

Tack & Piech (2022, Sec. 3.3, "Outlier Detection") turn the Bradley-Terry model around: instead of
abilities per item they fit, per rater, abilities of the *agents* over all the items that rater
judged, with the order intercept ``alpha0``, and exclude raters whose 95% credible interval for
``alpha0`` lies above 0 (biased towards option A) or below 0 (towards option B).

Model choice (documented, because the paper leaves it open): per group ``g`` -- one rater, or one
rater x attribute with ``per="attribute"`` (the default) --

    P(first preferred) = logistic(alpha0_g + alpha_{g,first} - alpha_{g,second}),
    alpha_{g,agent} ~ N(0, 1),  alpha0_g ~ N(0, 1),

i.e. the agents' abilities are the nuisance parameters, shared by all items the rater judged
(agent-level, not item-level, abilities: a rater sees each item once, so item-level abilities per
rater would not be identified).  A rater is flagged when the HDI of ``alpha0`` excludes 0 in at
least one of their groups; with ``per="attribute"`` the number of flagged attributes is reported
too (the authors' ``outliers.yaml`` maps each excluded rater to such a count).  All raters are
sampled together, as in :mod:`.bradley_terry`.

Beside the order effect, every rater gets the comparative-judgement fit statistics -- infit and
outfit mean squares with their t (:mod:`.misfit`) -- from the expected probabilities of the
per-(item, attribute) model over all raters, at its posterior mode (the same N(0, 1) priors as
``pairwise fit``, fitted by penalised ML in well under a second: :mod:`.ml` with ``ridge = 1``).
A rater answering at random has a high infit; ``misfit`` flags an infit t above 2.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..defaults import RATER_TIES, SEED
from ..results import RunResults
from ..tables import takes_tables
from .bradley_terry import BradleyTerry, BradleyTerryResults, tidy_rows
from .comparisons import COMPARISONS

__all__ = ["RaterModel", "RaterResults"]


@dataclass
class RaterResults(RunResults):
    """Per-rater order effects and flags.

    Attributes
    ----------
    raters : one row per rater: comparisons, ties, share of ``first`` among decided judgements,
        ``alpha0`` mean and HDI (of the pooled model, or the most extreme attribute),
        ``n_flagged`` groups and ``flagged``.
    groups : the fitted groups (rater, or rater x attribute) with their ``alpha0`` summaries.
    fit : the underlying :class:`BradleyTerryResults`.
    """

    raters: pd.DataFrame
    groups: pd.DataFrame
    fit: BradleyTerryResults
    per: str
    params: dict[str, Any] = field(default_factory=dict)
    #: rater ids to compare the flags with (``pairwise raters --compare``): ``results()`` then
    #: holds their ``overlap``
    reference: list[str] | None = None

    _writer = "edueval.pairwise.pipeline:save_raters"

    def headline(self) -> dict[str, Any]:
        """``pairwise raters``' results.json: counts, flagged and misfitting raters, the
        sampler's diagnostics and (with a ``reference``) the overlap."""
        out: dict[str, Any] = {
            "n_raters": len(self.raters), "n_flagged": len(self.flagged),
            "flagged": self.flagged, "n_misfit": len(self.misfitting), "misfit": self.misfitting,
            **self.fit.diagnostics(),
        }  # fmt: skip
        if self.reference is not None:
            out["overlap"] = self.overlap(self.reference)
        return out

    @property
    def flagged(self) -> list[str]:
        return self.raters.loc[self.raters["flagged"], "rater"].tolist()

    @property
    def misfitting(self) -> list[str]:
        """Raters whose infit t exceeds 2 (:mod:`.misfit`), worst infit first."""
        t = self.raters[self.raters["misfit"].fillna(False).astype(bool)]
        return t.sort_values("infit", ascending=False)["rater"].tolist()

    def overlap(self, reference: Iterable[str]) -> dict[str, Any]:
        """Compare the flagged raters with a reference list (e.g. the authors' outliers.yaml)."""
        ref = list(dict.fromkeys(str(r) for r in reference))
        known = set(self.raters["rater"])
        flagged = set(self.flagged)
        in_data = [r for r in ref if r in known]
        both = [r for r in in_data if r in flagged]
        return {
            "n_reference": len(ref),
            "n_reference_in_data": len(in_data),
            "n_flagged": len(flagged),
            "n_both": len(both),
            "both": both,
            "reference_only": [r for r in in_data if r not in flagged],
            "flagged_only": sorted(flagged - set(ref)),
            "not_in_data": [r for r in ref if r not in known],
        }

    def to_inference_data(self):
        """The posterior of the rater models as an ArviZ ``InferenceData`` (see
        :meth:`BradleyTerryResults.to_inference_data`): ``alpha0`` (chain, draw, group) is each
        rater's (or rater x attribute's) order effect, with ``rater`` (and ``attribute``) as
        coordinates along ``group``, and ``alpha`` the agents' abilities in that group."""
        return self.fit.to_inference_data()

    def to_frame(self) -> pd.DataFrame:
        """Tidy rows ``rater, measure, value, ci_low, ci_high``: per rater ``alpha0`` (its most
        extreme group, with the 95% HDI), ``n_comparisons``, ``n_ties``, ``pct_first``,
        ``n_groups``, ``n_flagged`` and ``flagged`` (1 or 0), ``infit``, ``infit_t``, ``outfit``,
        ``outfit_t`` and ``misfit`` (1 or 0)."""
        t = self.raters.assign(flagged=self.raters["flagged"].astype(float))
        t["misfit"] = t["misfit"].astype(float)
        counts = (
            "n_comparisons",
            "n_ties",
            "pct_first",
            "n_groups",
            "n_flagged",
            "flagged",
            "infit",
            "infit_t",
            "outfit",
            "outfit_t",
            "misfit",
        )
        return tidy_rows(
            t,
            ["rater"],
            {
                "alpha0": ("alpha0_mean", "alpha0_hdi_low", "alpha0_hdi_high"),
                **{c: (c, None, None) for c in counts},
            },
        )

    def summary(self) -> str:
        d = self.fit.diagnostics()
        top = self.raters.sort_values("alpha0_mean", key=np.abs, ascending=False).head(10)
        cols = [
            "rater",
            "n_comparisons",
            "pct_first",
            "alpha0_mean",
            "alpha0_hdi_low",
            "alpha0_hdi_high",
            "n_flagged",
            "flagged",
        ]
        lines = [
            f"Rater order effects (Bradley-Terry per rater{' x attribute' if self.per == 'attribute' else ''})",
            "=" * 72,
            f"raters: {len(self.raters)}   flagged (95% HDI of alpha0 excludes 0): "
            f"{len(self.flagged)}",
            f"max R-hat {d['max_rhat']:.4f}   min ESS bulk {d['min_ess_bulk']:.0f}, tail "
            f"{d['min_ess_tail']:.0f}   divergences {d['n_divergent']}",
            "-" * 72,
            "most extreme order effects:",
            top[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"),
            "-" * 72,
            f"worst infit (misfitting, infit t > 2: {len(self.misfitting)}):",
            self.raters.sort_values("infit", ascending=False)
            .head(5)[["rater", "n_comparisons", "infit", "infit_t", "outfit", "outfit_t", "misfit"]]
            .to_string(index=False, float_format=lambda v: f"{v:.3f}"),
        ]
        lines += [f"warning: {w}" for w in self.fit.warnings()]
        return "\n".join(lines)


class RaterModel:
    """Per-rater order-effect model (see module docstring).

    Parameters
    ----------
    comparisons : the comparisons table (all raters: do not exclude the ones you want to test).
    per : ``"attribute"`` (one model per rater x attribute, default) or ``"rater"`` (one model per
        rater over all attributes).
    ties, seed : as in :class:`~edueval.pairwise.bradley_terry.BradleyTerry`.
    """

    @takes_tables(comparisons=COMPARISONS)
    def __init__(
        self,
        comparisons: pd.DataFrame,
        *,
        per: str = "attribute",
        ties: str = RATER_TIES,
        seed: int | None = SEED,
    ) -> None:
        if per not in ("attribute", "rater"):
            raise ValueError("per must be 'attribute' or 'rater'")
        self.per = per
        self.groups = ("rater", "attribute") if per == "attribute" else ("rater",)
        self.model = BradleyTerry(comparisons, groups=self.groups, ties=ties, seed=seed)
        self.scale_groups = tuple(g for g in ("item", "attribute") if g in comparisons.columns)
        self.scale = BradleyTerry(comparisons, groups=self.scale_groups, ties=ties, seed=seed)
        self.ties = ties
        self.seed = seed

    def rater_fit(self) -> pd.DataFrame:
        """Infit/outfit per rater under the per-(item, attribute) model at its posterior mode."""
        from .misfit import expected_first, rater_fit
        from .ml import fit_ml_design

        est = fit_ml_design(self.scale.design, ridge=1.0)
        p = expected_first(self.scale.data, self.scale.design, est.alpha, est.alpha0)
        return rater_fit(self.scale.data, p).drop(columns=["n_judgements"])

    def fit(
        self, *, chains: int = 4, warmup: int = 1000, draws: int = 1000, progress: bool = False
    ) -> RaterResults:
        res = self.model.fit(chains=chains, warmup=warmup, draws=draws, progress=progress)
        gr = res.groups.copy()
        gr["flagged"] = (gr["alpha0_hdi_low"] > 0) | (gr["alpha0_hdi_high"] < 0)
        data = self.model.data
        decided = data[data["outcome"] != "tie"] if "outcome" in data.columns else data
        per_rater = pd.DataFrame(
            {
                "n_comparisons": data.groupby("rater").size(),
                "pct_first": 100 * decided.groupby("rater")["w_first"].mean(),
            }
        )
        # the most extreme group of each rater represents it
        extreme = gr.loc[gr.groupby("rater")["alpha0_mean"].apply(lambda s: s.abs().idxmax())]
        agg = gr.groupby("rater").agg(
            n_ties=("n_ties", "sum"), n_groups=("flagged", "size"), n_flagged=("flagged", "sum")
        )
        raters = (
            extreme.set_index("rater")[
                ["alpha0_mean", "alpha0_sd", "alpha0_hdi_low", "alpha0_hdi_high", "alpha0_rhat"]
            ]
            .join(agg)
            .join(per_rater)
            .reset_index()
        )
        raters["flagged"] = raters["n_flagged"] > 0
        raters = raters.merge(self.rater_fit(), on="rater", how="left")
        raters = raters[
            [
                "rater",
                "n_comparisons",
                "n_ties",
                "pct_first",
                "alpha0_mean",
                "alpha0_sd",
                "alpha0_hdi_low",
                "alpha0_hdi_high",
                "alpha0_rhat",
                "n_groups",
                "n_flagged",
                "flagged",
                "infit",
                "infit_t",
                "outfit",
                "outfit_t",
                "misfit",
                "overfit",
                "infit_above_2sd",
            ]
        ].sort_values("rater", ignore_index=True)
        return RaterResults(
            raters=raters,
            groups=gr,
            fit=res,
            per=self.per,
            params={"per": self.per, "ties": self.ties, "seed": self.seed, **res.params},
        )
