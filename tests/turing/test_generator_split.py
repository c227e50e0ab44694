"""The imitation game's generator split (issue 23): f_LLM writes q′ and its key, the AI under test
only a distractor for that q′; q′'s key is checked; answers compare by value; a missing AI
distractor is a miss, not a dropped tuple; the expert's worksheet is blinded."""

from __future__ import annotations

import json
from fractions import Fraction

import pandas as pd
import pytest

from edueval.cli.main import main
from edueval.turing.analyze import analyze_choices
from edueval.turing.assemble import assemble_mcqs, choices_from_positions
from edueval.turing.data import misconception_tuples, parse_number, same_answer
from edueval.turing.keycheck import evaluate_question, key_check
from support.scripted_server import Faults, ScriptedServer, last_user_message

# Phase 1: three questions; q′ of the first two are bare expressions (evaluated), of the third a
# word problem (solved a second time). Keys of q′ are computed by hand below.
PHASE1 = [
    ("s1", "What is 1/2 + 1/3?", "2/5", "5/6"),
    ("s2", "What is 1/2 + 1/3?", "2/5", "5/6"),
    ("s3", "What is 1/2 + 1/3?", "0.8333", "5/6"),  # right, written as a rounded decimal
    ("s1", "What is 7 + 2 × 3?", "27", "13"),
    ("s2", "What is 7 + 2 × 3?", "13", "13"),
    ("s3", "What is 7 + 2 × 3?", "27", "13"),
    ("s1", "Ann has 20 apples and buys 5 more. How many apples?", "25 apples", "25"),
    ("s2", "Ann has 20 apples and buys 5 more. How many apples?", "15", "25"),
    ("s3", "Ann has 20 apples and buys 5 more. How many apples?", "2,500", "25"),
]
#: what the generator G writes for each Phase-1 question: (q′, key)
QPRIME = {
    "What is 1/2 + 1/3?": ("What is 1/4 + 1/3?", "7/12"),
    "What is 7 + 2 × 3?": ("What is 9 + 4 × 5?", "29"),
    "Ann has 20 apples and buys 5 more. How many apples?": (
        "Ben has 31 pears and buys 8 more. How many pears does he have?",
        "39",
    ),
}
SOLVED = {"Ben has 31 pears and buys 8 more. How many pears does he have?": "39 pears"}


@pytest.fixture
def phase1(tmp_path):
    path = tmp_path / "phase1.csv"
    pd.DataFrame(PHASE1, columns=["student", "question", "answer", "correct_answer"]).to_csv(
        path, index=False
    )
    return path


def _role(text: str) -> str:
    if "Write one new question" in text:
        return "generator"
    if text.startswith("Solve this question:"):
        return "solve"
    if '{"distractor"' in text:
        return "ai"
    return "other"


class Script:
    """Generator G and AI A on one scripted server; every request body kept per model."""

    def __init__(self, qprime=None, solved=None):
        self.qprime = qprime or QPRIME
        self.solved = solved or SOLVED
        self.bodies: dict[str, list[dict]] = {}

    def __call__(self, body):
        self.bodies.setdefault(body["model"], []).append(body)
        text = last_user_message(body)
        role = _role(text)
        if role == "generator":
            rq, key = self.qprime[text.split("\n")[1]]
            return json.dumps({"related_question": rq, "correct_answer": key})
        if role == "solve":
            return json.dumps({"answer": self.solved[text.split("\n")[1]]})
        if role == "ai":  # a fixed wrong answer per q′: the key plus 100
            rq = next(q for q, _ in self.qprime.values() if q in text)
            key = next(k for q, k in self.qprime.values() if q == rq)
            return json.dumps({"distractor": str(Fraction(key) + 100)})
        raise AssertionError(f"unexpected request: {text[:80]}")


def _generate(tmp_path, monkeypatch, script, *extra, faults=None, out="gen"):
    monkeypatch.setenv("EDUEVAL_CACHE_DIR", str(tmp_path / "cache"))
    with ScriptedServer(script, faults=faults) as server:
        code = main(["turing", "generate", str(tmp_path / "phase1.csv"), "--base-url", server.url,
                     "--max-failures", "100%", "--out", str(tmp_path / out), *extra])  # fmt: skip
    assert code == 0
    run = tmp_path / out
    return (
        json.loads((run / "results.json").read_text()),
        json.loads((run / "config.json").read_text()),
        pd.read_csv(run / "distractors.csv", dtype=str, keep_default_na=False),
        pd.read_csv(run / "worksheet.csv", dtype=str, keep_default_na=False),
    )


