"""edueval reads everything it writes (issue 39, 1).

Each reader of an edueval-written file or run folder gets that input from the command that
writes it, made once from the *smallest* valid input (only the required columns) and once from
the *largest* (every optional column), so that an optional column of the first input can never
become a required one downstream.  Commands run in process, models are the scripted server.

Readers covered, with their writers:

- ``compare``, ``malalgo score``, ``export inspect`` <- ``malalgo run`` (MalAlgoQA release format
  without grade/content/dok; generated questions with every column)
- ``compare``, ``tutor make-study``, ``export inspect`` <- ``tutor reply`` <- ``tutor import-ncte``
- ``study invite``/``export`` <- ``tutor make-study``; ``pairwise fit`` <- ``study export`` of
  that study answered in its app
- ``pairwise summarize`` <- ``pairwise fit``
- ``kt predict --params``, ``kt roster``, ``kt evaluate --params``, ``kt simulate --params`` <-
  ``kt fit`` / ``kt simulate``;
  ``kt evaluate`` <- ``kt predict``
- ``qgsms score``, ``compare``, ``export inspect`` <- ``qgsms run`` <- ``items pairs`` <- ``items
  simulate``
- ``turing assemble`` <- ``turing generate`` (a Phase-1 file, smallest and largest) and its filled-in
  worksheet
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from support.scripted_server import ScriptedServer, last_user_message


def _script(body: dict) -> str:
    """A letter picked by a hash of the prompt for MalAlgoQA and QG-SMS prompts; a short reply
    reusing the student's words for anything else."""
    text = last_user_message(body)
    digest = hashlib.sha256((body.get("model", "") + text).encode("utf-8")).digest()
    if any("Correct Choice" in str(m.get("content", "")) for m in body.get("messages", [])):
        return json.dumps({"Correct Choice": "ABCD"[digest[0] % 4]})
    words = text.split()
    return " ".join(["Good", "question,", *words[: 1 + digest[0] % 4], "is", "the", "answer."])


