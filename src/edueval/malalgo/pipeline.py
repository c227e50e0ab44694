"""P3 runs: ``malalgo generate``, ``malalgo run`` and ``malalgo score`` as functions writing run
directories.  The CLI is a thin layer over these."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import InputError
from ..model_runs import finish_model_run
from ..models.budget import DEFAULT_MAX_FAILURES, MaxFailures
from ..report import Report
from ..report.figures import new_figure
from ..runs import RunDir, saved_run
from .data import LETTERS, read_questions
from .evaluation import META as _META
from .evaluation import MalAlgoEvaluation, ask_tasks, evaluation_from, prepare, scored_frame
from .metrics import breakdown, grade_dok_heatmap, score_table, summary
from .responses import read_responses

__all__ = [
    "audit_run",
    "generate_run",
    "run_malalgo",
    "save_run",
    "score_run",
    "scored_frame",
    "write_run",
]


#: what a reader trained on per-option features can do with each way of drawing items (measured in
#: benchmarks/RESULTS.md, "P3 adversarial filtering", "Hub items", "Variant items")
KEY_CUES = {
    "plain": "Not without a trained reader: every listed surface cue is balanced, but each "
    "distractor perturbs the correct procedure, so a classifier trained on per-option features "
    "(similarity of the rationales, value relations) finds the key in most items. Accuracy of a "
    "strong model on these items can be partly earned without the mathematics. Run 'edueval "
    "malalgo audit' on questions.csv to measure it; '--variants' draws items whose options no "
    "per-option reader can tell apart.",
    True: "Less often than on plain items: the key's value rank is uniform within each family "
    "and the most central rationale is less often the key, but a classifier trained on "
    "per-option features still finds the key in most items ('edueval malalgo audit' measures "
    "it; '--variants' draws items whose options no per-option reader can tell apart).",
    "hub": "The key is the centre of its item only a quarter of the time and its value rank is "
    "uniform, but a classifier trained on per-option features still learns each family's correct "
    "template and finds the key in most items ('edueval malalgo audit' measures it; '--variants' "
    "draws items whose options no per-option reader can tell apart).",
    "variants": "Each item's four options are the answers of four variants of its question "
    "over the same numbers, with reasoning that reads the same whichever variant is asked: the "
    "options, their values and their rationales do not depend on the key, so a reader that does "
    "not read the question is at chance; only the question decides which procedure is right.",
}


def generate_run(
    out: Path,
    *,
    n: int,
    seed: int,
    grades: list[int] | None = None,
    contents: list[str] | None = None,
    adversarial: bool | str = False,
) -> dict:
    """A license-clean MalAlgoQA-format question set built from the mal-rule library
    (``adversarial``: filtered against learned key cues, ``"hub"``: items built around a hub, or
    ``"variants"``: options that are the answers of four question variants; issue 34)."""
    from ..misconceptions import generate_items

    if n < 1:
        raise InputError("n= must be at least 1")
    run = RunDir(
        out,
        command="malalgo generate",
        params={"n": n, "grades": grades, "contents": contents, "adversarial": adversarial},
        seed=seed,
    )
    try:
        items = generate_items(
            n, seed=seed, grades=grades, contents=contents, adversarial=adversarial
        )
    except (ValueError, RuntimeError) as exc:
        raise InputError(str(exc)) from None
    run.table("questions", items)
    rep = Report("Generated MalAlgoQA-format questions", f"{n} questions, seed {seed}")
    counts = items.groupby(["content", "grade"]).size().rename("questions").reset_index()
    rep.section("Coverage").table(counts)
    rep.section("First questions").table(
        items[["id", "question", "choice_A", "choice_B", "choice_C", "choice_D", "answer"]].head(10)
    )
    rep.section("Can the key be found without the mathematics?").text(KEY_CUES[
        adversarial if adversarial in KEY_CUES else "plain"])  # fmt: skip
    results = {
        "n_questions": n,
        "contents": items["content"].value_counts().to_dict(),
        # a composed distractor (hub and variant items) names its rules joined by "+"
        "malrules_used": len(
            {
                r
                for v in items[[f"malrule_{x}" for x in LETTERS]].to_numpy().ravel()
                for r in str(v).split("+")
                if r
            }
        ),
    }
    run.finish(results, rep.render())
    return results


def _report(
    scored: pd.DataFrame, summ: dict, title: str, subtitle: str, call_summary: str | None
) -> tuple[Report, dict]:
    rep = Report(title, subtitle)
    head = pd.DataFrame(
        [
            {
                "measure": name,
                "n": summ[key]["n"],
                "accuracy": summ[key]["accuracy"],
                "95% CI": f"[{summ[key]['ci_low']:.3f}, {summ[key]['ci_high']:.3f}]"
                + (
                    ""
                    if key != "mia"
                    else f"; {summ[key]['ci_method']} [{summ[key]['ci_low_clustered']:.3f}, "
                    f"{summ[key]['ci_high_clustered']:.3f}]"
                ),
                "failed calls": summ[key]["failed"],
                "unparseable": summ[key]["unparseable"],
            }
            for name, key in (
                ("MCQ accuracy", "mcq"),
                ("AIA (correct choices)", "aia"),
                ("MIA (incorrect choices)", "mia"),
            )
        ]
    )
    sec = rep.section("Accuracy")
    sec.table(head)
    sec.text(
        f"{summ['n_questions']} questions, {summ['n_prompts']} prompts; "
        f"{summ['n_unparseable']} unparseable answers and {summ['n_failed']} failed calls, both "
        "scored as wrong."
        + (
            f" {summ['n_logprob_fallback']} answers had no letter log-probabilities and were read "
            "from the generated JSON."
            if summ["n_logprob_fallback"]
            else ""
        )
    )
    tables = {}
    for by in _META:
        b = breakdown(scored, by)
        if len(b):
            tables[f"by_{by}"] = b
            rep.section(f"By {by}").table(b)
    mia, count = grade_dok_heatmap(scored)
    if mia.size:
        fig, ax = new_figure(1.6 + 1.2 * mia.shape[1], 1.2 + 0.5 * mia.shape[0])
        im = ax.imshow(mia.to_numpy(dtype=float), cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
        ax.set_xticks(range(mia.shape[1]), [f"DOK {c}" for c in mia.columns])
        ax.set_yticks(range(mia.shape[0]), [f"grade {r}" for r in mia.index])
        for i in range(mia.shape[0]):
            for j in range(mia.shape[1]):
                v = mia.iat[i, j]
                if np.isfinite(v):
                    ax.text(
                        j,
                        i,
                        f"{100 * v:.0f}%\n(n={int(count.iat[i, j])})",
                        ha="center",
                        va="center",
                        fontsize=8,
                    )
        fig.colorbar(im, ax=ax, label="MIA")
        ax.set_title("MIA by grade and DOK (n = questions)", fontsize=10)
        rep.section("Grade x DOK").figure(fig)
        tables["mia_grade_dok"] = mia.reset_index()
    if call_summary:
        rep.section("Model calls").text(call_summary)
    return rep, tables


def run_malalgo(
    out: Path,
    questions_path: Path,
    *,
    open_model: Callable,
    model_name: str,
    prompt: str = "simple",
    shots: int = 0,
    rationale_order: str = "shuffle",
    scoring: str = "generate",
    mcq: bool = True,
    seed: int = 0,
    limit: int | None = None,
    max_failures: MaxFailures = DEFAULT_MAX_FAILURES,
    log: Callable[[str], None] | None = None,
) -> dict:
    """Ask the model every identification prompt (and each question) and score the answers.

    ``open_model(log_path)`` returns a :class:`~edueval.models.ModelClient` context manager (so the
    CLI's options, or a test's scripted server, decide the backend)."""
    questions, tasks = prepare(questions_path, limit=limit, prompt=prompt, shots=shots,
                               rationale_order=rationale_order, scoring=scoring, mcq=mcq,
                               seed=seed)  # fmt: skip
    params = {"model": model_name, "prompt": prompt, "shots": shots,
              "rationale_order": rationale_order, "scoring": scoring, "ask_mcq": mcq,
              "seed": seed, "limit": limit, "max_failures": str(max_failures)}  # fmt: skip
    config = {**{k: v for k, v in params.items() if k != "seed"},
              "n_questions": len(questions), "n_prompts": len(tasks)}  # fmt: skip
    run = RunDir(
        out, command="malalgo run", params=config, seed=seed, inputs={"questions": questions_path}
    )
    outcome = ask_tasks(open_model, tasks, scoring, max_failures=max_failures,
                        log_path=run.path / "calls.jsonl", progress="malalgo run")  # fmt: skip
    res = evaluation_from(questions, tasks, outcome, params)
    if log:
        log(res.stats.summary())
    return write_run(run, res, str(questions_path))


def write_run(run: RunDir, res: MalAlgoEvaluation, source: str) -> dict:
    """responses.csv, the breakdowns, the report and results.json of ``malalgo run`` from its
    results (the command and :meth:`MalAlgoEvaluation.save` both write through here)."""
    p = res.params
    run.table("responses", res.responses)
    rep, tables = _report(
        res.responses,
        res.metrics(),
        "Malgorithm identification (MalAlgoQA protocol)",
        f"{source}, model {p['model']}, prompt {p['prompt']}, {p['shots']} shots, "
        f"rationales {p['rationale_order']}, scoring {p['scoring']}, seed {p['seed']}",
        res.stats.summary(),
    )
    for name, table in tables.items():
        run.table(name, table)
    results = {
        k: v for k, v in dict(res.headline()).items() if k not in ("model_failures", "complete")
    }
    return finish_model_run(run, results, rep, res.budget)


def save_run(res: MalAlgoEvaluation, folder: str | Path, *, overwrite: bool = False) -> Path:
    """:meth:`MalAlgoEvaluation.save`: the folder ``malalgo run`` writes, less its call log
    (``calls.jsonl``: the calls were made in memory, and not logged)."""
    run = saved_run(folder, "malalgo run", params=res.run_params(), seed=res.params.get("seed"),
                    overwrite=overwrite)  # fmt: skip
    write_run(run, res, "results from Python")
    return run.path


def score_run(out: Path, responses_path: Path) -> dict:
    """Recompute the metrics and the report from a ``responses.csv`` of an earlier run."""
    df = read_responses(responses_path, list(_META))
    run = RunDir(out, command="malalgo score", params={}, inputs={"responses": responses_path})
    scored = score_table(df)
    summ = summary(scored)
    rep, tables = _report(
        scored, summ, "Malgorithm identification: scores", str(responses_path), None
    )
    for name, table in tables.items():
        run.table(name, table)
    run.finish(summ, rep.render())
    return summ


def _cue_table(table: pd.DataFrame) -> pd.DataFrame:
    """The cue/model rows as the report shows them."""
    return pd.DataFrame(
        {
            "cue": table["cue"],
            "questions": table["n"],
            "share picking the key": table["share"].round(3),
            "95% CI (Wilson)": [f"[{lo:.3f}, {hi:.3f}]" for lo, hi in
                                zip(table["ci_low"], table["ci_high"], strict=True)],
            "chance": table["chance"],
            "p (Holm)": table["p_holm"].round(4),
            "verdict": np.where(table["flagged"], "CUE (" + table["direction"] + ")",
                                np.where(table["within_chance"], "within chance",
                                         "outside the CI, not significant after Holm")),
        }
    )  # fmt: skip


def _audit_report(res, path: Path) -> Report:
    flagged = res.flagged
    verdict = (
        f"{len(flagged)} cue(s) or model(s) pick the key more (or less) often than chance after "
        f"Holm's correction: {', '.join(flagged)}"
        if flagged
        else "no cue found: no single cue and no model does better (or worse) than chance"
    )
    rep = Report(
        "Does anything but the reasoning give the key away?",
        f"{path}: {res.n_questions} questions, {res.folds}-fold cross-validation by question",
    )
    sec = rep.section("Verdict")
    sec.text(
        f"Verdict: {verdict}. Each row is the share of questions where a cue or a model picks the "
        "key, with its Wilson 95% interval (one observation per question) against chance; exact "
        "ties are broken at random. Models are fitted on other questions only (folds of whole "
        "questions)."
    )
    rep.section("Models (cross-validated)").table(_cue_table(res.models))
    rep.section("Single cues").table(_cue_table(res.cues))
    if res.by_family is not None:
        rep.section("By family (share of questions where the cue picks the key)").table(
            res.by_family.round(3)
        )
    if res.learned is not None:
        rep.section(
            "Learned and similarity readers by family (Wilson 95% intervals; chance 0.25)"
        ).table(res.learned.round(3))
    if res.value_rank is not None:
        rep.section(
            "The key's value rank by family (chi-square of uniformity, Holm over families)"
        ).table(res.value_rank.round(4))
    head = pd.DataFrame(
        [
            {
                "questions": res.n_questions,
                "key picked": res.n_correct,
                "accuracy": res.accuracy,
                "95% CI (Wilson)": f"[{res.ci_low:.3f}, {res.ci_high:.3f}]",
                "chance's 95% upper limit": res.chance_high,
                "p (accuracy > 1/4)": res.p_value,
            }
        ]
    )
    sec = rep.section("Words-only classifier")
    sec.table(head)
    sec.text(
        "A bag of words and word pairs (logistic regression) sees the four rationales of a "
        "question and nothing else - numbers and symbols left out - and was trained on other "
        "questions only."
    )
    rep.section("Words that weigh most").table(res.weights)
    return rep


def audit_run(out: Path, questions_path: Path, *, folds: int = 5, seed: int = 0) -> dict:
    """``malalgo audit``: can surface cues (single rules, cross-validated models on the choices'
    and the rationales' features, a words-only classifier) pick the key?"""
    from .audit import audit_key_cues

    questions = read_questions(questions_path)
    try:
        res = audit_key_cues(questions, folds=folds, seed=seed)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    run = RunDir(out, command="malalgo audit", params={"folds": folds}, seed=seed,
                 inputs={"questions": questions_path})  # fmt: skip
    run.table("picks", res.picks)
    run.table("weights", res.weights)
    run.table("cues", res.cues)
    run.table("models", res.models)
    if res.by_family is not None:
        run.table("by_family", res.by_family)
    if res.learned is not None:
        run.table("learned_by_family", res.learned)
    if res.value_rank is not None:
        run.table("value_rank_by_family", res.value_rank)
    results = res.as_dict()
    run.finish(results, _audit_report(res, questions_path).render())
    return results
