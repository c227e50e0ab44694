"""Uniform results objects (issue 39, 5): every protocol's results object has ``summary()``,
``to_frame()``, ``results()`` (the command's ``results.json`` less ``tables`` and ``status``) and
``save(folder)``, which writes the folder the command writes -- the same files, the same tables
and ``results.json``, and the same ``config.json`` up to its timestamps, versions and input files.

Each test runs the command (in-process, :class:`~.conftest.Sandbox`), computes the same results
in Python on the same inputs, saves them, and compares the two folders.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from edueval.results import RunResults

from .conftest import assert_same

#: a command-line flag (``--draws``)
FLAG = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*")
#: config.json entries that differ between two runs of the same analysis by construction
_RUN_BOUND = ("started", "finished", "inputs", "versions")


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def assert_same_folder(
    saved: Path,
    command: Path,
    *,
    params_from_inputs: tuple[str, ...] = (),
    call_columns: tuple[str, ...] = (),
):
    """``saved`` (``results.save``) holds what ``command``'s run folder holds: the same files,
    equal tables (numbers to 1e-12) and results.json; config.json equal but for its run-bound
    entries and ``params_from_inputs`` (parameters naming the command's input files); table
    columns ``call_columns`` (a model call's latency, whether the cache answered) aside."""
    assert _files(saved) == _files(command), (
        f"save() wrote {sorted(_files(saved) ^ _files(command))} where the command did not "
        "(or the reverse)"
    )
    for name in sorted(_files(command)):
        a, b = saved / name, command / name
        if name.endswith(".csv"):
            x, y = pd.read_csv(a, keep_default_na=False), pd.read_csv(b, keep_default_na=False)
            assert list(x.columns) == list(y.columns), name
            x, y = (
                x.drop(columns=list(call_columns), errors="ignore"),
                y.drop(columns=list(call_columns), errors="ignore"),
            )
            assert_same(x.to_dict("list"), y.to_dict("list"), name)
        elif name in ("results.json",):
            assert_same(json.loads(a.read_text()), json.loads(b.read_text()), name)
        elif name == "config.json":
            x, y = json.loads(a.read_text()), json.loads(b.read_text())
            for key in _RUN_BOUND:
                x.pop(key, None), y.pop(key, None)
            for key in params_from_inputs:
                x["params"].pop(key, None), y["params"].pop(key, None)
            assert x == y, f"config.json: {x} != {y}"
        elif name.endswith((".jsonl", ".txt", ".yaml")):
            assert a.read_text() == b.read_text(), name
    assert "<html" in (saved / "report.html").read_text().lower()


def check_results_object(res: RunResults, command: Path) -> None:
    """summary(), to_frame(), results() of ``res``, results() against the command's
    results.json."""
    assert isinstance(res.summary(), str) and res.summary().strip()
    assert not FLAG.search(res.summary()), "a library summary() names no command-line flag"
    assert isinstance(res.to_frame(), pd.DataFrame)
    written = json.loads((command / "results.json").read_text())
    assert_same(res.results(), {k: v for k, v in written.items() if k not in ("tables", "status")},
                "results()")  # fmt: skip


def save_and_compare(res: Any, command: Path, tmp: Path, **kw: Any) -> Path:
    check_results_object(res, command)
    saved = res.save(tmp / "saved")
    assert saved == tmp / "saved"
    assert_same_folder(saved, command, **kw)
    return saved


def test_items_analyze(sandbox, tmp_path):
    from edueval.items import analyze_items

    cli = sandbox.cli("items", "simulate", "--students", 40, "--seed", 2, "--out", "sim")
    sandbox.cli("items", "analyze", cli / "sim/responses.csv", cli / "sim/items.jsonl",
                "--out", "an")  # fmt: skip
    res = analyze_items(cli / "sim/responses.csv", cli / "sim/items.jsonl")
    save_and_compare(res, cli / "an", tmp_path)


def test_save_refuses_a_folder_of_other_files(sandbox, tmp_path):
    from edueval.io import InputError
    from edueval.items import analyze_items

    cli = sandbox.cli("items", "simulate", "--students", 20, "--seed", 2, "--out", "sim")
    res = analyze_items(cli / "sim/responses.csv", cli / "sim/items.jsonl")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine/notes.txt").write_text("mine")
    with pytest.raises(InputError, match="did not write"):
        res.save(tmp_path / "mine")
    assert (tmp_path / "mine/notes.txt").read_text() == "mine"


@pytest.fixture
def scores_csv(sandbox):
    """Two small simulated 2PL score tables (wide CSV), with a group column in the first."""
    import numpy as np

    from edueval.items import simulate_irt

    paths = []
    for seed in (1, 2):
        wide, _ = simulate_irt(np.linspace(0.7, 1.6, 6), np.linspace(-1, 1, 6), n_persons=160,
                               seed=seed)  # fmt: skip
        wide.index = [f"s{i:03d}" for i in range(len(wide))]
        wide = wide.rename_axis("student").reset_index()
        wide["sex"] = np.where(np.arange(len(wide)) % 2, "F", "M")
        path = sandbox.cli_dir / f"scores{seed}.csv"
        wide.drop(columns=[] if seed == 1 else ["sex"]).to_csv(path, index=False)
        paths.append(path)
    return paths


def test_items_irt(sandbox, tmp_path, scores_csv):
    from edueval.items import IRT, read_scores

    cli = sandbox.cli("items", "irt", scores_csv[1], "--model", "rasch", "--out", "irt")
    model = IRT(model="rasch").fit(read_scores(scores_csv[1]))
    save_and_compare(model, cli / "irt", tmp_path)


def test_items_irt_compare(sandbox, tmp_path, scores_csv):
    from edueval.items import compare_irt, read_scores

    real = scores_csv[0].with_name("real.csv")
    pd.read_csv(scores_csv[0]).drop(columns="sex").to_csv(real, index=False)
    cli = sandbox.cli("items", "irt-compare", real, scores_csv[1], "--out", "cmp")
    cmp = compare_irt(read_scores(real), read_scores(scores_csv[1]))
    save_and_compare(cmp, cli / "cmp", tmp_path)


def test_items_dif(sandbox, tmp_path, scores_csv):
    from edueval.items.dif import dif
    from edueval.items.scores import load_scores

    cli = sandbox.cli("items", "dif", scores_csv[0], "--group", "sex", "--out", "dif")
    table = load_scores(scores_csv[0], keep=("sex",))
    res = dif(table.scores, table.students["sex"])
    # the group column and the table's layout are the command's (file) parameters
    save_and_compare(res, cli / "dif", tmp_path,
                     params_from_inputs=("group", "layout", "focal", "reference"))  # fmt: skip


@pytest.fixture
def kt_sim(sandbox):
    return sandbox.cli("kt", "simulate", "--students", 40, "--skills", 2, "--opportunities", 8,
                       "--seed", 3, "--out", "sim") / "sim"  # fmt: skip


def test_kt_fit(sandbox, tmp_path, kt_sim):
    from edueval.kt import BKT

    cli = sandbox.cli("kt", "fit", kt_sim / "responses.csv", "--out", "fit")
    model = BKT().fit(pd.read_csv(kt_sim / "responses.csv"))
    # min_responses: the command leaves out skills with fewer responses; the library fits all
    save_and_compare(model, cli / "fit", tmp_path, params_from_inputs=("min_responses",))


def test_kt_fit_variant(sandbox, tmp_path, kt_sim):
    from edueval.kt import BKT

    cli = sandbox.cli("kt", "fit", kt_sim / "responses.csv", "--multilearn", "student",
                      "--restarts", 2, "--out", "fit")  # fmt: skip
    model = BKT(multilearn="student", n_restarts=2).fit(kt_sim / "responses.csv")
    save_and_compare(model, cli / "fit", tmp_path, params_from_inputs=("min_responses",))


def test_kt_evaluate(sandbox, tmp_path, kt_sim):
    from edueval.kt import evaluate

    cli = sandbox.cli("kt", "predict", kt_sim / "responses.csv", "--params",
                      kt_sim / "params.csv", "--out", "pred")  # fmt: skip
    sandbox.cli("kt", "evaluate", cli / "pred/predictions.csv", "--params", kt_sim / "params.csv",
                "--out", "ev")  # fmt: skip
    ev = evaluate(cli / "pred/predictions.csv", params=kt_sim / "params.csv")
    save_and_compare(ev, cli / "ev", tmp_path, params_from_inputs=("params_file",))


#: numbers of a run that are no numbers of the analysis (timings)
_TIMINGS = ("sampling_seconds", "fit_seconds")


@pytest.fixture
def comparisons_csv(sandbox):
    from edueval.pairwise import bundled_folder, import_teacher_test

    data = import_teacher_test(bundled_folder() / "items.jsonl")
    path = sandbox.cli_dir / "comparisons.csv"
    data[data["item"].isin(sorted(data["item"].unique())[:2])].to_csv(path, index=False)
    return path


def _drop_timings(folder: Path) -> None:
    """Timings out of results.json (and the reports that print them), for the comparison."""
    path = folder / "results.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({k: v for k, v in data.items() if k not in _TIMINGS}))


def _compare_fits(res, command: Path, tmp: Path) -> None:
    check = {k: v for k, v in res.results().items() if k not in _TIMINGS}
    written = json.loads((command / "results.json").read_text())
    assert_same(check, {k: written[k] for k in check}, "results()")
    saved = res.save(tmp / "saved")
    for folder in (saved, command):
        _drop_timings(folder)
    assert_same_folder(saved, command)
    assert not FLAG.search(res.summary())


def test_pairwise_fit_ml(sandbox, tmp_path, comparisons_csv):
    from edueval.pairwise import BradleyTerry, read_comparisons

    cli = sandbox.cli("pairwise", "fit", comparisons_csv, "--method", "ml", "--out", "fit")
    res = BradleyTerry(read_comparisons(comparisons_csv)).fit_ml()
    _compare_fits(res, cli / "fit", tmp_path)


@pytest.mark.slow  # NUTS: compiling the sampler
def test_pairwise_fit_nuts(sandbox, tmp_path, comparisons_csv):
    from edueval.pairwise import BradleyTerry, read_comparisons

    cli = sandbox.cli("pairwise", "fit", comparisons_csv, "--chains", 2, "--warmup", 100,
                      "--draws", 100, "--out", "fit")  # fmt: skip
    res = BradleyTerry(read_comparisons(comparisons_csv)).fit(chains=2, warmup=100, draws=100)
    _compare_fits(res, cli / "fit", tmp_path)


#: results.json entries of a model run that are no numbers of the analysis: timings, and the
#: counts of the calls answered from the cache (the command's run filled it)
_CALL_BOUND = ("seconds", "model_calls", "model_calls_by_client")
#: config.json entries that only a command's call log gives (what answered: model provenance)
_CALL_LOG = ("model", "models")


def _compare_model_run(res, command: Path, tmp: Path) -> None:
    """A model run's save() against the command's folder: the same folder less the call log
    (``calls.jsonl``: calls made in memory are not logged), timings and cache counts aside."""
    check_results_object_except(res, command, _CALL_BOUND)
    saved = res.save(tmp / "saved")
    (command / "calls.jsonl").unlink()
    for folder in (saved, command):
        path = folder / "results.json"
        data = json.loads(path.read_text())
        path.write_text(json.dumps({k: v for k, v in data.items() if k not in _CALL_BOUND}))
        path = folder / "config.json"
        data = json.loads(path.read_text())
        path.write_text(json.dumps({k: v for k, v in data.items() if k not in _CALL_LOG}))
    assert_same_folder(saved, command, call_columns=("latency_s", "cached", "attempts"))


def check_results_object_except(res, command: Path, skip: tuple[str, ...]) -> None:
    assert isinstance(res.summary(), str) and res.summary().strip()
    assert not FLAG.search(res.summary()), "a library summary() names no command-line flag"
    assert isinstance(res.to_frame(), pd.DataFrame)
    got = {k: v for k, v in res.results().items() if k not in skip}
    written = json.loads((command / "results.json").read_text())
    assert_same(got, {k: v for k, v in written.items() if k not in (*skip, "tables", "status")},
                "results()")  # fmt: skip


MODEL = "openai/gpt-4o-mini"  # OPENAI_BASE_URL: the scripted server


def test_malalgo_run(sandbox, tmp_path, mock_server):
    from edueval.malalgo import evaluate

    cli = sandbox.cli("malalgo", "generate", "--n", 4, "--seed", 2, "--out", "gen")
    sandbox.cli("malalgo", "run", cli / "gen/questions.csv", "--model", MODEL, "--out", "run")
    with sandbox.monkeypatch.context() as m:
        m.setenv("OPENAI_BASE_URL", sandbox.env["OPENAI_BASE_URL"])
        m.setenv("EDUEVAL_CACHE_DIR", str(sandbox.cache))
        res = evaluate(cli / "gen/questions.csv", MODEL)
    _compare_model_run(res, cli / "run", tmp_path)


def test_qgsms_run_and_score(sandbox, tmp_path, serve):
    from edueval.qgsms import evaluate, score

    from .test_api_qgsms import qgsms_script

    cli = sandbox.cli("items", "simulate", "--students", 30, "--materials", 1, "--questions", 5,
                      "--seed", 4, "--out", "room")  # fmt: skip
    sandbox.cli("items", "pairs", cli / "room/responses.csv", cli / "room/items.jsonl",
                "--max-pairs", 2, "--out", "pairs")  # fmt: skip
    pairs = pd.read_csv(cli / "pairs/pairs.csv", dtype=str)
    items = [json.loads(x) for x in (cli / "room/items.jsonl").read_text().splitlines() if x]
    serve(qgsms_script(pairs, items))
    args = (cli / "pairs/pairs.csv", cli / "room/items.jsonl")
    sandbox.cli("qgsms", "run", *args, "--model", MODEL, "--method", "vanilla", "--method",
                "qg-sms", "--no-bt", "--seed", 0, "--out", "run")  # fmt: skip
    sandbox.cli("qgsms", "score", cli / "run/judgements.csv", "--no-bt", "--seed", 0,
                "--out", "score")  # fmt: skip
    with sandbox.monkeypatch.context() as m:
        m.setenv("OPENAI_BASE_URL", sandbox.env["OPENAI_BASE_URL"])
        m.setenv("EDUEVAL_CACHE_DIR", str(sandbox.cache))
        res = evaluate(*args, model=MODEL, methods=["vanilla", "qg-sms"], bradley_terry=False,
                       seed=0)  # fmt: skip
    _compare_model_run(res, cli / "run", tmp_path / "run")
    scores = score(cli / "run/judgements.csv", bradley_terry=False, seed=0)
    save_and_compare(scores, cli / "score", tmp_path / "score")


def test_turing_analyze(sandbox, tmp_path):
    from edueval.turing import analyze_choices

    from .test_api_turing import _phase2

    path = sandbox.cli_dir / "phase2.csv"
    _phase2(n_students=12, n_questions=8).to_csv(path, index=False)
    cli = sandbox.cli("turing", "analyze", path, "--boot", 99, "--out", "an")
    res = analyze_choices(path, n_boot=99)
    save_and_compare(res, cli / "an", tmp_path)


def test_tutor_reply(sandbox, tmp_path, mock_server):
    from edueval.tutor import reply

    from .test_api_tutor import DIALOGUES

    path = sandbox.cli_dir / "dialogues.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in DIALOGUES), encoding="utf-8")
    cli = sandbox.cli("tutor", "reply", path, "--model", MODEL, "--out", "run")
    with sandbox.monkeypatch.context() as m:
        m.setenv("OPENAI_BASE_URL", sandbox.env["OPENAI_BASE_URL"])
        m.setenv("EDUEVAL_CACHE_DIR", str(sandbox.cache))
        res = reply(path, MODEL)
    _compare_model_run(res, cli / "run", tmp_path)


def test_compare_names_open_clients_and_saves_the_commands_folder(sandbox, tmp_path, serve):
    """Runs given as results of open clients are named by their models (not "run 1/2"), and
    the comparison's save() writes the folder ``compare`` writes on the same runs' folders."""
    from compare.scripts import oracle_script  # tests/compare/scripts.py
    from edueval.compare import compare
    from edueval.malalgo import evaluate
    from edueval.misconceptions import generate_items
    from edueval.models import get_model

    cli = sandbox.cli_dir
    items = generate_items(4, seed=3)
    questions = cli / "questions.csv"
    items.to_csv(questions, index=False)
    oracle = oracle_script(items)
    serve(lambda body: '{"Correct Choice": "A"}' if body["model"] == "always-a" else oracle(body))
    models = ["openai/oracle", "openai/always-a"]
    for i, model in enumerate(models):
        sandbox.cli("malalgo", "run", questions, "--model", model, "--out", f"run{i}")
    sandbox.cli("compare", cli / "run0", cli / "run1", "--out", "cmp")
    results = []
    for model in models:
        with get_model(model, base_url=sandbox.env["OPENAI_BASE_URL"],
                       cache_dir=tmp_path / "cache") as client:  # fmt: skip
            results.append(evaluate(questions, client))
    res = compare(results)
    assert res.names == models
    check_results_object_except(res, cli / "cmp", ("runs",))
    saved = res.save(tmp_path / "saved")
    for folder in (saved, cli / "cmp"):  # the command's runs are folders, the library's are not
        path = folder / "results.json"
        data = json.loads(path.read_text())
        data["runs"] = [{k: v for k, v in r.items() if k != "folder"} for r in data["runs"]]
        path.write_text(json.dumps(data))
    assert_same_folder(saved, cli / "cmp", params_from_inputs=("runs",), call_columns=("folder",))


def test_pairwise_summarize(sandbox, tmp_path):
    import numpy as np

    from edueval.pairwise import read_abilities, summarize

    rng = np.random.default_rng(4)
    rows = [{"item": f"i{i}", "attribute": attr, "agent": agent, "alpha_mean": m,
             "alpha_hdi_low": m - 0.8, "alpha_hdi_high": m + 0.8}
            for i in range(6) for attr in ("help", "tone")
            for agent, m in zip(("teacher", "gpt", "blender"), rng.normal([0.5, 0, -0.5], 0.4),
                                strict=True)]  # fmt: skip
    path = sandbox.cli_dir / "abilities.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    cli = sandbox.cli("pairwise", "summarize", path, "--out", "sum")
    res = summarize(read_abilities(path))
    save_and_compare(res, cli / "sum", tmp_path)


def test_turing_generate(sandbox, tmp_path, serve):
    from edueval.turing import generate

    from .test_api_turing_generate import PHASE1, Script

    serve(Script())
    path = sandbox.cli_dir / "phase1.csv"
    pd.DataFrame(PHASE1, columns=["student", "question", "answer", "correct_answer"]).to_csv(
        path, index=False
    )
    cli = sandbox.cli("turing", "generate", path, "--model", MODEL, "--out", "run")
    with sandbox.monkeypatch.context() as m:
        m.setenv("OPENAI_BASE_URL", sandbox.env["OPENAI_BASE_URL"])
        m.setenv("EDUEVAL_CACHE_DIR", str(sandbox.cache))
        res = generate(path, MODEL)
    _compare_model_run(res, cli / "run", tmp_path)


@pytest.mark.slow  # NUTS: compiling the sampler
def test_pairwise_raters(sandbox, tmp_path):
    from edueval.pairwise import RaterModel, bundled_folder, import_teacher_test, read_comparisons

    data = import_teacher_test(bundled_folder() / "items.jsonl")
    data = data[data["rater"].isin(data["rater"].value_counts().index[:4])]  # 4 raters
    path = sandbox.cli_dir / "four.csv"
    data.to_csv(path, index=False)
    cli = sandbox.cli("pairwise", "raters", path, "--per", "rater", "--chains", 1, "--warmup",
                      60, "--draws", 60, "--out", "raters")  # fmt: skip
    res = RaterModel(read_comparisons(path), per="rater").fit(chains=1, warmup=60, draws=60)
    _compare_fits(res, cli / "raters", tmp_path)


def test_kt_compare(sandbox, tmp_path, kt_sim):
    from edueval.kt import compare_models

    cli = sandbox.cli("kt", "compare", kt_sim / "responses.csv", "--models", "bkt,afm",
                      "--folds", 2, "--restarts", 2, "--out", "cmp")  # fmt: skip
    res = compare_models(pd.read_csv(kt_sim / "responses.csv"), ["bkt", "afm"], n_folds=2,
                         n_restarts=2)  # fmt: skip
    timings = ("seconds", "seconds_full_fit")
    check_results_object_except(res, cli / "cmp", ("table",))
    saved = res.save(tmp_path / "saved")
    for folder in (saved, cli / "cmp"):
        path = folder / "results.json"
        data = json.loads(path.read_text())
        data["table"] = [{k: v for k, v in r.items() if k not in timings} for r in data["table"]]
        path.write_text(json.dumps(data))
    assert_same_folder(saved, cli / "cmp", call_columns=timings)


def test_pairwise_simulate(sandbox, tmp_path):
    from edueval.pairwise import SimulationConfig, simulate

    cli = sandbox.cli("pairwise", "simulate", "--objects", 6, "--judges", 4, "--judgements", 60,
                      "--replications", 2, "--split-half-repeats", 2, "--out", "sim")  # fmt: skip
    cfg = SimulationConfig(n_objects=6, n_judges=4, judgements=60, replications=2,
                           split_half_repeats=2)  # fmt: skip
    save_and_compare(simulate(cfg), cli / "sim", tmp_path)


def test_kt_crossvalidate(sandbox, tmp_path, kt_sim):
    from edueval.kt import cross_validate, make_model

    cli = sandbox.cli("kt", "crossvalidate", kt_sim / "responses.csv", "--folds", 2,
                      "--restarts", 2, "--out", "cv")  # fmt: skip
    res = cross_validate(pd.read_csv(kt_sim / "responses.csv"),
                         lambda: make_model("bkt", seed=1, n_restarts=2), n_folds=2, name="bkt")  # fmt: skip
    # n_restarts: inside the model the library is given (make_model), unknown to the results
    save_and_compare(res, cli / "cv", tmp_path, params_from_inputs=("n_restarts",))


@pytest.mark.slow  # NUTS: compiling the sampler
def test_pairwise_hierarchical(sandbox, tmp_path, comparisons_csv):
    from edueval.pairwise import HierarchicalBradleyTerry, read_comparisons

    cli = sandbox.cli("pairwise", "hierarchical", comparisons_csv, "--chains", 1, "--warmup", 60,
                      "--draws", 60, "--out", "h")  # fmt: skip
    res = HierarchicalBradleyTerry(read_comparisons(comparisons_csv)).fit(chains=1, warmup=60,
                                                                         draws=60)  # fmt: skip
    _compare_fits(res, cli / "h", tmp_path)


def test_turing_power_coverage(sandbox, tmp_path):
    from edueval.turing import coverage_plan

    cli = sandbox.cli("turing", "power", "--coverage", "--top-k", 3, "--reps", 50, "--seed", 2,
                      "--out", "cov")  # fmt: skip
    res = coverage_plan(k=3, p_min=0.05, reps=50, seed=2)
    save_and_compare(res, cli / "cov", tmp_path)


def test_reliability_results_are_items_analyze_s(sandbox, tmp_path):
    from edueval.items import analyze_items

    cli = sandbox.cli("items", "simulate", "--students", 30, "--seed", 5, "--out", "sim")
    sandbox.cli("items", "analyze", cli / "sim/responses.csv", cli / "sim/items.jsonl",
                "--out", "an")  # fmt: skip
    res = analyze_items(cli / "sim/responses.csv", cli / "sim/items.jsonl")
    written = json.loads((cli / "an/results.json").read_text())
    assert res.reliability is not None
    assert_same(res.reliability.results(), written["reliability"], "reliability")


def test_items_reliability(sandbox, tmp_path, scores_csv):
    from edueval.items import read_scores
    from edueval.items.reliability import reliability

    cli = sandbox.cli("items", "reliability", scores_csv[1], "--missing", "complete",
                      "--level", 0.9, "--out", "rel")  # fmt: skip
    res = reliability(read_scores(scores_csv[1]), missing="complete", level=0.9)
    save_and_compare(res, cli / "rel", tmp_path)
    written = json.loads((cli / "rel/results.json").read_text())
    assert written["missing"] == "complete" and written["level"] == 0.9


@pytest.mark.parametrize("replications", [1, 2])
def test_kt_study(sandbox, tmp_path, replications):
    from edueval.kt import StudyConfig, StudyReplications, replicate_study

    cli = sandbox.cli("kt", "study", "--students", 30, "--skills", 3, "--opportunities", 6,
                      "--random-sets", 2, "--replications", replications, "--seed", 4,
                      "--out", "study")  # fmt: skip
    cfg = StudyConfig(n_students=30, n_skills=3, n_opportunities=6, n_random_sets=2, seed=4)
    reps = replicate_study(cfg, replications)
    assert isinstance(reps, StudyReplications) and len(reps.studies) == replications
    # seconds: each run's own timing
    written = json.loads((cli / "study/results.json").read_text())
    reps.first.seconds = written["seconds"]
    save_and_compare(reps, cli / "study", tmp_path)
    assert len(reps.to_frame()) == replications * len(reps.first.table3)


def _same_seconds(res, command: Path) -> None:
    """A run's own timings (the only numbers two runs of one simulation do not share)."""
    written = json.loads((command / "results.json").read_text())
    res.seconds = written["seconds"]
    if hasattr(res, "seconds_main"):
        res.seconds_main = written["seconds_main_simulation"]


def test_turing_simulate_main_only(sandbox, tmp_path):
    from edueval.turing import SimConfig, SimulatedStudy, simulate_study

    cli = sandbox.cli("turing", "simulate", "--students", 12, "--questions", 6, "--reps", 30,
                      "--sizes", "6", "--seed", 3, "--main-only", "--out", "sim")  # fmt: skip
    sim = simulate_study(SimConfig(n_students=12, n_questions=6, reps=30, seed=3),
                         n_students_grid=[6])  # fmt: skip
    assert isinstance(sim, SimulatedStudy)
    _same_seconds(sim, cli / "sim")
    save_and_compare(sim, cli / "sim", tmp_path)
    assert not (cli / "sim/type1.csv").exists()


def test_turing_simulate(sandbox, tmp_path):
    from edueval.turing import SimConfig, SimulationResults, simulation_results

    cli = sandbox.cli("turing", "simulate", "--students", 12, "--questions", 6, "--reps", 30,
                      "--sizes", "6", "--p-rules", "0.5", "--seed", 3, "--out", "sim")  # fmt: skip
    res = simulation_results(SimConfig(n_students=12, n_questions=6, reps=30, seed=3),
                             grid=[6], p_rules=[0.5])  # fmt: skip
    assert isinstance(res, SimulationResults)
    _same_seconds(res, cli / "sim")
    save_and_compare(res, cli / "sim", tmp_path)
    assert len(res.type1) == 4 and len(res.convergence)


PACKAGES = ("edueval.kt", "edueval.items", "edueval.pairwise", "edueval.malalgo", "edueval.qgsms",
            "edueval.turing", "edueval.tutor", "edueval.compare", "edueval.misconceptions")  # fmt: skip


def test_every_public_results_object_is_uniform():
    """Every class a protocol package offers that has a ``summary()`` is a results object with
    ``to_frame()``, ``results()`` and ``save()`` (issue 39, 5)."""
    import importlib
    import inspect

    seen, lacking = 0, []
    for name in PACKAGES:
        package = importlib.import_module(name)
        for attr in package.__all__:
            obj = getattr(package, attr)
            if not inspect.isclass(obj) or not callable(getattr(obj, "summary", None)):
                continue
            seen += 1
            missing = [
                m for m in ("to_frame", "results", "save") if not callable(getattr(obj, m, None))
            ]
            if missing:
                lacking.append(f"{name}.{attr}: {missing}")
    assert seen >= 25
    assert not lacking, "results objects without the uniform methods:\n" + "\n".join(lacking)
