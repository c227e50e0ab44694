"""The offline demo: runs each protocol and writes an index page linking the reports."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .report import render_index
from .runs import atomic_write

__all__ = ["run_demo"]


def run_demo(
    out: Path, *, quick: bool = False, seed: int = 2013, log: Callable[[str], None] = print
) -> Path:
    """Run every protocol available offline into ``out`` and write ``out/index.html``."""
    from .kt.pipeline import study_run
    from .kt.study import StudyConfig

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    entries = []

    log(
        "P1 knowledge tracing: the Pardos & Yudelson study"
        + (" (quick)" if quick else " at paper size")
    )
    cfg = StudyConfig(n_students=200, n_skills=20, seed=seed) if quick else StudyConfig(seed=seed)
    res = study_run(out / "kt-study", cfg)
    entries.append(
        {
            "name": "P1 — Knowledge tracing and moment of learning",
            "href": "kt-study/report.html",
            "summary": (
                f"{cfg.n_students} students x {cfg.n_skills} skills x {cfg.n_opportunities} "
                f"opportunities; the true set ranks first by log-likelihood in "
                f"{res['true_first']['loglik']}/{cfg.n_skills} skills, by recall in "
                f"{res['true_first']['recall']}; r(recall, MoL MAD) = "
                f"{res['r_perf_mad']['recall']:.2f}, r(AUC, MoL MAD) = "
                f"{res['r_perf_mad']['auc']:.2f}."
            ),
        }
    )
    # P2: the AI Teacher Test replication on the bundled public comparisons
    from .pairwise.replication import ReplicationConfig, replicate_run

    p2 = (
        ReplicationConfig(chains=2, warmup=500, draws=500, seed=seed)
        if quick
        else ReplicationConfig(seed=seed)
    )
    log(
        f"P2 comparative judgement: AI Teacher Test replication ({p2.chains} chains x "
        f"{p2.warmup}+{p2.draws})"
    )
    rp = replicate_run(out / "pairwise", None, p2, log=log)
    tb = " / ".join(f"{v:.2f}" for v in rp["differences"]["random"]["Teacher - Blender"].values())
    tg = " / ".join(f"{v:.2f}" for v in rp["differences"]["random"]["Teacher - GPT-3"].values())
    entries.append(
        {
            "name": "P2 — Comparative judgement: the AI Teacher Test",
            "href": "pairwise/report.html",
            "summary": (
                f"{rp['counts']['n_kept']} public comparisons (outliers removed), Bayesian "
                f"Bradley-Terry per item x attribute with NUTS; Teacher - Blender {tb} (paper "
                f"0.60 / 0.55 / 0.75), Teacher - GPT-3 {tg} (paper 0.67 / 0.67 / 0.93); "
                f"max R-hat {rp['max_rhat']:.3f}."
            ),
        }
    )
    # P3: malgorithm identification with the embedded model on generated questions
    from .malalgo.pipeline import generate_run, run_malalgo
    from .models import get_model

    n_q = 2 if quick else 8
    log(f"P3 malgorithm identification: {n_q} generated questions, embedded model (SmolLM2)")
    generate_run(out / "malalgo-questions", n=n_q, seed=seed)
    r3 = run_malalgo(
        out / "malalgo",
        out / "malalgo-questions" / "questions.csv",
        open_model=lambda log_path: get_model("local", log_path=log_path),
        model_name="local",
        seed=seed,
    )
    entries.append(
        {
            "name": "P3 — Malgorithm identification (MalAlgoQA protocol)",
            "href": "malalgo/report.html",
            "summary": (
                f"{r3['n_questions']} questions generated from the mal-rule library "
                f"(malalgo-questions/report.html), {r3['n_prompts']} prompts to the embedded "
                f"SmolLM2-135M: MCQ {r3['mcq']['accuracy']:.2f}, AIA {r3['aia']['accuracy']:.2f}, "
                f"MIA {r3['mia']['accuracy']:.2f}, {r3['n_unparseable']} unparseable. A 135M "
                "model is near chance here; point --model at a real model for real numbers."
            ),
        }
    )
    index = out / "index.html"
    atomic_write(
        index,
        render_index(
            "edueval demo",
            entries,
            intro="Each protocol run offline on simulated or bundled data. Every report states its "
            "inputs, parameters and seed (see config.json beside it).",
        ),
    )
    return index
