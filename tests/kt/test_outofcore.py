"""P1 on datasets (a folder or glob of Parquet/CSV files) read in partitions: the same numbers as
the in-memory path, a skill's fit independent of everything else in the file, exact pooled
metrics, large simulated logs, and one-line refusals."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from edueval.kt import BKT
from edueval.kt.bkt.model import simulate
from edueval.kt.bkt.params import random_params
from edueval.kt.metrics import evaluate
from edueval.kt.scale import outofcore as ooc
from edueval.seeding import rng

pytest.importorskip("dask.dataframe")
pytest.importorskip("pyarrow")

NAMES = ["prior", "learn", "guess", "slip", "forget"]


@pytest.fixture(scope="module")
def responses() -> pd.DataFrame:
    params = random_params(7, rng(5))
    df = simulate(params, 120, 15, seed=9)
    # uneven skills: drop a third of one skill's students
    drop = (df["skill"] == df["skill"].iloc[0]) & df["student"].isin(df["student"].unique()[:40])
    return df[~drop].reset_index(drop=True)


def _split(df: pd.DataFrame, folder, n: int, kind: str = "parquet", seed: int = 1):
    """The rows shuffled into ``n`` files of ``folder`` (no order of rows survives)."""
    folder.mkdir(parents=True, exist_ok=True)
    shuffled = df.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    for i, chunk in enumerate(np.array_split(np.arange(len(shuffled)), n)):
        part = shuffled.iloc[chunk]
        if kind == "parquet":
            part.to_parquet(folder / f"p{i}.parquet", index=False)
        else:
            part.to_csv(folder / f"p{i}.csv", index=False)
    return folder


def _same_files(a, b, *names):
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_fit_of_a_dataset_is_the_in_memory_fit_bit_for_bit(cli, tmp_path, responses):
    responses.to_csv(tmp_path / "r.csv", index=False)
    assert cli("kt", "fit", tmp_path / "r.csv", "--out", tmp_path / "mem").code == 0
    data = _split(responses, tmp_path / "ds", 3)
    res = cli("kt", "fit", data, "--out", tmp_path / "ds-fit")
    assert res.code == 0, res.err
    _same_files(tmp_path / "mem", tmp_path / "ds-fit", "params.csv", "restarts.csv")
    result = json.loads((tmp_path / "ds-fit" / "results.json").read_text())
    assert result["n_responses"] == len(responses) and result["partitions"]["n"] >= 2
    # a quoted glob of CSV files, rows in another order
    _split(responses, tmp_path / "csvs", 4, kind="csv", seed=2)
    res = cli("kt", "fit", str(tmp_path / "csvs" / "p*.csv"), "--out", tmp_path / "glob-fit")
    assert res.code == 0, res.err
    _same_files(tmp_path / "mem", tmp_path / "glob-fit", "params.csv", "restarts.csv")


def test_a_skills_fit_depends_on_its_rows_alone(responses):
    model = BKT(n_restarts=4, seed=3).fit(responses)
    for skill in responses["skill"].unique()[:3]:
        alone = BKT(n_restarts=4, seed=3).fit(responses[responses["skill"] == skill])
        assert alone.params_.loc[skill, NAMES].tolist() == model.params_.loc[skill, NAMES].tolist()
    shuffled = responses.sample(frac=1.0, random_state=4)
    again = BKT(n_restarts=4, seed=3).fit(shuffled)
    pd.testing.assert_frame_equal(again.params_, model.params_, check_exact=True)


def test_predict_and_evaluate_on_a_dataset_equal_the_in_memory_runs(cli, tmp_path, responses):
    responses.to_csv(tmp_path / "r.csv", index=False)
    assert cli("kt", "fit", tmp_path / "r.csv", "--out", tmp_path / "fit").code == 0
    params = tmp_path / "fit" / "params.csv"
    assert cli("kt", "predict", tmp_path / "r.csv", "--params", params, "--out",
               tmp_path / "pm").code == 0  # fmt: skip
    data = _split(responses, tmp_path / "ds", 3)
    res = cli("kt", "predict", data, "--params", params, "--out", tmp_path / "pd")
    assert res.code == 0, res.err
    assert "predictions/*.parquet" in res.err
    mem = pd.read_csv(tmp_path / "pm" / "predictions.csv", dtype={"student": str, "skill": str})
    parts = sorted((tmp_path / "pd" / "predictions").glob("part-*.parquet"))
    assert len(parts) >= 2
    big = pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
    assert len(big) == len(mem)
    skill_sets = []
    for part in parts:  # each part holds whole skills, sorted by skill, student, order
        one = pd.read_parquet(part)
        skill_sets.append(set(one["skill"]))
        key = one[["skill", "student", "order"]]
        assert key.equals(key.sort_values(["skill", "student", "order"]))
    assert sum(map(len, skill_sets)) == len(set().union(*skill_sets)) == 7
    both = big.merge(mem, on=["student", "skill", "order"], suffixes=("", "_mem"))
    assert len(both) == len(mem)
    assert (both["p_correct"] == both["p_correct_mem"]).all()
    assert (both["p_known"] == both["p_known_mem"]).all()
    res = cli("kt", "evaluate", tmp_path / "pd" / "predictions", "--out", tmp_path / "ed")
    assert res.code == 0, res.err
    assert cli("kt", "evaluate", tmp_path / "pm" / "predictions.csv", "--out",
               tmp_path / "em").code == 0  # fmt: skip
    a = pd.read_csv(tmp_path / "ed" / "metrics.csv")
    b = pd.read_csv(tmp_path / "em" / "metrics.csv")
    pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-12, atol=1e-12)
    _same_files(tmp_path / "ed", tmp_path / "em", "moment_of_learning.csv")


def test_pooled_metrics_from_partitions_are_exact():
    gen = np.random.default_rng(0)
    y = gen.integers(0, 2, 20_000)
    p = np.round(gen.beta(2, 2, 20_000), 3)  # many ties, also across partitions' borders
    p[:50] = 0.0
    p[50:80] = 1.0
    whole = evaluate(y, p, k=8)
    pieces = np.array_split(np.arange(len(y)), 5)
    sums = ooc.add_sums([ooc.metric_sums(y[i], p[i]) for i in pieces])
    cuts = ooc.value_cuts(sums["hist"], target_rows=3_000)
    assert len(cuts) >= 4
    frame = pd.DataFrame({"p_correct": p, "correct": y, "skill": "s", "student": "a"})
    part = ooc.value_part_of(frame, "p_correct", cuts, ooc.Columns(), ooc.RowFilter())
    tagged = frame.assign(_part=part)
    blocks = [tagged.iloc[i] for i in np.array_split(np.arange(len(tagged)), 4)]  # as read
    reduced = pd.concat([ooc.value_counts_block(b, "p_correct", "correct") for b in blocks])
    assert len(reduced) < len(frame) / 4  # ties collapse before the shuffle
    ranges = [ooc.auc_part(reduced[reduced["_part"] == i], i) for i in range(len(cuts) + 1)]
    from sklearn.metrics import roc_auc_score

    auc = ooc.pooled_auc(ranges)
    assert auc == pytest.approx(roc_auc_score(y, p), abs=1e-14)
    got = ooc.metrics_from_sums(sums, 8, auc)
    for name, value in whole.items():
        assert got[name] == pytest.approx(value, rel=1e-12, abs=1e-12), name


def test_plan_parts_keeps_skills_whole_and_balanced():
    counts = pd.Series({f"k{i:02d}": c for i, c in enumerate([900, 500, 400, 300, 300, 100, 50])})
    mapping, loads = ooc.plan_parts(counts, target_rows=700)
    assert set(mapping) == set(counts.index)
    assert loads.sum() == counts.sum() and len(loads) == 4
    assert loads.max() == 900  # the largest skill alone; the others packed below it
    assert all(
        loads[i] == counts[[s for s, j in mapping.items() if j == i]].sum()
        for i in range(len(loads))
    )
    one, loads1 = ooc.plan_parts(counts, target_rows=10**9, min_parts=3)
    assert len(loads1) == 3


def test_simulated_parquet_log_is_chunked_in_time_order(cli, tmp_path):
    args = ["kt", "simulate", "--format", "parquet", "--students", "50", "--skills", "4",
            "--opportunities", "6", "--rows-per-file", "300", "--seed", "3"]  # fmt: skip
    assert cli(*args, "--out", tmp_path / "a").code == 0
    files = sorted((tmp_path / "a" / "responses").glob("part-*.parquet"))
    assert len(files) == 5  # 12 students (288 rows) per file
    parts = [pd.read_parquet(f) for f in files]
    df = pd.concat(parts, ignore_index=True)
    assert len(df) == 50 * 4 * 6
    assert df.groupby(["student", "skill"]).size().eq(6).all()
    for part in parts:
        assert part["skill"].nunique() == 4  # every file holds every skill
        assert (np.diff(part["order"].to_numpy()) >= 0).all()  # rows in time order
    assert cli(*args, "--out", tmp_path / "b").code == 0
    again = pd.concat([pd.read_parquet(f) for f in sorted((tmp_path / "b" / "responses").glob(
        "*.parquet"))], ignore_index=True)  # fmt: skip
    pd.testing.assert_frame_equal(df, again)
    res = json.loads((tmp_path / "a" / "results.json").read_text())
    assert res["n_responses"] == len(df) and res["n_files"] == 5
    assert res["mean_known"] == pytest.approx(df["known"].mean())


def test_simulated_log_recovers_its_parameters(cli, tmp_path, write):
    given = write("p.csv", "skill,prior,learn,guess,slip\na,0.3,0.2,0.2,0.1\nb,0.5,0.1,0.3,0.15\n")
    args = ["kt", "simulate", "--format", "parquet", "--students", "3000", "--params", given,
            "--opportunities", "20", "--seed", "8", "--out", tmp_path / "s"]  # fmt: skip
    assert cli(*args).code == 0
    assert cli("kt", "fit", tmp_path / "s" / "responses", "--out", tmp_path / "f").code == 0
    true = pd.read_csv(tmp_path / "s" / "params.csv").set_index("skill")
    fit = pd.read_csv(tmp_path / "f" / "params.csv").set_index("skill")
    err = (fit.loc[true.index, NAMES[:4]] - true[NAMES[:4]]).abs()
    assert err.to_numpy().max() < 0.03, err


def _one_line(res, text):
    assert res.code == 2, res.err
    lines = res.err_lines
    assert len(lines) == 1 and "Traceback" not in res.err, res.err
    assert text in lines[0], lines[0]


def test_dataset_mistakes_are_one_line(cli, tmp_path, responses):
    empty = tmp_path / "empty"
    empty.mkdir()
    _one_line(cli("kt", "fit", empty, "--out", tmp_path / "o1"), "no Parquet or CSV files found")
    _one_line(cli("kt", "fit", str(tmp_path / "nothing-*.parquet"), "--out", tmp_path / "o2"),
              "no Parquet or CSV files found")  # fmt: skip
    mixed = _split(responses, tmp_path / "mixed", 2)
    responses.head(10).to_csv(mixed / "extra.csv", index=False)
    _one_line(cli("kt", "fit", mixed, "--out", tmp_path / "o3"), "all Parquet or all CSV")
    odd = _split(responses, tmp_path / "odd", 2)
    responses.rename(columns={"correct": "right"}).head(20).to_parquet(odd / "z.parquet")
    _one_line(cli("kt", "fit", odd, "--out", tmp_path / "o4"), "columns differ")
    good = _split(responses, tmp_path / "good", 2)
    _one_line(cli("kt", "fit", good, "--multigs", "item", "--out", tmp_path / "o5"),
              "fitted in memory")  # fmt: skip
    _one_line(cli("kt", "fit", good, "--encoding", "latin-1", "--out", tmp_path / "o6"),
              "read as UTF-8")  # fmt: skip
    bad = responses.copy()
    bad["correct"] = bad["correct"].astype(str)
    bad.loc[5, "correct"] = "maybe"
    _one_line(cli("kt", "fit", _split(bad, tmp_path / "bad", 2), "--out", tmp_path / "o7"),
              "expected 0 or 1")  # fmt: skip
    for o in ("o1", "o2", "o3", "o4", "o5", "o6", "o7"):
        assert not (tmp_path / o / "results.json").exists()


def test_a_dataset_without_dask_says_what_to_install(cli, tmp_path, responses, monkeypatch):
    import sys

    data = _split(responses, tmp_path / "ds", 2)
    monkeypatch.setitem(sys.modules, "dask", None)
    monkeypatch.setitem(sys.modules, "dask.dataframe", None)
    _one_line(cli("kt", "fit", data, "--out", tmp_path / "o"), 'pip install "edueval[scale]"')


@pytest.mark.parametrize(
    ("limits", "rows"),
    [([3e9, 3e9], 4_000_000), ([1e9, 3e9], 1_428_571), ([1e6], 100_000), ([0], 4_000_000)],
)
def test_partitions_shrink_to_fit_small_workers(limits, rows):
    from edueval.kt.commands.dataset_runs import _target_rows

    class Client:
        def scheduler_info(self):
            return {"workers": {i: {"memory_limit": m} for i, m in enumerate(limits)}}

    assert _target_rows(Client()) == rows
    assert _target_rows(None) == ooc.TARGET_ROWS


def test_without_an_order_column_the_rows_order_each_sequence(cli, tmp_path, responses):
    """As a file's rows do in memory: files in name order, rows as written."""
    plain = responses.drop(columns="order")
    plain.to_csv(tmp_path / "r.csv", index=False)
    folder = tmp_path / "ds"
    folder.mkdir()
    for i, chunk in enumerate(np.array_split(np.arange(len(plain)), 3)):
        plain.iloc[chunk].to_parquet(folder / f"part-{i}.parquet", index=False)
    assert cli("kt", "fit", tmp_path / "r.csv", "--out", tmp_path / "mem").code == 0
    assert cli("kt", "fit", folder, "--out", tmp_path / "ds-fit").code == 0
    _same_files(tmp_path / "mem", tmp_path / "ds-fit", "params.csv", "restarts.csv")
    params = tmp_path / "mem" / "params.csv"
    assert cli("kt", "predict", tmp_path / "r.csv", "--params", params, "--out",
               tmp_path / "pm").code == 0  # fmt: skip
    assert cli("kt", "predict", folder, "--params", params, "--out", tmp_path / "pd").code == 0
    mem = pd.read_csv(tmp_path / "pm" / "predictions.csv")
    big = pd.read_parquet(tmp_path / "pd" / "predictions").sort_values("row")
    assert big["row"].tolist() == list(range(len(plain)))  # each row's place in the dataset
    assert (big["p_correct"].to_numpy() == mem["p_correct"].to_numpy()).all()
    # a shuffled copy is another dataset: its sequences are in another order
    shuffled = _split(plain, tmp_path / "shuffled", 3)
    assert cli("kt", "fit", shuffled, "--out", tmp_path / "sh-fit").code == 0
    assert (tmp_path / "sh-fit" / "params.csv").read_bytes() != params.read_bytes()


