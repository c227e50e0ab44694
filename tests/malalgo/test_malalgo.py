"""P3 end to end against a scripted OpenAI-compatible server on loopback: the metrics equal what
the script implies, faults are retried, failures are counted, a re-run makes no HTTP calls."""

from __future__ import annotations

import contextlib
import json
import re

import numpy as np
import pandas as pd
import pytest

from edueval.cli.main import main
from edueval.malalgo import build_tasks, read_questions
from edueval.malalgo.pipeline import run_malalgo
from edueval.misconceptions import generate_items
from edueval.models import get_model
from edueval.models.budget import MaxFailures
from support.scripted_server import Faults, ScriptedServer, last_user_message

LETTERS = "ABCD"


@pytest.fixture(scope="module")
def questions_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("q") / "questions.csv"
    generate_items(12, seed=4).to_csv(path, index=False)
    return path


def perfect_script(questions: pd.DataFrame):
    """Answers like an oracle: reads the prompt, looks the choice's rationale up in the table."""
    by_question = {q["question"].strip(): q for q in questions.to_dict(orient="records")}

    def script(body):
        text = last_user_message(body)
        q = by_question[re.search(r"Question: (.*)", text).group(1).strip()]
        if re.search(r"^Choice: ", text, re.M):
            choice = re.search(r"^Choice: (.*)", text, re.M).group(1).strip()
            original = next(x for x in LETTERS if q[f"choice_{x}"].strip() == choice)
            block = text.split("Answer Rationales:")[1].split("\n\nChoice:")[0]
            shown = dict(re.findall(r"^([A-D])\. (.*)$", block, re.M))
            label = next(k for k, v in shown.items() if v.strip() == q[f"rationale_{original}"])
        else:
            label = q["answer"]
        return json.dumps({"Correct Choice": label})

    return script


def run(
    tmp_path,
    questions_file,
    script,
    *,
    faults=None,
    out="run",
    cache="cache",
    max_attempts=6,
    server=None,
    **kw,
):
    """``malalgo run`` against a scripted server (a new one, or ``server`` still running: the
    response cache is keyed by the server too); returns the results and the calls it made."""
    with (
        contextlib.nullcontext(server)
        if server
        else ScriptedServer(script, faults=faults) as server
    ):
        before = server.calls

        def opener(log_path):
            return get_model(
                "openai/scripted",
                base_url=server.url,
                cache_dir=tmp_path / cache,
                log_path=log_path,
                max_connections=8,
                max_attempts=max_attempts,
                retry_base_delay=0.001,
            )

        res = run_malalgo(
            tmp_path / out, questions_file, open_model=opener, model_name="openai/scripted", **kw
        )
        return res, server.calls - before


def test_perfect_judge_scores_100_with_faults_and_rerun_is_free(tmp_path, questions_file):
    q = read_questions(questions_file)
    faults = Faults(
        rate_429=0.2,
        rate_500=0.15,
        rate_malformed=0.1,
        rate_slow=0.05,
        slow_s=0.05,
        max_per_request=2,
        seed=3,
        retry_after=0,
    )
    with ScriptedServer(perfect_script(q), faults=faults) as server:
        res, calls = run(tmp_path, questions_file, None, server=server)
        again, calls_again = run(tmp_path, questions_file, None, out="run2", server=server)
    assert res["mcq"]["accuracy"] == 1.0 and res["aia"]["accuracy"] == 1.0
    assert res["mia"]["accuracy"] == 1.0
    assert res["n_failed"] == 0 and res["n_unparseable"] == 0
    assert res["n_prompts"] == 5 * len(q) and res["model_calls"]["retries"] > 0
    assert calls > res["n_prompts"]  # the faults cost extra HTTP calls
    lines = (tmp_path / "run" / "calls.jsonl").read_text().splitlines()
    logged = [json.loads(line) for line in lines]
    assert len(logged) == res["n_prompts"] and all("latency_s" in r for r in logged)
    assert calls_again == 0  # answered from the cache (the same model on the same server)
    assert again["mia"] == res["mia"]


def test_always_a_scores_exactly_what_the_shuffle_implies(tmp_path, questions_file):
    q = read_questions(questions_file)
    res, _ = run(tmp_path, questions_file, lambda body: '{"Correct Choice": "A"}', seed=7)
    # each question's rationales are shown in one order, so exactly one of its four choices has
    # target A: identification accuracy over all choices is exactly 1/4
    n_id = res["aia"]["n"] + res["mia"]["n"]
    assert res["aia"]["correct"] + res["mia"]["correct"] == n_id // 4
    tasks = [t for t in build_tasks(q, seed=7) if t.kind == "identify"]
    want_aia = sum(t.target == "A" for t in tasks if t.is_correct_choice)
    assert res["aia"]["correct"] == want_aia
    assert res["mcq"]["correct"] == int((q["answer"] == "A").sum())


def test_unparseable_and_failed_are_counted_not_dropped(tmp_path, questions_file):
    q = read_questions(questions_file)
    first_q = q["question"].iloc[0].strip()
    second_q = q["question"].iloc[1].strip()

    def script(body):
        text = last_user_message(body)
        if first_q in text:
            return "I am not sure."
        return '{"Correct Choice": "B"}'

    def rule(body, nth):  # every attempt at the second question's prompts fails
        return "500" if second_q in last_user_message(body) else None

    res, _ = run(tmp_path, questions_file, script, faults=Faults(rule=rule), max_attempts=2,
                 max_failures=MaxFailures(count=10))  # fmt: skip
    assert res["model_failures"] == {"failed": 5, "unparseable": 5, "calls": 60,
                                     "max_failures": "10", "allowed": 10,
                                     "complete": True}  # fmt: skip
    assert res["n_unparseable"] == 5 and res["n_failed"] == 5
    resp = pd.read_csv(tmp_path / "run" / "responses.csv")
    assert len(resp) == res["n_prompts"]
    assert not resp.loc[resp["status"].isin(["failed", "unparseable"]), "correct"].any()


