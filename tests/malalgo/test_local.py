"""P3 with the embedded model (SmolLM2, offline): every answer parses in both scoring modes."""

from __future__ import annotations

import pytest

from edueval.malalgo.pipeline import run_malalgo
from edueval.misconceptions import generate_items
from edueval.models import get_model


@pytest.mark.slow
@pytest.mark.parametrize("scoring", ["generate", "logprob"])
def test_local_model_zero_unparseable(tmp_path, scoring):
    path = tmp_path / "q.csv"
    generate_items(4, seed=2).to_csv(path, index=False)

    def opener(log_path):
        return get_model("local", cache_dir=tmp_path / "cache", log_path=log_path)

    res = run_malalgo(
        tmp_path / "run", path, open_model=opener, model_name="local", scoring=scoring
    )
    assert res["n_prompts"] == 20
    assert res["n_unparseable"] == 0 and res["n_failed"] == 0
    assert res["n_logprob_fallback"] == 0
    assert 0.0 <= res["mia"]["accuracy"] <= 1.0
