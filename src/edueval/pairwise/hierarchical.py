"""A pooled hierarchical Bradley-Terry model: agent-level means with item-level deviations.

The paper fits every (item, attribute) separately and then compares agents by an ANOVA/Tukey test
on the per-item posterior means, which ignores the uncertainty of each mean and shrinks every item
towards 0 by its own N(0, 1) prior.  Here, per attribute ``a``, item ``l`` and agent ``k``:

    alpha_{a,l,k} = mu_{a,k} + sigma_a * u_{a,l,k},     u ~ N(0, 1)
    mu_{a,k} ~ N(0, 1),   sigma_a ~ HalfNormal(1),   alpha0_{a,l} ~ N(0, 1)
    P(first preferred) = logistic(alpha0_{a,l} + alpha_{a,l,first} - alpha_{a,l,second})

so the agent differences ``mu_{a,k} - mu_{a,k'}`` -- e.g. Teacher - Blender -- come with their own
credible intervals, and items borrow strength from each other through ``sigma_a``.

Sampling.  Write every agent vector in Helmert coordinates (:func:`.bradley_terry.helmert`; the
isotropic priors are unchanged by the rotation): coordinate 0 is the common level of the agents,
coordinates 1..K-1 the contrasts.  The likelihood depends on contrasts only, so the level
coordinates of ``mu`` and of every item are exactly their priors, independent of everything else:
we leave them out of the sampler (they would only add prior noise to absolute levels, which no
comparison can inform).  On the contrasts the model is sampled centred, ``z_{a,l} ~ N(m_a,
sigma_a^2 I)`` (``parametrization="centred"``, the default: with ~30 comparisons per item the
data pin each item down and the centred form mixed best -- on the AI Teacher Test, 15 leapfrog
steps per iteration and ESS > 5,000 of 4,000 draws for the differences, against 31 steps and
ESS ~1,600 non-centred); ``"non-centred"`` (``z = m + sigma * v``, ``v ~ N(0, 1)``) suits
sparse data.  All attributes are sampled in one NUTS run.

Reported: differences of ``mu`` (identified), ``mu`` centred on the attribute's agent average,
``sigma``, and each item's abilities centred on that item's agent average (the identified part),
each with ArviZ's rank-normalised R-hat and bulk and tail ESS; ``results.to_inference_data()``
gives these draws (and ``alpha0``) to ArviZ.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from ..defaults import SEED
from ..results import RunResults
from ..tables import takes_tables
from ._sampler import (
    ESS_MIN,
    RHAT_MAX,
    Draws,
    diagnostic_warnings,
    ess,
    ess_tail,
    hdi,
    inference_data,
    jax_modules,
    rhat,
    run_nuts,
)
from .bradley_terry import (
    BradleyTerry,
    Design,
    group_labels,
    helmert_apply,
    model_args,
    nuts_seed,
    tidy_rows,
)
from .comparisons import COMPARISONS

__all__ = ["HierarchicalBradleyTerry", "HierarchicalResults"]


def _hier_model(n, w2, group, first, second, e, *, n_agents: int, centred: bool = True):
    """Per observed ordered pair of agents in an (attribute, item) group, as in
    :func:`.bradley_terry._bt_model`: ``n`` its comparison weight, ``w2`` the wins of the
    second-shown agent, ``group`` its group, ``first``/``second`` the flat indices of its agents
    in the ``(G, n_agents)`` abilities; ``e`` (G, A): one-hot attribute of each group.  ``z``
    holds the Helmert contrasts (coordinates 1..K-1) of each group's abilities."""
    jax, numpyro = jax_modules()
    import jax.numpy as jnp
    import numpyro.distributions as dist

    G, A = e.shape
    C = n_agents - 1
    m = numpyro.sample("m", dist.Normal(0.0, 1.0).expand([A, C]).to_event(2))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0).expand([A]).to_event(1))
    loc, scale = e @ m, (e @ sigma)[:, None]
    if centred:
        z = numpyro.sample("z", dist.Normal(loc, scale).to_event(2))
    else:
        v = numpyro.sample("v", dist.Normal(0.0, 1.0).expand([G, C]).to_event(2))
        z = loc + scale * v
    a0 = numpyro.sample("alpha0", dist.Normal(0.0, 1.0).expand([G]).to_event(1))
    # abilities with the common level (Helmert coordinate 0) left out: it cancels in every pair
    alpha = helmert_apply(jnp.concatenate([jnp.zeros_like(z[:, :1]), z], axis=1), jnp)
    alpha = alpha.reshape(-1)
    x = a0[group] + alpha[first] - alpha[second]
    numpyro.factor("loglik", -jnp.sum(n * jax.nn.softplus(-x)) - jnp.sum(w2 * x))


