"""turing generate against a scripted OpenAI-compatible server; turing assemble's rules."""

from __future__ import annotations

import json
import re
from contextlib import ExitStack

import numpy as np
import pandas as pd
import pytest

from edueval.cli.main import main
from edueval.misconceptions import (
    FAMILIES,
    Student,
    correct_answer,
    diagnose,
    open_answer,
    rule_answer,
    sample_problem,
)
from edueval.models import get_model
from edueval.models.budget import MaxFailures
from edueval.runs import RunFailed
from edueval.turing.assemble import assemble_mcqs, choices_from_positions, nearby_distractor
from edueval.turing.data import same_answer
from edueval.turing.generate_runs import generate_run
from support.scripted_server import Faults, ScriptedServer, last_user_message


@pytest.fixture(scope="module")
def phase1_file(tmp_path_factory):
    """Phase 1 from the mal-rule library: 6 students holding rules answer 4 questions each;
    one student holds nothing and is very able (no error)."""
    rng = np.random.default_rng(3)
    students = [
        Student(f"s{i}", ability=-1.0, malrules=(r,))
        for i, r in enumerate(["add_across", "left_to_right", "smaller_from_larger"] * 2)
    ] + [Student("s_perfect", ability=50.0)]
    questions = {}
    for fam, rule in (
        ("fraction_addition", "add_across"),
        ("order_of_operations", "left_to_right"),
        ("whole_subtraction", "smaller_from_larger"),
        ("fraction_addition", "add_across"),
    ):
        q = sample_problem(rng, family=fam, rule=rule)
        questions[f"q{len(questions) + 1}"] = q
    rows = []
    for s in students:
        for qid, q in questions.items():
            rows.append(
                {
                    "student": s.id,
                    "question": qid,
                    "answer": open_answer(s, q, rng),
                    "correct_answer": correct_answer(q),
                    "text": q.question,
                }
            )
    df = pd.DataFrame(rows)
    df = df.rename(columns={"question": "question_id"})
    # the prompt needs the question text: the file's `question` column holds the text
    df["question"] = df["text"]
    path = tmp_path_factory.mktemp("p1") / "phase1.csv"
    df[["student", "question", "answer", "correct_answer"]].to_csv(path, index=False)
    return path, questions


def oracle_script(questions):
    """The three roles of ``turing generate`` on one scripted server, told apart by prompt:
    the generator writes q′ (a new problem of the Phase-1 question's family) and its key; the
    second solve answers q′ correctly; the AI is a perfect conditioned AI - it diagnoses the
    student's answer with the library and answers with that rule's answer on q′ (unconditioned,
    or for a slip: the family's first rule)."""
    by_text = {q.question: q for q in questions.values()}
    written = {}  # q′ text -> problem

    def script(body):
        text = last_user_message(body)
        if text.startswith("Students were asked:") and "Write one new question" in text:
            q = by_text[text.split("\n")[1]]
            q2 = sample_problem(np.random.default_rng(len(q.question)), family=q.family)
            written[q2.question] = q2
            return json.dumps(
                {"related_question": q2.question, "correct_answer": correct_answer(q2)}
            )
        if text.startswith("Solve this question:"):
            return json.dumps({"answer": correct_answer(written[text.split("\n")[1]])})
        lines = text.split("\n")
        q = by_text[lines[1]]
        q2 = written[lines[lines.index(next(x for x in lines if "new question" in x)) + 1]]
        m = re.search(r"the student answered (.+)\.\n", text)
        family_rules = list(FAMILIES[q.family].rules)
        diag = diagnose(q, m.group(1)) if m is not None else ()  # slips diagnose to nothing
        for rule in [*diag, *family_rules]:
            wrong = rule_answer(q2, rule)
            if wrong is not None and not same_answer(wrong, correct_answer(q2)):
                return json.dumps({"distractor": wrong})
        return json.dumps({"distractor": "999999"})

    return script


def run_generate(tmp_path, path, script, *, faults=None, out="gen", server=None, **kw):
    """``generate_run`` against ``server`` (default: a new one with ``script``); returns the
    results and the calls this run made to the server."""
    with ExitStack() as stack:
        if server is None:
            server = stack.enter_context(ScriptedServer(script, faults=faults))
        before = server.calls

        def opener(log_path):
            return get_model(
                "openai/scripted",
                base_url=server.url,
                cache_dir=tmp_path / "cache",
                log_path=log_path,
                max_attempts=2,
                retry_base_delay=0.001,
            )

        res = generate_run(tmp_path / out, path, open_model=opener, model_name="scripted", **kw)
        return res, server.calls - before


def test_generate_conditioned_oracle(tmp_path, phase1_file):
    path, questions = phase1_file
    server = ScriptedServer(oracle_script(questions)).start()
    try:
        _check_conditioned_oracle(tmp_path, path, questions, server)
    finally:
        server.stop()


