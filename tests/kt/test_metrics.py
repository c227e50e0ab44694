"""Metrics against scikit-learn and closed forms, to 1e-9."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

from edueval.kt import metrics as M


def data(n=500, seed=0, discrete=False):
    g = np.random.default_rng(seed)
    y = (g.random(n) < 0.6).astype(np.int8)
    p = np.clip(0.3 * y + 0.7 * g.random(n), 0.001, 0.999)
    if discrete:  # many ties, as BKT predictions have
        p = np.round(p, 1).clip(0.05, 0.95)
    return y, p


@pytest.mark.parametrize("discrete", [False, True])
def test_against_sklearn_and_closed_forms(discrete):
    y, p = data(discrete=discrete)
    hard = (p >= 0.5).astype(int)
    n, k = len(y), 4
    ll = float(np.sum(y * np.log(p) + (1 - y) * np.log(1 - p)))
    want = {
        "accuracy": skm.accuracy_score(y, hard),
        "precision": skm.precision_score(y, hard, zero_division=0),
        "recall": skm.recall_score(y, hard),
        "f1": skm.f1_score(y, hard),
        "auc": skm.roc_auc_score(y, p),
        "rmse": np.sqrt(skm.mean_squared_error(y, p)),
        "r2": 1 - np.sum((y - p) ** 2) / np.sum((y - y.mean()) ** 2),
        "loglik": -skm.log_loss(y, p, normalize=False),
        "aic": -2 * ll + 2 * k,
        "aicc": -2 * ll + 2 * k + 2 * k * (k + 1) / (n - k - 1),
        "bic": -2 * ll + k * np.log(n),
        "cbd": -np.mean(y * np.log10(p) + (1 - y) * np.log10(1 - p)),
    }
    got = M.evaluate(y, p, k=k)
    for name, value in want.items():
        assert got[name] == pytest.approx(value, rel=1e-9, abs=1e-12), name
    assert M.accuracy(y, p) == got["accuracy"]
    assert M.auc(y, p) == pytest.approx(want["auc"], abs=1e-12)
    assert M.log_likelihood(y, p) == pytest.approx(ll, rel=1e-12)
    assert M.aic(y, p) == pytest.approx(want["aic"], rel=1e-12)
    assert M.aicc(y, p) == pytest.approx(want["aicc"], rel=1e-12)
    assert M.bic(y, p) == pytest.approx(want["bic"], rel=1e-12)
    assert M.efron_r2(y, p) == pytest.approx(want["r2"], rel=1e-12)


def test_rows_equal_one_at_a_time():
    y, p0 = data(300, seed=1)
    P = np.vstack([p0, np.clip(p0[::-1], 0.01, 0.99), np.full_like(p0, 0.4)])
    table = M.evaluate(y, P)
    for i in range(3):
        single = M.evaluate(y, P[i])
        for name, value in single.items():
            assert table.loc[i, name] == pytest.approx(value, rel=1e-12, nan_ok=True)


def test_cbd_caps_predictions():
    y = np.array([1, 0])
    p = np.array([0.0, 1.0])  # both as wrong as possible: capped at 0.001 / 0.999
    assert M.capped_binomial_deviance(y, p) == pytest.approx(3.0, rel=1e-12)


def test_degenerate_cases():
    y = np.array([1, 1, 1])
    p = np.array([0.2, 0.3, 0.4])  # nothing predicted positive
    assert M.precision(y, p) == 0.0 and M.recall(y, p) == 0.0 and M.f1(y, p) == 0.0
    assert np.isnan(M.auc(y, p))  # one class only
    assert np.isnan(M.efron_r2(y, p))
    with pytest.raises(ValueError):
        M.accuracy(np.array([1, 0]), np.array([0.1, 0.2, 0.3]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 20)), min_size=2, max_size=60))
def test_auc_property_matches_sklearn(pairs):
    y = np.array([a for a, _ in pairs], dtype=np.int8)
    s = np.array([b / 20 for _, b in pairs])
    if y.min() == y.max():
        assert np.isnan(M.auc(y, s))
    else:
        assert M.auc(y, s) == pytest.approx(skm.roc_auc_score(y, s), abs=1e-12)
        # invariant to a strictly increasing transform of the scores
        assert M.auc(y, s**3 + 1) == pytest.approx(M.auc(y, s), abs=1e-12)


def test_log_likelihood_clips_a_contradicted_certainty_and_counts_it():
    """p_known = 1 for a student who does not know: -inf before, now clipped and counted."""
    from edueval.kt.metrics import LL_CLIP, evaluate, log_likelihood

    y = np.array([0, 1, 1, 0])
    p = np.array([1.0, 0.8, 1.0, 0.3])
    want = np.log(LL_CLIP) + np.log(0.8) + np.log(1 - LL_CLIP) + np.log(0.7)
    assert log_likelihood(y, p) == pytest.approx(want)
    out = evaluate(y, p)
    assert np.isfinite(out["loglik"]) and out["n_clipped"] == 1


def test_auc_treats_floating_point_noise_as_a_tie():
    from edueval.kt.metrics import auc

    p = 0.1 + 0.2  # 0.30000000000000004
    assert auc(np.array([1, 0]), np.array([p, 0.3])) == 0.5
    assert auc(np.array([1, 0]), np.array([0.3 + 1e-9, 0.3])) == 1.0
