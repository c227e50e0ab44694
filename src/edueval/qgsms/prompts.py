"""Prompts and JSON schemas of QG-SMS and its baselines (our own wording of the paper's steps).

Every schema carries a ``title`` naming its step (``verdict``, ``verdict_cot``, ``profiles``,
``predictions``, ``sms_verdict``, ``criteria``, ``reference``, ``personas``, ``discussion``), so a
scripted test server can tell the steps apart. Questions are always shown as "Output (a)" and
"Output (b)" to a judge; QG-SMS's Step 2 sees them as "Question 1" and "Question 2" (the pair's
own order), so one simulation serves both presentation orders of Step 3.
"""

from __future__ import annotations

import hashlib
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

# ChatEval's fixed panel (``--chateval-personas fixed``); the default has the model write the
# panel first, as ChatEval does (through AutoAgents in the QG-SMS paper).
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


def retry_seed(seed: int | None, attempt: int) -> int:
    """The seed of retry ``attempt`` (>= 1) of a call whose first seed is ``seed``: a 31-bit hash,
    so retries of different calls never share a seed and the value fits every backend."""
    digest = hashlib.sha256(f"{seed}:retry:{attempt}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def request(
    prompt: str,
    schema: dict | None,
    attempt: int,
    *,
    max_tokens: int,
    system: str | None = None,
    tag: str | None = None,
    temperature: float = 0.0,
    seed: int | None = None,
) -> ChatRequest:
    """A request; a retry (``attempt`` > 0) samples at temperature >= 0.7 with a seed of its own
    (:func:`retry_seed`), so it can differ from the malformed answer and is not answered from the
    cache."""
    if attempt > 0:
        temperature = max(temperature, 0.7)
        seed = retry_seed(seed, attempt)
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