def _check_conditioned_oracle(tmp_path, path, questions, server):
    res, calls = run_generate(tmp_path, path, None, server=server)
    table = pd.read_csv(tmp_path / "gen" / "distractors.csv", dtype=str)
    p1 = pd.read_csv(path, dtype=str)
    n_wrong = sum(
        not same_answer(a, c) for a, c in zip(p1["answer"], p1["correct_answer"], strict=True)
    )
    assert res["n_tuples"] == len(table) == n_wrong
    # one q′ per Phase-1 question (generator), one key check per q′ that is not a bare
    # expression, one AI call per distinct prompt (same question, same wrong answer)
    n_q = table["question"].nunique()
    by_source = res["requests_by_source"]
    assert by_source["generator"] == n_q == res["n_questions"]
    assert by_source["key_check"] == res["key_method"]["second_solve"] < n_q
    assert by_source["ai"] == n_wrong
    distinct_ai = len(table.drop_duplicates(["question", "phase1_answer"]))
    assert calls == by_source["generator"] + by_source["key_check"] + distinct_ai
    assert res["status"]["ok"] == n_wrong
    assert res["key_check"] == {"agree": n_q, "disagree": 0, "unchecked": 0}
    assert res["students_without_error"] == ["s_perfect"]
    assert (table.groupby("question")["related_question"].nunique() == 1).all()
    assert not any(
        same_answer(a, c)
        for a, c in zip(table["ai_distractor"], table["related_correct"], strict=True)
    )
    assert (tmp_path / "gen" / "calls.jsonl").read_text().strip()
    # re-run on the same server: answered from the cache (another server would not share it)
    _, calls2 = run_generate(tmp_path, path, None, server=server, out="gen2")
    assert calls2 == 0


def test_generate_unconditioned_one_call_per_question(tmp_path, phase1_file):
    path, questions = phase1_file
    res, calls = run_generate(tmp_path, path, oracle_script(questions), unconditioned=True)
    table = pd.read_csv(tmp_path / "gen" / "distractors.csv", dtype=str)
    assert res["requests_by_source"]["ai"] == table["question"].nunique()
    assert (table.groupby("question")["ai_distractor"].nunique() == 1).all()
    assert (table["conditioned"] == "False").all()


def test_generate_records_failures_unparseable_and_invalid(tmp_path, phase1_file):
    path, questions = phase1_file
    good = oracle_script(questions)
    p1 = pd.read_csv(path, dtype=str)
    texts = list(dict.fromkeys(p1["question"]))

    def is_ai(text):
        return '{"distractor"' in text

    def script(body):
        text = last_user_message(body)
        if is_ai(text) and texts[1] in text:
            return "Sorry, I cannot help with that."
        if is_ai(text) and texts[2] in text:
            lines = text.split("\n")
            key = next(x for x in lines if x.startswith("(correct answer: "))
            return json.dumps({"distractor": key[len("(correct answer: ") : -2]})
        return good(body)

    def rule(body, nth):
        text = last_user_message(body)
        return "500" if is_ai(text) and texts[0] in text else None

    res, _ = run_generate(tmp_path, path, script, faults=Faults(rule=rule),
                          max_failures=MaxFailures(share=1.0))  # fmt: skip
    table = pd.read_csv(tmp_path / "gen" / "distractors.csv", dtype=str)
    assert res["model_failures"]["failed"] == 3 and res["complete"]
    assert res["failed_calls_by_source"] == {"generator": 0, "key_check": 0, "ai": 3}
    # under the default limit (5% of the calls: one) the same run is marked failed
    with pytest.raises(RunFailed, match=r"3 of \d+ model calls failed"):
        run_generate(tmp_path, path, script, faults=Faults(rule=rule), out="gen2")
    assert json.loads((tmp_path / "gen2" / "config.json").read_text())["status"] == "failed"
    by_q = table.groupby("question")["ai_status"].agg(set)
    assert by_q[texts[0]] == {"failed"}
    assert by_q[texts[1]] == {"unparseable"}
    assert by_q[texts[2]] == {"invalid"}
    assert sum(res["status"].values()) == len(table) == res["n_tuples"]
    # every tuple keeps its q′ and its row in the expert's worksheet
    sheet = pd.read_csv(tmp_path / "gen" / "worksheet.csv", dtype=str)
    assert len(sheet) == len(table) and (table["generator_status"] == "ok").all()


def test_nearby_distractor_avoids_taken_values():
    rng = np.random.default_rng(0)
    for correct in ("18", "5/6", "4.65", "$57.60", "25%"):
        for _ in range(20):
            d = nearby_distractor(correct, ["19", "1", "4.66"], rng)
            assert d is not None and not same_answer(d, correct)
            assert not any(same_answer(d, t) for t in ["19", "1", "4.66"])
    assert nearby_distractor("a triangle", [], rng) is None
    d = nearby_distractor("25 apples", [], rng)
    assert d.endswith(" apples") and not same_answer(d, "25")


def _ai_frame(rows):
    return pd.DataFrame(
        rows,
        columns=[
            "student",
            "question",
            "related_question",
            "related_correct",
            "ai_distractor",
            "status",
        ],
    )


