"""The imitation game in memory (issue 19): ``edueval.turing.generate`` returns a
:class:`TuringGeneration` equal to what ``turing generate`` writes; the model recorded is the one
that answered (issue 20, point 5); the results objects have ``summary()`` and ``to_frame()``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from edueval.io import InputError
from edueval.models import FailureBudgetExceeded, get_model
from edueval.turing import (
    CoverageResults,
    SimConfig,
    SimulatedStudy,
    TuringGeneration,
    analyze_choices,
    coverage_plan,
    generate,
    read_choices,
    simulate_study,
)
from edueval.turing.stats import SE_KINDS
from support.scripted_server import ScriptedServer

from .test_generator_split import PHASE1, Script

COLUMNS = ["student", "question", "answer", "correct_answer"]
TABLES = ("questions", "distractors", "worksheet")


@pytest.fixture
def phase1_df() -> pd.DataFrame:
    return pd.DataFrame(PHASE1, columns=COLUMNS)


@pytest.fixture
def server():
    with ScriptedServer(Script()) as s:
        yield s


def _client(server: ScriptedServer, spec: str = "openai/scripted", **kw):
    return get_model(spec, base_url=server.url, no_cache=True, retry_base_delay=0.001,
                     api_key_env="EDUEVAL_TEST_NO_SUCH_KEY", **kw)  # fmt: skip


def _listing(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _cli_generate(cli, tmp_path, monkeypatch, phase1_df, server, *extra):
    path = tmp_path / "in" / "phase1.csv"
    path.parent.mkdir()
    phase1_df.to_csv(path, index=False)
    monkeypatch.setenv("EDUEVAL_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "run"
    r = cli("turing", "generate", path, "--base-url", server.url, "--no-cache", "--out", out,
            *extra)  # fmt: skip
    assert r.code == 0, r.err
    return out


def test_generate_equals_the_command_line(cli, tmp_path, monkeypatch, phase1_df, server):
    """Same phase 1, same scripted model: the same tables byte for byte, the same counts,
    model calls and budget as results.json."""
    out = _cli_generate(cli, tmp_path, monkeypatch, phase1_df, server, "--model",
                        "openai/scripted")  # fmt: skip
    written = json.loads((out / "results.json").read_text())
    with _client(server) as client:
        gen = generate(phase1_df, model=client, max_failures="5%")
    assert isinstance(gen, TuringGeneration) and gen.complete
    for name in TABLES:
        table = getattr(gen, name)
        assert table.to_csv(index=False, lineterminator="\n") == (out / f"{name}.csv").read_text()
    got = gen.results()
    for key, value in got.items():
        if key in ("model_calls", "model_calls_by_client", "seconds"):
            continue  # latencies and timings differ between the two runs
        assert value == written[key], key
    for key in ("calls", "cache_hits", "failed", "unparseable", "prompt_tokens"):
        if key in written["model_calls"]:
            assert got["model_calls"][key] == written["model_calls"][key], key
    assert gen.model == written["model"] == "openai/scripted"
    assert gen.generator_model == written["generator_model"]
    assert gen.generator_same_as_model is written["generator_same_as_model"] is True


def test_generate_with_a_separate_generator_and_an_opener(tmp_path, phase1_df, server):
    """A model spec, an opener or a client; a generator of its own is a second client."""

    def opener(log_path):
        return _client(server, "openai/A")

    with _client(server, "openai/G") as g:
        gen = generate(phase1_df, model=opener, generator=g)
    assert (gen.model, gen.generator_model, gen.generator_same_as_model) == (
        "openai/A", "openai/G", False)  # fmt: skip
    assert set(gen.stats_by_client) == {"ai", "generator"}
    assert gen.requests_by_source == {"generator": 3, "key_check": 1, "ai": 6}
    assert gen.stats.calls == sum(s.calls for s in gen.stats_by_client.values())


def test_summary_and_to_frame(phase1_df, server):
    with _client(server) as client:
        gen = generate(phase1_df, model=client, limit=4)
    text = gen.summary()
    assert isinstance(text, str) and "4 misconception tuples" in text
    assert "AI openai/scripted" in text and "AI distractor (per tuple)" in text
    frame = gen.to_frame()
    assert len(frame) == gen.n_tuples == 4
    assert {"student", "question", "related_question", "ai_distractor", "ai_status"} <= set(frame)
    frame.loc[:, "ai_status"] = "changed"  # a copy: the results object is not changed
    assert (gen.distractors["ai_status"] == "ok").all()
    assert list(gen.status_table().columns) == ["source", "status", "count"]
    assert str(gen) == text


def test_nothing_is_written_to_the_working_directory(tmp_path, monkeypatch, phase1_df, server):
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir(), home.mkdir()
    records = phase1_df.to_dict("records")
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("EDUEVAL_CACHE_DIR", str(tmp_path / "cache"))
    before = _listing(tmp_path)
    gen = generate(records, model="openai/scripted")
    after = _listing(tmp_path)
    assert gen.complete and gen.n_tuples == 6
    assert {p for p in after - before if not p.startswith("cache")} == set()
    assert _listing(work) == set() and _listing(home) == set()


@pytest.mark.parametrize(
    ("frame", "needle"),
    [
        (pd.DataFrame({"student": ["s1"], "question": ["q"], "answer": ["1"]}), "correct_answer"),
        (
            pd.DataFrame(
                {"student": [" s1"], "question": ["q"], "answer": ["1"], "correct_answer": ["2"]}
            ),
            "spaces",
        ),  # fmt: skip
        (
            pd.DataFrame(
                {"student": ["s1"], "question": ["q"], "answer": ["2"], "correct_answer": ["2"]}
            ),
            "no misconception tuples",
        ),  # fmt: skip
        (pd.DataFrame(columns=COLUMNS), "no data rows"),
    ],
)
def test_bad_input_frame_is_one_line_input_error(frame, needle):
    def never(log_path):  # no model is opened for bad input
        raise AssertionError("a model was opened")

    with pytest.raises(InputError) as info:
        generate(frame, model=never)
    message = str(info.value)
    assert "\n" not in message and needle in message, message
    assert "phase1 DataFrame" in message or "no misconception" in message


def test_past_the_budget_raises_with_the_result(phase1_df):
    with ScriptedServer(lambda body: "not json at all") as bad:
        client = _client(bad)
        with client, pytest.raises(FailureBudgetExceeded) as info:
            generate(phase1_df, model=client, max_failures=1)
    res = info.value.result
    assert isinstance(res, TuringGeneration) and not res.complete
    assert res.generator_status["unparseable"] == 3
    assert "max_failures" in str(info.value)


# -- provenance: the model recorded is the one that answered (issue 20, point 5) --------------


def test_edueval_model_is_the_model_recorded(cli, tmp_path, monkeypatch, phase1_df, server):
    """No --model: $EDUEVAL_MODEL answers, and config.json, results.json and the report say so
    (they said 'local')."""
    monkeypatch.setenv("EDUEVAL_MODEL", "openai/gpt-4o-mini")
    out = _cli_generate(cli, tmp_path, monkeypatch, phase1_df, server)
    config = json.loads((out / "config.json").read_text())
    results = json.loads((out / "results.json").read_text())
    for where in (config["params"], results):
        assert where["model"] == "openai/gpt-4o-mini", where
        assert where["generator_model"] == "openai/gpt-4o-mini", where
    report = (out / "report.html").read_text()
    assert "AI openai/gpt-4o-mini" in report and "local" not in report.split("<body")[-1].lower()
    calls = [json.loads(x) for x in (out / "calls.jsonl").read_text().splitlines()]
    assert {c["model"] for c in calls} == {"openai/gpt-4o-mini"}
    # in memory: the default model is $EDUEVAL_MODEL too
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    assert generate(phase1_df, max_failures="100%").model == "openai/gpt-4o-mini"


def test_the_recorded_model_comes_from_the_client_not_the_name_given(tmp_path, phase1_df, server):
    from edueval.turing.generate_runs import generate_run

    path = tmp_path / "phase1.csv"
    phase1_df.to_csv(path, index=False)
    res = generate_run(tmp_path / "run", path, open_model=lambda log: _client(server, log_path=log),
                       model_name="local")  # fmt: skip
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert res["model"] == config["params"]["model"] == "openai/scripted"
    assert res["generator_model"] == config["params"]["generator_model"] == "openai/scripted"


# -- analyze, coverage, simulate: results objects with summary() and to_frame() ---------------


def test_analyze_choices_in_memory_equals_the_command_line(cli, tmp_path):
    sim = simulate_study(SimConfig(n_students=30, n_questions=10, reps=5, seed=2))
    choices = sim.example[["student", "question", "chosen"]]
    path = tmp_path / "phase2.csv"
    choices.to_csv(path, index=False)
    r = cli("turing", "analyze", path, "--out", tmp_path / "an")
    assert r.code == 0, r.err
    written = json.loads((tmp_path / "an" / "results.json").read_text())
    res = analyze_choices(read_choices(choices))  # a DataFrame is read as the file is
    got = res.to_dict()
    assert got["verdict"] == written["verdict"] and got["verdicts"] == written["verdicts"]
    for src, p in got["p"].items():
        assert abs(p - written["p"][src]) <= 1e-12
    for kind, ci in got["diff_ci"].items():
        assert np.allclose(ci, written["diff_ci"][kind], rtol=0, atol=1e-12)
    tests = pd.read_csv(tmp_path / "an" / "tests.csv")
    assert np.allclose(res.tests["p_value"], tests["p_value"], rtol=0, atol=1e-12)
    frame = res.to_frame()
    assert list(frame.columns) == ["term", "se", "estimate", "std_err", "ci_low", "ci_high",
                                   "statistic", "df", "p_value", "reject"]  # fmt: skip
    assert len(frame) == 4 * 2 + len(SE_KINDS) + len(res.tests)
    diff = frame[(frame["term"] == "p_ai - p_human")].set_index("se")
    assert diff.loc["cr3", "ci_low"] == res.diff_ci["cr3"][0]
    p_ai = frame[(frame["term"] == "p_ai") & (frame["se"] == "naive")].iloc[0]
    assert p_ai["estimate"] == got["p"]["ai"]
    assert "verdict" in res.summary()


def test_read_choices_refuses_a_bad_frame_in_one_line():
    with pytest.raises(InputError) as info:
        read_choices(pd.DataFrame({"student": ["s1"], "question": ["q1"], "chosen": ["maybe"]}))
    assert "\n" not in str(info.value) and "choices DataFrame" in str(info.value)


def test_coverage_and_simulation_results_have_to_frame():
    plan = coverage_plan(k=4, p_min=0.05, reps=50, seed=1)
    assert isinstance(plan, CoverageResults)
    frame = plan.to_frame()
    assert list(frame["rank"]) == [1, 2, 3, 4] and (frame["students"] == plan.students).all()
    assert (frame["simulated_coverage"] == plan.simulated_coverage).all()
    sim = simulate_study(SimConfig(n_students=10, n_questions=5, reps=4, seed=0))
    assert isinstance(sim, SimulatedStudy)
    assert sim["rates"] is sim.rates  # still readable as the mapping it was
    assert sim.to_frame().equals(sim.rates)
    table = sim.verdict_table()
    assert list(table.index) == ["oracle", "unconditioned", "random"]
    assert np.allclose(table.sum(axis=1), 1.0)
    assert "4 replications of 10 students" in sim.summary()


def test_importing_turing_loads_no_run_or_report_module():
    code = (
        "import sys, edueval.turing as t\n"
        "bad = [m for m in ('edueval.runs', 'edueval.report', 'edueval.model_runs', "
        "'edueval.turing.pipeline', 'edueval.turing.generate_runs', 'jinja2') if m in sys.modules]\n"
        "assert not bad, bad\n"
        "assert callable(t.generate) and t.generate.__module__ == 'edueval.turing.generation'\n"
        "t.generate_run, t.analyze_run\n"
        "assert 'edueval.turing.generate_runs' in sys.modules\n"
    )
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
