"""Simulated students: choice rates match the model's parameters; populations match frequencies."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from edueval.misconceptions import (
    LETTERS,
    RULES,
    ResponseModel,
    Student,
    applicable_rules,
    build_problem,
    choice_probabilities,
    choose_answer,
    correct_answer,
    diagnose,
    generate_items,
    open_answer,
    rule_answer,
    sample_problem,
    sample_students,
    simulate_responses,
    slip_answer,
)

# 20 − 3 × 4 + 5; key C, distractors by three order-of-operations rules
ITEM = {
    "id": "t1",
    "answer": "C",
    "choice_A": "73",
    "choice_B": "153",
    "choice_C": "13",
    "choice_D": "3",
    "malrule_A": "left_to_right",
    "malrule_B": "add_before_multiply",
    "malrule_C": "",
    "malrule_D": "add_before_subtract",
    "difficulty": 0.5,
}


def assert_rates(counts: dict[str, int], probs: dict[str, float], n: int) -> None:
    """Observed rates within 4.5 binomial standard errors of the model's probabilities."""
    for x in LETTERS:
        p = probs[x]
        se = max(np.sqrt(p * (1 - p) / n), 1e-12)
        assert abs(counts.get(x, 0) / n - p) <= 4.5 * se + 1e-12, (x, counts.get(x, 0) / n, p)


def test_choice_probabilities_hand_worked():
    model = ResponseModel(p_rule=0.8)
    s = Student("s", ability=0.5, malrules=("left_to_right",))  # θ = b, so σ = 1/2
    p = choice_probabilities(s, ITEM, model)
    assert p["A"] == pytest.approx(0.8 + 0.2 * 0.5 / 3)
    assert p["C"] == pytest.approx(0.2 * 0.5)
    assert p["B"] == pytest.approx(p["D"]) == pytest.approx(0.2 * 0.5 / 3)
    none = choice_probabilities(Student("t", ability=0.5 + np.log(3)), ITEM, model)  # σ = 3/4
    assert none["C"] == pytest.approx(0.75)
    assert none["A"] == none["B"] == none["D"] == pytest.approx(0.25 / 3)
    two = choice_probabilities(
        Student("u", 0.5, ("left_to_right", "add_before_subtract")), ITEM, model
    )
    assert two["A"] == pytest.approx(two["D"]) == pytest.approx(0.4 + 0.2 * 0.5 / 3)
    # a rule that is not behind any distractor, or sits on the key, changes nothing
    other = choice_probabilities(Student("v", 0.5, ("add_across",)), ITEM, model)
    assert other == pytest.approx(choice_probabilities(Student("w", 0.5), ITEM, model))
    for probs in (p, none, two, other):
        assert sum(probs.values()) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("ability", "malrules", "p_rule", "a"),
    [
        (0.5, (), 0.9, 1.0),
        (2.0, ("left_to_right",), 0.9, 1.0),
        (-1.0, ("add_before_multiply",), 0.6, 1.7),
        (0.0, ("left_to_right", "add_before_subtract"), 0.75, 1.0),
        (3.0, ("left_to_right",), 0.0, 1.0),
    ],
)
def test_choose_answer_rates_match_the_model(ability, malrules, p_rule, a):
    model = ResponseModel(p_rule=p_rule, discrimination=a)
    s = Student("s", ability, malrules)
    rng = np.random.default_rng(42)
    n = 20_000
    picks = [choose_answer(s, ITEM, rng, model) for _ in range(n)]
    counts = pd.Series(picks).value_counts().to_dict()
    assert_rates(counts, choice_probabilities(s, ITEM, model), n)


def test_simulate_responses_rates_match_the_model():
    model = ResponseModel(p_rule=0.85)
    students = [Student(f"s{i}", 1.0, ("add_before_multiply",)) for i in range(5000)]
    students += [Student(f"t{i}", -0.5) for i in range(5000)]
    items = pd.DataFrame([ITEM, {**ITEM, "id": "t2", "difficulty": -1.0}])
    out = simulate_responses(students, items, np.random.default_rng(7), model)
    assert list(out.columns) == ["student", "item", "choice", "correct", "malrule"]
    assert len(out) == 2 * len(students)
    for item in items.to_dict("records"):
        for group, s in (("s", students[0]), ("t", students[-1])):
            sub = out[(out["item"] == item["id"]) & out["student"].str.startswith(group)]
            assert_rates(
                sub["choice"].value_counts().to_dict(),
                choice_probabilities(s, item, model),
                len(sub),
            )
    assert (out["correct"] == (out["choice"] == "C")).all()
    picked_b = out["choice"] == "B"
    assert (out.loc[picked_b, "malrule"] == "add_before_multiply").all()


