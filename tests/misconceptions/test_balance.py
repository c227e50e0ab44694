"""The distractor balancing of ``generate_items`` (issue 18): valid candidate sets, the imbalance
vector worked by hand, and the key's value and length ranks balanced - where choosing at random
among the same candidates is not."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from edueval.misconceptions import (
    FAMILIES,
    LETTERS,
    balance,
    build_problem,
    correct_answer,
    generate_items,
    rationale,
    rule_answer,
)
from edueval.misconceptions.values import parse_value

N = 360  # 20 items per family


def test_table_lists_exactly_the_valid_sets():
    p = build_problem("order_of_operations", {"a": 20, "b": 3, "c": 4, "d": 5, "template": 0})
    rules, trios, raw = balance.table(p)
    key = correct_answer(p)
    wrong = [r for r in FAMILIES[p.family].rules if rule_answer(p, r) not in (None, key)]
    assert sorted(rules) == sorted(wrong)  # 5 rules, all err on 20 − 3 × 4 + 5
    assert len(trios) == 10  # C(5, 3): answers and rationales all differ here
    for k, trio in enumerate(trios):
        names = [rules[i] for i in trio]
        answers = [key] + [rule_answer(p, r) for r in names]
        assert len(set(answers)) == 4
        assert len({rationale(p)} | {rationale(p, r) for r in names}) == 4
        # raw column 0 is the value, row 0 the key
        assert raw[k, 0, 0] == float(parse_value(key, "int"))
        assert [raw[k, i + 1, 0] for i in range(3)] == [float(a) for a in answers[1:]]
        assert raw[k, 0, 4] == len(rationale(p))


def test_imbalance_worked_by_hand():
    # one candidate: values 10 (key), 5, 20, 40; rationales of 50, 40, 60, 60 characters
    raw = np.zeros((1, 4, 8))
    raw[0, :, 0] = [10, 5, 20, 40]
    raw[0, :, 1] = [2, 1, 2, 2]  # choice lengths
    raw[0, :, 4] = [50, 40, 60, 60]
    raw[0, :, 5] = [10, 8, 12, 12]
    delta = balance.imbalance(raw)[0] * np.array([s for _, s in balance.FEATURES])
    names = [n for n, _ in balance.FEATURES]
    got = dict(zip(names, delta, strict=True))
    # the key is the 2nd smallest value: one-hot (0, 1, 0, 0) minus 1/4
    assert [got[f"value rank={r}"] for r in "1234"] == pytest.approx([-0.25, 0.75, -0.25, -0.25])
    # 2nd shortest rationale; the two longest tie but the key is not among them
    assert [got[f"rationale characters rank={r}"] for r in "1234"] == pytest.approx(
        [-0.25, 0.75, -0.25, -0.25]
    )
    # choice length 2 ties with two others at ranks 2-4: a third of each, minus 1/4
    assert [got[f"choice length rank={r}"] for r in "1234"] == pytest.approx(
        [-0.25, 1 / 3 - 0.25, 1 / 3 - 0.25, 1 / 3 - 0.25]
    )
    mag = np.log10(1 + np.array([10, 5, 20, 40]))
    assert got["magnitude"] == pytest.approx(mag[0] - mag.mean())
    assert got["rationale characters"] == pytest.approx(
        np.log(51) - np.log([51, 41, 61, 61]).mean()
    )


def _key_ranks(items: pd.DataFrame) -> pd.DataFrame:
    """The key's rank among the four values and among the four rationales' lengths (ties at
    random), computed from the items themselves."""
    rng = np.random.default_rng(0)
    out = []
    for row in items.to_dict(orient="records"):
        kind = FAMILIES[row["family"]].kind
        values = np.array([float(parse_value(row[f"choice_{x}"], kind)) for x in LETTERS])
        lengths = np.array([len(row[f"rationale_{x}"]) for x in LETTERS], dtype=float)
        k = LETTERS.index(row["answer"])
        tie = rng.random(4)
        out.append(
            {
                "value": 1 + int((values < values[k]).sum()),
                "length": 1 + int(np.lexsort((tie, lengths)).tolist().index(k)),
            }
        )
    return pd.DataFrame(out)


@pytest.fixture(scope="module")
def balanced():
    return _key_ranks(generate_items(N, seed=31))


def test_key_ranks_are_balanced(balanced):
    for col in ("value", "length"):
        shares = balanced[col].value_counts(normalize=True).reindex([1, 2, 3, 4], fill_value=0)
        assert (shares - 0.25).abs().max() < 0.05, (col, shares.to_dict())


def test_random_choice_among_the_same_candidates_is_not_balanced(monkeypatch):
    """Without the balancer the cues come back (so the test above can fail)."""

    def at_random(self, family, deltas, rng):
        return int(rng.integers(len(deltas)))

    monkeypatch.setattr(balance.Balancer, "choose", at_random)
    ranks = _key_ranks(generate_items(N, seed=31))
    middle = ranks["value"].isin([2, 3]).mean()
    assert middle > 0.6, middle  # the key sits between the distractors