def test_row_selection_on_a_dataset_is_the_in_memory_one(cli, tmp_path, responses):
    """--only and --skip-no-skill keep and count the same rows as for one file."""
    df = responses.copy()
    df["original"] = np.where(np.arange(len(df)) % 7 == 0, 0, 1)
    df.loc[df.index % 11 == 0, "skill"] = None
    df.to_csv(tmp_path / "r.csv", index=False)
    data = _split(df, tmp_path / "ds", 3)
    sel = ["--only", "original=1", "--skip-no-skill"]
    assert cli("kt", "fit", tmp_path / "r.csv", *sel, "--out", tmp_path / "mem").code == 0
    res = cli("kt", "fit", data, *sel, "--out", tmp_path / "ds-fit")
    assert res.code == 0, res.err
    _same_files(tmp_path / "mem", tmp_path / "ds-fit", "params.csv", "restarts.csv")
    a = json.loads((tmp_path / "mem" / "results.json").read_text())["rows_left_out"]
    b = json.loads((tmp_path / "ds-fit" / "results.json").read_text())["rows_left_out"]
    assert a == b and a["original=1"] > 0 and a["no_skill"] > 0
    _one_line(
        cli("kt", "fit", data, "--out", tmp_path / "o"), "expected a skill, got an empty cell"
    )
