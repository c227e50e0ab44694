"""turing power and simulate: closed forms vs simulation, the type-I error of 'draw', and the
simulation study's headline claims at small cost."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from edueval.cli.main import main
from edueval.turing import analyze_choices
from edueval.turing.power import (
    Rates,
    power_normal,
    sample_size,
    simulate_counts,
    simulate_power,
)
from edueval.turing.simulate import SimConfig, build_bank, simulate_study


def test_design_effect_scales_sample_size():
    r = Rates(0.3, 0.3, 0.1)
    a = sample_size(r, eps=0.1, delta=0.05, rho=0.0, m=25)
    b = sample_size(r, eps=0.1, delta=0.05, rho=0.1, m=25)
    assert b["n_tost"] / a["n_tost"] == pytest.approx(1 + 24 * 0.1)
    assert sample_size(Rates(0.3, 0.15, 0.1), eps=0.1, delta=0.05)["n_tost"] == np.inf


def test_dirichlet_multinomial_has_the_stated_intra_student_correlation():
    rng = np.random.default_rng(3)
    m, rho = 25, 0.2
    counts = simulate_counts(rng, 1, 20000, m, Rates(0.3, 0.3, 0.1), rho)[0]
    x = counts[:, 2]  # AI choices per student
    p = 0.3
    var_expected = m * p * (1 - p) * (1 + (m - 1) * rho)
    assert x.mean() == pytest.approx(m * p, rel=0.02)
    assert x.var() == pytest.approx(var_expected, rel=0.06)


@pytest.mark.parametrize("rho", [0.0, 0.1, 0.3])
def test_closed_form_power_matches_simulation(rho):
    r = Rates(0.3, 0.3, 0.1)
    kw = dict(n_students=60, m=25, eps=0.1, delta=0.05, alpha=0.05, rho=rho)
    approx = power_normal(r, **kw)["draw"]
    sim = simulate_power(r, reps=1500, seed=5, **kw)["clustered"]["draw"]
    assert sim == pytest.approx(approx, abs=0.05)


def test_type1_error_of_draw_clustered_holds_naive_inflates():
    """Truth exactly on the boundary |p_AI - p_H| = eps at high intra-student correlation."""
    reps, alpha = 3000, 0.05
    r = Rates(0.35, 0.25, 0.10)
    sim = simulate_power(
        r, n_students=100, m=25, eps=0.10, delta=0.05, alpha=alpha, rho=0.3, reps=reps, seed=11
    )
    mc = 3 * np.sqrt(alpha * (1 - alpha) / reps)
    assert sim["clustered"]["draw"] <= alpha + mc
    assert sim["naive"]["draw"] > 0.15  # the naive SE is ~sqrt(1 + 24*0.3) = 2.9x too small
    # and the test is not trivially conservative: well inside the margin it does declare draws
    inside = simulate_power(
        Rates(0.3, 0.3, 0.1), n_students=100, m=25, eps=0.10, delta=0.05, rho=0.3, reps=500
    )
    assert inside["clustered"]["draw"] > 0.3


@pytest.fixture(scope="module")
def bank():
    cfg = SimConfig()
    return build_bank(cfg.frequencies, 20, np.random.default_rng(0))


def test_simulation_oracle_draws_unconditioned_is_told_apart(bank):
    """At 100 x 25 the oracle (0.08 ahead of an expert who errs) draws and the random AI is
    told apart. The unconditioned AI trails the expert by ~0.13, just beyond eps: it is almost never
    declared equivalent, and 'human_better' needs more students (the CI must clear -eps)."""
    cfg = SimConfig(n_students=100, n_questions=25, reps=60, seed=1)
    assert cfg.human_accuracy < 1  # an expert who errs: the oracle is not the expert's copy
    res = simulate_study(cfg, bank=bank, n_students_grid=[1600])
    cl = res["rates"].query("se == 'clustered'")
    rates = cl.query("n_students == 100").pivot(index="ai", columns="verdict", values="rate")
    assert rates.loc["oracle", "draw"] >= 0.8
    means = res["means"].query("n_students == 100").set_index("ai")
    gap = means.loc["oracle", "p_ai"] - means.loc["oracle", "p_human"]
    assert 0 < gap < cfg.eps  # a real, small gap: not an identity
    assert rates.loc["random", "human_better"] >= 0.8
    assert means.loc["unconditioned", "p_human"] - means.loc["unconditioned", "p_ai"] > cfg.eps
    # rarely declared equivalent (a few of 60 at most: the gap is only ~0.03 beyond eps)
    assert rates.loc["unconditioned", "draw"] <= 0.05
    big = cl.query("n_students == 1600").pivot(index="ai", columns="verdict", values="rate")
    assert big.loc["unconditioned", "human_better"] >= 0.8
    assert big.loc["oracle", "draw"] == 1.0
    assert means.loc["unconditioned", "p_ai"] < means.loc["oracle", "p_ai"] - 0.1
    assert means.loc["random", "p_ai"] < means.loc["unconditioned", "p_ai"]


def test_simulation_without_misconception_use_makes_sources_alike(bank):
    """p_rule = 0: students never act on their rules, so AI, human and random distractors are
    chosen equally often (a guess among the shown distractors) and nobody beats random."""
    cfg = SimConfig(n_students=100, n_questions=25, reps=40, p_rule=0.0, human_accuracy=0.5, seed=2)
    res = simulate_study(cfg, bank=bank)
    m = res["means"].set_index("ai").loc["random"]
    assert m["p_ai"] == pytest.approx(m["p_random"], abs=0.02)
    assert m["p_human"] == pytest.approx(m["p_random"], abs=0.02)
    rates = res["rates"].query("se == 'clustered' and ai == 'oracle'").set_index("verdict")["rate"]
    assert rates["draw"] == 0.0 and rates["ai_better"] == 0.0


def test_example_rows_are_analyzable_and_consistent(bank):
    cfg = SimConfig(n_students=30, n_questions=10, reps=5, human_accuracy=0.7, seed=4)
    ex = simulate_study(cfg, bank=bank)["example"]
    assert len(ex) == 300 and set(ex["chosen"]) <= {"correct", "ai", "human", "random", "ai+human"}
    res = analyze_choices(ex[["student", "question", "chosen"]])
    assert res.n == 300 and res.n_students == 30


def test_cli_simulate_and_power_small(tmp_path, capsys):
    code = main(
        ["turing", "simulate", "--students", "20", "--questions", "5", "--reps", "20",
         "--sizes", "5,10", "--out", str(tmp_path / "sim")]
    )  # fmt: skip
    assert code == 0
    res = json.loads((tmp_path / "sim" / "results.json").read_text())
    assert 0 <= res["oracle_draw_rate"] <= 1
    assert (tmp_path / "sim" / "report.html").stat().st_size > 10000
    code = main(
        ["turing", "power", "--eps", "0.1", "--rho", "0,0.2", "--reps", "50", "--students", "30",
         "--out", str(tmp_path / "pow")]
    )  # fmt: skip
    assert code == 0
    assert (tmp_path / "pow" / "power_table.csv").exists()
    assert main(["turing", "power", "--eps", "0", "--out", str(tmp_path / "p2")]) == 2
    assert "--eps must be > 0" in capsys.readouterr().err
    assert main(["turing", "simulate", "--eps", "-1", "--out", str(tmp_path / "s2")]) == 2


def test_option_probabilities_equal_the_library_response_model():
    """With four distinct options, the simulation's choice probabilities are exactly the
    library's ``choice_probabilities`` (value-matched distractors, ``problem=`` given)."""
    from edueval.misconceptions import (
        ResponseModel,
        Student,
        applicable_rules,
        choice_probabilities,
        correct_answer,
        rule_answer,
        sample_problem,
        slip_answer,
    )
    from edueval.turing.simulate import option_probabilities

    rng = np.random.default_rng(8)
    checked = 0
    for fam, rules in (
        ("fraction_addition", ("add_across", "multiply_across")),
        ("order_of_operations", ("left_to_right", "add_before_multiply")),
    ):
        q = sample_problem(rng, family=fam, rule=rules[0])
        errs = applicable_rules(q)
        if not set(rules) <= set(errs) or rule_answer(q, rules[0]) == rule_answer(q, rules[1]):
            continue
        ai, human = rule_answer(q, rules[0]), rule_answer(q, rules[1])
        item = {"answer": "A", "choice_A": correct_answer(q), "choice_B": ai, "choice_C": human,
                "choice_D": slip_answer(q, rng), "difficulty": q.difficulty}  # fmt: skip
        model = ResponseModel(p_rule=0.8, discrimination=1.3)
        for held in ((), (rules[0],), (rules[1],), rules):
            for theta in (-1.0, 0.4):
                lib = choice_probabilities(Student("s", theta, held), item, model, problem=q)
                sig = float(model.p_solve(theta, q.difficulty))
                ours = option_probabilities(
                    np.array(rules[0] in held), np.array(rules[1] in held), np.array(False),
                    np.array(sig), 0.8,
                )  # fmt: skip
                np.testing.assert_allclose(ours, [lib[x] for x in "ABCD"], atol=1e-12)
                checked += 1
    assert checked == 16
    # a shared option: probabilities still sum to one and the human slot is empty
    p = option_probabilities(np.array(True), np.array(True), np.array(True), np.array(0.3), 0.9)
    assert p[2] == 0 and p.sum() == pytest.approx(1.0)
    assert p[1] == pytest.approx(0.9 + 0.1 * 0.7 / 2)


