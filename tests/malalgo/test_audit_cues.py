"""``malalgo audit`` beyond the words: single surface cues and cross-validated models (issue 18).

A planted cue is flagged (the key always has the longest rationale; the key is always a middle
value), generated items show none, and the pieces agree with independent computations
(statsmodels' conditional logit, hand-worked shares, Wilson intervals)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from statsmodels.discrete.conditional_models import ConditionalLogit
from statsmodels.stats.proportion import proportion_confint

from edueval.malalgo.audit import CUES, audit_key_cues, fit_conditional_logit
from edueval.malalgo.audit_features import choice_value, option_table, question_numbers
from edueval.malalgo.data import normalise_questions
from edueval.misconceptions import generate_items

LETTERS = "ABCD"
#: moderate n: ~10 s to generate and audit; chance's Wilson half-width is about 0.04, a
#: planted cue moves a share by 0.5 or more, and the first generator's cues (the longest
#: rationale was the key in 41%) would be flagged at z ≈ 8
N = 480


@pytest.fixture(scope="module")
def items() -> pd.DataFrame:
    return generate_items(N, seed=21)


@pytest.fixture(scope="module")
def audit(items):
    return audit_key_cues(normalise_questions(items), folds=5, seed=4)


def _rows(res) -> pd.DataFrame:
    return pd.concat([res.cues, res.models]).set_index("cue")


#: what plain generated items give away (issue 34): every mal-rule perturbs the correct
#: procedure, so the key's rationale is the one the others resemble, and learned readers find it
SIMILARITY_LEAKS = {
    "most central rationale (character similarity)",
    "least central rationale (character similarity)",
    "tree ensemble: all",
}


def test_generated_items_show_no_listed_surface_cue(audit):
    """The surface cues balanced by issue 18 stay at chance on plain generated items; the
    similarity cues and the tree ensembles of issue 34 do not (``adversarial=True`` is the
    generator's answer to them, measured in benchmarks/RESULTS.md)."""
    rows = _rows(audit)
    old = rows.drop(index=[c for c in rows.index if "central" in c or "tree ensemble" in c])
    assert not old["flagged"].any(), old.loc[old["flagged"]]
    assert (old["share"] - old["chance"]).abs().max() < 0.08, old
    assert set(audit.flagged) >= SIMILARITY_LEAKS, audit.flagged
    assert rows.loc["most central rationale (character similarity)", "share"] > 0.4
    assert set(audit.cues["cue"]) == {c.name for c in CUES}
    assert set(audit.models["cue"]) == {
        "combined model: choices",
        "combined model: rationales",
        "combined model: all",
        "tree ensemble: choices",
        "tree ensemble: all",
        "words-only model",
    }


def _planted_longest(items: pd.DataFrame) -> pd.DataFrame:
    """The key's rationale gets a trailing check of symbols and digits (no words): always the
    longest, and the only change."""
    out = items.copy()
    for i, key in enumerate(out["answer"]):
        col = f"rationale_{key}"
        out.loc[out.index[i], col] = out.loc[out.index[i], col] + " (1 × 1 = 1) (2 × 2 = 4)"
    return out


def test_a_longest_rationale_key_is_flagged(items):
    res = audit_key_cues(normalise_questions(_planted_longest(items)), folds=5, seed=4)
    rows = _rows(res)
    for cue in ("longest rationale (characters)", "combined model: rationales",
                "combined model: all"):  # fmt: skip
        assert rows.loc[cue, "flagged"] and rows.loc[cue, "share"] > 0.8, rows.loc[cue]
        assert rows.loc[cue, "direction"] == "towards the key"
    assert rows.loc["shortest rationale (characters)", "share"] < 0.05
    # the choices did not change: their model and the value cues stay at chance
    assert not rows.loc["combined model: choices", "flagged"]
    assert not rows.loc["smallest value", "flagged"]
    assert not rows.loc["words-only model", "flagged"]  # no word was added


def _planted_middle(items: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Whole-number choices where the key is always the 2nd or 3rd value of four."""
    out = items.copy()
    for i, key in enumerate(out["answer"]):
        base = int(rng.integers(20, 90))
        values = [base - 7, base + 3, base + 11] if rng.random() < 0.5 else [base - 9, base - 2,
                                                                             base + 6]  # fmt: skip
        key_value = base
        others = [x for x in LETTERS if x != key]
        for x, v in zip(others, values, strict=True):
            out.loc[out.index[i], f"choice_{x}"] = str(v)
        out.loc[out.index[i], f"choice_{key}"] = str(key_value)
    return out


def test_a_middle_value_key_is_flagged(items):
    res = audit_key_cues(
        normalise_questions(_planted_middle(items, np.random.default_rng(0))), folds=5, seed=4
    )
    rows = _rows(res)
    middle = rows.loc["one of the two middle values"]
    assert middle["share"] == 1.0 and middle["chance"] == 0.5 and middle["flagged"]
    assert rows.loc["smallest value", "share"] == 0 and rows.loc["largest value", "share"] == 0
    assert rows.loc["smallest value", "direction"] == "away from the key"
    assert rows.loc["smallest value", "flagged"] and rows.loc["largest value", "flagged"]
    assert rows.loc["combined model: choices", "flagged"]
    assert rows.loc["combined model: choices", "share"] > 0.4
    assert not rows.loc["combined model: rationales", "flagged"]  # the rationales are unchanged


def test_choice_values_and_question_numbers():
    cases = {"372": 372, "-7/2": Fraction(-7, 2), "4.65": Fraction(93, 20), "$57.60": Fraction(288, 5),
             "25%": 25, "0.25%": Fraction(1, 4), "25π": 25, "π": 1, "25π/4": Fraction(25, 4),
             "-π": -1, "a rectangle": None, "5 cm": None, "12.": 12}  # fmt: skip
    for text, value in cases.items():
        assert choice_value(text) == (None if value is None else Fraction(value)), text
    q = "Solve for x: 3x + 6 = 21. A runner ran 3.4 km; 2/5 of 40 is 16."
    assert question_numbers(q) == {
        Fraction(3), Fraction(6), Fraction(21), Fraction(17, 5), Fraction(2, 5), Fraction(40),
        Fraction(16)}  # fmt: skip


def _toy() -> pd.DataFrame:
    """Three questions worked by hand (no ties where the checks need none)."""
    rows = [
        # key B (8): longest rationale, 3rd smallest of 2 5 8 53; only A (5) is in the question
        ("q1", "What is 5 + 3?", ["5", "8", "53", "2"], "B",
         ["aa bb", "aa bb cc dd", "aa", "aa bb cc"]),
        # key C (7): shortest rationale, 3rd smallest of 1 4 7 43; only A (4) is in the question
        ("q2", "What is 4 × 3?", ["4", "43", "7", "1"], "C",
         ["aa bb cc", "aa bb cc dd", "a", "aa bb"]),
        # key D: not a number, so the value cues skip this question; A's text is in the question
        ("q3", "Is a square the shape with 3 sides?", ["square", "circle", "cube", "triangle"],
         "D", ["aa bb cc dd ee", "aa", "aa bb", "aa bb cc"]),
    ]  # fmt: skip
    records = []
    for qid, question, choices, answer, rationales in rows:
        rec = {"id": qid, "question": question, "answer": answer}
        rec |= {f"choice_{x}": c for x, c in zip(LETTERS, choices, strict=True)}
        rec |= {f"rationale_{x}": r for x, r in zip(LETTERS, rationales, strict=True)}
        records.append(rec)
    return normalise_questions(pd.DataFrame(records))


def test_single_cue_shares_on_a_hand_worked_set():
    res = audit_key_cues(_toy(), folds=2, seed=0)
    rows = _rows(res)

    def share(cue: str) -> tuple[int, int]:
        return int(rows.loc[cue, "key_picked"]), int(rows.loc[cue, "n"])

    assert share("longest rationale (characters)") == (1, 3)  # q1 only
    assert share("shortest rationale (characters)") == (1, 3)  # q2 only (q3's key is not)
    assert share("smallest value") == (0, 2)
    assert share("2nd smallest value") == (0, 2)
    assert share("3rd smallest value") == (2, 2)
    assert share("one of the two middle values") == (2, 2)
    assert share("value written in the question") == (0, 3)  # always A, never the key
    assert share("position B") == (1, 3) and share("position D") == (1, 3)
    lo, hi = proportion_confint(2, 2, alpha=0.05, method="wilson")
    row = rows.loc["3rd smallest value"]
    assert row["ci_low"] == pytest.approx(lo) and row["ci_high"] == pytest.approx(hi)
    opts = option_table(_toy())
    for qid in ("q1", "q2", "q3"):
        assert opts.loc[opts["question_id"] == qid, "in_question"].tolist() == [1, 0, 0, 0]
    assert opts["value"].isna().sum() == 4  # q3's four choices


def test_conditional_logit_equals_statsmodels():
    rng = np.random.default_rng(7)
    n, j, p = 400, 4, 3
    x = rng.normal(size=(n, j, p))
    beta = np.array([0.8, -0.5, 0.0])
    util = x @ beta + rng.gumbel(size=(n, j))
    key = util.argmax(axis=1)
    ours = fit_conditional_logit(x, key, l2=0.0)
    y = np.zeros((n, j))
    y[np.arange(n), key] = 1
    ref = ConditionalLogit(y.ravel(), x.reshape(n * j, p), groups=np.repeat(np.arange(n), j)).fit(
        disp=0
    )
    np.testing.assert_allclose(ours, ref.params, atol=1e-4)
    # the penalty shrinks towards zero
    assert np.abs(fit_conditional_logit(x, key, l2=50.0)).sum() < np.abs(ours).sum()
