"""P4 item analysis and pairs: hand-made classrooms with answers worked by hand, and an independent
recomputation (scipy / pandas / brute-force pairs) on a simulated response set."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from edueval.io import InputError
from edueval.items import (
    ClassroomConfig,
    analyze_items,
    load_item_data,
    make_pairs,
    read_qgsms_questions,
    simulate_classroom,
)

# 5 students x 3 items; worked by hand in the test below.
RESPONSES = """student,item,choice
s1,q1,A
s1,q2,B
s1,q3,C
s2,q1,A
s2,q2,B
s2,q3,D
s3,q1,A
s3,q2,C
s3,q3,D
s4,q1,B
s4,q2,C
s4,q3,C
s5,q1,B
s5,q2,A
s5,q3,A
"""
ITEMS = [
    {"item": "q1", "text": "2+2?", "choices": ["4", "5", "6", "7"], "answer": "A",
     "material": "M1", "topic": "T1"},
    {"item": "q2", "text": "3+3?", "choices": ["5", "6", "7", "8"], "answer": "6",
     "material": "M1", "topic": "T1"},
    {"item": "q3", "text": "4+4?", "choices": {"A": "6", "B": "7", "C": "8", "D": "9"},
     "answer": "C", "material": "M1", "topic": "T2"},
]  # fmt: skip


def _items_text(items=ITEMS) -> str:
    return "".join(json.dumps(i) + "\n" for i in items)


@pytest.fixture
def hand(write):
    return write("responses.csv", RESPONSES), write("items.jsonl", _items_text())


def test_hand_made_classroom(hand):
    res = analyze_items(load_item_data(*hand))
    t = res.items.set_index("item")
    # totals: s1 3, s2 2, s3 1, s4 1, s5 0
    assert t["DF"].tolist() == [0.6, 0.4, 0.4]
    # q1: x = 1,1,1,0,0 against t = 3,2,1,1,0 -> sum dx*dt = 1.8, Sxx = 1.2, Stt = 5.2
    assert abs(t.at["q1", "DC"] - 1.8 / np.sqrt(1.2 * 5.2)) < 1e-12
    # item-rest for q1: rest = 2,1,0,1,0 (mean .8): sum dx*dr = 0.6, Srr = 2.8
    assert abs(t.at["q1", "DC_rest"] - 0.6 / np.sqrt(1.2 * 2.8)) < 1e-12
    # k = round(.27*5) = 1: top student s1 (right on all), bottom s5 (wrong on all)
    assert t["DC_ul"].tolist() == [1.0, 1.0, 1.0]
    # q1: B 2/5, C 0, D 0 -> DE 1; q2: A 1/5, C 2/5, D 0 -> 2; q3: A 1/5, B 0, D 2/5 -> 2
    assert t["DE"].tolist() == [1, 2, 2]
    assert t["nonfunctional"].tolist() == ["C;D", "D", "B"]
    d = res.distractors.set_index(["item", "option"])
    assert d.at[("q2", "C"), "rate"] == 0.4 and d.at[("q2", "B"), "is_key"]
    # pairs: DF (alpha .15) q1-q2 and q1-q3, both labelled q1; DE alpha 2 -> none, alpha 1 -> two
    p = make_pairs(res.items, seed=3)
    df = p[p.dimension == "DF"]
    assert len(df) == 2 and set(df["better"]) == {"q1"}
    assert (p.dimension == "DE").sum() == 0
    p1 = make_pairs(res.items, alpha={"DE": 1}, dimensions=["DE", "TC"], seed=3)
    de = p1[p1.dimension == "DE"]
    assert sorted(de["better"]) == ["q2", "q3"]
    # TC: pairs with different topics on the same material: (q1, q3), (q2, q3)
    tc = p1[p1.dimension == "TC"]
    assert sorted(tuple(sorted(x)) for x in tc[["q1", "q2"]].to_numpy()) == [
        ("q1", "q3"),
        ("q2", "q3"),
    ]
    for r in tc.to_dict("records"):
        assert r["target_topic"] == {"q1": "T1", "q2": "T1", "q3": "T2"}[r["better"]]
    assert p1["label"].map({1: p1["q1"], 2: p1["q2"]}.get) is not None
    for r in p1.to_dict("records"):
        assert r["better"] == (r["q1"] if r["label"] == 1 else r["q2"])


def test_five_percent_is_effective_exactly(write):
    # 20 students: option B chosen by exactly 1 (5%), C by 0 -> B effective, C and D not
    rows = ["student,item,choice"] + [f"s{i:02d},q1,{'B' if i == 0 else 'A'}" for i in range(20)]
    r = write("r.csv", "\n".join(rows) + "\n")
    i = write("i.jsonl", _items_text(ITEMS[:1]))
    t = analyze_items(load_item_data(r, i)).items
    assert t.at[0, "DE"] == 1 and t.at[0, "nonfunctional"] == "C;D"
    # one item: the total is the item score (r = 1) and the rest score is constant (undefined)
    assert abs(t.at[0, "DC"] - 1.0) < 1e-12 and np.isnan(t.at[0, "DC_rest"])


def _top_mean_by_rotations(x: np.ndarray, total: np.ndarray, k: int) -> float:
    """Mean of the top-k by total, averaged over every cyclic rotation of the students tied at
    the cut-off: each tied student is then in the group in the same share of the orders, so this
    is the average over all tie orders, computed by sorting and slicing as a reader would."""
    order = np.argsort(-total, kind="stable")
    cut = total[order[k - 1]]
    block = [i for i in order if total[i] == cut]
    head = [i for i in order if total[i] > cut]
    means = [x[head + (block[r:] + block[:r])[: k - len(head)]].mean() for r in range(len(block))]
    return float(np.mean(means))


def _ul_by_rotations(x: np.ndarray, total: np.ndarray, k: int) -> float:
    return _top_mean_by_rotations(x, total, k) - _top_mean_by_rotations(x, -total, k)


def _analysis_of(write, rows: list[tuple[str, str, str]]) -> pd.DataFrame:
    text = "student,item,choice\n" + "".join(f"{s},{i},{c}\n" for s, i, c in rows)
    r = write("perm_r.csv", text)
    i = write("perm_i.jsonl", _items_text())
    return analyze_items(load_item_data(r, i)).items.set_index("item")


def test_upper_lower_index_is_the_average_over_every_order_of_tied_students():
    """Brute force: every permutation of 7 students, each sorted stably by total (the
    permutation breaks the ties), top and bottom k = 2 compared; the mean over all 5,040 orders
    is the index. Totals 3,2,2,2,1,1,0 put ties at both cut-offs."""
    from edueval.items.analysis import _upper_lower

    total = np.array([3, 2, 2, 2, 1, 1, 0], dtype=float)
    x = np.array([1, 1, 0, 0, 1, 0, 0], dtype=float)
    k = round(0.27 * 7)
    vals = []
    for perm in itertools.permutations(range(7)):
        p = np.array(perm)
        order = p[np.argsort(-total[p], kind="stable")]
        vals.append(x[order[:k]].mean() - x[order[::-1][:k]].mean())
    assert len(set(np.round(vals, 12))) > 1  # the tie order matters to the sort-and-slice rule
    assert abs(_upper_lower(x, total, 0.27) - np.mean(vals)) < 1e-12
    # by hand: upper = s0 + 1/3 of the three at 2 (one right) -> (1 + 1/3) / 2 = 2/3;
    # lower = s6 + 1/2 of the two at 1 (one right) -> (0 + 1/2) / 2 = 1/4
    assert abs(_upper_lower(x, total, 0.27) - (2 / 3 - 1 / 4)) < 1e-12


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(st.sampled_from("ABCD"), st.sampled_from("ABCD"), st.sampled_from("ABCD")),
        min_size=4,
        max_size=12,
    ),
    st.randoms(use_true_random=False),
)
def test_upper_lower_index_does_not_depend_on_student_ids(write, answers, rnd):
    """Property: renaming the students (any permutation of their ids) and shuffling the rows
    leaves every item's DC_ul (and every other statistic) unchanged."""
    names = [f"s{i:02d}" for i in range(len(answers))]
    rows = [
        (s, q, c)
        for s, a in zip(names, answers, strict=True)
        for q, c in zip(("q1", "q2", "q3"), a, strict=True)
    ]
    before = _analysis_of(write, rows)
    renamed = names[:]
    rnd.shuffle(renamed)
    new = dict(zip(names, renamed, strict=True))
    rows2 = [(new[s], q, c) for s, q, c in rows]
    rnd.shuffle(rows2)
    after = _analysis_of(write, rows2)
    cols = ["DF", "DC", "DC_rest", "DC_ul", "DE"]
    pd.testing.assert_frame_equal(before[cols], after[cols].loc[before.index], atol=1e-12, rtol=0)


