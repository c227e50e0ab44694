"""P5 - the imitation game for educational AI (Sonkar, Liu, Chen & Baraniuk 2025).

Phase 1 collects students' open answers; each wrong answer is a *misconception tuple*. Phase 2
gives the student a related question q′ as a 4-option MCQ: the correct answer, the AI's distractor
(conditioned on that student's Phase-1 error), a human expert's distractor (same conditioning) and
a random plausible distractor. The AI "understands" students as well as the expert when students
pick its distractor about as often as the expert's (equivalence within ε) and both beat random by δ.

Python API (in memory: no output folder, no file written, nothing printed)::

    from edueval.turing import generate                                # turing generate
    gen = generate(phase1_df, model="openai/gpt-4o-mini")              # or a path, records,
    print(gen.summary()); gen.distractors; gen.worksheet; gen.model    # "local", a client

    from edueval.turing import assemble_mcqs, choices_from_positions   # turing assemble

    from edueval.turing import analyze_choices, read_choices           # turing analyze
    res = analyze_choices(read_choices("phase2.csv"), eps=0.1, delta=0.05)   # or a DataFrame
    print(res.summary()); res.verdict; res.to_frame()                  # 'draw', 'ai_better', ...

    from edueval.turing import Rates, sample_size, simulate_power      # turing power
    sample_size(Rates(0.3, 0.3, 0.1), eps=0.1, delta=0.05, rho=0.1, m=25)
    from edueval.turing import coverage_plan                           # turing power --coverage
    print(coverage_plan(k=10, p_min=0.05, confidence=0.95, reveal=0.2).summary())
    from edueval.turing import SimConfig, simulate_study               # turing simulate
    sim = simulate_study(SimConfig(n_students=100, n_questions=25, reps=1000))
    print(sim.summary()); sim.rates; sim.save("sim")       # turing simulate --main-only
    full = simulation_results(SimConfig(reps=200), grid=[10, 40])   # turing simulate, all studies
    print(full.summary()); full.type1; full.save("sim-full")

The run folders (``edueval turing ...``) are written by the run modules :mod:`.pipeline` and
:mod:`.generate_runs` (``generate_run``, ``analyze_run``, ...: loaded on first use, so that
importing the science loads no report machinery).

Modules: :mod:`.stats` (batched tests and the decision rule), :mod:`.analyze`, :mod:`.power`,
:mod:`.coverage` (the paper's coverage theorems), :mod:`.simulate`, :mod:`.generation`,
:mod:`.assemble`, :mod:`.data` (Phase-1 files), :mod:`.keycheck`.
"""

from typing import Any

from .analyze import SOURCES, TuringResults, analyze_choices, choice_counts, read_choices
from .assemble import assemble_mcqs, choices_from_positions
from .coverage import CoverageResults, coverage_plan
from .data import misconception_tuples, read_phase1
from .generation import TuringGeneration, generate
from .power import Rates, power_normal, power_table, sample_size, simulate_power
from .simulate import DEFAULT_FREQUENCIES, SimConfig, SimulatedStudy, simulate_study
from .simulation_study import SimulationResults, simulation_results
from .stats import VERDICTS, batch_tests

__all__ = [
    "DEFAULT_FREQUENCIES",
    "CoverageResults",
    "SOURCES",
    "VERDICTS",
    "Rates",
    "SimConfig",
    "SimulatedStudy",
    "SimulationResults",
    "TuringGeneration",
    "TuringResults",
    "analyze_choices",
    "assemble_mcqs",
    "batch_tests",
    "choice_counts",
    "choices_from_positions",
    "coverage_plan",
    "generate",
    "misconception_tuples",
    "power_normal",
    "power_table",
    "read_choices",
    "read_phase1",
    "sample_size",
    "simulate_power",
    "simulate_study",
    "simulation_results",
]

#: run-layer functions (they write run folders), imported on first use (PEP 562)
_RUN_LAYER = {
    "generate_run": "generate_runs",
    "analyze_run": "pipeline",
    "assemble_run": "pipeline",
    "coverage_run": "pipeline",
    "power_run": "pipeline",
    "simulate_run": "pipeline",
}


def __getattr__(name: str) -> Any:
    if name in _RUN_LAYER:
        from importlib import import_module

        return getattr(import_module(f".{_RUN_LAYER[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