def test_logprob_scoring_uses_the_letter_distribution(tmp_path, questions_file):
    from support.scripted_server import ScriptReply

    def script(body):  # generated letter C, but the distribution at that position prefers D
        toks = [
            ('{"', -0.1, {}),
            ("Correct", -0.1, {}),
            (' Choice": "', -0.1, {}),
            ("C", -1.0, {"C": -1.0, "D": -0.5, "A": -3.0}),
            ('"}', -0.1, {}),
        ]
        return ScriptReply('{"Correct Choice": "C"}', logprobs=toks)

    res, _ = run(tmp_path, questions_file, script, scoring="logprob", mcq=False)
    resp = pd.read_csv(tmp_path / "run" / "responses.csv")
    assert (resp["answer_label"] == "D").all() and (resp["status"] == "logprob").all()
    res2, _ = run(tmp_path, questions_file, script, scoring="generate", mcq=False, out="g")
    resp2 = pd.read_csv(tmp_path / "g" / "responses.csv")
    assert (resp2["answer_label"] == "C").all()


def test_score_command_reproduces_run_metrics(tmp_path, questions_file):
    q = read_questions(questions_file)
    res, _ = run(tmp_path, questions_file, perfect_script(q))
    assert (
        main(
            [
                "malalgo",
                "score",
                str(tmp_path / "run" / "responses.csv"),
                "--out",
                str(tmp_path / "s"),
            ]
        )
        == 0
    )
    again = json.loads((tmp_path / "s" / "results.json").read_text())
    assert again["mia"]["accuracy"] == res["mia"]["accuracy"]
    assert (tmp_path / "s" / "by_grade.csv").exists()


def test_release_column_names_are_read(tmp_path, questions_file):
    df = pd.read_csv(questions_file)
    ren = {
        "id": "ID",
        "question": "Question",
        "answer": "Answer",
        "grade": "Grade",
        "dok": "DOK",
        "content": "Content Classification",
        **{f"choice_{x}": f"Choice_{x}" for x in LETTERS},
        **{f"rationale_{x}": f"Rationale_{x}" for x in LETTERS},
    }
    path = tmp_path / "release.csv"
    df.rename(columns=ren).to_csv(path, index=False)
    got = read_questions(path)
    assert got["id"].tolist() == df["id"].astype(str).tolist()
    assert got["content"].tolist() == df["content"].tolist()


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: d.drop(columns=["rationale_C"]), "missing column 'rationale_C'"),
        (
            lambda d: d.assign(answer=["E"] + d["answer"].tolist()[1:]),
            "line 2, column 'answer': expected an answer letter",
        ),
        (lambda d: d.assign(id=["x", "x"] + d["id"].tolist()[2:]), "line 3: duplicate id"),
        (
            lambda d: d.assign(rationale_A=[""] + d["rationale_A"].tolist()[1:]),
            "line 2, column 'rationale_A'",
        ),
    ],
)
def test_bad_question_files(tmp_path, questions_file, capsys, mutate, expected):
    path = tmp_path / "bad.csv"
    mutate(pd.read_csv(questions_file)).to_csv(path, index=False)
    code = main(
        [
            "malalgo",
            "run",
            str(path),
            "--model",
            "openai/x",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and expected in err[0], err


def test_unreachable_server_is_one_line(tmp_path, questions_file, capsys):
    code = main(
        [
            "malalgo",
            "run",
            str(questions_file),
            "--model",
            "openai/x",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--out",
            str(tmp_path / "o"),
            "--no-cache",
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error:"), err


def test_mia_interval_from_few_questions_is_an_interval_and_says_what_it_is():
    from edueval.malalgo.metrics import clustered

    lo, hi, how = clustered(np.array([1, 0, 0, 1, 0, 0]), np.array([1, 1, 1, 2, 2, 2]))
    assert hi - lo > 0.3 and "2 questions counted once" in how  # was [0.333, 0.333]
    lo, hi, how = clustered(np.tile([1, 0, 0], 25), np.repeat(np.arange(25), 3))
    assert hi > lo and "SE is 0" in how  # every question at 1/3: no evidence of precision


@pytest.mark.parametrize("questions", [2, 5, 10, 19, 20, 50])
def test_mia_interval_holds_its_level_at_every_number_of_questions(questions):
    """Coverage of the 95% interval of a pooled rate over 3 choices per question whose rates
    vary by question (Beta(2, 3): strong clustering), below and above the clustered threshold."""
    from edueval.malalgo.metrics import clustered

    rng = np.random.default_rng(questions)
    reps, hits = 1500, 0
    cluster = np.repeat(np.arange(questions), 3)
    for _ in range(reps):
        rate = rng.beta(2, 3, questions)
        y = (rng.random((questions, 3)) < rate[:, None]).astype(int).ravel()
        lo, hi, _ = clustered(y, cluster)
        hits += lo <= 0.4 <= hi
    assert hits / reps >= 0.95 - 3 * np.sqrt(0.05 * 0.95 / reps), hits / reps
