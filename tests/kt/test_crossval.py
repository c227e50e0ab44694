"""Cross-validation: folds by student never share a student, are seeded and balanced; held-out
scores equal metrics recomputed by hand from each fold's own fit; the command's run directory."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm

from edueval.io import InputError
from edueval.kt import BKT, random_params, simulate
from edueval.kt.models.crossval import cross_validate, make_folds
from edueval.seeding import rng


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    df = simulate(random_params(3, rng(2)), 50, 8, seed=3)
    return df.sample(frac=1.0, random_state=4).reset_index(drop=True)


def test_no_student_in_two_folds_and_folds_are_seeded(data) -> None:
    folds = make_folds(data, 5, seed=9)
    per_student = pd.Series(folds).groupby(data["student"].to_numpy()).nunique()
    assert (per_student == 1).all()
    sizes = pd.Series(folds).groupby(data["student"].to_numpy()).first().value_counts()
    assert sizes.max() - sizes.min() <= 1 and len(sizes) == 5
    assert np.array_equal(folds, make_folds(data, 5, seed=9))
    assert not np.array_equal(folds, make_folds(data, 5, seed=10))


def test_each_fold_is_scored_by_a_model_fitted_without_it(data) -> None:
    res = cross_validate(data, lambda: BKT(n_restarts=1, seed=0), n_folds=3, seed=1)
    for f in range(3):
        test = res.folds == f
        assert not set(data.student[test]) & set(data.student[~test])
        model = BKT(n_restarts=1, seed=0).fit(data[~test])
        p = model.predict(data[test])["p_correct"].to_numpy()
        np.testing.assert_allclose(res.p_heldout[test], p, atol=1e-12)
        row = res.scores[(res.scores.fold == f) & (res.scores.scope == "all")].iloc[0]
        y = data.correct[test].to_numpy()
        # AUC ranks predictions rounded to 12 decimals (metrics.AUC_DECIMALS)
        assert row.auc == pytest.approx(skm.roc_auc_score(y, np.round(p, 12)), abs=1e-12)
        assert row.rmse == pytest.approx(np.sqrt(np.mean((p - y) ** 2)), abs=1e-12)
        assert row.loglik == pytest.approx(-skm.log_loss(y, p, normalize=False), abs=1e-8)
    summary = res.table.set_index("scope").loc["all"]
    overall = res.scores[res.scores.scope == "all"]
    assert summary.auc_sd == pytest.approx(overall.auc.std(ddof=1))
    assert "3 folds by student" in res.summary()


def test_row_folds_predict_with_the_whole_history(data) -> None:
    res = cross_validate(data, lambda: BKT(n_restarts=1, seed=0), n_folds=3, by="row", seed=1)
    test = res.folds == 0
    model = BKT(n_restarts=1, seed=0).fit(data[~test])
    p = model.predict(data)["p_correct"].to_numpy()[test]
    np.testing.assert_allclose(res.p_heldout[test], p, atol=1e-12)


def test_bad_fold_counts_are_input_errors(data) -> None:
    with pytest.raises(InputError, match="at least 2"):
        make_folds(data, 1)
    with pytest.raises(InputError, match="needs at least 60 students"):
        make_folds(data, 60)
    with pytest.raises(InputError, match="by="):
        make_folds(data, 3, by="skill")


def test_crossvalidate_command(tmp_path, cli, data) -> None:
    data.to_csv(tmp_path / "d.csv", index=False)
    res = cli("kt", "crossvalidate", tmp_path / "d.csv", "--folds", 3, "--model", "pfa",
              "--seed", 2, "--out", tmp_path / "cv")  # fmt: skip
    assert res.code == 0, res.err
    out = tmp_path / "cv"
    results = json.loads((out / "results.json").read_text())
    folds = pd.read_csv(out / "folds.csv")
    assert set(folds.scope) == {"all", "skill0", "skill1", "skill2"}
    overall = folds[folds.scope == "all"]
    assert results["auc_mean"] == pytest.approx(overall.auc.mean())
    assert (out / "report.html").read_text().count("<img") >= 1
    bad = cli("kt", "crossvalidate", tmp_path / "d.csv", "--model", "bkt-multigs:item",
              "--out", tmp_path / "cv2")  # fmt: skip
    assert bad.code == 2 and len(bad.err_lines) == 1 and "item" in bad.err
