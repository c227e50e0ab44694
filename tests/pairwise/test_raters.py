"""The rater check flags raters who always pick one position, and only rarely honest ones."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from edueval.pairwise import RaterModel

AGENTS = ("Teacher", "GPT", "Blender")
ATTRS = ("teacher", "understand", "help")


def simulate_raters(n_raters=30, n_items=15, seed=0) -> pd.DataFrame:
    """Honest raters judge by the item's abilities; rater 'first' always picks option A and
    rater 'second' always picks option B."""
    rng = np.random.default_rng(seed)
    n_pool = 40
    ability = rng.normal(size=(n_pool, len(ATTRS), len(AGENTS)))
    names = ["first", "second"] + [f"honest{r:02d}" for r in range(n_raters - 2)]
    rows = []
    for rater in names:
        for item in rng.choice(n_pool, size=n_items, replace=False):
            i, j = rng.choice(len(AGENTS), size=2, replace=False)
            for a, attr in enumerate(ATTRS):
                if rater == "first":
                    out = "first"
                elif rater == "second":
                    out = "second"
                else:
                    p = expit(ability[item, a, i] - ability[item, a, j])
                    out = "first" if rng.random() < p else "second"
                rows.append((f"item{item}", attr, rater, AGENTS[i], AGENTS[j], out))
    return pd.DataFrame(rows, columns=["item", "attribute", "rater", "first", "second", "outcome"])


@pytest.fixture(scope="module")
def rater_fit():
    df = simulate_raters()
    return RaterModel(df, per="attribute", ties="drop", seed=3).fit(chains=4, warmup=400, draws=600)


def test_position_biased_raters_are_flagged(rater_fit):
    r = rater_fit.raters.set_index("rater")
    assert r.loc["first", "flagged"] and r.loc["first", "alpha0_hdi_low"] > 0
    assert r.loc["second", "flagged"] and r.loc["second", "alpha0_hdi_high"] < 0
    assert r.loc["first", "n_flagged"] == 3 and r.loc["second", "n_flagged"] == 3
    assert r.loc["first", "pct_first"] == 100 and r.loc["second", "pct_first"] == 0
    honest = r[r.index.str.startswith("honest")]
    # each honest rater has 3 models whose true alpha0 is 0: a few false flags at most
    assert honest["flagged"].sum() <= 3, honest[honest["flagged"]]
    # ArviZ's rank-normalised R-hat (since issue 20) is stricter than numpyro's split R-hat (which
    # gave <= 1.01 here): over 360 parameters of 4 x 600 draws the largest is 1.0125
    fit = rater_fit.fit
    assert fit.max_rhat <= 1.02 and fit.n_rhat_above <= 10, (fit.max_rhat, fit.n_rhat_above)


def test_raters_get_infit_and_outfit(rater_fit):
    """Each rater's infit/outfit under the per-(item, attribute) model (numbers: test_misfit);
    position bias is the order effect's job (alpha0 absorbs it), not infit's."""
    r = rater_fit.raters.set_index("rater")
    assert {"infit", "infit_t", "outfit", "outfit_t", "misfit"} <= set(r.columns)
    assert r["infit"].notna().all() and (r["infit"] > 0).all()
    assert (
        rater_fit.misfitting
        == r[r["infit_t"] > 2].sort_values("infit", ascending=False).index.tolist()
    )
    assert "worst infit" in rater_fit.summary()
    tidy = rater_fit.to_frame()
    assert {"infit", "outfit", "misfit"} <= set(tidy["measure"])


def test_overlap_with_a_reference_list(rater_fit):
    ov = rater_fit.overlap(["first", "honest00", "ghost"])
    assert ov["both"] == ["first"]
    assert ov["not_in_data"] == ["ghost"]
    assert "second" in ov["flagged_only"]
    assert "honest00" in ov["reference_only"] or "honest00" in ov["both"]
    assert "flagged" in rater_fit.summary()


def test_per_rater_pooling_also_flags():
    df = simulate_raters(n_raters=8, seed=1)
    res = RaterModel(df, per="rater", ties="drop", seed=2).fit(chains=2, warmup=300, draws=300)
    r = res.raters.set_index("rater")
    assert r.loc["first", "flagged"] and r.loc["second", "flagged"]
    assert (r["n_groups"] == 1).all()
