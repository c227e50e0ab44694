"""QG-SMS and Vanilla with the embedded model (SmolLM2, offline) on one pair, with the default
sampling (temperature 1, a seed per call): the run completes and each method makes at least one
successful judgement (a method whose every judgement fails is a bug -- a schema the model cannot
fill, or an answer cut off by max_tokens). Step 1 is held to exactly 10 profiles
(``max_profiles=10``) and Step-2 explanations to 120 characters: a grammar-constrained 135M model
fills whatever length the schema allows, and 20 students or 400-character explanations overflow
its 2048-token context in Step 2."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from edueval.items.pipeline import simulate_run
from edueval.items.simulate import ClassroomConfig
from edueval.models import get_model
from edueval.models.budget import MaxFailures
from edueval.qgsms import MethodConfig, run_qgsms


@pytest.mark.slow
def test_local_model_judges_one_pair(tmp_path):
    simulate_run(tmp_path / "room", ClassroomConfig(n_students=40, n_materials=1,
                                                    questions_per_material=4, seed=3))  # fmt: skip
    pairs = pd.read_csv(tmp_path / "room" / "pairs.csv", dtype=str)
    pairs[pairs["dimension"] == "DF"].head(1).to_csv(tmp_path / "one.csv", index=False)

    def opener(log_path):
        return get_model("local", cache_dir=tmp_path / "cache", log_path=log_path)

    res = run_qgsms(tmp_path / "run", tmp_path / "one.csv", tmp_path / "room" / "items.jsonl",
                    methods=["vanilla", "qg-sms"], open_model=opener, model_name="local",
                    cfg=MethodConfig(max_profiles=10, explanation_chars=120), limit=1, bradley_terry=False,
                    max_failures=MaxFailures(share=1.0))  # a 135M model: record, do not stop  # fmt: skip
    j = pd.read_csv(tmp_path / "run" / "judgements.csv")
    assert res["n_pairs"] == 1 and len(j) == 4  # 2 methods x 2 orders
    for m in ("vanilla", "qg-sms"):
        ok = j[(j["method"] == m) & (j["status"] == "ok")]
        assert len(ok) >= 1, (
            m,
            j[j["method"] == m][["status", "step", "error"]].to_dict("records"),
        )
    assert res["profile_sets_failed"] == 0 and res["simulations_failed"] == 0
    profiles = json.loads((tmp_path / "run" / "profiles.jsonl").read_text().splitlines()[0])
    assert len(profiles["profiles"]) == 10