@pytest.fixture(scope="module")
def room():
    return simulate_classroom(ClassroomConfig(n_students=80, questions_per_material=10, seed=5))


def test_statistics_equal_an_independent_computation(room):
    data = room.to_item_data()
    res = analyze_items(data).items.set_index("item")
    r = room.responses
    wide = r.pivot(index="student", columns="item", values="correct")
    total = wide.sum(axis=1)
    for item in wide.columns:
        x = wide[item]
        assert abs(res.at[item, "DF"] - x.mean()) < 1e-12
        assert abs(res.at[item, "DC"] - stats.pearsonr(x, total)[0]) < 1e-12
        assert abs(res.at[item, "DC_rest"] - np.corrcoef(x, total - x)[0, 1]) < 1e-12
        counts = r[r.item == item]["choice"].value_counts()
        key = room.items.set_index("item").at[item, "answer"]
        de = sum(int(counts.get(o, 0) / len(x) >= 0.05) for o in "ABCD" if o != key)
        assert res.at[item, "DE"] == de
        # upper / lower 27%: k = round(.27 n), averaged over the orders of the tied students
        ul = _ul_by_rotations(x.to_numpy(float), total.to_numpy(float), round(0.27 * len(x)))
        assert abs(res.at[item, "DC_ul"] - ul) < 1e-12
    # the simulated proportions track the model's expected ones
    exp = room.items.set_index("item")["DF_expected"]
    assert np.corrcoef(res["DF"], exp.loc[res.index])[0, 1] > 0.8