@dataclass
class HierarchicalResults(RunResults):
    """Agent means and differences per attribute (statsmodels-style results object).

    Attributes
    ----------
    differences : per attribute and pair of agents ``a - b``: posterior mean, s.d., 95% HDI and
        P(a > b) of ``mu_a - mu_b``; ``rhat``, ``ess_bulk`` and ``ess_tail`` (ArviZ; also in
        ``sigma`` and ``items``).
    agents : per attribute and agent: ``mu`` centred on the attribute's agent average (mean, HDI).
    sigma : per attribute: the s.d. of item-level deviations.
    items : per (attribute, item, agent): the partially pooled alpha, centred on the item's agent
        average (mean, HDI).
    """

    differences: pd.DataFrame
    agents: pd.DataFrame
    sigma: pd.DataFrame
    items: pd.DataFrame
    draws: Draws
    params: dict[str, Any] = field(default_factory=dict)
    #: the draws behind the tables (chain, draw, ...): ``mu`` (attribute, agent) and ``alpha``
    #: (group, agent), both centred; ``None`` when not kept
    mu: np.ndarray | None = field(default=None, repr=False)
    alpha: np.ndarray | None = field(default=None, repr=False)
    design: Design | None = field(default=None, repr=False)
    #: raters whose comparisons were left out before the fit (``exclude_raters``)
    excluded_raters: list[str] = field(default_factory=list)

    _writer = "edueval.pairwise.pipeline:save_hierarchical"

    def headline(self) -> dict[str, Any]:
        """``pairwise hierarchical``'s results.json: the differences, sigma, the diagnostics."""
        return {"differences": self.differences, "sigma": self.sigma, **self.diagnostics()}

    def diagnostics(self) -> dict[str, Any]:
        tables = (self.differences, self.sigma, self.items)
        r = np.concatenate([t["rhat"] for t in tables])
        bulk = np.concatenate([t["ess_bulk"] for t in tables])
        tail = np.concatenate([t["ess_tail"] for t in tables])
        return {
            "max_rhat": float(np.nanmax(r)),
            "min_ess": float(np.nanmin(np.minimum(bulk, tail))),
            "min_ess_bulk": float(np.nanmin(bulk)),
            "min_ess_tail": float(np.nanmin(tail)),
            "n_rhat_above_1.01": int((r > RHAT_MAX).sum()),
            "n_ess_below_400": int(((bulk < ESS_MIN) | (tail < ESS_MIN)).sum()),
            "n_divergent": self.draws.n_divergent,
            "mean_leapfrog_steps": float(self.draws.num_steps.mean()),
            "chain_method": self.draws.chain_method,
            "sampling_seconds": self.draws.seconds,
        }

    def warnings(self) -> list[str]:
        """Convergence warnings: R-hat > 1.01, bulk or tail ESS < 400, divergences."""
        d = self.diagnostics()
        out = diagnostic_warnings(
            d["max_rhat"],
            d["n_rhat_above_1.01"],
            d["min_ess_bulk"],
            d["min_ess_tail"],
            d["n_ess_below_400"],
        )
        if d["n_divergent"]:
            out.append(f"{d['n_divergent']} divergent transition(s) after warm-up")
        return out

    def to_frame(self) -> pd.DataFrame:
        """Tidy rows ``table, attribute, item, agent, measure, value, ci_low, ci_high`` with 95%
        HDIs: ``differences`` (``agent`` is ``a - b``; measures ``diff`` and ``p_a_better``),
        ``agents`` (``mu_centred``), ``sigma`` and ``items`` (``alpha_centred``); ``item`` is
        empty outside ``items`` and ``agent`` in ``sigma``."""
        ids = ["table", "attribute", "item", "agent"]
        d = self.differences.assign(
            table="differences",
            item=None,
            agent=self.differences["agent_a"] + " - " + self.differences["agent_b"],
        )
        parts = [
            tidy_rows(
                d,
                ids,
                {
                    "diff": ("diff_mean", "diff_hdi_low", "diff_hdi_high"),
                    "p_a_better": ("p_a_better", None, None),
                },
            ),
            tidy_rows(
                self.agents.assign(table="agents", item=None),
                ids,
                {"mu_centred": ("mu_centred_mean", "mu_centred_hdi_low", "mu_centred_hdi_high")},
            ),
            tidy_rows(
                self.sigma.assign(table="sigma", item=None, agent=None),
                ids,
                {"sigma": ("sigma_mean", "sigma_hdi_low", "sigma_hdi_high")},
            ),
            tidy_rows(
                self.items.assign(table="items"),
                ids,
                {
                    "alpha_centred": (
                        "alpha_centred_mean",
                        "alpha_centred_hdi_low",
                        "alpha_centred_hdi_high",
                    )
                },
            ),
        ]
        return pd.concat(parts, ignore_index=True)

    def summary(self) -> str:
        d = self.diagnostics()
        lines = [
            "Hierarchical Bradley-Terry: agent means + item deviations, per attribute (NUTS)",
            "=" * 72,
            f"max R-hat {d['max_rhat']:.4f}   min ESS bulk {d['min_ess_bulk']:.0f}, tail "
            f"{d['min_ess_tail']:.0f}   divergences {d['n_divergent']}   "
            f"{d['sampling_seconds']:.1f} s",
            "-" * 72,
            "agent differences mu_a - mu_b:",
            self.differences[
                [
                    "attribute",
                    "agent_a",
                    "agent_b",
                    "diff_mean",
                    "diff_hdi_low",
                    "diff_hdi_high",
                    "p_a_better",
                ]
            ].to_string(index=False, float_format=lambda v: f"{v:.3f}"),
            "item-level s.d. sigma:",
            self.sigma.to_string(index=False, float_format=lambda v: f"{v:.3f}"),
        ]
        lines += [f"warning: {w}" for w in self.warnings()]
        return "\n".join(lines)

    def to_inference_data(self):
        """The posterior as an ArviZ ``InferenceData``: ``mu`` (chain, draw, attribute, agent; the
        agent means centred on the attribute's average, whose differences are ``differences``),
        ``sigma`` (chain, draw, attribute), ``alpha`` (chain, draw, group, agent; each item's
        abilities centred on its average) and ``alpha0`` (chain, draw, group), with attributes,
        agents and groups (``attribute/item``; ``group_attribute`` and ``item`` along ``group``)
        as coordinates, and the sample stats ``diverging`` and ``n_steps``."""
        if self.mu is None or self.alpha is None or self.design is None:
            raise ValueError("the draws were not kept")
        des = self.design
        return inference_data(
            {
                "mu": self.mu,
                "sigma": self.draws.samples["sigma"],
                "alpha": self.alpha,
                "alpha0": self.draws.samples["alpha0"],
            },
            dims={
                "mu": ["attribute", "agent"],
                "sigma": ["attribute"],
                "alpha": ["group", "agent"],
                "alpha0": ["group"],
            },
            coords={
                "attribute": [str(a) for a in self.sigma["attribute"]],
                "agent": [str(a) for a in des.agents],
                "group": group_labels(des.keys),
            },
            draws=self.draws,
            group_coords=des.keys,
            attrs={"model": "hierarchical Bradley-Terry", "ties": str(self.params.get("ties"))},
        )


