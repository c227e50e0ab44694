"""Issue 36: a score table with no items file through ``items analyze`` (DF, DC variants,
reliability), ``items dif`` and ``analyze_items(df)``; every bad cell one line and exit 2."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from edueval.items import analyze_items, read_scores
from edueval.items.reliability import reliability


def _wide(n=120, k=6, seed=1, dif_item=None) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    group = np.where(rng.random(n) < 0.4, "F", "M")
    theta = rng.normal(size=n)
    shift = np.zeros(k)
    if dif_item is not None:
        shift[dif_item] = 1.5
    logit = theta[:, None] - np.linspace(-1, 1, k) - shift * (group == "F")[:, None]
    x = (rng.random((n, k)) < 1 / (1 + np.exp(-logit))).astype(int)
    df = pd.DataFrame(x, columns=[f"q{i + 1}" for i in range(k)]).astype(object)
    df.iloc[3, 2] = ""  # not administered
    df.insert(0, "student", [f"s{i:03d}" for i in range(n)])
    df["sex"] = group
    return df


def _one_line(res, out, *needles):
    assert res.code == 2, (res.code, res.out, res.err)
    assert "Traceback" not in res.err and len(res.err_lines) == 1, res.err
    for needle in needles:
        assert needle in res.err, res.err
    assert not (out / "results.json").exists()


def test_analyze_a_wide_score_table(cli, write, tmp_path):
    df = _wide().drop(columns="sex")
    path = write("scores.csv", df.to_csv(index=False))
    out = tmp_path / "run"
    res = cli("items", "analyze", path, "--out", out)
    assert res.code == 0, res.err
    results = json.loads((out / "results.json").read_text())
    expected = reliability(read_scores(path))
    assert results["reliability"]["alpha"] == pytest.approx(expected.alpha, abs=1e-12)
    assert results["n_items"] == 6 and results["has_choices"] is False
    stats = pd.read_csv(out / "item_stats.csv")
    assert "alpha_if_deleted" in stats and stats["DE"].isna().all()
    assert stats.loc[2, "n"] == 119  # the blank cell is not an answer
    assert "Reliability" in (out / "report.html").read_text()
    config = json.loads((out / "config.json").read_text())
    assert config["params"]["format"] == "scores"


def test_long_table_and_dataframe_agree_with_wide(write):
    wide = _wide().drop(columns="sex")
    long = wide.melt(id_vars="student", var_name="item", value_name="correct")
    a = analyze_items(wide)
    b = analyze_items(write("long.csv", long.to_csv(index=False)))
    pd.testing.assert_series_equal(a.items["DF"], b.items["DF"])
    np.testing.assert_allclose(a.items["DC"], b.items["DC"])
    assert a.reliability is not None and b.reliability is not None
    assert a.reliability.alpha == pytest.approx(b.reliability.alpha, abs=1e-12)


@pytest.mark.parametrize(
    ("row", "col", "value", "needles"),
    [(5, "q2", "x", ["line 7", "column 'q2'"]), (9, "q4", "-1", ["line 11", "column 'q4'"]),
     (2, "student", " s002", ["line 4", "column 'student'", "identifier"]),
     (4, "q1", "2", ["0/1 scores", "'s004'"])],
)  # fmt: skip
def test_analyze_refuses_bad_cells(cli, write, tmp_path, row, col, value, needles):
    df = _wide().drop(columns="sex")
    df.loc[row, col] = value
    out = tmp_path / "bad"
    res = cli("items", "analyze", write("s.csv", df.to_csv(index=False)), "--out", out)
    _one_line(res, out, *needles)


def test_dif_on_a_wide_table_with_its_group_column(cli, write, tmp_path):
    path = write("scores.csv", _wide(n=1200, dif_item=2).to_csv(index=False))
    out = tmp_path / "dif"
    res = cli("items", "dif", path, "--group", "sex", "--out", out)
    assert res.code == 0, res.err
    results = json.loads((out / "results.json").read_text())
    assert results["focal"] == "F" and results["flagged"] == ["q3"]
    table = pd.read_csv(out / "dif.csv")
    assert {"MH_D_DIF", "ETS", "p_dif_holm", "flag"} <= set(table.columns)
    assert (out / "report.html").exists() and (out / "config.json").exists()


def test_dif_with_a_students_file_and_long_table(cli, write, tmp_path):
    wide = _wide(n=300)
    students = write("students.csv", wide[["student", "sex"]].to_csv(index=False))
    long = wide.drop(columns="sex").melt(id_vars="student", var_name="item",
                                         value_name="correct")  # fmt: skip
    scores = write("long.csv", long.to_csv(index=False))
    out = tmp_path / "dif"
    res = cli("items", "dif", scores, "--group", "sex", "--students", students, "--focal", "M",
              "--method", "mh", "--out", out)  # fmt: skip
    assert res.code == 0, res.err
    results = json.loads((out / "results.json").read_text())
    assert (results["focal"], results["reference"], results["methods"]) == ("M", "F", ["mh"])
    # the group column in the long table itself: one value per student
    with_group = long.merge(wide[["student", "sex"]])
    assert with_group.loc[307, ["student", "item"]].tolist() == ["s007", "q2"]
    with_group.loc[307, "sex"] = "M" if with_group.loc[307, "sex"] == "F" else "F"
    out2 = tmp_path / "dif2"
    res = cli("items", "dif", write("g.csv", with_group.to_csv(index=False)), "--group", "sex",
              "--out", out2)  # fmt: skip
    _one_line(res, out2, "line 309", "column 'sex'", "'s007'", "one per student")


@pytest.mark.parametrize(
    ("students", "extra", "needles"),
    [("student,sex\ns000,F\n", [], ["students.csv", "'s001'", "no row"]),
     ("student,sex\ns000,F\ns000,M\n", [], ["duplicate student"]),
     ("student,gender\ns000,F\n", [], ["missing column 'sex'"]),
     (None, ["--focal", "X"], ["no student is in group 'X'"]),
     (None, ["--method", "irt"], ["--method"])],
)  # fmt: skip
def test_dif_refuses_bad_input(cli, write, tmp_path, students, extra, needles):
    wide = _wide(n=40)
    scores = write(
        "scores.csv", (wide.drop(columns="sex") if students else wide).to_csv(index=False)
    )
    args = ["--students", write("students.csv", students)] if students else []
    out = tmp_path / "bad"
    res = cli("items", "dif", scores, "--group", "sex", *args, *extra, "--out", out)
    _one_line(res, out, *needles)


# ---- tables of response patterns with a count per row (as mirt and ltm ship LSAT6, LSAT7) ----

MIRT = __import__("pathlib").Path(__file__).parents[1] / "fixtures" / "mirt"


def test_a_pattern_table_is_mirts_expand_table():
    pats = pd.read_csv(MIRT / "LSAT7.csv")
    x = read_scores(MIRT / "LSAT7.csv", freq_col="freq")
    expected = np.repeat(pats.iloc[:, :5].to_numpy(float), pats["freq"].to_numpy(), axis=0)
    assert x.shape == (1000, 5) and list(x.columns) == list(pats.columns[:5])
    np.testing.assert_array_equal(x.to_numpy(), expected)
    assert x.index[:2].tolist() == ["1.1", "1.2"] and x.index.is_unique
    # with a student column the ids count within it
    named = pd.DataFrame({"student": ["a", "b"], "q1": [1, 0], "q2": [0, ""], "n": [2, 1]})
    got = read_scores(named, freq_col="n")
    assert got.index.tolist() == ["a.1", "a.2", "b.1"] and np.isnan(got.loc["b.1", "q2"])


def test_irt_and_reliability_on_lsat7_as_mirt_ships_it(cli, tmp_path):
    from edueval.items import IRT

    res = cli("items", "irt", MIRT / "LSAT7.csv", "--freq", "freq", "--out", tmp_path / "irt")
    assert res.code == 0, res.err
    written = json.loads((tmp_path / "irt/results.json").read_text())
    fit = IRT("2pl").fit(read_scores(MIRT / "LSAT7.csv", freq_col="freq"))
    assert written["loglik"] == pytest.approx(fit.loglik_, abs=1e-9)
    assert written["loglik"] == pytest.approx(-2658.805, abs=1e-3)  # mirt's logLik, LSAT7 2PL
    config = json.loads((tmp_path / "irt/config.json").read_text())
    assert config["params"]["freq"] == "freq"
    res = cli("items", "reliability", MIRT / "LSAT6.csv", "--freq", "Freq", "--out",
              tmp_path / "rel")  # fmt: skip
    assert res.code == 0, res.err
    rel = json.loads((tmp_path / "rel/results.json").read_text())
    assert rel["n_students"] == 1000 and rel["n_items"] == 5


@pytest.mark.parametrize(
    ("table", "needle"),
    [
        ("q1,q2,freq\n1,0,2\n0,1,-1\n", "line 3"),
        ("q1,q2,freq\n1,0,2\n0,1,1.5\n", "line 3"),
        ("q1,q2,freq\n1,0,0\n0,1,0\n", "every count"),
        ("q1,q2\n1,0\n", "missing column 'freq'"),
        ("student,item,correct,freq\na,q1,1,2\n", "long"),
    ],
)
def test_bad_pattern_tables_are_one_line(cli, write, tmp_path, table, needle):
    out = tmp_path / "out"
    res = cli("items", "irt", write("p.csv", table), "--freq", "freq", "--out", out)
    _one_line(res, out, needle)


def test_a_pattern_table_without_freq_names_the_option(cli, tmp_path):
    out = tmp_path / "out"
    res = cli("items", "reliability", MIRT / "LSAT7.csv", "--out", out)
    _one_line(res, out, "missing column 'student'", "--freq")


# ---- a matrix of chosen options scored against a key (mirt's SAT12 and key2binary) ----

SAT12_KEY = [1, 4, 5, 2, 3, 1, 2, 1, 3, 1, 2, 4, 2, 1, 5, 3, 4, 4, 1, 4, 3, 3, 4, 1, 3, 5, 1, 3,
             1, 5, 4, 5]  # fmt: skip


def _sat12_key(write):
    rows = "".join(f"Item.{i + 1},{k}\n" for i, k in enumerate(SAT12_KEY))
    return write("key.csv", "item,key\n" + rows)


def test_sat12_as_mirt_ships_it_scored_with_its_key(cli, write, tmp_path):
    from edueval.items import IRT

    raw = pd.read_csv(MIRT / "SAT12.csv")
    key = _sat12_key(write)
    x = read_scores(MIRT / "SAT12.csv", key=key, student_col=None)
    expected = (raw.to_numpy() == np.array(SAT12_KEY)).astype(float)  # key2binary: 8 is wrong
    np.testing.assert_array_equal(x.to_numpy(), expected)
    assert x.index[0] == "1" and x.index[-1] == "600"
    res = cli("items", "irt", MIRT / "SAT12.csv", "--key", key, "--row-ids", "--se", "none",
              "--out", tmp_path / "irt")  # fmt: skip
    assert res.code == 0, res.err
    written = json.loads((tmp_path / "irt/results.json").read_text())
    fit = IRT("2pl", se="none").fit(expected)
    assert written["loglik"] == pytest.approx(fit.loglik_, abs=1e-9)
    params = json.loads((tmp_path / "irt/config.json").read_text())["params"]
    assert params["key"] is True and params["row_ids"] is True


def test_a_key_scores_blanks_as_not_administered():
    table = pd.DataFrame({"student": ["a", "b", "c"], "q1": ["B", "C", ""], "q2": [2, 8, 1]})
    got = read_scores(table, key={"q1": "B", "q2": 1})
    assert got.loc["a"].tolist() == [1.0, 0.0] and got.loc["b"].tolist() == [0.0, 0.0]
    assert np.isnan(got.loc["c", "q1"]) and got.loc["c", "q2"] == 1.0


@pytest.mark.parametrize(
    ("key", "needle"),
    [
        ("item,key\nq1,1\n", "item 'q2' has no key"),
        ("item,key\nq1,1\nq2,1\nq3,2\n", "the key names item 'q3'"),
        ("item,key\nq1,1\nq2,\n", "line 3"),
        ("item,answer\nq1,1\nq2,1\n", "'key'"),
    ],
)
def test_bad_keys_are_one_line(cli, write, tmp_path, key, needle):
    out = tmp_path / "out"
    scores = write("s.csv", "student,q1,q2\na,1,2\nb,2,1\n")
    res = cli("items", "reliability", scores, "--key", write("k.csv", key), "--out", out)
    _one_line(res, out, needle)


def test_row_ids_and_key_need_a_wide_table(cli, write, tmp_path):
    out = tmp_path / "out"
    long = write("l.csv", "student,item,correct\na,q1,1\n")
    _one_line(cli("items", "irt", long, "--row-ids", "--out", out), out, "long")
    _one_line(cli("items", "irt", long, "--key", write("k.csv", "item,key\nq1,1\n"), "--out", out),
              out, "long")  # fmt: skip
