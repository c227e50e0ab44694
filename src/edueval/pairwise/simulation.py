"""Simulated comparative-judgement studies: what each reliability says, by pairing policy.

A study: ``n_objects`` objects with true qualities ``theta ~ N(0, spread^2)`` (``spread = 0``:
every judgement a coin flip), ``n_judges`` judges of whom the first ``n_misfitting`` answer at
random, and judgements made in **rounds**: each round pairs every object once (a perfect matching;
with an odd number one object sits out, in turn), so exposure stays balanced under both policies.
The option shown first is drawn at random; judge ``n mod n_judges`` makes the ``n``-th judgement;
an honest judge prefers ``i`` over ``j`` with probability ``logistic(theta_i - theta_j)``.

Pairing policies (:mod:`.pairing`, the same code the study app pairs with):

* ``random`` -- each round a uniformly random perfect matching (the balanced random design);
* ``adaptive`` -- after ``random_rounds`` random rounds, each round pairs objects from the current
  estimates (refitted after every round): objects in random order each take, among those not yet
  paired in the round, the partner with the most Fisher information ``p (1 - p)`` at the current
  estimates (the closest estimate), preferring a partner not met before -- the adaptive
  comparative judgement of Pollitt (2012) in its simplest form.

At each budget of judgements (rounds completed) the estimates are fitted by penalised ML
(:mod:`.ml`, no order effect, ``ridge`` 0.1 by default: the MAP under N(0, 10) priors, which keeps
objects that won or lost every comparison so far finite), and we record

* ``true_reliability`` -- the squared correlation of the estimates with the true qualities (0 when
  ``spread = 0``: there is no true variance to recover);
* ``ssr`` -- the scale separation reliability reported from the estimates and their standard
  errors (:func:`.reliability.ssr`);
* ``split_half`` -- the split-half reliability across judges (judges split at random into halves,
  ``split_half_repeats`` times, each half fitted alone, mean correlation stepped up by
  Spearman-Brown).

Under adaptive pairing the SSR is inflated (Bramley 2015; Bramley & Vitello 2019): the design
follows the noise in the current estimates, and the model's standard errors do not know it.  The
split-half figure compares halves judged by different judges, so it only agrees where the
judgements do; it is the reliability edueval presents as trustworthy for adaptive designs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit

from ..results import RunResults
from .pairing import PANELS, POLICIES, array_design, fit_estimates, round_pairs
from .reliability import VAR_DDOF, spearman_brown, ssr

__all__ = [
    "PAIRINGS",
    "SimulationConfig",
    "array_design",
    "SimulationResults",
    "judgements_to_reach",
    "simulate",
    "simulate_study",
]

#: pairing policies (:data:`.pairing.POLICIES`): random; adaptive in two independent panels (the
#: default adaptive design); adaptive-shared, one adaptive stream from all judgements
PAIRINGS = POLICIES


@dataclass(frozen=True)
class SimulationConfig:
    """Settings of :func:`simulate` (see the module docstring)."""

    n_objects: int = 30
    n_judges: int = 20
    judgements: int = 1200
    spread: float = 1.5
    n_misfitting: int = 0
    pairings: tuple[str, ...] = ("random", "adaptive")
    budgets: tuple[int, ...] = ()
    replications: int = 20
    random_rounds: int = 2
    ridge: float = 0.1
    split_half_repeats: int = 5
    target: float = 0.8
    seed: int = 1

    def round_size(self) -> int:
        return self.n_objects // 2

    def checkpoints(self) -> list[int]:
        """The budgets, in judgements, each rounded up to whole rounds (default: 8 steps)."""
        r = self.round_size()
        budgets = self.budgets or tuple(
            int(b) for b in np.linspace(self.judgements / 8, self.judgements, 8)
        )
        return sorted({int(np.ceil(b / r)) * r for b in budgets})

    def check(self) -> None:
        """Reject impossible settings (a ValueError naming the setting)."""
        if self.n_objects < 3:
            raise ValueError(f"objects must be at least 3; got {self.n_objects}")
        if self.n_judges < 2:
            raise ValueError(
                f"judges must be at least 2 (split-half needs two); got {self.n_judges}"
            )
        if not 0 <= self.n_misfitting <= self.n_judges:
            raise ValueError(
                f"misfitting must be between 0 and judges ({self.n_judges}); got {self.n_misfitting}"
            )
        if not (np.isfinite(self.spread) and self.spread >= 0):
            raise ValueError(f"spread must be a finite number >= 0; got {self.spread}")
        if self.judgements < self.round_size():
            raise ValueError(
                f"judgements must be at least one round ({self.round_size()}); got {self.judgements}"
            )
        if any(b < 1 for b in self.budgets):
            raise ValueError("budgets must be positive numbers of judgements")
        if max(self.checkpoints()) > self.judgements * 10:
            raise ValueError("a budget is far above judgements=; raise judgements")
        bad = [p for p in self.pairings if p not in PAIRINGS]
        if bad or not self.pairings:
            raise ValueError(f"pairing must be one of {', '.join(PAIRINGS)}; got {bad or 'none'}")
        if self.replications < 1 or self.split_half_repeats < 1 or self.random_rounds < 0:
            raise ValueError("replications and split_half_repeats must be >= 1, random_rounds >= 0")
        if not (np.isfinite(self.ridge) and self.ridge > 0):
            raise ValueError(f"ridge must be > 0 (plain ML diverges early on); got {self.ridge}")
        if not 0 < self.target < 1:
            raise ValueError(f"target must be between 0 and 1; got {self.target}")


def _fit(
    first, second, won, k: int, ridge: float, init: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    return fit_estimates(first, second, won, k, ridge, init)


def _split_half(first, second, won, judge, cfg: SimulationConfig, rng) -> float:
    rs = []
    k = cfg.n_objects
    for _ in range(cfg.split_half_repeats):
        half = rng.permutation(cfg.n_judges) < cfg.n_judges // 2
        in_a = half[judge]
        a, _ = _fit(first[in_a], second[in_a], won[in_a], k, cfg.ridge)
        b, _ = _fit(first[~in_a], second[~in_a], won[~in_a], k, cfg.ridge)
        if np.std(a) > 0 and np.std(b) > 0:
            rs.append(np.corrcoef(a, b)[0, 1])
    return float(spearman_brown(np.mean(rs))) if rs else float("nan")


def _panel_split_half(first, second, won, panel, cfg: SimulationConfig) -> float:
    """Spearman-Brown step-up of the correlation of the two panels' estimates."""
    a, _ = _fit(first[panel == 0], second[panel == 0], won[panel == 0], cfg.n_objects, cfg.ridge)
    b, _ = _fit(first[panel == 1], second[panel == 1], won[panel == 1], cfg.n_objects, cfg.ridge)
    if np.std(a) == 0 or np.std(b) == 0:
        return float("nan")
    return float(spearman_brown(np.corrcoef(a, b)[0, 1]))


