"""Infit/outfit against a hand computation, and random raters standing out."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from edueval.pairwise import BradleyTerry
from edueval.pairwise.misfit import expected_first, fit_statistics, object_fit, rater_fit
from edueval.pairwise.ml import fit_ml_design

from .cj_data import cj_study


def test_mean_squares_and_wilson_hilferty_by_hand():
    p = np.array([0.9, 0.7, 0.4, 0.2, 0.6])
    y = np.array([1.0, 0.0, 1.0, 0.0, 0.5])  # the last a tie counted half
    data = pd.DataFrame(
        {
            "rater": ["a", "a", "a", "b", "b"],
            "first": ["x", "y", "x", "z", "y"],
            "second": ["y", "z", "z", "x", "x"],
            "w_first": y,
            "w_second": 1 - y,
        }
    )
    t = rater_fit(data, p).set_index("rater")
    for r, rows in (("a", [0, 1, 2]), ("b", [3, 4])):
        pr, yr = p[rows], y[rows]
        w = pr * (1 - pr)
        c = pr * (1 - pr) ** 4 + (1 - pr) * pr**4
        infit = ((yr - pr) ** 2).sum() / w.sum()
        outfit = np.mean((yr - pr) ** 2 / w)
        q_in = np.sqrt((c - w**2).sum() / w.sum() ** 2)
        q_out = np.sqrt((c / w**2).sum() / len(rows) ** 2 - 1 / len(rows))
        assert t.loc[r, "infit"] == pytest.approx(infit)
        assert t.loc[r, "outfit"] == pytest.approx(outfit)
        assert t.loc[r, "infit_t"] == pytest.approx((infit ** (1 / 3) - 1) * 3 / q_in + q_in / 3)
        assert t.loc[r, "outfit_t"] == pytest.approx(
            (outfit ** (1 / 3) - 1) * 3 / q_out + q_out / 3
        )
    # objects: each judgement counts for both of its objects
    o = object_fit(data.assign(g="one"), p, ["g"]).set_index("agent")
    assert o.loc["x", "n_judgements"] == 4 and o.loc["y", "n_judgements"] == 3
    rows = [0, 2, 3, 4]
    w = p[rows] * (1 - p[rows])
    assert o.loc["x", "infit"] == pytest.approx(((y[rows] - p[rows]) ** 2).sum() / w.sum())


def test_mean_square_near_one_when_the_model_is_true():
    """Judgements drawn from the model's own probabilities: mean squares near 1, t near 0."""
    rng = np.random.default_rng(4)
    p = rng.uniform(0.1, 0.9, 40_000)
    y = (rng.random(p.size) < p).astype(float)
    comp = pd.DataFrame({"r2": (y - p) ** 2, "z2": (y - p) ** 2 / (p * (1 - p))})
    comp["w"] = p * (1 - p)
    comp["c"] = p * (1 - p) ** 4 + (1 - p) * p**4
    comp["who"] = np.arange(p.size) % 200
    t = fit_statistics(comp, ["who"])
    assert abs(t["infit"].mean() - 1) < 0.01 and abs(t["outfit"].mean() - 1) < 0.02
    # the standardised infit is close to N(0, 1) under the model
    assert abs(t["infit_t"].mean()) < 0.2 and 0.8 < t["infit_t"].std() < 1.2
    assert t["misfit"].mean() < 0.06


def test_random_raters_rank_worst_on_infit():
    """The benchmark's study (30 objects, 20 raters x 60 judgements, 2 answering at random), 20
    times: the random raters are the two worst infits in at least 19 (benchmark: 200 studies)."""
    hits = 0
    for seed in range(20):
        df, _ = cj_study(seed)
        model = BradleyTerry(df, ties="drop", seed=seed)
        est = fit_ml_design(model.design)
        raters = rater_fit(model.data, expected_first(model.data, model.design, est.alpha,
                                                      est.alpha0))  # fmt: skip
        hits += set(raters["rater"].head(2)) == {"r00", "r01"}
        assert list(raters["infit"]) == sorted(raters["infit"], reverse=True)
    assert hits >= 19, hits