def _diagnosed(x: np.ndarray) -> dict[str, np.ndarray]:
    """R-hat and bulk and tail ESS of draws shaped ``(chain, draw, ...)``."""
    return {"rhat": rhat(x), "ess_bulk": ess(x), "ess_tail": ess_tail(x)}


def _differences_table(mu: np.ndarray, attributes: list, agents: np.ndarray) -> pd.DataFrame:
    """Per attribute and pair of agents (in the agents' order): ``mu_a - mu_b``."""
    rows, diffs = [], []
    for ai, attr in enumerate(attributes):
        for ka, kb in combinations(range(len(agents)), 2):
            diff = mu[:, :, ai, ka] - mu[:, :, ai, kb]
            lo, hi = hdi(diff.reshape(-1), 0.95)
            diffs.append(diff)
            rows.append(
                {
                    "attribute": attr,
                    "agent_a": agents[ka],
                    "agent_b": agents[kb],
                    "diff_mean": diff.mean(),
                    "diff_sd": diff.std(ddof=1),
                    "diff_hdi_low": float(lo),
                    "diff_hdi_high": float(hi),
                    "p_a_better": float((diff > 0).mean()),
                }
            )
    table = pd.DataFrame(rows)
    if rows:
        for name, values in _diagnosed(np.stack(diffs, axis=-1)).items():
            table[name] = values
    return table


