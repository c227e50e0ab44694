"""turing analyze: every test equals statsmodels/scipy on the same data; one test per verdict."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.weightstats import ttost_paired

from edueval.cli.main import main
from edueval.turing import analyze_choices
from edueval.turing.stats import EXACT_BELOW, mcnemar_clustered


def frame(per_student: list[list[str]]) -> pd.DataFrame:
    rows = [
        (f"s{i:03d}", f"q{j:02d}", c)
        for i, choices in enumerate(per_student)
        for j, c in enumerate(choices)
    ]
    return pd.DataFrame(rows, columns=["student", "question", "chosen"])


def random_frame(seed: int, n_students: int, m: int, p=(0.4, 0.25, 0.25, 0.1), shared=0.0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_students):
        # a student effect: each student has their own rates (clustering)
        q = rng.dirichlet(np.array(p) * 4)
        ch = list(rng.choice(["correct", "ai", "human", "random"], size=m, p=q))
        ch = [("ai+human" if c == "ai" and rng.random() < shared else c) for c in ch]
        out.append(ch)
    return frame(out)


def uneven_frame(seed: int, n_students: int, p=(0.4, 0.25, 0.25, 0.1)) -> pd.DataFrame:
    """Students with their own rates and sheets of 3 to 40 MCQs."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_students):
        q = rng.dirichlet(np.array(p) * 4)
        m = int(rng.integers(3, 41))
        out.append(list(rng.choice(["correct", "ai", "human", "random"], size=m, p=q)))
    return frame(out)


def indicators(df: pd.DataFrame, source: str) -> np.ndarray:
    return np.array([source in c.split("+") for c in df["chosen"]], dtype=float)


def test_mcnemar_equals_statsmodels_exact_and_chi2():
    for seed, n_students, m in [(1, 4, 3), (2, 6, 4), (3, 60, 20), (4, 40, 10)]:
        df = random_frame(seed, n_students, m, shared=0.2)
        res = analyze_choices(df)
        a, h = indicators(df, "ai"), indicators(df, "human")
        table = [
            [np.sum(a * h), np.sum(a * (1 - h))],
            [np.sum((1 - a) * h), np.sum((1 - a) * (1 - h))],
        ]
        b_plus_c = table[0][1] + table[1][0]
        ref = mcnemar(table, exact=b_plus_c < EXACT_BELOW, correction=True)
        row = res.tests[(res.tests["se"] == "naive") & res.tests["test"].str.startswith("McNemar")]
        assert row["p_value"].iloc[0] == pytest.approx(ref.pvalue, rel=1e-10, abs=1e-14)
        assert row["statistic"].iloc[0] == pytest.approx(ref.statistic, rel=1e-10)
        np.testing.assert_allclose(res.table.to_numpy(), table)
    # both branches were exercised
    small = analyze_choices(random_frame(1, 4, 3))
    assert "exact" in small.tests["test"].iloc[0]


def test_tost_naive_equals_statsmodels_ttost_paired():
    df = random_frame(5, 50, 20, p=(0.4, 0.27, 0.23, 0.1))
    for eps in (0.05, 0.1, 0.2):
        res = analyze_choices(df, eps=eps)
        p_ref, lower, upper = ttost_paired(indicators(df, "ai"), indicators(df, "human"), -eps, eps)
        row = res.tests[(res.tests["se"] == "naive") & res.tests["test"].str.startswith("TOST")]
        assert row["p_value"].iloc[0] == pytest.approx(p_ref, rel=1e-9)


