"""Scripted "models" for the comparison tests: an oracle that reads the prompt and looks the
answer up in the question table."""

from __future__ import annotations

import json
import re

import pandas as pd

from support.scripted_server import last_user_message

LETTERS = "ABCD"


def oracle_label(q: dict, text: str) -> str:
    """The right label for a prompt: the shown letter of the choice's rationale, or the key."""
    if re.search(r"^Choice: ", text, re.M):
        choice = re.search(r"^Choice: (.*)", text, re.M).group(1).strip()
        original = next(x for x in LETTERS if q[f"choice_{x}"].strip() == choice)
        block = text.split("Answer Rationales:")[1].split("\n\nChoice:")[0]
        shown = dict(re.findall(r"^([A-D])\. (.*)$", block, re.M))
        return next(k for k, v in shown.items() if v.strip() == q[f"rationale_{original}"])
    return q["answer"]


def question_of(questions: pd.DataFrame):
    """``lookup(text) -> (index, question row)`` for a prompt's text."""
    records = questions.to_dict(orient="records")
    by_question = {q["question"].strip(): (i, q) for i, q in enumerate(records)}

    def lookup(text: str):
        return by_question[re.search(r"Question: (.*)", text).group(1).strip()]

    return lookup


def oracle_script(questions: pd.DataFrame):
    lookup = question_of(questions)

    def script(body):
        text = last_user_message(body)
        return json.dumps({"Correct Choice": oracle_label(lookup(text)[1], text)})

    return script
