"""The whole ``turing simulate`` computation, in memory: the verdict rates of
:func:`~.simulate.simulate_study` and the further studies the command reports (by the expert's
accuracy, by how consistently students act on a misconception, the type-I error of ``draw`` and
the verdict's convergence).  :func:`simulation_results` returns :class:`SimulationResults`; the
run layer (:mod:`.pipeline`) writes it as the command's folder."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import pandas as pd

from ..results import RunResults
from .power import type1_table, verdict_convergence
from .simulate import AIS, SimConfig, SimulatedStudy, simulate_study

__all__ = [
    "CONVERGENCE_SIZES",
    "DEFAULT_ACCURACIES",
    "DEFAULT_GRID",
    "DEFAULT_P_RULES",
    "DEFAULT_RHOS",
    "SimulationResults",
    "simulation_results",
]


def _by_consistency(
    cfg: SimConfig, bank, p_rules: list[float], sizes: list[int], executor=None
) -> pd.DataFrame:
    """Oracle draw and unconditioned told-apart rates by p_rule and number of students."""
    rows = []
    for p in p_rules:
        c = SimConfig(**{**cfg.__dict__, "p_rule": p, "frequencies": dict(cfg.frequencies)})
        c.reps = max(50, cfg.reps // 4)
        res = simulate_study(c, n_students_grid=sizes, bank=bank, executor=executor)
        rates = res["rates"][res["rates"]["se"] == "clustered"]
        means = res["means"][res["means"]["ai"] == "unconditioned"].set_index("n_students")
        for n, sub in rates.groupby("n_students"):
            piv = sub.pivot(index="ai", columns="verdict", values="rate")
            rows.append(
                {
                    "p_rule": p,
                    "n_students": int(n),
                    "unconditioned_gap": float(means.loc[n, "p_human"] - means.loc[n, "p_ai"]),
                    "oracle_draw": float(piv.loc["oracle", "draw"]),
                    "unconditioned_told_apart": float(
                        piv.loc["unconditioned", "human_better"]
                        + piv.loc["unconditioned", "ai_better"]
                    ),
                    "random_told_apart": float(
                        piv.loc["random", "human_better"] + piv.loc["random", "ai_better"]
                    ),
                }
            )
    return pd.DataFrame(rows)


def _students_needed(cons: pd.DataFrame, power: float = 0.8) -> pd.DataFrame:
    """Per p_rule, the fewest simulated students whose rate reaches ``power`` (None if none)."""
    if not len(cons):
        return pd.DataFrame()
    rows = []
    for p, sub in cons.groupby("p_rule"):
        row: dict = {"p_rule": p, "unconditioned_gap": float(sub["unconditioned_gap"].mean())}
        for col in ("oracle_draw", "unconditioned_told_apart", "random_told_apart"):
            ok = sub.loc[sub[col] >= power, "n_students"]
            row[col] = int(ok.min()) if len(ok) else None
        rows.append(row)
    out = pd.DataFrame(rows)
    for col in ("oracle_draw", "unconditioned_told_apart", "random_told_apart"):
        out[col] = out[col].astype("Int64")
    return out


CONVERGENCE_SIZES = [10, 40, 160, 640, 2560]


def _convergence(cfg: SimConfig, sizes: list[int], executor=None) -> pd.DataFrame:
    """Verdict rates as students grow for gaps below, at and above eps (see
    :func:`~.power.verdict_convergence`; Dirichlet-multinomial students, rho 0.02)."""
    gaps = [round(0.9 * cfg.eps, 10), cfg.eps, round(2 * cfg.eps, 10)]
    return verdict_convergence(
        gaps=gaps, sizes=sizes, m=cfg.n_questions, eps=cfg.eps, delta=cfg.delta,
        alpha=cfg.alpha, rho=0.02, reps=cfg.reps, seed=cfg.seed, executor=executor, se=cfg.se,
    )  # fmt: skip


@dataclass
class SimulationResults(RunResults):
    """Everything ``turing simulate`` computes: ``main`` (:class:`~.simulate.SimulatedStudy`,
    the verdict rates at the configured size and the grid) and the further studies -
    ``by_accuracy`` (the expert's accuracy), ``consistency`` (how consistently students act on a
    misconception), ``type1`` (draw at |d| = eps) and ``convergence`` (the verdict as students
    grow); each is empty when not asked for.  ``results()`` is the command's results.json and
    ``save(folder)`` writes its folder."""

    _writer = "edueval.turing.pipeline:save_simulation"

    cfg: SimConfig
    grid: list[int]
    p_rules: list[float]
    main: SimulatedStudy  # simulate_study at cfg.n_students and the grid
    by_accuracy: pd.DataFrame
    consistency: pd.DataFrame
    type1: pd.DataFrame
    convergence: pd.DataFrame
    seconds_main: float
    seconds: float = field(default=0.0)
    human_accuracies: list[float] = field(default_factory=list)
    type1_rhos: list[float] = field(default_factory=list)
    convergence_sizes: list[int] = field(default_factory=list)

    @property
    def rates(self) -> pd.DataFrame:
        return self.main["rates"]

    def verdicts_main(self) -> pd.DataFrame:
        """Clustered verdict rates per AI at the main size (AI x verdict)."""
        return self.main.verdicts_main()

    def first_size(self, ai: str, verdicts: list[str]) -> int | None:
        """Fewest simulated students at which ``verdicts`` reach 80% for ``ai``."""
        return self.main.first_size(ai, verdicts)

    def headline(self) -> dict:
        """The results.json numbers."""
        return {
            **self.main.headline(),
            "students_needed_by_consistency": _students_needed(self.consistency),
            "type1": self.type1,
            "verdict_convergence": self.convergence,
            "seconds_main_simulation": self.seconds_main,
            "seconds": self.seconds,
        }

    def to_frame(self) -> pd.DataFrame:
        """Tidy verdict rates, one row per (ai, n_students, se, verdict)."""
        return self.main.to_frame()

    def summary(self) -> str:
        """The verdict rates at the configured size and the sizes the headline verdicts need."""
        h = self.headline()
        return "\n".join([
            self.main.summary(),
            f"Oracle AI: draw in 80% of replications first at "
            f"{h['oracle_80pct_draw_students']} students; unconditioned AI told apart in 80% "
            f"first at {h['unconditioned_80pct_apart_students']} (None: not within the sizes "
            "simulated).",
        ])  # fmt: skip


def _by_human_accuracy(cfg: SimConfig, bank, accs: list[float], executor=None) -> pd.DataFrame:
    """Clustered verdict rates per AI at the main size for each accuracy of the human expert."""
    rows = []
    for a in accs:
        c2 = SimConfig(
            **{**cfg.__dict__, "human_accuracy": a, "frequencies": dict(cfg.frequencies)}
        )
        c2.reps = max(50, cfg.reps // 4)
        r2 = simulate_study(c2, bank=bank, executor=executor)["rates"]
        r2 = r2[(r2["se"] == "clustered")]
        for ai in AIS:
            sel = r2[r2["ai"] == ai].set_index("verdict")["rate"]
            rows.append({"human_accuracy": a, "ai": ai, **sel.to_dict()})
    return pd.DataFrame(rows)


#: the defaults of :func:`simulation_results` (and of ``turing simulate``)
DEFAULT_GRID = [5, 10, 20, 40, 100]
DEFAULT_ACCURACIES = [0.5, 0.7, 0.9]
DEFAULT_RHOS = [0.0, 0.1, 0.3, 0.5]
DEFAULT_P_RULES = [0.2, 0.4, 0.6]


def simulation_results(
    cfg: SimConfig,
    *,
    grid: list[int] | None = None,
    accs: list[float] | None = None,
    rhos: list[float] | None = None,
    p_rules: list[float] | None = None,
    conv_sizes: list[int] | None = None,
    log=None,
    executor=None,
) -> SimulationResults:
    """The whole ``turing simulate`` computation: the verdict rates at ``cfg.n_students`` and
    at each size of ``grid``, then verdict rates by the expert's accuracy (``accs``), by
    ``p_rules``, the type-I error of ``draw`` at intra-student correlations ``rhos`` and the
    verdict's convergence over ``conv_sizes`` (an empty list leaves that study out; None: the
    command's default).  Every replication chunk, size and cell is an independent task on
    ``executor``, so the numbers do not depend on where they run."""
    grid = list(DEFAULT_GRID if grid is None else grid)
    accs = list(DEFAULT_ACCURACIES if accs is None else accs)
    rhos = list(DEFAULT_RHOS if rhos is None else rhos)
    p_rules = list(DEFAULT_P_RULES if p_rules is None else p_rules)
    conv_sizes = list(CONVERGENCE_SIZES if conv_sizes is None else conv_sizes)
    for p in p_rules:
        if not 0 <= p <= 1:
            raise ValueError(f"p_rules= values must be in [0, 1], got {p}")
    t0 = time.perf_counter()
    main = simulate_study(cfg, n_students_grid=grid, log=log, executor=executor)
    seconds_main = time.perf_counter() - t0
    by_acc = _by_human_accuracy(cfg, main["bank"], accs, executor)
    # how consistently students act on a held misconception decides the sample size needed
    cons = _by_consistency(
        cfg, main["bank"], p_rules, sorted(set(grid) | {cfg.n_students}), executor
    )
    t1 = type1_table(
        rho_values=rhos, n_students=cfg.n_students, m=cfg.n_questions, eps=cfg.eps,
        delta=cfg.delta, alpha=cfg.alpha, reps=max(1000, cfg.reps), seed=cfg.seed,
        executor=executor, se=cfg.se,
    ) if rhos else pd.DataFrame()  # fmt: skip
    conv = _convergence(cfg, conv_sizes, executor) if conv_sizes else pd.DataFrame()
    res = SimulationResults(cfg, grid, p_rules, main, by_acc, cons, t1, conv, seconds_main,
                            human_accuracies=accs, type1_rhos=rhos,
                            convergence_sizes=conv_sizes)  # fmt: skip
    further = accs or rhos or p_rules or conv_sizes
    res.seconds = time.perf_counter() - t0 if further else seconds_main
    return res
