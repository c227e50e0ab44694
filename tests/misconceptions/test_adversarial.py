"""The adversarial filter of generated items (issue 34): it removes a planted cue, it is
reproducible by seed, target ranks are dealt evenly, and the balanced selection makes the key's
value rank uniform within every family."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from edueval.misconceptions import adversarial, targets
from edueval.misconceptions.key_cues import (
    CHOICE_GROUP,
    RATIONALE_GROUP,
    centrality,
    char_similarity,
    trigram_similarity,
)


def _planted(n: int, share: float, seed: int) -> tuple[dict, dict, np.ndarray, np.ndarray]:
    """Noise features, plus one where the key stands out (+2) in ``share`` of the questions."""
    rng = np.random.default_rng(seed)
    key = rng.integers(0, 4, n)
    cue = rng.normal(size=(n, 4))
    planted = rng.random(n) < share
    cue[np.flatnonzero(planted), key[planted]] += 2.0
    feats = {"cue": cue, "noise": rng.normal(size=(n, 4)), "noise2": rng.normal(size=(n, 4))}
    groups = {CHOICE_GROUP: ["cue", "noise"], RATIONALE_GROUP: ["noise2"]}
    return feats, groups, key, rng.integers(0, 3, n)


def _cue_accuracy(feats: dict, key: np.ndarray, keep: np.ndarray) -> float:
    return float((feats["cue"][keep].argmax(axis=1) == key[keep]).mean())


@pytest.fixture(scope="module")
def planted():
    feats, groups, key, fam = _planted(400, 0.6, seed=3)
    return feats, groups, key, fam, adversarial.aflite(feats, groups, key, fam, seed=5)


def test_filter_removes_a_planted_cue(planted):
    feats, _, key, _, res = planted
    before = _cue_accuracy(feats, key, np.ones(len(key), dtype=bool))
    after = _cue_accuracy(feats, key, res.keep)
    assert before > 0.55
    assert after < 0.4, (before, after)
    assert res.keep.sum() < len(key)
    hist = res.history
    first, last = hist[hist["round"] == 0], hist[hist["round"] == hist["round"].max()]
    assert first["accuracy"].max() > 0.55
    assert last["accuracy"].max() < first["accuracy"].max() - 0.2


def test_filter_keeps_a_balanced_bank():
    """Without a cue the models stay near chance and (almost) nothing is dropped."""
    feats, groups, key, fam = _planted(400, 0.0, seed=8)
    res = adversarial.aflite(feats, groups, key, fam, seed=1)
    assert res.keep.mean() > 0.9
    assert res.history.loc[res.history["round"] == 0, "accuracy"].max() < 0.33


def test_filter_is_reproducible_by_seed(planted):
    feats, groups, key, fam, res = planted
    again = adversarial.aflite(feats, groups, key, fam, seed=5)
    assert np.array_equal(res.keep, again.keep)
    pd.testing.assert_frame_equal(res.history, again.history)
    other = adversarial.aflite(feats, groups, key, fam, seed=6)
    assert not np.array_equal(res.keep, other.keep)


def test_floor_limits_the_drop(planted):
    feats, groups, key, fam, _ = planted
    res = adversarial.aflite(feats, groups, key, fam, seed=5, floor=380)
    assert res.keep.sum() >= 380


def test_targets_are_dealt_in_blocks_of_four():
    dealt = targets.deal(np.random.default_rng(0), 40)
    for b in range(10):
        block = dealt[4 * b : 4 * b + 4]
        assert sorted(v for v, _ in block) == [1, 2, 3, 4]
        assert sorted(c for _, c in block) == [1, 2, 3, 4]


def _bank(ranks: list[int], fams: list[str]) -> pd.DataFrame:
    rows = []
    for i, (r, f) in enumerate(zip(ranks, fams, strict=True)):
        vals = [10, 20, 30, 40]
        rows.append({"id": f"q{i}", "question": "?", "family": f, "answer": "ABCD"[r - 1],
                     **{f"choice_{x}": str(v) for x, v in zip("ABCD", vals, strict=True)},
                     **{f"rationale_{x}": x for x in "ABCD"}})  # fmt: skip
    return pd.DataFrame(rows)


def test_balanced_selection_makes_every_rank_equally_common():
    rng = np.random.default_rng(2)
    fams = [["f1", "f2", "f3"][int(k)] for k in rng.integers(0, 3, 600)]
    ranks = [int(k) for k in rng.choice([1, 2, 3, 4], 600, p=[0.1, 0.4, 0.4, 0.1])]
    bank = _bank(ranks, fams)
    assert list(adversarial.key_value_rank(bank)) == ranks
    chosen = adversarial.select_balanced(bank, np.ones(600, dtype=bool), 120, seed=1)
    assert chosen is not None and len(chosen) == 120 and len(set(chosen)) == 120
    sel = bank.iloc[chosen].assign(rank=np.array(ranks)[chosen])
    counts = pd.crosstab(sel["family"], sel["rank"])
    assert (counts.max(axis=1) - counts.min(axis=1)).max() <= 1, counts
    # too few of the rare ranks: no balanced set of 500
    assert adversarial.select_balanced(bank, np.ones(600, dtype=bool), 500, seed=1) is None


def test_similarities_match_hand_computation():
    assert char_similarity("abcd", "abce") == pytest.approx(0.75)  # 2·3 / 8
    # 3-grams of "  ab " and "  ac ": {"  a", " ab", "ab "} vs {"  a", " ac", "ac "}
    assert trigram_similarity("ab", "ac") == pytest.approx(1 / 5)
    base = "add the tens carry the one shift the row"
    c = centrality([[base, base.replace("add", "zzz"), base.replace("carry", "qqqqq"),
                     base.replace("row", "xyz")]])  # fmt: skip
    assert c[0].argmax() == 0  # the one the others are one edit from
