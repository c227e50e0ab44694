"""The offline demo: runs each protocol and writes an index page linking the reports."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .models.budget import MaxFailures
from .report import render_index
from .runs import atomic_write

#: The demo runs a 135M embedded model that may answer out of format: every run records its
#: failed calls and unparseable answers (each summary below shows them) instead of stopping.
DEMO_BUDGET = MaxFailures(share=1.0)

__all__ = ["run_demo"]


#: the files ``edueval demo`` writes at the top of its folder (its runs are subfolders), so that a
#: second demo into the same folder replaces them rather than refusing them as another's
DEMO_FILES = ("index.html", "tutor-dialogues.jsonl")


def run_demo(
    out: Path, *, quick: bool = False, seed: int = 2013, log: Callable[[str], None] = print
) -> Path:
    """Run every protocol available offline into ``out`` and write ``out/index.html``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    entries = [
        _demo_kt(out, quick, seed, log),
        _demo_pairwise(out, quick, seed, log),
        _demo_malalgo(out, quick, seed, log),
        _demo_turing(out, quick, seed, log),
        _demo_items_qgsms(out, quick, seed, log),
        _demo_tutor(out, quick, seed, log),
    ]
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


def _local_model(log_path: Path | None):
    """The embedded model every LLM step of the demo uses."""
    from .models import get_model

    return get_model("local", log_path=log_path)