def test_simulated_classroom_difficulty_and_rules_show_up():
    """More able students score higher; a rule's holders pick its distractor far more often."""
    items = generate_items(40, seed=3)
    rng = np.random.default_rng(3)
    freqs = dict.fromkeys(RULES, 0.15)
    students = sample_students(400, rng, freqs)
    out = simulate_responses(students, items, rng)
    score = out.groupby("student")["correct"].mean()
    ability = pd.Series({s.id: s.ability for s in students})
    assert np.corrcoef(score.loc[ability.index], ability)[0, 1] > 0.5
    holds = {s.id: set(s.malrules) for s in students}
    hit = out.apply(lambda r: r["malrule"] != "" and r["malrule"] in holds[r["student"]], axis=1)
    assert hit.sum() > 0.1 * len(out) * 0.15  # rule-driven choices are common
    # expected rate of choosing the key, averaged over students and items, matches the model
    expected = np.mean(
        [
            choice_probabilities(s, it, ResponseModel())[it["answer"]]
            for s in students[:100]
            for it in items.to_dict("records")
        ]
    )
    observed = out[out["student"].isin([s.id for s in students[:100]])]["correct"].mean()
    assert abs(observed - expected) < 4.5 * np.sqrt(expected * (1 - expected) / 4000)


def test_choose_answer_reads_items_from_csv():
    items = generate_items(5, seed=1)
    back = pd.read_csv(io.StringIO(items.to_csv(index=False)))  # empty malrule -> NaN
    s = Student("s", 0.0, tuple(RULES))
    for it in back.to_dict("records"):
        assert choose_answer(s, it, np.random.default_rng(0)) in LETTERS
        assert sum(choice_probabilities(s, it).values()) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="answer must be one of"):
        choose_answer(s, {**ITEM, "answer": "E"}, np.random.default_rng(0))


def test_sample_students_match_population_frequencies():
    freqs = {"add_across": 0.3, "left_to_right": 0.1, "no_sorting": 0.0, "invert_both": 1.0}
    n = 20_000
    students = sample_students(n, np.random.default_rng(1), freqs, ability_mean=0.5, ability_sd=2)
    for r, f in freqs.items():
        rate = np.mean([r in s.malrules for s in students])
        assert abs(rate - f) <= 4.5 * np.sqrt(f * (1 - f) / n) + 1e-12
    ability = np.array([s.ability for s in students])
    assert abs(ability.mean() - 0.5) < 4.5 * 2 / np.sqrt(n)
    assert abs(ability.std() - 2) < 0.05
    assert all(set(s.malrules) <= set(freqs) for s in students)
    assert students[0].id == "s00000" and students[-1].id == "s19999"
    again = sample_students(n, np.random.default_rng(1), freqs, ability_mean=0.5, ability_sd=2)
    assert again == students
    with pytest.raises(ValueError, match="unknown mal-rule"):
        sample_students(3, np.random.default_rng(1), {"nope": 0.2})
    with pytest.raises(ValueError, match="must be in"):
        sample_students(3, np.random.default_rng(1), {"add_across": 1.2})


def test_response_model_validation():
    with pytest.raises(ValueError):
        ResponseModel(p_rule=1.5)
    with pytest.raises(ValueError):
        ResponseModel(discrimination=0)
    assert ResponseModel(discrimination=2).p_solve(1.0, 0.5) == pytest.approx(expit(1.0))


FADD = build_problem(
    "fraction_addition", {"a": 1, "b": 3, "c": 2, "d": 5, "template": 0}, difficulty=0.0
)


