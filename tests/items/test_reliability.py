"""Issue 36, point 2: Cronbach's alpha, KR-20, alpha if item deleted, SEM and the odd-even split
half against their formulas computed independently here; Feldt's interval by simulation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from edueval.items.reliability import reliability


def _rasch(n: int, k: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    theta, b = rng.normal(size=n), np.linspace(-1.5, 1.5, k)
    x = (rng.random((n, k)) < 1 / (1 + np.exp(-(theta[:, None] - b)))).astype(float)
    return pd.DataFrame(x, columns=[f"q{i + 1}" for i in range(k)])


def _alpha(x: np.ndarray) -> float:
    k = x.shape[1]
    return k / (k - 1) * (1 - x.var(axis=0, ddof=1).sum() / x.sum(axis=1).var(ddof=1))


def test_alpha_kr20_deleted_sem_split_half_equal_their_formulas():
    df = _rasch(250, 9, 3)
    x = df.to_numpy()
    res = reliability(df)
    k = x.shape[1]
    p = x.mean(axis=0)
    kr20 = k / (k - 1) * (1 - (p * (1 - p)).sum() / x.sum(axis=1).var(ddof=0))
    assert res.alpha == pytest.approx(_alpha(x), abs=1e-9)
    assert res.kr20 == pytest.approx(kr20, abs=1e-9)
    assert res.alpha == pytest.approx(kr20, abs=1e-9)
    deleted = [_alpha(np.delete(x, i, axis=1)) for i in range(k)]
    np.testing.assert_allclose(res.items["alpha_if_deleted"], deleted, atol=1e-9, rtol=0)
    sd = x.sum(axis=1).std(ddof=1)
    assert res.sem == pytest.approx(sd * np.sqrt(1 - _alpha(x)), abs=1e-9)
    odd, even = x[:, 0::2].sum(axis=1), x[:, 1::2].sum(axis=1)
    r = np.corrcoef(odd, even)[0, 1]
    assert res.split_half_r == pytest.approx(r, abs=1e-9)
    assert res.spearman_brown == pytest.approx(2 * r / (1 + r), abs=1e-9)
    assert res.dichotomous and res.n_used == 250 and res.n_items == k


def test_polytomous_and_missing_responses():
    rng = np.random.default_rng(5)
    x = np.clip(np.round(rng.normal(2, 1, (120, 1)) + rng.normal(0, 1, (120, 6))), 0, 4)
    assert reliability(pd.DataFrame(x)).alpha == pytest.approx(_alpha(x), abs=1e-9)
    assert np.isnan(reliability(pd.DataFrame(x)).kr20)  # KR-20 is for 0/1 items
    holes = x.copy()
    holes[rng.random(x.shape) < 0.1] = np.nan
    df = pd.DataFrame(holes)
    # available cases: pandas' pairwise covariance
    cov = df.cov().to_numpy()
    k = cov.shape[0]
    expected = k / (k - 1) * (1 - np.trace(cov) / cov.sum())
    res = reliability(df)
    assert res.alpha == pytest.approx(expected, abs=1e-9)
    assert res.n_used == 120
    # complete cases: the formula on the rows without a blank
    full = holes[~np.isnan(holes).any(axis=1)]
    res = reliability(df, missing="complete")
    assert res.alpha == pytest.approx(_alpha(full), abs=1e-9) and res.n_used == len(full)
    with pytest.raises(ValueError, match="missing="):
        reliability(df, missing="listwise")


def test_feldt_interval_covers_95_percent():
    """Under the model Feldt's interval is exact for (persons x items, normal errors): coverage
    0.95 +- 0.02 over 2000 samples of 40 students x 8 items (true alpha 8/(8+4) = 2/3)."""
    rng = np.random.default_rng(2024)
    reps, n, k = 2000, 40, 8
    x = rng.normal(0, 1, (reps, n, 1)) + rng.normal(0, 2, (reps, n, k))
    true = k / (k + 4)
    hits, below = 0, 0
    for sample in x:
        res = reliability(pd.DataFrame(sample))
        hits += res.alpha_low <= true <= res.alpha_high
        below += true < res.alpha_low
    assert abs(hits / reps - 0.95) <= 0.02, hits / reps
    assert 0.01 <= below / reps <= 0.04  # both tails, not one
