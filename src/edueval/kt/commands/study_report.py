"""Report of the Pardos & Yudelson study: our tables beside the paper's, figures, and a discussion
of every place where the replication disagrees with the paper, written from the measured numbers."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...report import Report
from ...report.figures import new_figure, plt
from ..metrics import LABELS
from ..replication.study import (
    MOL_LABELS,
    PAPER_EXPERIMENT3,
    PAPER_MOL_FIRST,
    PAPER_TABLE2,
    PAPER_TABLE3,
    TYPICAL_SETS,
    StudyResult,
    _ranks,
    comparison_experiment3,
    comparison_table2,
    comparison_table3,
    table2,
)

if TYPE_CHECKING:
    from ..replication.replications import StudyReplications

__all__ = ["study_report", "discussion", "figures_of", "replication_section"]

LL_FAMILY = ("loglik", "aic", "aicc", "bic", "cbd", "rmse")


def figures_of(result: StudyResult) -> dict[str, object]:
    """Matplotlib figures: one per table."""
    figs = {}
    t2 = result.table2.set_index("metric")
    metrics = list(t2.index)
    y = np.arange(len(metrics))
    fig, axes = plt.subplots(1, 3, figsize=(12, 4.2), sharey=True, layout="constrained")
    for ax, (col, idx, title) in zip(
        axes,
        [
            ("r_perf_know", 0, "performance ~ knowledge"),
            ("r_perf_mad", 1, "performance ~ MoL MAD"),
            ("r_know_mad", 2, "knowledge ~ MoL MAD"),
        ],
        strict=True,
    ):
        ours = t2[col].to_numpy(dtype=float)
        paper = np.array([PAPER_TABLE2[m][idx] for m in metrics])
        ax.barh(y - 0.2, ours, height=0.4, label="edueval", color="#3b6ea5")
        ax.barh(y + 0.2, paper, height=0.4, label="paper", color="#c9a227")
        ax.axvline(0, color="k", lw=0.6)
        ax.set_xlim(-1, 1)
        ax.set_title(title, fontsize=10)
    axes[0].set_yticks(y, [LABELS[m] for m in metrics])
    axes[0].invert_yaxis()
    axes[0].legend(loc="lower left", fontsize=8)
    fig.suptitle("Table 2: Pearson r over the 15 non-true sets x skills", fontsize=11)
    figs["table2"] = fig

    t3 = result.table3
    fig, ax = new_figure(7.5, 4.0)
    labels = [MOL_LABELS.get(m, LABELS.get(m, m)) for m in t3["metric"]]
    paper_first = [
        PAPER_MOL_FIRST[0] if m.startswith("mol") else PAPER_TABLE3[m][0] for m in t3["metric"]
    ]
    yy = np.arange(len(labels))
    share = 100.0 * t3["n_true_first"] / t3["n_skills"]
    ax.barh(yy - 0.2, share, height=0.4, label="edueval (% of skills)", color="#3b6ea5")
    ax.barh(yy + 0.2, paper_first, height=0.4, label="paper (of 100)", color="#c9a227")
    ax.set_yticks(yy, labels)
    ax.invert_yaxis()
    ax.set_xlabel("skills where the true parameter set ranks first")
    ax.legend(fontsize=8)
    ax.set_title("Table 3: how often each metric picks the true set", fontsize=11)
    figs["table3"] = fig

    rank = _ranks(result.scores, "mol_mad", False)["true"].reindex(result.truth.index)
    fig, axes = plt.subplots(1, 4, figsize=(12, 3.2), sharey=True, layout="constrained")
    for ax, name in zip(axes, ("prior", "learn", "guess", "slip"), strict=True):
        ax.scatter(result.truth[name], rank, s=10, alpha=0.7, color="#3b6ea5")
        ax.set_xlabel(f"generating {name}")
    axes[0].set_ylabel("rank of the true set by MoL MAD")
    fig.suptitle(
        "Experiment 3: the true set's MoL-MAD rank against the generating parameters", fontsize=11
    )
    figs["experiment3"] = fig
    return figs


def _fmt(x: float) -> str:
    return f"{x:+.2f}"


def discussion(result: StudyResult, variant: StudyResult | None = None) -> list[str]:
    """Sentences comparing our numbers with the paper's; every number here is measured."""
    t2 = result.table2.set_index("metric")
    t3 = result.table3.set_index("metric")
    n_sk = int(t3.loc["loglik", "n_skills"])
    # --- findings that hold, then the disagreements ---------------------------------------
    out = _main_findings(t2, t3, n_sk)
    out.append(_LOGLIK_SIGN)
    out.append(_correlation_strength(result, t2, n_sk))
    r2 = float(t2.loc["r2", "r_perf_mad"])
    out.append(
        f"Pseudo R²: {_fmt(r2)} with MoL MAD here, -0.236 in the paper; weak in both. The paper "
        "prints Efron's R² without squares, which would divide by sum(y - mean y) = 0; we use the "
        "standard squared form, and so, evidently, did the paper's computation."
    )
    if int(t3.loc["loglik", "n_true_first"]) > 88:
        out.append(_loglik_above_paper(result, variant, t3, n_sk))
    out.append(_mol_first(result, t3, n_sk))
    out.append(_experiment3_sentence(result))
    cfg = result.config
    iar = result.in_a_row
    out.append(
        f"Tutoring practice: declaring mastery after {cfg.n_in_a_row} correct answers in a row "
        f"gives a mean MoL MAD of {iar.iloc[:, 1].mean():.2f} opportunities against "
        f"{iar['mol_mad_true_set'].mean():.2f} for BKT with the true parameters and the 0.95 "
        "threshold."
    )
    return out