def test_cr1_se_equals_statsmodels_cluster_robust_ols():
    """CR1 (``--se cr1``) is statsmodels' cluster-robust OLS SE, also with unequal sheets."""
    df = uneven_frame(7, 30)
    d = indicators(df, "ai") - indicators(df, "human")
    groups = pd.factorize(df["student"])[0]
    fit = sm.OLS(d, np.ones_like(d)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    res = analyze_choices(df, se="cr1")
    row = res.tests[(res.tests["se"] == "cr1") & res.tests["test"].str.startswith("TOST")]
    assert row["std_err"].iloc[0] == pytest.approx(fit.bse[0], rel=1e-10)
    assert row["df"].iloc[0] == 29
    for source in ("ai", "random"):
        y = indicators(df, source)
        f2 = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": groups})
        r = res.rates.set_index("source").loc[source]
        assert r["se_clustered"] == pytest.approx(f2.bse[0], rel=1e-10)
        assert r["p"] == pytest.approx(y.mean())


def test_cr2_equals_cr1_with_equal_sheets_and_differs_with_unequal_ones():
    """With equal sheet lengths CR2's SE and Bell-McCaffrey df are exactly CR1's (so only the
    skewness correction separates them); with unequal ones CR2 up-weights long sheets."""
    even = analyze_choices(random_frame(7, 30, 25)).tests.set_index(["test", "se"])
    name = "TOST |p_AI - p_Human| < 0.1"
    assert even.loc[(name, "cr2"), "std_err"] == pytest.approx(even.loc[(name, "cr1"), "std_err"])
    assert even.loc[(name, "cr2"), "df"] == pytest.approx(29)
    uneven = analyze_choices(uneven_frame(7, 30)).tests.set_index(["test", "se"])
    assert uneven.loc[(name, "cr2"), "df"] < 29
    assert uneven.loc[(name, "cr2"), "std_err"] != pytest.approx(
        uneven.loc[(name, "cr1"), "std_err"], rel=1e-3
    )


def test_cr1_equals_naive_with_one_mcq_per_student():
    df = random_frame(8, 200, 1)
    res = analyze_choices(df)
    t = res.tests.set_index(["test", "se"])
    for name in t.index.get_level_values(0).unique():
        if name.startswith("McNemar"):
            continue
        assert t.loc[(name, "cr1"), "p_value"] == pytest.approx(t.loc[(name, "naive"), "p_value"])
        # CR2: the same SE and df (n_g = 1, h_g = 1/N); only Hall's skewness term differs
        assert t.loc[(name, "cr2"), "std_err"] == pytest.approx(t.loc[(name, "naive"), "std_err"])
        assert t.loc[(name, "cr2"), "df"] == pytest.approx(t.loc[(name, "naive"), "df"])


def test_superiority_equals_scipy_one_sample_t():
    df = random_frame(9, 40, 15)
    delta = 0.05
    res = analyze_choices(df, delta=delta)
    for source, label in (("ai", "AI"), ("human", "human")):
        d = indicators(df, source) - indicators(df, "random")
        ref = sps.ttest_1samp(d - delta, 0.0, alternative="greater")
        row = res.tests[
            (res.tests["se"] == "naive") & (res.tests["test"] == f"{label} > random + {delta}")
        ]
        assert row["p_value"].iloc[0] == pytest.approx(ref.pvalue, rel=1e-9)
        fail = res.tests[
            (res.tests["se"] == "naive")
            & (res.tests["test"] == f"{label} <= random + {delta} (fail)")
        ]
        assert fail["p_value"].iloc[0] == pytest.approx(1 - ref.pvalue, rel=1e-9)


def test_durkalski_clustered_mcnemar_by_hand():
    diffs = np.array([3.0, -1.0, 2.0, 0.0, 4.0])
    x2, p = mcnemar_clustered(diffs)
    assert x2 == pytest.approx(8.0**2 / 30.0)
    assert p == pytest.approx(sps.chi2.sf(64 / 30, 1))
    assert mcnemar_clustered(np.zeros(4))[1] == 1.0


def _students(n: int, pattern: dict[str, int], jitter: int = 0, seed: int = 0) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        ch = [s for s, k in pattern.items() for _ in range(k)]
        if jitter:  # swap a few choices so that SEs are not degenerate
            for _ in range(jitter):
                ch[int(rng.integers(len(ch)))] = str(rng.choice(["correct", "ai", "human"]))
        out.append(ch)
    return out


@pytest.mark.parametrize(
    ("pattern", "n", "expected"),
    [
        ({"ai": 3, "human": 3, "random": 1, "correct": 3}, 80, "draw"),
        ({"ai": 5, "human": 1, "random": 1, "correct": 3}, 60, "ai_better"),
        ({"ai": 1, "human": 5, "random": 1, "correct": 3}, 60, "human_better"),
        ({"ai": 1, "human": 1, "random": 2, "correct": 6}, 80, "both_fail"),
        ({"ai": 2, "human": 1, "random": 1, "correct": 1}, 3, "inconclusive"),
    ],
)
def test_one_test_per_verdict(pattern, n, expected):
    df = frame(_students(n, pattern, jitter=2, seed=len(expected)))
    res = analyze_choices(df, eps=0.1, delta=0.05)
    assert res.verdict == expected, res.summary()
    assert expected.upper() in res.summary()


def test_shared_option_counts_for_both_sources():
    df = frame(
        [["ai+human", "correct", "random", "ai"], ["human", "ai+human", "correct", "correct"]]
    )
    res = analyze_choices(df)
    p = res.rates.set_index("source")["p"]
    assert p["ai"] == pytest.approx(3 / 8) and p["human"] == pytest.approx(3 / 8)
    assert res.table.loc["ai_yes", "human_yes"] == 2


def test_cli_analyze_writes_run_and_position_table(tmp_path, capsys):
    df = random_frame(11, 30, 10)
    df["position"] = (np.arange(len(df)) % 4) + 1
    df["seconds"] = np.linspace(3, 9, len(df))
    path = tmp_path / "phase2.csv"
    df.to_csv(path, index=False)
    assert main(["turing", "analyze", str(path), "--out", str(tmp_path / "run")]) == 0
    run = tmp_path / "run"
    for name in ("rates.csv", "tests.csv", "results.json", "report.html", "by_position.csv"):
        assert (run / name).exists(), name
    assert "verdict" in capsys.readouterr().out.lower()


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        (
            "student,question,chosen\ns1,q1,ai\ns1,q2,teacher\n",
            [],
            "line 3, column 'chosen': unknown source 'teacher'",
        ),
        ("student,question,chosen\ns1,q1,ai\ns1,q2,human\n", ["--eps", "0"], "--eps must be > 0"),
        ("student,question,chosen\ns1,q1,ai\ns1,q1,human\n", [], "duplicate MCQ"),
        ("student,question\ns1,q1\n", [], "missing column 'chosen'"),
        ("student,question,chosen\ns1,q1,correct+ai\n", [], "unknown source"),
    ],
)
def test_bad_phase2_input_is_one_line_exit_2(tmp_path, capsys, content, args, message):
    path = tmp_path / "p2.csv"
    path.write_text(content)
    code = main(["turing", "analyze", str(path), "--out", str(tmp_path / "run"), *args])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "run" / "results.json").exists()


