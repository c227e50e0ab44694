"""The Pardos & Yudelson study: does predicting performance well mean knowing *when* students learn?

Design (paper, Secs. 4-7): simulate students on many skills from random generating parameters;
predict every skill with 16 candidate parameter sets -- the skill's true set, 5 fixed "typical
tutor" sets and 10 random sets (the same 15 non-true sets for every skill); score each (skill, set)
with every metric on performance (``p_correct`` vs responses) and on knowledge (``p_known`` vs the
true state), and measure the moment-of-learning error (MAD).  Then

- Table 2: Pearson r between (a) a metric on performance and on knowledge, (b) the metric on
  performance and MoL MAD, (c) the metric on knowledge and MoL MAD, over the 15 non-true sets x
  all skills;
- Table 3: per metric, in how many skills the true set ranks first among the 16, and its mean rank;
- Experiment 3: correlation of the true set's MoL-MAD rank with each generating parameter.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from ...progress import track
from ...seeding import child_rngs
from .. import _common_kernels as CK
from ..bkt import _kernels as K
from ..bkt.model import simulate_arrays
from ..bkt.params import PAPER_RANGES, PARAM_NAMES, random_params
from ..mastery import first_crossing
from ..metrics import HIGHER_IS_BETTER, LABELS, METRICS, evaluate

__all__ = [
    "StudyConfig",
    "StudyResult",
    "TYPICAL_SETS",
    "PAPER_TABLE2",
    "PAPER_TABLE3",
    "PAPER_EXPERIMENT3",
    "simulate_study",
]

#: Five fixed "typical tutor" parameter sets.  The paper used the five most common sets of the
#: Cognitive Tutor, which are unpublished; these are ours, chosen to span the kinds of values
#: used as defaults in tutors (moderate priors, small learning rates, guess 0.1-0.3, slip 0.05-0.2).
TYPICAL_SETS = pd.DataFrame(
    [
        ("typical1", 0.40, 0.15, 0.20, 0.10),
        ("typical2", 0.20, 0.10, 0.25, 0.10),
        ("typical3", 0.60, 0.30, 0.15, 0.05),
        ("typical4", 0.10, 0.05, 0.30, 0.15),
        ("typical5", 0.30, 0.20, 0.10, 0.20),
    ],
    columns=["set", "prior", "learn", "guess", "slip"],
).assign(forget=0.0)

#: Published Table 2 (r of performance vs knowledge metric, performance metric vs MoL MAD,
#: knowledge metric vs MoL MAD).  The paper's log-likelihood rows carry the sign of AIC, i.e. they
#: correlate a quantity that grows as the fit gets worse (see the report's discussion).
PAPER_TABLE2 = {
    "recall": (0.878, -0.954, -0.819),
    "f1": (0.561, -0.839, -0.792),
    "accuracy": (0.522, -0.802, -0.822),
    "precision": (0.334, -0.797, -0.628),
    "rmse": (0.470, 0.754, 0.828),
    "aic": (0.375, 0.751, 0.702),
    "aicc": (0.375, 0.751, 0.702),
    "bic": (0.375, 0.751, 0.702),
    "cbd": (0.409, 0.751, 0.762),
    "loglik": (0.375, 0.751, 0.702),
    "r2": (0.592, -0.236, -0.296),
    "auc": (0.335, -0.119, -0.652),
}
#: Published Table 3: skills (of 100) where the true set ranks first, and its mean rank of 16.
PAPER_TABLE3 = {
    "aic": (88, 1.82),
    "aicc": (88, 1.82),
    "bic": (88, 1.82),
    "cbd": (88, 1.82),
    "loglik": (88, 1.82),
    "rmse": (88, 1.82),
    "r2": (88, 1.83),
    "accuracy": (33, 2.52),
    "f1": (12, 4.27),
    "auc": (26, 4.35),
    "recall": (0, 6.65),
    "precision": (5, 9.71),
}
#: Published Experiment 3: MoL MAD ranked the true set first in 33/100 skills, mean rank 2.53;
#: r (p) of the true set's MoL-MAD rank with each generating parameter.
PAPER_MOL_FIRST = (33, 2.53)
MOL_LABELS = {"mol_mad": "MoL MAD", "mol_mad_uncensored": "MoL MAD, uncensored students only"}
PAPER_EXPERIMENT3 = {
    "prior": (0.18, 0.07),
    "learn": (0.68, 0.001),
    "guess": (-0.06, 0.55),
    "slip": (-0.52, 0.001),
}


@dataclass
class StudyConfig:
    """Sizes and settings of the study (defaults: the paper's)."""

    n_students: int = 1000
    n_skills: int = 100
    n_opportunities: int = 30
    n_random_sets: int = 10
    threshold: float = 0.95
    n_in_a_row: int = 3
    seed: int = 2013
    #: Simulate as the paper's prose literally reads (student starts *unknown* with probability
    #: ``prior``) while predicting with the standard model -- a sensitivity analysis only.
    prose_prior: bool = False
    #: Score the knowledge estimate too (Table 2 needs it; Table 3 and Experiment 3 do not).
    knowledge_metrics: bool = True

    def validate(self) -> None:
        for name in ("n_students", "n_skills", "n_opportunities"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if self.n_skills < 3:
            raise ValueError("n_skills must be at least 3 to compute correlations across skills")
        if self.n_random_sets < 0:
            raise ValueError("n_random_sets must be non-negative")
        if not 0 < self.threshold < 1:
            raise ValueError("threshold must be in (0, 1)")


@dataclass
class StudyResult:
    config: StudyConfig
    truth: pd.DataFrame  # generating parameters per skill
    candidates: pd.DataFrame  # the non-true sets (same for every skill)
    scores: pd.DataFrame  # one row per (skill, set): metrics on performance & knowledge, MoL MAD
    in_a_row: pd.DataFrame  # per skill: MoL MAD of the n-correct-in-a-row rule and of the true set
    seconds: float
    table2: pd.DataFrame = field(init=False)
    table3: pd.DataFrame = field(init=False)
    experiment3: pd.DataFrame = field(init=False)

    def __post_init__(self) -> None:
        has_knowledge = any(c.startswith("know_") for c in self.scores.columns)
        self.table2 = table2(self.scores) if has_knowledge else pd.DataFrame()
        self.table3 = table3(self.scores)
        self.experiment3 = experiment3(self.scores, self.truth)


def _stars(p: float) -> str:
    if not np.isfinite(p):
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else ""


def _pearson(x: np.ndarray, y: np.ndarray) -> tuple[float, float, int]:
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 3 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return float("nan"), float("nan"), int(ok.sum())
    r, p = stats.pearsonr(x[ok], y[ok])
    return float(r), float(p), int(ok.sum())


def simulate_study(config: StudyConfig | None = None, *, progress: bool = True) -> StudyResult:
    """Run the whole study; a full-size run (the defaults) takes seconds."""
    cfg = config or StudyConfig()
    cfg.validate()
    t0 = time.perf_counter()
    gen_truth, gen_sets, gen_sim = child_rngs(cfg.seed, 3)
    truth = random_params(cfg.n_skills, gen_truth, PAPER_RANGES)
    rand = random_params(cfg.n_random_sets, gen_sets, PAPER_RANGES, prefix="random")
    candidates = pd.concat([TYPICAL_SETS.set_index("set"), rand.rename_axis("set")], axis=0)[
        list(PARAM_NAMES)
    ]
    set_names = ["true", *candidates.index]
    P_true = truth[list(PARAM_NAMES)].to_numpy()
    P_cand = candidates.to_numpy()
    P_sim = P_true.copy()
    if cfg.prose_prior:
        P_sim[:, 0] = 1.0 - P_sim[:, 0]
    known, correct = simulate_arrays(P_sim, cfg.n_students, cfg.n_opportunities, gen_sim)

    T, S = cfg.n_opportunities, cfg.n_students
    n = T * S
    starts = np.arange(0, n + 1, T, dtype=np.int64)
    opportunity = np.tile(np.arange(1, T + 1, dtype=np.int64), S)
    m = len(set_names)
    pc = np.empty((m, n))
    pk = np.empty((m, n))
    rows = []
    streak = []
    for k in track(range(cfg.n_skills), "kt study: skills", total=cfg.n_skills):
        obs = np.ascontiguousarray(correct[k].reshape(-1))
        kn = np.ascontiguousarray(known[k].reshape(-1))
        P = np.vstack([P_true[k], P_cand])
        K.forward_param_sets(obs, starts, P, pc, pk)
        perf = evaluate(obs, pc, k=4)
        assert isinstance(perf, pd.DataFrame)  # pc holds one row per parameter set
        know = evaluate(kn, pk, k=4) if cfg.knowledge_metrics else perf.iloc[:, :0]
        assert isinstance(know, pd.DataFrame)
        t_true = first_crossing(kn == 1, starts, opportunity)
        t_est = first_crossing(pk >= cfg.threshold, starts, opportunity)
        err = np.abs(t_est - t_true)
        mad = err.mean(axis=1)
        both = (t_true <= T)[None, :] & (t_est <= T)
        mad_unc = (err * both).sum(axis=1) / np.maximum(both.sum(axis=1), 1)
        block = pd.concat([perf.add_prefix("perf_"), know.add_prefix("know_")], axis=1)
        block.insert(0, "set", set_names)
        block.insert(0, "skill", truth.index[k])
        block["mol_mad"] = mad
        block["mol_mad_uncensored"] = mad_unc
        block["n_never_crossed"] = (t_est > T).sum(axis=1)
        block["n_never_learned"] = int((t_true > T).sum())
        rows.append(block)
        runs = CK.run_lengths(obs, starts)
        t_row = first_crossing(runs >= cfg.n_in_a_row, starts, opportunity)
        streak.append((truth.index[k], float(np.abs(t_row - t_true).mean()), float(mad[0])))
    scores = pd.concat(rows, ignore_index=True)
    in_a_row = pd.DataFrame(
        streak, columns=["skill", f"mol_mad_{cfg.n_in_a_row}_in_a_row", "mol_mad_true_set"]
    )
    return StudyResult(cfg, truth, candidates, scores, in_a_row, time.perf_counter() - t0)


def table2(scores: pd.DataFrame, sets: list[str] | None = None) -> pd.DataFrame:
    """Pearson correlations over the non-true sets (the paper's Table 2), or over ``sets``."""
    d = scores[scores["set"] != "true"] if sets is None else scores[scores["set"].isin(sets)]
    mad = d["mol_mad"].to_numpy(dtype=float)
    out = []
    for metric in METRICS:
        perf = d[f"perf_{metric}"].to_numpy(dtype=float)
        know = d[f"know_{metric}"].to_numpy(dtype=float)
        r_a, p_a, n_a = _pearson(perf, know)
        r_b, p_b, _ = _pearson(perf, mad)
        r_c, p_c, _ = _pearson(know, mad)
        out.append(
            {
                "metric": metric,
                "r_perf_know": r_a,
                "p_perf_know": p_a,
                "r_perf_mad": r_b,
                "p_perf_mad": p_b,
                "r_know_mad": r_c,
                "p_know_mad": p_c,
                "n": n_a,
            }
        )
    t = pd.DataFrame(out)
    return t.reindex(t["r_perf_mad"].abs().sort_values(ascending=False).index).reset_index(
        drop=True
    )


def _ranks(scores: pd.DataFrame, column: str, higher_is_better: bool) -> pd.DataFrame:
    """Rank (1 = best, ties averaged) of every set within each skill."""
    wide = scores.pivot(index="skill", columns="set", values=column)
    vals = wide.to_numpy(dtype=float)
    vals = -vals if higher_is_better else vals
    vals = np.where(np.isnan(vals), np.inf, vals)  # an undefined score ranks last
    return pd.DataFrame(
        stats.rankdata(vals, axis=1, method="average"), index=wide.index, columns=wide.columns
    )


def table3(scores: pd.DataFrame) -> pd.DataFrame:
    """How often the true set ranks first among all sets, per performance metric (Table 3)."""
    n_skills = scores["skill"].nunique()
    n_sets = scores["set"].nunique()
    out = []
    for metric in [*METRICS, "mol_mad", "mol_mad_uncensored"]:
        mol = metric.startswith("mol_mad")
        col = metric if mol else f"perf_{metric}"
        better = False if mol else HIGHER_IS_BETTER[metric]
        r = _ranks(scores, col, better)["true"]
        out.append(
            {
                "metric": metric,
                "n_true_first": int((r == 1).sum()),
                "n_skills": n_skills,
                "mean_rank_true": float(r.mean()),
                "n_sets": n_sets,
            }
        )
    return pd.DataFrame(out).sort_values(["mean_rank_true", "metric"]).reset_index(drop=True)


def experiment3(scores: pd.DataFrame, truth: pd.DataFrame) -> pd.DataFrame:
    """r (p) of the true set's MoL-MAD rank with each generating parameter (Experiment 3)."""
    rank = _ranks(scores, "mol_mad", False)["true"].reindex(truth.index)
    out = []
    for name in ("prior", "learn", "guess", "slip"):
        r, p, n = _pearson(rank.to_numpy(dtype=float), truth[name].to_numpy(dtype=float))
        out.append({"parameter": name, "r": r, "p": p, "n": n})
    return pd.DataFrame(out)


def comparison_table2(result: StudyResult) -> pd.DataFrame:
    """Our Table 2 beside the published one."""
    rows = []
    for _, r in result.table2.iterrows():
        pa = PAPER_TABLE2[r["metric"]]
        rows.append(
            {
                "metric": LABELS[r["metric"]],
                "perf~know (ours)": f"{r['r_perf_know']:.3f} {_stars(r['p_perf_know'])}",
                "perf~know (paper)": f"{pa[0]:.3f}",
                "perf~MAD (ours)": f"{r['r_perf_mad']:.3f} {_stars(r['p_perf_mad'])}",
                "perf~MAD (paper)": f"{pa[1]:.3f}",
                "know~MAD (ours)": f"{r['r_know_mad']:.3f} {_stars(r['p_know_mad'])}",
                "know~MAD (paper)": f"{pa[2]:.3f}",
            }
        )
    return pd.DataFrame(rows)


def comparison_table3(result: StudyResult) -> pd.DataFrame:
    rows = []
    for _, r in result.table3.iterrows():
        mol = r["metric"].startswith("mol_mad")
        pa = PAPER_MOL_FIRST if mol else PAPER_TABLE3[r["metric"]]
        label = MOL_LABELS.get(r["metric"], LABELS.get(r["metric"], r["metric"]))
        rows.append(
            {
                "metric": label,
                "true set first (ours)": f"{r['n_true_first']}/{r['n_skills']}",
                "true set first (paper)": f"{pa[0]}/100",
                "mean rank (ours)": f"{r['mean_rank_true']:.2f}/{r['n_sets']}",
                "mean rank (paper)": f"{pa[1]:.2f}/16",
            }
        )
    return pd.DataFrame(rows)


def comparison_experiment3(result: StudyResult) -> pd.DataFrame:
    rows = []
    for _, r in result.experiment3.iterrows():
        pa = PAPER_EXPERIMENT3[r["parameter"]]
        rows.append(
            {
                "generating parameter": r["parameter"],
                "r (ours)": f"{r['r']:.2f}",
                "p (ours)": f"{r['p']:.2g}",
                "r (paper)": f"{pa[0]:.2f}",
                "p (paper)": ("< 0.001" if pa[1] <= 0.001 else f"{pa[1]:.2f}"),
            }
        )
    return pd.DataFrame(rows)


def headline(result: StudyResult) -> dict:
    """Machine-readable summary for results.json."""
    t2 = result.table2.set_index("metric")
    t3 = result.table3.set_index("metric")
    return {
        "config": asdict(result.config),
        "seconds": result.seconds,
        "true_first": {m: int(t3.loc[m, "n_true_first"]) for m in t3.index},
        "true_mean_rank": {m: float(t3.loc[m, "mean_rank_true"]) for m in t3.index},
        "r_perf_mad": {m: float(t2.loc[m, "r_perf_mad"]) for m in t2.index},
        "r_perf_know": {m: float(t2.loc[m, "r_perf_know"]) for m in t2.index},
        "r_know_mad": {m: float(t2.loc[m, "r_know_mad"]) for m in t2.index},
        "experiment3": {
            r["parameter"]: {"r": r["r"], "p": r["p"]} for _, r in result.experiment3.iterrows()
        },
        "mol_mad_true_set_mean": float(result.in_a_row["mol_mad_true_set"].mean()),
        f"mol_mad_{result.config.n_in_a_row}_in_a_row_mean": float(
            result.in_a_row.iloc[:, 1].mean()
        ),
    }