@pytest.mark.parametrize("alpha", [{}, {"DF": 0.05, "DC": 0.3, "DE": 1}])
def test_pair_counts_follow_the_definitions(room, alpha):
    t = analyze_items(room.to_item_data()).items
    pairs = make_pairs(t, alpha=alpha, seed=11)
    a = {"TC": 1, "DE": 2, "DF": 0.15, "DC": 0.15, **alpha}
    rec = t.to_dict("records")
    for d in ("TC", "DF", "DC", "DE"):
        want = set()
        for p, q in itertools.combinations(rec, 2):
            if p["material"] != q["material"]:
                continue
            if d == "TC":
                ok = p["topic"] != q["topic"]
            else:
                ok = abs(p[d] - q[d]) >= a[d] - 1e-9 and p[d] != q[d]
            if ok:
                want.add(frozenset((p["item"], q["item"])))
        got = pairs[pairs.dimension == d]
        assert {frozenset(x) for x in got[["q1", "q2"]].to_numpy().tolist()} == want
        assert len(got) == len(want)
        if d != "TC":
            m = t.set_index("item")[d]
            for r in got.to_dict("records"):
                other = r["q2"] if r["better"] == r["q1"] else r["q1"]
                assert m[r["better"]] > m[other]
    # seeded: same seed same pairs; the label is not always first
    assert make_pairs(t, alpha=alpha, seed=11).equals(pairs)
    assert 0.2 < (pairs["label"] == 1).mean() < 0.8


def test_qgsms_format_gives_the_same_statistics(room, tmp_path):
    data = room.to_item_data()
    items = data.items.set_index("item")
    qs = []
    for item, g in data.responses.groupby("item", sort=False):
        it = items.loc[item]
        qs.append(
            {
                "q_id": item,
                "learning_mat_id": it["material"],
                "q_text": it["text"],
                "answer": it["option_text"][it["answer"]],
                "learning_mat": it["material_text"],
                "topic": it["topic"],
                "choices": list(it["option_text"].values()),
                "stud_perf": [
                    {"s_id": s, "accuracy": int(c), "choice": it["option_text"][ch]}
                    for s, c, ch in zip(g["student"], g["correct"], g["choice"], strict=True)
                ],
            }
        )
    path = tmp_path / "qs.json"
    path.write_text(json.dumps(qs))
    a = analyze_items(read_qgsms_questions(path)).items
    b = analyze_items(data).items
    cols = ["DF", "DC", "DC_rest", "DC_ul", "DE"]
    assert np.allclose(a[cols].to_numpy(float), b[cols].to_numpy(float), atol=1e-12)


def test_cli_end_to_end(cli, tmp_path, hand):
    r = cli("items", "simulate", "--students", 30, "--questions", 6, "--out", tmp_path / "sim")
    assert r.code == 0, r.err
    sim = tmp_path / "sim"
    assert (sim / "responses.csv").exists() and (sim / "results.json").exists()
    r = cli("items", "analyze", sim / "responses.csv", sim / "items.jsonl", "--out", tmp_path / "a")
    assert r.code == 0, r.err
    r = cli("items", "pairs", *hand, "--alpha", "DE=1", "--out", tmp_path / "p", "--seed", 2)
    assert r.code == 0, r.err
    res = json.loads((tmp_path / "p" / "results.json").read_text())
    assert res["per_dimension"] == {"TC": 2, "DF": 2, "DC": res["per_dimension"]["DC"], "DE": 2}
    p = pd.read_csv(tmp_path / "p" / "pairs.csv")
    assert len(p) == res["n_pairs"]


def test_correct_only_responses(write):
    r = write("r.csv", "student,item,correct\na,q1,1\nb,q1,0\na,q2,1\nb,q2,1\n")
    i = write("i.jsonl", _items_text(ITEMS[:2]))
    t = analyze_items(load_item_data(r, i)).items
    assert t["DF"].tolist() == [0.5, 1.0] and t["DE"].isna().all()


