"""Bayesian Bradley-Terry with an order effect, one model per (item, attribute), sampled together.

For every group ``g`` (by default an (item, attribute) pair: the design of Tack & Piech 2022) and
every comparison of agent ``i`` shown first with agent ``j`` shown second,

    P(first preferred) = logistic(alpha0_g + alpha_{g,i} - alpha_{g,j}),
    alpha_{g,k} ~ N(0, 1),  alpha0_g ~ N(0, 1)                       (paper, Eq. 2)

(Bradley & Terry 1952; the intercept ``alpha0`` is the "home-field" advantage of the first
position).  The groups share no parameter, so their joint posterior is the product of the per-group
posteriors; we sample that product with one NUTS run (numpyro) instead of one run per group.  Two
choices make that fast:

* **sufficient statistics over the observed pairs** -- the likelihood only depends on the
  (weighted) counts of wins of the first and of the second option for each ordered pair of agents
  that was compared in a group, so the design keeps one row per observed ``(group, first,
  second)`` (:class:`Design`: ``pair_*`` arrays) and each gradient gathers the abilities at those
  pairs: O(observed pairs) time and memory, never a dense agents x agents array per group (1,000
  agents compared 20,000 times is 20,000 rows, not 10^6 cells -- or 10^9 for a dense pair basis);
* **an orthonormal (Helmert) rotation** of each group's abilities, ``alpha_g = H^T z_g`` with
  ``z_g ~ N(0, I)`` -- exactly the same prior, because ``H`` is orthogonal.  The common shift of a
  group's abilities is not informed by the data; after the rotation it is one coordinate whose
  posterior is its prior, no longer correlated with the contrasts, which halves NUTS's leapfrog
  steps per iteration.  ``H^T z`` is applied in O(agents) by cumulative sums
  (:func:`helmert_apply`), never as a matrix.

Per (group, agent) we report the posterior mean, s.d. and 95% HDI of alpha, of its rank among the
group's agents (1 = best) and of its softmax probability; per group alpha0; ArviZ's rank-normalised
split R-hat and bulk and tail ESS of every alpha and alpha0 (a warning above R-hat 1.01 or below
ESS 400).  ``results.to_inference_data()`` gives the draws as an ArviZ ``InferenceData``.  Ties are
resolved beforehand (see :func:`edueval.pairwise.comparisons.resolve_ties`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from ..defaults import MIN_COMPARISONS, SEED
from ..io import InputError
from ..results import RunResults
from ..tables import takes_tables
from ._sampler import (
    ESS_MIN,
    RHAT_MAX,
    Draws,
    ess,
    ess_tail,
    hdi,
    inference_data,
    jax_modules,
    rhat,
    run_nuts,
)
from .comparisons import COMPARISONS, resolve_ties, validate_comparisons
from .design import Design, agent_table, build_design, tidy_rows

__all__ = [
    "ESS_MIN",
    "RHAT_MAX",
    "BradleyTerry",
    "BradleyTerryResults",
    "Design",
    "build_design",
    "helmert",
    "helmert_apply",
    "nuts_seed",
    "group_labels",
    "pair_indices",
    "tidy_rows",
]


def helmert(k: int) -> np.ndarray:
    """The ``k x k`` orthonormal Helmert matrix; row 0 is the constant vector / sqrt(k)."""
    h = np.zeros((k, k))
    h[0] = 1.0 / np.sqrt(k)
    for r in range(1, k):
        h[r, :r] = 1.0
        h[r, r] = -float(r)
        h[r] /= np.sqrt(r * (r + 1))
    return h


def helmert_apply(z, xp: Any = np):
    """``z @ helmert(k)`` over the last axis of ``z`` (``k`` = its length) in O(k), without the
    matrix: the abilities ``alpha = H^T z`` of Helmert coordinates ``z``.  ``xp`` is ``numpy`` or
    ``jax.numpy`` (the sampler differentiates through it).

    Row ``r >= 1`` of ``H`` is ``(1, ..., 1, -r, 0, ..., 0) / sqrt(r (r + 1))`` (``r`` ones), so
    with ``c_r = z_r / sqrt(r (r + 1))``: ``alpha_k = z_0 / sqrt(k) + sum_{r > k} c_r - k c_k``."""
    k = z.shape[-1]
    r = xp.arange(1, k, dtype=z.dtype)
    c = z[..., 1:] / xp.sqrt(r * (r + 1))
    later = xp.cumsum(c[..., ::-1], axis=-1)[..., ::-1]  # later[m] = sum_{r > m} c_r
    zero = xp.zeros_like(z[..., :1])
    return (
        z[..., :1] / np.sqrt(k)
        + xp.concatenate([later, zero], axis=-1)
        - xp.concatenate([zero, r * c], axis=-1)
    )


def nuts_seed(seed: int | None) -> int:
    """The sampler's seed, an independent stream derived from the run's seed (ties use another)."""
    from ..seeding import DEFAULT_SEED

    s = DEFAULT_SEED if seed is None else int(seed)
    return int(np.random.SeedSequence([s, 7]).generate_state(1)[0])


def pair_indices(design: Design) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where each observed pair reads its parameters: the group (for ``alpha0``) and the
    positions of the first- and second-shown agents in the flattened ``(G, K)`` abilities."""
    k = len(design.agents)
    g = design.pair_group.astype(np.int64)
    return g, g * k + design.pair_first, g * k + design.pair_second


