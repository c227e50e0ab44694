"""The numbers the command line writes: kt predict against an independent filter and kt evaluate
against scikit-learn / closed forms, both to 1e-9, through the CSV files."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm

from edueval.cli.main import main
from edueval.kt import random_params, simulate
from edueval.seeding import rng

from . import reference as ref


@pytest.mark.parametrize("forget", [None, (0.05, 0.2)])
def test_predict_and_evaluate_files(tmp_path, forget):
    truth = random_params(3, rng(1), forget=forget)
    df = simulate(truth, 60, 12, seed=2).sample(frac=1.0, random_state=3)  # rows shuffled
    data = tmp_path / "data.csv"
    params = tmp_path / "params.csv"
    df.to_csv(data, index=False)
    truth.reset_index().to_csv(params, index=False)
    assert (
        main(["kt", "predict", str(data), "--params", str(params), "--out", str(tmp_path / "p")])
        == 0
    )
    pred = pd.read_csv(tmp_path / "p" / "predictions.csv")
    assert pred[["student", "skill", "order"]].equals(
        df[["student", "skill", "order"]].reset_index(drop=True)
    )
    for (skill, _), g in pred.groupby(["skill", "student"]):
        g = g.sort_values("order")
        pc, pk = ref.filter_sequence(g["correct"].to_numpy(), truth.loc[skill].to_numpy())
        np.testing.assert_allclose(g["p_correct"], pc, rtol=0, atol=1e-9)
        np.testing.assert_allclose(g["p_known"], pk, rtol=0, atol=1e-9)

    assert (
        main(
            [
                "kt",
                "evaluate",
                str(tmp_path / "p" / "predictions.csv"),
                "--out",
                str(tmp_path / "e"),
            ]
        )
        == 0
    )
    m = pd.read_csv(tmp_path / "e" / "metrics.csv")
    for target, ycol, pcol in (
        ("performance", "correct", "p_correct"),
        ("knowledge", "known", "p_known"),
    ):
        row = m[(m.scope == "all") & (m.target == target)].iloc[0]
        y, p = pred[ycol].to_numpy(), pred[pcol].to_numpy()
        hard = (p >= 0.5).astype(int)
        ll = float(np.sum(y * np.log(p) + (1 - y) * np.log(1 - p)))
        n, k = len(y), 4 * pred["skill"].nunique()  # the pooled row: every skill's parameters
        want = {
            "accuracy": skm.accuracy_score(y, hard),
            "precision": skm.precision_score(y, hard, zero_division=0),
            "recall": skm.recall_score(y, hard, zero_division=0),
            "f1": skm.f1_score(y, hard, zero_division=0),
            "auc": skm.roc_auc_score(y, p),
            "rmse": np.sqrt(np.mean((y - p) ** 2)),
            "r2": 1 - np.sum((y - p) ** 2) / np.sum((y - y.mean()) ** 2),
            "loglik": ll,
            "aic": -2 * ll + 2 * k,
            "aicc": -2 * ll + 2 * k + 2 * k * (k + 1) / (n - k - 1),
            "bic": -2 * ll + k * np.log(n),
            "cbd": -np.mean(
                np.where(
                    y == 1,
                    np.log10(np.clip(p, 1e-3, 1 - 1e-3)),
                    np.log10(1 - np.clip(p, 1e-3, 1 - 1e-3)),
                )
            ),
        }
        for name, value in want.items():
            assert row[name] == pytest.approx(value, rel=1e-9, abs=1e-12), (target, name)

    # moment of learning, by hand
    errs = []
    for _, g in pred.groupby(["skill", "student"]):
        g = g.sort_values("order")
        T = len(g)
        kn, pk = g["known"].to_numpy(), g["p_known"].to_numpy()
        t_true = int(np.argmax(kn == 1)) + 1 if (kn == 1).any() else T + 1
        t_est = int(np.argmax(pk >= 0.95)) + 1 if (pk >= 0.95).any() else T + 1
        errs.append(abs(t_true - t_est))
    res = json.loads((tmp_path / "e" / "results.json").read_text())
    assert res["moment_of_learning"]["mol_mad"] == pytest.approx(np.mean(errs), abs=1e-12)


def test_degenerate_parameters_are_warned_about(cli, write, tmp_path):
    """prior 1 with slip 0 makes a wrong first answer impossible: the filter cannot update."""
    params = write("p.csv", "skill,prior,learn,guess,slip\nA,1,0.1,0.2,0\n")
    data = write("d.csv", "student,skill,correct\ns1,A,0\ns1,A,1\ns2,A,1\n")
    res = cli("kt", "predict", data, "--params", params, "--out", tmp_path / "p")
    assert res.code == 0 and "probability 0 under the given parameters" in res.err
    results = json.loads((tmp_path / "p" / "results.json").read_text())
    assert results["n_impossible_responses"] >= 1
    fine = write("q.csv", "skill,prior,learn,guess,slip\nA,0.5,0.1,0.2,0.1\n")
    res = cli("kt", "predict", data, "--params", fine, "--out", tmp_path / "q")
    assert res.code == 0 and "probability 0" not in res.err