def _demo_kt(out: Path, quick: bool, seed: int, log: Callable[[str], None]) -> dict:
    """P1: the Pardos & Yudelson knowledge-tracing study."""
    from .kt.commands.pipeline import write_study_run
    from .kt.replication.study import StudyConfig

    log(
        "P1 knowledge tracing: the Pardos & Yudelson study"
        + (" (quick)" if quick else " at paper size")
    )
    cfg = StudyConfig(n_students=200, n_skills=20, seed=seed) if quick else StudyConfig(seed=seed)
    res = write_study_run(out / "kt-study", cfg)
    return {
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


def _demo_pairwise(out: Path, quick: bool, seed: int, log: Callable[[str], None]) -> dict:
    """P2: the AI Teacher Test replication on the bundled public comparisons."""
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
    return {
        "name": "P2 — Comparative judgement: the AI Teacher Test",
        "href": "pairwise/report.html",
        "summary": (
            f"{rp['counts']['n_kept']} public comparisons (outliers removed), Bayesian "
            f"Bradley-Terry per item x attribute with NUTS; Teacher - Blender {tb} (paper "
            f"0.60 / 0.55 / 0.75), Teacher - GPT-3 {tg} (paper 0.67 / 0.67 / 0.93); "
            f"max R-hat {rp['max_rhat']:.3f}."
        ),
    }


def _demo_malalgo(out: Path, quick: bool, seed: int, log: Callable[[str], None]) -> dict:
    """P3: malgorithm identification with the embedded model on generated questions."""
    from .malalgo.pipeline import generate_run, run_malalgo

    n_q = 2 if quick else 8
    log(f"P3 malgorithm identification: {n_q} generated questions, embedded model (SmolLM2)")
    generate_run(out / "malalgo-questions", n=n_q, seed=seed)
    r3 = run_malalgo(
        out / "malalgo",
        out / "malalgo-questions" / "questions.csv",
        open_model=_local_model,
        model_name="local",
        seed=seed,
        max_failures=DEMO_BUDGET,
    )
    return {
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


def _demo_turing(out: Path, quick: bool, seed: int, log: Callable[[str], None]) -> dict:
    """P5: the imitation game - the simulation study (+ one generate call with the local
    model at full size)."""
    from .turing.pipeline import simulate_run
    from .turing.simulate import SimConfig

    p5 = SimConfig(reps=200 if quick else 1000, seed=seed)
    log(
        f"P5 imitation game: simulation study, {p5.reps} replications of {p5.n_students} "
        f"students x {p5.n_questions} MCQs"
    )
    r5 = simulate_run(
        out / "turing-simulate", p5, n_students_grid=[5, 10, 20, 40] if not quick else [5, 20]
    )
    t1 = r5["type1"].iloc[-1]
    gen_note = "" if quick else _demo_turing_generate(out, log)
    return {
        "name": "P5 — The imitation game (simulation study)",
        "href": "turing-simulate/report.html",
        "summary": (
            f"Simulated students holding known mal-rules, {p5.reps} replications at "
            f"{p5.n_students} x {p5.n_questions}: the oracle AI draws with a human expert who "
            f"reads {100 * p5.human_accuracy:.0f}% of students right in "
            f"{100 * r5['oracle_draw_rate']:.0f}%, the unconditioned AI is told "
            f"apart in {100 * r5['unconditioned_told_apart_rate']:.0f}%. Type-I error of "
            f"'draw' at rho = {t1['rho']}: clustered {t1['draw_rate_clustered']:.3f}, naive "
            f"{t1['draw_rate_naive']:.3f} (nominal {t1['nominal_alpha']})." + gen_note
        ),
    }


def _demo_turing_generate(out: Path, log: Callable[[str], None]) -> str:
    """One real conditioned-distractor request to the embedded model (~15 s); the sentence
    the P5 summary ends with."""
    import pandas as pd

    from .turing.generate_runs import generate_run

    ex = pd.read_csv(out / "turing-simulate" / "bank_examples.csv", dtype=str).head(1)
    # the input beside the run, not inside it: a run folder never holds its own input
    p1 = out / "turing-generate-input" / "phase1.csv"
    p1.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(
        {"student": ["s0"], "question": ex["question"], "answer": ex["answer"],
         "correct_answer": ex["correct_answer"]}
    ).to_csv(p1, index=False)  # fmt: skip
    log("P5 turing generate: one Phase-1 tuple, embedded model (SmolLM2)")
    g5 = generate_run(
        out / "turing-generate", p1, open_model=_local_model,
        model_name="local", max_tokens=120, max_failures=DEMO_BUDGET,
    )  # fmt: skip
    return (
        f" A one-tuple turing generate with the embedded model (turing-generate/report.html):"
        f" status {', '.join(f'{k} {v}' for k, v in g5['status'].items() if v)}."
    )


def _demo_items_qgsms(out: Path, quick: bool, seed: int, log: Callable[[str], None]) -> dict:
    """P4: item analysis on a synthetic classroom, then QG-SMS with the embedded model."""
    import pandas as pd

    from .items.pipeline import simulate_run as items_simulate_run
    from .items.simulate import ClassroomConfig
    from .qgsms import MethodConfig, run_qgsms

    room = ClassroomConfig(n_students=60, n_materials=1, questions_per_material=6, seed=seed)
    log("P4 test-item analysis: synthetic classroom; QG-SMS with the embedded model (SmolLM2)")
    r4s = items_simulate_run(out / "items-simulate", room)
    # Time budget (~90 s on 2 cores): QG-SMS steps 1-2 (10 profiles; each profile on both
    # questions, ~10 s a call with SmolLM2) dominate, so one pair each of two of DF, DE, DC (the
    # dimensions the simulation is for), both orders; `direct` reuses step 2's cached answers.
    p4_pairs = pd.read_csv(out / "items-simulate" / "pairs.csv", dtype=str)
    p4_dims = [d for d in ("DF", "DE", "DC") if (p4_pairs["dimension"] == d).any()][:2]
    p4_pairs = p4_pairs[p4_pairs["dimension"].isin(p4_dims)]
    p4_pairs.to_csv(out / "items-simulate" / "demo_pairs.csv", index=False)
    p4_methods = ["vanilla", "qg-sms"] if quick else ["vanilla", "qg-sms", "direct"]
    r4 = run_qgsms(
        out / "qgsms", out / "items-simulate" / "demo_pairs.csv",
        out / "items-simulate" / "items.jsonl", methods=p4_methods,
        open_model=_local_model,
        model_name="local", cfg=MethodConfig(max_profiles=10, explanation_chars=120), limit=1,
        seed=seed, bradley_terry=False, max_failures=DEMO_BUDGET,
    )  # fmt: skip
    acc4 = r4["accuracy"]
    return {
        "name": "P4 — Test-item analysis and QG-SMS",
        "href": "qgsms/report.html",
        "summary": (
            f"{r4s['n_items']} generated questions x {r4s['n_students']} simulated students "
            "(items-simulate/report.html: DF, DC, DE, labelled pairs "
            + ", ".join(f"{d} {n}" for d, n in r4s["pairs"].items())
            + f"); one pair each of {' and '.join(p4_dims)} judged in both orders by the "
            + "embedded model: "
            + "; ".join(
                f"{m} AA {acc4[m]['all']['AA']:.2f} CA {acc4[m]['all']['CA']:.2f}"
                for m in p4_methods
                if m in acc4
            )  # fmt: skip
            + ". A 135M model is near chance; point --model at a real model."
        ),
    }


def _demo_tutor(out: Path, quick: bool, seed: int, log: Callable[[str], None]) -> dict:
    """Tutor replies (P2's generation side) on bundled NCTE classroom exchanges."""
    from .tutor.dialogues import import_ncte
    from .tutor.pipeline import reply_run

    ncte = Path(__file__).parent / "tutor" / "data" / "ncte-uptake" / "uptake_data.csv"
    n_t = 2 if quick else 6
    log(f"Tutor replies: {n_t} NCTE student turns answered by the embedded model (SmolLM2)")
    (out / "tutor").mkdir(parents=True, exist_ok=True)
    import_ncte(ncte, out / "tutor-dialogues.jsonl", limit=n_t)
    rt = reply_run(
        out / "tutor", out / "tutor-dialogues.jsonl",
        open_model=_local_model,
        model_name="local", max_tokens=60, seed=seed, max_failures=DEMO_BUDGET,
    )  # fmt: skip
    return {
        "name": "Tutor replies — AI teacher replies to real classroom turns (NCTE)",
        "href": "tutor/report.html",
        "summary": (
            f"{rt['n_targets']} student turns from the NCTE uptake data (MIT licence, bundled)"
            f" answered by the embedded SmolLM2-135M with a teacher persona: {rt['n_ok']} "
            f"replies, {rt['n_failed']} failed, mean unigram F1 against the real teacher's "
            f"reply {rt['mean_f1'] if rt['mean_f1'] is None else round(rt['mean_f1'], 3)}. "
            "`edueval tutor make-study` turns such replies into a comparative-judgement study."
        ),
    }
