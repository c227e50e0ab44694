"""Files shaped like real tutor logs (ASSISTments 2009 skill-builder export).

Such files are latin-1, carry many more columns than BKT needs, have rows without a skill and
scaffolding rows (``original = 0``) that pyBKT drops on its own.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from edueval.kt import BKT, random_params, simulate
from edueval.seeding import rng


@pytest.fixture(scope="module")
def log_frame() -> pd.DataFrame:
    truth = random_params(3, rng(5))
    sim = simulate(truth, 60, 12, seed=6)
    gen = rng(7)
    n = len(sim)
    df = pd.DataFrame(
        {
            "order_id": gen.permutation(n) + 20_000_000,
            "assignment_id": gen.integers(1000, 1100, n),
            "user_id": sim["student"].str[1:].astype(int) + 70_000,
            "original": (gen.random(n) < 0.8).astype(int),
            "correct": sim["correct"],
            "skill_id": sim["skill"].str[-1].astype(int) + 10,
            "skill_name": sim["skill"].map(
                {"skill0": "Équation solving", "skill1": "Box and Whisker", "skill2": "Área"}
            ),
            "answer_text": np.where(gen.random(n) < 0.5, "3·5 = 15 ½", "peça"),
        }
    )
    # keep each sequence's order: order_id must increase along the simulated opportunities
    seq = sim["skill"] + "|" + sim["student"]
    df["order_id"] = (
        df.assign(_seq=seq, _t=sim["order"])
        .sort_values(["_seq", "_t"])
        .assign(_o=np.sort(df["order_id"].to_numpy()))
        .sort_index()["_o"]
    )
    no_skill = gen.random(n) < 0.05
    df.loc[no_skill, "skill_name"] = np.nan
    df.loc[no_skill, "skill_id"] = np.nan
    return df.sample(frac=1.0, random_state=3).reset_index(drop=True)


@pytest.fixture
def log_file(tmp_path, log_frame):
    path = tmp_path / "skill_builder_data.csv"
    log_frame.to_csv(path, index=False, encoding="latin-1")
    return path


def test_latin1_file_is_refused_as_utf8_with_a_hint(cli, log_file, tmp_path):
    res = cli("kt", "fit", log_file, "--out", tmp_path / "out")
    assert res.code == 2
    assert len(res.err_lines) == 1
    assert "not UTF-8 text" in res.err and "latin-1" in res.err


def test_empty_skill_cells_name_the_line_and_the_option(cli, log_file, log_frame, tmp_path):
    res = cli("kt", "fit", log_file, "--encoding", "latin-1", "--out", tmp_path / "out")
    assert res.code == 2
    assert len(res.err_lines) == 1
    first = int(np.flatnonzero(log_frame["skill_name"].isna().to_numpy())[0])
    n_missing = int(log_frame["skill_name"].isna().sum())
    assert f"line {first + 2}" in res.err
    assert f"{n_missing} rows have none" in res.err and "--skip-no-skill" in res.err


def test_selected_rows_fit_like_the_same_rows_in_memory(cli, log_file, log_frame, tmp_path):
    out = tmp_path / "fit"
    res = cli(
        "kt", "fit", log_file, "--encoding", "latin-1", "--skip-no-skill", "--only", "original=1",
        "--seed", 3, "--out", out,
    )  # fmt: skip
    assert res.code == 0, res.err
    assert "original != 1" not in res.err  # the selection is explicit: no note
    keep = log_frame[(log_frame["original"] == 1) & log_frame["skill_name"].notna()]
    expected = BKT(seed=3).fit(keep).params_
    got = pd.read_csv(out / "params.csv").set_index("skill")
    assert list(got.index) == sorted(keep["skill_name"].unique())
    cols = ["prior", "learn", "guess", "slip"]
    np.testing.assert_allclose(got.loc[expected.index, cols], expected[cols], rtol=0, atol=1e-12)
    results = json.loads((out / "results.json").read_text())
    assert results["n_responses"] == len(keep)
    assert results["rows_left_out"] == {
        "original=1": int((log_frame["original"] != 1).sum()),
        "no_skill": int(((log_frame["original"] == 1) & log_frame["skill_name"].isna()).sum()),
    }
    config = json.loads((out / "config.json").read_text())["params"]
    assert (config["encoding"], config["only"], config["skip_no_skill"]) == (
        "latin-1",
        ["original=1"],
        True,
    )


def test_original_column_is_noted_when_not_selected(cli, log_file, log_frame, tmp_path):
    out = tmp_path / "fit"
    res = cli("kt", "fit", log_file, "--encoding", "latin-1", "--skip-no-skill", "--out", out)
    assert res.code == 0, res.err
    n_other = int((log_frame.dropna(subset=["skill_name"])["original"] != 1).sum())
    assert f"{n_other} rows have original != 1" in res.err
    assert "--only original=1" in res.err


def test_predict_and_evaluate_take_the_same_selection(cli, log_file, tmp_path):
    fit_out, pred_out, ev_out = tmp_path / "fit", tmp_path / "pred", tmp_path / "ev"
    sel = ["--encoding", "latin-1", "--skip-no-skill", "--only", "original=1"]
    assert cli("kt", "fit", log_file, *sel, "--out", fit_out).code == 0
    res = cli(
        "kt", "predict", log_file, "--params", fit_out / "params.csv", *sel, "--out", pred_out
    )
    assert res.code == 0, res.err
    pred = pd.read_csv(pred_out / "predictions.csv")
    assert (pred["original"] == 1).all() and pred["skill_name"].notna().all()
    assert pred["p_correct"].between(0, 1).all()
    res = cli("kt", "evaluate", pred_out / "predictions.csv", "--out", ev_out)
    assert res.code == 0, res.err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--only", "original"], "--only expects COLUMN=VALUE"),
        (["--only", "=1"], "--only expects COLUMN=VALUE"),
        (["--only", "no_such_column=1"], "no_such_column"),
        (["--only", "original=7"], "no rows left after the row selection"),
        (["--encoding", "klingon"], "unknown text encoding 'klingon'"),
    ],
)
def test_bad_selection_is_one_line(cli, log_file, tmp_path, args, message):
    res = cli("kt", "fit", log_file, "--encoding", "latin-1", "--skip-no-skill", *args,
              "--out", tmp_path / "out")  # fmt: skip
    assert res.code == 2
    assert len(res.err_lines) == 1
    assert message in res.err