def _tables(
    des: Design, attributes: list, mu: np.ndarray, sigma: np.ndarray, alpha: np.ndarray
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The differences, agents, sigma and items tables from the centred draws."""
    C, D = mu.shape[:2]
    K = len(des.agents)
    flat = mu.reshape(C * D, len(attributes), K)
    lo, hi = hdi(flat, 0.95)
    ag = pd.DataFrame(
        [
            {
                "attribute": attr,
                "agent": des.agents[k],
                "mu_centred_mean": flat[:, ai, k].mean(),
                "mu_centred_hdi_low": lo[ai, k],
                "mu_centred_hdi_high": hi[ai, k],
            }
            for ai, attr in enumerate(attributes)
            for k in range(K)
        ]
    )
    s_lo, s_hi = hdi(sigma.reshape(C * D, -1), 0.95)
    sig = pd.DataFrame(
        {
            "attribute": attributes,
            "sigma_mean": sigma.reshape(C * D, -1).mean(axis=0),
            "sigma_hdi_low": s_lo,
            "sigma_hdi_high": s_hi,
            **_diagnosed(sigma),
        }
    )
    fa = alpha.reshape(C * D, *alpha.shape[2:])
    a_lo, a_hi = hdi(fa, 0.95)
    gi, ki = np.nonzero(des.present)
    items = des.keys.iloc[gi].reset_index(drop=True)
    items["agent"] = des.agents[ki]
    items["alpha_centred_mean"] = fa.mean(axis=0)[gi, ki]
    items["alpha_centred_hdi_low"] = a_lo[gi, ki]
    items["alpha_centred_hdi_high"] = a_hi[gi, ki]
    for name, values in _diagnosed(alpha).items():
        items[name] = values[gi, ki]
    return _differences_table(mu, attributes, des.agents), ag, sig, items


class HierarchicalBradleyTerry:
    """Specification of the pooled model; :meth:`fit` samples it.

    Parameters
    ----------
    comparisons : comparisons table (``item, attribute, rater, first, second, outcome``).
    ties, seed, min_comparisons : as in :class:`~edueval.pairwise.bradley_terry.BradleyTerry`.
    agent_order : order of agents in the differences table (pairs ``a - b`` follow it; e.g.
        ``["Teacher", "blender_9B", "GPT-3 Davinci"]`` gives Teacher - Blender, Teacher - GPT-3,
        Blender - GPT-3).  Default: sorted names.
    """

    @takes_tables(comparisons=COMPARISONS)
    def __init__(
        self,
        comparisons: pd.DataFrame,
        *,
        ties: str = "random",
        seed: int | None = SEED,
        min_comparisons: int = 1,
        agent_order: Sequence[str] | None = None,
        parametrization: str = "centred",
    ) -> None:
        if parametrization not in ("centred", "non-centred"):
            raise ValueError("parametrization must be 'centred' or 'non-centred'")
        self.parametrization = parametrization
        base = BradleyTerry(
            comparisons,
            groups=("attribute", "item"),
            ties=ties,
            seed=seed,
            min_comparisons=min_comparisons,
            agents=None,
        )
        self.design: Design = base.design.reorder(agent_order) if agent_order else base.design
        self.agent_order = list(agent_order) if agent_order else None
        self.ties = ties
        self.seed = seed
        self.skipped = base.skipped

    def fit(
        self,
        *,
        chains: int = 4,
        warmup: int = 1000,
        draws: int = 1000,
        target_accept: float = 0.8,
        progress: bool = False,
    ) -> HierarchicalResults:
        _, _ = jax_modules()
        import jax.numpy as jnp

        des = self.design
        K = len(des.agents)
        attributes = sorted(des.keys["attribute"].unique())
        a_of_g = des.keys["attribute"].map({a: i for i, a in enumerate(attributes)}).to_numpy()
        e = np.eye(len(attributes))[a_of_g]
        centred = self.parametrization == "centred"
        d = run_nuts(
            partial(_hier_model, n_agents=K, centred=centred),
            *model_args(des),
            jnp.asarray(e, jnp.float32),
            chains=chains,
            warmup=warmup,
            draws=draws,
            seed=nuts_seed(self.seed),
            target_accept=target_accept,
            progress=progress,
        )
        m = d.samples.pop("m").astype(np.float64)  # (C, D, A, K-1)
        sigma = d.samples["sigma"].astype(np.float64)  # (C, D, A)
        if centred:
            z = d.samples.pop("z").astype(np.float64)  # (C, D, G, K-1)
        else:
            v = d.samples.pop("v").astype(np.float64)
            z = m[:, :, a_of_g, :] + sigma[:, :, a_of_g, None] * v
        # agent means and item abilities, centred on the attribute's / the item's average
        mu = helmert_apply(np.concatenate([np.zeros_like(m[..., :1]), m], axis=-1))
        alpha = helmert_apply(np.concatenate([np.zeros_like(z[..., :1]), z], axis=-1))
        differences, ag, sig, items = _tables(des, attributes, mu, sigma, alpha)
        return HierarchicalResults(
            differences=differences,
            agents=ag,
            sigma=sig,
            items=items,
            draws=d,
            params={
                "ties": self.ties,
                "seed": self.seed,
                "chains": chains,
                "warmup": warmup,
                "draws": draws,
                "target_accept": target_accept,
                "parametrization": self.parametrization,
                "agent_order": self.agent_order,
            },
            mu=mu,
            alpha=alpha,
            design=des,
        )