def _bt_model(n, w2, group, first, second, *, n_groups: int, n_agents: int):
    """numpyro model over the observed pairs.  Per pair ``p``: ``n[p]`` its comparison weight,
    ``w2[p]`` the wins of the second-shown agent, ``group[p]`` its group and ``first[p]``,
    ``second[p]`` the flat indices of its agents in the ``(n_groups, n_agents)`` abilities
    (:func:`pair_indices`)."""
    jax, numpyro = jax_modules()
    import jax.numpy as jnp
    import numpyro.distributions as dist

    G, K = n_groups, n_agents
    # theta[:, :K] = z (Helmert coordinates of alpha), theta[:, K] = alpha0; all N(0, 1).
    theta = numpyro.sample("theta", dist.Normal(0.0, 1.0).expand([G, K + 1]).to_event(2))
    alpha = helmert_apply(theta[:, :K], jnp).reshape(-1)
    x = theta[:, K][group] + alpha[first] - alpha[second]  # alpha0 + alpha_first - alpha_second
    # W1 log s(x) + W2 log s(-x) = -(W1 + W2) softplus(-x) - W2 x: one transcendental per pair.
    numpyro.factor("loglik", -jnp.sum(n * jax.nn.softplus(-x)) - jnp.sum(w2 * x))


def model_args(design: Design) -> tuple[Any, ...]:
    """The arguments of :func:`_bt_model` for ``design`` (float32 weights, int32 indices)."""
    _, _ = jax_modules()
    import jax.numpy as jnp

    g, first, second = pair_indices(design)
    return (
        jnp.asarray(design.pair_w1 + design.pair_w2, dtype=jnp.float32),
        jnp.asarray(design.pair_w2, dtype=jnp.float32),
        jnp.asarray(g, dtype=jnp.int32),
        jnp.asarray(first, dtype=jnp.int32),
        jnp.asarray(second, dtype=jnp.int32),
    )


def sample_design(
    design: Design,
    *,
    chains: int = 4,
    warmup: int = 1000,
    draws: int = 1000,
    seed: int = 0,
    target_accept: float = 0.8,
    progress: bool = False,
) -> tuple[np.ndarray, np.ndarray, Draws]:
    """NUTS on all groups at once; returns ``alpha`` (chain, draw, G, K), ``alpha0`` (chain, draw,
    G) and the raw :class:`Draws`."""
    K = len(design.agents)
    d = run_nuts(
        partial(_bt_model, n_groups=design.n_groups, n_agents=K),
        *model_args(design),
        chains=chains,
        warmup=warmup,
        draws=draws,
        seed=seed,
        target_accept=target_accept,
        progress=progress,
    )
    theta = d.samples.pop("theta").astype(np.float64)
    alpha = helmert_apply(theta[..., :K])
    return alpha, theta[..., K], d


def design_block(design: Design, rows: slice) -> Design:
    """The groups ``rows`` (a slice with step 1) of ``design`` (same agents), one independent
    block of models."""
    start, stop, step = rows.indices(design.n_groups)
    if step != 1:
        raise ValueError("design_block takes consecutive groups (a slice with step 1)")
    lo, hi = np.searchsorted(design.pair_group, [start, stop])
    return replace(
        design,
        keys=design.keys.iloc[rows].reset_index(drop=True),
        pair_group=design.pair_group[lo:hi] - start,
        pair_first=design.pair_first[lo:hi],
        pair_second=design.pair_second[lo:hi],
        pair_w1=design.pair_w1[lo:hi],
        pair_w2=design.pair_w2[lo:hi],
        present=design.present[rows],
        n_comparisons=design.n_comparisons[rows],
        n_ties=design.n_ties[rows],
        n_agent=design.n_agent[rows],
    )


