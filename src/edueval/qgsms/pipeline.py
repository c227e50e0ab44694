"""``qgsms run`` and ``qgsms score`` as functions writing run directories (the CLI wraps them).

A thin layer over the in-memory API (:mod:`.evaluation`): read and check the inputs
(:func:`.evaluation.prepare`), judge and score on the model opened with the run's call log
(:meth:`.evaluation.QGSMSSetup.run`), write the run folder.  ``run`` reads a pairs file
(``items pairs``' ``pairs.csv``: ``pair_id, dimension, q1, q2, better`` or ``label``, optional
``diff``, ``alpha``, ``target_topic``) and an items file, judges every pair in both orders with
each method, and writes ``judgements.csv`` (one row per method, pair and order),
``pair_scores.csv``, ``accuracy.csv`` (AA/CA), ``binomial.csv``, ``alpha_curve.csv``,
``cost.csv``, ``failures.csv``, ``profiles.jsonl`` (QG-SMS Step 1), ``simulations.jsonl`` (Step
2, one per pair), ``personas.jsonl`` (ChatEval's panels), the ranking extension (:mod:`.ranking`:
``ranking.csv`` -- 1 / 0.5 score and Bradley-Terry ability per question --
``rank_correlations.csv``, ``anova.csv``) and -- with ``repeats`` > 1 -- ``robustness.csv``; plus
``calls.jsonl``, ``report.html`` and ``results.json``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from ..model_runs import finish_model_run
from ..models.budget import DEFAULT_MAX_FAILURES, MaxFailures
from ..report import Report
from ..report.figures import plt
from ..runs import RunDir, saved_run
from .data import JUDGEMENTS_SCHEMA, PAIRS_SCHEMA, read_pairs
from .evaluation import TABLES, QGSMSEvaluation, QGSMSScores, prepare, score, score_judgements
from .judging import SEED_RULE
from .methods import MethodConfig

__all__ = ["JUDGEMENTS_SCHEMA", "PAIRS_SCHEMA", "SEED_RULE", "read_pairs", "run_qgsms",
           "save_run", "save_score", "score_run", "score_judgements", "write_run",
           "write_score"]  # fmt: skip


def _report(title: str, subtitle: str, s: dict, cost: pd.DataFrame | None,
            robustness: pd.DataFrame | None, call_summary: str | None) -> Report:  # fmt: skip
    rep = Report(title, subtitle)
    acc = s["accuracy"]
    sec = rep.section("Average and Consistent Accuracy")
    sec.text(
        "AA = share of correct judgements over both presentation orders; CA = share of pairs "
        "judged correctly in both orders. Failed judgements and ties count as wrong."
    )
    sec.table(acc)
    dims = [d for d in acc["dimension"].unique() if d != "all"]
    if len(acc) and dims:
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.4), layout="constrained", sharey=True)
        methods = list(acc["method"].unique())
        width = 0.8 / max(1, len(methods))
        for ax, metric in zip(axes, ("AA", "CA"), strict=True):
            for k, m in enumerate(methods):
                g = acc[(acc["method"] == m)].set_index("dimension").reindex(dims)
                ax.bar(np.arange(len(dims)) + k * width, g[metric].to_numpy(float), width,
                       label=m)  # fmt: skip
            ax.set_xticks(np.arange(len(dims)) + 0.4 - width / 2, dims)
            ax.set_title(metric)
            ax.set_ylim(0, 1)
            ax.axhline(0.5, color="grey", lw=0.8, ls=":")
        axes[1].legend(fontsize=7, ncols=2)
        sec.figure(fig, "AA and CA per dimension and method")
    if len(s["binomial"]):
        rep.section("Exact sign tests (exact McNemar) against Vanilla").text(
            "On the pairs both methods judged, b = units the method gets right and Vanilla "
            "wrong, c = the reverse; p = P(X >= b), X ~ Binomial(b + c, 1/2), one-sided (the "
            "paper's Table 6). CA: a unit is a pair, right in both orders; AA: a unit is one "
            "judgement (a pair in one order)."
        ).table(s["binomial"], digits=4)
    curve = s["alpha_curve"]
    if len(curve):
        sec = rep.section("Accuracy as a function of alpha")
        cdims = list(curve["dimension"].unique())
        fig, axes = plt.subplots(1, len(cdims), figsize=(3.6 * len(cdims), 3.2),
                                 layout="constrained", squeeze=False)  # fmt: skip
        for ax, d in zip(axes[0], cdims, strict=True):
            for m, g in curve[curve["dimension"] == d].groupby("method", sort=False):
                ax.plot(g["alpha"], g["AA"], marker="o", label=m)
            ax.set_title(f"{d}: AA vs alpha")
            ax.set_ylim(0, 1)
        axes[0][-1].legend(fontsize=7)
        sec.figure(fig)
        sec.table(curve)
    _ranking_section(rep, s)
    if cost is not None and len(cost):
        rep.section("Cost per method").table(cost)
    if len(s["failures"]):
        rep.section("Failures by step").table(s["failures"])
    if robustness is not None and len(robustness):
        sec = rep.section("Profile robustness")
        summ = robustness.groupby("item")["sim_DF"].agg(["count", "mean", "std", "min", "max"])
        sec.text(
            "Steps 1-2 repeated with independently sampled profile sets: the distribution of "
            "each question's simulated proportion correct across repeats."
        )
        sec.table(summ.reset_index())
        fig, ax = plt.subplots(figsize=(max(4, 0.5 * len(summ)), 3), layout="constrained")
        groups = [g["sim_DF"].to_numpy() for _, g in robustness.groupby("item")]
        ax.boxplot(groups, tick_labels=list(summ.index))
        ax.set_ylabel("simulated DF")
        ax.tick_params(axis="x", rotation=60, labelsize=7)
        sec.figure(fig)
    if call_summary:
        rep.section("Model calls").text(call_summary)
    return rep


def _ranking_section(rep: Report, s: dict) -> None:
    rc = s.get("rank_correlations")
    if rc is None or not len(s.get("ranking", [])):
        return
    sec = rep.section("Ranking the questions from the pairwise verdicts")
    sec.text(
        "Per question: the paper's ranking score (1 for a pair in which it is preferred in both "
        "orders, 0.5 in one, divided by its number of pairs) and, when fitted, the posterior mean "
        "ability of P2's Bradley-Terry model with an order effect (bt_alpha). Correlations with "
        "the true measure (Spearman, Kendall, Pearson; NaN with fewer than 3 questions or a "
        "constant side), and a one-way ANOVA of the score over the groups of questions with the "
        "same true DE. For a ranking of all pairs of a question set, build the pairs with "
        "`items pairs --alpha DE=0` (and DF=0, DC=0)."
    )
    sec.table(rc, digits=3)
    if len(s["anova"]):
        sec.table(s["anova"], digits=4)
    sec.table(s["ranking"], digits=3)


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def _write_tables(run: RunDir, res: QGSMSScores) -> None:
    for name in TABLES:
        run.table("pair_scores" if name == "pairs" else name, res.tables[name])


def run_qgsms(
    out: Path,
    pairs_path: Path,
    items_path: Path,
    *,
    methods: list[str],
    open_model: Callable,
    model_name: str,
    cfg: MethodConfig = MethodConfig(),
    retries: int = 2,
    repeats: int = 1,
    limit: int | None = None,
    seed: int = 0,
    bradley_terry: bool = True,
    max_failures: MaxFailures = DEFAULT_MAX_FAILURES,
    log: Callable[[str], None] | None = None,
) -> dict:
    """Judge every pair in both orders with each method and score the judgements (with the
    ranking extension; ``bradley_terry=False`` skips its NUTS fit). ``seed`` seeds every call
    (``cfg.seed`` is set to it); besides the tables the run keeps ``profiles.jsonl``,
    ``simulations.jsonl`` (Step 2 per pair) and ``personas.jsonl`` (ChatEval's panels)."""
    setup = prepare(pairs_path, items_path, methods=methods, cfg=cfg, retries=retries,
                    repeats=repeats, limit=limit, seed=seed, bradley_terry=bradley_terry,
                    model_name=model_name)  # fmt: skip
    setup.params["max_failures"] = str(max_failures)
    run = RunDir(out, command="qgsms run", params=setup.params, seed=seed,
                 inputs={"pairs": pairs_path, "items": items_path})  # fmt: skip
    with open_model(run.path / "calls.jsonl") as client:
        res: QGSMSEvaluation = setup.run(client, max_failures=max_failures, log=log)
    if log:
        log(res.stats.summary())
    return write_run(run, res, str(pairs_path))


def write_run(run: RunDir, res: QGSMSEvaluation, source: str) -> dict:
    """The tables, logs, report and results.json of ``qgsms run`` from its results (the
    command and :meth:`QGSMSEvaluation.save` both write through here)."""
    run.table("judgements", res.judgements)
    _write_tables(run, res)
    run.table("cost", res.cost)
    if res.params.get("repeats", 1) > 1:
        run.table("robustness", res.robustness)
    for name, entries in res.logs.items():
        if entries or name == "profiles":
            run.text(f"{name}.jsonl", _jsonl(entries))
    rep = _report("Question evaluation with simulated students (QG-SMS and baselines)",
                  f"{source}, model {res.params.get('model')}, methods {', '.join(res.methods)}",
                  res.tables, res.cost, res.robustness, res.stats.summary())  # fmt: skip
    results = {
        k: v for k, v in dict(res.headline()).items() if k not in ("model_failures", "complete")
    }
    return finish_model_run(run, results, rep, res.budget)


def save_run(res: QGSMSEvaluation, folder: str | Path, *, overwrite: bool = False) -> Path:
    """:meth:`QGSMSEvaluation.save`: the folder ``qgsms run`` writes, less its call log
    (``calls.jsonl``: the calls were made in memory, and not logged)."""
    run = saved_run(folder, "qgsms run", params=res.params, seed=res.params.get("seed"),
                    overwrite=overwrite)  # fmt: skip
    write_run(run, res, "results from Python")
    return run.path


def score_run(
    out: Path, judgement_paths: list[Path], *, bradley_terry: bool = True, seed: int = 0
) -> dict:
    """Recompute every score from one or more ``judgements.csv`` (e.g. one run per method)."""
    paths = list(judgement_paths)
    res = score(paths, bradley_terry=bradley_terry, seed=seed)
    run = RunDir(out, command="qgsms score", params={"bradley_terry": bradley_terry}, seed=seed,
                 inputs={f"judgements_{i}": p for i, p in enumerate(paths)})  # fmt: skip
    return write_score(run, res, ", ".join(map(str, paths)))


def write_score(run: RunDir, res: QGSMSScores, source: str) -> dict:
    """The tables, report and results.json of ``qgsms score`` (the command and
    :meth:`QGSMSScores.save`)."""
    _write_tables(run, res)
    rep = _report("QG-SMS: scores", source, res.tables, None, None, None)
    results = dict(res.headline())
    run.finish(results, rep.render())
    return results


def save_score(res: QGSMSScores, folder: str | Path, *, overwrite: bool = False) -> Path:
    """:meth:`QGSMSScores.save`: the folder ``qgsms score`` writes."""
    params = {"bradley_terry": res.params.get("bradley_terry", True)}
    run = saved_run(folder, "qgsms score", params=params, seed=res.params.get("seed"),
                    overwrite=overwrite)  # fmt: skip
    write_score(run, res, "results from Python")
    return run.path
