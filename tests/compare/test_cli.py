"""``edueval malalgo run --model A --model B --model C`` against a scripted server that answers
per model name, then ``edueval compare``: the counts are those the script implies, computed by
hand from the questions and their prompts' targets; refusals on different items, and
``--allow-subset``."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from edueval.malalgo import build_tasks, read_questions
from edueval.misconceptions import generate_items
from edueval.stats import sign_test
from support.scripted_server import ScriptedServer, last_user_message

from .scripts import oracle_label, question_of

SEED = 1  # the CLI's default --seed: the prompts' shuffles


@pytest.fixture(scope="module")
def questions_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("q") / "questions.csv"
    generate_items(12, seed=4).to_csv(path, index=False)
    return path


def three_models(questions: pd.DataFrame):
    """``A``: an oracle; ``B``: always "A"; ``C``: the oracle on the first half of the
    questions, always "B" on the others."""
    lookup = question_of(questions)
    half = len(questions) // 2

    def script(body):
        text = last_user_message(body)
        i, q = lookup(text)
        model = body["model"]
        if model == "B" or (model == "C" and i >= half):
            label = "A" if model == "B" else "B"
        else:
            label = oracle_label(q, text)
        return json.dumps({"Correct Choice": label})

    return script


def expected_correct(questions: pd.DataFrame) -> dict[str, dict[str, set]]:
    """Per model and metric, the units answered right (hand-computed from the targets)."""
    tasks = build_tasks(questions, seed=SEED)
    ids = list(questions["id"].astype(str))
    half = set(ids[: len(ids) // 2])
    out = {m: {"mcq": set(), "aia": set(), "mia": set()} for m in "ABC"}
    for t in tasks:
        metric = "mcq" if t.kind == "mcq" else ("aia" if t.is_correct_choice else "mia")
        unit = t.question_id if metric != "mia" else f"{t.question_id}:{t.choice}"
        out["A"][metric].add(unit)
        if t.target == "A":
            out["B"][metric].add(unit)
        if t.question_id in half or t.target == "B":
            out["C"][metric].add(unit)
    return out


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory, questions_file):
    """The three sub-runs and their comparison, made once through the command line."""
    from edueval.cli.main import main

    tmp = tmp_path_factory.mktemp("runs")
    q = read_questions(questions_file)
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_API_KEY", "test-key")
    mp.setenv("EDUEVAL_CACHE_DIR", str(tmp / "cache"))
    try:
        with ScriptedServer(three_models(q)) as server:
            code = main(["malalgo", "run", str(questions_file), "--model", "openai/A", "--model",
                         "openai/B", "--model", "openai/C", "--base-url", server.url,
                         "--out", str(tmp / "p3")])  # fmt: skip
            calls = server.calls
    finally:
        mp.undo()
    assert code == 0
    return tmp / "p3", q, calls


def test_three_models_then_compare_reproduce_hand_counts(three_runs, cli, tmp_path):
    out, q, calls = three_runs
    assert calls == 3 * 5 * len(q)  # every prompt once per model, one shared cache
    for m in "ABC":
        config = json.loads((out / f"openai-{m}" / "config.json").read_text())
        assert config["status"] == "complete" and config["params"]["model"] == f"openai/{m}"
    res = json.loads((out / "compare" / "results.json").read_text())
    want = expected_correct(q)
    est = pd.DataFrame(res["estimates"])
    for m in "ABC":
        for metric in ("mcq", "aia", "mia"):
            row = est[(est["run"] == f"openai/{m}") & (est["metric"] == metric)].iloc[0]
            assert row["correct"] == len(want[m][metric]), (m, metric)
    assert res["reference"] == {"mcq": "openai/A", "aia": "openai/A", "mia": "openai/A"}
    diff = pd.DataFrame(res["differences"])
    for m in "BC":
        for metric in ("mcq", "aia", "mia"):
            row = diff[(diff["run"] == f"openai/{m}") & (diff["metric"] == metric)].iloc[0]
            n = len(want["A"][metric])
            c = n - len(want[m][metric])  # the oracle is right wherever the other is
            assert (row["run_only"], row["reference_only"], row["n"]) == (0, c, n)
            assert row["difference"] == pytest.approx(-c / n, abs=1e-12)
            if metric != "mia":
                assert row["p"] == pytest.approx(sign_test(0, c, "two-sided"), abs=1e-15)
    for name in ("estimates", "differences", "discordant", "runs"):
        assert (out / "compare" / f"{name}.csv").exists()
    html = (out / "compare" / "report.html").read_text()
    assert "data:image/png;base64" in html and "Detectable difference" in html
    # the comparison again, by hand, with a fixed reference and --detect
    r = cli("compare", out / "openai-A", out / "openai-B", out / "openai-C", "--reference",
            out / "openai-B", "--detect", "0.05", "--out", tmp_path / "cmp")  # fmt: skip
    assert r.code == 0, r.err
    again = json.loads((tmp_path / "cmp" / "results.json").read_text())
    assert again["reference"]["mcq"] == "openai/B" and again["detect"] == 0.05
    assert all(d["needed"] and d["needed"] > 0 for d in again["differences"])


def test_a_single_model_writes_one_run_folder_as_before(tmp_path, questions_file, cli,
                                                         monkeypatch):  # fmt: skip
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("EDUEVAL_CACHE_DIR", str(tmp_path / "cache"))
    with ScriptedServer(lambda body: '{"Correct Choice": "A"}') as server:
        r = cli("malalgo", "run", questions_file, "--model", "openai/A", "--base-url",
                server.url, "--out", tmp_path / "one")  # fmt: skip
    assert r.code == 0, r.err
    assert (tmp_path / "one" / "results.json").exists()
    assert not (tmp_path / "one" / "compare").exists()


def _run_on(cli, tmp_path, questions, name, url, *extra):
    return cli("malalgo", "run", questions, "--model", "openai/B", "--base-url", url,
               "--out", tmp_path / name, *extra)  # fmt: skip


def test_runs_on_different_items_are_refused_in_one_line(three_runs, cli, tmp_path,
                                                         monkeypatch):  # fmt: skip
    out, q, _ = three_runs
    other = tmp_path / "other.csv"
    q.head(8).to_csv(other, index=False)  # the first 8 questions: a subset, another file
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("EDUEVAL_CACHE_DIR", str(out.parent / "cache"))
    with ScriptedServer(three_models(q)) as server:
        made = _run_on(cli, tmp_path, other, "sub", server.url)
        limited = _run_on(cli, tmp_path, out.parent / "q" / "x.csv", "nofile", server.url)
    assert made.code == 0, made.err
    assert limited.code == 2  # (a missing file: the usual one-line refusal)
    refused = cli("compare", out / "openai-A", tmp_path / "sub", "--out", tmp_path / "c1")
    assert refused.code == 2 and len(refused.err_lines) == 1, refused.err
    assert "other questions" in refused.err and "--allow-subset" in refused.err
    ok = cli("compare", out / "openai-A", tmp_path / "sub", "--allow-subset", "--out",
             tmp_path / "c2")  # fmt: skip
    assert ok.code == 0, ok.err
    res = json.loads((tmp_path / "c2" / "results.json").read_text())
    est = pd.DataFrame(res["estimates"])
    assert set(est.loc[est["metric"] == "mcq", "n"]) == {8}
    assert set(est.loc[est["metric"] == "mia", "n"]) == {24}
    assert res["dropped"]["mcq"] == {"openai/A": 4, "openai/B": 0}
    assert res["notes"] and "other questions" in res["notes"][0]


def test_same_file_different_limit_is_refused_too(three_runs, cli, tmp_path, monkeypatch,
                                                  questions_file):  # fmt: skip
    out, q, _ = three_runs
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("EDUEVAL_CACHE_DIR", str(out.parent / "cache"))
    with ScriptedServer(three_models(q)) as server:
        made = _run_on(cli, tmp_path, questions_file, "lim", server.url, "--limit", "5")
    assert made.code == 0, made.err
    refused = cli("compare", out / "openai-A", tmp_path / "lim", "--out", tmp_path / "c")
    assert refused.code == 2 and len(refused.err_lines) == 1, refused.err
    assert "not on the same items" in refused.err
    ok = cli("compare", out / "openai-A", tmp_path / "lim", "--allow-subset",
             "--out", tmp_path / "c3")  # fmt: skip
    assert ok.code == 0, ok.err


def test_other_refusals(three_runs, cli, tmp_path):
    out, _, _ = three_runs
    one = cli("compare", out / "openai-A", "--out", tmp_path / "c")
    assert one.code == 2 and len(one.err_lines) == 1, one.err
    twice = cli("compare", out / "openai-A", out / "openai-A", "--out", tmp_path / "c")
    assert twice.code == 2 and "twice" in twice.err
    bad_ref = cli("compare", out / "openai-A", out / "openai-B", "--reference", "nope",
                  "--out", tmp_path / "c")  # fmt: skip
    assert bad_ref.code == 2 and "nope" in bad_ref.err
    (tmp_path / "not-a-run").mkdir()  # (an --out inside it would be refused first)
    not_run = cli("compare", out / "openai-A", tmp_path / "not-a-run", "--out", tmp_path / "c")
    assert not_run.code == 2 and "config.json" in not_run.err


def _qgsms_folder(path, sha, right, model="openai/x"):
    """A finished ``qgsms run`` folder as the run layer writes it (config + judgements)."""
    path.mkdir(parents=True)
    rows = [{"method": m, "dimension": "DF", "pair_id": i, "order": o, "a": "q1", "b": "q2",
             "better": "q1", "verdict": "a" if ok else "b", "chosen": "q1" if ok else "q2",
             "correct": ok, "status": "ok", "diff": 0.1}
            for m, pairs in right.items() for i, orders in enumerate(pairs)
            for o, ok in zip((1, 2), orders, strict=True)]  # fmt: skip
    pd.DataFrame(rows).to_csv(path / "judgements.csv", index=False)
    config = {"command": "qgsms run", "status": "complete", "seed": 1,
              "params": {"methods": list(right), "model": model, "temperature": 1.0},
              "inputs": {"pairs": {"sha256": sha}, "items": {"sha256": "i" * 64}}}  # fmt: skip
    (path / "config.json").write_text(json.dumps(config))
    return path


def test_qgsms_run_folders_compare_methods_by_name(cli, tmp_path):
    right = {"vanilla": [(1, 1), (1, 0), (0, 0), (1, 1)] * 5,
             "qg-sms": [(1, 1), (1, 1), (1, 1), (0, 1)] * 5}  # fmt: skip
    run = _qgsms_folder(tmp_path / "q1", "p" * 64, right)
    r = cli("compare", run, "--reference", "vanilla", "--out", tmp_path / "c")
    assert r.code == 0, r.err
    res = json.loads((tmp_path / "c" / "results.json").read_text())
    ca = next(d for d in res["differences"] if d["metric"] == "CA")
    assert (ca["run"], ca["run_only"], ca["reference_only"]) == ("qg-sms", 10, 5)
    assert ca["p"] == pytest.approx(sign_test(10, 5, "two-sided"))
    aa = next(d for d in res["differences"] if d["metric"] == "AA")
    assert aa["n"] == 40 and aa["n_clusters"] == 20
    # two runs (another model) on the same pairs: rows named by the folder where methods repeat
    other = _qgsms_folder(tmp_path / "q2", "p" * 64, {"vanilla": right["qg-sms"]}, "openai/y")
    r = cli("compare", run, other, "--out", tmp_path / "c2")
    assert r.code == 0, r.err
    names = {
        d["run"] for d in json.loads((tmp_path / "c2" / "results.json").read_text())["estimates"]
    }
    assert names == {"q1:vanilla", "qg-sms", "q2:vanilla"}
    moved = _qgsms_folder(tmp_path / "q3", "z" * 64, right)
    refused = cli("compare", run, moved, "--out", tmp_path / "c3")
    assert refused.code == 2 and "other pairs" in refused.err and len(refused.err_lines) == 1


def test_a_model_past_its_failure_budget_fails_alone(cli, tmp_path, questions_file, monkeypatch):
    """Each model has its own failure budget: one that never answers in the format asked for is
    marked failed, the other completes, the comparison is written, and the command exits 3."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("EDUEVAL_CACHE_DIR", str(tmp_path / "cache"))

    def script(body):
        return "no idea" if body["model"] == "bad" else '{"Correct Choice": "A"}'

    with ScriptedServer(script) as server:
        r = cli("malalgo", "run", questions_file, "--model", "openai/bad", "--model",
                "openai/good", "--limit", "4", "--base-url", server.url,
                "--out", tmp_path / "p3")  # fmt: skip
    assert r.code == 3, r.err
    assert "1 of 2 model runs failed (openai/bad)" in r.err_lines[-1]
    status = {m: json.loads((tmp_path / "p3" / f"openai-{m}" / "config.json").read_text())["status"]
              for m in ("bad", "good")}  # fmt: skip
    assert status == {"bad": "failed", "good": "complete"}
    res = json.loads((tmp_path / "p3" / "compare" / "results.json").read_text())
    est = pd.DataFrame(res["estimates"]).set_index(["run", "metric"])
    assert est.loc[("openai/bad", "mcq"), "unparseable"] == 4
    assert {r["run"]: r["status"] for r in res["runs"]} == status_names(status)


def status_names(status):
    return {f"openai/{m}": s for m, s in status.items()}