def test_the_ai_only_writes_distractors_for_the_generators_question(tmp_path, monkeypatch, phase1):
    script = Script()
    res, config, table, sheet = _generate(
        tmp_path, monkeypatch, script, "--generator-model", "openai/G", "--model", "openai/A"
    )
    assert set(script.bodies) == {"G", "A"}
    g_texts = [last_user_message(b) for b in script.bodies["G"]]
    a_texts = [last_user_message(b) for b in script.bodies["A"]]
    # G: one q′ per Phase-1 question, one second solve (the word problem); no student's answer
    assert sorted(_role(t) for t in g_texts) == ["generator"] * 3 + ["solve"]
    assert not any("student answered" in t or "25 apples" in t for t in g_texts)
    # A: only distractors, each for a q′ that G wrote, never asked to write a question or key
    assert a_texts and all(_role(t) == "ai" for t in a_texts)
    for body, text in zip(script.bodies["A"], a_texts, strict=True):
        schema = body["response_format"]["json_schema"]["schema"]
        assert set(schema["properties"]) == {"distractor"}
        assert "Write" not in text and "related_question" not in text
        assert sum(rq in text for rq, _ in QPRIME.values()) == 1
    # tuples: "25 apples" and "0.8333" are right answers; "2,500" is not 25
    assert res["n_tuples"] == len(table) == 6
    assert res["n_questions"] == 3
    for row in table.itertuples():
        assert (row.related_question, row.related_correct) == QPRIME[row.question]
        assert row.ai_distractor == str(Fraction(row.related_correct) + 100)
    assert res["key_method"] == {"evaluated": 2, "second_solve": 1}
    assert res["key_check"] == {"agree": 3, "disagree": 0, "unchecked": 0}
    assert res["requests_by_source"] == {"generator": 3, "key_check": 1, "ai": 6}
    assert config["params"]["generator_model"] == "openai/G"
    assert config["params"]["model"] == "openai/A"
    assert config["params"]["generator_same_as_model"] is False
    # the expert's worksheet: the same q′ and key, no AI distractor anywhere (blinded)
    assert not [c for c in sheet.columns if c.startswith("ai")]
    assert not any(d in sheet.to_string() for d in table["ai_distractor"])
    assert list(sheet["related_question"]) == list(table["related_question"])
    assert (sheet["human_distractor"] == "").all()
    calls = [json.loads(x) for x in (tmp_path / "gen" / "calls.jsonl").read_text().splitlines()]
    by_model = {(c["model"], c["tag"].split(":")[0]) for c in calls}
    assert by_model == {("openai/G", "gen"), ("openai/G", "key"), ("openai/A", "ai")}


def test_default_generator_is_the_model_in_separate_calls(tmp_path, monkeypatch, phase1):
    script = Script()
    res, config, table, _ = _generate(tmp_path, monkeypatch, script, "--model", "openai/A")
    assert set(script.bodies) == {"A"}
    roles = [_role(last_user_message(b)) for b in script.bodies["A"]]
    assert roles.count("generator") == 3 and roles.count("solve") == 1
    for b in script.bodies["A"]:
        text = last_user_message(b)
        if _role(text) != "ai":
            assert "student answered" not in text and "2/5" not in text
    assert config["params"]["generator_model"] == "openai/A"
    assert config["params"]["generator_same_as_model"] is True
    assert (table["ai_status"] == "ok").all()


@pytest.mark.parametrize(
    ("answer", "correct", "misconception"),
    [
        ("25 apples", "25", False),
        ("x = 25", "25", False),
        ("0.8333", "5/6", False),
        ("0.83", "5/6", False),
        ("0.8", "5/6", True),  # one decimal place is not read as a rounded value
        ("3", "3.4", True),
        ("3437", "3438", True),  # no relative tolerance between exact values
        ("2,500", "2500", False),
        ("2,500", "25", True),
        ("$57.60", "57.6", False),
        ("50%", "0.5", False),
        ("33.33%", "1/3", False),
        ("0.25%", "25%", True),
        ("1 1/2", "3/2", False),
        ("400π", "400", True),
        ("78.54", "25π", False),
        ("3 and 4", "3", True),
        ("A Triangle.", "a triangle", False),
    ],
)
def test_misconception_tuples_compare_by_value(answer, correct, misconception):
    df = pd.DataFrame(
        [("s", "q", answer, correct), ("t", "q", "wrong", "right")],
        columns=["student", "question", "answer", "correct_answer"],
    )
    got = list(misconception_tuples(df)["student"])
    assert got == (["s", "t"] if misconception else ["t"])
    assert same_answer(answer, correct) is same_answer(correct, answer) is (not misconception)