def simulate_study(cfg: SimulationConfig, pairing: str, seed: int) -> pd.DataFrame:
    """One simulated study under ``pairing``: one row per budget with the three reliabilities."""
    rng = np.random.default_rng(seed)
    k = cfg.n_objects
    theta = rng.normal(0.0, cfg.spread, size=k) if cfg.spread > 0 else np.zeros(k)
    budgets = cfg.checkpoints()
    total = max(budgets)
    first = np.empty(total, dtype=np.int64)
    second = np.empty(total, dtype=np.int64)
    won = np.empty(total, dtype=bool)
    judge = np.empty(total, dtype=np.int64)
    panels = PANELS[pairing]
    # panel p: judges p, p + panels, ...; it pairs from its own estimates (adaptive)
    members = [np.arange(p, cfg.n_judges, panels) for p in range(panels)]
    met = np.zeros((panels, k, k))
    est = np.zeros((panels, k))
    made = np.zeros(panels, dtype=int)
    n = rnd = 0
    rows = []
    while n < total:
        p = rnd % panels
        own_round = rnd // panels
        sit_out = own_round % k if k % 2 else None
        if pairing != "random" and own_round >= cfg.random_rounds:
            pairs = round_pairs(k, rng, sit_out, est[p], met[p])
        else:
            pairs = round_pairs(k, rng, sit_out)
        for a, b in pairs[: total - n]:
            if rng.random() < 0.5:
                a, b = b, a  # the option shown first
            j = int(members[p][made[p] % len(members[p])])
            made[p] += 1
            q = 0.5 if j < cfg.n_misfitting else expit(theta[a] - theta[b])
            first[n], second[n], won[n], judge[n] = a, b, rng.random() < q, j
            met[p, a, b] = met[p, b, a] = 1
            n += 1
        rnd += 1
        if pairing != "random":  # the panel's estimates, refitted after each of its rounds
            mine = judge[:n] % panels == p
            est[p], _ = _fit(
                first[:n][mine], second[:n][mine], won[:n][mine], k, cfg.ridge, init=est[p]
            )
        if n in budgets:
            rows.append(_checkpoint(cfg, pairing, theta, first[:n], second[:n], won[:n],
                                    judge[:n], rng))  # fmt: skip
    return pd.DataFrame(rows)


