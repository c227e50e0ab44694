"""Prompts and JSON schemas of QG-SMS and its baselines (our own wording of the paper's steps).

Every schema carries a ``title`` naming its step (``verdict``, ``verdict_cot``, ``profiles``,
``predictions``, ``criteria``, ``reference``, ``discussion``), so a scripted test server can tell
the steps apart. Questions are always shown as "Output (a)" and "Output (b)".
"""

from __future__ import annotations

import re
from typing import Any

from ..items.pairs import REQUIREMENTS
from ..models import ChatRequest, ChatResult, parse_json_answer

DEFINITIONS = {
    "TC": "A question covers a topic when a student must know that topic to answer it.",
    "DF": "The easier of two questions is the one that a larger share of the students answers "
    "correctly.",
    "DC": "A more discriminating question separates students who understand the material well "
    "from those who do not: strong students tend to get it right and weak students wrong.",
    "DE": "A distractor (a wrong option) is effective when at least 5% of the students taking the "
    "quiz choose it; a better question has more effective distractors.",
}

PERSONAS = (
    ("Experienced teacher", "You have taught this subject for many years and know how students "
     "really answer quiz questions."),
    ("Psychometrician", "You analyse test items statistically: difficulty, discrimination and "
     "distractor functioning."),
    ("Learning scientist", "You study the misconceptions students form while learning this "
     "material."),
)  # fmt: skip


def requirement(dimension: str, target_topic: str | None = None) -> str:
    if dimension == "TC":
        return f'the question that covers the target topic "{target_topic}"'
    return REQUIREMENTS[dimension]


def format_question(item: dict[str, Any]) -> str:
    opts = "\n".join(f"{k}) {v}" for k, v in item["option_text"].items())
    return f"{item['text']}\n{opts}"


def _verdict_schema(cot: bool, title: str | None = None) -> dict:
    props: dict[str, Any] = {"better": {"type": "string", "enum": ["a", "b"]}}
    req = ["better"]
    if cot:
        props = {"reasoning": {"type": "string", "maxLength": 600}, **props}
        req = ["reasoning", "better"]
    return {
        "title": title or ("verdict_cot" if cot else "verdict"),
        "type": "object",
        "properties": props,
        "required": req,
    }


def request(
    prompt: str,
    schema: dict,
    attempt: int,
    *,
    max_tokens: int,
    system: str | None = None,
    tag: str | None = None,
    temperature: float = 0.0,
    seed: int | None = None,
) -> ChatRequest:
    """A request; a retry (``attempt`` > 0) samples at temperature 0.7 with its own seed, so it can
    differ from the malformed answer (and is not answered from the cache)."""
    if attempt > 0:
        temperature = max(temperature, 0.7)
        seed = (seed or 0) * 1000 + attempt
    return ChatRequest.user(
        prompt,
        system=system,
        json_schema=schema,
        max_tokens=max_tokens,
        temperature=temperature,
        seed=seed,
        tag=tag,
    )


_VERDICT_RE = re.compile(r"output\s*\(?\s*([ab])\s*\)?", re.IGNORECASE)
_BARE_RE = re.compile(r"^\W*\(?\s*([ab])\s*\)?\W*$", re.IGNORECASE)


def parse_verdict(res: ChatResult) -> str | None:
    """'a' or 'b' from a JSON answer (``better``), "Output (a)", or a bare "(a)"; else None."""
    obj = parse_json_answer(res.text, require_keys=["better"])
    if obj is not None:
        v = str(obj["better"]).strip().strip("()").strip().lower()
        v = v.removeprefix("output").strip().strip("()").strip()
        return v if v in ("a", "b") else None
    found = _VERDICT_RE.findall(res.text or "")
    if found and len({f.lower() for f in found}) == 1:
        return found[0].lower()
    m = _BARE_RE.match(res.text or "")
    return m.group(1).lower() if m else None


def _head(dimension: str, topic: str | None) -> str:
    return (
        f"You are choosing a quiz question that satisfies this requirement: "
        f"{requirement(dimension, topic)}.\n{DEFINITIONS[dimension]}\n"
    )


def judge_prompt(
    dimension: str,
    topic: str | None,
    material: str,
    a: dict,
    b: dict,
    *,
    cot: bool = False,
    extra: str = "",
) -> str:
    ask = (
        "Think it through briefly in 'reasoning', then give 'better': \"a\" or \"b\"."
        if cot
        else 'Answer only with \'better\': "a" or "b".'
    )
    return (
        f"{_head(dimension, topic)}\n# Learning material\n{material}\n\n"
        f"# Output (a)\n{format_question(a)}\n\n# Output (b)\n{format_question(b)}\n\n"
        f"{extra}"
        f"Which question better satisfies the requirement, Output (a) or Output (b)? {ask}"
    )


def verdict_schema(cot: bool = False) -> dict:
    return _verdict_schema(cot)


# -- QG-SMS -------------------------------------------------------------------------------------


def profiles_schema(n: int) -> dict:
    return {
        "title": "profiles",
        "type": "object",
        "properties": {
            "students": {
                "type": "array",
                "minItems": n,
                "maxItems": n,
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "maxLength": 40},
                        "understanding": {"type": "string", "maxLength": 160},
                    },
                    "required": ["name", "understanding"],
                },
            }
        },
        "required": ["students"],
    }


