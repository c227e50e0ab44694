"""turing power --coverage: the paper's coverage bounds (Theorems 1-3), by hand, against an exact
inclusion-exclusion formula, and by simulation of the frequency model."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from edueval.cli.main import main
from edueval.turing.coverage import (
    concentration_k,
    coverage_plan,
    questions_needed,
    simulate_coverage,
    students_needed,
    zipf_frequencies,
)


def test_bounds_by_hand():
    assert students_needed(10, 0.05, 0.05) == math.ceil(math.log(200) / 0.05) == 106
    assert questions_needed(0.12, 0.05) == 25  # ln(20)/0.12 = 24.96
    # two misconceptions per student: pi = 1 - 0.95^2 = 0.0975
    assert students_needed(10, 0.05, 0.05, per_student=2) == math.ceil(math.log(200) / 0.0975)
    assert concentration_k(np.array([0.125, 0.5, 0.25, 0.125]), 0.2) == 3  # 0.5+0.25+0.125
    assert concentration_k(np.array([0.5, 0.5]), 0.5) == 1
    z = zipf_frequencies(4, 1.0)
    assert z == pytest.approx(np.array([1, 1 / 2, 1 / 3, 1 / 4]) / (25 / 12))


def exact_coverage(k: int, pi: float, n: int) -> float:
    """P(all k seen) when each student shows at most one of them, each with probability pi:
    inclusion-exclusion over the set of unseen misconceptions."""
    return sum((-1) ** j * math.comb(k, j) * (1 - j * pi) ** n for j in range(k + 1))


def test_plan_covers_with_the_stated_confidence_and_how_conservative():
    """k = 10 at p_min = 0.05, 95%: the simulated coverage at the bound matches the exact
    formula and reaches 95%; the fewest sufficient students are within 20% of the bound."""
    res = coverage_plan(k=10, p_min=0.05, confidence=0.95, reveal=0.2, reps=4000, seed=1)
    c = 1 - 0.8**res.questions  # a held misconception shows in Q questions
    exact = exact_coverage(10, 0.05 * c, res.students)
    se = math.sqrt(exact * (1 - exact) / 4000)
    assert res.simulated_coverage == pytest.approx(exact, abs=4 * se)
    assert exact >= 0.95
    assert res.simulated_min_students >= 0.8 * res.students  # not wildly conservative
    exact_min = next(n for n in range(1, res.students + 1)
                     if exact_coverage(10, 0.05 * c, n) >= 0.95)  # fmt: skip
    assert abs(res.simulated_min_students - exact_min) <= 0.05 * exact_min
    # and the bound is needed: a third fewer students miss the target
    assert exact_coverage(10, 0.05 * c, round(0.66 * res.students)) < 0.95


def test_zipf_model_and_several_misconceptions_per_student_still_cover():
    res = coverage_plan(k=8, zipf=1.0, n_misconceptions=40, confidence=0.9, per_student=3,
                        reveal=0.3, reps=2000, seed=2)  # fmt: skip
    assert res.top_mass == pytest.approx(zipf_frequencies(40, 1.0)[:8].sum())
    assert res.simulated_coverage >= 0.9 - 3 * math.sqrt(0.09 / 2000)
    fewer = simulate_coverage(np.asarray(res.top), n_students=res.students // 3,
                              n_questions=res.questions, reveal=0.3, per_student=3,
                              reps=2000, seed=3)  # fmt: skip
    assert fewer < res.simulated_coverage
    by_mass = coverage_plan(mass_eps=0.4, zipf=1.0, n_misconceptions=40)
    assert by_mass.k == concentration_k(zipf_frequencies(40, 1.0), 0.4)


def test_cli_coverage(tmp_path, capsys):
    out = tmp_path / "cov"
    code = main(["turing", "power", "--coverage", "--top-k", "10", "--p-min", "0.05",
                 "--reps", "200", "--out", str(out)])  # fmt: skip
    assert code == 0
    res = json.loads((out / "results.json").read_text())
    assert res["students"] == math.ceil(math.log(200) / (0.05 * 0.95)) and res["questions"] == 15
    assert "Theorem 2" in capsys.readouterr().out
    for args, msg in (
        (["--p-min", "0.5"], "--p-min must be in (0, 1/k] = (0, 0.1] for --top-k 10, got 0.5"),
        (["--confidence", "1"], "--confidence must be in (0, 1)"),
        (["--p-min", "0.05", "--zipf", "1"], "exactly one of --p-min or --zipf"),
        (["--reveal", "0"], "--reveal must be in (0, 1]"),
    ):
        code = main(["turing", "power", "--coverage", *args, "--out", str(tmp_path / "x")])
        err = capsys.readouterr().err
        assert code == 2 and msg in err and len(err.strip().splitlines()) == 1, err
