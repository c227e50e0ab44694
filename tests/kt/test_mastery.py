"""Moment of learning: hand-worked examples, censoring, n-in-a-row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from edueval.kt import moment_of_learning, n_correct_in_a_row


def table():
    # student a: learns at 2, crosses at 3 -> error 1
    # student b: never learns (T=4 -> t_true 5), crosses at 4 -> error 1
    # student c: learns at 1, never crosses -> t_est 5, error 4
    # student d: never learns, never crosses -> 5 vs 5, error 0
    rows = []
    known = {"a": [0, 1, 1, 1], "b": [0, 0, 0, 0], "c": [1, 1, 1, 1], "d": [0, 0, 0, 0]}
    pk = {
        "a": [0.2, 0.6, 0.96, 0.99],
        "b": [0.1, 0.5, 0.9, 0.95],
        "c": [0.5, 0.6, 0.7, 0.8],
        "d": [0.1, 0.1, 0.1, 0.1],
    }
    correct = {"a": [0, 1, 1, 1], "b": [1, 1, 1, 0], "c": [1, 0, 1, 1], "d": [0, 0, 0, 0]}
    for s in "abcd":
        for t in range(4):
            rows.append(
                {
                    "student": s,
                    "skill": "x",
                    "order": t + 1,
                    "correct": correct[s][t],
                    "known": known[s][t],
                    "p_known": pk[s][t],
                }
            )
    return pd.DataFrame(rows).sample(frac=1, random_state=0)  # order must not matter


def test_hand_worked_mad_and_censoring():
    per, summary = moment_of_learning(table(), threshold=0.95)
    per = per.set_index("student")
    assert per.loc[["a", "b", "c", "d"], "t_true"].tolist() == [2, 5, 1, 5]
    assert per.loc[["a", "b", "c", "d"], "t_est"].tolist() == [3, 4, 5, 5]
    assert summary["mol_mad"] == pytest.approx((1 + 1 + 4 + 0) / 4)
    assert summary["n_never_learned"] == 2 and summary["n_never_crossed"] == 2
    assert summary["n_both_censored"] == 1
    assert summary["n_early"] == 1 and summary["n_late"] == 2 and summary["n_exact"] == 1


def test_threshold_matters():
    _, s = moment_of_learning(table(), threshold=0.5)
    # a crosses at 2 (err 0), b at 2 (err 3), c at 1 (err 0), d never (err 0)
    assert s["mol_mad"] == pytest.approx(3 / 4)


def test_n_in_a_row():
    per, s = n_correct_in_a_row(table(), n=3)
    per = per.set_index("student")
    # a: correct 0,1,1,1 -> third in a row at 4; b: 1,1,1 -> 3; c: 1,0,1,1 -> never (5); d never
    assert per.loc[["a", "b", "c", "d"], "t_est"].tolist() == [4, 3, 5, 5]
    assert s["mol_mad"] == pytest.approx((2 + 2 + 4 + 0) / 4)


def test_requires_known():
    df = table().drop(columns="known")
    from edueval.io import InputError

    with pytest.raises(InputError, match="known"):
        moment_of_learning(df)
    assert np.isfinite(n_correct_in_a_row(table())[1]["mol_mad"])