@pytest.fixture
def server(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("EDUEVAL_CACHE_DIR", str(tmp_path / ".cache"))
    with ScriptedServer(_script) as s:
        yield s


def _ok(res) -> None:
    assert res.code == 0, res.err


RELEASE_NAMES = {"id": "ID", "question": "Question", "answer": "Answer",
                 **{f"choice_{x}": f"Choice_{x}" for x in "ABCD"},
                 **{f"rationale_{x}": f"Rationale_{x}" for x in "ABCD"}}  # fmt: skip


def _questions(tmp_path: Path, size: str) -> Path:
    from edueval.misconceptions import generate_items

    q = generate_items(4, seed=4)
    path = tmp_path / f"questions-{size}.csv"
    if size == "smallest":  # the MalAlgoQA release's format: no grade, content or dok
        q = q[list(RELEASE_NAMES)].rename(columns=RELEASE_NAMES)
    else:
        q = q.assign(passage="Read the problem.")
    q.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("size", ["smallest", "largest"])
def test_malalgo_run_folders_are_read_back(cli, tmp_path, server, size) -> None:
    questions = _questions(tmp_path, size)
    out = tmp_path / "p3"
    _ok(cli("malalgo", "run", questions, "--model", "openai/A", "--model", "openai/B",
            "--base-url", server.url, "--out", out))  # fmt: skip
    runs = [out / "openai-A", out / "openai-B"]
    _ok(cli("compare", *runs, "--out", tmp_path / "cmp"))
    res = json.loads((tmp_path / "cmp" / "results.json").read_text())
    assert {e["metric"] for e in res["estimates"]} == {"mcq", "aia", "mia"}
    _ok(cli("malalgo", "score", runs[0] / "responses.csv", "--out", tmp_path / "score"))
    scored = json.loads((tmp_path / "score" / "results.json").read_text())
    ran = json.loads((runs[0] / "results.json").read_text())
    for metric in ("aia", "mia", "mcq"):  # the same numbers from the file read back
        assert scored[metric] == pytest.approx(ran[metric]), metric
    for log in ("log.json", "log.json", "log.eval", "log.eval"):  # its own log it replaces
        _ok(cli("export", "inspect", runs[0], "--out", tmp_path / log))
    assert json.loads((tmp_path / "log.json").read_text())["status"] in ("success", "error")


def _responses(tmp_path: Path, size: str) -> Path:
    """A response log from ``kt simulate``, cut to the required columns (smallest) or kept with
    every optional one: order, known, item (largest)."""
    sim = tmp_path / f"sim-{size}"
    extra = ("--items-per-skill", "2") if size == "largest" else ()
    assert_ok = cli_main("kt", "simulate", "--students", "30", "--skills", "2",
                         "--opportunities", "6", *extra, "--out", sim)  # fmt: skip
    assert assert_ok == 0
    df = pd.read_csv(sim / "responses.csv")
    if size == "smallest":
        df = df[["student", "skill", "correct"]]
    path = tmp_path / f"responses-{size}.csv"
    df.to_csv(path, index=False)
    return path


def cli_main(*args: object) -> int:
    from edueval.cli.main import main

    return main([str(a) for a in args])


@pytest.mark.parametrize("size", ["smallest", "largest"])
def test_kt_files_are_read_back(cli, tmp_path, size) -> None:
    data = _responses(tmp_path, size)
    variant = ("--multigs", "item") if size == "largest" else ()
    fit, pr = tmp_path / "fit", tmp_path / "pr"
    _ok(cli("kt", "fit", data, "--restarts", "1", *variant, "--out", fit))
    _ok(cli("kt", "predict", data, "--params", fit / "params.csv", "--out", pr))
    _ok(cli("kt", "evaluate", pr / "predictions.csv", "--params", fit / "params.csv",
            "--out", tmp_path / "ev"))  # fmt: skip
    _ok(cli("kt", "roster", fit / "params.csv", "--updates", data, "--out", tmp_path / "ro"))
    # kt simulate's own parameter file drives kt predict (wide or, with items, long); kt
    # simulate reads its own and kt fit's (wide, or long per item) back
    sim = tmp_path / f"sim-{size}"
    _ok(cli("kt", "predict", data, "--params", sim / "params.csv", "--out", tmp_path / "pr2"))
    for params in (sim / "params.csv", fit / "params.csv"):
        again = tmp_path / f"again-{params.parent.name}"
        _ok(cli("kt", "simulate", "--students", "5", "--opportunities", "3", "--params", params,
                "--out", again))  # fmt: skip
        assert ("item" in pd.read_csv(again / "responses.csv").columns) == (size == "largest")


NCTE_REQUIRED = ["obs_id", "exchange_idx", "student_text", "teacher_text"]


def _ncte(tmp_path: Path, size: str) -> Path:
    """Six NCTE exchanges: the required columns only, or every column of the release."""
    bundled = Path(__file__).resolve().parents[2] / "src/edueval/tutor/data/ncte-uptake"
    df = pd.read_csv(bundled / "uptake_data.csv", dtype=str, keep_default_na=False)
    df = df[df["teacher_text"].str.contains(r"\?")].head(6)
    if size == "smallest":
        df = df[NCTE_REQUIRED]
    path = tmp_path / f"ncte-{size}.csv"
    df.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("size", ["smallest", "largest"])
def test_tutor_and_study_files_are_read_back(cli, tmp_path, server, size) -> None:
    dialogues = tmp_path / "dialogues.jsonl"
    _ok(cli("tutor", "import-ncte", _ncte(tmp_path, size), "--out", dialogues))
    runs = []
    for model in ("A", "B"):
        runs.append(tmp_path / f"reply-{model}")
        _ok(cli("tutor", "reply", dialogues, "--model", f"openai/{model}", "--base-url",
                server.url, "--max-tokens", "40", "--out", runs[-1]))  # fmt: skip
    _ok(cli("compare", *runs, "--out", tmp_path / "cmp"))
    _ok(cli("export", "inspect", runs[0], "--out", tmp_path / "log.json"))
    study = tmp_path / "study"
    _ok(cli("tutor", "make-study", *(r / "replies.csv" for r in runs), "--select", "all",
            "--out", study))  # fmt: skip
    _ok(cli("study", "invite", study / "study.yaml", "--n", "2", "--out", tmp_path / "links.csv"))
    _ok(cli("study", "export", study / "study.yaml", "--out", tmp_path / "empty"))
    assert (tmp_path / "empty" / "comparisons.csv").exists()
    # participants answer in the study app; its export is read by pairwise fit, as exported
    n = _answer_study(study / "study.yaml", f"sqlite:///{tmp_path / 'answered.db'}", 3)
    db = ("--db", f"sqlite:///{tmp_path / 'answered.db'}")
    _ok(cli("study", "export", study / "study.yaml", *db, "--out", tmp_path / "answers"))
    comparisons = tmp_path / "answers" / "comparisons.csv"
    assert len(pd.read_csv(comparisons)) == n > 0
    fit = tmp_path / "fit"
    _ok(cli("pairwise", "fit", comparisons, "--method", "ml", "--min-comparisons", "1",
            "--out", fit))  # fmt: skip
    assert {"openai/A", "openai/B"} <= set(pd.read_csv(fit / "abilities.csv")["agent"])


def _answer_study(study_yaml: Path, db_url: str, n: int) -> int:
    """``n`` participants answer every item of the study in its app (FastAPI's TestClient, as a
    browser posts the forms): A, B or a tie in turn.  Returns the answers given."""
    import re

    from fastapi.testclient import TestClient

    from edueval.study import load_study
    from edueval.study.app import create_app

    def field(html: str, pattern: str) -> str:
        found = re.search(pattern, html)
        assert found, html[:300]
        return found.group(1)

    app = create_app(load_study(study_yaml), db_url, "admin-token-0123456789")
    given = 0
    with TestClient(app) as client:
        for row in app.state.db.invite([f"r{i}" for i in range(n)]):
            path = f"/p/{row['token']}"
            r = client.get(path)
            r = client.post(f"{path}/consent", data={"csrf": field(r.text, _CSRF), "agree": "yes"})
            while 'id="item-form"' in r.text:
                keys = sorted(set(re.findall(r'name="(q\d+)"', r.text)))
                recorded = "/a/" in str(r.url)  # the practice item is not recorded
                values = {
                    k: ("first", "second", "tie")[(given + i) % 3] for i, k in enumerate(keys)
                }
                r = client.post(
                    field(r.text, _ACTION), data={"csrf": field(r.text, _CSRF), **values}
                )
                given += len(keys) if recorded else 0
            assert "All your answers are saved" in r.text, r.text[:300]
    app.state.db.close()
    return given


_CSRF = r'name="csrf" value="([^"]+)"'
_ACTION = r'<form method="post" action="([^"]+)"'


def _verdict_script(body: dict) -> str:
    """QG-SMS's vanilla verdicts: (a) or (b) by a hash of the prompt and the model."""
    text = last_user_message(body)
    digest = hashlib.sha256((body.get("model", "") + text).encode("utf-8")).digest()
    return json.dumps({"better": "ab"[digest[0] % 2]})


@pytest.mark.parametrize("size", ["smallest", "largest"])
def test_items_and_qgsms_files_are_read_back(cli, tmp_path, monkeypatch, size) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("EDUEVAL_CACHE_DIR", str(tmp_path / ".cache"))
    room, pairs = tmp_path / "room", tmp_path / "pairs"
    _ok(cli("items", "simulate", "--students", "40", "--materials", "1", "--questions", "6",
            "--seed", "4", "--out", room))  # fmt: skip
    _ok(cli("items", "analyze", room / "responses.csv", room / "items.jsonl", "--out",
            tmp_path / "analysis"))  # fmt: skip
    _ok(cli("items", "pairs", room / "responses.csv", room / "items.jsonl", "--max-pairs", "2",
            "--out", pairs))  # fmt: skip
    table = pairs / "pairs.csv"
    if size == "smallest":  # the required columns only, and the truth (a TC pair needs its topic)
        table = tmp_path / "pairs-smallest.csv"
        df = pd.read_csv(pairs / "pairs.csv", dtype=str)
        kept = ["pair_id", "dimension", "q1", "q2", "better"]
        df.loc[df["dimension"] != "TC", kept].to_csv(table, index=False)
    runs = []
    with ScriptedServer(_verdict_script) as server:
        for model in ("A", "B"):
            runs.append(tmp_path / f"qgsms-{model}")
            _ok(cli("qgsms", "run", table, room / "items.jsonl", "--method", "vanilla",
                    "--model", f"openai/{model}", "--base-url", server.url, "--no-bt",
                    "--out", runs[-1]))  # fmt: skip
    _ok(cli("qgsms", "score", runs[0] / "judgements.csv", "--no-bt", "--out", tmp_path / "sc"))
    _ok(cli("compare", *runs, "--out", tmp_path / "cmp"))
    _ok(cli("export", "inspect", runs[0], "--out", tmp_path / "log.json"))


MCMC = ("--chains", "1", "--warmup", "30", "--draws", "30")


@pytest.mark.slow  # MCMC's compilation: a minute or two on a shared machine
@pytest.mark.parametrize("size", ["smallest", "largest"])
def test_pairwise_files_are_read_back(cli, tmp_path, size) -> None:
    imported = tmp_path / "imported"
    _ok(cli("pairwise", "import-teacher-test", "--bundled", "--out", imported))
    data = imported / "comparisons.csv"
    if size == "smallest":  # the comparisons table's required columns, two items
        df = pd.read_csv(data, dtype=str, keep_default_na=False)
        data = tmp_path / "comparisons-smallest.csv"
        df = df[df["item"].isin(df["item"].unique()[:2])]
        df[["item", "attribute", "rater", "first", "second", "outcome"]].to_csv(data, index=False)
    fit = tmp_path / "fit"
    _ok(cli("pairwise", "fit", data, *MCMC, "--out", fit))
    _ok(cli("pairwise", "summarize", fit / "abilities.csv", "--out", tmp_path / "sum1"))
    _ok(cli("pairwise", "summarize", fit, "--out", tmp_path / "sum2"))


@pytest.mark.parametrize("size", ["smallest", "largest"])
def test_pairwise_ml_fit_is_read_back_by_summarize(cli, tmp_path, size) -> None:
    """``pairwise fit --method ml`` writes its interval as ``alpha_ci_low/high`` (a Wald
    interval, no posterior): ``pairwise summarize`` reads it in the HDI's place."""
    imported = tmp_path / "imported"
    _ok(cli("pairwise", "import-teacher-test", "--bundled", "--out", imported))
    data = imported / "comparisons.csv"
    if size == "smallest":
        df = pd.read_csv(data, dtype=str, keep_default_na=False)
        data = tmp_path / "comparisons-smallest.csv"
        df = df[df["item"].isin(df["item"].unique()[:2])]
        df[["item", "attribute", "rater", "first", "second", "outcome"]].to_csv(data, index=False)
    fit = tmp_path / "fit"
    _ok(cli("pairwise", "fit", data, "--method", "ml", "--out", fit))
    assert "alpha_ci_low" in pd.read_csv(fit / "abilities.csv", nrows=0).columns
    _ok(cli("pairwise", "summarize", fit, "--out", tmp_path / "sum"))
    res = json.loads((tmp_path / "sum" / "results.json").read_text())
    assert res, res


def test_turing_simulate_example_is_read_by_analyze(cli, tmp_path) -> None:
    sim = tmp_path / "sim"
    _ok(cli("turing", "simulate", "--students", "10", "--questions", "4", "--reps", "3",
            "--sizes", "5", "--p-rules", "0.5", "--out", sim))  # fmt: skip
    _ok(cli("turing", "analyze", sim / "example_phase2.csv", "--out", tmp_path / "an"))


def _turing_script(body: dict) -> str:
    """turing generate's three roles: the generator writes q' = "What is a + b?" (a, b from a
    hash of the Phase-1 question) with its key, the second solve answers it, the AI writes the
    key plus one."""
    text = last_user_message(body)
    digest = hashlib.sha256(text.split("\n")[1].encode("utf-8")).digest()
    if "Write one new question" in text:
        a, b = 10 + digest[0] % 50, 10 + digest[1] % 50
        return json.dumps({"related_question": f"What is {a} + {b}?", "correct_answer": str(a + b)})
    if text.startswith("Solve this question:"):
        a, b = (int(x) for x in re.findall(r"\d+", text.split("\n")[1])[:2])
        return json.dumps({"answer": str(a + b)})
    q = re.search(r"What is (\d+) \+ (\d+)\?", text)
    assert q is not None, text[:200]
    return json.dumps({"distractor": str(int(q.group(1)) + int(q.group(2)) + 1)})


PHASE1 = [("s1", "What is 1/2 + 1/3?", "2/5", "5/6"), ("s2", "What is 1/2 + 1/3?", "2/6", "5/6"),
          ("s1", "What is 7 + 2 × 3?", "27", "13"), ("s2", "What is 7 + 2 × 3?", "13", "13"),
          ("s3", "What is 7 + 2 × 3?", "23", "13")]  # fmt: skip


@pytest.mark.parametrize("size", ["smallest", "largest"])
def test_turing_generate_files_are_read_by_assemble(cli, tmp_path, monkeypatch, size) -> None:
    """turing generate (from a Phase-1 file with the required columns only, or with the extra
    columns a simulated sample carries and a separate generator model) writes distractors.csv
    and the experts' worksheet; turing assemble reads both back, the worksheet filled in."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("EDUEVAL_CACHE_DIR", str(tmp_path / ".cache"))
    phase1 = pd.DataFrame(PHASE1, columns=["student", "question", "answer", "correct_answer"])
    models: tuple[str, ...] = ("--model", "openai/A")
    if size == "largest":
        phase1 = phase1.assign(family="arithmetic", params="{}", note="kept")
        models = (*models, "--generator-model", "openai/G")
    (tmp_path / "in").mkdir()
    phase1.to_csv(tmp_path / "in" / "phase1.csv", index=False)
    gen = tmp_path / "gen"
    with ScriptedServer(_turing_script) as server:
        _ok(cli("turing", "generate", tmp_path / "in" / "phase1.csv", *models, "--base-url",
                server.url, "--out", gen))  # fmt: skip
    ai = pd.read_csv(gen / "distractors.csv", dtype=str, keep_default_na=False)
    sheet = pd.read_csv(gen / "worksheet.csv", dtype=str, keep_default_na=False)
    assert len(ai) == 4 == len(sheet)  # the four wrong answers
    filled = tmp_path / "in" / "human.csv"
    sheet.assign(human_distractor=[str(int(k) + 2) for k in sheet["related_correct"]]).to_csv(
        filled, index=False
    )
    extra: tuple[object, ...] = ()
    if size == "largest":
        random = tmp_path / "in" / "random.csv"
        ai[["student", "question"]].assign(random_distractor="1000").to_csv(random, index=False)
        extra = ("--random", random, "--keep-disputed")
    out = tmp_path / "mcq"
    _ok(cli("turing", "assemble", gen / "distractors.csv", "--human", filled, *extra,
            "--out", out))  # fmt: skip
    mcqs = pd.read_csv(out / "mcqs.csv", dtype=str, keep_default_na=False)
    assert len(mcqs) == 4
    assert set(mcqs["student"]) == {"s1", "s2", "s3"}
    # each MCQ holds the key, the AI's and the expert's distractor of the files read
    by_tuple = ai.set_index(["student", "question"])
    for row in mcqs.to_dict("records"):
        options = {
            row[f"source_{i}"]: row[f"option_{i}"] for i in range(1, 5) if row[f"option_{i}"]
        }
        written = by_tuple.loc[(row["student"], row["question"])]
        assert options["ai"] == written["ai_distractor"]
        assert options["correct"] == written["related_correct"]
        assert int(options["human"]) == int(written["related_correct"]) + 2