def profiles_prompt(material: str, n: int) -> str:
    return (
        f"# Learning material\n{material}\n\n"
        "A quiz on this material is about to be given to a class. Describe "
        f"{n} students of this class (at least 10), each with a short name that hints at how "
        "well they learned the material and one or two sentences about what they understood "
        "and what they misunderstood. Describe only their understanding of the material, "
        "nothing personal. The mix of strong, average and weak understanding should be what a "
        'real classroom shows. Answer in JSON: {"students": [{"name", "understanding"}]}.'
    )


def _option_schema(item: dict) -> dict:
    key = item["answer"]
    wrong = [o for o in item["options"] if o != key]
    return {
        "anyOf": [
            {
                "type": "object",
                "properties": {"correct": {"const": True}, "choice": {"const": key}},
                "required": ["correct", "choice"],
            },
            {
                "type": "object",
                "properties": {"correct": {"const": False}, "choice": {"enum": wrong}},
                "required": ["correct", "choice"],
            },
        ]
    }


def predictions_schema(names: list[str], a: dict, b: dict) -> dict:
    """Step 2's answer: an object with one required key per profile name (so every profile is
    predicted exactly once -- with a list of ``{"name": enum}`` entries a small model writes the
    first name ten times), each ``{"a": option, "b": option}``."""
    student = {
        "type": "object",
        "properties": {"a": _option_schema(a), "b": _option_schema(b)},
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    return {
        "title": "predictions",
        "type": "object",
        "properties": {
            "students": {
                "type": "object",
                "properties": {n: student for n in names},
                "required": list(names),
                "additionalProperties": False,
            }
        },
        "required": ["students"],
    }


def predictions_prompt(material: str, profiles: list[dict], a: dict, b: dict) -> str:
    lines = "\n".join(f"- {p['name']}: {p['understanding']}" for p in profiles)
    return (
        f"# Learning material\n{material}\n\n# Students and what they understood\n{lines}\n\n"
        f"# Quiz question a\n{format_question(a)}\n\n# Quiz question b\n{format_question(b)}\n\n"
        "For every student, predict from their understanding, the difficulty of each question "
        "and the chance of a lucky guess whether they answer question a and question b "
        "correctly, and which option they pick (when wrong: the distractor that would mislead "
        'them). Answer in JSON: {"students": {"<student name>": {"a": {"choice", "correct"}, '
        '"b": {"choice", "correct"}}}}, one entry per student, keyed by the name.'
    )


def performance_text(predictions: list[dict]) -> str:
    def one(p: dict) -> str:
        return f"{'correct' if p['correct'] else 'incorrect'} (chose {p['choice']})"

    return "\n".join(
        f"- {p['name']}: Output (a) {one(p['a'])}; Output (b) {one(p['b'])}" for p in predictions
    )


# -- baselines ----------------------------------------------------------------------------------

CRITERIA_SCHEMA = {
    "title": "criteria",
    "type": "object",
    "properties": {
        "criteria": {
            "type": "array",
            "minItems": 3,
            "maxItems": 5,
            "items": {"type": "string", "maxLength": 160},
        }
    },
    "required": ["criteria"],
}


def criteria_prompt(dimension: str, topic: str | None, material: str) -> str:
    return (
        f"{_head(dimension, topic)}\n# Learning material\n{material}\n\n"
        "Before seeing any candidate, write 3 to 5 concrete criteria for judging whether a quiz "
        'question on this material meets the requirement. Answer in JSON: {"criteria": [...]}.'
    )


REFERENCE_SCHEMA = {
    "title": "reference",
    "type": "object",
    "properties": {"question": {"type": "string", "maxLength": 400}},
    "required": ["question"],
}


def reference_prompt(dimension: str, topic: str | None, material: str) -> str:
    return (
        f"{_head(dimension, topic)}\n# Learning material\n{material}\n\n"
        "Write one multiple-choice quiz question on this material that meets the requirement "
        'very well; it will serve as a reference. Answer in JSON: {"question": "..."}.'
    )


def discussion_schema() -> dict:
    return {
        "title": "discussion",
        "type": "object",
        "properties": {
            "comment": {"type": "string", "maxLength": 400},
            "better": {"type": "string", "enum": ["a", "b"]},
        },
        "required": ["comment", "better"],
    }


def synthesis_extra(assessments: list[tuple[str, bool, str]]) -> str:
    """The disagreeing assessments, each as (the label *in this prompt* of the question it
    preferred, whether it saw the two questions the other way round, its reasoning)."""
    lines = []
    for i, (label, swapped, reasoning) in enumerate(assessments, start=1):
        seen = (
            "it saw the two questions the other way round, so its '(a)' is this prompt's "
            "Output (b) and its '(b)' is Output (a)"
            if swapped
            else "it saw the questions in the order shown here"
        )
        lines.append(f"Assessment {i} preferred Output ({label}) ({seen}): {reasoning}")
    return (
        "# Two earlier assessments disagreed\n" + "\n".join(lines) + "\nWeigh both and decide.\n\n"
    )