_LOGLIK_SIGN = (
    "Sign of log-likelihood in Table 2: we report log-likelihood itself (higher is better), so "
    "its correlations are exactly the negatives of AIC's, AICc's and BIC's (k and N are the "
    "same for every set of a skill). The paper prints the same positive values for "
    "log-likelihood as for AIC, so its column must hold a quantity that grows as the fit gets "
    "worse (negative log-likelihood or deviance); the magnitudes are comparable, the signs "
    "are not."
)


def _main_findings(t2, t3, n_sk: int) -> list[str]:
    """The paper's two main findings (Tables 3 and 2) as measured here."""
    ll_first = int(t3.loc["loglik", "n_true_first"])
    rmse_first = int(t3.loc["rmse", "n_true_first"])
    top = list(t2.index[:3])
    auc_r = float(t2.loc["auc", "r_perf_mad"])
    strongest = ", ".join(f"{LABELS[m]} ({_fmt(t2.loc[m, 'r_perf_mad'])})" for m in top)
    return [
        f"Main finding 1 (Table 3): log-likelihood ranks the true set first in {ll_first}/{n_sk} "
        f"skills and RMSE in {rmse_first}/{n_sk} (paper: 88/100 for both); accuracy "
        f"{int(t3.loc['accuracy', 'n_true_first'])}, F-measure {int(t3.loc['f1', 'n_true_first'])}, "
        f"AUC {int(t3.loc['auc', 'n_true_first'])}, recall {int(t3.loc['recall', 'n_true_first'])} "
        f"and precision {int(t3.loc['precision', 'n_true_first'])}. As in the paper, the "
        "likelihood family and RMSE favour the true parameters far more often than the confusion-"
        "table metrics and AUC.",
        f"Main finding 2 (Table 2): the performance metrics most tied to moment-of-learning error "
        f"are {strongest}; the paper's top three are recall, F-measure and accuracy. AUC's "
        f"correlation is {_fmt(auc_r)} (paper -0.119): "
        + (
            "weak here too, so AUC is a poor guide to mastery estimation in both."
            if abs(auc_r) < 0.3
            else "stronger than in the paper."
        ),
    ]


def _correlation_strength(result: StudyResult, t2, n_sk: int) -> str:
    """The performance~MoL correlations against the paper's, and how much they move with the
    choice of candidate sets."""
    diffs = {
        m: float(t2.loc[m, "r_perf_mad"]) - PAPER_TABLE2[m][1] for m in t2.index if m != "loglik"
    }
    weaker = [m for m, d in diffs.items() if abs(t2.loc[m, "r_perf_mad"]) < abs(PAPER_TABLE2[m][1])]
    sub_r = table2(
        result.scores, [s for s in result.scores["set"].unique() if s.startswith("random")]
    ).set_index("metric")
    sub_t = table2(result.scores, list(TYPICAL_SETS["set"])).set_index("metric")
    return (
        f"Strength of the performance~MoL correlations: {len(weaker)} of {len(diffs)} metrics "
        f"correlate less strongly with MoL MAD here than in the paper (recall "
        f"{_fmt(t2.loc['recall', 'r_perf_mad'])} vs -0.954, RMSE {_fmt(t2.loc['rmse', 'r_perf_mad'])}"
        f" vs +0.754). These correlations pool 15 parameter sets over {n_sk} skills, so they depend "
        f"on which 15 sets are used, and the paper's five Cognitive Tutor sets are unpublished "
        f"(ours are documented in TYPICAL_SETS) and its ten random sets unknown. Measured on our "
        f"own data, the recall correlation is {_fmt(sub_r.loc['recall', 'r_perf_mad'])} over the "
        f"ten random sets alone and {_fmt(sub_t.loc['recall', 'r_perf_mad'])} over the five "
        f"typical sets alone (AUC: {_fmt(sub_r.loc['auc', 'r_perf_mad'])} and "
        f"{_fmt(sub_t.loc['auc', 'r_perf_mad'])}): the choice of candidate sets moves these "
        "coefficients a long way."
        + (
            " In every subset the confusion-table metrics recall, F-measure and accuracy stay "
            "more tied to MoL error than AUC, as in the paper."
            if all(
                min(abs(t.loc[m, "r_perf_mad"]) for m in ("recall", "f1", "accuracy"))
                > abs(t.loc["auc", "r_perf_mad"])
                for t in (t2, sub_r, sub_t)
            )
            else " The ordering of metrics also changes between subsets."
        )
    )


