"""From questions to model requests and back: building the identification and MCQ prompts, and
reading the model's answers (generated JSON, or the letters' log-probabilities)."""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..defaults import SEED
from ..models import ChatRequest, ChatResult, parse_json_answer
from ..seeding import child_rngs
from ..tables import takes_tables
from .data import LETTERS, READ_QUESTIONS
from .prompts import (
    ANSWER_KEY,
    ANSWER_SCHEMA,
    Shot,
    cot_reasoning,
    identification_messages,
    identification_user,
    mcq_messages,
)

__all__ = ["Task", "build_tasks", "read_answer"]

PROMPTS = ("simple", "cot")
SCORINGS = ("generate", "logprob")
TOP_LOGPROBS = 20  # the most OpenAI-compatible servers return
#: tokens a chain-of-thought reply may use (reasoning, then the JSON answer)
COT_MAX_TOKENS = 512


@dataclass
class Task:
    """One prompt: identify the rationale of ``choice`` (kind "identify") or answer the MCQ."""

    task_id: str
    question_id: str
    kind: str  # "identify" | "mcq"
    choice: str  # original letter of the choice shown ("" for mcq)
    is_correct_choice: bool
    order: str  # shown label i = original rationale order[i] ("ABCD" for mcq)
    target: str  # the right label among those shown
    request: ChatRequest

    def to_original(self, label: str) -> str:
        """Map a shown label back to the original letter."""
        return self.order[LETTERS.index(label)]


def _request(messages, prompt: str, scoring: str, tag: str) -> ChatRequest:
    """Simple prompts: the JSON answer, schema-constrained (a grammar on the local model).
    Chain of thought: free text then the JSON answer, so no schema or grammar is forced over the
    reply (it would turn the reasoning into a JSON field); the answer is read from the text."""
    return ChatRequest(
        messages=tuple(messages),
        max_tokens=24 if prompt == "simple" else COT_MAX_TOKENS,
        json_schema=ANSWER_SCHEMA if prompt == "simple" else None,
        top_logprobs=TOP_LOGPROBS if scoring == "logprob" else None,
        tag=tag,
        answer_json=True,  # a chain of thought cut off before its answer is not cached
    )


@takes_tables(questions=READ_QUESTIONS)
def build_tasks(
    questions: pd.DataFrame,
    *,
    prompt: str = "simple",
    shots: int = 0,
    rationale_order: str = "shuffle",
    scoring: str = "generate",
    mcq: bool = True,
    seed: int = SEED,
) -> list[Task]:
    """Four identification tasks per question (one per choice) and, with ``mcq``, the question
    itself.  The rationales of a question are shown in one seeded order for all four of its
    choices (so a model that always answers the same label scores exactly 25%).  Few-shot
    examples come from one seeded ranking of the file's questions (:func:`_shot_sets`): each
    question shows the first ``shots`` of it that are other questions - and, for questions with a
    ``family`` (generated items), of other template families (:func:`_shot_pools`) - so most
    questions show the same examples, a question's four prompts differ only from the choice on,
    and a local model evaluates the shared instructions and examples once per run."""
    if prompt not in PROMPTS:
        raise ValueError(f"prompt= must be one of {PROMPTS}")
    if scoring not in SCORINGS:
        raise ValueError(f"scoring= must be one of {SCORINGS}")
    if rationale_order not in ("shuffle", "original"):
        raise ValueError("rationale_order= must be 'shuffle' or 'original'")
    if shots < 0 or (shots and shots >= len(questions)):
        raise ValueError(f"shots= must be between 0 and {len(questions) - 1} for this file")
    order_rng, shot_rng = child_rngs(seed, 2)
    rows = questions.to_dict(orient="records")
    pools = _shot_pools(rows) if shots else []
    _check_shots(rows, pools, shots)
    examples_of = _shot_sets(rows, pools, shots, shot_rng, prompt)
    tasks: list[Task] = []
    for qi, q in enumerate(rows):
        rationales = [q[f"rationale_{x}"] for x in LETTERS]
        # one seeded order per question: each label is the target of exactly one of its choices
        perm = order_rng.permutation(4) if rationale_order == "shuffle" else range(4)
        order = "".join(LETTERS[j] for j in perm)
        shown = [rationales[LETTERS.index(o)] for o in order]
        examples = examples_of[qi]
        for letter in LETTERS:
            target = LETTERS[order.index(letter)]
            msgs = identification_messages(
                q["question"],
                q["passage"],
                q[f"choice_{letter}"],
                shown,
                prompt=prompt,
                shots=examples,
            )
            tid = f"{q['id']}:{letter}"
            tasks.append(
                Task(
                    tid,
                    str(q["id"]),
                    "identify",
                    letter,
                    letter == q["answer"],
                    order,
                    target,
                    _request(msgs, prompt, scoring, tid),
                )
            )
        if mcq:
            msgs = mcq_messages(
                q["question"], q["passage"], [q[f"choice_{x}"] for x in LETTERS], prompt=prompt
            )
            tid = f"{q['id']}:mcq"
            tasks.append(
                Task(
                    tid,
                    str(q["id"]),
                    "mcq",
                    "",
                    True,
                    "ABCD",
                    q["answer"],
                    _request(msgs, prompt, scoring, tid),
                )
            )
    return tasks