def test_sample_size_by_consistency(tmp_path):
    """Students who rarely act on their misconceptions shrink the expert's edge over the
    unconditioned AI below eps: a study then cannot tell them apart (it tends to a draw). With
    the edge just beyond eps (p_rule 0.9) they are told apart, but 60 students are too few for the
    interval to clear -eps (the random AI, far behind, is told apart at 10)."""
    from edueval.turing.pipeline import simulate_run

    cfg = SimConfig(n_students=60, n_questions=25, reps=200, seed=5)
    res = simulate_run(
        tmp_path / "sim", cfg, n_students_grid=[10, 60], human_accuracies=[0.9],
        type1_rhos=[0.0], p_rules=[0.05, 0.9], convergence_sizes=[10, 40],
    )  # fmt: skip
    need = res["students_needed_by_consistency"].set_index("p_rule")
    assert need.loc[0.05, "unconditioned_gap"] < 0.5 * cfg.eps
    assert need.loc[0.9, "unconditioned_gap"] > cfg.eps  # (an expert who errs 10% of the time)
    assert pd.isna(need.loc[0.05, "unconditioned_told_apart"])
    assert pd.isna(need.loc[0.9, "unconditioned_told_apart"])
    assert need.loc[0.9, "random_told_apart"] == 10
    table = pd.read_csv(tmp_path / "sim" / "verdicts_by_consistency.csv")
    assert set(table["n_students"]) == {10, 60} and set(table["p_rule"]) == {0.05, 0.9}
    at = table.set_index(["p_rule", "n_students"])
    assert at.loc[(0.05, 60), "unconditioned_told_apart"] < 0.1
    assert at.loc[(0.9, 60), "unconditioned_told_apart"] < 0.8
    assert main(["turing", "simulate", "--p-rules", "0.2,1.5", "--out", str(tmp_path / "x")]) == 2
