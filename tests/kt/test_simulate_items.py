"""kt simulate --items-per-skill: the item-level generative model (KT-IDEM) recovered by
``BKT(multigs="item")``; its long parameter file read back by kt predict and kt roster; kt
compare ranks bkt-multigs first on it; bad options exit 2."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from edueval.kt import BKT, draw_item_params, item_params_long, simulate_items
from edueval.kt.bkt.variants import forward_long
from edueval.seeding import rng

TRUTH = pd.DataFrame(
    {"prior": [0.3, 0.5], "learn": [0.15, 0.25], "guess": [0.2, 0.25], "slip": [0.15, 0.1],
     "forget": [0.0, 0.0]},
    index=pd.Index(["add", "sub"], name="skill"),
)  # fmt: skip


def _errors(fitted: pd.DataFrame, truth: pd.DataFrame) -> pd.Series:
    keys = ["skill", "parameter", "group"]
    both = truth.merge(fitted[[*keys, "value"]], on=keys, suffixes=("_true", "_fit"))
    assert len(both) == len(truth[truth["group"] != "*"]) + len(truth[truth["group"] == "*"])
    both["error"] = (both["value_fit"] - both["value_true"]).abs()
    return both.groupby("parameter")["error"].median()


def test_fit_recovers_item_guess_and_slip() -> None:
    ip = draw_item_params(TRUTH, 4, rng(1), spread=0.15)
    assert ip.guess.std() > 0.03 and (ip.guess < 0.5).all() and (ip.slip < 0.5).all()
    df = simulate_items(ip, 2000, 30, seed=2)
    truth = item_params_long(ip)
    model = BKT(multigs="item", n_restarts=3, seed=1).fit(df)
    err = _errors(model.params_, truth[truth["parameter"] != "forget"])
    assert (err[["guess", "slip", "prior", "learn"]] <= 0.03).all(), err


def test_items_and_true_parameters_line_up() -> None:
    ip = draw_item_params(TRUTH, 3, rng(4), item_learn=True)
    df = simulate_items(ip, 50, 6, seed=5)
    assert set(df["item"]) == {f"{s}-{j}" for s in ("add", "sub") for j in (1, 2, 3)}
    assert (df["item"].str.split("-").str[0] == df["skill"]).all()
    truth = item_params_long(ip)
    learn = truth[truth["parameter"] == "learn"]
    assert len(learn) == 6 and learn["group"].str.startswith("item=").all()
    # the generated correctness follows the item's guess: unknown responses on each item
    big = simulate_items(ip, 4000, 2, seed=6)
    unknown = big[big["known"] == 0].groupby("item")["correct"].mean()
    guess = truth[truth["parameter"] == "guess"].set_index("group")["value"]
    np.testing.assert_allclose(unknown.to_numpy(), guess.loc["item=" + unknown.index].to_numpy(),
                               atol=0.03)  # fmt: skip


def test_simulate_items_through_the_cli(tmp_path, cli) -> None:
    sim = tmp_path / "sim"
    res = cli("kt", "simulate", "--students", 300, "--skills", 2, "--opportunities", 12,
              "--items-per-skill", 3, "--item-spread", 0.2, "--seed", 3, "--out", sim)  # fmt: skip
    assert res.code == 0, res.err
    df = pd.read_csv(sim / "responses.csv")
    params = pd.read_csv(sim / "params.csv")
    assert list(df.columns) == ["student", "skill", "item", "order", "correct", "known"]
    assert set(params["group"]) - {"*"} == {f"item={i}" for i in df["item"].unique()}
    res = cli("kt", "predict", sim / "responses.csv", "--params", sim / "params.csv",
              "--out", tmp_path / "pred")  # fmt: skip
    assert res.code == 0, res.err
    pred = pd.read_csv(tmp_path / "pred" / "predictions.csv")
    ref = forward_long(df, params.astype({"skill": str, "group": str}))
    np.testing.assert_allclose(pred["p_known"], ref["p_known"], rtol=0, atol=1e-12)
    res = cli("kt", "roster", sim / "params.csv", "--updates", sim / "responses.csv",
              "--out", tmp_path / "roster")  # fmt: skip
    assert res.code == 0, res.err
    online = pd.read_csv(tmp_path / "roster" / "updates.csv")
    np.testing.assert_allclose(online["p_known"], ref["p_known"], rtol=0, atol=1e-12)
    res = cli("kt", "compare", sim / "responses.csv", "--models", "bkt,bkt-multigs:item,afm,pfa",
              "--folds", 3, "--restarts", 2, "--out", tmp_path / "cmp")  # fmt: skip
    assert res.code == 0, res.err
    results = json.loads((tmp_path / "cmp" / "results.json").read_text())
    assert results["best_by_heldout_loglik"] == "bkt-multigs:item"


@pytest.mark.parametrize(
    "options, message",
    [
        (["--items-per-skill", "-1"], "'--items-per-skill'"),  # Click's range error
        (["--item-learn"], "--item-learn needs --items-per-skill"),
        (["--items-per-skill", "2", "--item-spread", "0.7"], "'--item-spread'"),
    ],
)
def test_bad_item_options_exit_2(tmp_path, cli, options, message) -> None:
    res = cli("kt", "simulate", "--students", 5, "--skills", 1, *options, "--out", tmp_path / "s")
    assert res.code == 2 and message in res.err
