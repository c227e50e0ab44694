"""``kt simulate --params`` reads every parameter file edueval writes (issue 39): the wide one and
the long one of per-item parameters, from ``kt simulate --items-per-skill`` and from ``kt fit
--multigs/--multilearn/--multipair item``; the smallest (the wide file's required columns) and
the largest (long, per-item learn and forget or learning per pair of items, the ``free`` column)
are read back, and the responses follow the
file's item parameters (checked against the closed form of the first response)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from edueval.io import InputError
from edueval.kt.bkt.simulate_items import item_params_from_long, item_params_long, simulate_items


def _ok(res) -> None:
    assert res.code == 0, res.err


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Parameter files as edueval writes them: kt simulate's wide and per-item ones, kt fit's
    per-item one with learn and forget per item and the ``free`` column."""
    from edueval.cli.main import main

    root = tmp_path_factory.mktemp("written")
    run = lambda *a: main([str(x) for x in a])  # noqa: E731
    base = ("kt", "simulate", "--students", "40", "--skills", "2", "--opportunities", "6")
    assert run(*base, "--out", root / "wide") == 0
    assert run(*base, "--items-per-skill", "3", "--item-learn", "--forget-max", "0.1",
               "--out", root / "items") == 0  # fmt: skip
    assert run("kt", "fit", root / "items" / "responses.csv", "--multigs", "item",
               "--multilearn", "item", "--forgets", "--restarts", "1", "--max-iter", "20",
               "--out", root / "fit") == 0  # fmt: skip
    assert run("kt", "fit", root / "items" / "responses.csv", "--multigs", "item",
               "--multipair", "item", "--restarts", "1", "--max-iter", "20",
               "--out", root / "pairs") == 0  # fmt: skip
    smallest = root / "smallest.csv"
    pd.read_csv(root / "wide" / "params.csv")[["skill", "prior", "learn", "guess", "slip"]].to_csv(
        smallest, index=False
    )
    return {"smallest": smallest, "simulate-items": root / "items" / "params.csv",
            "fit-items": root / "fit" / "params.csv", "fit-pairs": root / "pairs" / "params.csv"}  # fmt: skip


@pytest.mark.parametrize("which", ["smallest", "simulate-items", "fit-items", "fit-pairs"])
def test_kt_simulate_reads_the_parameter_files_edueval_writes(cli, tmp_path, written, which):
    given = written[which]
    out = tmp_path / "again"
    _ok(cli("kt", "simulate", "--params", given, "--students", "30", "--opportunities", "4",
            "--out", out))  # fmt: skip
    df = pd.read_csv(out / "responses.csv", dtype={"item": str})
    back = pd.read_csv(out / "params.csv")
    source = pd.read_csv(given)
    assert set(df["skill"]) == set(source["skill"])
    if which == "smallest":
        assert "item" not in df.columns
        assert back[["prior", "learn", "guess", "slip"]].to_numpy() == pytest.approx(
            source[["prior", "learn", "guess", "slip"]].to_numpy()
        )
        assert (back["forget"] == 0).all()
        return
    # long: the items are the file's, and the parameters written back are the file's values
    named = {g.split("=", 1)[1] for g in source["group"] if g != "*"} - {"(first)"}
    assert set(df["item"]) == {i for g in named for i in g.split(">")}
    key = ["skill", "parameter", "group"]
    merged = source.merge(back, on=key, how="outer", suffixes=("_in", "_out"), indicator=True)
    assert (merged["_merge"] == "both").all(), merged[merged["_merge"] != "both"]
    assert merged["value_out"].to_numpy() == pytest.approx(merged["value_in"].to_numpy())


def _long(rows):
    return pd.DataFrame(rows, columns=["skill", "parameter", "group", "value"])


