"""Roster: online updates equal the batch forward filter to 1e-12 (with and without
forgetting, rows shuffled); its API; the replay command; saving and loading a model."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from edueval.io import InputError
from edueval.kt import BKT, forward, random_params, simulate
from edueval.kt.models.roster import Roster, load_model, replay, save_model
from edueval.seeding import rng


@pytest.mark.parametrize("forget", [None, (0.05, 0.3)])
def test_roster_equals_the_batch_filter(forget) -> None:
    truth = random_params(3, rng(7), forget=forget)
    df = simulate(truth, 30, 15, seed=8).sample(frac=1.0, random_state=2).reset_index(drop=True)
    batch = forward(df, truth)
    online = replay(Roster(truth), df)
    np.testing.assert_allclose(online["p_correct"], batch["p_correct"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(online["p_known"], batch["p_known"], rtol=0, atol=1e-12)


def test_roster_api_by_hand() -> None:
    params = pd.DataFrame(
        {
            "skill": ["x"],
            "prior": [0.2],
            "learn": [0.3],
            "guess": [0.25],
            "slip": [0.1],
            "forget": [0.05],
        }  # fmt: skip
    )
    r = Roster(params, threshold=0.5)
    r.add("ana")
    assert r.predict("ana", "x") == pytest.approx(0.2 * 0.9 + 0.8 * 0.25)
    assert r.mastery("ana", "x") == pytest.approx(0.2)
    post = 0.2 * 0.9 / (0.2 * 0.9 + 0.8 * 0.25)
    assert r.update("ana", "x", 1) == pytest.approx(post)
    nxt = post * 0.95 + (1 - post) * 0.3
    assert r.predict("ana", "x") == pytest.approx(nxt * 0.9 + (1 - nxt) * 0.25)
    state = r.state()
    assert state.to_dict("records")[0]["n_responses"] == 1
    assert bool(state["mastered"].iloc[0]) == (post >= 0.5)
    with pytest.raises(InputError, match="unknown student"):
        r.update("bob", "x", 1)
    with pytest.raises(InputError, match="no parameters for skill"):
        r.update("ana", "y", 1)
    with pytest.raises(InputError, match="already"):
        r.add("ana")


def test_save_and_load_round_trip(tmp_path) -> None:
    truth = random_params(2, rng(3), forget=(0.0, 0.1))
    df = simulate(truth, 40, 10, seed=4)
    model = BKT(forgets=True, n_restarts=2, seed=5).fit(df)
    save_model(model, tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    assert meta["options"]["forgets"] is True and meta["skills"] == list(model.params_.index)
    loaded = load_model(tmp_path / "m")
    pd.testing.assert_frame_equal(loaded.params_, model.params_, check_exact=False, rtol=1e-15)
    a, b = loaded.predict(df), model.predict(df)
    np.testing.assert_allclose(a["p_known"], b["p_known"], rtol=0, atol=1e-12)
    assert loaded.score(df) == pytest.approx(model.score(df), abs=1e-9)
    assert loaded.n_params_ == model.n_params_ == 10


def test_roster_command_replays_a_log(tmp_path, cli) -> None:
    truth = random_params(2, rng(1), forget=(0.0, 0.2))
    df = simulate(truth, 20, 6, seed=2).sample(frac=1.0, random_state=0)
    df.to_csv(tmp_path / "log.csv", index=False)
    truth.reset_index().to_csv(tmp_path / "params.csv", index=False)
    res = cli("kt", "roster", tmp_path / "params.csv", "--updates", tmp_path / "log.csv",
              "--out", tmp_path / "r")  # fmt: skip
    assert res.code == 0, res.err
    got = pd.read_csv(tmp_path / "r" / "updates.csv")
    ref = forward(df, truth).reset_index(drop=True)
    np.testing.assert_allclose(got["p_known"], ref["p_known"], rtol=0, atol=1e-12)
    state = pd.read_csv(tmp_path / "r" / "state.csv")
    assert len(state) == 40 and (state["n_responses"] == 6).all()
    assert json.loads((tmp_path / "r" / "results.json").read_text())["n_updates"] == len(df)
