"""No request carries what its protocol must not reveal (issue 34, point 3).

Every request each model-backed protocol sends -- QG-SMS (every method and step, the per-order
and judge-material variants, the robustness repeats), MalAlgoQA (identification and MCQ, simple
and chain-of-thought prompts, with worked examples), the imitation game's generation (generator,
key check, AI distractors, conditioned and not) and the tutor's replies -- is recorded by an
in-process backend and checked two ways:

* **the schema singles nothing out** (:func:`singled_out`): a ``const`` naming an answer option or
  a secret value, an ``enum`` of options that leaves some of them out, ``anyOf``/``oneOf`` branches
  that split the options between them (an earlier QG-SMS Step 2 offered ``correct: true`` only with
  ``choice: const KEY``: a grammar-constrained model was handed the key);
* **the request does not depend on the secret**: built again with the secret moved (another
  option made the key; the other question of a pair labelled better; another key for q′), the
  requests that must not see it come out identical, prompt and schema.

The recorder answers from the schema alone (never from a key), so the two runs ask the same
things wherever the secret is not shown.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

import pandas as pd
import pytest

from edueval.items import ClassroomConfig, analyze_items, make_pairs, simulate_classroom
from edueval.models import ChatRequest, ModelClient
from edueval.models.base import Reply
from edueval.models.types import canonical_json

LETTERS = ("A", "B", "C", "D")
VERDICTS = ("a", "b")


# -- the check -------------------------------------------------------------------------------------


def singled_out(schema: Any, families: list[set[str]], secrets: set[str] = frozenset()) -> list:
    """Where ``schema`` tells one answer apart: every ``const`` whose value is an option of a
    family or a secret; every ``enum`` holding an option of a family but not all of that family,
    or holding a secret; every ``anyOf``/``oneOf``/``if`` whose branches mention options (branches
    that partition the options by correctness are how a schema hands over a key)."""
    found: list[str] = []
    options = set().union(*families)

    def mentions(node: Any) -> bool:
        text = json.dumps(node)
        return any(json.dumps(o) in text for o in options | set(secrets))

    def walk(node: Any, path: str) -> None:
        if isinstance(node, list):
            for i, x in enumerate(node):
                walk(x, f"{path}[{i}]")
            return
        if not isinstance(node, dict):
            return
        if "const" in node and (node["const"] in options or node["const"] in secrets):
            found.append(f"{path}: const {node['const']!r}")
        if "enum" in node:
            vals = set(map(str, node["enum"]))
            for fam in families:
                if vals & fam and not fam <= vals:
                    found.append(f"{path}: enum {sorted(vals)} leaves out {sorted(fam - vals)}")
            if vals & set(secrets):
                found.append(f"{path}: enum holds a secret {sorted(vals & set(secrets))}")
        for comb in ("anyOf", "oneOf", "if", "not"):
            if comb in node and mentions(node[comb]):
                found.append(f"{path}: {comb} over answer options")
        for k, v in node.items():
            walk(v, f"{path}/{k}")

    walk(schema, "#")
    return found


def test_the_check_catches_the_old_step2_schema_and_passes_a_symmetric_one():
    old = {"anyOf": [
        {"properties": {"correct": {"const": True}, "choice": {"const": "C"}}},
        {"properties": {"correct": {"const": False}, "choice": {"enum": ["A", "B", "D"]}}}]}  # fmt: skip
    found = singled_out(old, [set(LETTERS)])
    assert any("const 'C'" in f for f in found) and any("leaves out ['C']" in f for f in found)
    assert any("anyOf" in f for f in found)
    assert singled_out({"properties": {"choice": {"enum": ["A", "B"]}}}, [set(LETTERS)])
    assert singled_out({"enum": ["KEY-7"]}, [], {"KEY-7"})
    assert singled_out({"const": "a"}, [set(VERDICTS)])
    ok = {"properties": {"choice": {"enum": list(LETTERS)}, "why": {"type": "string"}}}
    assert singled_out(ok, [set(LETTERS)]) == []
    assert singled_out({"properties": {"better": {"enum": ["a", "b"]}}}, [set(VERDICTS)]) == []


# -- a backend that records every request and answers from the schema alone ------------------------


class Recorder:
    """A :class:`~edueval.models.base.Backend` answering every protocol's steps by the shape of
    the request (schema title or properties), never from any key; every request is kept."""

    name = "recorder"
    model_id = "recorder-v1"
    serial = False

    def __init__(self, qprime_key: str = "KEY-1") -> None:
        self.requests: list[ChatRequest] = []
        self.qprime_key = qprime_key

    def describe(self) -> str:
        return "recording backend"

    async def generate(self, request: ChatRequest, timeout: float) -> Reply:
        self.requests.append(request)
        await asyncio.sleep(0)
        return Reply(text=self.answer(request), prompt_tokens=1, completion_tokens=1,
                     server="recorder")  # fmt: skip

    async def aclose(self) -> None:
        pass

    def answer(self, req: ChatRequest) -> str:
        schema = dict(req.json_schema or {})
        title = schema.get("title")
        props = schema.get("properties", {})
        if title == "profiles":
            n = props["students"]["minItems"]
            return json.dumps({"students": [{"name": f"S{i}", "understanding": f"level {i}"}
                                            for i in range(n)]})  # fmt: skip
        if title == "predictions":
            st = props["students"]
            out = {}
            for i, name in enumerate(st["required"]):
                q = st["properties"][name]["properties"]
                out[name] = {k: _pick(q[k], i, f"{name} on {k}") for k in q}
            return json.dumps({"students": out})
        if title == "personas":
            k = props["experts"]["minItems"]
            return json.dumps({"experts": [{"role": f"E{i}", "description": f"d{i}"}
                                           for i in range(k)]})  # fmt: skip
        if title == "criteria":
            return json.dumps({"criteria": ["clear", "fair", "on topic"]})
        if title == "reference":
            return json.dumps({"question": "What is 1 + 1?"})
        if title in ("verdict", "verdict_cot", "sms_verdict", "discussion"):
            return json.dumps({"reasoning": "r", "comment": "c", "better": "a"})
        if "related_question" in props:
            return json.dumps({"related_question": "Tom has some marbles and gives some away. "
                               "How many are left?", "correct_answer": self.qprime_key})  # fmt: skip
        if "answer" in props:
            return json.dumps({"answer": "some"})
        if "distractor" in props:
            return json.dumps({"distractor": "a wrong one"})
        if "Correct Choice" in props or "Correct Choice" in req.messages[-1]["content"]:
            return json.dumps({"Correct Choice": "A"})
        return "Good. Can you tell me how you got that?"  # a tutor reply


def _pick(schema: dict, i: int, why: str) -> dict:
    """Student ``i``'s answer to one question, read off the schema: the i-th option listed (an
    older schema's ``anyOf`` branches are answered as given, so the check below meets them)."""
    if "anyOf" in schema:
        branch = schema["anyOf"][i % len(schema["anyOf"])]["properties"]
        choice = branch["choice"].get("const") or branch["choice"]["enum"][0]
        return {"correct": branch["correct"]["const"], "choice": choice, "explanation": why}
    options = schema["properties"]["choice"]["enum"]
    return {"choice": options[i % len(options)], "explanation": why}


