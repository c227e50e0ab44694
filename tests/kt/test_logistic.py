"""AFM and PFA: practice counts by hand, coefficients against statsmodels (penalty 0) and
scikit-learn (uniform L2 penalty), the penalised optimum's score equations, unseen students."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from sklearn.linear_model import LogisticRegression

from edueval.io import InputError
from edueval.kt import random_params, simulate
from edueval.kt.data import pack
from edueval.kt.models.logistic import AFM, PFA, practice_counts
from edueval.seeding import rng


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    df = simulate(random_params(3, rng(4)), 40, 8, seed=5)
    return df.sample(frac=1.0, random_state=1).reset_index(drop=True)  # rows shuffled


def _dense_design(df: pd.DataFrame, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """The design built independently with pandas (sorting by order within student x skill)."""
    d = df.sort_values(["student", "skill", "order"]).copy()
    g = d.groupby(["student", "skill"])
    d["T"] = g.cumcount()
    d["S"] = g["correct"].cumsum() - d["correct"]
    d["F"] = d["T"] - d["S"]
    kc = pd.get_dummies(d["skill"]).astype(float).to_numpy()
    if kind == "afm":
        st = pd.get_dummies(d["student"]).astype(float).to_numpy()[:, 1:]  # first student: 0
        X = np.hstack([st, kc, kc * d["T"].to_numpy()[:, None]])
    else:
        X = np.hstack([kc, kc * d["S"].to_numpy()[:, None], kc * d["F"].to_numpy()[:, None]])
    return X, d["correct"].to_numpy(float)


def test_practice_counts_by_hand() -> None:
    df = pd.DataFrame(
        {
            "student": ["a", "a", "b", "a", "a"],
            "skill": ["x", "x", "x", "y", "x"],
            "correct": [1, 0, 1, 1, 1],
            "order": [3, 1, 1, 1, 2],
        }
    )
    seqs, _ = pack(df)
    c = practice_counts(seqs)
    got = pd.DataFrame(
        {
            "T": seqs.unpack(c.opportunities),
            "S": seqs.unpack(c.successes),
            "F": seqs.unpack(c.failures),
        }  # fmt: skip
    )
    assert got.to_numpy().tolist() == [[2, 1, 1], [0, 0, 0], [0, 0, 0], [0, 0, 0], [1, 0, 1]]


def test_afm_unpenalised_equals_statsmodels(data) -> None:
    model = AFM(penalty=0.0, nonnegative_slopes=False).fit(data)
    X, y = _dense_design(data, "afm")
    ref = sm.Logit(y, X).fit(method="newton", tol=1e-12, maxiter=100, disp=False)
    np.testing.assert_allclose(model.coef_[1:], ref.params, atol=1e-6, rtol=0)
    assert model.coef_[0] == 0.0
    assert model.n_params_ == X.shape[1]
    assert model.log_likelihood(data) == pytest.approx(ref.llf, abs=1e-8)


def test_pfa_unpenalised_equals_statsmodels(data) -> None:
    model = PFA().fit(data)
    X, y = _dense_design(data, "pfa")
    ref = sm.Logit(y, X).fit(method="newton", tol=1e-12, maxiter=100, disp=False)
    np.testing.assert_allclose(model.coef_, ref.params, atol=1e-6, rtol=0)
    assert model.n_params_ == 9
    np.testing.assert_allclose(model.params_["success"], ref.params[3:6], atol=1e-6)


def test_pfa_penalised_equals_scikit_learn(data) -> None:
    model = PFA(penalty=2.0).fit(data)
    X, y = _dense_design(data, "pfa")
    ref = LogisticRegression(C=0.5, fit_intercept=False, tol=1e-12, max_iter=10000).fit(X, y)
    np.testing.assert_allclose(model.coef_, ref.coef_[0], atol=1e-5, rtol=0)


def test_afm_penalty_only_on_students(data) -> None:
    """Score equations at the penalised optimum: KC columns X'(y - p) = 0 where the slope is
    free; student columns X'(y - p) = penalty * theta."""
    model = AFM(penalty=3.0).fit(data)
    X, y = _dense_design(data, "afm")
    d = data.sort_values(["student", "skill", "order"])
    st = pd.get_dummies(d["student"]).astype(float).to_numpy()
    Xfull = np.hstack([st, X[:, st.shape[1] - 1 :]])
    r = Xfull.T @ (y - model.predict(d)["p_correct"].to_numpy())
    ns = st.shape[1]
    np.testing.assert_allclose(r[:ns], 3.0 * model.coef_[:ns], atol=1e-5)
    np.testing.assert_allclose(r[ns : ns + 3], 0.0, atol=1e-5)
    slopes = model.coef_[ns + 3 :]
    assert (slopes >= 0).all()
    free = slopes > 1e-8
    np.testing.assert_allclose(r[ns + 3 :][free], 0.0, atol=1e-5)
    assert model.n_params_ == ns + 6


def test_unseen_student_has_proficiency_zero_and_rows_keep_their_order(data) -> None:
    model = AFM().fit(data)
    new = data[data.student == data.student.iloc[0]].assign(student="newcomer")
    pred = model.predict(new)
    assert pred.index.equals(new.index)
    p = model.params_.loc[new["skill"]]
    seqs, _ = pack(new)
    T = seqs.unpack(practice_counts(seqs).opportunities)
    expected = 1 / (1 + np.exp(-(p["easiness"].to_numpy() + p["slope"].to_numpy() * T)))
    np.testing.assert_allclose(pred["p_correct"], expected, atol=1e-12)


def test_unknown_skill_is_an_input_error(data) -> None:
    model = PFA().fit(data)
    with pytest.raises(InputError, match="skill 'nope'"):
        model.predict(data.assign(skill="nope"))