def test_parse_number_units_and_spans():
    n = parse_number("Ann has 2,500 apples")
    assert n.value == 2500 and n.span == (8, 13)
    assert parse_number("-1 1/2 cups").value == Fraction(-3, 2)
    assert parse_number("0.125").places == 3
    assert parse_number("25π/4").pi and parse_number("25π/4").value == Fraction(25, 4)
    assert parse_number("1/0") is None and parse_number("3, 4") is None
    assert parse_number("no number") is None


@pytest.mark.parametrize(
    ("question", "value"),
    [
        ("What is 39 × 36?", Fraction(1404)),
        ("What is 1/4 + 1/2? Write the answer as a fraction in lowest terms.", Fraction(3, 4)),
        ("What is the value of 75 − 5 × 9 + 8?", Fraction(38)),
        ("Compute 12 - (3 + 4) × 2.", Fraction(-2)),
        ("What is 2,869 + 569?", Fraction(3438)),
        ("Evaluate 2^10 ÷ 8.", Fraction(128)),
        ("What is 3 x 4?", Fraction(12)),
        ("What is the value of x² + 5x when x = 9?", None),  # a further number: not bare
        ("Divide 2/7 by 5/7.", None),
        ("What is 5?", None),  # no operation
        ("What is 1/0?", None),
        ("What is " + " + ".join(["1"] * 2000) + "?", None),  # too long to be read
    ],
)
def test_evaluate_question(question, value):
    assert evaluate_question(question) == value


def test_key_check_outcomes():
    assert key_check("3/4", evaluated=Fraction(3, 4)) == "agree"
    assert key_check("0.75", evaluated=Fraction(3, 4)) == "agree"
    assert key_check("4/5", evaluated=Fraction(3, 4)) == "disagree"
    assert key_check("a triangle", evaluated=Fraction(3)) == "disagree"
    assert key_check("39", answer="39 pears") == "agree"
    assert key_check("39", answer="38") == "disagree"
    assert key_check("39", answer=None) == "unchecked"


def test_key_check_flags_a_wrong_key(tmp_path, monkeypatch, phase1):
    wrong = dict(QPRIME)
    wrong["What is 1/2 + 1/3?"] = ("What is 1/4 + 1/3?", "2/7")  # evaluated: 7/12
    wrong["Ann has 20 apples and buys 5 more. How many apples?"] = (
        "Ben has 31 pears and buys 8 more. How many pears does he have?",
        "23",  # the second solve says 39
    )
    res, _, table, sheet = _generate(
        tmp_path, monkeypatch, Script(wrong), "--generator-model", "openai/G", "--model", "openai/A"
    )
    flags = table.groupby("question")["key_check"].agg(set)
    assert flags["What is 1/2 + 1/3?"] == {"disagree"}
    assert flags["What is 7 + 2 × 3?"] == {"agree"}
    assert flags["Ann has 20 apples and buys 5 more. How many apples?"] == {"disagree"}
    assert res["key_check"] == {"agree": 1, "disagree": 2, "unchecked": 0}
    assert res["tuples_key_disputed"] == 4
    assert set(sheet.loc[sheet["key_check"] == "disagree", "question"]) == {
        "What is 1/2 + 1/3?",
        "Ann has 20 apples and buys 5 more. How many apples?",
    }
    # turing assemble leaves disputed keys out by default, keeps them (flagged) on request
    human = sheet.assign(human_distractor="1000")
    mcqs, info = assemble_mcqs(table, human, None, seed=0)
    assert len(mcqs) == 2 and info["stats"]["excluded_key_disputed"] == 4
    kept, info = assemble_mcqs(table, human, None, seed=0, keep_disputed=True)
    assert len(kept) == 6 and (kept["key_check"] == "disagree").sum() == 4
    assert info["stats"]["kept_key_disputed"] == 4


def test_key_check_unchecked_when_the_second_solve_fails(tmp_path, monkeypatch, phase1):
    def rule(body, nth):
        return "400" if last_user_message(body).startswith("Solve this question:") else None

    res, _, table, _ = _generate(
        tmp_path, monkeypatch, Script(), "--model", "openai/A", faults=Faults(rule=rule)
    )
    assert set(table.loc[table["key_method"] == "second_solve", "key_check"]) == {"unchecked"}
    assert res["key_check"] == {"agree": 2, "disagree": 0, "unchecked": 1}
    assert res["failed_calls_by_source"] == {"generator": 0, "key_check": 1, "ai": 0}