def _record(run, **kw) -> list[ChatRequest]:
    rec = Recorder(**kw)
    with ModelClient(rec, cache=None) as client:
        run(client)
    assert rec.requests
    return rec.requests


def _sent(req: ChatRequest) -> str:
    """What the model sees: messages and every generation parameter, schema included."""
    return canonical_json({"messages": list(req.messages), **req.params()})


def _title(req: ChatRequest) -> str | None:
    return (req.json_schema or {}).get("title")


# -- QG-SMS ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def qgsms_inputs():
    room = simulate_classroom(ClassroomConfig(n_students=40, n_materials=1,
                                              questions_per_material=5, seed=2))  # fmt: skip
    stats = analyze_items(room.to_item_data()).items
    pairs = make_pairs(stats, seed=0).groupby("dimension").head(1).reset_index(drop=True)
    items = room.items[["item", "text", "choices", "answer", "material", "topic",
                        "material_text"]].copy()  # fmt: skip
    assert set(pairs["dimension"]) == {"TC", "DF", "DC", "DE"}
    return pairs, items


def _qgsms(pairs, items, **kw):
    from edueval.qgsms import METHODS, evaluate

    def run(client):
        evaluate(pairs, items, client, methods=list(METHODS), bradley_terry=False,
                 max_failures="100%", **kw)  # fmt: skip

    return run


def _moved_key(items: pd.DataFrame) -> pd.DataFrame:
    """The same questions with each key moved to the next option."""
    out = items.copy()
    out["answer"] = [LETTERS[(LETTERS.index(a) + 1) % 4] for a in items["answer"]]
    return out


