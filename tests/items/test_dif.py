"""Issue 36, point 4: DIF.  Mantel-Haenszel against statsmodels' StratifiedTable built here
stratum by stratum; planted DIF found; the false-flag rate without DIF at the nominal level by
simulation (Rasch data, where the total score is sufficient and MH is valid)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.contingency_tables import StratifiedTable

from edueval.io import InputError
from edueval.items.dif import dif, ets_category, logistic_dif, mantel_haenszel


def _rasch(rng, n, k, *, impact=0.5, shift=None, focal_share=0.4):
    g = (rng.random(n) < focal_share).astype(np.int8)
    theta = rng.normal(size=n) - impact * g
    b = np.linspace(-1.5, 1.5, k)
    shift = np.zeros(k) if shift is None else shift
    logit = theta[:, None] - b - shift * g[:, None]
    return (rng.random((n, k)) < 1 / (1 + np.exp(-logit))).astype(float), g


@pytest.fixture(scope="module")
def planted():
    rng = np.random.default_rng(11)
    shift = np.zeros(12)
    shift[3], shift[8] = 1.0, -0.8  # item 4 harder, item 9 easier for the focal group
    x, g = _rasch(rng, 1500, 12, shift=shift)
    x[rng.random(x.shape) < 0.03] = np.nan  # some items not administered
    scores = pd.DataFrame(x, columns=[f"q{i + 1}" for i in range(12)],
                          index=pd.Index([f"s{i}" for i in range(len(x))], name="student"))  # fmt: skip
    return scores, pd.Series(np.where(g == 1, "F", "R"), index=scores.index)


def test_mh_equals_statsmodels_stratified_table(planted):
    scores, group = planted
    res = dif(scores, group, focal="F", methods=["mh"]).items
    x = scores.to_numpy()
    focal = (group == "F").to_numpy()
    total = np.nansum(x, axis=1)
    for j in range(x.shape[1]):
        tables = []
        for t in np.unique(total):
            m = (total == t) & ~np.isnan(x[:, j])
            ref, foc = m & ~focal, m & focal
            if ref.any() and foc.any():
                tables.append([[(x[ref, j] == 1).sum(), (x[ref, j] == 0).sum()],
                               [(x[foc, j] == 1).sum(), (x[foc, j] == 0).sum()]])  # fmt: skip
        st = StratifiedTable(np.array(tables, dtype=float).transpose(1, 2, 0))
        test = st.test_null_odds(correction=True)
        row = res.iloc[j]
        assert row["alpha_MH"] == pytest.approx(st.oddsratio_pooled, abs=1e-9)
        assert row["MH_D_DIF"] == pytest.approx(-2.35 * np.log(st.oddsratio_pooled), abs=1e-9)
        assert row["SE_D"] == pytest.approx(2.35 * st.logodds_pooled_se, abs=1e-9)
        assert row["MH_chi2"] == pytest.approx(test.statistic, abs=1e-9)
        assert row["p_MH"] == pytest.approx(test.pvalue, abs=1e-9)


def test_planted_dif_is_found(planted):
    scores, group = planted
    res = dif(scores, group)
    t = res.items.set_index("item")
    assert res.focal == "F" and res.reference == "R"  # the smaller group is focal
    assert t.loc["q4", "MH_D_DIF"] < -1 and t.loc["q4", "favours"] == "reference"
    assert t.loc["q9", "MH_D_DIF"] > 1 and t.loc["q9", "favours"] == "focal"
    for item in ("q4", "q9"):
        assert t.loc[item, "ETS"] in ("B", "C") and t.loc[item, "p_dif_holm"] < 0.01
        assert t.loc[item, "p_uniform_holm"] < 0.01
    assert set(res.flagged) == {"q4", "q9"}
    assert "flagged: q4, q9" in res.summary()
    # a group Series indexed by student is aligned by id, not by position
    shuffled = group.sample(frac=1.0, random_state=1)
    again = dif(scores, shuffled, methods=["mh"]).items
    pd.testing.assert_series_equal(again["MH_D_DIF"], res.items["MH_D_DIF"])


def test_false_flag_rate_without_dif_is_nominal():
    """No DIF, a 0.5 SD impact: MH (continuity-corrected, hence slightly conservative) rejects
    about 5% of items at 5%; LR (2 df) too.  3000 MH tests (SE 0.004), 240 LR tests."""
    rng = np.random.default_rng(5)
    p = np.array([mantel_haenszel(*_rasch(rng, 400, 10, focal_share=0.5))["p_MH"]
                  for _ in range(300)])  # fmt: skip
    assert 0.025 <= (p < 0.05).mean() <= 0.06, (p < 0.05).mean()
    assert (p < 0.01).mean() <= 0.015
    lr = np.concatenate([logistic_dif(*_rasch(rng, 300, 8, focal_share=0.5))["p_dif"]
                         for _ in range(30)])  # fmt: skip
    assert 0.01 <= (lr < 0.05).mean() <= 0.10, (lr < 0.05).mean()


def test_ets_rules():
    assert ets_category(-0.9, 0.001, 0.1) == "A"  # |D| < 1
    assert ets_category(-2.0, 0.2, 0.1) == "A"  # not significant
    assert ets_category(-1.2, 0.001, 0.1) == "B"
    assert ets_category(1.6, 0.001, 0.5) == "B"  # |D| >= 1.5 but not significantly > 1
    assert ets_category(1.6, 0.001, 0.3) == "C"  # (1.6 - 1)/0.3 = 2 > 1.645
    assert ets_category(float("nan"), 0.5, 0.1) == ""


def test_groups_are_checked():
    scores = pd.DataFrame({"a": [1.0, 0, 1, 0], "b": [0.0, 1, 1, 0]})
    with pytest.raises(InputError, match="two groups"):
        dif(scores, ["x"] * 4)
    with pytest.raises(InputError, match="name the two"):
        dif(scores, ["x", "y", "z", "x"])
    with pytest.raises(InputError, match="no student is in group 'w'"):
        dif(scores, ["x", "y", "y", "x"], focal="w")
    res = dif(scores, ["x", "y", "z", "x"], focal="y", reference="x", methods=["mh"])
    assert (res.n_focal, res.n_reference, res.n_excluded) == (1, 2, 1)
    with pytest.raises(InputError, match="0/1 scores"):
        dif(scores.replace(1.0, 2.0), ["x", "y", "y", "x"])