def _loglik_above_paper(result: StudyResult, variant: StudyResult | None, t3, n_sk: int) -> str:
    """Why log-likelihood picks the true set more often than the paper's 88/100 (and what the
    inverted-prior variant gives, when it was run)."""
    cfg = result.config
    ll_first = int(t3.loc["loglik", "n_true_first"])
    msg = (
        f"True set ranked first by log-likelihood in {ll_first}/{n_sk} skills, more than the "
        f"paper's 88/100. With {cfg.n_students * cfg.n_opportunities:,} responses per skill "
        "the true model's expected log-likelihood advantage over any other set (N times a "
        "Kullback-Leibler divergence) is large against sampling noise unless a candidate set "
        "is nearly identical to the truth, so under the stated design the true set should win "
        "almost always."
    )
    if variant is not None:
        v3 = variant.table3.set_index("metric")
        inverted = int(v3.loc["loglik", "n_true_first"])
        # per 100 skills, to compare with the paper's 88/100 at any --skills
        lo, hi = sorted((100 * inverted / n_sk, 100 * ll_first / n_sk))
        where = (
            f"the paper's 88/100 lies between the two ({lo:.0f} and {hi:.0f} per 100 skills), "
            "which suggests that its 'ground truth' sets did not match its simulated data "
            "exactly in some skills"
            if lo <= 88 <= hi
            else f"the paper's 88/100 lies outside both ({lo:.0f} and {hi:.0f} per 100 "
            "skills), so neither reading of the prior explains it alone"
        )
        msg += (
            " Simulating as the paper's prose literally reads (a student starts unknown with "
            f"probability prior) while predicting with the stated prior gives "
            f"{inverted}/{n_sk} (mean rank {v3.loc['loglik', 'mean_rank_true']:.2f}); "
            f"{where}. The published material does not let us say more."
        )
    return msg


def _mol_first(result: StudyResult, t3, n_sk: int) -> str:
    """How often MoL MAD picks the true set, and what the censoring convention does."""
    cfg = result.config
    mol_first = int(t3.loc["mol_mad", "n_true_first"])
    mol_rank = float(t3.loc["mol_mad", "mean_rank_true"])
    never = result.scores[result.scores["set"] == "true"]["n_never_crossed"].mean()
    return (
        f"MoL MAD picks the true set first in {mol_first}/{n_sk} skills (mean rank {mol_rank:.2f};"
        f" paper {PAPER_MOL_FIRST[0]}/100, {PAPER_MOL_FIRST[1]}). The true model is calibrated, "
        "not tuned for the first crossing of 0.95: sets with a higher prior or learning rate cross "
        "earlier and are rewarded when the true state switches early. How censored students count "
        "is unstated in the paper; we charge T+1 (one past the last opportunity) to a student who "
        f"never learns or never crosses -- under the true set {never:.1f} of "
        f"{cfg.n_students} students per skill never cross. Averaging only over students who both "
        f"learn and are detected within the {cfg.n_opportunities} opportunities instead, the true "
        f"set ranks first in {int(t3.loc['mol_mad_uncensored', 'n_true_first'])}/{n_sk} skills "
        f"(mean rank {t3.loc['mol_mad_uncensored', 'mean_rank_true']:.2f})"
        + (
            ", so the censoring convention does not explain the gap to the paper."
            if abs(t3.loc["mol_mad_uncensored", "n_true_first"] - mol_first) <= 5
            else ": the convention matters."
        )
    )