def _flipped(pairs: pd.DataFrame) -> pd.DataFrame:
    """The same pairs labelled the other way (the judges' key)."""
    out = pairs.drop(columns=[c for c in ("measure_q1", "measure_q2", "label")
                              if c in pairs.columns]).copy()  # fmt: skip
    out["better"] = [r.q2 if r.better == r.q1 else r.q1 for r in pairs.itertuples()]
    return out


QGSMS_VARIANTS = {
    "default": {},
    "per-order, material, repeats, fixed panel": {
        "simulate": "per-order",
        "judge_material": True,
        "repeats": 2,
        "chateval_personas": "fixed",
    },
}


@pytest.mark.parametrize("variant", list(QGSMS_VARIANTS))
def test_qgsms_requests_single_nothing_out_and_never_depend_on_key_or_label(qgsms_inputs, variant):
    pairs, items = qgsms_inputs
    kw = QGSMS_VARIANTS[variant]
    base = _record(_qgsms(pairs, items, **kw))
    titles = Counter(_title(r) for r in base)
    want = {"profiles", "predictions", "sms_verdict", "verdict", "verdict_cot", "criteria",
            "reference", "discussion"} | ({"personas"} if variant == "default" else set())  # fmt: skip
    assert want <= set(titles), titles
    for r in base:
        assert singled_out(r.json_schema, [set(LETTERS), set(VERDICTS)]) == [], (_title(r), r)
    # Step 1 and 2 and every baseline: identical with every key moved to another option; only
    # Step 3 (which is told who the simulation has right, as in the paper) may change
    moved = _record(_qgsms(pairs, _moved_key(items), **kw))

    def keep(reqs):
        return Counter(_sent(r) for r in reqs if _title(r) != "sms_verdict")

    assert keep(base) == keep(moved)
    assert Counter(_sent(r) for r in base) != Counter(_sent(r) for r in moved)  # Step 3 did
    # no request at all depends on which question of a pair is the better one
    flipped = _record(_qgsms(_flipped(pairs), items, **kw))
    assert Counter(_sent(r) for r in base) == Counter(_sent(r) for r in flipped)


def test_qgsms_logged_step2_requests_hold_no_key(tmp_path, qgsms_inputs):
    """``calls.jsonl`` of a ``qgsms run``: every Step-2 request lists each question's options
    alike, no ``const``, no ``correct`` field; and the logged requests are the same, byte for
    byte, when every key is moved to another option."""
    from edueval.qgsms import run_qgsms

    pairs, items = qgsms_inputs
    logged = {}
    for name, its in (("key", items), ("moved", _moved_key(items))):
        pairs.to_csv(tmp_path / "pairs.csv", index=False)
        its.to_json(tmp_path / f"{name}.jsonl", orient="records", lines=True)

        def opener(log_path):
            return ModelClient(Recorder(), cache=None, log_path=log_path)

        run_qgsms(tmp_path / name, tmp_path / "pairs.csv", tmp_path / f"{name}.jsonl",
                  methods=["qg-sms"], open_model=opener, model_name="recorder",
                  bradley_terry=False)  # fmt: skip
        calls = [json.loads(x) for x in (tmp_path / name / "calls.jsonl").read_text().splitlines()]
        step2 = [c for c in calls if str(c["tag"]).startswith("simulate:")]
        assert len(step2) == len(pairs)
        logged[name] = sorted(canonical_json(c["request"]) for c in step2)
        for c in step2:
            schema = c["request"]["json_schema"]
            assert singled_out(schema, [set(LETTERS)]) == [], c["tag"]
            students = schema["properties"]["students"]["properties"]
            for answer in students.values():
                for q in answer["properties"].values():
                    assert q["properties"]["choice"]["enum"] == list(LETTERS)
                    assert "correct" not in q["properties"]
    assert logged["key"] == logged["moved"]


# -- MalAlgoQA ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def malalgo_questions():
    from edueval.misconceptions import generate_items

    return generate_items(6, seed=3)


MALALGO_VARIANTS = [
    {"prompt": "simple", "shots": 0},
    {"prompt": "simple", "shots": 2, "scoring": "logprob"},
    {"prompt": "cot", "shots": 2},
]