def profiles_schema(n: int, max_n: int) -> dict:
    """Step 1's answer: ``n`` to ``max_n`` students, each a name and a description of what they
    understood. The description has no length cap (the paper asks for a detailed one); the upper
    bound on the count only lets a grammar-constrained small model close the list."""
    return {
        "title": "profiles",
        "type": "object",
        "properties": {
            "students": {
                "type": "array",
                "minItems": n,
                "maxItems": max(n, max_n),
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "minLength": 1, "maxLength": 60},
                        "understanding": {"type": "string", "minLength": 1},
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
        "Picture the class that is about to sit a quiz on this material. Write profiles of at "
        f"least {n} of its students. Give each one a name and a detailed account of how they "
        "understood the material: which parts they grasped, which they half-know, what they "
        "confuse or never picked up. Keep to their understanding of the material, with no "
        "personal details. Across the profiles, the spread from strong to weak understanding "
        "should look like a real classroom's. Answer in JSON: "
        '{"students": [{"name": "...", "understanding": "..."}, ...]}.'
    )


def _option_schema(item: dict, explanation_chars: int) -> dict:
    """One student on one question: the option they choose -- any of the question's options,
    listed in the question's own order, the key among them like any other -- and why. Nothing in
    the schema tells the key apart (an earlier version offered ``correct: true`` only with the
    key and ``correct: false`` only with a distractor, which handed a grammar-constrained model
    the answer); edueval scores correctness itself from the choice."""
    why = {"type": "string", "minLength": 1, "maxLength": explanation_chars}
    return {
        "type": "object",
        "properties": {
            "choice": {"type": "string", "enum": list(item["options"])},
            "explanation": why,
        },  # fmt: skip
        "required": ["choice", "explanation"],
        "additionalProperties": False,
    }


# The default bound on one Step-2 explanation: the paper sets none; a grammar-constrained small
# model needs one to end its string (a large model writes one or two sentences, well under it).
EXPLANATION_CHARS = 400
SIM_KEYS = ("question_1", "question_2")


def predictions_schema(
    names: list[str], first: dict, second: dict, explanation_chars: int = EXPLANATION_CHARS
) -> dict:
    """Step 2's answer: an object with one required key per profile name (so every profile is
    predicted exactly once -- with a list of ``{"name": enum}`` entries a small model writes the
    first name ten times), each ``{"question_1": answer, "question_2": answer}``."""
    student = {
        "type": "object",
        "properties": {
            SIM_KEYS[0]: _option_schema(first, explanation_chars),
            SIM_KEYS[1]: _option_schema(second, explanation_chars),
        },
        "required": list(SIM_KEYS),
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


def profile_lines(profiles: list[dict]) -> str:
    return "\n".join(f"- {p['name']}: {p['understanding']}" for p in profiles)


def predictions_prompt(material: str, profiles: list[dict], first: dict, second: dict) -> str:
    return (
        f"# Learning material\n{material}\n\n"
        f"# The students and what they understood\n{profile_lines(profiles)}\n\n"
        f"# Question 1\n{format_question(first)}\n\n# Question 2\n{format_question(second)}\n\n"
        "For every student, predict whether they answer Question 1 and Question 2 correctly, "
        "and which option they choose: the right answer when you expect them to get it right, "
        "otherwise the wrong option that would mislead this student. Weigh what the student "
        "understood, how hard the question is, and the chance of a lucky guess; say briefly why "
        "in 'explanation'. Answer in JSON, one entry per student keyed by their name: "
        '{"students": {"<name>": {"question_1": {"choice": "<letter>", "explanation": "..."}, '
        '"question_2": {...}}}}.'
    )


def _one_answer(x: dict) -> str:
    res = "correct" if x["correct"] else f"incorrect, chose distractor {x['choice']}"
    return f"{res}. Why: {x['explanation']}"


def performance_text(profiles: list[dict], predictions: list[dict], a: dict, b: dict) -> str:
    """Step 3's account of the simulated class for questions shown as Output (a) = ``a`` and
    Output (b) = ``b``: each student's profile, answer and explanation on each (the inputs of the
    paper's Figure 5 and of the authors' code). The same simulation gives both orders; only the
    labels move."""
    und = {p["name"]: p["understanding"] for p in profiles}
    blocks = []
    for p in predictions:
        ans = p["answers"]
        blocks.append(
            f"Student: {p['name']}\nUnderstanding of the material: {und.get(p['name'], '')}\n"
            f"On Output (a): {_one_answer(ans[a['item']])}\n"
            f"On Output (b): {_one_answer(ans[b['item']])}"
        )
    return "\n\n".join(blocks)


SMS_VERDICT_SCHEMA = _verdict_schema(False, "sms_verdict")


def sms_judge_prompt(
    dimension: str,
    topic: str | None,
    a: dict,
    b: dict,
    performance: str,
    material: str | None = None,
) -> str:
    """QG-SMS Step 3: requirement and its definition, the two questions, the simulated students'
    profiles and performance with explanations -- and, only when ``material`` is given (the
    ``--judge-material`` variant), the learning material, which the paper leaves out."""
    mat = f"# Learning material\n{material}\n\n" if material is not None else ""
    return (
        f"{_head(dimension, topic)}Below are two candidate questions and an analysis of how each "
        "student of a simulated class answered them.\n\n"
        f"{mat}# Output (a)\n{format_question(a)}\n\n# Output (b)\n{format_question(b)}\n\n"
        f"# The simulated students' performance\n{performance}\n\n"
        "Judging from the questions' content and from the students' performance, which "
        "question better satisfies the requirement, Output (a) or Output (b)? "
        'Answer only with \'better\': "a" or "b".'
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


def personas_schema(k: int) -> dict:
    return {
        "title": "personas",
        "type": "object",
        "properties": {
            "experts": {
                "type": "array",
                "minItems": k,
                "maxItems": k,
                "items": {
                    "type": "object",
                    "properties": {
                        "role": {"type": "string", "minLength": 1, "maxLength": 80},
                        "description": {"type": "string", "minLength": 1, "maxLength": 500},
                    },
                    "required": ["role", "description"],
                },
            }
        },
        "required": ["experts"],
    }


def personas_prompt(dimension: str, topic: str | None, material: str, k: int) -> str:
    """ChatEval's first step (the paper: AutoAgents given the instruction): the model proposes
    the panel of experts for this evaluation task -- the task only, no candidate questions."""
    return (
        f"# Evaluation task\n{_head(dimension, topic)}The candidates are multiple-choice quiz "
        f"questions on this learning material:\n{material}\n\n"
        f"Assemble a panel of {k} different experts who together would judge this task well. "
        "For each, give a role (a short title) and a description of their expertise and of "
        "what they will look for when they compare two candidate questions. Answer in JSON: "
        '{"experts": [{"role": "...", "description": "..."}, ...]}.'
    )


def persona_system(role: str, description: str, k: int) -> str:
    return (
        f"Your role on a panel of {k} experts: {role}. {description} The panel discusses in "
        "turns which of two quiz questions better meets a requirement."
    )


def discussion_prompt(
    dimension: str,
    topic: str | None,
    material: str,
    a: dict,
    b: dict,
    history: list[str],
    rnd: int,
    rounds: int,
) -> str:
    """One ChatEval turn. It asks for one thing: a comment for the panel that ends with the
    speaker's current verdict, in a fixed JSON form (the comment first, the verdict last)."""
    said = "\n".join(history) if history else "(nobody has spoken yet)"
    return (
        f"{_head(dimension, topic)}\n# Learning material\n{material}\n\n"
        f"# Output (a)\n{format_question(a)}\n\n# Output (b)\n{format_question(b)}\n\n"
        f"# The panel's discussion so far (round {rnd} of {rounds})\n{said}\n\n"
        "It is your turn. Write your comment for the panel from your expertise -- build on or "
        "challenge what was said -- and end it with your current verdict on which question "
        "better satisfies the requirement. Answer in JSON with the comment first and the "
        'verdict last: {"comment": "...", "better": "a" or "b"}.'
    )


def discussion_schema() -> dict:
    return {
        "title": "discussion",
        "type": "object",
        "properties": {
            "comment": {"type": "string", "maxLength": 600},
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