def _experiment3_sentence(result: StudyResult) -> str:
    """Experiment 3: the true set's MoL-MAD rank against the generating parameters."""
    e3 = result.experiment3.set_index("parameter")
    parts = []
    for name in ("prior", "learn", "guess", "slip"):
        r, p = float(e3.loc[name, "r"]), float(e3.loc[name, "p"])
        pr, _ = PAPER_EXPERIMENT3[name]
        agree = np.sign(r) == np.sign(pr) and (p < 0.05) == (abs(pr) >= 0.2)
        parts.append(
            f"{name} {_fmt(r)} (p={p:.2g}; paper {_fmt(pr)}{'' if agree else ', differs'})"
        )
    return (
        "Experiment 3 (true set's MoL-MAD rank vs generating parameters): "
        + "; ".join(parts)
        + ". The paper itself could not explain its learning-rate effect, and its text swaps "
        "guess and slip in the sentence on slip; because these correlations are taken on the "
        "MoL-MAD rank, they inherit the censoring convention and the composition of the other 15 "
        "sets, both of which differ from the paper's."
        + (
            " Our strongest effect is the guess rate: a high guess rate makes correct answers weak "
            "evidence, so the calibrated posterior reaches 0.95 late while sets with a lower guess "
            "rate declare mastery sooner."
            if e3.loc["guess", "r"] > 0
            and e3.loc["guess", "p"] < 0.05
            and abs(e3.loc["guess", "r"]) == e3["r"].abs().max()
            else ""
        )
    )


def study_report(
    result: StudyResult, variant: StudyResult | None = None, *, figures: dict | None = None
) -> Report:
    cfg = result.config
    rep = Report(
        "Knowledge tracing: moment of learning (Pardos & Yudelson replication)",
        f"{cfg.n_students} students x {cfg.n_skills} skills x {cfg.n_opportunities} opportunities, "
        f"{1 + len(result.candidates)} candidate parameter sets, threshold {cfg.threshold}, "
        f"seed {cfg.seed}; ran in {result.seconds:.1f} s.",
    )
    figs = figures_of(result) if figures is None else figures
    rep.section("What this study asks").text(
        "If a student model predicts answers well, does it also know when a student learned? We "
        "simulate students from known Bayesian Knowledge Tracing parameters, predict them with 16 "
        "candidate parameter sets (the true one, 5 typical tutor sets, 10 random), and correlate "
        "each fit metric with the error in the moment of learning (MoL MAD: mean |first truly "
        "known opportunity - first opportunity with P(known) >= threshold|).",
    )
    rep.section("Discussion: where we agree and where we do not").bullets(
        discussion(result, variant)
    )
    rep.section("Table 2 — metric correlations").table(
        comparison_table2(result),
        "Pearson r over the 15 non-true sets x skills; *** p < 0.001, ** p < 0.01, * p < 0.05. "
        "Rows sorted by |performance ~ MoL MAD|.",
    ).figure(figs["table2"])
    rep.section("Table 3 — how often the true set ranks first").table(
        comparison_table3(result),
        "Ranks among all candidate sets per skill (1 = best, ties averaged); a tie for first does "
        "not count as first.",
    ).figure(figs["table3"])
    rep.section("Experiment 3 — which skills are hard for the true set").table(
        comparison_experiment3(result)
    ).figure(figs["experiment3"])
    cands = result.candidates.reset_index()
    rep.section("Candidate parameter sets").table(
        cands,
        "The 15 non-true sets, the same for every skill (typical sets are ours: the "
        "paper's Cognitive Tutor sets are unpublished).",
    )
    if variant is not None:
        rep.section("Sensitivity: simulating with the paper's prose prior").text(
            "The paper's description of its simulation says a student begins in the not-learned "
            "state when a uniform draw is at most the prior, i.e. the opposite of the standard "
            "model used everywhere else in edueval. Re-running the study that way (same seed, same "
            "sizes), while predicting with the stated parameters:"
        ).table(comparison_table3(variant)).table(comparison_experiment3(variant))
    rep.section("Per-skill results").text(
        "Every (skill, set) score is in scores.csv; generating parameters in truth.csv."
    )
    return rep


def replication_section(rep: Report, reps: StudyReplications) -> Report:
    """The spread of Tables 3 and 2 across replications (the tables above are replication 1)."""
    n = len(reps.studies)
    sec = rep.section(f"Across {n} replications")
    sec.text(
        f"The whole study repeated {n} times, each replication with its own seed (spawned from "
        f"seed {reps.config.seed}): new generating parameters, random candidate sets and students. "
        "The tables above are replication 1; per-replication rows are in replications_table3.csv "
        "and replications_table2.csv."
    )
    sec.table(reps.table3_spread, "Table 3 across replications: true set first and its mean rank")
    if len(reps.table2_spread):
        sec.table(reps.table2_spread, "Table 2 across replications: Pearson r")
    return rep
