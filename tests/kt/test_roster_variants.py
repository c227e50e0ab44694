"""Roster and save/load for BKT variants: online updates equal the batch prediction of the same
fitted variant to 1e-12 (rows shuffled), a saved variant loads back with the same predictions,
and a missing group value is one clear error."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from edueval.io import InputError
from edueval.kt import BKT, Roster, load_model, random_params, save_model
from edueval.kt.bkt.simulate_items import draw_item_params, simulate_items
from edueval.kt.models.roster import replay
from edueval.seeding import rng

VARIANTS = {
    "multigs": {"multigs": "item"},
    "multigs-forgets": {"multigs": "item", "forgets": True},
    "multilearn": {"multilearn": "item"},
    "multipair-forgets": {"multipair": "item", "forgets": True},
    "multiprior": {"multiprior": True},
    "multiprior-multigs": {"multiprior": True, "multigs": "item"},
    "multiprior-col": {"multiprior": "klass"},
    "fixed": {"fixed": pd.DataFrame({"parameter": ["guess"], "value": [0.2]})},
}


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    truth = random_params(2, rng(5), forget=(0.0, 0.1))
    ip = draw_item_params(truth, 3, rng(6), item_learn=True)
    df = simulate_items(ip, 60, 8, seed=7)
    df["klass"] = np.where(df["student"].str[-1].astype(int) % 2 == 0, "a", "b")
    return df


@pytest.fixture(scope="module")
def fitted(data) -> dict[str, BKT]:
    return {name: BKT(n_restarts=2, seed=1, **kw).fit(data) for name, kw in VARIANTS.items()}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_roster_equals_the_batch_prediction(name, data, fitted) -> None:
    model = fitted[name]
    assert "parameter" in model.params_.columns  # a variant's long table
    shuffled = data.sample(frac=1.0, random_state=3).reset_index(drop=True)
    batch = model.predict(shuffled)
    online = replay(Roster(model.params_), shuffled)
    np.testing.assert_allclose(online["p_correct"], batch["p_correct"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(online["p_known"], batch["p_known"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_save_and_load_a_variant(name, data, fitted, tmp_path) -> None:
    model = fitted[name]
    save_model(model, tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    assert meta["params_format"] == "long"
    loaded = load_model(tmp_path / "m")
    a, b = loaded.predict(data), model.predict(data)
    np.testing.assert_array_equal(a["p_correct"], b["p_correct"])
    np.testing.assert_array_equal(a["p_known"], b["p_known"])
    assert loaded.n_params_ == model.n_params_
    assert loaded.score(data) == model.score(data)


def test_first_response_class_prior_does_not_depend_on_other_students(fitted, data) -> None:
    """The first response's P(correct) mixes the classes of the parameter table, whatever
    classes the predicted rows hold (one student alone gets the same number)."""
    model = fitted["multiprior"]
    one = data[(data["student"] == "s00") & (data["skill"] == data["skill"].iloc[0])]
    alone = model.predict(one)["p_correct"].iloc[0]
    together = model.predict(data).loc[one.index[0], "p_correct"]
    assert alone == together


def test_missing_group_value_is_one_clear_error(fitted) -> None:
    roster = Roster(fitted["multigs"].params_)
    roster.add("ana")
    skill = str(fitted["multigs"].params_["skill"].iloc[0])
    with pytest.raises(InputError, match="pass item=VALUE"):
        roster.update("ana", skill, 1)
    assert 0 < roster.update("ana", skill, 1, item=f"{skill}-1") < 1
    assert 0 < roster.predict("ana", skill, item="an item never seen") < 1  # the skill's mean
