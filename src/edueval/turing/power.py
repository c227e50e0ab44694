"""``turing power``: how many students × questions a verdict needs.

Two answers, which should agree:

*Closed form* (normal approximation; Chow, Shao & Wang, *Sample Size Calculations in Clinical
Research*, ch. 3-4). Per MCQ the paired score ``d = [AI] − [human]`` has variance
``σ²_d = p_AI + p_H − (p_AI − p_H)²`` (the choices are one multinomial draw), and ``s − r``
likewise for superiority over random. Students answer ``m`` MCQs each with intra-student
correlation ``ρ``, which inflates every variance by the design effect ``DE = 1 + (m − 1)ρ``
(Kish). With ``N = G·m`` MCQs:

* TOST at margin ε, true difference Δ: power ≈ ``Φ((ε−Δ)/se − z₁₋α) + Φ((ε+Δ)/se − z₁₋α) − 1``,
  ``se = σ_d √(DE/N)``; for Δ = 0, ``N = (z₁₋α + z₁₋β/₂)² σ²_d DE / ε²``, otherwise
  ``N ≈ (z₁₋α + z₁₋β)² σ²_d DE / (ε − |Δ|)²``;
* superiority of S over random by δ: ``N = (z₁₋α + z₁₋β)² σ²_SR DE / (p_S − p_R − δ)²``;
* a draw needs all three; its power is approximated by the product of the three powers.

*Simulation* with a student random effect: student ``g``'s choice probabilities are
``π_g ~ Dirichlet(κ·p)`` around the population rates ``p = (p_correct, p_AI, p_H, p_R)``, and
their ``m`` choices are ``Multinomial(m, π_g)`` (Dirichlet-multinomial). Every category's
intra-student correlation is then exactly ``ρ = 1/(κ + 1)`` and the design effect exactly
``1 + (m − 1)ρ``, so simulation and closed form describe the same population. The simulated
studies go through the same batched tests and decision rule as ``turing analyze``.

The paper's ~100 students × ~25 questions does not come from a power calculation: it comes from
its coverage theorems (how many students and questions surface the common misconceptions), which
are in :mod:`edueval.turing.coverage` (``turing power --coverage``). The power calculation here is
this project's addition: how many students a *verdict* needs once the misconceptions are there.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps

from .stats import FIELDS, MIN_STUDENTS, SIMULATION_SE, VERDICTS, batch_tests

__all__ = [
    "DESIGNS",
    "Rates",
    "design_counts",
    "design_effect",
    "power_normal",
    "power_table",
    "sample_size",
    "simulate_counts",
    "simulate_power",
    "verdict_convergence",
    "map_power",
    "type1_table",
]


@dataclass(frozen=True)
class Rates:
    """Population selection rates of the four options (they must sum to 1)."""

    ai: float = 0.30
    human: float = 0.30
    random: float = 0.10

    @property
    def correct(self) -> float:
        return 1.0 - self.ai - self.human - self.random

    def vector(self) -> np.ndarray:
        """``(correct, ai, human, random)``."""
        v = np.array([self.correct, self.ai, self.human, self.random], dtype=float)
        if (v < 0).any() or (v > 1).any():
            raise ValueError(f"selection rates must be in [0, 1] and sum to 1: {v}")
        return v


def design_effect(m: int, rho: float) -> float:
    """Kish's design effect ``1 + (m − 1)ρ`` of ``m`` answers per student."""
    return 1.0 + (m - 1) * rho


def _var_diff(p1: float, p2: float) -> float:
    return p1 + p2 - (p1 - p2) ** 2


def power_normal(
    rates: Rates, *, n_students: int, m: int, eps: float, delta: float, alpha: float, rho: float
) -> dict[str, float]:
    """Normal-approximation power of the TOST, each superiority test, and the draw."""
    n = n_students * m
    de = design_effect(m, rho)
    z = sps.norm.ppf(1 - alpha)
    se = math.sqrt(_var_diff(rates.ai, rates.human) * de / n)
    d = abs(rates.ai - rates.human)
    tost = max(0.0, sps.norm.cdf((eps - d) / se - z) + sps.norm.cdf((eps + d) / se - z) - 1)
    out = {"tost": tost}
    for name, p in (("sup_ai", rates.ai), ("sup_human", rates.human)):
        s = math.sqrt(_var_diff(p, rates.random) * de / n)
        out[name] = float(sps.norm.cdf((p - rates.random - delta) / s - z))
    out["draw"] = out["tost"] * out["sup_ai"] * out["sup_human"]
    return out


