"""P5 runs: ``turing analyze``, ``power``, ``simulate``, ``coverage`` and ``assemble`` as functions
writing run directories (``generate`` is in its own module; the MCQs themselves are computed by
:mod:`.assemble`). The CLI is a thin layer over these."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..executor import InProcess
from ..io import InputError
from ..report import Report
from ..report.figures import new_figure
from ..runs import RunDir, saved_run
from .analyze import TuringResults, analyze_choices, check_margins, check_phase1, read_choices
from .assemble import (
    _ORDER,
    AI_SCHEMA,
    HUMAN_SCHEMA,
    RANDOM_SCHEMA,
    assemble_mcqs,
    read_source,
)
from .coverage import CoverageResults, coverage_plan, students_needed
from .power import (
    Rates,
    map_power,
    power_normal,
    power_table,
    sample_size,
    type1_table,
)
from .simulate import AIS, SimConfig, SimulatedStudy
from .simulation_study import (
    CONVERGENCE_SIZES,
    DEFAULT_ACCURACIES,
    DEFAULT_GRID,
    DEFAULT_P_RULES,
    DEFAULT_RHOS,
    SimulationResults,
    simulation_results,
)
from .stats import CLUSTER_SE, DEFAULT_SE, N_BOOT, SIMULATION_SE

_VERDICT_COLORS = {
    "draw": "#2ca02c",
    "human_better": "#1f77b4",
    "ai_better": "#d62728",
    "inconclusive": "#7f7f7f",
    "both_fail": "#9467bd",
}

__all__ = [
    "analyze_run",
    "assemble_run",
    "coverage_run",
    "save_coverage",
    "write_coverage",
    "power_run",
    "simulate_run",
    "type1_table",
]

_DECISION_RULE = (
    "Decision rule, from the paper's question (is the AI within eps of the expert?), read off the "
    "1 - 2 alpha confidence interval [L, U] of d = p_AI - p_Human (student-clustered SE: by "
    "default CR3 (jackknife) with Bell-McCaffrey df and Hall's skewness correction, --se cr2 for "
    "CR2 with the same, --se cr1 for CR1 with G - 1 df) and checked in this order: draw = -eps < L and U < +eps (TOST) AND both beat random "
    "by delta; ai_better = L > +eps AND the AI beats random by delta; human_better = U < -eps AND "
    "the human beats random by delta; both_fail = for both, the one-sided test shows p_S - p_R < "
    "delta; otherwise (the CI straddles +-eps, fewer than 5 students, no variation between "
    "students) inconclusive. "
    "At |d| = eps exactly no verdict is reached in more than alpha of studies; as students grow, "
    "|d| < eps ends in draw and |d| > eps in the better one's verdict. McNemar's test of d = 0 is "
    "reported beside the verdict but does not decide. Pairing: each MCQ is one pair (chose an AI "
    "option, chose a human option) from the same student on the same question."
)

_RULE_TABLE = pd.DataFrame(
    [
        ("draw", "-eps < L and U < +eps", "both beat random + delta"),
        ("ai_better", "L > +eps", "the AI beats random + delta"),
        ("human_better", "U < -eps", "the human beats random + delta"),
        ("both_fail", "(any)", "both shown below random + delta"),
        ("inconclusive", "otherwise (straddles +-eps)", "or < 5 students, or no variation"),
    ],
    columns=["verdict", "1 - 2 alpha CI [L, U] of p_AI - p_Human", "and"],
)


def analyze_run(
    out: Path,
    choices_path: Path,
    *,
    eps: float = 0.10,
    delta: float = 0.05,
    alpha: float = 0.05,
    se: str | None = None,
    phase1_path: Path | None = None,
    n_boot: int | None = None,
    seed: int = 0,
    double: str = "fast",
) -> dict:
    """``turing analyze``'s run folder; ``se`` / ``n_boot`` None: the library's defaults
    (:data:`~.stats.DEFAULT_SE`, :data:`~.stats.N_BOOT`); ``double``: ``boot``'s double
    bootstrap (:func:`~.analyze.analyze_choices`)."""
    se = DEFAULT_SE if se is None else se
    n_boot = N_BOOT if n_boot is None else n_boot
    check_margins(eps, delta, alpha)
    choices = read_choices(choices_path)
    if phase1_path is not None:
        check_phase1(choices, phase1_path)
    res = analyze_choices(
        choices, eps=eps, delta=delta, alpha=alpha, se=se, n_boot=n_boot, seed=seed,
        double=double,
    )  # fmt: skip
    inputs = {"choices": choices_path}
    if phase1_path is not None:
        inputs["phase1"] = phase1_path
    run = RunDir(out, command="turing analyze", params=_analysis_params(res), inputs=inputs)
    return write_analysis(run, res, str(choices_path))


def _analysis_params(res: TuringResults) -> dict:
    return {"eps": res.eps, "delta": res.delta, "alpha": res.alpha, "se": res.se,
            "n_boot": res.n_boot, "seed": res.seed, "double": res.double}  # fmt: skip


def save_analysis(res: TuringResults, folder: str | Path, *, overwrite: bool = False) -> Path:
    """:meth:`TuringResults.save`: the folder ``turing analyze`` writes."""
    run = saved_run(folder, "turing analyze", params=_analysis_params(res), overwrite=overwrite)
    write_analysis(run, res, "results from Python")
    return run.path


def write_analysis(run: RunDir, res: TuringResults, source: str) -> dict:
    """The tables, summary, report and results.json of ``turing analyze`` (the command and
    :meth:`TuringResults.save` both write through here)."""
    eps, alpha = res.eps, res.alpha
    run.table("rates", res.rates)
    run.table("tests", res.tests)
    run.table("mcnemar_table", res.table, index=True)
    for name, t in res.extra.items():
        run.table(name, t)
    run.text("summary.txt", res.summary() + "\n")
    rep = Report("Imitation game: analysis", f"{source}: {res.n} MCQs, {res.n_students} students")
    ci = res.diff_ci[res.se]
    others = "; ".join(
        f"with {k}: {v}" for k, v in res.verdicts.items() if k not in (res.se, "clustered")
    )
    rep.section("Verdict").text(
        f"Verdict with {res.se} standard errors: {res.verdict} - {res.reason}. {others}. "
        f"p_AI - p_Human = {res.diff:+.4f}, {100 * (1 - 2 * alpha):.0f}% CI "
        f"[{ci[0]:+.4f}, {ci[1]:+.4f}] against eps = {eps}.",
        _DECISION_RULE,
    ).table(_RULE_TABLE, caption="decision rule")
    rep.section("Selection rates").table(res.rates)
    fig, ax = new_figure(5.5, 3.2)
    r = res.rates
    ax.bar(r["source"], r["p"], color=["#888", "#1f77b4", "#ff7f0e", "#2ca02c"])
    ax.errorbar(
        r["source"], r["p"],
        yerr=[r["p"] - r["ci_low_clustered"], r["ci_high_clustered"] - r["p"]],
        fmt="none", color="k", capsize=4,
    )  # fmt: skip
    ax.set_ylabel("share of MCQs (95% clustered CI)")
    rep.section("Selection rates").figure(fig)
    rep.section("Tests").table(res.tests, digits=4).table(
        res.table.reset_index(), caption="McNemar 2x2"
    )
    for name, t in res.extra.items():
        rep.section(name.replace("_", " ")).table(t)
    results = dict(res.headline())
    run.finish(results, rep.render())
    return results


def _type1_figure(t1: pd.DataFrame):
    fig, ax = new_figure(5.5, 3.4)
    ax.plot(t1["rho"], t1["draw_rate_naive"], "o-", label="naive SEs", color="#d62728")
    ax.plot(t1["rho"], t1["draw_rate_clustered"], "s-", label="clustered SEs", color="#1f77b4")
    ax.axhline(t1["nominal_alpha"].iloc[0], color="k", ls="--", lw=1, label="nominal alpha")
    ax.axhline(t1["mc_bound"].iloc[0], color="k", ls=":", lw=1, label="alpha + 2 MC-SE")
    ax.set_xlabel("intra-student correlation rho")
    ax.set_ylabel("P(draw) when |p_AI - p_H| = eps")
    ax.legend(fontsize=8)
    return fig


def power_run(
    out: Path,
    *,
    rates: Rates,
    eps_values: list[float],
    delta_values: list[float],
    rho_values: list[float],
    n_students: int = 100,
    m: int = 25,
    alpha: float = 0.05,
    power: float = 0.8,
    reps: int = 500,
    seed: int = 0,
    log=None,
    executor=None,
    se: str = SIMULATION_SE,
) -> dict:
    for e in eps_values:
        check_margins(e, min(delta_values), alpha)
    if se not in CLUSTER_SE:
        raise InputError(f"se= must be one of {', '.join(CLUSTER_SE)}, got {se!r}")
    try:
        rates.vector()
    except ValueError as exc:
        raise InputError(str(exc)) from None
    params = {
        "p_ai": rates.ai, "p_human": rates.human, "p_random": rates.random,
        "eps": eps_values, "delta": delta_values, "rho": rho_values, "n_students": n_students,
        "m": m, "alpha": alpha, "power": power, "reps": reps, "se": se,
    }  # fmt: skip
    if executor is not None:
        params["executor"] = executor.describe()
    run = RunDir(out, command="turing power", params=params, seed=seed)
    t0 = time.perf_counter()
    table = power_table(
        eps_values=eps_values, delta_values=delta_values, rho_values=rho_values, rates=rates,
        n_students=n_students, m=m, alpha=alpha, power=power, reps=reps, seed=seed,
        executor=executor, se=se,
    )  # fmt: skip
    run.table("power_table", table)
    # power curves: draw power vs students at m, per rho (first eps, first delta)
    eps0, delta0 = eps_values[0], delta_values[0]
    curves = _power_curves(
        rates, rho_values=rho_values, n_students=n_students, m=m, eps=eps0, delta=delta0,
        alpha=alpha, reps=reps, seed=seed, executor=executor, se=se,
    )  # fmt: skip
    run.table("power_curves", curves)
    t1 = type1_table(
        rho_values=rho_values, n_students=n_students, m=m, eps=eps0, delta=delta0, alpha=alpha,
        reps=max(reps, 1000), seed=seed, rates=rates, executor=executor, se=se,
    )  # fmt: skip
    run.table("type1", t1)
    ss = sample_size(rates, eps=eps0, delta=delta0, alpha=alpha, power=power, rho=0.0, m=m)
    rep = Report(
        "Imitation game: power and sample size",
        f"p_AI={rates.ai}, p_Human={rates.human}, p_random={rates.random}, alpha={alpha}, "
        f"target power {power}, {m} MCQs per student",
    )
    _power_sections(rep, ss, table, curves, eps=eps0, delta=delta0, power=power, m=m)
    rep.section("Type-I error of 'draw' (naive vs clustered SEs)").text(
        f"Truth exactly on the equivalence boundary: p_AI - p_Human = eps = {eps0}. A valid test "
        "declares draw in at most alpha of studies. Naive SEs ignore that each student answers "
        f"{m} MCQs and over-declare draws as rho grows; clustered ({se}) SEs stay at alpha."
    ).table(t1, digits=4).figure(_type1_figure(t1))
    results = {
        "sample_size_rho0": ss,
        "power_table": table,
        "type1": t1,
        "seconds": time.perf_counter() - t0,
    }
    run.finish(results, rep.render())
    return results


def _power_curves(
    rates: Rates, *, rho_values: list[float], n_students: int, m: int, eps: float, delta: float,
    alpha: float, reps: int, seed: int, executor, se: str,
) -> pd.DataFrame:  # fmt: skip
    """Draw power against the number of students, per rho: the normal approximation on a grid
    of sizes, and a simulation at every other size."""
    grid = sorted({max(2, int(x)) for x in np.geomspace(5, max(4 * n_students, 50), 9)})
    curves = []
    for rho in rho_values:
        for g in grid:
            pn = power_normal(rates, n_students=g, m=m, eps=eps, delta=delta, alpha=alpha, rho=rho)
            curves.append({"rho": rho, "n_students": g, "power_normal": pn["draw"]})
    curves = pd.DataFrame(curves)
    points = [(i, rho, g) for i, rho in enumerate(rho_values) for g in grid[::2]]
    sims = map_power(
        [
            dict(rates=rates, n_students=g, m=m, eps=eps, delta=delta, alpha=alpha, rho=rho,
                 reps=max(100, reps // 2), seed=seed + 500 + 17 * i + g, se=se)
            for i, rho, g in points
        ],
        executor,
    )  # fmt: skip
    sim_pts = pd.DataFrame(
        [
            {"rho": rho, "n_students": g, "power_sim": s["clustered"]["draw"]}
            for (_, rho, g), s in zip(points, sims, strict=True)
        ],
        columns=["rho", "n_students", "power_sim"],
    )
    return curves.merge(sim_pts, on=["rho", "n_students"], how="left")


def _power_sections(
    rep: Report, ss: dict, table: pd.DataFrame, curves: pd.DataFrame, *, eps: float,
    delta: float, power: float, m: int,
) -> None:  # fmt: skip
    """What the calculation is, the sample-size table and the power curves."""
    rep.section("What this calculation is (and the paper's ~100 x 25 is not)").text(
        "The paper sizes its study (about 100 students x 25 questions) by coverage - enough "
        "students and questions for Phase 1 to surface the common misconceptions - from its "
        "concentration, sample-complexity and question-coverage theorems: run 'turing power "
        f"--coverage' (at k = 10, p_min = 0.05, delta = 0.05 the sample-complexity bound gives "
        f"{students_needed(10, 0.05, 0.05)} students). This report answers a different question, "
        "this project's addition: how many students the verdict needs once the misconceptions "
        "are there.",
        f"At this run's rates and eps = {eps}, delta = {delta}, rho = 0: "
        f"{ss['students_tost']} students for the TOST, "
        f"{max(ss['students_sup_ai'], ss['students_sup_human'])} for superiority over random, "
        f"{ss['students_draw']} for a draw (all three). Any intra-student correlation rho "
        "multiplies the MCQs needed by the design effect 1 + (m - 1) rho; the simulation below "
        "uses a Dirichlet-multinomial student effect, whose intra-student correlation is exactly "
        "rho.",
    )
    rep.section("Sample sizes and power over eps, delta, rho").table(table)
    fig, ax = new_figure(6.0, 3.8)
    for rho, c in curves.groupby("rho"):
        (line,) = ax.plot(c["n_students"], c["power_normal"], label=f"rho = {rho}")
        pts = c.dropna(subset=["power_sim"])
        ax.plot(pts["n_students"], pts["power_sim"], "o", color=line.get_color())
    ax.axhline(power, color="k", ls="--", lw=1)
    ax.set_xscale("log")
    ax.set_xlabel(f"students ({m} MCQs each)")
    ax.set_ylabel("P(draw) when p_AI = p_Human")
    ax.set_title(f"eps = {eps}, delta = {delta}: lines normal approx., dots simulation", fontsize=9)
    ax.legend(fontsize=8)
    rep.section("Power curves").figure(fig)


def _consistency_figure(cons: pd.DataFrame, n_questions: int):
    fig, _ = new_figure(8.0, 3.2)
    fig.clf()
    axs = fig.subplots(1, 2, sharey=True)
    for ax, col, title in (
        (axs[0], "oracle_draw", "oracle AI vs human: draw"),
        (axs[1], "unconditioned_told_apart", "unconditioned AI told apart"),
    ):
        for p, sub in cons.groupby("p_rule"):
            ax.plot(sub["n_students"], sub[col], "o-", label=f"p_rule {p:g}")
        ax.axhline(0.8, color="k", ls="--", lw=0.8)
        ax.set_xscale("log")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(f"students ({n_questions} MCQs each)")
    axs[0].set_ylabel("share of replications")
    axs[1].legend(fontsize=7)
    return fig


def _convergence_figure(conv: pd.DataFrame, eps: float, alpha: float):
    fig, _ = new_figure(9.0, 3.2)
    fig.clf()
    gaps = sorted(conv["gap"].unique())
    axs = fig.subplots(1, len(gaps), sharey=True)
    for ax, gap in zip(axs, gaps, strict=True):
        sub = conv[conv["gap"] == gap]
        for v in ("draw", "human_better", "ai_better", "inconclusive", "both_fail"):
            if sub[v].max() > 0:
                ax.plot(sub["n_students"], sub[v], "o-", color=_VERDICT_COLORS[v], label=v)
        ax.plot(sub["n_students"], sub["mcnemar_rejects"], "k:", label="McNemar d=0 rejects")
        ax.axhline(alpha, color="k", ls="--", lw=0.8)
        ax.set_xscale("log")
        rel = "<" if gap < eps else ("=" if gap == eps else ">")
        ax.set_title(f"p_H - p_AI = {gap:g} ({rel} eps)", fontsize=9)
        ax.set_xlabel("students")
    axs[0].set_ylabel("share of simulated studies")
    axs[-1].legend(fontsize=7)
    return fig


def _convergence_section(rep: Report, conv: pd.DataFrame, cfg: SimConfig) -> None:
    rep.section("Does the verdict converge to the right answer?").text(
        "Fixed truths with the human ahead by a gap below, at and above eps = "
        f"{cfg.eps} (p_Human = 0.25, p_AI = 0.25 - gap, p_random = 0.05; Dirichlet-multinomial "
        f"students with intra-student correlation 0.02, {cfg.n_questions} MCQs each, "
        f"{cfg.reps} simulated studies per cell, {cfg.se} SEs). The right limits: gap < eps -> "
        "draw, gap > eps -> human_better, gap = eps -> neither (each at most alpha at every "
        "size). mcnemar_rejects is the reported point-null test: it rejects more and more often "
        "for any gap other than 0, which is why it cannot decide a within-eps question.",
        _DECISION_RULE,
    ).table(_RULE_TABLE, caption="decision rule").table(conv, digits=3).figure(
        _convergence_figure(conv, cfg.eps, cfg.alpha)
    )


def simulate_run(
    out: Path,
    cfg: SimConfig,
    *,
    n_students_grid: list[int] | None = None,
    human_accuracies: list[float] | None = None,
    type1_rhos: list[float] | None = None,
    p_rules: list[float] | None = None,
    convergence_sizes: list[int] | None = None,
    log=None,
    executor=None,
) -> dict:
    """``turing simulate``: :func:`simulation_results` written as tables, report and results."""
    cfg.check()
    grid = DEFAULT_GRID if n_students_grid is None else n_students_grid
    accs = DEFAULT_ACCURACIES if human_accuracies is None else human_accuracies
    rhos = DEFAULT_RHOS if type1_rhos is None else type1_rhos
    p_rules = DEFAULT_P_RULES if p_rules is None else p_rules
    conv_sizes = CONVERGENCE_SIZES if convergence_sizes is None else convergence_sizes
    for p in p_rules:
        if not 0 <= p <= 1:
            raise InputError(f"p_rules= values must be in [0, 1], got {p}")
    params = _simulation_params(cfg, grid, accs, rhos, p_rules, conv_sizes)
    if executor is not None and not isinstance(executor, InProcess):
        params["executor"] = executor.describe()
    run = RunDir(out, command="turing simulate", params=params, seed=cfg.seed)
    res = simulation_results(
        cfg, grid=grid, accs=accs, rhos=rhos, p_rules=p_rules, conv_sizes=conv_sizes, log=log,
        executor=executor,
    )  # fmt: skip
    return write_simulation(run, res)


def _simulation_params(cfg: SimConfig, grid, accs, rhos, p_rules, conv_sizes) -> dict:
    params = {k: v for k, v in cfg.__dict__.items() if k not in ("seed",)}
    params.update(
        {"n_students_grid": list(grid), "human_accuracies": list(accs), "type1_rhos": list(rhos),
         "p_rules": list(p_rules), "convergence_sizes": list(conv_sizes)}
    )  # fmt: skip
    return params


def write_simulation(run: RunDir, res: SimulationResults) -> dict:
    """Tables, report and results.json of ``turing simulate`` (the command,
    :meth:`SimulationResults.save` and :meth:`SimulatedStudy.save` write through here); a
    further study left out writes no table."""
    run.table("verdict_rates", res.rates)
    run.table("mean_rates", res.main["means"])
    run.table("bank_examples", pd.DataFrame(res.main["bank"].examples))
    run.table("example_phase2", res.main["example"])
    for name, table in (("verdicts_by_human_accuracy", res.by_accuracy),
                        ("verdicts_by_consistency", res.consistency), ("type1", res.type1),
                        ("verdict_convergence", res.convergence)):  # fmt: skip
        if len(table.columns):
            run.table(name, table)
    results = res.headline()
    run.finish(results, _simulation_report(res).render())
    return results


def save_simulation(res: SimulationResults, folder: str | Path, *, overwrite: bool = False) -> Path:
    """:meth:`SimulationResults.save`: the folder ``turing simulate`` writes."""
    params = _simulation_params(res.cfg, res.grid, res.human_accuracies, res.type1_rhos,
                                res.p_rules, res.convergence_sizes)  # fmt: skip
    run = saved_run(folder, "turing simulate", params=params, seed=res.cfg.seed,
                    overwrite=overwrite)  # fmt: skip
    write_simulation(run, res)
    return run.path


def save_simulated_study(
    sim: SimulatedStudy, folder: str | Path, *, overwrite: bool = False
) -> Path:
    """:meth:`SimulatedStudy.save`: the folder ``turing simulate --main-only`` writes."""
    empty = pd.DataFrame()
    res = SimulationResults(sim.config, list(sim.sizes), [], sim, empty, empty, empty, empty,
                            sim.seconds, sim.seconds)  # fmt: skip
    return save_simulation(res, folder, overwrite=overwrite)


def _simulation_report(res: SimulationResults) -> Report:
    """The HTML report of ``turing simulate``."""
    cfg, rates, grid, main, conv = res.cfg, res.rates, res.grid, res.main, res.convergence
    seconds_main = res.seconds_main
    piv = res.verdicts_main()
    h = res.headline()
    oracle_draw = h["oracle_draw_rate"]
    uncond_apart = h["unconditioned_told_apart_rate"]
    uncond_human_better = h["unconditioned_human_better_rate"]
    first_size = res.first_size
    rep = Report(
        "Imitation game: simulation study",
        f"{cfg.n_students} students x {cfg.n_questions} questions, {cfg.reps} replications, "
        f"human accuracy {cfg.human_accuracy}, eps {cfg.eps}, delta {cfg.delta}, alpha "
        f"{cfg.alpha}, seed {cfg.seed}",
    )
    rep.section("Design").text(
        "Students hold mal-rules from the library with the population frequencies below (each "
        "independently; students with none are redrawn). Each of a student's Phase-1 tuples is a "
        f"slip with probability {cfg.slip}, else the answer of one of their rules on a question of "
        "that rule's family; Phase 2 asks a new question of the same family on which the same rule "
        "errs. AIs: oracle (diagnoses the Phase-1 answer with the library and targets that rule), "
        "unconditioned (the most common misconception on q'), random (a random rule's answer on "
        f"q'); the human expert diagnoses correctly with probability {cfg.human_accuracy}. "
        "Duplicated distractors are shown once and credited to both sources. Students choose by "
        f"the library's response model (p_rule {cfg.p_rule}, 2PL slope {cfg.discrimination}).",
        _DECISION_RULE,
    ).table(
        pd.DataFrame([{"rule": r, "frequency": f} for r, f in cfg.frequencies.items()]),
        caption="population frequencies",
    )
    rep.section("Headline").bullets(
        [
            f"Oracle AI vs human: draw in {100 * oracle_draw:.1f}% of replications at "
            f"{cfg.n_students} x {cfg.n_questions} (80% first reached at "
            f"{first_size('oracle', ['draw'])} students).",
            f"Unconditioned AI told apart from the human (human_better or ai_better) in "
            f"{100 * uncond_apart:.1f}% (human_better {100 * uncond_human_better:.1f}%); 80% "
            f"first reached at {first_size('unconditioned', ['human_better', 'ai_better'])} "
            "students.",
            f"Simulation of {cfg.reps} replications x {len(grid) + 1} sizes x 3 AIs took "
            f"{seconds_main:.1f} s.",
        ]
    )
    rep.section("Verdict rates at the main size (clustered SEs)").table(piv.reset_index())
    if len(conv):
        _convergence_section(rep, conv, cfg)
    rep.section("Mean selection rates").table(main["means"])
    fig, axes = new_figure(9.0, 3.2)
    fig.clf()
    axs = fig.subplots(1, 3, sharey=True)
    for ax, ai in zip(axs, AIS, strict=True):
        sub = rates[(rates["ai"] == ai) & (rates["se"] == "clustered")]
        for v in ("draw", "human_better", "ai_better", "inconclusive", "both_fail"):
            s = sub[sub["verdict"] == v]
            if s["rate"].max() > 0:
                ax.plot(s["n_students"], s["rate"], "o-", color=_VERDICT_COLORS[v], label=v)
        ax.axhline(0.8, color="k", ls="--", lw=0.8)
        ax.set_xscale("log")
        ax.set_title(f"{ai} AI vs human", fontsize=9)
        ax.set_xlabel(f"students ({cfg.n_questions} MCQs each)")
    axs[0].set_ylabel("share of replications")
    from matplotlib.lines import Line2D

    axs[-1].legend(
        [Line2D([], [], color=c, marker="o") for c in _VERDICT_COLORS.values()],
        list(_VERDICT_COLORS),
        fontsize=7,
    )
    rep.section("Verdict rates vs sample size").figure(fig)
    _further_sections(rep, res, h["students_needed_by_consistency"])
    rep.section("Examples from the question bank").table(
        pd.DataFrame(main["bank"].examples).head(12)
    )
    return rep


def _further_sections(rep: Report, res: SimulationResults, need: pd.DataFrame) -> None:
    """The sections of the further studies that were run."""
    cfg, acc_df, cons, t1 = res.cfg, res.by_accuracy, res.consistency, res.type1
    if len(acc_df):
        rep.section("Verdicts by human accuracy").table(acc_df)
    if len(cons):
        _consistency_section(rep, res, need)
    if len(t1):
        rep.section("Type-I error of 'draw' (naive vs clustered SEs)").text(
            f"Dirichlet-multinomial students (see turing power), p_AI - p_Human = eps = {cfg.eps} "
            "exactly: draw must be declared in at most alpha of replications."
        ).table(t1, digits=4).figure(_type1_figure(t1))


def _consistency_section(rep: Report, res: SimulationResults, need: pd.DataFrame) -> None:
    cfg, cons, p_rules = res.cfg, res.consistency, res.p_rules
    rep.section("Sample size by how consistently students act on a misconception").text(
        f"The same study with p_rule (the chance that a student picks the distractor of a "
        f"misconception they hold when it is shown) at {', '.join(map(str, p_rules))} instead of "
        f"{cfg.p_rule}; {max(50, cfg.reps // 4)} replications per size, clustered SEs, human "
        f"accuracy {cfg.human_accuracy}. unconditioned_gap is the mean p_Human - p_AI of the "
        "unconditioned AI: the less students act on their misconceptions, the smaller the "
        f"advantage of reading them right; once it falls below eps = {cfg.eps}, a large study "
        "declares the unconditioned AI equivalent to the expert (a draw) rather than telling "
        "them apart, as it should. Simulated students vary less than a classroom, so the sizes "
        "are lower bounds for a study with the same p_rule; take p_rule from pilot data "
        "(turing analyze reports p_AI and p_Human)."
    ).table(
        need, caption="fewest students (of those simulated) reaching 80%; <NA>: not reached"
    ).table(cons, digits=3).figure(_consistency_figure(cons, cfg.n_questions))


def coverage_run(out: Path, *, k: int, p_min: float | None, zipf: float | None,
                 n_misconceptions: int, mass_eps: float | None, confidence: float,
                 per_student: int, reveal: float, reps: int, seed: int,
                 max_bytes: float | None = None) -> dict:  # fmt: skip
    """``turing power --coverage``: the coverage plan, its simulation check, a report."""
    if p_min is None and zipf is None:
        p_min = 0.05
    params = {
        "k": k, "p_min": p_min, "zipf": zipf, "misconceptions": n_misconceptions,
        "mass": mass_eps, "confidence": confidence, "per_student": per_student,
        "reveal": reveal, "reps": reps,
    }  # fmt: skip
    try:
        res = coverage_plan(
            k=k, confidence=confidence, mass_eps=mass_eps, p_min=p_min, zipf=zipf,
            n_misconceptions=n_misconceptions, per_student=per_student, reveal=reveal,
            reps=reps, seed=seed, max_bytes=max_bytes,
        )  # fmt: skip
    except InputError as exc:  # in the names of `turing power`'s parameters: its flags
        raise exc.renamed(k="top_k", n_misconceptions="misconceptions", mass_eps="mass") from None
    run = RunDir(out, command="turing power --coverage", params=params, seed=seed)
    return write_coverage(run, res)


def save_coverage(res: CoverageResults, folder: str | Path, *, overwrite: bool = False) -> Path:
    """:meth:`CoverageResults.save`: the folder ``turing power --coverage`` writes."""
    params = {k: v for k, v in res.params.items() if k != "seed"}
    run = saved_run(folder, "turing power --coverage", params=params,
                    seed=res.params.get("seed"), overwrite=overwrite)  # fmt: skip
    write_coverage(run, res)
    return run.path


def write_coverage(run: RunDir, res: CoverageResults) -> dict:
    """The curve, summary, report and results.json of ``turing power --coverage`` (the
    command and :meth:`CoverageResults.save` both write through here)."""
    curve = res.coverage_curve()
    run.table("coverage_curve", curve)
    run.text("summary.txt", res.summary() + "\n")
    rep = Report("Imitation game: coverage (the paper's sample size)", res.model)
    rep.section("Plan").text(res.summary().replace("\n", "  \n"))
    rep.section("Coverage by simulation around the bound").table(curve, digits=4)
    rep.section("Where the bounds come from").text(
        "Theorem 1 (concentration): the top k misconceptions carry most of the mass. Theorem 2 "
        "(sample complexity): n >= ln(k/delta) / pi_k students, pi_k the chance that a student "
        "holds (and shows) the rarest of them, by a union bound and 1 - x <= exp(-x). Theorem 3 "
        "(question coverage): Q >= ln(1/delta_Q) / q questions for a held misconception to show. "
        "The paper's ~100 students x 25 questions comes from these bounds, not from a power "
        "calculation. The copy of the paper available to this project is a summary that names "
        "the theorems and their parameters (k, p_min, delta) but not their full statements, so "
        "these are the standard union-bound forms of that argument."
    )
    results = dict(res.headline())
    run.finish(results, rep.render())
    return results


def assemble_run(
    out: Path,
    ai_path: Path,
    human_path: Path,
    *,
    random_path: Path | None = None,
    seed: int = 0,
    keep_disputed: bool = False,
) -> dict:
    """``turing assemble``: ``mcqs.csv`` (and ``dropped.csv``) from the three sources' files."""
    ai = read_source(ai_path, AI_SCHEMA)
    human = read_source(human_path, HUMAN_SCHEMA)
    rnd = read_source(random_path, RANDOM_SCHEMA) if random_path is not None else None
    inputs = {"ai": ai_path, "human": human_path}
    if random_path is not None:
        inputs["random"] = random_path
    run = RunDir(out, command="turing assemble", params={"keep_disputed": keep_disputed},
                 seed=seed, inputs=inputs)  # fmt: skip
    table, info = assemble_mcqs(ai, human, rnd, seed=seed, keep_disputed=keep_disputed)
    run.table("mcqs", table)
    if len(info["dropped"]):
        run.table("dropped", info["dropped"])
    rep = Report("Imitation game: Phase-2 MCQs", f"{len(table)} MCQs, seed {seed}")
    counts = {k: v for k, v in info["stats"].items() if not isinstance(v, dict)}
    rep.section("Counts").table(pd.DataFrame([counts])).text(
        "Duplicated distractors are shown once and credited to every source that proposed them; "
        "a distractor equal to the correct answer is not shown. An MCQ whose AI distractor is "
        "missing (mcqs_without_ai) is shown with the other distractors and counts in turing "
        "analyze as one where the AI's distractor was not chosen. Tuples without a question q' "
        "and, unless --keep-disputed, those whose key the check disputed are not shown (the same "
        "for every source: the generator, not a source, wrote q')."
    )
    pos = table[[f"position_{s}" for s in _ORDER]].apply(lambda c: c.value_counts()).fillna(0)
    rep.section("Positions (balance check)").table(pos.reset_index(names="position"))
    rep.section("First MCQs").table(table.head(10))
    run.finish(info["stats"], rep.render())
    return info["stats"]
