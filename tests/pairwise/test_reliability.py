"""SSR and split-half reliability: the formula on the table, and what they say on known data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from edueval.pairwise import BradleyTerry
from edueval.pairwise.reliability import (
    VAR_DDOF,
    _row_correlations,
    spearman_brown,
    split_half,
    ssr,
    ssr_table,
)

from .cj_data import cj_study


def _formula(t: pd.DataFrame) -> float:
    """SSR written out by hand from a table's estimates and SEs (sample variance, n - 1)."""
    x = t["alpha_mean"].to_numpy()
    v = ((x - x.mean()) ** 2).sum() / (len(x) - 1)
    return (v - (t["alpha_se"] ** 2).mean()) / v


@pytest.fixture(scope="module")
def two_groups():
    a, _ = cj_study(11, n_random=0)
    b, _ = cj_study(12, spread=0.0, n_random=0)  # coin flips
    b["item"] = "coin"
    return pd.concat([a, b], ignore_index=True)


def test_reported_ssr_is_the_formula_on_its_own_table(two_groups):
    res = BradleyTerry(two_groups, ties="drop", seed=2).fit_ml(split_half_repeats=4)
    assert VAR_DDOF == 1
    for item, t in res.abilities.groupby("item"):
        g = res.groups.set_index("item").loc[item]
        assert g["ssr"] == pytest.approx(_formula(t), abs=1e-12)
        assert (t["ssr"] == g["ssr"]).all()  # the abilities table carries its group's SSR
        assert g["separation"] == pytest.approx(
            np.sqrt(max(g["var_estimates"] - g["mean_se2"], 0) / g["mean_se2"])
        )
    g = res.groups.set_index("item")
    assert g.loc["essay", "ssr"] > 0.85 and g.loc["essay", "split_half"] > 0.85
    assert g.loc["coin", "ssr"] < 0.15 and g.loc["coin", "split_half"] < 0.3


def test_ssr_table_and_function_agree_and_skip_missing():
    ab = pd.DataFrame(
        {
            "g": ["a"] * 4 + ["b"] * 2,
            "alpha_mean": [1.0, -1.0, 0.5, np.nan, 0.0, 0.0],
            "alpha_se": [0.3, 0.4, 0.5, 0.2, 0.1, 0.1],
        }
    )
    t = ssr_table(ab, ["g"]).set_index("g")
    x = np.array([1.0, -1.0, 0.5])
    expect = (np.var(x, ddof=1) - np.mean([0.09, 0.16, 0.25])) / np.var(x, ddof=1)
    assert t.loc["a", "ssr"] == pytest.approx(expect)
    assert ssr(x, [0.3, 0.4, 0.5]) == pytest.approx(expect)
    assert np.isnan(t.loc["b", "ssr"])  # no variance: undefined, not 1 or 0


def test_spearman_brown_and_masked_correlations():
    assert spearman_brown(0.5) == pytest.approx(2 / 3)
    assert spearman_brown(0.5, 3) == pytest.approx(0.75)
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 6, 9))
    a[0, :3] = np.nan
    b[1, 5] = np.nan
    a[2, :7] = np.nan  # only 2 shared columns: undefined
    r = _row_correlations(a, b)
    for row in (0, 1, 3):
        ok = np.isfinite(a[row]) & np.isfinite(b[row])
        assert r[row] == pytest.approx(np.corrcoef(a[row, ok], b[row, ok])[0, 1])
    assert np.isnan(r[2])


def test_split_half_is_reproducible_and_needs_two_raters():
    df, _ = cj_study(5, n_raters=6, per_rater=80, n_random=0)
    data = df.assign(w_first=(df["outcome"] == "first") * 1.0)
    data["w_second"] = 1.0 - data["w_first"]
    a = split_half(data, ["item", "attribute"], repeats=3, seed=1, ridge=0.1)
    b = split_half(data, ["item", "attribute"], repeats=3, seed=1, ridge=0.1)
    pd.testing.assert_frame_equal(a, b)
    assert a["split_half_n"].iloc[0] == 3 and 0.7 < a["split_half"].iloc[0] < 1
    one = split_half(data[data["rater"] == "r00"], ["item", "attribute"], repeats=2, seed=1)
    assert np.isnan(one["split_half"].iloc[0]) and one["split_half_n"].iloc[0] == 0