def sample_size(
    rates: Rates,
    *,
    eps: float,
    delta: float,
    alpha: float = 0.05,
    power: float = 0.8,
    rho: float = 0.0,
    m: int = 25,
) -> dict[str, float]:
    """Closed-form MCQs (``n_*``) and students at ``m`` MCQs each (``students_*``) for the TOST,
    each superiority test, and a draw (smallest G whose approximate draw power reaches ``power``).
    ``inf`` when a test cannot succeed (|Δ| ≥ ε, or p_S − p_R ≤ δ)."""
    de = design_effect(m, rho)
    za, zb = sps.norm.ppf(1 - alpha), sps.norm.ppf(power)
    d = abs(rates.ai - rates.human)
    var = _var_diff(rates.ai, rates.human) * de
    if d == 0:
        n_tost = (za + sps.norm.ppf(1 - (1 - power) / 2)) ** 2 * var / eps**2
    elif d < eps:
        n_tost = (za + zb) ** 2 * var / (eps - d) ** 2
    else:
        n_tost = math.inf
    out = {"n_tost": n_tost}
    for name, p in (("ai", rates.ai), ("human", rates.human)):
        gap = p - rates.random - delta
        out[f"n_sup_{name}"] = (
            (za + zb) ** 2 * _var_diff(p, rates.random) * de / gap**2 if gap > 0 else math.inf
        )
    n_draw = math.inf
    if all(math.isfinite(v) for v in out.values()):
        g = max(MIN_STUDENTS, math.ceil(max(out.values()) / m))
        while g < 10**6:
            pw = power_normal(rates, n_students=g, m=m, eps=eps, delta=delta, alpha=alpha, rho=rho)[
                "draw"
            ]
            if pw >= power:
                n_draw = g * m
                break
            g += 1
    out["n_draw"] = n_draw
    for k in list(out):
        # never fewer students than any verdict needs (MIN_STUDENTS), however large m is
        students = max(MIN_STUDENTS, math.ceil(out[k] / m)) if math.isfinite(out[k]) else math.inf
        out["students_" + k[2:]] = students
    return out


def simulate_counts(
    rng: np.random.Generator, reps: int, n_students: int, m: int, rates: Rates, rho: float
) -> np.ndarray:
    """Per-student counts ``[reps, G, 8]`` (:data:`~.stats.FIELDS`) from the Dirichlet-multinomial
    model with intra-student correlation ``rho`` (0 = independent multinomial answers)."""
    p = rates.vector()
    if rho > 0:
        kappa = 1.0 / rho - 1.0
        pi = rng.dirichlet(np.maximum(kappa * p, 1e-12), size=(reps, n_students))
    else:
        pi = np.broadcast_to(p, (reps, n_students, 4))
    x = rng.multinomial(m, pi)  # [reps, G, 4]: correct, ai, human, random
    counts = np.zeros((reps, n_students, len(FIELDS)))
    counts[..., 0] = m
    counts[..., 1:5] = x
    return counts


#: the generators of the validity study (benchmarks/turing_validity.py), see :func:`design_counts`
DESIGNS = ("homogeneous", "preference", "lengths", "shared", "ability", "ability_lengths")


def _design_diffs(
    rng: np.random.Generator, shape: tuple[int, int], design: str, diff: float, share: float,
    shift: float,
) -> np.ndarray:  # fmt: skip
    """Each student's ``p_AI − p_Human``: ``diff`` for everyone (homogeneous), else a share
    ``share`` of students preferring the AI (``diff + (1 − share)·shift``), the rest
    ``diff − share·shift``: mean ``diff``."""
    if design == "homogeneous":
        return np.full(shape, float(diff))
    pref = rng.random(shape) < share
    return np.where(pref, diff + (1 - share) * shift, diff - share * shift)


