"""End to end: ``edueval kt simulate -> fit -> predict -> evaluate``, ``kt study`` and ``demo``."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from edueval.cli.main import main
from edueval.io import file_sha256

PNG = "data:image/png;base64,"


def _run(*args: object) -> int:
    return main([str(a) for a in args])


def _config(folder: Path) -> dict:
    return json.loads((folder / "config.json").read_text(encoding="utf-8"))


def _results(folder: Path) -> dict:
    return json.loads((folder / "results.json").read_text(encoding="utf-8"))


def _check_run_dir(folder: Path, command: str, tables: list[str], *, figures: bool) -> None:
    cfg = _config(folder)
    assert cfg["command"] == command
    assert cfg["status"] == "complete"
    assert "numpy" in cfg["versions"]
    assert isinstance(_results(folder), dict)
    report = (folder / "report.html").read_text(encoding="utf-8")
    assert report.lstrip().lower().startswith("<!doctype html")
    assert report.rstrip().endswith("</html>")
    if figures:
        assert PNG in report
        # the figures are embedded, not linked: the report opens offline on its own
        assert 'src="figures/' not in report
    for name in tables:
        path = folder / f"{name}.csv"
        assert path.exists(), f"{path} missing"
        assert len(pd.read_csv(path)) > 0
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]


@pytest.fixture(scope="module")
def chain(tmp_path_factory) -> dict[str, Path]:
    """simulate -> fit -> predict -> evaluate, once for the module."""
    base = tmp_path_factory.mktemp("kt_chain")
    d = {f"D{i}": base / f"D{i}" for i in range(1, 5)}
    codes = {
        "simulate": _run(
            *("kt", "simulate", "--students", 50, "--skills", 3, "--opportunities", 10),
            *("--out", d["D1"]),
        ),
    }
    codes["fit"] = _run("kt", "fit", d["D1"] / "responses.csv", "--out", d["D2"])
    codes["predict"] = _run(
        *("kt", "predict", d["D1"] / "responses.csv"),
        *("--params", d["D2"] / "params.csv", "--out", d["D3"]),
    )
    codes["evaluate"] = _run("kt", "evaluate", d["D3"] / "predictions.csv", "--out", d["D4"])
    d["codes"] = codes  # type: ignore[assignment]
    return d


def test_chain_exit_codes(chain):
    assert chain["codes"] == {"simulate": 0, "fit": 0, "predict": 0, "evaluate": 0}


def test_simulate_run(chain):
    out = chain["D1"]
    _check_run_dir(out, "kt simulate", ["responses", "params"], figures=True)
    df = pd.read_csv(out / "responses.csv")
    assert list(df.columns) == ["student", "skill", "order", "correct", "known"]
    assert len(df) == 50 * 3 * 10
    assert df["student"].nunique() == 50 and df["skill"].nunique() == 3
    assert sorted(df["order"].unique()) == list(range(1, 11))
    assert set(df["correct"].unique()) <= {0, 1} and set(df["known"].unique()) <= {0, 1}
    assert not df.duplicated(["student", "skill", "order"]).any()
    params = pd.read_csv(out / "params.csv")
    assert sorted(params["skill"]) == sorted(df["skill"].unique())
    # the paper's ranges
    assert params["prior"].between(0.01, 0.80).all()
    assert params["learn"].between(0.01, 0.60).all()
    assert params["guess"].between(0.05, 0.40).all()
    assert params["slip"].between(0.05, 0.40).all()
    assert (params["forget"] == 0).all()
    # classic BKT has no forgetting: once known, always known
    for _, seq in df.groupby(["student", "skill"]):
        assert (np.diff(seq.sort_values("order")["known"].to_numpy()) >= 0).all()
    res = _results(out)
    assert res["n_responses"] == 1500 and res["n_skills"] == 3
    assert res["mean_correct"] == pytest.approx(df["correct"].mean())
    cfg = _config(out)
    assert cfg["seed"] == 1  # the default
    assert cfg["params"]["n_students"] == 50 and cfg["params"]["n_opportunities"] == 10


def test_fit_run(chain):
    out = chain["D2"]
    _check_run_dir(out, "kt fit", ["params", "restarts"], figures=False)
    fitted = pd.read_csv(out / "params.csv")
    truth = pd.read_csv(chain["D1"] / "params.csv")
    assert sorted(fitted["skill"]) == sorted(truth["skill"])
    for col in ("prior", "learn", "guess", "slip", "forget"):
        assert fitted[col].between(0, 1).all(), col
    assert (fitted["guess"] <= 0.5).all() and (fitted["slip"] <= 0.5).all()
    assert (fitted["forget"] == 0).all()
    assert (fitted["n_responses"] == 500).all() and (fitted["n_students"] == 50).all()
    assert (fitted["log_likelihood"] < 0).all()
    res = _results(out)
    assert res["n_skills"] == 3 and res["n_responses"] == 1500
    assert res["skipped_skills"] == []
    assert res["total_log_likelihood"] == pytest.approx(fitted["log_likelihood"].sum())
    data = chain["D1"] / "responses.csv"
    assert _config(out)["inputs"]["data"]["sha256"] == file_sha256(data)


def test_predict_run(chain):
    out = chain["D3"]
    _check_run_dir(out, "kt predict", ["predictions", "per_skill"], figures=False)
    responses = pd.read_csv(chain["D1"] / "responses.csv")
    pred = pd.read_csv(out / "predictions.csv")
    # every input row, in the input's order, with the two predictions added
    assert list(pred.columns) == [*responses.columns, "p_correct", "p_known"]
    pd.testing.assert_frame_equal(pred[responses.columns], responses)
    for col in ("p_correct", "p_known"):
        assert pred[col].notna().all()
        assert pred[col].between(0, 1).all()
    # first opportunity: p_correct from the prior alone
    params = pd.read_csv(chain["D2"] / "params.csv").set_index("skill")
    first = pred[pred["order"] == 1]
    p = params.loc[first["skill"]]
    expected = (
        p["prior"].to_numpy() * (1 - p["slip"].to_numpy())
        + (1 - p["prior"].to_numpy()) * p["guess"].to_numpy()
    )
    np.testing.assert_allclose(first["p_correct"].to_numpy(), expected, rtol=1e-9)
    cfg = _config(out)
    assert set(cfg["inputs"]) == {"data", "params"}
    res = _results(out)
    assert res["n_responses"] == 1500
    assert res["mean_p_correct"] == pytest.approx(pred["p_correct"].mean())


def test_predict_keeps_shuffled_input_order(chain, tmp_path):
    responses = pd.read_csv(chain["D1"] / "responses.csv")
    shuffled = responses.sample(frac=1.0, random_state=3).reset_index(drop=True)
    data = tmp_path / "shuffled.csv"
    shuffled.to_csv(data, index=False)
    out = tmp_path / "pred"
    assert _run("kt", "predict", data, "--params", chain["D2"] / "params.csv", "--out", out) == 0
    pred = pd.read_csv(out / "predictions.csv")
    pd.testing.assert_frame_equal(pred[shuffled.columns], shuffled)
    ref = pd.read_csv(chain["D3"] / "predictions.csv").set_index(["student", "skill", "order"])
    ref = ref.loc[pd.MultiIndex.from_frame(shuffled[["student", "skill", "order"]])]
    np.testing.assert_array_equal(pred["p_correct"].to_numpy(), ref["p_correct"].to_numpy())
    np.testing.assert_array_equal(pred["p_known"].to_numpy(), ref["p_known"].to_numpy())


def test_evaluate_run(chain):
    out = chain["D4"]
    _check_run_dir(out, "kt evaluate", ["metrics", "moment_of_learning"], figures=False)
    res = _results(out)
    metric_names = {
        "accuracy", "precision", "recall", "f1", "auc", "rmse", "r2",
        "loglik", "aic", "aicc", "bic", "cbd",
    }  # fmt: skip
    for target in ("performance", "knowledge"):
        m = res[target]
        assert metric_names <= set(m), target
        assert m["n"] == 1500
        for name in ("accuracy", "precision", "recall", "f1", "auc"):
            assert 0 <= m[name] <= 1, (target, name)
        assert 0 <= m["rmse"] <= 1
        assert m["loglik"] < 0
        k = 4 * pd.read_csv(chain["D3"] / "predictions.csv")["skill"].nunique()
        assert m["k"] == k  # the pooled row counts every skill's parameters
        assert m["aic"] == pytest.approx(2 * k - 2 * m["loglik"])
        assert m["bic"] == pytest.approx(k * np.log(1500) - 2 * m["loglik"])
    # performance metrics recomputed from predictions.csv
    pred = pd.read_csv(chain["D3"] / "predictions.csv")
    y, p = pred["correct"].to_numpy(), pred["p_correct"].to_numpy()
    perf = res["performance"]
    assert perf["rmse"] == pytest.approx(np.sqrt(np.mean((y - p) ** 2)))
    assert perf["accuracy"] == pytest.approx(np.mean((p >= 0.5) == (y == 1)))
    assert perf["loglik"] == pytest.approx(np.sum(y * np.log(p) + (1 - y) * np.log(1 - p)))
    # moment of learning
    mol = res["moment_of_learning"]
    assert mol["threshold"] == 0.95
    assert mol["n_sequences"] == 150
    assert mol["mol_mad"] >= 0
    assert res["moment_of_learning_in_a_row"]["n_in_a_row"] == 3
    table = pd.read_csv(out / "moment_of_learning.csv")
    assert len(table) == 150
    assert table["t_true"].between(1, 11).all() and table["t_est"].between(1, 11).all()
    assert mol["mol_mad"] == pytest.approx((table["t_true"] - table["t_est"]).abs().mean())
    assert mol["n_never_learned"] == int((table["t_true"] == 11).sum())
    assert mol["n_never_crossed"] == int((table["t_est"] == 11).sum())
    metrics = pd.read_csv(out / "metrics.csv")
    assert set(metrics["target"]) == {"performance", "knowledge"}
    assert len(metrics) == 2 * (1 + 3)  # "all" and each skill, for both targets


@pytest.fixture(scope="module")
def study_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("kt_study") / "D5"
    code = _run("kt", "study", "--students", 60, "--skills", 6, "--out", out, "--no-sensitivity")
    assert code == 0
    return out


def test_study_run(study_dir):
    tables = [
        "scores", "truth", "candidates", "table2", "table3", "experiment3", "mol_in_a_row",
    ]  # fmt: skip
    _check_run_dir(study_dir, "kt study", tables, figures=True)
    assert not (study_dir / "sensitivity_table3.csv").exists()
    res = _results(study_dir)
    assert res["config"]["n_students"] == 60 and res["config"]["n_skills"] == 6
    assert res["true_first"] and all(0 <= v <= 6 for v in res["true_first"].values())
    assert "sensitivity_prose_prior" not in res
    assert _config(study_dir)["params"]["sensitivity"] is False
    assert _config(study_dir)["seed"] == 2013
    candidates = pd.read_csv(study_dir / "candidates.csv")
    assert len(candidates) == 15  # 5 typical-tutor sets and 10 random ones
    assert len(pd.read_csv(study_dir / "truth.csv")) == 6
    report = (study_dir / "report.html").read_text(encoding="utf-8")
    assert report.count(PNG) >= 2


@pytest.mark.slow  # the whole demo, the embedded model's calls included: minutes
def test_demo_quick(tmp_path):
    out = tmp_path / "D6"
    assert _run("demo", "--quick", "--out", out) == 0
    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'href="kt-study/report.html"' in index
    assert (out / "kt-study" / "report.html").exists()
    assert _config(out / "kt-study")["status"] == "complete"
    assert PNG in (out / "kt-study" / "report.html").read_text(encoding="utf-8")
    # every page the index names is a link, and every link opens a page (relative: the folder
    # can be moved)
    hrefs = re.findall(r'href="([^"]+)"', index)
    assert len(hrefs) >= 8, hrefs  # the six protocol reports and the two input reports
    for href in hrefs:
        assert not href.startswith(("/", "http")) and (out / href).is_file(), href
    text = re.sub(r"<[^>]+>", " ", index)
    named = set(re.findall(r"[\w-]+/report\.html", text))
    assert named <= set(hrefs), named - set(hrefs)
    tutor = (out / "tutor" / "report.html").read_text(encoding="utf-8")
    assert "\\n" not in tutor


def _simulate(out: Path, seed: int) -> int:
    return _run(
        *("kt", "simulate", "--students", 20, "--skills", 2, "--opportunities", 6),
        *("--seed", seed, "--out", out),
    )


def test_simulate_reproducible(tmp_path):
    assert _simulate(tmp_path / "a", 11) == 0
    assert _simulate(tmp_path / "b", 11) == 0
    assert _simulate(tmp_path / "c", 12) == 0
    a = (tmp_path / "a" / "responses.csv").read_bytes()
    assert a == (tmp_path / "b" / "responses.csv").read_bytes()
    assert (tmp_path / "a" / "params.csv").read_bytes() == (
        tmp_path / "b" / "params.csv"
    ).read_bytes()
    assert a != (tmp_path / "c" / "responses.csv").read_bytes()
    assert (tmp_path / "a" / "params.csv").read_bytes() != (
        tmp_path / "c" / "params.csv"
    ).read_bytes()
    assert _config(tmp_path / "a")["seed"] == 11


def test_fit_reproducible(chain, tmp_path):
    data = chain["D1"] / "responses.csv"
    assert _run("kt", "fit", data, "--out", tmp_path / "f1", "--restarts", 2, "--seed", 5) == 0
    assert _run("kt", "fit", data, "--out", tmp_path / "f2", "--restarts", 2, "--seed", 5) == 0
    assert (tmp_path / "f1" / "params.csv").read_bytes() == (
        tmp_path / "f2" / "params.csv"
    ).read_bytes()


def test_simulate_with_params_file(tmp_path):
    params = tmp_path / "truth.csv"
    params.write_text("skill,prior,learn,guess,slip\nadd,0,1,0,0\nsub,1,0,0,0\n")
    out = tmp_path / "sim"
    assert _run("kt", "simulate", "--params", params, "--students", 5, "--out", out) == 0
    df = pd.read_csv(out / "responses.csv")
    assert sorted(df["skill"].unique()) == ["add", "sub"]
    assert len(df) == 2 * 5 * 30
    add = df[df["skill"] == "add"]
    # prior 0, learn 1, no guess or slip: unknown and wrong at 1, known and right after
    assert (add[add["order"] == 1][["known", "correct"]] == 0).all().all()
    assert (add[add["order"] > 1][["known", "correct"]] == 1).all().all()
    assert (df[df["skill"] == "sub"]["correct"] == 1).all()
    assert _config(out)["inputs"]["params"]["sha256"] == file_sha256(params)


def test_console_script_bad_input(tmp_path):
    """The installed ``edueval`` script: exit 2 and one line on stderr, no traceback."""
    exe = shutil.which("edueval") or str(Path(sys.executable).with_name("edueval"))
    if not Path(exe).exists():
        pytest.fail("edueval console script not installed (pip install .)")
    data = tmp_path / "bad.csv"
    data.write_text("student,skill,correct\ns,A,1\ns,A,3\n")
    proc = subprocess.run(
        [exe, "kt", "fit", str(data), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert proc.returncode == 2
    assert proc.stderr == f"error: {data}, line 3, column 'correct': expected 0 or 1, got 3\n"
    assert proc.stdout == ""
