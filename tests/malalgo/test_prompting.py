"""P3 prompting as in the paper (Table 5): chain of thought is free text then the JSON answer;
few-shot examples demonstrate the reasoning in CoT mode and come from other questions."""

from __future__ import annotations

import re

import pytest

from edueval.malalgo import build_tasks, read_answer
from edueval.malalgo.data import normalise_questions
from edueval.malalgo.pipeline import run_malalgo
from edueval.misconceptions import generate_items
from edueval.models import ChatResult, get_model
from support.scripted_server import ScriptedServer, last_user_message

LETTERS = "ABCD"


@pytest.fixture(scope="module")
def questions():
    return normalise_questions(generate_items(10, seed=8))


def _question_of(user_turn: str) -> str:
    return re.search(r"^Question: (.*)$", user_turn, re.M).group(1)


def test_cot_asks_for_reasoning_then_json_with_no_schema(questions):
    cot = build_tasks(questions, prompt="cot", mcq=True)
    simple = build_tasks(questions, prompt="simple", mcq=True)
    for t in cot:
        user = t.request.messages[-1]["content"]
        assert "Provide step-by-step reasoning. Show the steps." in user
        assert user.rstrip().endswith('```\n{\n  "Correct Choice": "[A/B/C/D]"\n}\n```')
        # no schema, no JSON mode: a grammar over the whole reply would forbid the free text
        assert t.request.json_schema is None and not t.request.json_mode
        assert t.request.max_tokens >= 400
    for t in simple:
        assert "step-by-step" not in t.request.messages[-1]["content"]
        assert t.request.json_schema is not None


def test_few_shot_cot_shots_show_worked_reasoning_from_other_questions(questions):
    tasks = build_tasks(questions, prompt="cot", shots=3, mcq=False, seed=5)
    for t in tasks:
        msgs = t.request.messages
        assert [m["role"] for m in msgs] == ["system"] + ["user", "assistant"] * 3 + ["user"]
        own = _question_of(msgs[-1]["content"])
        for user, answer in zip(msgs[1:-1:2], msgs[2:-1:2], strict=True):
            assert _question_of(user["content"]) != own  # never the same question
            reply = answer["content"]
            steps = re.findall(
                r"^Step \d: following rationale ([A-D]) leads to (.*)\.$", reply, re.M
            )
            assert [s[0] for s in steps] == list(LETTERS)
            # the reasoning is true to the example: the rationale it names leads to the choice
            letter = read_answer(ChatResult(text=reply), "generate")[0]
            choice = re.search(r"^Choice: (.*)$", user["content"], re.M).group(1)
            assert dict(steps)[letter] == choice
            assert reply.rstrip().endswith(f'{{"Correct Choice": "{letter}"}}')


def test_few_shot_simple_shots_show_the_answer_only(questions):
    tasks = build_tasks(questions, prompt="simple", shots=2, mcq=False, seed=5)
    for t in tasks:
        for answer in t.request.messages[2:-1:2]:
            assert re.fullmatch(r'\{"Correct Choice": "[A-D]"\}', answer["content"])


def test_cot_replies_are_read_from_the_last_valid_object():
    cases = {
        # reasoning naming other letters, then the answer
        "Step 1: rationale A gives 12, not 15.\nStep 2: rationale C gives 15.\n"
        '{"Correct Choice": "C"}': "C",
        # the format template echoed before the answer is no answer
        'Format: {"Correct Choice": "[A/B/C/D]"}\nRationale B fits.\n```json\n'
        '{"Correct Choice": "B"}\n```': "B",
        # two different answers: unparseable, as before
        '{"Correct Choice": "A"}\nOn reflection: {"Correct Choice": "D"}': None,
        # cut off before the answer closes
        'Rationale D fits. {"Correct Choice": "D': None,
        # reasoning only
        "Rationale A gives the choice, so the answer is A.": None,
    }
    for text, want in cases.items():
        assert read_answer(ChatResult(text=text), "generate")[0] == want, text


def test_scripted_cot_run_parses_reasoning_then_json(tmp_path, questions):
    path = tmp_path / "q.csv"
    questions.to_csv(path, index=False)
    by_question = {q["question"]: q for q in questions.to_dict(orient="records")}

    def script(body):
        text = last_user_message(body)
        q = by_question[_question_of(text)]
        m = re.search(r"^Choice: (.*)$", text, re.M)
        if m is None:  # the MCQ
            return f"Step 1: work it out.\nSo the answer is {q['answer']}.\n" + (
                f'{{"Correct Choice": "{q["answer"]}"}}'
            )
        original = next(x for x in LETTERS if q[f"choice_{x}"] == m.group(1))
        block = text.split("Answer Rationales:")[1].split("\n\nChoice:")[0]
        shown = dict(re.findall(r"^([A-D])\. (.*)$", block, re.M))
        label = next(k for k, v in shown.items() if v == q[f"rationale_{original}"])
        wrong = next(x for x in LETTERS if x != label)
        return (
            'The format is {"Correct Choice": "[A/B/C/D]"}.\n'
            f"Step 1: rationale {wrong} leads elsewhere.\nStep 2: rationale {label} leads to "
            f'{m.group(1)}.\n\n```json\n{{"Correct Choice": "{label}"}}\n```'
        )

    with ScriptedServer(script) as server:

        def opener(log_path):
            return get_model("openai/scripted", base_url=server.url, cache_dir=tmp_path / "c",
                             log_path=log_path, retry_base_delay=0.001)  # fmt: skip

        res = run_malalgo(tmp_path / "run", path, open_model=opener, model_name="openai/scripted",
                          prompt="cot", shots=2)  # fmt: skip
    assert res["n_unparseable"] == 0 and res["n_failed"] == 0
    assert res["aia"]["accuracy"] == 1.0 and res["mia"]["accuracy"] == 1.0
    assert res["mcq"]["accuracy"] == 1.0
