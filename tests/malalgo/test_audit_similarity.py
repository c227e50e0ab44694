"""``malalgo audit``'s similarity cues, tree ensemble and per-family tables (issue 34): on a
hand-built bank whose key's rationale is always the one the others are one edit from, the
most-central rule and the trees pick the key (~1.0) and the key's value rank is flagged as
non-uniform; on a bank where the "hub" rationale is a random option, both stay near chance."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from edueval.malalgo.audit import audit_key_cues
from edueval.malalgo.data import normalise_questions

N = 160
WORDS = ("add", "carry", "shift", "borrow", "align", "regroup", "halve", "double")


def _bank(hub_is_key: bool, seed: int) -> pd.DataFrame:
    """Each question: a base rationale of five words (the hub) and three others, each the hub
    with a different word replaced; the hub is the key (``hub_is_key``) or a random option.
    Values: the key always the smallest when ``hub_is_key``, at a random rank otherwise."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(N):
        base = [WORDS[int(k)] for k in rng.permutation(len(WORDS))[:5]]
        texts = [" ".join(base)]
        for slot in rng.permutation(5)[:3]:
            other = list(base)
            other[int(slot)] = f"x{rng.integers(100, 999)}y"
            texts.append(" ".join(other))
        key_idx = 0 if hub_is_key else int(rng.integers(4))
        order = rng.permutation(4)
        vals = sorted(int(v) for v in rng.choice(np.arange(1, 200), 4, replace=False))
        if not hub_is_key:
            vals = [vals[int(k)] for k in rng.permutation(4)]
        row = {"id": f"q{i:03d}", "question": "How much?", "family": f"fam{i % 2}"}
        letters = "ABCD"
        for pos, src in enumerate(order):
            row[f"rationale_{letters[pos]}"] = texts[int(src)]
            row[f"choice_{letters[pos]}"] = str(vals[int(src)])
            if int(src) == key_idx:
                row["answer"] = letters[pos]
        rows.append(row)
    return normalise_questions(pd.DataFrame(rows))


@pytest.fixture(scope="module")
def central():
    return audit_key_cues(_bank(True, seed=1), folds=4, seed=2)


@pytest.fixture(scope="module")
def balanced():
    return audit_key_cues(_bank(False, seed=3), folds=4, seed=2)


def _share(res, name: str) -> float:
    rows = pd.concat([res.cues, res.models]).set_index("cue")
    return float(rows.loc[name, "share"])


def test_a_central_key_is_found(central):
    assert _share(central, "most central rationale (character similarity)") > 0.97
    assert _share(central, "least central rationale (character similarity)") < 0.03
    assert _share(central, "tree ensemble: all") > 0.95
    assert "most central rationale (character similarity)" in central.flagged
    learned = central.learned.set_index(["reader", "family"])
    for fam in ("all", "fam0", "fam1"):
        row = learned.loc[("most central rationale (character similarity)", fam)]
        assert row["share"] > 0.97 and row["ci_low"] > 0.9
    ranks = central.value_rank.set_index("family")
    assert ranks.loc["all", "rank 1"] == N
    assert not ranks.loc["fam0", "uniform"] and not ranks.loc["fam1", "uniform"]
    assert central.as_dict()["value_rank_uniform_in_every_family"] is False


def test_a_balanced_bank_shows_no_similarity_cue(balanced):
    for name in (
        "most central rationale (character similarity)",
        "tree ensemble: all",
        "tree ensemble: choices",
    ):
        assert abs(_share(balanced, name) - 0.25) < 0.12, name
    assert "most central rationale (character similarity)" not in balanced.flagged
    ranks = balanced.value_rank.set_index("family")
    assert ranks.loc[["fam0", "fam1"], "uniform"].all()
    assert balanced.as_dict()["value_rank_uniform_in_every_family"] is True


def test_wilson_interval_of_a_family_row(central):
    from statsmodels.stats.proportion import proportion_confint

    row = central.learned.set_index(["reader", "family"]).loc[("tree ensemble: choices", "fam0")]
    lo, hi = proportion_confint(row["key_picked"], row["n"], method="wilson")
    assert row["ci_low"] == pytest.approx(lo) and row["ci_high"] == pytest.approx(hi)
