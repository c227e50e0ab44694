"""DC's total score with missing responses (issue 34, point 4).

The authors' code (``datasets/preprocess.py`` of the QG-SMS repository) correlates an item's 0/1
score with each student's *share* correct of the items they answered; edueval used the *count*.
With every item answered the two are proportional and give the same DC; with missing responses
they do not. The expected values below are worked by hand (exact fractions, in the comments) and
checked once more against ``scipy.stats.pointbiserialr`` on totals built by a loop of the test's
own, as the authors' code builds them."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from edueval.io import InputError
from edueval.items import analyze_items

# 1 = right, 0 = wrong, None = not answered.
#        q1  q2    q3
GRID = {
    "s1": (1, 1, 1),  # count 3, share 3/3 = 1
    "s2": (1, 0, None),  # count 1, share 1/2
    "s3": (0, 1, 0),  # count 1, share 1/3
    "s4": (0, None, 1),  # count 1, share 1/2
    "s5": (1, 0, 0),  # count 1, share 1/3
}
ITEMS = pd.DataFrame(
    [{"item": f"q{k}", "text": f"{k} + {k}?", "choices": ["1", "2", "3", "4"], "answer": "B",
      "material": "M1", "topic": "T"} for k in (1, 2, 3)]
)  # fmt: skip


def _responses() -> pd.DataFrame:
    rows = [{"student": s, "item": f"q{k + 1}", "correct": v}
            for s, marks in GRID.items() for k, v in enumerate(marks) if v is not None]  # fmt: skip
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def both():
    resp = _responses()
    share = analyze_items(resp, ITEMS).items.set_index("item")
    count = analyze_items(resp, ITEMS, total_score="count").items.set_index("item")
    return share, count


def test_dc_with_missing_responses_is_the_authors_formula_worked_by_hand(both):
    share, count = both
    # q1: x = (1, 1, 0, 0, 1) over s1..s5; shares t = (1, 1/2, 1/3, 1/2, 1/3), i.e. 6t = u =
    # (6, 3, 2, 3, 2). Sxy = Σxu − n x̄ ū = 11 − 5·(3/5)·(16/5) = 7/5; Sxx = 3 − 9/5 = 6/5;
    # Suu = 62 − 256/5 = 54/5; r = (7/5) / sqrt(6/5 · 54/5) = 7/18.
    assert share.at["q1", "DC"] == pytest.approx(7 / 18, abs=1e-12)
    # q2 (s4 did not answer): x = (1, 0, 1, 0) for s1, s2, s3, s5; u = (6, 3, 2, 2).
    # Sxy = 8 − 4·(1/2)·(13/4) = 3/2; Sxx = 1; Suu = 53 − 169/4 = 43/4; r = 3 / sqrt(43).
    assert share.at["q2", "DC"] == pytest.approx(3 / math.sqrt(43), abs=1e-12)
    # The count (edueval before): q1 t = (3, 1, 1, 1, 1): Sxy = 5 − 21/5 = 4/5, Stt = 13 − 49/5
    # = 16/5, r = (4/5) / sqrt(6/5 · 16/5) = 1/sqrt(6); q2 t = (3, 1, 1, 1): Sxy = 4 − 3 = 1,
    # Stt = 12 − 9 = 3, r = 1/sqrt(3).
    assert count.at["q1", "DC"] == pytest.approx(1 / math.sqrt(6), abs=1e-12)
    assert count.at["q2", "DC"] == pytest.approx(1 / math.sqrt(3), abs=1e-12)


def test_item_rest_and_upper_lower_use_the_same_total(both):
    share, count = both
    # q1 item-rest on shares: rest = (c − x)/(n − 1) = (2/2, 0/1, 1/2, 1/1, 0/2) =
    # (1, 0, 1/2, 1, 0); Sxr = 1 − 5·(3/5)·(1/2) = −1/2; Srr = 9/4 − 5/4 = 1; Sxx = 6/5;
    # r = −(1/2)/sqrt(6/5) = −sqrt(5/24). Count: rest = c − x = (2, 0, 1, 1, 0): Sxr = 2 −
    # 5·(3/5)·(4/5) = −2/5; Srr = 6 − 16/5 = 14/5; r = −(2/5)/sqrt(6/5 · 14/5) = −2/sqrt(84).
    assert share.at["q1", "DC_rest"] == pytest.approx(-math.sqrt(5 / 24), abs=1e-12)
    assert count.at["q1", "DC_rest"] == pytest.approx(-2 / math.sqrt(84), abs=1e-12)
    # q1 upper/lower 27%: k = round(0.27·5) = 1. Shares: the top is s1 (1, right); the bottom
    # total 1/3 is shared by s3 (wrong) and s5 (right): 1 − 1/2 = 1/2. Counts: s1 on top
    # (right); s2..s5 tied at 1 at the bottom, s2 and s5 right: 1 − 2/4 = 1/2.
    assert share.at["q1", "DC_ul"] == pytest.approx(0.5)
    assert count.at["q1", "DC_ul"] == pytest.approx(0.5)
    # q3 (s2 did not answer), k = round(0.27·4) = 1. Counts: s1 on top (right); s3, s4, s5 tied
    # at 1, s4 right: 1 − 1/3 = 2/3. Shares: s1 on top; the bottom 1/3 is s3 and s5, both wrong
    # (s4's share is 1/2): 1 − 0 = 1.
    assert count.at["q3", "DC_ul"] == pytest.approx(2 / 3)
    assert share.at["q3", "DC_ul"] == pytest.approx(1.0)


def test_matches_scipy_on_totals_built_as_the_authors_code_builds_them(both):
    share, _ = both
    resp = _responses()
    answers: dict[str, list[int]] = {}
    for r in resp.itertuples():
        answers.setdefault(r.student, []).append(int(r.correct))
    total = {s: sum(v) / len(v) for s, v in answers.items()}
    for item, g in resp.groupby("item"):
        x = g["correct"].to_numpy()
        t = np.array([total[s] for s in g["student"]])
        assert share.at[item, "DC"] == pytest.approx(stats.pointbiserialr(x, t)[0], abs=1e-12)


def test_complete_responses_give_the_same_indices_either_way():
    rng = np.random.default_rng(5)
    ability = rng.normal(size=30)
    rows = [{"student": f"s{i}", "item": f"q{k}", "correct": int(ability[i] + rng.normal() > 0)}
            for i in range(30) for k in (1, 2, 3)]  # fmt: skip
    resp = pd.DataFrame(rows)
    a = analyze_items(resp, ITEMS).items[["DC", "DC_rest", "DC_ul"]].to_numpy()
    b = analyze_items(resp, ITEMS, total_score="count").items[["DC", "DC_rest", "DC_ul"]]
    np.testing.assert_allclose(a, b.to_numpy(), atol=1e-12)


def test_students_table_and_option_checks(both):
    res = analyze_items(_responses(), ITEMS)
    st = res.students.set_index("student")
    assert st.at["s2", "n_answered"] == 2 and st.at["s2", "total"] == 1
    assert st.at["s3", "proportion"] == pytest.approx(1 / 3)
    assert res.total_score == "proportion"
    with pytest.raises(InputError, match="total_score= must be one of proportion, count"):
        analyze_items(_responses(), ITEMS, total_score="sum")


def test_cli_flag(tmp_path, cli):
    resp = tmp_path / "responses.csv"
    _responses().to_csv(resp, index=False)
    items = tmp_path / "items.jsonl"
    ITEMS.to_json(items, orient="records", lines=True)
    for flag, want in (("proportion", 7 / 18), ("count", 1 / math.sqrt(6))):
        out = tmp_path / flag
        r = cli("items", "analyze", resp, items, "--total-score", flag, "--out", out)
        assert r.code == 0, r
        stats_ = pd.read_csv(out / "item_stats.csv").set_index("item")
        assert stats_.at["q1", "DC"] == pytest.approx(want, abs=1e-9)
        pairs = cli("items", "pairs", resp, items, "--total-score", flag, "-d", "DC",
                    "--alpha", "DC=0", "--out", tmp_path / f"p{flag}")  # fmt: skip
        assert pairs.code == 0, pairs
        got = pd.read_csv(tmp_path / f"p{flag}" / "item_stats.csv").set_index("item")
        assert got.at["q1", "DC"] == pytest.approx(want, abs=1e-9)
    bad = cli("items", "analyze", resp, items, "--total-score", "sum", "--out", tmp_path / "x")
    assert bad.code == 2 and "--total-score must be one of" in bad.err.strip().splitlines()[-1]