def test_assemble_duplicates_and_positions():
    ai = _ai_frame(
        [
            ("s1", "q1", "Q'1", "7", "12", "ok"),
            ("s1", "q2", "Q'2", "1/2", "2/4", "ok"),  # equals the correct answer: dropped
            ("s2", "q1", "Q'1", "7", "12", "ok"),
            ("s2", "q3", "Q'3", "9", "", "failed"),  # shown without an AI option
        ]
    )
    human = pd.DataFrame(
        [("s1", "q1", "12.0"), ("s1", "q2", "3/4"), ("s2", "q1", "15"), ("s2", "q3", "11")],
        columns=["student", "question", "human_distractor"],
    )
    table, info = assemble_mcqs(ai, human, None, seed=5)
    assert info["stats"]["mcqs_without_ai"] == 1 and len(table) == 4
    assert info["stats"]["dropped_equal_to_correct"] == 1
    t = table.set_index(["student", "question"])
    failed = t.loc[("s2", "q3")]
    assert failed["ai_missing"] == "failed" and pd.isna(failed["position_ai"])
    assert failed["n_options"] == 3 and "ai" not in "".join(
        failed[[f"source_{i}" for i in range(1, 5)]]
    )
    shared = t.loc[("s1", "q1")]
    assert shared["n_options"] == 3
    assert shared["position_ai"] == shared["position_human"]
    assert shared[f"source_{int(shared['position_ai'])}"] == "ai+human"
    assert pd.isna(t.loc[("s1", "q2"), "position_ai"])
    full = t.loc[("s2", "q1")]
    assert full["n_options"] == 4
    assert sorted(int(full[f"position_{s}"]) for s in ("correct", "ai", "human", "random")) == [
        1,
        2,
        3,
        4,
    ]
    assert full[f"option_{int(full['position_correct'])}"] == "7"
    # the same seed gives the same MCQs; another seed another order somewhere
    again, _ = assemble_mcqs(ai, human, None, seed=5)
    pd.testing.assert_frame_equal(table, again)
    # positions chosen -> sources for turing analyze
    resp = pd.DataFrame(
        [("s1", "q1", int(shared["position_ai"])), ("s2", "q1", int(full["position_random"]))],
        columns=["student", "question", "position"],
    )
    ch = choices_from_positions(table, resp)
    assert list(ch["chosen"]) == ["ai+human", "random"]


def test_assemble_positions_are_balanced():
    n = 400
    ai = _ai_frame([(f"s{i}", "q", "Q'", "10", "20", "ok") for i in range(n)])
    human = pd.DataFrame(
        [(f"s{i}", "q", "30") for i in range(n)],
        columns=["student", "question", "human_distractor"],
    )
    table, _ = assemble_mcqs(ai, human, None, seed=1)
    counts = table["position_ai"].value_counts()
    assert set(counts.index) == {1, 2, 3, 4}
    assert counts.min() > 70  # ~100 each


def test_cli_assemble_and_missing_human_row(tmp_path, capsys):
    ai = _ai_frame([("s1", "q1", "Q'1", "7", "12", "ok"), ("s2", "q1", "Q'1", "7", "11", "ok")])
    ai.to_csv(tmp_path / "ai.csv", index=False)
    pd.DataFrame([("s1", "q1", "15")], columns=["student", "question", "human_distractor"]).to_csv(
        tmp_path / "h.csv", index=False
    )
    code = main(
        [
            "turing",
            "assemble",
            str(tmp_path / "ai.csv"),
            "--human",
            str(tmp_path / "h.csv"),
            "--out",
            str(tmp_path / "a"),
        ]
    )
    assert code == 2
    assert "no human distractor for student 's2'" in capsys.readouterr().err
    pd.DataFrame(
        [("s1", "q1", "15"), ("s2", "q1", "11")],
        columns=["student", "question", "human_distractor"],
    ).to_csv(tmp_path / "h.csv", index=False)
    code = main(
        [
            "turing",
            "assemble",
            str(tmp_path / "ai.csv"),
            "--human",
            str(tmp_path / "h.csv"),
            "--out",
            str(tmp_path / "a"),
        ]
    )
    assert code == 0
    mcqs = pd.read_csv(tmp_path / "a" / "mcqs.csv")
    assert len(mcqs) == 2 and (tmp_path / "a" / "results.json").exists()


def test_generate_phase1_without_any_error_is_rejected(tmp_path, capsys):
    p1 = tmp_path / "p1.csv"
    p1.write_text("student,question,answer,correct_answer\ns1,a,1/2,0.5\ns2,a,3,3\n")
    code = main(
        [
            "turing",
            "generate",
            str(p1),
            "--model",
            "openai/x",
            "--base-url",
            "http://127.0.0.1:9",
            "--out",
            str(tmp_path / "g"),
        ]
    )
    assert code == 2
    assert "no misconception tuples" in capsys.readouterr().err