def test_student_without_phase1_error_is_rejected(tmp_path, capsys):
    p1 = tmp_path / "p1.csv"
    p1.write_text(
        "student,question,answer,correct_answer\ns1,a,3/5,5/6\ns2,a,5/6,5/6\ns2,b,0.50,1/2\n"
    )
    p2 = tmp_path / "p2.csv"
    p2.write_text("student,question,chosen\ns1,a2,ai\ns2,a2,human\n")
    code = main(["turing", "analyze", str(p2), "--phase1", str(p1), "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2
    assert "line 3, column 'student': student 's2' has no Phase-1 error" in err


def test_identical_students_give_no_verdict():
    """Two (or twenty) students with identical counts: every analytic clustered SE is 0, which is
    no evidence of precision -- no draw, no 'better', however favourable the rates look (p = 1).
    The default (boot) judges them on the answers' own variance instead (its SE is never below
    the rows-independent one): the TOST p-value is the t table's at the naive SE, G - 1 df, or
    its score half's where that is larger: with no between-student residuals its statistic is
    at most √G (1 − 1/G) (the null-centred SE grows with |θ₀ − d̂|; the composite null reaches
    d = ±1)."""
    from scipy import stats as sps

    from edueval.turing.stats import ANALYTIC_SE, FIELDS, VERDICTS, batch_tests

    one = dict.fromkeys(FIELDS, 0)
    one.update(n=25, C=10, A=5, H=5, R=5)
    for g in (2, 5, 20):
        counts = np.array([[[one[f] for f in FIELDS]] * g], dtype=float)
        for cse in ANALYTIC_SE:
            bt = batch_tests(counts, eps=0.1, delta=0.05, alpha=0.05, cluster_se=cse)
            assert VERDICTS[bt.verdict["clustered"][0]] == "inconclusive", (g, cse)
            assert bt.tost_p["clustered"][0] == 1.0
        bt = batch_tests(counts, eps=0.1, delta=0.05, alpha=0.05)
        # p_AI = p_random: neither beats random + delta, whatever the TOST says (at 20 students
        # both are shown below it)
        want_v = "both_fail" if g == 20 else "inconclusive"
        assert VERDICTS[bt.verdict["clustered"][0]] == want_v, g
        d = np.repeat([1.0, -1.0, 0.0], [5 * g, 5 * g, 15 * g])
        se = d.std(ddof=1) / np.sqrt(d.size)
        want = sps.t.sf(min(0.1 / se, np.sqrt(g) * (1 - 1 / g)), g - 1)
        assert bt.tost_p["clustered"][0] == pytest.approx(want, rel=1e-9), g


def test_too_few_students_are_inconclusive():
    from edueval.turing.stats import MIN_STUDENTS, VERDICTS, verdicts

    kw = dict(tost_p=0.001, beyond_ai_p=0.9, beyond_human_p=0.9, sup_ai_p=0.001,
              sup_human_p=0.001, fail_ai_p=0.9, fail_human_p=0.9, alpha=0.05)  # fmt: skip
    assert VERDICTS[verdicts(**kw, n_students=MIN_STUDENTS)] == "draw"
    assert VERDICTS[verdicts(**kw, n_students=MIN_STUDENTS - 1)] == "inconclusive"


@pytest.mark.parametrize("rho", [0.0, 0.3])
@pytest.mark.parametrize("students", [3, 5, 10, 20, 40])
def test_draw_holds_alpha_at_the_margin_at_every_size(students, rho):
    """|p_AI - p_Human| = eps exactly: 'draw' (an equivalence claim) in at most alpha of
    studies, at every number of students, with or without intra-student correlation."""
    from edueval.turing.power import Rates, simulate_power

    reps = 2000
    rates = simulate_power(Rates(ai=0.40, human=0.30, random=0.05), n_students=students, m=25,
                           eps=0.10, delta=0.05, rho=rho, reps=reps, seed=students)  # fmt: skip
    assert rates["clustered"]["draw"] <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / reps), rates


def test_sample_sizes_never_go_below_the_minimum():
    from edueval.turing.power import Rates, sample_size
    from edueval.turing.stats import MIN_STUDENTS

    easy = sample_size(Rates(ai=0.3, human=0.3, random=0.01), eps=0.3, delta=0.01, m=200)
    assert all(v >= MIN_STUDENTS for k, v in easy.items() if k.startswith("students_"))
