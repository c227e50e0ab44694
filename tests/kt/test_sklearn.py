"""BKT, its variants, AFM and PFA as scikit-learn estimators: clone, get_params / set_params,
model selection with GridSearchCV over student groups, score = mean log-likelihood per response,
NotFittedError, parameters checked at fit (ValueError naming the Python parameter), and the
checks of ``sklearn.utils.estimator_checks`` that apply to estimators of response DataFrames."""

from __future__ import annotations

import warnings

import joblib
import numpy as np
import pandas as pd
import pytest
import sklearn.exceptions
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.utils import estimator_checks
from sklearn.utils.validation import check_is_fitted

from edueval.kt import AFM, BKT, PFA, NotFittedError, random_params, simulate


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    """3 skills x 30 students x 8 opportunities, an item column for the variants."""
    params = random_params(3, np.random.default_rng(7))
    data = simulate(params, n_students=30, n_opportunities=8, seed=11).drop(columns="known")
    data["item"] = np.where(data["order"] % 2 == 0, "even", "odd")
    return data


def _estimators() -> list[BaseEstimator]:
    return [
        BKT(n_restarts=2, seed=1),
        BKT(n_restarts=2, seed=1, multigs="item"),
        AFM(penalty=0.5),
        PFA(penalty=0.1),
    ]


IDS = ["bkt", "bkt-multigs", "afm", "pfa"]


@pytest.mark.parametrize("est", _estimators(), ids=IDS)
def test_is_a_base_estimator_with_get_set_params_and_clone(est):
    assert isinstance(est, BaseEstimator)
    params = est.get_params()
    copy = clone(est)
    assert copy is not est and type(copy) is type(est)
    assert copy.get_params() == params
    # parameters are stored unchanged, and set_params round-trips (no validation in __init__)
    name = "n_restarts" if isinstance(est, BKT) else "penalty"
    assert est.set_params(**{name: 3}) is est
    assert est.get_params()[name] == 3
    assert clone(est).get_params()[name] == 3
    est.set_params(**{name: params[name]})
    assert est.get_params() == params
    tags = est.__sklearn_tags__()
    assert tags.target_tags.required is False and tags.input_tags.string is True


def test_init_stores_parameters_as_given():
    """Bad values are kept by __init__ (scikit-learn's convention) and refused by fit."""
    assert BKT(guess_max=2.0, tol=-1).get_params()["guess_max"] == 2.0
    assert AFM(penalty=-1).penalty == -1


def test_clone_of_a_fitted_model_is_unfitted(df):
    fitted = BKT(n_restarts=1, seed=1).fit(df)
    with pytest.raises(NotFittedError):
        clone(fitted).predict(df)


@pytest.mark.parametrize(
    ("est", "grid"),
    [
        (BKT(n_restarts=1, seed=1), {"forgets": [False, True]}),
        (AFM(), {"penalty": [0.5, 2.0]}),
        (PFA(), {"penalty": [0.0, 1.0]}),
    ],
    ids=["bkt", "afm", "pfa"],
)
def test_grid_search_with_group_kfold_over_students(df, est, grid):
    search = GridSearchCV(est, grid, cv=GroupKFold(n_splits=3))
    search.fit(df, groups=df["student"])
    ((name, values),) = grid.items()
    assert search.best_params_[name] in values
    assert len(search.cv_results_["mean_test_score"]) == len(values)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    # refit on all the data: the best estimator is fitted and scores like a fresh fit
    fresh = clone(est).set_params(**search.best_params_).fit(df)
    assert search.best_estimator_.score(df) == pytest.approx(fresh.score(df), rel=1e-12)


@pytest.mark.parametrize("est", _estimators(), ids=IDS)
def test_score_is_the_mean_log_likelihood_of_the_predictions(df, est):
    model = clone(est).fit(df, None)  # y is accepted and ignored
    p = model.predict(df)["p_correct"].to_numpy()
    y = df["correct"].to_numpy()
    expected = np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    assert model.score(df) == pytest.approx(expected, rel=1e-10)
    assert model.score(df, df["correct"]) == model.score(df)
    assert model.log_likelihood(df) == pytest.approx(expected * len(df), rel=1e-10)


@pytest.mark.parametrize("est", _estimators(), ids=IDS)
def test_not_fitted_error_is_scikit_learns(df, est):
    assert issubclass(NotFittedError, sklearn.exceptions.NotFittedError)
    assert issubclass(NotFittedError, RuntimeError)  # what these models raised before
    for method in ("predict", "score", "predict_proba"):
        try:
            getattr(est, method)(df)
        except sklearn.exceptions.NotFittedError as exc:
            assert "not fitted" in str(exc)
        else:
            pytest.fail(f"{method} before fit did not raise")
    with pytest.raises(sklearn.exceptions.NotFittedError):
        check_is_fitted(est)
    check_is_fitted(clone(est).fit(df))