def design_counts(
    rng: np.random.Generator,
    reps: int,
    n_students: int,
    design: str,
    *,
    diff: float,
    m: int = 25,
    share: float = 0.2,
    shift: float = 0.4,
    ai_plus_human: float = 0.5,
    random: float = 0.05,
    lengths: tuple[int, int] = (5, 45),
    bank: int = 40,
    spread: float = 0.08,
    return_diffs: bool = False,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Per-student counts ``[reps, G, 8]`` from one of :data:`DESIGNS`, with expected
    ``p_AI − p_Human = diff`` exactly (the truth a validity check puts on the margin ±ε).

    Every student has ``p_AI + p_Human = ai_plus_human``, ``p_random = random`` and their own
    ``d_g = p_AI − p_Human`` (:func:`_design_diffs`):

    * ``homogeneous``: every student alike, ``m`` multinomial answers each;
    * ``preference``: 20% (``share``) of the students strongly prefer the AI's distractor (``d_g``
      ``shift`` = 0.4 above the others'): skewed contributions, design effect ≈ 2.4 at m = 25;
    * ``lengths``: ``preference`` with sheet lengths uniform on ``lengths`` (5-45, mean 25),
      independent of the preference;
    * ``shared``: ``preference`` with question effects: a bank of ``bank`` questions per study,
      question ``q`` moving ``d`` by ``e_q ~ U(−spread, spread)`` (centred on the bank), each
      student answering ``m`` of them drawn without replacement.

    * ``ability``: students also differ in how many answers they get wrong: student ``g``'s
      share of wrong answers is ``w_g = Φ(c + θ_g)``, ability ``θ_g ~ N(0, 1)`` (``c`` such
      that the mean share is ``ai_plus_human + random``; spread ≈ uniform 0-1 at the default),
      split between AI, human and random in the population's proportions, and among their AI
      and human picks the 20% preferring students favour the AI (the ``preference`` shift, in
      shares); every student's ``d_g`` scales with ``w_g``, so contributions are skewed and of
      unequal spread - the design where CR3 + Hall declared ``draw`` at ``|d| = ε`` in 6.9% of
      studies of 20 students (issue 34);
    * ``ability_lengths``: ``ability`` with sheet lengths uniform on ``lengths``.

    ``return_diffs``: also each student's own ``d_g`` ``[reps, G]`` (who prefers the AI)."""
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {DESIGNS}, got {design!r}")
    if design.startswith("ability"):
        return _ability_counts(
            rng, reps, n_students, diff=diff, m=m, share=share, shift=shift,
            ai_plus_human=ai_plus_human, random=random,
            lengths=lengths if design == "ability_lengths" else None, return_diffs=return_diffs,
        )  # fmt: skip
    shape = (reps, n_students)
    d_g = _design_diffs(rng, shape, design, diff, share, shift)
    extra = spread if design == "shared" else 0.0
    if np.abs(d_g).max() + extra > ai_plus_human or ai_plus_human + random > 1:
        raise ValueError("rates outside [0, 1]: lower diff, shift or spread")
    if design == "lengths":
        n = rng.integers(lengths[0], lengths[1] + 1, size=shape)
    else:
        n = np.full(shape, m)
    counts = np.zeros((*shape, len(FIELDS)))
    counts[..., 0] = n
    if design != "shared":
        p = np.stack([1 - ai_plus_human - random + 0 * d_g, (ai_plus_human + d_g) / 2,
                      (ai_plus_human - d_g) / 2, random + 0 * d_g], axis=-1)  # fmt: skip
        counts[..., 1:5] = rng.multinomial(n, p)
        return (counts, d_g) if return_diffs else counts
    e = rng.uniform(-spread, spread, size=(reps, bank))
    e -= e.mean(axis=-1, keepdims=True)
    order = rng.permuted(np.broadcast_to(np.arange(bank), (*shape, bank)), axis=-1)[..., :m]
    d_q = d_g[..., None] + np.take_along_axis(e[:, None, :], order, axis=-1)  # [reps, G, m]
    p_ai = (ai_plus_human + d_q) / 2
    u = rng.random(d_q.shape)
    a = u < p_ai
    h = (u >= p_ai) & (u < ai_plus_human)
    r = (u >= ai_plus_human) & (u < ai_plus_human + random)
    counts[..., 2], counts[..., 3], counts[..., 4] = a.sum(-1), h.sum(-1), r.sum(-1)
    counts[..., 1] = m - counts[..., 2:5].sum(-1)
    return (counts, d_g) if return_diffs else counts


def _ability_counts(
    rng: np.random.Generator, reps: int, n_students: int, *, diff: float, m: int, share: float,
    shift: float, ai_plus_human: float, random: float, lengths: tuple[int, int] | None,
    return_diffs: bool,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """:func:`design_counts`' ``ability`` designs. ``E[Φ(c + θ)] = Φ(c/√2)`` for ``θ ~ N(0, 1)``,
    so the mean wrong share is exactly ``W = ai_plus_human + random`` and, with the preference
    independent of ability, the mean ``d_g`` is exactly ``diff``."""
    shape = (reps, n_students)
    wrong = ai_plus_human + random
    if not 0 < wrong < 1 or ai_plus_human <= 0:
        raise ValueError("ai_plus_human + random must be in (0, 1)")
    c = sps.norm.ppf(wrong) * math.sqrt(2.0)
    w = sps.norm.cdf(c + rng.standard_normal(shape))
    pref = rng.random(shape) < share
    base, step = diff / ai_plus_human, shift / ai_plus_human  # in units of 2q - 1
    q2 = np.where(pref, base + (1 - share) * step, base - share * step)
    if np.abs(q2).max() > 1:
        raise ValueError("rates outside [0, 1]: lower diff or shift")
    ah = w * ai_plus_human / wrong
    p = np.stack([1 - w, ah * (1 + q2) / 2, ah * (1 - q2) / 2, w * random / wrong], axis=-1)
    n = np.full(shape, m) if lengths is None else rng.integers(lengths[0], lengths[1] + 1, shape)
    counts = np.zeros((*shape, len(FIELDS)))
    counts[..., 0] = n
    counts[..., 1:5] = rng.multinomial(n, p)
    return (counts, ah * q2) if return_diffs else counts


def simulate_power(
    rates: Rates,
    *,
    n_students: int,
    m: int,
    eps: float,
    delta: float,
    alpha: float = 0.05,
    rho: float = 0.0,
    reps: int = 1000,
    seed: int = 0,
    chunk: int = 500,
    se: str = SIMULATION_SE,
) -> dict[str, dict[str, float]]:
    """Share of simulated studies ending in each verdict, for clustered (``se``: ``"cr3"``,
    ``"cr2"`` or ``"cr1"``) and naive SEs."""
    rng = np.random.default_rng(seed)
    tallies = {k: np.zeros(len(VERDICTS)) for k in ("clustered", "naive")}
    done = 0
    while done < reps:
        b = min(chunk, reps - done)
        bt = batch_tests(
            simulate_counts(rng, b, n_students, m, rates, rho), eps=eps, delta=delta, alpha=alpha,
            cluster_se=se,
        )  # fmt: skip
        for k in tallies:
            tallies[k] += np.bincount(bt.verdict[k], minlength=len(VERDICTS))
        done += b
    return {k: dict(zip(VERDICTS, v / reps, strict=True)) for k, v in tallies.items()}


def _power_task(kwargs: dict) -> dict[str, dict[str, float]]:
    """One task: :func:`simulate_power` with its own seed (module level, for Dask workers)."""
    return simulate_power(**kwargs)


def map_power(cells: list[dict], executor=None) -> list[dict[str, dict[str, float]]]:
    """:func:`simulate_power` of every cell (keyword arguments, each with its seed), as
    independent tasks on ``executor`` (default: in process); results in cell order."""
    from ..executor import InProcess

    return (executor or InProcess()).map(_power_task, [(c,) for c in cells])


def power_table(
    *,
    eps_values: list[float],
    delta_values: list[float],
    rho_values: list[float],
    rates: Rates,
    n_students: int,
    m: int,
    alpha: float = 0.05,
    power: float = 0.8,
    reps: int = 500,
    seed: int = 0,
    executor=None,
    se: str = SIMULATION_SE,
) -> pd.DataFrame:
    """For every (ε, δ, ρ): closed-form sample sizes and the simulated share of draws at
    ``n_students × m`` (clustered SEs of kind ``se``, and naive) next to the normal
    approximation."""
    cells = list(itertools.product(eps_values, delta_values, rho_values))
    sims = map_power(
        [
            dict(rates=rates, n_students=n_students, m=m, eps=eps, delta=delta, alpha=alpha,
                 rho=rho, reps=reps, seed=seed + i, se=se)
            for i, (eps, delta, rho) in enumerate(cells)
        ],
        executor,
    )  # fmt: skip
    rows = []
    for (eps, delta, rho), sim in zip(cells, sims, strict=True):
        ss = sample_size(rates, eps=eps, delta=delta, alpha=alpha, power=power, rho=rho, m=m)
        pn = power_normal(
            rates, n_students=n_students, m=m, eps=eps, delta=delta, alpha=alpha, rho=rho
        )
        rows.append(
            {
                "eps": eps,
                "delta": delta,
                "rho": rho,
                "design_effect": design_effect(m, rho),
                "students_tost": ss["students_tost"],
                "students_sup": max(ss["students_sup_ai"], ss["students_sup_human"]),
                "students_draw": ss["students_draw"],
                "power_draw_normal": pn["draw"],
                "power_draw_sim": sim["clustered"]["draw"],
                "power_draw_sim_naive": sim["naive"]["draw"],
            }
        )
    return pd.DataFrame(rows)


def gap_rates(gap: float, *, human: float = 0.25, random: float = 0.05) -> Rates:
    """Rates with ``p_Human − p_AI = gap`` (the human ahead), around a fixed expert and random."""
    return Rates(ai=human - gap, human=human, random=random)


def verdict_convergence(
    *,
    gaps: list[float],
    sizes: list[int],
    m: int = 25,
    eps: float = 0.10,
    delta: float = 0.05,
    alpha: float = 0.05,
    rho: float = 0.02,
    reps: int = 1000,
    seed: int = 0,
    human: float = 0.25,
    random: float = 0.05,
    executor=None,
    se: str = SIMULATION_SE,
) -> pd.DataFrame:
    """Share of simulated studies ending in each verdict (clustered SEs of kind ``se``) as the
    number of students grows, for fixed truths ``p_Human − p_AI = gap`` (:func:`gap_rates`): the
    decision
    rule's limit should be ``draw`` for ``gap < ε``, ``human_better`` for ``gap > ε`` and neither
    (each at most α) for ``gap = ε``. ``mcnemar_rejects`` is the share in which the reported
    point-null test (d = 0) rejects - which tends to 1 for any gap ≠ 0, and so cannot decide."""
    from ..executor import InProcess

    cells = list(itertools.product(gaps, sizes))
    tasks = [
        (
            gap_rates(gap, human=human, random=random),
            g,
            m,
            eps,
            delta,
            alpha,
            rho,
            reps,
            [seed, i],
            se,
        )
        for i, (gap, g) in enumerate(cells)
    ]
    done = (executor or InProcess()).map(_convergence_cell, tasks)
    rows = [
        {"gap": gap, "n_students": g, **dict(zip(VERDICTS, tally / reps, strict=True)),
         "mcnemar_rejects": rejects / reps, "reps": reps}
        for (gap, g), (tally, rejects) in zip(cells, done, strict=True)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def _convergence_cell(
    rates: Rates, g: int, m: int, eps: float, delta: float, alpha: float, rho: float, reps: int,
    seed: list[int], se: str = SIMULATION_SE,
) -> tuple[np.ndarray, float]:  # fmt: skip
    """One (gap, size) task of :func:`verdict_convergence`: clustered verdict tally and the
    number of point-null rejections."""
    rng = np.random.default_rng(seed)
    tally = np.zeros(len(VERDICTS))
    rejects = 0.0
    done = 0
    while done < reps:
        b = min(max(1, 200_000 // max(g, 1)), reps - done)
        bt = batch_tests(
            simulate_counts(rng, b, g, m, rates, rho), eps=eps, delta=delta, alpha=alpha,
            cluster_se=se,
        )  # fmt: skip
        tally += np.bincount(bt.verdict["clustered"], minlength=len(VERDICTS))
        rejects += float((bt.mcnemar_p["clustered"] < alpha).sum())
        done += b
    return tally, rejects


def type1_table(
    *,
    rho_values: list[float],
    n_students: int = 100,
    m: int = 25,
    eps: float = 0.10,
    delta: float = 0.05,
    alpha: float = 0.05,
    reps: int = 2000,
    seed: int = 0,
    rates: Rates | None = None,
    executor=None,
    se: str = SIMULATION_SE,
) -> pd.DataFrame:
    """Share of ``draw`` when the truth is exactly |p_AI − p_Human| = ε (the boundary of the
    equivalence null), clustered (``se``) vs naive SEs, with the Monte-Carlo bound α + 2·MC-SE."""
    base = rates or Rates(0.30, 0.30, 0.10)
    r = Rates(base.ai + eps / 2, base.human - eps / 2, base.random)
    sims = map_power(
        [
            dict(rates=r, n_students=n_students, m=m, eps=eps, delta=delta, alpha=alpha, rho=rho,
                 reps=reps, seed=seed + 1000 + i, se=se)
            for i, rho in enumerate(rho_values)
        ],
        executor,
    )  # fmt: skip
    rows = []
    for rho, sim in zip(rho_values, sims, strict=True):
        rows.append(
            {
                "rho": rho,
                "design_effect": design_effect(m, rho),
                "p_ai": r.ai,
                "p_human": r.human,
                "clustered_se": se,
                "draw_rate_clustered": sim["clustered"]["draw"],
                "draw_rate_naive": sim["naive"]["draw"],
                "nominal_alpha": alpha,
                "mc_bound": alpha + 2 * np.sqrt(alpha * (1 - alpha) / reps),
                "reps": reps,
            }
        )
    return pd.DataFrame(rows)
