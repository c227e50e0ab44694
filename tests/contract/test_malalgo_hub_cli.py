"""``malalgo generate --hub`` (issue 34): hub items from the families written as steps; one line
and exit 2 when combined with ``--adversarial`` or when no such family is asked for."""

from __future__ import annotations

import json

import pandas as pd

from edueval.misconceptions.compose import STEPS


def test_generate_hub_writes_hub_items(edueval, tmp_path) -> None:
    made = edueval("malalgo", "generate", "--n", "8", "--seed", "3", "--hub", "--out", "q")
    assert made.code == 0, made
    items = pd.read_csv(tmp_path / "q" / "questions.csv", keep_default_na=False)
    assert len(items) == 8 and set(items["family"]) <= set(STEPS)
    labels = items[[f"malrule_{x}" for x in "ABCD"]].to_numpy().ravel()
    assert any("+" in str(v) for v in labels)  # two-flaw malgorithms appear
    config = json.loads((tmp_path / "q" / "config.json").read_text())
    assert config["params"]["adversarial"] == "hub"


def test_generate_hub_refuses_what_it_cannot_do(edueval) -> None:
    both = edueval("malalgo", "generate", "--n", "4", "--hub", "--adversarial", "--out", "a")
    assert both.code == 2 and len(both.err_lines) == 1 and "--hub" in both.err, both
    none = edueval("malalgo", "generate", "--n", "4", "--hub", "--content", "Data Analysis",
                   "--out", "b")  # fmt: skip
    assert none.code == 2 and len(none.err_lines) == 1 and "hub items exist for" in none.err, none