def _shot(ex: dict, rng: np.random.Generator, prompt: str) -> Shot:
    """A worked example from question ``ex``: a random choice and rationale order, the right
    label and the reasoning (which choice each shown rationale leads to, from the data)."""
    choice = LETTERS[int(rng.integers(4))]
    perm = "".join(LETTERS[k] for k in rng.permutation(4))
    shown = [ex[f"rationale_{o}"] for o in perm]
    label = LETTERS[perm.index(choice)]
    user = identification_user(ex["question"], ex["passage"], ex[f"choice_{choice}"], shown, prompt)
    results = [ex[f"choice_{o}"] for o in perm]
    return Shot(user, label, cot_reasoning(ex[f"choice_{choice}"], results, label))


def _family(row: dict) -> str | None:
    """The question's template family (generated items), or ``None`` (e.g. the MalAlgoQA
    release, which has none)."""
    fam = row.get("family")
    if fam is None or (isinstance(fam, float) and math.isnan(fam)) or not str(fam).strip():
        return None
    return str(fam).strip()


def _shot_pools(rows: list[dict]) -> list[list[int]]:
    """For each question, the questions that may serve as its examples: never the question
    itself, and never one of its template family - a question of the same family differs only
    in its numbers, so it would show the model the very reasoning to be identified."""
    fams = [_family(r) for r in rows]
    outside = {f: [j for j in range(len(rows)) if f is None or fams[j] != f] for f in set(fams)}
    return [[j for j in outside[f] if j != qi] for qi, f in enumerate(fams)]


def _check_shots(rows: list[dict], pools: list[list[int]], k: int) -> None:
    if not k:
        return
    for qi, pool in enumerate(pools):
        if len(pool) < k:
            raise ValueError(
                f"shots= {k} needs {k} example questions outside each question's template "
                f"family; question {rows[qi]['id']} (family {_family(rows[qi])}) has {len(pool)}"
            )


def _shot_sets(
    rows: list[dict], pools: list[list[int]], k: int, rng: np.random.Generator, prompt: str
) -> list[list[Shot]]:
    """Each question's ``k`` worked examples: one seeded ranking of all the questions, and for
    each question the first ``k`` of it that its pool allows (:func:`_shot_pools`), in ranking
    order.  An example question is rendered once (one choice, one rationale order) and shown the
    same way wherever it appears, so the questions that may use the head of the ranking - all but
    those of its template families - share their examples word for word (issue 22: a local model
    then evaluates them once per run, not once per question)."""
    if not k:
        return [[] for _ in rows]
    ranking = [int(j) for j in rng.permutation(len(rows))]
    chosen = []
    for pool in pools:
        allowed = set(pool)
        chosen.append(list(itertools.islice((j for j in ranking if j in allowed), k)))
    position = {j: p for p, j in enumerate(ranking)}
    last = max(position[j] for c in chosen for j in c)
    # rendered in ranking order, so an example's draws do not depend on which questions use it
    shot = {j: _shot(rows[j], rng, prompt) for j in ranking[: last + 1]}
    return [[shot[j] for j in c] for c in chosen]


_LETTER = re.compile(r"^\W*\(?([A-Da-d])\)?\W*$")
_KEY_VALUE = re.compile(r'"Correct Choice"\s*:\s*"')


def _letter(value: object) -> str | None:
    m = _LETTER.match(str(value)) if value is not None else None
    return m.group(1).upper() if m else None


def _answer_position_logprobs(result: ChatResult) -> dict[str, float] | None:
    """Log-probabilities of A-D at the token where the answer letter was generated: the first
    letter token after the ``"Correct Choice": "`` key (so reasoning text is skipped)."""
    if not result.logprobs:
        return None
    text = "".join(t.token for t in result.logprobs)
    matches = list(_KEY_VALUE.finditer(text))
    m = matches[-1] if matches else None
    if m is None:
        return result.choice_logprobs(LETTERS)
    offset = 0
    for i, tok in enumerate(result.logprobs):
        end = offset + len(tok.token)
        if end > m.end():
            sub = ChatResult(text=result.text, logprobs=result.logprobs[i:])
            return sub.choice_logprobs(LETTERS)
        offset = end
    return None


def read_answer(result: ChatResult, scoring: str) -> tuple[str | None, str]:
    """The label the model chose and how it was read: ``("B", "json")``, ``("C", "logprob")``,
    ``(None, "unparseable")`` or ``(None, "failed")`` (the call failed after its retries)."""
    if not result.ok:
        return None, "failed"
    if scoring == "logprob":
        lp = _answer_position_logprobs(result)
        if lp and any(math.isfinite(v) for v in lp.values()):
            return max(LETTERS, key=lambda x: lp[x]), "logprob"
    parsed = parse_json_answer(
        result.text, require_keys=[ANSWER_KEY], accept=lambda v: _letter(v[ANSWER_KEY]) is not None
    )
    letter = _letter(parsed.get(ANSWER_KEY)) if parsed else None
    if letter is None:
        return None, "unparseable"
    return letter, "json" if scoring == "generate" else "json (no logprobs)"
