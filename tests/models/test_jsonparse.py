"""parse_json_answer: strict JSON first, then increasingly forgiving readings; None otherwise."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from edueval.models import parse_json_answer


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"Correct Choice": "B"}', {"Correct Choice": "B"}),
        ('Sure!\n```json\n{"Correct Choice": "B"}\n```\nHope it helps.', {"Correct Choice": "B"}),
        ('The answer is {"answer": "C"}.', {"answer": "C"}),
        ("{'answer': 'C', 'ok': True}", {"answer": "C", "ok": True}),
        ('{"a": [1, 2,], "b": 3,}', {"a": [1, 2], "b": 3}),
        ('{"Correct Choice": "D', None),  # cut off by max_tokens: never guessed
        ('{"Correct Choice": "D"', None),
        ('Answer: {"Correct Choice": "B"} ... no wait {"Correct Choice": "C"}', None),  # two
        ('{"Correct Choice": "B"}\nSo: {"Correct Choice": "B"}', {"Correct Choice": "B"}),  # same
        ('{"x": {"y": "}"}} trailing', {"x": {"y": "}"}}),
        ("no json at all", None),
        ("", None),
        (None, None),
        ("[1, 2, 3]", None),  # a list is not the expected dict
    ],
)
def test_examples(text, expected):
    assert parse_json_answer(text) == expected


def test_require_keys_and_expect():
    text = 'first {"note": 1} then {"Correct Choice": "A"}'
    assert parse_json_answer(text, require_keys=["Correct Choice"]) == {"Correct Choice": "A"}
    assert parse_json_answer(text) is None  # two different objects: no single answer
    assert parse_json_answer("values: [1, 2]", expect=list) == [1, 2]
    assert parse_json_answer("42", expect=None) == 42


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(st.dictionaries(st.text(max_size=8), json_values, max_size=5), st.text(max_size=20))
def test_any_json_object_after_prose_is_recovered(obj, prose):
    prose = prose.replace("{", "").replace("[", "")
    assert parse_json_answer(prose + " " + json.dumps(obj)) == obj


def test_an_echoed_template_before_the_answer_is_not_a_second_answer():
    text = 'Format: {"Correct Choice": "X"}\nMy answer: {"Correct Choice": "C"}'
    letters = {"A", "B", "C", "D"}

    def is_letter(v):
        return v["Correct Choice"] in letters

    assert parse_json_answer(text, require_keys=["Correct Choice"], accept=is_letter) == {
        "Correct Choice": "C"
    }
    assert parse_json_answer(text, require_keys=["Correct Choice"]) is None


def test_objects_inside_the_answer_are_not_other_answers():
    text = 'Here: {"students": {"Ann": {"correct": true}, "Bo": {"correct": false}}}'
    assert parse_json_answer(text) == {
        "students": {"Ann": {"correct": True}, "Bo": {"correct": False}}
    }