def test_responses_follow_each_items_parameters():
    """P(correct at the first opportunity | item) = prior (1 - slip_i) + (1 - prior) guess_i;
    a skill with one item and one with three, each drawn only among its own items."""
    table = _long([("a", "prior", "*", 0.3), ("a", "learn", "*", 0.2),
                   ("a", "guess", "item=a1", 0.1), ("a", "slip", "item=a1", 0.1),
                   ("b", "prior", "*", 0.6), ("b", "learn", "*", 0.1), ("b", "forget", "*", 0.05),
                   *[("b", p, f"item=b{j}", v) for j, (g, s) in enumerate(
                       [(0.05, 0.3), (0.4, 0.05), (0.2, 0.2)]) for p, v in
                     (("guess", g), ("slip", s))]])  # fmt: skip
    ip = item_params_from_long(table)
    assert list(ip.counts) == [1, 3]
    df = simulate_items(ip, 6000, 2, seed=3)
    assert set(df.loc[df["skill"] == "a", "item"]) == {"a1"}
    assert set(df.loc[df["skill"] == "b", "item"]) == {"b0", "b1", "b2"}
    first = df[df["order"] == 1]
    params = {("a", "a1"): (0.3, 0.1, 0.1), ("b", "b0"): (0.6, 0.05, 0.3),
              ("b", "b1"): (0.6, 0.4, 0.05), ("b", "b2"): (0.6, 0.2, 0.2)}  # fmt: skip
    for (skill, item), (prior, guess, slip) in params.items():
        got = first.loc[(first["skill"] == skill) & (first["item"] == item), "correct"]
        expected = prior * (1 - slip) + (1 - prior) * guess
        se = np.sqrt(expected * (1 - expected) / len(got))
        assert abs(got.mean() - expected) < 4 * se, (skill, item, got.mean(), expected)
    assert len(first[first["skill"] == "b"]) == 6000  # every student once per skill


@pytest.mark.parametrize(
    "rows, says",
    [
        ([("a", "prior", "first_response=0", 0.2), ("a", "prior", "first_response=1", 0.8),
          ("a", "share", "first_response=0", 0.5), ("a", "learn", "*", 0.1),
          ("a", "guess", "*", 0.1), ("a", "slip", "*", 0.1)], "one prior per skill"),
        ([("a", "prior", "*", 0.2), ("a", "learn", "hint=1", 0.1), ("a", "learn", "hint=0", 0.1),
          ("a", "guess", "item=x", 0.1), ("a", "slip", "item=x", 0.1)], "one grouping column"),
    ],
    ids=["multiprior", "two-columns"],
)  # fmt: skip
def test_a_file_kt_simulate_cannot_draw_is_one_line(cli, tmp_path, rows, says):
    with pytest.raises(InputError, match=says):
        item_params_from_long(_long(rows))
    path = tmp_path / "params.csv"
    _long(rows).to_csv(path, index=False)
    res = cli("kt", "simulate", "--params", path, "--students", "3", "--out", tmp_path / "o")
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1, res.err
    assert not (tmp_path / "o" / "responses.csv").exists()


def test_learning_per_pair_of_items_and_values_the_fit_did_not_see():
    """``kt fit --multipair item``'s table: the first move learns with ``item=(first)``, a later
    one with the pair (previous item, this item).  With no guess or slip the response is the
    state, so P(known at 3 | unknown at 2, items i, j) is the pair's learn; a pair the table
    lacks (b>b) gets the mean over its pairs, as kt predict gives it."""
    learn = {"(first)": 0.5, "a>a": 0.1, "a>b": 0.9, "b>a": 0.3}
    table = _long([("s", "prior", "*", 0.0), ("s", "forget", "*", 0.0),
                   *[("s", "learn", f"item={g}", v) for g, v in learn.items()],
                   ("s", "guess", "item=a", 0.0), ("s", "guess", "item=b", 0.0),
                   ("s", "slip", "item=a", 0.0), ("s", "slip", "item=b", 0.0)])  # fmt: skip
    ip = item_params_from_long(table)
    assert list(ip.item_names()[0]) == ["a", "b"]
    assert ip.pair_given[0, 0].all() and ip.pair_given[0, 1:].sum() == 3  # (first); 3 pairs
    df = simulate_items(ip, 8000, 3, seed=5).sort_values(["student", "order"])
    wide = {c: df.pivot(index="student", columns="order", values=c) for c in ("item", "correct")}
    assert (df["correct"] == df["known"]).all()  # no guess, no slip
    assert wide["correct"][2].mean() == pytest.approx(0.5, abs=0.03)  # the (first) move
    unknown = wide["correct"][2] == 0
    for pair, expected in [*learn.items(), ("b>b", np.mean(list(learn.values())))]:
        if pair == "(first)":
            continue
        i, j = pair.split(">")
        rows = unknown & (wide["item"][1] == i) & (wide["item"][2] == j)
        got = wide["correct"][3][rows]
        se = np.sqrt(expected * (1 - expected) / len(got)) + 1e-3
        assert abs(got.mean() - expected) < 4 * se, (pair, got.mean(), expected, len(got))
    # written back: the four pairs given, not the filled one
    back = item_params_long(ip)
    assert set(back.loc[back["parameter"] == "learn", "group"]) == {f"item={g}" for g in learn}
