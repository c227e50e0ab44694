"""Few-shot examples never come from the test question's template family (issue 18: in 23% of
5-shot prompts a shot was a near-copy of the item), and for data without families (the
MalAlgoQA release) never from the question itself."""

from __future__ import annotations

import re

import pytest

from edueval.malalgo import build_tasks
from edueval.malalgo.data import normalise_questions
from edueval.misconceptions import generate_items


def _question_of(user_turn: str) -> str:
    return re.search(r"^Question: (.*)$", user_turn, re.M).group(1)


@pytest.fixture(scope="module")
def questions():
    # 40 items over the 18 families: every family appears two or three times, so a draw that
    # ignored families would put a same-family shot into most 5-shot prompts
    return normalise_questions(generate_items(40, seed=3))


def _shot_questions(task) -> list[str]:
    return [_question_of(m["content"]) for m in task.request.messages[1:-1:2]]


def test_shots_never_come_from_the_items_family(questions):
    family_of = dict(zip(questions["question"], questions["family"], strict=True))
    tasks = build_tasks(questions, prompt="simple", shots=5, mcq=False, seed=2)
    assert len(tasks) == 4 * len(questions)
    for t in tasks:
        own = _question_of(t.request.messages[-1]["content"])
        shots = _shot_questions(t)
        assert len(shots) == 5 and own not in shots
        assert all(family_of[s] != family_of[own] for s in shots), (own, shots)


def test_ignoring_families_would_have_picked_same_family_shots(questions):
    """The test above can fail: with the family column removed, same-family shots appear."""
    bare = questions.assign(family=None)
    family_of = dict(zip(questions["question"], questions["family"], strict=True))
    tasks = build_tasks(bare, prompt="simple", shots=5, mcq=False, seed=2)
    same = sum(
        any(family_of[s] == family_of[_question_of(t.request.messages[-1]["content"])]
            for s in _shot_questions(t))
        for t in tasks
    )  # fmt: skip
    assert same > 0.1 * len(tasks)


def test_without_families_shots_are_other_questions(questions):
    """MalAlgoQA release data has no family: the only rule is 'never the same question'."""
    bare = questions.drop(columns=["family"]).head(6)
    tasks = build_tasks(bare, prompt="cot", shots=5, mcq=False, seed=1)
    for t in tasks:
        own = _question_of(t.request.messages[-1]["content"])
        shots = _shot_questions(t)
        assert len(set(shots)) == 5 and own not in shots


def test_too_few_questions_outside_the_family_is_an_error(questions):
    fams = questions["family"].value_counts()
    two = fams[fams >= 2].index[:2]
    # two questions of each of two families: each question has only 2 outside its family
    four = questions[questions["family"].isin(two)].groupby("family").head(2)
    assert len(four) == 4
    build_tasks(four, shots=2, mcq=False)  # enough
    with pytest.raises(ValueError, match="outside each question's template family"):
        build_tasks(four, shots=3, mcq=False)


def test_a_questions_four_prompts_share_their_examples_and_all_but_the_choice(questions):
    """Issue 22: a question's four prompts show the same examples, so they differ only from the
    choice on and a local model evaluates the long common prefix once.  The draws are seeded:
    the same seed gives the same prompts, another seed other examples."""
    tasks = build_tasks(questions, prompt="cot", shots=3, mcq=False, seed=2)
    for i in range(0, len(tasks), 4):
        four = [t.request.messages for t in tasks[i : i + 4]]
        assert len({t.question_id for t in tasks[i : i + 4]}) == 1
        assert all(m[:-1] == four[0][:-1] for m in four)  # system prompt and examples
        heads = {m[-1]["content"].split("\nChoice: ")[0] for m in four}
        assert len(heads) == 1  # the question and its rationales, in one order
    again = build_tasks(questions, prompt="cot", shots=3, mcq=False, seed=2)
    assert [t.request for t in again] == [t.request for t in tasks]
    other = build_tasks(questions, prompt="cot", shots=3, mcq=False, seed=3)
    assert [t.request.messages[1:-1] for t in other] != [t.request.messages[1:-1] for t in tasks]


@pytest.mark.parametrize("seed", [0, 2, 7])
def test_questions_share_one_set_of_examples_unless_the_family_rule_forbids_it(questions, seed):
    """Issue 22: the examples come from one seeded ranking (the first k each question may use),
    so every question that may show the most common set shows exactly it, word for word (the
    same choice and rationale order), and a local model evaluates it once per run; the others
    are the questions of its examples' families (and the examples themselves)."""
    family_of = dict(zip(questions["question"], questions["family"], strict=True))
    tasks = build_tasks(questions, prompt="cot", shots=3, mcq=False, seed=seed)
    sets = {t.question_id: tuple(m["content"] for m in t.request.messages[1:-1]) for t in tasks}
    own = {t.question_id: _question_of(t.request.messages[-1]["content"]) for t in tasks}
    common = max(set(sets.values()), key=list(sets.values()).count)
    common_fams = {family_of[_question_of(u)] for u in common[::2]}
    for qid, shown in sets.items():
        may_use_common = family_of[own[qid]] not in common_fams
        assert (shown == common) == may_use_common, qid
    assert sum(s == common for s in sets.values()) >= len(sets) // 2
    # one choice and rationale order per example question, wherever it is shown
    rendered: dict[str, set] = {}
    for shown in sets.values():
        for user, reply in zip(shown[::2], shown[1::2], strict=True):
            rendered.setdefault(_question_of(user), set()).add((user, reply))
    assert all(len(v) == 1 for v in rendered.values())
