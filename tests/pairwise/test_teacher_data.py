"""On the public AI Teacher Test data (outliers removed, ties dropped): our NUTS posterior means
agree with an independent computation, and every R-hat is at most 1.01."""

from __future__ import annotations

import numpy as np
import pytest

from edueval.pairwise import BradleyTerry, exclude_raters, import_teacher_test, read_rater_ids
from edueval.pairwise.teacher_test import bundled_folder

from .reference import posterior_mean_is


@pytest.mark.slow
def test_public_data_posterior_means_match_independent_computation():
    df = import_teacher_test(bundled_folder() / "items.jsonl")
    kept, _, _ = exclude_raters(df, read_rater_ids(bundled_folder() / "outliers.yaml"))
    res = BradleyTerry(kept, ties="drop", seed=1).fit()  # the defaults: 4 x (1000 + 1000)
    assert len(res.groups) == 147 and int(res.groups["n_comparisons"].sum()) == 4782 - 252
    assert res.max_rhat <= 1.01, res.max_rhat
    assert res.n_divergent == 0
    agents = list(res.design.agents)
    k = len(agents)
    decided = kept[kept["outcome"] != "tie"]
    ab = res.abilities.set_index(["item", "attribute", "agent"])["alpha_mean"]
    deltas = []
    for (item, attr), sub in decided.groupby(["item", "attribute"]):
        w1 = (sub["outcome"] == "first").to_numpy(float)
        mean, ess = posterior_mean_is(
            sub["first"].map(agents.index).to_numpy(),
            sub["second"].map(agents.index).to_numpy(),
            w1,
            1 - w1,
            k,
            n=20_000,
            seed=len(deltas),
        )
        assert ess > 2_000
        deltas += [ab[(item, attr, a)] - mean[q] for q, a in enumerate(agents)]
    deltas = np.abs(np.asarray(deltas))
    assert len(deltas) == 441
    assert deltas.mean() <= 0.03, deltas.mean()
