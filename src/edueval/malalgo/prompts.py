"""Prompts of the malgorithm-identification task (Sonkar et al., MalAlgoQA) and of the plain MCQ.

Identification: the model sees the question (and passage), one answer choice's text *without its
letter*, and the four rationales labelled A-D in a seeded shuffled order; it names the rationale
that produces that choice, as JSON ``{"Correct Choice": "X"}``.  The wording is ours; the task,
the two prompting styles (simple, chain-of-thought) and the JSON answer format follow the paper.
"""

from __future__ import annotations

from collections.abc import Sequence

from .data import LETTERS

__all__ = ["ANSWER_KEY", "ANSWER_SCHEMA", "identification_messages", "mcq_messages"]

ANSWER_KEY = "Correct Choice"
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {ANSWER_KEY: {"type": "string", "enum": list(LETTERS)}},
    "required": [ANSWER_KEY],
}
COT_SCHEMA = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string", "maxLength": 600},
        ANSWER_KEY: {"type": "string", "enum": list(LETTERS)},
    },
    "required": ["reasoning", ANSWER_KEY],
}

_ID_SYSTEM = {
    "simple": (
        "You analyse how students reason about test questions. Given a question, one of its "
        "answer choices, and four explanations of how a student might have reached an answer, "
        "decide which explanation leads to the given choice. Reply only with JSON: "
        '{"Correct Choice": "<letter>"}.'
    ),
    "cot": (
        "You analyse how students reason about test questions. Given a question, one of its "
        "answer choices, and four explanations of how a student might have reached an answer, "
        "work through each explanation step by step to see which answer it produces, then decide "
        "which one leads to the given choice. Reply with JSON: "
        '{"reasoning": "<your steps>", "Correct Choice": "<letter>"}.'
    ),
}
_MCQ_SYSTEM = {
    "simple": 'Answer the multiple-choice question. Reply only with JSON: {"Correct Choice": "<letter>"}.',
    "cot": (
        "Answer the multiple-choice question. Think step by step first. Reply with JSON: "
        '{"reasoning": "<your steps>", "Correct Choice": "<letter>"}.'
    ),
}


def _question_block(question: str, passage: str) -> str:
    return (f"Passage:\n{passage.strip()}\n\n" if passage and passage.strip() else "") + (
        f"Question: {question.strip()}"
    )


def identification_user(
    question: str, passage: str, choice_text: str, rationales: Sequence[str]
) -> str:
    """The user turn: question, rationales labelled A-D in the given order, then the choice (no
    letter).  The choice comes last so that the four prompts of one question share everything
    before it, which a local model's prompt cache reuses."""
    lines = [_question_block(question, passage), "", "Explanations:"]
    lines += [f"{letter}. {text.strip()}" for letter, text in zip(LETTERS, rationales, strict=True)]
    lines += [
        "",
        f"Given choice: {choice_text.strip()}",
        "Which explanation (A, B, C or D) leads to the given choice?",
    ]
    return "\n".join(lines)


def identification_messages(
    question: str,
    passage: str,
    choice_text: str,
    rationales: Sequence[str],
    *,
    prompt: str = "simple",
    shots: Sequence[tuple[str, str]] = (),
) -> list[dict[str, str]]:
    """Chat messages for one identification prompt; ``shots`` are (user, answer-letter) pairs of
    worked examples from other questions, shown as earlier turns."""
    msgs = [{"role": "system", "content": _ID_SYSTEM[prompt]}]
    for user, letter in shots:
        msgs.append({"role": "user", "content": user})
        msgs.append({"role": "assistant", "content": f'{{"{ANSWER_KEY}": "{letter}"}}'})
    msgs.append(
        {"role": "user", "content": identification_user(question, passage, choice_text, rationales)}
    )
    return msgs


def mcq_messages(
    question: str, passage: str, choices: Sequence[str], *, prompt: str = "simple"
) -> list[dict[str, str]]:
    """Chat messages asking the question itself."""
    body = [_question_block(question, passage), ""]
    body += [f"{letter}. {text.strip()}" for letter, text in zip(LETTERS, choices, strict=True)]
    return [
        {"role": "system", "content": _MCQ_SYSTEM[prompt]},
        {"role": "user", "content": "\n".join(body)},
    ]