def _checkpoint(cfg, pairing, theta, first, second, won, judge, rng) -> dict[str, Any]:
    est, se = _fit(first, second, won, cfg.n_objects, cfg.ridge)
    true = float(np.corrcoef(est, theta)[0, 1] ** 2) if cfg.spread > 0 and np.std(est) > 0 else 0.0
    row = {
        "pairing": pairing,
        "judgements": len(first),
        "true_reliability": true,
        "ssr": ssr(est, se),
        "split_half": _split_half(first, second, won, judge, cfg, rng),
        "sd_estimates": float(np.std(est, ddof=VAR_DDOF)),
    }
    if pairing == "adaptive":
        # the honest figure: the two panels designed their pairs independently
        row["split_half_judges"] = row["split_half"]
        row["split_half"] = _panel_split_half(first, second, won, judge % 2, cfg)
    return row


def judgements_to_reach(curve: pd.DataFrame, target: float) -> float | None:
    """Judgements at which the mean true reliability first reaches ``target`` (linear
    interpolation between budgets); None when it never does."""
    x = curve["judgements"].to_numpy(float)
    y = curve["true_reliability"].to_numpy(float)
    above = np.flatnonzero(y >= target)
    if len(above) == 0:
        return None
    i = int(above[0])
    if i == 0:
        return float(x[0])
    return float(x[i - 1] + (target - y[i - 1]) * (x[i] - x[i - 1]) / (y[i] - y[i - 1]))


