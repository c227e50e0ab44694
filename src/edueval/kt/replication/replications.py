"""Replications of the Pardos & Yudelson study: R independent runs, each a task on the executor.

The paper reports one simulated data set.  ``kt study --replications R`` repeats the whole study
R times (new generating parameters, random candidate sets and students each time), every
replication from its own seed (:func:`edueval.seeding.task_seeds`: ``SeedSequence(seed).spawn(R)``),
and reports Table 3 and Table 2 per replication and their spread (mean, SD, min, max) across
replications.  With R = 1 the single study runs from ``--seed`` itself, exactly as without the
option.  Replications are independent tasks, so the numbers are the same in process and on any
number of Dask workers.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

import pandas as pd

from ...executor import Executor, InProcess
from ...results import RunResults
from ...seeding import task_seeds
from .study import StudyConfig, StudyResult, headline, simulate_study

__all__ = ["StudyReplications", "replicate_study", "replication_seeds"]


def replication_seeds(seed: int, replications: int) -> list[int]:
    """The study seed of each replication (R = 1: ``seed`` itself, today's single run)."""
    if replications < 1:
        raise ValueError("replications must be at least 1")
    return [seed] if replications == 1 else task_seeds(seed, replications)


def _one_study(cfg: StudyConfig, progress: bool) -> StudyResult:
    """One task: a whole study (module level so that Dask workers can import it)."""
    return simulate_study(cfg, progress=progress)


def _long(results: list[StudyResult], seeds: list[int], attr: str) -> pd.DataFrame:
    frames = [
        getattr(r, attr).assign(replication=i + 1, seed=s)
        for i, (r, s) in enumerate(zip(results, seeds, strict=True))
    ]
    out = pd.concat(frames, ignore_index=True)
    return out[
        ["replication", "seed", *[c for c in out.columns if c not in ("replication", "seed")]]
    ]


def _spread(long: pd.DataFrame, key: str, columns: list[str]) -> pd.DataFrame:
    """Mean, SD (ddof 1; NaN for one replication), min and max of ``columns`` per ``key``."""
    g = long.groupby(key, sort=False)[columns]
    parts = {stat: getattr(g, stat)() for stat in ("mean", "std", "min", "max")}
    out = pd.concat({s: p for s, p in parts.items()}, axis=1)
    out.columns = [f"{c}_{s.replace('std', 'sd')}" for s, c in out.columns]
    ordered = [f"{c}_{s}" for c in columns for s in ("mean", "sd", "min", "max")]
    return out[ordered].reset_index()


@dataclass
class StudyReplications(RunResults):
    """R replications of the study and their spread (a results object; see the module doc).

    ``studies`` holds each replication's :class:`~.study.StudyResult` (``first`` is the one the
    run folder's tables show), ``variant`` the prose-prior sensitivity run of the first
    replication (None without it).  ``results()`` is ``kt study``'s results.json and
    ``save(folder)`` writes the folder ``kt study`` writes."""

    _writer = "edueval.kt.commands.pipeline:save_study"

    config: StudyConfig
    seeds: list[int]
    studies: list[StudyResult]
    variant: StudyResult | None  # the prose-prior sensitivity run of the first replication
    table3: pd.DataFrame = field(init=False)  # long: replication, seed, Table 3 columns
    table2: pd.DataFrame = field(init=False)
    table3_spread: pd.DataFrame = field(init=False)
    table2_spread: pd.DataFrame = field(init=False)

    def __post_init__(self) -> None:
        self.table3 = _long(self.studies, self.seeds, "table3")
        self.table3_spread = _spread(self.table3, "metric", ["n_true_first", "mean_rank_true"])
        has_t2 = all(len(r.table2) for r in self.studies)
        self.table2 = _long(self.studies, self.seeds, "table2") if has_t2 else pd.DataFrame()
        self.table2_spread = (
            _spread(self.table2, "metric", ["r_perf_know", "r_perf_mad", "r_know_mad"])
            if has_t2
            else pd.DataFrame()
        )

    @property
    def first(self) -> StudyResult:
        return self.studies[0]

    @property
    def replicated(self) -> bool:
        return len(self.studies) > 1

    def spread(self) -> dict:
        """Mean and SD across replications of Table 3 (``results.json``'s ``replications``)."""
        t3 = self.table3_spread.set_index("metric")
        return {
            "replications": len(self.studies),
            "seeds": list(self.seeds),
            "true_first_mean": t3["n_true_first_mean"].to_dict(),
            "true_first_sd": t3["n_true_first_sd"].to_dict(),
            "true_mean_rank_mean": t3["mean_rank_true_mean"].to_dict(),
            "true_mean_rank_sd": t3["mean_rank_true_sd"].to_dict(),
        }

    def headline(self) -> dict:
        """``kt study``'s results.json: replication 1's headline, the sensitivity run's true-set
        counts and, with several replications, their spread."""
        out = headline(self.first)
        if self.variant is not None:
            t3 = self.variant.table3
            out["sensitivity_prose_prior"] = {
                "true_first": dict(zip(t3["metric"], t3["n_true_first"], strict=True))
            }
        if self.replicated:
            out["replications"] = self.spread()
        return out

    def to_frame(self) -> pd.DataFrame:
        """Table 3 of every replication, long: ``replication, seed, metric, ...``."""
        return self.table3.copy()

    def summary(self) -> str:
        """Table 3 (how often each metric ranks the true parameters first), replication 1, and
        its spread across replications."""
        c = self.config
        lines = [
            f"Pardos & Yudelson study: {c.n_skills} skills, {len(self.studies)} replication(s), "
            f"seed {c.seed}",
            self.first.table3.to_string(index=False),
        ]
        if self.replicated:
            lines += ["Across replications:", self.table3_spread.round(3).to_string(index=False)]
        return "\n".join(lines)


def replicate_study(
    config: StudyConfig,
    replications: int = 1,
    *,
    sensitivity: bool = True,
    executor: Executor | None = None,
) -> StudyReplications:
    """Run the study ``replications`` times (plus the sensitivity variant) as executor tasks."""
    config.validate()
    executor = executor or InProcess()
    seeds = replication_seeds(config.seed, replications)
    progress = replications == 1 and isinstance(executor, InProcess)
    tasks = [(replace(config, seed=s), progress) for s in seeds]
    if sensitivity:
        prose = {
            **asdict(config),
            "seed": seeds[0],
            "prose_prior": True,
            "knowledge_metrics": False,
        }
        tasks.append((StudyConfig(**prose), progress))
    done = executor.map(_one_study, tasks)
    variant = done.pop() if sensitivity else None
    return StudyReplications(config, seeds, done, variant)