def _sample_block(design: Design, kwargs: dict) -> tuple[np.ndarray, np.ndarray, Draws]:
    """One task: NUTS on one block of groups (module level, for Dask workers)."""
    return sample_design(design, **kwargs)


def sample_blocks(
    design: Design,
    groups_per_task: int,
    *,
    seed: int,
    executor=None,
    **kwargs: Any,
) -> tuple[np.ndarray, np.ndarray, Draws]:
    """NUTS on consecutive blocks of ``groups_per_task`` groups (in the design's sorted order),
    each block an independent run and task on ``executor`` with its own seed from
    ``SeedSequence(seed).spawn``.  NUTS adapts one step size per run, so a block's draws depend
    on which groups share it: the blocks are fixed by ``groups_per_task`` alone, never by the
    number of workers, and the result is the same in process and on any cluster.
    ``groups_per_task = 0`` samples all groups in one run (:func:`sample_design`)."""
    from ..executor import InProcess
    from ..seeding import task_seeds

    if groups_per_task <= 0 or groups_per_task >= design.n_groups:
        tasks = [(design, {**kwargs, "seed": seed})]
    else:
        starts = range(0, design.n_groups, groups_per_task)
        seeds = task_seeds(seed, len(starts))
        tasks = [
            (design_block(design, slice(a, a + groups_per_task)), {**kwargs, "seed": s})
            for a, s in zip(starts, seeds, strict=True)
        ]
    parts = (executor or InProcess()).map(_sample_block, tasks)
    if len(parts) == 1:
        return parts[0]
    alpha = np.concatenate([p[0] for p in parts], axis=2)
    alpha0 = np.concatenate([p[1] for p in parts], axis=2)
    first = parts[0][2]
    draws = replace(
        first,
        diverging=np.stack([p[2].diverging for p in parts], axis=-1),
        num_steps=np.stack([p[2].num_steps for p in parts], axis=-1),
        seed=seed,
        seconds=sum(p[2].seconds for p in parts),
        info={**first.info, "blocks": len(parts), "groups_per_task": groups_per_task},
    )
    return alpha, alpha0, draws


def group_labels(keys: pd.DataFrame) -> list[str]:
    """One label per group: its key columns joined with ``/`` (e.g. ``item7/understanding``)."""
    return ["/".join(map(str, row)) for row in keys.itertuples(index=False)]


def _ranks_and_probs(flat: np.ndarray, present: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per draw: rank among the group's agents (1 = highest alpha) and softmax probability."""
    masked = np.where(present[None], flat, -np.inf)
    order = np.argsort(-masked, axis=-1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, flat.shape[-1] + 1)[None, None, :], axis=-1)
    shifted = masked - masked.max(axis=-1, keepdims=True)
    e = np.where(present[None], np.exp(shifted), 0.0)
    probs = e / e.sum(axis=-1, keepdims=True)
    return ranks.astype(float), probs