@pytest.mark.parametrize("opts", MALALGO_VARIANTS, ids=lambda o: "-".join(map(str, o.values())))
def test_malalgo_requests_single_nothing_out_and_never_depend_on_the_key(malalgo_questions, opts):
    from edueval.malalgo import evaluate

    def run(questions):
        return lambda client: evaluate(questions, client, max_failures="100%", **opts)

    base = _record(run(malalgo_questions))
    assert len(base) == 5 * len(malalgo_questions)  # four identifications and the MCQ each
    for r in base:
        assert singled_out(r.json_schema, [set(LETTERS)]) == []
        if opts["prompt"] == "simple":
            assert r.json_schema["properties"]["Correct Choice"]["enum"] == list(LETTERS)
    # neither AIA/MIA prompts (is this choice the right one?) nor the MCQ depend on the key
    moved = malalgo_questions.copy()
    moved["answer"] = [LETTERS[(LETTERS.index(a) + 1) % 4] for a in moved["answer"]]
    assert Counter(map(_sent, base)) == Counter(map(_sent, _record(run(moved))))


# -- the imitation game ----------------------------------------------------------------------------

PHASE1 = [
    {"student": "s1", "question": "Ana has 12 pears and eats 5. How many are left?",
     "answer": "17", "correct_answer": "7"},
    {"student": "s2", "question": "Ana has 12 pears and eats 5. How many are left?",
     "answer": "8", "correct_answer": "7"},
    {"student": "s1", "question": "What is 3/4 of 20?", "answer": "80/3", "correct_answer": "15"},
]  # fmt: skip


@pytest.mark.parametrize("unconditioned", [False, True])
def test_turing_requests_single_nothing_out_and_the_key_check_never_sees_the_key(unconditioned):
    from edueval.turing import generate

    def run(client):
        generate(PHASE1, client, unconditioned=unconditioned, max_failures="100%")

    reqs = {k: _record(run, qprime_key=k) for k in ("KEY-1", "KEY-2")}
    secrets = {"KEY-1", "7", "15"} | {r["answer"] for r in PHASE1}
    kinds = Counter()
    for r in reqs["KEY-1"]:
        props = set((r.json_schema or {}).get("properties", {}))
        kind = ("generator" if "related_question" in props else "key check"
                if props == {"answer"} else "ai")  # fmt: skip
        kinds[kind] += 1
        assert singled_out(r.json_schema, [], secrets) == [], kind
        text = _sent(r)
        if kind == "key check":  # a second, separate solve: q' only
            assert "KEY-1" not in text and not any(p["answer"] in text for p in PHASE1)
        if kind == "ai" and unconditioned:  # no student's answer in the single-phase variant
            assert "17" not in text and "80/3" not in text
    assert kinds == {"generator": 2, "key check": 2, "ai": 2 if unconditioned else 3}

    # the generator and the key check ask the same whatever key the generator gave for q'
    def unkeyed(rs):  # the generator's and the key check's requests
        return Counter(_sent(r) for r in rs if "KEY" not in _sent(r))

    def solves(rs):
        return sorted(_sent(r) for r in rs
                      if set((r.json_schema or {}).get("properties", {})) == {"answer"})  # fmt: skip

    assert unkeyed(reqs["KEY-1"]) == unkeyed(reqs["KEY-2"])
    assert solves(reqs["KEY-1"]) == solves(reqs["KEY-2"]) and solves(reqs["KEY-1"])


# -- the tutor -------------------------------------------------------------------------------------

DIALOGUES = [
    {"id": "d1", "turns": [
        {"speaker": "teacher", "text": "What did you get for the first one?"},
        {"speaker": "student", "text": "I got twelve because I added them."},
        {"speaker": "teacher", "text": "REAL-1 Why did you add rather than multiply?"},
        {"speaker": "student", "text": "Because there were two groups."},
        {"speaker": "teacher", "text": "REAL-2 How many were in each group then?"}]},
    {"id": "d2", "turns": [
        {"speaker": "student", "text": "Is the answer a half?"},
        {"speaker": "teacher", "text": "REAL-3 What makes you think it is a half?"}]},
]  # fmt: skip


def test_tutor_requests_never_hold_the_reply_they_are_scored_against():
    from edueval.tutor import reply
    from edueval.tutor.dialogues import as_dialogues, reply_targets

    reqs = _record(lambda client: reply(DIALOGUES, client, max_failures="100%"))
    real = {f"{t.dialogue}:{t.turn}": t.real_reply for t in reply_targets(as_dialogues(DIALOGUES))}
    assert sorted(r.tag for r in reqs) == sorted(real) and len(real) == 3
    for r in reqs:
        assert r.json_schema is None and not r.json_mode
        assert real[r.tag] not in _sent(r), r.tag  # earlier teacher turns only, never the target
    # the later target's context does hold the earlier real reply (the check can see one)
    assert any(real["d1:" + t.split(":")[1]] in _sent(r) for r in reqs for t in real
               if t.startswith("d1") and r.tag.startswith("d1") and t != r.tag)  # fmt: skip