@dataclass
class SimulationResults(RunResults):
    """Per pairing and budget: the mean (and s.d.) over replications of the true reliability,
    the SSR and the split-half reliability; the judgements each policy needs to reach the
    target true reliability.

    Attributes
    ----------
    replications : one row per (pairing, replication, budget).
    budgets : per (pairing, budget): means and s.d.s, ``ssr_inflation`` = mean SSR - mean true
        reliability, and ``trustworthy`` = the figure edueval presents (SSR under random
        pairing, split-half under adaptive pairing).
    to_target : per pairing: judgements to reach ``config.target``.
    """

    config: SimulationConfig
    replications: pd.DataFrame
    budgets: pd.DataFrame
    to_target: pd.DataFrame
    params: dict[str, Any] = field(default_factory=dict)

    _writer = "edueval.pairwise.pipeline:save_simulation"

    def headline(self) -> dict[str, Any]:
        """``pairwise simulate``'s results.json."""
        return {
            "target": self.config.target,
            "judgements_to_target": {
                r.pairing: (None if pd.isna(r.judgements_to_target) else r.judgements_to_target)
                for r in self.to_target.itertuples()
            },
            "adaptive_saving": self.saving(),
            "budgets": self.budgets,
            "trustworthy_reliability": (
                "SSR under random pairing; under adaptive pairing the split-half reliability "
                "between the two panels of judges, which chose their pairs independently (SSR is "
                "inflated)"
            ),
        }

    def saving(self) -> float | None:
        """1 - adaptive / random judgements to the target (None unless both reach it)."""
        t = self.to_target.set_index("pairing")["judgements_to_target"]
        if not {"random", "adaptive"} <= set(t.index):
            return None
        r, a = t.get("random"), t.get("adaptive")
        if r is None or a is None or pd.isna(r) or pd.isna(a):
            return None
        return float(1 - a / r)

    def to_frame(self) -> pd.DataFrame:
        """Tidy rows ``pairing, judgements, measure, value, ci_low, ci_high``: per budget the
        mean true reliability, SSR and split-half over replications, with the 2.5% and 97.5%
        quantiles over replications."""
        parts = []
        for measure in ("true_reliability", "ssr", "split_half"):
            g = self.replications.groupby(["pairing", "judgements"])[measure]
            t = g.mean().rename("value").to_frame()
            t["ci_low"] = g.quantile(0.025)
            t["ci_high"] = g.quantile(0.975)
            parts.append(t.reset_index().assign(measure=measure))
        cols = ["pairing", "judgements", "measure", "value", "ci_low", "ci_high"]
        return pd.concat(parts, ignore_index=True)[cols]

    def summary(self) -> str:
        c = self.config
        lines = [
            "Simulated comparative judgement: reliability by pairing policy",
            "=" * 72,
            f"{c.n_objects} objects, {c.n_judges} judges ({c.n_misfitting} answering at "
            f"random), true spread s.d. {c.spread}, {c.replications} replication(s), "
            f"ML ridge {c.ridge}",
            "-" * 72,
            self.budgets[
                ["pairing", "judgements", "true_reliability", "ssr", "split_half", "trustworthy"]
            ].to_string(index=False, float_format=lambda v: f"{v:.3f}"),
            "-" * 72,
        ]
        for r in self.to_target.itertuples():
            v = r.judgements_to_target
            lines.append(
                f"{r.pairing}: judgements to a true reliability of {c.target}: "
                + ("not reached" if pd.isna(v) else f"{v:.0f}")
            )
        s = self.saving()
        if s is not None:
            lines.append(f"adaptive pairing saves {100 * s:.1f}% of the judgements")
        lines.append(
            "SSR under adaptive pairing is inflated (Bramley 2015): trust the split-half figure."
        )
        return "\n".join(lines)


def _budget_table(reps: pd.DataFrame) -> pd.DataFrame:
    g = reps.groupby(["pairing", "judgements"], sort=False)
    t = g[["true_reliability", "ssr", "split_half"]].mean()
    sd = g[["true_reliability", "ssr", "split_half"]].std(ddof=1).add_suffix("_sd")
    t = t.join(sd).reset_index()
    t["ssr_inflation"] = t["ssr"] - t["true_reliability"]
    adaptive = t["pairing"] != "random"
    t["trustworthy"] = np.where(adaptive, t["split_half"], t["ssr"])
    t["trustworthy_measure"] = np.where(
        t["pairing"] == "adaptive",
        "split_half_panels",
        np.where(adaptive, "split_half_judges (inflated too)", "ssr"),
    )
    return t


def simulate(cfg: SimulationConfig, *, executor=None, progress=None) -> SimulationResults:
    """Run ``cfg.replications`` studies per pairing policy (seeds from ``SeedSequence``; the
    same seed gives the same studies whatever runs them)."""
    from ..executor import InProcess
    from ..seeding import task_seeds

    cfg.check()
    seeds = task_seeds(cfg.seed, cfg.replications)
    tasks = [(cfg, p, s) for p in cfg.pairings for s in seeds]
    parts = (executor or InProcess()).map(simulate_study, tasks)
    for r, part in enumerate(parts):
        part.insert(1, "replication", r % cfg.replications)
    reps = pd.concat(parts, ignore_index=True)
    budgets = _budget_table(reps)
    to_target = pd.DataFrame(
        [
            {
                "pairing": p,
                "judgements_to_target": judgements_to_reach(
                    budgets[budgets["pairing"] == p], cfg.target
                ),
            }
            for p in cfg.pairings
        ]
    )
    return SimulationResults(
        config=cfg,
        replications=reps,
        budgets=budgets,
        to_target=to_target,
        params={**{k: (list(v) if isinstance(v, tuple) else v) for k, v in cfg.__dict__.items()},
                **({"executor": executor.describe()} if executor is not None else {})},
    )  # fmt: skip