@pytest.mark.parametrize(
    ("est", "message"),
    [
        (BKT(guess_max=2.0), r"^guess_max= must be in \(0, 1\], got 2.0$"),
        (BKT(slip_max=0), r"^slip_max= must be in \(0, 1\], got 0$"),
        (BKT(tol=-1), r"^tol= must be in \(0, 1\], got -1$"),
        (BKT(max_iter=0), r"^max_iter= must be >= 1, got 0$"),
        (BKT(n_restarts=0), r"^n_restarts= must be >= 1, got 0$"),
        (BKT(n_restarts=2.5), r"^n_restarts= must be an integer, got 2.5$"),
        (BKT(forgets="yes"), r"^forgets= must be True or False, got 'yes'$"),
        (BKT(seed=1.5), r"^seed= must be an integer, got 1.5$"),
        (
            BKT(multigs="tmpl"),
            r"^responses DataFrame: unknown column 'tmpl' for multigs=: the response data has",
        ),
        (BKT(multilearn="item", multipair="item"), r"^multilearn= and multipair= both set"),
        (AFM(penalty=-1), r"^penalty= must be >= 0, got -1$"),
        (AFM(nonnegative_slopes="no"), r"^nonnegative_slopes= must be True or False"),
        (PFA(penalty=float("nan")), r"^penalty= must be a finite number, got nan$"),
    ],
)
def test_bad_parameters_are_refused_at_fit_with_a_value_error(df, est, message):
    with pytest.raises(ValueError, match=message):
        est.fit(df)
    assert not hasattr(est, "params_")


# -- scikit-learn's common checks --------------------------------------------------------------
#: Checks of sklearn.utils.estimator_checks that need no fit on arrays: they hold as they are.
#: The others fit numpy arrays (make_blobs...), which these estimators do not take (X is a long
#: response table); their DataFrame counterparts are below.
HOLDING = (
    "check_estimator_cloneable",
    "check_estimator_repr",
    "check_estimator_tags_renamed",
    "check_valid_tag_types",
    "check_mixin_order",
    "check_parameters_default_constructible",
    "check_no_attributes_set_in_init",
    "check_get_params_invariance",
    "check_set_params",
    "check_do_not_raise_errors_in_init_or_set_params",
    "check_estimators_unfitted",
)


@pytest.mark.parametrize("check", HOLDING)
@pytest.mark.parametrize("est", _estimators(), ids=IDS)
def test_sklearn_common_checks_that_apply(est, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        getattr(estimator_checks, check)(type(est).__name__, est)


@pytest.mark.parametrize("est", _estimators(), ids=IDS)
def test_fit_keeps_parameters_and_adds_only_trailing_underscore_attributes(df, est):
    """check_estimators_overwrite_params and check_dont_overwrite_parameters on a DataFrame."""
    est = clone(est)
    before_params = {k: joblib.hash(v) for k, v in est.get_params().items()}
    before_attrs = set(vars(est))
    est.fit(df)
    assert {k: joblib.hash(v) for k, v in est.get_params().items()} == before_params
    added = set(vars(est)) - before_attrs
    assert added and all(a.endswith("_") and not a.startswith("_") for a in added), added


@pytest.mark.parametrize("est", _estimators(), ids=IDS)
def test_fit_is_idempotent_and_survives_pickling(df, est):
    """check_fit_idempotent and check_estimators_pickle on a DataFrame."""
    import pickle

    model = clone(est).fit(df)
    first = model.predict(df)["p_correct"].to_numpy()
    np.testing.assert_array_equal(model.fit(df).predict(df)["p_correct"].to_numpy(), first)
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict(df)["p_correct"].to_numpy(), first)


#: The checks of check_estimator that a table-based estimator cannot meet: each fits or predicts
#: a numpy array without column names, which BKT refuses (docs/protocols/p1-kt.md lists them).
UNMEETABLE = {
    "check_complex_data", "check_dict_unchanged", "check_dont_overwrite_parameters",
    "check_dtype_object", "check_estimators_dtypes", "check_estimators_empty_data_messages",
    "check_estimators_fit_returns_self", "check_estimators_nan_inf",
    "check_estimators_overwrite_params", "check_estimators_pickle",
    "check_f_contiguous_array_estimator", "check_fit2d_1feature", "check_fit2d_1sample",
    "check_fit2d_predict1d", "check_fit_check_is_fitted", "check_fit_idempotent",
    "check_fit_score_takes_y", "check_methods_sample_order_invariance",
    "check_methods_subset_invariance", "check_n_features_in", "check_n_features_in_after_fitting",
    "check_pipeline_consistency", "check_positive_only_tag_during_fit",
    "check_readonly_memmap_input",
}  # fmt: skip


def test_check_estimator_fails_only_where_a_table_is_needed():
    """scikit-learn's check_estimator on BKT: the failures are exactly UNMEETABLE, each on the
    one refusal of an array without column names (a ValueError, never an error from inside)."""
    from edueval.io import InputError
    from edueval.kt import BKT

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = estimator_checks.check_estimator(BKT(n_restarts=1, max_iter=5), on_fail=None)
    failed = [r for r in results if r["status"] == "failed"]
    assert {r["check_name"] for r in failed} == UNMEETABLE
    for r in failed:
        exc = r["exception"]
        exc = exc if isinstance(exc, InputError) else exc.__cause__
        assert isinstance(exc, InputError) and "named columns" in str(exc), (r["check_name"], exc)
