"""docs "From Python: turing": analyze_choices in memory equals `turing analyze`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .conftest import assert_same, assert_same_table

SOURCES = ["correct", "ai", "human", "random", "ai+human"]


def _phase2(n_students: int = 30, n_questions: int = 20, seed: int = 5) -> pd.DataFrame:
    """Phase-2 choices of students who differ in how often they pick each source (the shape of
    `turing simulate`'s example_phase2.csv, made here in a few milliseconds)."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n_students):
        p = rng.dirichlet([2.0, 4.0, 4.0, 1.0, 0.5])
        for q in range(n_questions):
            rows.append({"student": f"s{s:02d}", "question": f"q{q:02d}",
                         "chosen": SOURCES[rng.choice(len(SOURCES), p=p)]})  # fmt: skip
    return pd.DataFrame(rows)


def test_turing_analyze_snippet_equals_the_command_line(sandbox):
    cli = sandbox.cli_dir
    path = cli / "example_phase2.csv"  # the name turing simulate writes, as the snippet reads
    _phase2().to_csv(path, index=False)
    sandbox.cli("turing", "analyze", path, "--eps", 0.1, "--delta", 0.05, "--out", "an")
    sandbox.give(path)

    ns = sandbox.run_snippet("turing")

    res = ns["res"]
    sandbox.check_summary(res)
    written = sandbox.results("an")
    got = res.to_dict()
    assert_same(got, {k: written[k] for k in got}, "turing analyze")
    assert_same_table(res.rates, cli / "an/rates.csv")
    assert_same_table(res.tests, cli / "an/tests.csv")
    assert res.verdict == written["verdict"] and res.n == 600
    assert len(res.to_frame()) > len(res.tests)


def test_turing_simulate_snippet(sandbox):
    ns = sandbox.run_snippet("turing simulate")
    sim, full = ns["sim"], ns["full"]
    sandbox.check_summary(sim)
    sandbox.check_summary(full)
    # the full study's verdict rates are the simulated study's: same configuration and seed
    assert_same(full.main.to_frame().to_dict("list"), sim.to_frame().to_dict("list"), "rates")
    assert list(full.type1["rho"]) == [0.0]
    assert sorted(full.convergence["n_students"].unique()) == [10, 40]
    assert len(full.consistency) and len(full.by_accuracy) == 3 * 3
    assert sim.results()["type1"] == [] and full.results()["type1"]
