"""Prompts of the malgorithm-identification task (Sonkar et al., MalAlgoQA) and of the plain MCQ.

Identification follows the paper's Table 5: a system line, the question (and passage), the
answer rationales labelled A-D, the given choice *without its letter*, the request to name the
rationale that corresponds to the choice, and the JSON format ``{"Correct Choice": "[A/B/C/D]"}``.

- ``simple``: the answer only.
- ``cot``: the paper's chain of thought -- free-text step-by-step reasoning ("Provide step-by-step
  reasoning. Show the steps."), *then* the JSON answer.  The reasoning is ordinary text, not a
  JSON field, and no grammar or schema is forced over the reply (:func:`answer_format`).
- few-shot: earlier user/assistant turns from other questions - never from the test question's
  template family when the questions have one (generated items: a same-family question differs
  only in its numbers, a near-copy; issue 18), never the question itself otherwise.  In ``cot`` mode each shot's
  answer demonstrates the reasoning (which choice each rationale leads to, read from that
  question's own data, then the JSON answer); in ``simple`` mode it shows the JSON answer only.

Two deviations from the paper, both deliberate: the rationales are shown in a seeded shuffled
order by default (``--rationale-order original`` keeps the release's order, as the paper does),
so that the key's position carries no signal; and the given choice comes after the rationales,
not before, so the four prompts of one question share everything up to it (a local model reuses
that prefix).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .data import LETTERS

__all__ = [
    "ANSWER_KEY",
    "ANSWER_SCHEMA",
    "Shot",
    "answer_format",
    "cot_reasoning",
    "identification_messages",
    "mcq_messages",
]

ANSWER_KEY = "Correct Choice"
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {ANSWER_KEY: {"type": "string", "enum": list(LETTERS)}},
    "required": [ANSWER_KEY],
}

_FORMAT = '```\n{\n  "Correct Choice": "[A/B/C/D]"\n}\n```'

_ID_SYSTEM = {
    "simple": (
        "Determine the answer rationale that corresponds to the given choice for the question. "
        "Provide your answer in the specified JSON format."
    ),
    "cot": (
        "Provide step-by-step reasoning to determine the answer rationale that corresponds to "
        "the given choice for the question. Then, provide your answer in the specified JSON "
        "format."
    ),
}
_ID_ASK = (
    "Given the question and answer rationales, determine which answer rationale corresponds to "
    "the given choice for the question."
)
_COT_ASK = "Provide step-by-step reasoning. Show the steps."
_MCQ_SYSTEM = {
    "simple": "Answer the multiple-choice question. Provide your answer in the specified JSON format.",
    "cot": (
        "Answer the multiple-choice question. Provide step-by-step reasoning first, then your "
        "answer in the specified JSON format."
    ),
}


def answer_format(prompt: str) -> str:
    """The closing instruction: the reasoning request (CoT only), then the JSON format."""
    if prompt == "cot":
        return (
            f"{_COT_ASK}\n\nAnd then provide your answer in the following JSON format:\n{_FORMAT}"
        )
    return f"Provide your answer in the following JSON format:\n{_FORMAT}"


def answer_json(letter: str) -> str:
    """The answer as the format asks for it."""
    return f'{{"{ANSWER_KEY}": "{letter}"}}'


def _question_block(question: str, passage: str) -> str:
    return (f"Passage:\n{passage.strip()}\n\n" if passage and passage.strip() else "") + (
        f"Question: {question.strip()}"
    )


def identification_user(
    question: str, passage: str, choice_text: str, rationales: Sequence[str], prompt: str = "simple"
) -> str:
    """The user turn: question, rationales labelled A-D in the given order, the choice (no
    letter), the request, and the answer format.  The choice comes after the rationales so that
    the four prompts of one question share everything before it (a local model's prompt cache
    reuses that prefix)."""
    lines = [_question_block(question, passage), "", "Answer Rationales:"]
    lines += [f"{letter}. {text.strip()}" for letter, text in zip(LETTERS, rationales, strict=True)]
    lines += ["", f"Choice: {choice_text.strip()}", "", _ID_ASK, "", answer_format(prompt)]
    return "\n".join(lines)


def cot_reasoning(choice_text: str, results: Sequence[str], letter: str) -> str:
    """A worked chain of thought for a few-shot example: the choice each shown rationale leads
    to (``results[i]`` for label ``LETTERS[i]``), then the one that gives the given choice."""
    steps = [
        f"Step {i + 1}: following rationale {x} leads to {r.strip()}."
        for i, (x, r) in enumerate(zip(LETTERS, results, strict=True))
    ]
    steps.append(
        f"Step {len(results) + 1}: the given choice is {choice_text.strip()}, which is where "
        f"rationale {letter} leads, so rationale {letter} corresponds to it."
    )
    return "\n".join(steps)


@dataclass(frozen=True)
class Shot:
    """One worked example (from another question): its user turn, the right label and, for
    chain-of-thought prompts, the worked reasoning (:func:`cot_reasoning`)."""

    user: str
    letter: str
    reasoning: str = ""

    def answer(self, prompt: str) -> str:
        """The assistant turn: reasoning then JSON (``cot``), or the JSON alone (``simple``)."""
        if prompt == "cot" and self.reasoning:
            return f"{self.reasoning}\n\n{answer_json(self.letter)}"
        return answer_json(self.letter)


def identification_messages(
    question: str,
    passage: str,
    choice_text: str,
    rationales: Sequence[str],
    *,
    prompt: str = "simple",
    shots: Sequence[Shot] = (),
) -> list[dict[str, str]]:
    """Chat messages for one identification prompt; ``shots`` are worked examples from other
    questions, shown as earlier user/assistant turns."""
    msgs = [{"role": "system", "content": _ID_SYSTEM[prompt]}]
    for shot in shots:
        msgs.append({"role": "user", "content": shot.user})
        msgs.append({"role": "assistant", "content": shot.answer(prompt)})
    user = identification_user(question, passage, choice_text, rationales, prompt)
    msgs.append({"role": "user", "content": user})
    return msgs


def mcq_messages(
    question: str, passage: str, choices: Sequence[str], *, prompt: str = "simple"
) -> list[dict[str, str]]:
    """Chat messages asking the question itself."""
    body = [_question_block(question, passage), ""]
    body += [f"{letter}. {text.strip()}" for letter, text in zip(LETTERS, choices, strict=True)]
    body += ["", answer_format(prompt)]
    return [
        {"role": "system", "content": _MCQ_SYSTEM[prompt]},
        {"role": "user", "content": "\n".join(body)},
    ]
