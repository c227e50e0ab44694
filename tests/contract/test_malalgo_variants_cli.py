"""``malalgo generate --variants`` (issue 34): items whose options are the answers of four
question variants; one line and exit 2 when combined with another mode or when no variant family
is asked for."""

from __future__ import annotations

import json

import pandas as pd

from edueval.misconceptions.library import VARIANT_FAMILIES


def test_generate_variants_writes_variant_items(edueval, tmp_path) -> None:
    made = edueval("malalgo", "generate", "--n", "10", "--seed", "3", "--variants", "--out", "q")
    assert made.code == 0, made
    items = pd.read_csv(tmp_path / "q" / "questions.csv", keep_default_na=False)
    assert len(items) == 10 and set(items["family"]) == set(VARIANT_FAMILIES)
    config = json.loads((tmp_path / "q" / "config.json").read_text())
    assert config["params"]["adversarial"] == "variants"


def test_generate_variants_refuses_what_it_cannot_do(edueval) -> None:
    both = edueval("malalgo", "generate", "--n", "4", "--variants", "--hub", "--out", "a")
    assert both.code == 2 and len(both.err_lines) == 1 and "--variants" in both.err, both
    none = edueval("malalgo", "generate", "--n", "4", "--variants", "--content", "Data Analysis",
                   "--out", "b")  # fmt: skip
    assert none.code == 2 and len(none.err_lines) == 1 and "variant items exist" in none.err, none
