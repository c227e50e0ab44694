"""``kt simulate --params`` reads every parameter file edueval writes (issue 39): the wide one and
the long one of per-item parameters, from ``kt simulate --items-per-skill`` and from ``kt fit
--multigs/--multilearn item``; the smallest (the wide file's required columns) and the largest
(long, per-item learn and forget, the ``free`` column) are read back, and the responses follow the
file's item parameters (checked against the closed form of the first response)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from edueval.io import InputError
from edueval.kt.bkt.simulate_items import item_params_from_long, simulate_items


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
    smallest = root / "smallest.csv"
    pd.read_csv(root / "wide" / "params.csv")[["skill", "prior", "learn", "guess", "slip"]].to_csv(
        smallest, index=False
    )
    return {"smallest": smallest, "simulate-items": root / "items" / "params.csv",
            "fit-items": root / "fit" / "params.csv"}  # fmt: skip


@pytest.mark.parametrize("which", ["smallest", "simulate-items", "fit-items"])
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
    assert set(df["item"]) == {g.split("=", 1)[1] for g in source["group"] if g != "*"}
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
        ([("a", "prior", "*", 0.2), ("a", "learn", "item=x>y", 0.1),
          ("a", "learn", "item=(first)", 0.1), ("a", "guess", "*", 0.1),
          ("a", "slip", "*", 0.1)], "pairs"),
        ([("a", "prior", "*", 0.2), ("a", "learn", "hint=1", 0.1), ("a", "learn", "hint=0", 0.1),
          ("a", "guess", "item=x", 0.1), ("a", "slip", "item=x", 0.1)], "one grouping column"),
        ([("a", "prior", "*", 0.2), ("a", "learn", "item=y", 0.1), ("a", "forget", "item=y", 0.0),
          ("a", "guess", "item=x", 0.1), ("a", "slip", "item=x", 0.1)], "no 'learn' for item=x"),
    ],
    ids=["multiprior", "multipair", "two-columns", "item-without-learn"],
)  # fmt: skip
def test_a_file_kt_simulate_cannot_draw_is_one_line(cli, tmp_path, rows, says):
    with pytest.raises(InputError, match=says):
        item_params_from_long(_long(rows))
    path = tmp_path / "params.csv"
    _long(rows).to_csv(path, index=False)
    res = cli("kt", "simulate", "--params", path, "--students", "3", "--out", tmp_path / "o")
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1, res.err
    assert not (tmp_path / "o" / "responses.csv").exists()