def test_a_failed_ai_call_is_a_miss_not_a_dropped_tuple(tmp_path, monkeypatch, phase1):
    def rule(body, nth):  # the AI's calls for one question fail; the generator's do not
        text = last_user_message(body)
        return "400" if _role(text) == "ai" and "What is 7 + 2 × 3?" in text else None

    res, _, table, sheet = _generate(
        tmp_path, monkeypatch, Script(), "--generator-model", "openai/G", "--model", "openai/A",
        faults=Faults(rule=rule),
    )  # fmt: skip
    assert res["failed_calls_by_source"] == {"generator": 0, "key_check": 0, "ai": 2}
    assert res["ai_status"]["failed"] == 2 and len(table) == 6 and len(sheet) == 6
    (tmp_path / "human.csv").write_text(sheet.assign(human_distractor="1000").to_csv(index=False))
    code = main(["turing", "assemble", str(tmp_path / "gen" / "distractors.csv"), "--human",
                 str(tmp_path / "human.csv"), "--out", str(tmp_path / "mcq")])  # fmt: skip
    assert code == 0
    mcqs = pd.read_csv(tmp_path / "mcq" / "mcqs.csv", dtype={"ai_missing": str})
    stats = json.loads((tmp_path / "mcq" / "results.json").read_text())
    assert len(mcqs) == 6 and stats["mcqs_without_ai"] == 2
    missing = mcqs[mcqs["ai_missing"].fillna("") != ""]
    assert set(missing["ai_missing"]) == {"failed"} and missing["position_ai"].isna().all()
    # every student picks the AI's option where there is one, else the human's: the AI is
    # chosen in 4 of 6 MCQs (dropping the 2 would have made it 4 of 4)
    pos = mcqs["position_ai"].fillna(mcqs["position_human"]).astype(int)
    choices = choices_from_positions(mcqs, mcqs[["student", "question"]].assign(position=pos))
    rates = analyze_choices(choices).rates.set_index("source")["p"]
    assert rates["ai"] == pytest.approx(4 / 6) and rates["human"] == pytest.approx(2 / 6)


def test_assemble_reads_a_human_worksheet_with_rows_left_empty():
    ai = pd.DataFrame(
        [("s1", "q1", "Q'1", "7", "12", "ok", "ok", "agree"),
         ("s2", "q1", "Q'2", "9", "11", "ok", "ok", "disagree")],
        columns=["student", "question", "related_question", "related_correct", "ai_distractor",
                 "ai_status", "generator_status", "key_check"],
    )  # fmt: skip
    human = pd.DataFrame(
        [("s1", "q1", "15"), ("s2", "q1", None)],
        columns=["student", "question", "human_distractor"],
    )
    table, info = assemble_mcqs(ai, human, None, seed=0)  # the disputed row needs no distractor
    assert list(table["student"]) == ["s1"] and info["stats"]["excluded_key_disputed"] == 1
    with pytest.raises(Exception, match="no human distractor for student 's2'"):
        assemble_mcqs(ai, human, None, seed=0, keep_disputed=True)


def test_a_question_the_generator_did_not_write_drops_the_tuple_for_every_source(
    tmp_path, monkeypatch, phase1
):
    broken = dict(QPRIME)
    broken["What is 7 + 2 × 3?"] = ("29", "29")  # only an answer: not a question
    script = Script(broken)
    res, _, table, sheet = _generate(
        tmp_path, monkeypatch, script, "--generator-model", "openai/G", "--model", "openai/A"
    )
    assert res["generator_status"]["invalid"] == 1 and res["tuples_without_question"] == 2
    no_q = table[table["question"] == "What is 7 + 2 × 3?"]
    assert set(no_q["ai_status"]) == {"no_question"} and set(no_q["key_check"]) == {""}
    assert "What is 7 + 2 × 3?" not in set(sheet["question"]) and len(sheet) == 4
    assert not any("7 + 2 × 3" in last_user_message(b) for b in script.bodies["A"])
    human = sheet.assign(human_distractor="1000")
    mcqs, info = assemble_mcqs(table, human, None, seed=0)
    assert len(mcqs) == 4 and info["stats"]["tuples_without_question"] == 2


def test_unconditioned_ai_gets_the_same_question_without_any_students_answer(
    tmp_path, monkeypatch, phase1
):
    script = Script()
    res, _, table, sheet = _generate(
        tmp_path, monkeypatch, script, "--generator-model", "openai/G", "--model", "openai/A",
        "--unconditioned",
    )  # fmt: skip
    a_texts = [last_user_message(b) for b in script.bodies["A"]]
    assert len(a_texts) == res["requests_by_source"]["ai"] == 3
    assert not any("student answered" in t or "2/5" in t for t in a_texts)
    assert (table.groupby("question")["related_question"].nunique() == 1).all()
    assert len(sheet) == 6 and "phase1_answer" in sheet.columns  # the expert stays conditioned