def test_open_answer_rates():
    model = ResponseModel(p_rule=0.7)
    rng = np.random.default_rng(5)
    n = 20_000
    holder = Student("h", 0.0, ("add_across", "left_to_right"))  # only add_across applies here
    answers = pd.Series([open_answer(holder, FADD, rng, model) for _ in range(n)])
    p_rule, p_right = 0.7, 0.3 * 0.5
    rates = {
        "rule": (answers == "3/8").mean(),
        "right": (answers == correct_answer(FADD)).mean(),
    }
    assert abs(rates["rule"] - p_rule) < 4.5 * np.sqrt(p_rule * (1 - p_rule) / n)
    assert abs(rates["right"] - p_right) < 4.5 * np.sqrt(p_right * (1 - p_right) / n)
    slips = answers[(answers != "3/8") & (answers != correct_answer(FADD))]
    assert len(slips) > 0
    assert all(diagnose(FADD, a) == () for a in slips.unique())  # slips look like no rule
    # no held rule and very able: correct; a consistent holder always shows the rule
    assert open_answer(Student("a", 50.0, ("invert_both",)), FADD, rng, model) == "11/15"
    sure = ResponseModel(p_rule=1.0)
    assert open_answer(Student("b", 50.0, ("add_across",)), FADD, rng, sure) == "3/8"


@pytest.mark.parametrize("seed", range(3))
def test_phase_one_error_reveals_the_rule(seed):
    """P5's oracle: a consistent holder's Phase-1 answer diagnoses to the rule it holds."""
    rng = np.random.default_rng(seed)
    model = ResponseModel(p_rule=1.0)
    for rule in RULES:
        problem = sample_problem(rng, rule=rule)
        answer = open_answer(Student("s", 0.0, (rule,)), problem, rng, model)
        assert answer == rule_answer(problem, rule)
        assert rule in diagnose(problem, answer)


def test_slips_are_wrong_and_not_rule_answers_in_every_family():
    rng = np.random.default_rng(8)
    weak = Student("w", -50.0)
    for _ in range(300):
        problem = sample_problem(rng)
        answer = open_answer(weak, problem, rng)
        assert answer != correct_answer(problem)
        if problem.family != "decimal_compare":  # there every other listed number is a rule's
            assert diagnose(problem, answer) == ()
            assert answer not in {rule_answer(problem, r) for r in applicable_rules(problem)}


def test_choice_by_value_for_distractors_written_elsewhere():
    """P5: a distractor from outside the library is 'held' when its value is the rule's answer."""
    problem = build_problem("fraction_addition", {"a": 1, "b": 3, "c": 2, "d": 5, "template": 0})
    mcq = {
        "answer": "B",
        "choice_A": "6/16",  # an "AI" distractor: add_across's answer, unreduced, unlabelled
        "choice_B": "11/15",
        "choice_C": "2/15",  # a "human" distractor: multiply_across's answer
        "choice_D": "7/9",  # "random"
        "difficulty": 0.0,
    }
    model = ResponseModel(p_rule=0.8)
    s = Student("s", 0.0, ("add_across",))
    p = choice_probabilities(s, mcq, model, problem=problem)
    assert p["A"] == pytest.approx(0.8 + 0.2 * 0.5 / 3)
    assert p["C"] == p["D"] == pytest.approx(0.2 * 0.5 / 3)
    # without the problem, labels decide, and there are none
    assert choice_probabilities(s, mcq, model)["A"] == pytest.approx(0.5 / 3)
    rng = np.random.default_rng(0)
    n = 10_000
    counts = pd.Series(
        [choose_answer(s, mcq, rng, model, problem=problem) for _ in range(n)]
    ).value_counts()
    assert_rates(counts.to_dict(), p, n)


def test_missing_difficulty_means_zero():
    s = Student("s", 0.0)
    item = {**ITEM, "difficulty": float("nan")}
    assert choice_probabilities(s, item)["C"] == pytest.approx(0.5)
    item.pop("difficulty")
    assert choice_probabilities(s, item)["C"] == pytest.approx(0.5)


def test_slip_answer_is_a_plausible_untargeted_distractor():
    rng = np.random.default_rng(2)
    for _ in range(100):
        problem = sample_problem(rng)
        slip = slip_answer(problem, rng)
        assert slip != correct_answer(problem)
        assert slip_answer(problem, np.random.default_rng(1)) == slip_answer(
            problem, np.random.default_rng(1)
        )
