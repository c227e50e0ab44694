"""``pairwise simulate``: coin flips stay unreliable under every policy's trustworthy figure."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from edueval.pairwise.pairing import round_pairs
from edueval.pairwise.simulation import (
    SimulationConfig,
    judgements_to_reach,
    simulate,
)

COIN = SimulationConfig(spread=0.0, judgements=1200, budgets=(1200,), split_half_repeats=3)


def test_coin_flips_under_random_pairing_are_unreliable():
    """Mean over 30 studies (one study's SSR has an s.d. near 0.28 here; its expectation with
    ddof 1 is about 1 / 30)."""
    res = simulate(
        SimulationConfig(**{**COIN.__dict__, "pairings": ("random",), "replications": 30})
    )
    b = res.budgets.iloc[0]
    assert b["judgements"] == 1200 and b["true_reliability"] == 0
    assert b["ssr"] <= 0.15 and b["split_half"] <= 0.15, b


def test_adaptive_coin_flips_inflate_ssr_but_not_the_panel_split_half():
    """Adaptive pairing from all judgements (as adaptive CJ services pair) makes coin flips look
    reliable by SSR and by a split-half across judges; the split-half between two panels that
    pair independently does not (6 studies each; the benchmark runs 200)."""
    cfg = SimulationConfig(
        **{**COIN.__dict__, "pairings": ("adaptive", "adaptive-shared"), "replications": 6}
    )
    b = simulate(cfg).budgets.set_index("pairing")
    assert b.loc["adaptive-shared", "ssr"] > 0.5 and b.loc["adaptive-shared", "split_half"] > 0.5
    assert b.loc["adaptive", "split_half"] <= 0.3, b
    assert b.loc["adaptive", "trustworthy_measure"] == "split_half_panels"


def test_adaptive_round_pairs_neighbours_once_each():
    rng = np.random.default_rng(0)
    est = np.array([0.0, 5.0, 0.1, 5.1, -3.0, -3.2])
    pairs = round_pairs(6, rng, None, est, np.zeros((6, 6)))
    assert sorted(tuple(sorted(p)) for p in pairs) == [(0, 2), (1, 3), (4, 5)]
    # a pair already met is avoided unless the greedy order leaves no one else
    met = np.zeros((6, 6))
    met[0, 2] = met[2, 0] = 1
    rounds = [round_pairs(6, rng, None, est, met) for _ in range(60)]
    repeats = sum((0, 2) in [tuple(sorted(p)) for p in r] for r in rounds)
    assert repeats < 45  # without the preference it would be all 60
    assert all(sorted(x for p in r for x in p) == list(range(6)) for r in rounds)
    odd = round_pairs(5, rng, 4, est[:5], np.zeros((5, 5)))
    assert sorted(x for p in odd for x in p) == [0, 1, 2, 3]


def test_judgements_to_reach_interpolates():
    curve = pd.DataFrame({"judgements": [100, 200, 300], "true_reliability": [0.5, 0.7, 0.9]})
    assert judgements_to_reach(curve, 0.8) == pytest.approx(250)
    assert judgements_to_reach(curve, 0.95) is None
    assert judgements_to_reach(curve, 0.4) == 100


def test_bad_settings_are_refused():
    for bad in ({"n_judges": 1}, {"n_misfitting": 30}, {"spread": -1.0}, {"pairings": ("x",)}):
        with pytest.raises(ValueError):
            SimulationConfig(**bad).check()


def test_cli_simulate(cli, tmp_path):
    out = tmp_path / "sim"
    args = ["--objects", "12", "--judges", "4", "--judgements", "120", "--replications", "2"]
    res = cli("pairwise", "simulate", *args, "--budgets", "30,60,120", "--out", out)
    assert res.code == 0, res.err
    r = json.loads((out / "results.json").read_text())
    assert set(r["judgements_to_target"]) == {"random", "adaptive"}
    b = pd.read_csv(out / "budgets.csv")
    assert list(b["judgements"].unique()) == [30, 60, 120]
    assert {"true_reliability", "ssr", "split_half", "trustworthy"} <= set(b.columns)
    assert "SSR" in (out / "report.html").read_text()
    again = cli("pairwise", "simulate", *args, "--budgets", "30,60,120", "--out", tmp_path / "b")
    assert again.code == 0
    pd.testing.assert_frame_equal(b, pd.read_csv(tmp_path / "b" / "budgets.csv"))
    bad = cli("pairwise", "simulate", "--judges", "3", "--misfitting", "4", "--out", tmp_path / "c")
    assert bad.code == 2 and "misfitting" in bad.err