@pytest.mark.parametrize(
    "case, expected",
    [
        ("no_responses", "question 'q3' has no responses"),
        ("bad_choice", "choice 'E' is not among the options of item 'q1'"),
        ("no_answer", "missing column 'answer'"),
        ("answer_not_option", "answer '9' is not one of the options"),
        ("unknown_item", "item 'q9' is not in the items file"),
        ("twice", "duplicate student and item in the response file (student='s1', item='q1')"),
        ("qg_empty", "question 'x1' has no responses"),
        ("qg_choice", "choice 'zzz' is not among the options"),
    ],
)
def test_bad_input_is_one_line(cli, write, tmp_path, case, expected):
    items = [dict(i) for i in ITEMS]
    resp = RESPONSES
    args = None
    if case == "no_responses":
        resp = "\n".join(line for line in RESPONSES.splitlines() if ",q3," not in line) + "\n"
    elif case == "bad_choice":
        resp = RESPONSES.replace("s1,q1,A", "s1,q1,E")
    elif case == "no_answer":
        for i in items:
            del i["answer"]
    elif case == "answer_not_option":
        items[0]["answer"] = "9"
    elif case == "unknown_item":
        resp = RESPONSES + "s1,q9,A\n"
    elif case == "twice":
        resp = RESPONSES + "s1,q1,B\n"
    elif case.startswith("qg"):
        q = {"q_id": "x1", "learning_mat_id": "L", "q_text": "?", "answer": "4",
             "learning_mat": "text", "topic": "t", "stud_perf": []}  # fmt: skip
        if case == "qg_choice":
            q["stud_perf"] = [{"s_id": "a", "accuracy": 0, "choice": "zzz"}]
            q["choices"] = ["4", "5"]
        args = [write("qs.json", json.dumps([q]))]
    if args is None:
        args = [write("r.csv", resp), write("i.jsonl", _items_text(items))]
    for command in ("analyze", "pairs"):
        r = cli("items", command, *args, "--out", tmp_path / command)
        assert r.code == 2
        assert len(r.err_lines) == 1 and expected in r.err, r.err
        assert not (tmp_path / command / "results.json").exists()


def test_bad_choice_names_its_first_line(cli, write, tmp_path):
    # the same bad (item, choice) twice and another bad one later: the first is reported
    resp = RESPONSES.replace("s3,q1,A", "s3,q1,E").replace("s4,q3,C", "s4,q3,Z") + "s9,q1,E\n"
    r = cli("items", "analyze", write("r.csv", resp), write("i.jsonl", _items_text(ITEMS)),
            "--out", tmp_path / "a")  # fmt: skip
    assert r.code == 2
    assert "line 8" in r.err and "choice 'E' is not among the options of item 'q1'" in r.err


def test_the_qgsms_repository_format_as_published(fixtures):
    """A hand-written file in the release's shape: options as ``A) ...`` lines of q_text,
    answers ``"D: text"``, accuracy ``"correct"``/``"incorrect"`` (any case), integer
    learning_mat_id and s_id."""
    data = read_qgsms_questions(fixtures / "qgsms_questions.json")
    items = data.items.set_index("item")
    assert items.at["q1", "text"] == "Which gas do plants take in for photosynthesis?"
    assert items.at["q1", "answer"] == "D" and items.at["q3", "answer"] == "B"
    assert items.at["q1", "option_text"]["A"] == "Oxygen"
    stats = analyze_items(data).items.set_index("item")
    # students 167-170 score q1 1010, q2 1011, q3 1001 (hand-read from the file)
    scores = np.array([[1, 0, 1, 0], [1, 0, 1, 1], [1, 0, 0, 1]])
    totals = scores.sum(axis=0)
    for k, q in enumerate(("q1", "q2", "q3")):
        assert stats.at[q, "DF"] == scores[k].mean()
        assert stats.at[q, "DC"] == pytest.approx(np.corrcoef(scores[k], totals)[0, 1])
    assert stats.at["q1", "DE"] == 1 and stats.at["q1", "nonfunctional"] == "B;C"  # only A chosen
    assert stats.at["q3", "DE"] == 2  # A and D, one student each


@pytest.mark.parametrize("accuracy", ["yes", "2", "", "corect"])
def test_qgsms_accuracy_spellings_outside_the_two_are_refused(fixtures, tmp_path, accuracy):
    qs = json.loads((fixtures / "qgsms_questions.json").read_text())
    qs[1]["stud_perf"][0]["accuracy"] = accuracy
    path = tmp_path / "q.json"
    path.write_text(json.dumps(qs))
    with pytest.raises(InputError, match="accuracy must be correct/incorrect or 1/0"):
        read_qgsms_questions(path)
