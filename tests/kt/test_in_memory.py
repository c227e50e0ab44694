"""Issue 19 (1): knowledge tracing in memory -- ``kt.evaluate(predictions)`` returns a
``KTEvaluation`` whose numbers are those ``kt evaluate`` writes (``results.json``,
``metrics.csv``, ``moment_of_learning.csv``) for the same data; ``BKT.summary()``; the readers
take a path or a DataFrame; errors are one-line :class:`InputError` naming the column; nothing is
written or printed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from edueval import kt
from edueval.cli.main import main
from edueval.io import InputError
from edueval.kt import BKT, KTEvaluation, NotFittedError, evaluate, read_params, read_responses
from edueval.kt.bkt.variants import read_param_file

IDS = {"student": str, "skill": str}


def _tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def _results(folder: Path) -> dict:
    return json.loads((folder / "results.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def chain(tmp_path_factory) -> dict[str, Path]:
    """``kt simulate -> fit -> predict -> evaluate`` (with and without a parameter file)."""
    base = tmp_path_factory.mktemp("kt_in_memory")
    d = {name: base / name for name in ("sim", "fit", "pred", "ev", "ev_params", "ev_perf")}
    assert (
        main(
            [
                "kt",
                "simulate",
                "--students",
                "30",
                "--skills",
                "3",
                "--opportunities",
                "8",
                "--seed",
                "5",
                "--out",
                str(d["sim"]),
            ]
        )
        == 0
    )
    assert main(["kt", "fit", str(d["sim"] / "responses.csv"), "--out", str(d["fit"])]) == 0
    assert (
        main(
            [
                "kt",
                "predict",
                str(d["sim"] / "responses.csv"),
                "--params",
                str(d["fit"] / "params.csv"),
                "--out",
                str(d["pred"]),
            ]
        )
        == 0
    )
    pred = d["pred"] / "predictions.csv"
    assert main(["kt", "evaluate", str(pred), "--out", str(d["ev"])]) == 0
    assert (
        main(
            [
                "kt",
                "evaluate",
                str(pred),
                "--params",
                str(d["fit"] / "params.csv"),
                "--threshold",
                "0.9",
                "--in-a-row",
                "2",
                "--out",
                str(d["ev_params"]),
            ]
        )
        == 0
    )
    perf = pd.read_csv(pred, dtype=IDS).drop(columns=["known", "p_known"])
    perf.to_csv(base / "perf_only.csv", index=False)
    assert main(["kt", "evaluate", str(base / "perf_only.csv"), "--out", str(d["ev_perf"])]) == 0
    return d


@pytest.fixture
def empty_cwd(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _predictions(chain) -> pd.DataFrame:
    return pd.read_csv(chain["pred"] / "predictions.csv", dtype=IDS)


def _check_equal(ev: KTEvaluation, run: Path) -> None:
    saved = _results(run)
    mine = ev.results()
    assert set(saved) - set(mine) == {"tables", "status"}
    assert mine == {k: saved[k] for k in mine}  # every number as results.json holds it
    assert ev.performance == saved["performance"]
    metrics = pd.read_csv(run / "metrics.csv", dtype={"scope": str})
    pd.testing.assert_frame_equal(
        ev.metrics.reset_index(drop=True), metrics, check_dtype=False, rtol=1e-12
    )
    if (run / "moment_of_learning.csv").exists():
        mol = pd.read_csv(run / "moment_of_learning.csv", dtype=IDS)
        assert ev.sequences is not None
        pd.testing.assert_frame_equal(ev.sequences.reset_index(drop=True), mol, check_dtype=False)
        assert ev.knowledge == saved["knowledge"]
        assert ev.moment_of_learning == saved["moment_of_learning"]
        assert ev.mol_mad == saved["moment_of_learning"]["mol_mad"]
    else:
        assert ev.sequences is None and ev.knowledge is None and ev.mol_mad is None


def test_evaluate_frame_equals_cli(chain, empty_cwd, capsys):
    ev = evaluate(_predictions(chain))
    assert isinstance(ev, KTEvaluation)
    _check_equal(ev, chain["ev"])
    assert ev.auc == _results(chain["ev"])["performance"]["auc"]
    assert _tree(empty_cwd) == [] and capsys.readouterr().out == ""


def test_evaluate_path_equals_cli(chain, empty_cwd):
    _check_equal(evaluate(chain["pred"] / "predictions.csv"), chain["ev"])
    assert _tree(empty_cwd) == []


@pytest.mark.parametrize("source", ["path", "frame", "model"])
def test_evaluate_with_params_equals_cli(chain, empty_cwd, source):
    params_path = chain["fit"] / "params.csv"
    params = {
        "path": params_path,
        "frame": pd.read_csv(params_path, dtype={"skill": str}),
        "model": BKT(seed=0).fit(pd.read_csv(chain["sim"] / "responses.csv", dtype=IDS)),
    }[source]
    ev = evaluate(_predictions(chain), params=params, threshold=0.9, n_in_a_row=2)
    _check_equal(ev, chain["ev_params"])
    assert _tree(empty_cwd) == []


def test_evaluate_without_knowledge_equals_cli(chain):
    ev = evaluate(_predictions(chain).drop(columns=["known", "p_known"]))
    _check_equal(ev, chain["ev_perf"])
    assert "no knowledge metrics" in ev.summary()
    assert set(ev.to_frame()["target"]) == {"performance"}


def test_summary_and_tidy_rows(chain):
    ev = evaluate(_predictions(chain))
    text = ev.summary()
    assert "performance" in text and "knowledge" in text and "Moment of learning" in text
    assert f"{ev.performance['auc']:.4f}" in text
    tidy = ev.to_frame()
    assert list(tidy.columns) == ["scope", "target", "measure", "value"]
    one = tidy[(tidy.scope == "all") & (tidy.target == "performance") & (tidy.measure == "rmse")]
    assert one["value"].item() == ev.rmse
    mol = tidy[(tidy.target == "moment_of_learning") & (tidy.measure == "mol_mad")]
    assert mol["value"].item() == ev.mol_mad
    n_metric_rows = len(ev.metrics) * (ev.metrics.shape[1] - 2)
    assert len(tidy) == n_metric_rows + 2 * 9  # + the two moment-of-learning summaries


def test_predictions_of_a_fitted_model(chain, empty_cwd):
    """The notebook loop: fit, predict, evaluate -- all DataFrames, nothing on disk."""
    data = pd.read_csv(chain["sim"] / "responses.csv", dtype=IDS)
    model = BKT(seed=1).fit(data)
    ev = evaluate(model.predict(data), params=model)
    assert 0.5 < ev.auc <= 1 and ev.performance["k"] == model.n_params_
    assert ev.moment_of_learning["n_sequences"] == data.groupby(["student", "skill"]).ngroups
    assert _tree(empty_cwd) == []


def _bad_correct(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df.loc[3, "correct"] = 2
    return df


def _bad_p_correct(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df.loc[0, "p_correct"] = 1.5
    return df


def _bad_p_known(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df.loc[0, "p_known"] = -0.1
    return df


def _empty_skill(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df["skill"] = df["skill"].astype(object)
    df.loc[1, "skill"] = None
    return df


def _repeated_order(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df.loc[1, "order"] = df.loc[0, "order"]
    return df


@pytest.mark.parametrize(
    ("spoil", "column"),
    [
        (_bad_correct, "correct"),
        (_bad_p_correct, "p_correct"),
        (_bad_p_known, "p_known"),
        (_empty_skill, "skill"),
        (lambda df: df.drop(columns="p_correct"), "p_correct"),
        (lambda df: df.drop(columns="correct"), "correct"),
        (lambda df: df.rename(columns={"order": "ordr"}), "order"),
        (_repeated_order, "order"),
    ],
)
def test_bad_predictions(chain, empty_cwd, spoil, column):
    with pytest.raises(InputError) as info:
        evaluate(spoil(_predictions(chain)))
    message = str(info.value)
    assert "\n" not in message and column in message, message
    assert _tree(empty_cwd) == []


def test_bad_params_frame(chain):
    params = pd.read_csv(chain["fit"] / "params.csv", dtype={"skill": str})
    params.loc[0, "slip"] = 1.5
    with pytest.raises(InputError, match="column 'slip'") as info:
        evaluate(_predictions(chain), params=params)
    assert str(info.value).startswith("parameters DataFrame")
    with pytest.raises(InputError, match="did you mean 'guess'"):
        evaluate(_predictions(chain), params=params.rename(columns={"guess": "gues"}))
    with pytest.raises(InputError, match="no data rows"):
        evaluate(_predictions(chain).iloc[:0])


def test_evaluate_with_an_unfitted_model(chain):
    with pytest.raises(NotFittedError):
        evaluate(_predictions(chain), params=BKT())


def test_readers_take_paths_or_frames(chain):
    path = chain["sim"] / "responses.csv"
    frame = pd.read_csv(path, dtype=IDS)
    df_a, seqs_a, cols_a = read_responses(path)
    df_b, seqs_b, cols_b = read_responses(frame)
    assert cols_a == cols_b
    np.testing.assert_array_equal(seqs_a.obs, seqs_b.obs)
    np.testing.assert_array_equal(seqs_a.students, seqs_b.students)
    params_path = chain["fit"] / "params.csv"
    from_file = read_params(params_path)
    pd.testing.assert_frame_equal(from_file, read_params(pd.read_csv(params_path, dtype=IDS)))
    pd.testing.assert_frame_equal(from_file, read_param_file(pd.read_csv(params_path, dtype=IDS)))
    model = BKT(seed=0).fit(frame)
    pd.testing.assert_frame_equal(read_params(model.params_), model.params_, check_names=False)


def test_bkt_summary(chain, capsys):
    data = pd.read_csv(chain["sim"] / "responses.csv", dtype=IDS)
    model = BKT(seed=1)  # kt fit's default seed: the same fit as the CLI's
    with pytest.raises(NotFittedError, match="not fitted"):
        model.summary()
    with pytest.raises(RuntimeError):  # as before: NotFittedError is a RuntimeError
        model.predict(data)
    model.fit(data)
    text = model.summary()
    assert capsys.readouterr().out == ""
    assert "total log-likelihood" in text and "converged" in text
    for skill, row in model.params_.iterrows():
        assert skill in text and f"{row['learn']:.4f}" in text
    assert f"{model.log_likelihood_.sum():.4f}" in text
    fit_table = pd.read_csv(chain["fit"] / "params.csv", dtype={"skill": str}).set_index("skill")
    for name in ("prior", "learn", "guess", "slip"):
        np.testing.assert_allclose(model.params_[name], fit_table[name], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(model.log_likelihood_, fit_table["log_likelihood"], rtol=1e-12)


def test_bkt_summary_of_a_variant(chain):
    data = pd.read_csv(chain["sim"] / "responses.csv", dtype=IDS)
    data["tutor"] = np.where(data["student"].str[-1].isin(list("02468")), "a", "b")
    model = BKT(seed=0, n_restarts=2, multilearn="tutor").fit(data)
    text = model.summary()
    assert "parameter" in text and "log_likelihood" in text


def test_exports():
    for name in ("evaluate", "KTEvaluation", "NotFittedError", "read_responses", "RowFilter"):
        assert name in kt.__all__ and getattr(kt, name) is not None