def summarize_draws(
    design: Design, alpha: np.ndarray, alpha0: np.ndarray, *, prob: float = 0.95
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The abilities table (one row per group and agent present) and the groups table."""
    C, D, G, K = alpha.shape
    flat = alpha.reshape(C * D, G, K)
    ranks, probs = _ranks_and_probs(flat, design.present)
    a_lo, a_hi = hdi(flat, prob)
    r_lo, r_hi = hdi(ranks, prob)
    p_lo, p_hi = hdi(probs, prob)
    a_rhat, a_bulk, a_tail = rhat(alpha), ess(alpha), ess_tail(alpha)
    gi, ki = np.nonzero(design.present)
    wins = design.wins  # weighted wins of agent k in group g
    ab = design.keys.iloc[gi].reset_index(drop=True)
    ab["agent"] = design.agents[ki]
    ab["n_comparisons"] = design.n_agent[gi, ki]
    ab["wins"] = wins[gi, ki]
    ab["alpha_mean"] = flat.mean(axis=0)[gi, ki]
    ab["alpha_sd"] = flat.std(axis=0, ddof=1)[gi, ki]
    # s.d. of the ability relative to the group's mean ability (sum-to-zero identification, as the
    # ML standard errors): the common shift, which no comparison informs, is left out
    k_present = np.maximum(design.present.sum(axis=1), 1)
    centre = (
        np.where(design.present[None], flat, 0.0).sum(axis=-1, keepdims=True)
        / k_present[None, :, None]
    )
    ab["alpha_se"] = (flat - centre).std(axis=0, ddof=1)[gi, ki]
    ab["alpha_hdi_low"] = a_lo[gi, ki]
    ab["alpha_hdi_high"] = a_hi[gi, ki]
    ab["rank_mean"] = ranks.mean(axis=0)[gi, ki]
    ab["rank_hdi_low"] = r_lo[gi, ki]
    ab["rank_hdi_high"] = r_hi[gi, ki]
    ab["prob_mean"] = probs.mean(axis=0)[gi, ki]
    ab["prob_hdi_low"] = p_lo[gi, ki]
    ab["prob_hdi_high"] = p_hi[gi, ki]
    ab["rhat"] = a_rhat[gi, ki]
    ab["ess_bulk"] = a_bulk[gi, ki]
    ab["ess_tail"] = a_tail[gi, ki]

    f0 = alpha0.reshape(C * D, G)
    z_lo, z_hi = hdi(f0, prob)
    gr = design.keys.copy()
    gr["n_comparisons"] = design.n_comparisons
    gr["n_ties"] = design.n_ties
    gr["n_agents"] = design.present.sum(axis=1)
    gr["alpha0_mean"] = f0.mean(axis=0)
    gr["alpha0_sd"] = f0.std(axis=0, ddof=1)
    gr["alpha0_hdi_low"] = z_lo
    gr["alpha0_hdi_high"] = z_hi
    gr["alpha0_rhat"] = rhat(alpha0)
    gr["alpha0_ess_bulk"] = ess(alpha0)
    gr["alpha0_ess_tail"] = ess_tail(alpha0)
    masked_rhat = np.where(design.present, a_rhat, -np.inf)
    gr["max_rhat"] = np.maximum(masked_rhat.max(axis=1), gr["alpha0_rhat"].to_numpy())
    for kind, a_ess in (("bulk", a_bulk), ("tail", a_tail)):
        masked = np.where(design.present, a_ess, np.inf).min(axis=1)
        gr[f"min_ess_{kind}"] = np.minimum(masked, gr[f"alpha0_ess_{kind}"].to_numpy())
    return ab, gr


@dataclass
class BradleyTerryResults(RunResults):
    """Posterior summaries of a :class:`BradleyTerry` fit (statsmodels-style results object).

    Attributes
    ----------
    abilities : one row per (group, agent): ``alpha_*`` (mean, sd, HDI), ``rank_*``, ``prob_*``,
        ``rhat``, ``ess_bulk``, ``ess_tail`` (ArviZ), ``n_comparisons``, ``wins``.
    groups : one row per group: comparisons, ties, ``alpha0_*``, ``max_rhat``, ``min_ess_bulk``,
        ``min_ess_tail``.
    skipped : groups left out for having fewer than ``min_comparisons`` comparisons.
    alpha, alpha0 : the draws, ``(chain, draw, group, agent)`` and ``(chain, draw, group)`` (kept
        unless ``fit(keep_draws=False)``); :meth:`to_inference_data` labels them for ArviZ.
    """

    abilities: pd.DataFrame
    groups: pd.DataFrame
    design: Design
    draws: Draws
    ties: str
    skipped: pd.DataFrame
    params: dict[str, Any] = field(default_factory=dict)
    alpha: np.ndarray | None = field(default=None, repr=False)  # (chain, draw, G, K)
    alpha0: np.ndarray | None = field(default=None, repr=False)
    #: per rater: infit/outfit at the posterior means (:mod:`.misfit`), worst infit first
    raters: pd.DataFrame | None = None
    method: str = "nuts"
    #: raters whose comparisons were left out before the fit (``pairwise fit``'s
    #: ``exclude_raters``), for results.json's ``n_excluded_raters``
    excluded_raters: list[str] = field(default_factory=list)

    _writer = "edueval.pairwise.pipeline:save_fit"

    @property
    def max_rhat(self) -> float:
        return float(self.groups["max_rhat"].max())

    @property
    def min_ess_bulk(self) -> float:
        return float(self.groups["min_ess_bulk"].min())

    @property
    def min_ess_tail(self) -> float:
        return float(self.groups["min_ess_tail"].min())

    @property
    def min_ess(self) -> float:
        """The smallest bulk or tail ESS of any alpha or alpha0."""
        return min(self.min_ess_bulk, self.min_ess_tail)

    @property
    def n_rhat_above(self) -> int:
        """Number of parameters (alpha and alpha0) with R-hat above 1.01."""
        return int(
            (self.abilities["rhat"] > RHAT_MAX).sum()
            + (self.groups["alpha0_rhat"] > RHAT_MAX).sum()
        )

    @property
    def n_ess_below(self) -> int:
        """Number of parameters (alpha and alpha0) with a bulk or tail ESS below 400."""
        ab, gr = self.abilities, self.groups
        return int(
            ((ab["ess_bulk"] < ESS_MIN) | (ab["ess_tail"] < ESS_MIN)).sum()
            + ((gr["alpha0_ess_bulk"] < ESS_MIN) | (gr["alpha0_ess_tail"] < ESS_MIN)).sum()
        )

    @property
    def n_divergent(self) -> int:
        return self.draws.n_divergent

    def headline(self) -> dict[str, Any]:
        from .quality import fit_headline

        return fit_headline(self, "nuts")

    def diagnostics(self) -> dict[str, Any]:
        return {
            "max_rhat": self.max_rhat,
            "min_ess": self.min_ess,
            "min_ess_bulk": self.min_ess_bulk,
            "min_ess_tail": self.min_ess_tail,
            "n_rhat_above_1.01": self.n_rhat_above,
            "n_ess_below_400": self.n_ess_below,
            "n_divergent": self.n_divergent,
            "mean_leapfrog_steps": float(self.draws.num_steps.mean()),
            "chains": self.draws.chains,
            "warmup": self.draws.warmup,
            "draws": self.draws.draws,
            "chain_method": self.draws.chain_method,
            "sampling_seconds": self.draws.seconds,
        }

    def _worst(self, column: str, largest: bool) -> str:
        row = self.groups.sort_values(column).iloc[-1 if largest else 0]
        return ", ".join(f"{g}={row[g]!r}" for g in self.design.groups)

    def warnings(self) -> list[str]:
        """Convergence warnings: R-hat > 1.01, bulk or tail ESS < 400, divergences."""
        out = []
        if self.n_rhat_above:
            out.append(
                f"{self.n_rhat_above} parameter(s) with R-hat > {RHAT_MAX} (worst "
                f"{self.max_rhat:.3f} at {self._worst('max_rhat', True)}); run more draws "
                "(draws=/warmup=) before trusting them"
            )
        if self.n_ess_below:
            column = "min_ess_bulk" if self.min_ess_bulk <= self.min_ess_tail else "min_ess_tail"
            out.append(
                f"{self.n_ess_below} parameter(s) with ESS < {ESS_MIN} (min bulk "
                f"{self.min_ess_bulk:.0f}, tail {self.min_ess_tail:.0f}, at "
                f"{self._worst(column, False)}); means and HDIs are imprecise: run more draws"
            )
        if self.n_divergent:
            out.append(
                f"{self.n_divergent} divergent transition(s) after warm-up; the posterior may be "
                "biased"
            )
        return out

    def to_inference_data(self):
        """The posterior as an ArviZ ``InferenceData``: ``alpha`` (chain, draw, group, agent) and
        ``alpha0`` (chain, draw, group), with the agents and the groups as coordinates (``group``
        labels join the group columns with ``/``; each group column is also a coordinate along
        ``group``), and the sample stats ``diverging`` and ``n_steps``.  An agent absent from a
        group keeps its prior draws there (no comparison informs it).  Needs the draws
        (``fit(keep_draws=True)``, the default)."""
        if self.alpha is None or self.alpha0 is None:
            raise ValueError("the draws were not kept: fit with keep_draws=True")
        return inference_data(
            {"alpha": self.alpha, "alpha0": self.alpha0},
            dims={"alpha": ["group", "agent"], "alpha0": ["group"]},
            coords={
                "group": group_labels(self.design.keys),
                "agent": [str(a) for a in self.design.agents],
            },
            draws=self.draws,
            group_coords=self.design.keys,
            attrs={"model": "Bradley-Terry with order effect", "ties": self.ties},
        )

    def agent_table(self, by: Sequence[str] | None = None) -> pd.DataFrame:
        """Per agent (and ``by`` columns): groups, mean alpha, % alpha > 0, % HDI excluding 0."""
        by = list(by or [c for c in self.design.groups if c != "item"][:1])
        return agent_table(self.abilities, by, low="alpha_hdi_low", high="alpha_hdi_high",
                           excl="pct_hdi_excludes_0", rank="rank_mean")  # fmt: skip

    def to_frame(self) -> pd.DataFrame:
        """Tidy rows: the group columns, ``agent, measure, value, ci_low, ci_high`` -- per group
        and agent the posterior means of ``alpha``, ``rank`` and ``prob`` with their 95% HDI,
        then per group ``alpha0`` (``agent`` empty)."""
        keys = list(self.design.groups)
        ab = tidy_rows(
            self.abilities,
            [*keys, "agent"],
            {m: (f"{m}_mean", f"{m}_hdi_low", f"{m}_hdi_high") for m in ("alpha", "rank", "prob")},
        )
        gr = tidy_rows(
            self.groups.assign(agent=None),
            [*keys, "agent"],
            {"alpha0": ("alpha0_mean", "alpha0_hdi_low", "alpha0_hdi_high")},
        )
        return pd.concat([ab, gr], ignore_index=True)

    def summary(self) -> str:
        """A plain-text summary: the fit, its diagnostics and per-agent aggregates."""
        d = self.diagnostics()
        lines = [
            "Bayesian Bradley-Terry with order effect (NUTS, numpyro)",
            "=" * 72,
            f"groups ({' x '.join(self.design.groups)}): {len(self.groups)}"
            + (f"   skipped: {len(self.skipped)}" if len(self.skipped) else ""),
            f"agents: {', '.join(map(str, self.design.agents))}",
            f"comparisons: {int(self.groups['n_comparisons'].sum())}   ties: {self.ties} "
            f"({int(self.groups['n_ties'].sum())} in the input)",
            f"chains x (warm-up + draws): {d['chains']} x ({d['warmup']} + {d['draws']}), "
            f"{d['chain_method']}, {d['sampling_seconds']:.1f} s",
            f"max R-hat {d['max_rhat']:.4f}   min ESS bulk {d['min_ess_bulk']:.0f}, tail "
            f"{d['min_ess_tail']:.0f}   divergences {d['n_divergent']}   mean leapfrog steps "
            f"{d['mean_leapfrog_steps']:.1f}",
            f"order effect alpha0: mean over groups {self.groups['alpha0_mean'].mean():+.3f}; "
            f"95% HDI excludes 0 in {int(((self.groups['alpha0_hdi_low'] > 0) | (self.groups['alpha0_hdi_high'] < 0)).sum())} group(s)",
        ]
        if "ssr" in self.groups.columns:
            lines.append(
                f"SSR median {self.groups['ssr'].median():.3f}   split-half (raters) median "
                f"{self.groups['split_half'].median():.3f}"
            )
        if self.raters is not None:
            lines.append(
                f"raters: {len(self.raters)}, misfitting (infit t > 2): "
                f"{int(self.raters['misfit'].sum())}"
            )
        lines += [
            "-" * 72,
            self.agent_table().to_string(index=False, float_format=lambda v: f"{v:.3f}"),
        ]
        for w in self.warnings():
            lines.append(f"warning: {w}")
        return "\n".join(lines)

    def __str__(self) -> str:  # pragma: no cover - convenience
        return self.summary()


class BradleyTerry:
    """Model specification: comparisons, grouping and tie handling; :meth:`fit` samples it.

    Parameters
    ----------
    comparisons : DataFrame with ``item, attribute, rater, first, second, outcome`` (or the group
        columns named in ``groups``).
    groups : columns that define one independent model (default: item and attribute).
    ties : ``random`` (seeded coin flip), ``drop`` or ``half`` (weighted likelihood).
    seed : the run's seed; the tie flips and the sampler use two independent streams derived from it.
    min_comparisons : groups with fewer comparisons (after tie handling) are left out and listed in
        ``results.skipped``; leaving out every group is an error.

    Examples
    --------
    >>> res = BradleyTerry(df, ties="drop", seed=1).fit(chains=4, warmup=1000, draws=1000)
    >>> print(res.summary()); res.abilities.head()
    """

    @takes_tables(comparisons=COMPARISONS)
    def __init__(
        self,
        comparisons: pd.DataFrame,
        *,
        groups: Sequence[str] = ("item", "attribute"),
        ties: str = "random",
        seed: int | None = SEED,
        min_comparisons: int = MIN_COMPARISONS,
        agents: Sequence[str] | None = None,
    ) -> None:
        self.groups = tuple(groups)
        self.ties = ties
        self.seed = seed
        self.min_comparisons = int(min_comparisons)
        if "w_first" in comparisons.columns and "w_second" in comparisons.columns:
            base = resolved = comparisons
        else:
            base = validate_comparisons(comparisons)
            resolved = resolve_ties(base, ties, seed=seed)
        source = comparisons.attrs.get("file")
        if len(resolved) == 0:
            raise InputError(
                "no comparisons left to fit" + (" after dropping ties" if ties == "drop" else ""),
                file=source,
            )
        keys = list(self.groups)
        tie_flag = (base["outcome"] == "tie") if "outcome" in base.columns else base["tie"]
        n_ties = tie_flag.groupby([base[k] for k in keys], sort=True).sum().astype(int)
        counts = resolved.groupby(keys, sort=True).size().reindex(n_ties.index, fill_value=0)
        small = counts[counts < max(self.min_comparisons, 1)]
        if len(small) == len(counts):
            raise InputError(
                f"every {' x '.join(self.groups)} group has fewer than {self.min_comparisons} "
                "comparisons (min_comparisons=); nothing to fit",
                file=source,
            )
        self.skipped = small.rename("n_comparisons").reset_index()
        if len(small):
            drop = pd.MultiIndex.from_frame(resolved[keys]).isin(small.index)
            resolved = resolved[~drop]
        self.data = resolved
        self.design = build_design(resolved, self.groups, agents=agents, n_ties=n_ties)

    def fit(
        self,
        *,
        chains: int = 4,
        warmup: int = 1000,
        draws: int = 1000,
        target_accept: float = 0.8,
        progress: bool = False,
        keep_draws: bool = True,
        groups_per_task: int = 0,
        executor=None,
        split_half_repeats: int = 20,
    ) -> BradleyTerryResults:
        """Sample every group's posterior with NUTS and summarise: all groups in one run, or
        with ``groups_per_task`` > 0 in blocks of that many groups, each block a task on
        ``executor`` (:func:`sample_blocks`).  ``keep_draws=False`` lets the draws go once
        summarised (no :meth:`BradleyTerryResults.to_inference_data`)."""
        alpha, alpha0, d = sample_blocks(
            self.design,
            groups_per_task,
            seed=nuts_seed(self.seed),
            executor=executor,
            chains=chains,
            warmup=warmup,
            draws=draws,
            target_accept=target_accept,
            progress=progress,
        )
        ab, gr = summarize_draws(self.design, alpha, alpha0)
        from .quality import assess

        # fit statistics at the posterior means; split halves fitted at the posterior mode of
        # the same model (ridge 1 = the N(0, 1) priors)
        ab, gr, raters = assess(
            self.data,
            self.design,
            alpha.mean(axis=(0, 1)),
            alpha0.mean(axis=(0, 1)),
            ab,
            gr,
            seed=self.seed,
            repeats=split_half_repeats,
            ridge=1.0,
        )
        return BradleyTerryResults(
            abilities=ab,
            groups=gr,
            design=self.design,
            draws=d,
            ties=self.ties,
            skipped=self.skipped,
            params={
                "groups": list(self.groups),
                "ties": self.ties,
                "seed": self.seed,
                "min_comparisons": self.min_comparisons,
                "chains": chains,
                "warmup": warmup,
                "draws": draws,
                "target_accept": target_accept,
                "groups_per_task": groups_per_task,
                "split_half_repeats": split_half_repeats,
                "executor": executor.describe() if executor is not None else None,
            },
            alpha=alpha if keep_draws else None,
            alpha0=alpha0 if keep_draws else None,
            raters=raters,
        )

    def fit_ml(
        self, *, ridge: float = 0.0, order_effect: bool = True, split_half_repeats: int = 20
    ):
        """Maximum-likelihood (``ridge`` > 0: MAP) fit of every group in seconds, with standard
        errors, fit statistics and reliabilities: :class:`edueval.pairwise.ml_fit.MLResults`."""
        from .ml_fit import fit_ml

        return fit_ml(
            self,
            ridge=ridge,
            order_effect=order_effect,
            split_half_repeats=split_half_repeats,
        )
