"""The evaluation methods of P4 as jobs for :func:`~edueval.qgsms.engine.drive`.

Each method judges a pair in both orders: order 1 shows ``q1`` as Output (a) and ``q2`` as Output
(b), order 2 the reverse. A judgement is ``{"order", "verdict"}`` with verdict ``a``/``b`` (or
``None`` with a ``status`` when the method cannot decide).

* ``vanilla`` -- one call: requirement, definition, material, the two questions, answer a/b.
* ``cot`` -- the same, reasoning first.
* ``metrics`` -- the model first writes criteria for the requirement (from the material only),
  then judges with them.
* ``reference`` -- the model first writes a reference question meeting the requirement, then
  judges against it.
* ``swap`` -- CoT in both orders; if the two verdicts pick different questions, a synthesis call
  per order weighs both assessments.
* ``chateval`` -- expert personas discuss in turns over several rounds; each turn sees the
  discussion so far; the verdict is the majority of the last round.
* ``qg-sms`` -- step 1 (per learning material, shared by its pairs): ≥ 10 student profiles;
  step 2: for every profile, correct/incorrect and the chosen option on both questions (the
  grammar/schema only allows the key when correct and a distractor when wrong; the answer is an
  object keyed by the profiles' names, each required once); step 3: the judgement given the simulated performance.
* ``direct`` -- steps 1-2 of qg-sms, then DF, DC, DE computed from the simulated answers and
  compared (the paper's ablation). DC is the item-total correlation with the total over the two
  questions; TC cannot be computed from performance (status ``n/a``); equal measures give status
  ``tie`` (scored as wrong).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..items.analysis import pearson
from ..models import ChatResult, parse_json_answer
from . import prompts as P
from .engine import Ask, StepFailed

__all__ = ["METHODS", "MethodConfig", "pair_jobs", "profile_job", "simulated_measures"]

METHODS = ("vanilla", "cot", "metrics", "reference", "swap", "chateval", "qg-sms", "direct")
MIN_PROFILES = 10


@dataclass(frozen=True)
class MethodConfig:
    n_profiles: int = 10
    personas: int = 3
    rounds: int = 2
    judge_tokens: int = 16
    cot_tokens: int = 320
    profile_tokens: int = 900
    prediction_tokens: int = 900


def _orders(pair: dict, items: dict) -> list[tuple[int, dict, dict]]:
    a, b = items[pair["q1"]], items[pair["q2"]]
    return [(1, a, b), (2, b, a)]


def _topic(pair: dict) -> str | None:
    t = pair.get("target_topic")
    return t if isinstance(t, str) and t else None


def _verdict_ask(step: str, prompt: str, cot: bool, max_tokens: int, tag: str) -> Ask:
    schema = P.verdict_schema(cot)

    def parse(res: ChatResult) -> Any:
        v = P.parse_verdict(res)
        if v is None:
            return None
        if cot:
            obj = parse_json_answer(res.text) or {}
            return {"better": v, "reasoning": str(obj.get("reasoning", res.text))[:600]}
        return v

    return Ask(step, lambda k: P.request(prompt, schema, k, max_tokens=max_tokens, tag=tag), parse)


# -- simple baselines -----------------------------------------------------------------------------


def _simple_job(pair, items, order, a, b, cfg, cot):
    tag = f"{pair['pair_id']}:{order}"
    prompt = P.judge_prompt(pair["dimension"], _topic(pair), a["material_text"], a, b, cot=cot)
    tokens = cfg.cot_tokens if cot else cfg.judge_tokens
    (v,) = yield [_verdict_ask("judge", prompt, cot, tokens, tag)]
    return [{"order": order, "verdict": v["better"] if cot else v}]


def _criteria_job(pair, items, order, a, b, cfg):
    tag = f"{pair['pair_id']}:{order}"
    d, topic, mat = pair["dimension"], _topic(pair), a["material_text"]
    cprompt = P.criteria_prompt(d, topic, mat)

    def parse(res):
        obj = parse_json_answer(res.text, require_keys=["criteria"])
        if not obj or not isinstance(obj["criteria"], list):
            return None
        crit = [str(c).strip() for c in obj["criteria"] if str(c).strip()]
        return crit if len(crit) >= 1 else None

    (crit,) = yield [
        Ask(
            "criteria",
            lambda k: P.request(cprompt, P.CRITERIA_SCHEMA, k, max_tokens=300, tag=tag),
            parse,
        )  # fmt: skip
    ]
    extra = (
        "# Criteria you wrote before seeing the questions\n"
        + "\n".join(f"- {c}" for c in crit)
        + "\n\n"
    )
    prompt = P.judge_prompt(d, topic, mat, a, b, cot=False, extra=extra)
    (v,) = yield [_verdict_ask("judge", prompt, False, cfg.judge_tokens, tag)]
    return [{"order": order, "verdict": v}]


def _reference_job(pair, items, order, a, b, cfg):
    tag = f"{pair['pair_id']}:{order}"
    d, topic, mat = pair["dimension"], _topic(pair), a["material_text"]
    rprompt = P.reference_prompt(d, topic, mat)

    def parse(res):
        obj = parse_json_answer(res.text, require_keys=["question"])
        q = str(obj["question"]).strip() if obj else ""
        return q or None

    (ref,) = yield [
        Ask(
            "reference",
            lambda k: P.request(rprompt, P.REFERENCE_SCHEMA, k, max_tokens=200, tag=tag),
            parse,
        )  # fmt: skip
    ]
    extra = f"# A reference question that meets the requirement\n{ref}\n\n"
    prompt = P.judge_prompt(d, topic, mat, a, b, cot=False, extra=extra)
    (v,) = yield [_verdict_ask("judge", prompt, False, cfg.judge_tokens, tag)]
    return [{"order": order, "verdict": v}]


def _swap_job(pair, items, cfg):
    d, topic = pair["dimension"], _topic(pair)
    (o1, a1, b1), (o2, a2, b2) = _orders(pair, items)
    mat = a1["material_text"]
    p1 = P.judge_prompt(d, topic, mat, a1, b1, cot=True)
    p2 = P.judge_prompt(d, topic, mat, a2, b2, cot=True)
    v1, v2 = yield [
        _verdict_ask("cot", p1, True, cfg.cot_tokens, f"{pair['pair_id']}:1"),
        _verdict_ask("cot", p2, True, cfg.cot_tokens, f"{pair['pair_id']}:2"),
    ]
    item1 = a1["item"] if v1["better"] == "a" else b1["item"]
    item2 = a2["item"] if v2["better"] == "a" else b2["item"]
    if item1 == item2:
        return [{"order": 1, "verdict": v1["better"]}, {"order": 2, "verdict": v2["better"]}]
    said = [(item1, 1, v1["reasoning"]), (item2, 2, v2["reasoning"])]

    def extra(a: dict, shown_order: int) -> str:  # labels as the questions appear in this prompt
        return P.synthesis_extra([("a" if item == a["item"] else "b", seen != shown_order, why)
                                  for item, seen, why in said])  # fmt: skip

    s1 = P.judge_prompt(d, topic, mat, a1, b1, cot=True, extra=extra(a1, 1))
    s2 = P.judge_prompt(d, topic, mat, a2, b2, cot=True, extra=extra(a2, 2))
    w1, w2 = yield [
        _verdict_ask("synthesis", s1, True, cfg.cot_tokens, f"{pair['pair_id']}:1"),
        _verdict_ask("synthesis", s2, True, cfg.cot_tokens, f"{pair['pair_id']}:2"),
    ]
    return [{"order": 1, "verdict": w1["better"]}, {"order": 2, "verdict": w2["better"]}]


def _chateval_job(pair, items, order, a, b, cfg):
    tag = f"{pair['pair_id']}:{order}"
    d, topic, mat = pair["dimension"], _topic(pair), a["material_text"]
    personas = P.PERSONAS[: cfg.personas]
    schema = P.discussion_schema()
    history: list[str] = []
    last: list[str] = []
    for rnd in range(cfg.rounds):
        last = []
        for name, role in personas:
            said = "\n".join(history) if history else "(nobody has spoken yet)"
            extra = (
                f"# Panel discussion so far (round {rnd + 1} of {cfg.rounds})\n{said}\n\n"
                f"You are the {name} on a panel of experts. {role} Add your view in 'comment' "
                "(build on or challenge what was said), then give your current 'better'.\n\n"
            )
            prompt = P.judge_prompt(d, topic, mat, a, b, cot=False, extra=extra)

            def parse(res):
                obj = parse_json_answer(res.text, require_keys=["better"])
                v = P.parse_verdict(res)
                if v is None:
                    return None
                return {"better": v, "comment": str((obj or {}).get("comment", ""))[:400]}

            (turn,) = yield [
                Ask(
                    f"discussion r{rnd + 1}",
                    lambda k, p=prompt: P.request(p, schema, k, max_tokens=cfg.cot_tokens, tag=tag),
                    parse,
                )  # fmt: skip
            ]
            history.append(f"{name}: {turn['comment']} -> prefers Output ({turn['better']})")
            last.append(turn["better"])
    n_a = last.count("a")
    verdict = "a" if n_a * 2 > len(last) else "b" if n_a * 2 < len(last) else last[-1]
    return [{"order": order, "verdict": verdict}]


# -- QG-SMS ---------------------------------------------------------------------------------------


def profile_job(material_id: str, material: str, cfg: MethodConfig, repeat: int = 0):
    """Step 1 for one learning material: ``n_profiles`` (≥ 10) distinct named profiles. Repeat 0
    is greedy; repeats ≥ 1 sample at temperature 1 with their own seed (profile robustness)."""
    n = max(cfg.n_profiles, MIN_PROFILES)
    prompt = P.profiles_prompt(material, n)
    schema = P.profiles_schema(n)

    def parse(res):
        obj = parse_json_answer(res.text, require_keys=["students"])
        if not obj or not isinstance(obj["students"], list):
            return None
        out, names = [], set()
        for s in obj["students"]:
            if not isinstance(s, dict):
                return None
            name = str(s.get("name", "")).strip()
            und = str(s.get("understanding", "")).strip()
            if not name or not und:
                return None
            base, k = name, 2
            while name.lower() in names:  # same name twice: keep both students, tell them apart
                name, k = f"{base} ({k})", k + 1
            names.add(name.lower())
            out.append({"name": name, "understanding": und})
        return out if len(out) >= MIN_PROFILES else None  # the count is checked

    temperature = 0.0 if repeat == 0 else 1.0
    (profiles,) = yield [
        Ask(
            "profiles",
            lambda k: P.request(
                prompt,
                schema,
                k,
                max_tokens=cfg.profile_tokens,
                tag=f"{material_id}:r{repeat}",
                temperature=temperature,
                seed=repeat or None,
            ),  # fmt: skip
            parse,
        )
    ]
    return profiles


def predictions_ask(profiles: list[dict], a: dict, b: dict, cfg: MethodConfig, tag: str) -> Ask:
    names = [p["name"] for p in profiles]
    prompt = P.predictions_prompt(a["material_text"], profiles, a, b)
    schema = P.predictions_schema(names, a, b)

    def check(x: Any, item: dict) -> dict | None:
        if not isinstance(x, dict) or "choice" not in x or "correct" not in x:
            return None
        choice = str(x["choice"]).strip().upper()
        correct = x["correct"]
        if isinstance(correct, str):
            correct = {"true": True, "false": False}.get(correct.strip().lower())
        if choice not in item["options"] or not isinstance(correct, bool):
            return None
        if correct != (choice == item["answer"]):
            return None  # "correct" but a distractor, or "incorrect" with the key
        return {"correct": correct, "choice": choice}

    def parse(res):
        obj = parse_json_answer(res.text, require_keys=["students"])
        if not obj:
            return None
        students = obj["students"]
        if isinstance(students, dict):  # the schema's form: {name: {"a", "b"}}
            students = [{**v, "name": k} if isinstance(v, dict) else None
                        for k, v in students.items()]  # fmt: skip
        if not isinstance(students, list):
            return None
        got: dict[str, dict] = {}
        for s in students:
            if not isinstance(s, dict):
                return None
            name = str(s.get("name", "")).strip()
            pa, pb = check(s.get("a"), a), check(s.get("b"), b)
            if name not in names or name in got or pa is None or pb is None:
                return None
            got[name] = {"name": name, "a": pa, "b": pb}
        if set(got) != set(names):
            return None  # incomplete: every profile must be predicted on both questions
        return [got[n] for n in names]

    return Ask(
        "predictions",
        lambda k: P.request(prompt, schema, k, max_tokens=cfg.prediction_tokens, tag=tag),
        parse,
    )


def simulated_measures(preds: list[dict], side: str, item: dict) -> dict[str, float]:
    """DF, DC (item-total over the two questions) and DE (distractors chosen by ≥ 5% of the
    simulated students) of one question from step-2 predictions."""
    x = np.array([float(p[side]["correct"]) for p in preds])
    other = "b" if side == "a" else "a"
    t = x + np.array([float(p[other]["correct"]) for p in preds])
    n = len(preds)
    chosen = [p[side]["choice"] for p in preds]
    de = sum(1 for o in item["options"] if o != item["answer"] and chosen.count(o) * 100 >= 5 * n)
    return {"DF": float(x.mean()), "DC": pearson(x, t), "DE": float(de)}


def _qgsms_job(pair, items, order, a, b, cfg, profiles, *, direct: bool):
    tag = f"{pair['pair_id']}:{order}"
    if profiles is None:
        raise StepFailed("profiles", "no valid student profiles for this learning material")
    (preds,) = yield [predictions_ask(profiles, a, b, cfg, tag)]
    d = pair["dimension"]
    sim = {
        "sim_a": simulated_measures(preds, "a", a),
        "sim_b": simulated_measures(preds, "b", b),
    }
    if direct:
        if d == "TC":
            return [{"order": order, "verdict": None, "status": "n/a", **sim}]
        ma, mb = sim["sim_a"][d], sim["sim_b"][d]
        if not (np.isfinite(ma) and np.isfinite(mb)) or ma == mb:
            return [{"order": order, "verdict": None, "status": "tie", **sim}]
        return [{"order": order, "verdict": "a" if ma > mb else "b", **sim}]
    extra = "# Simulated students' performance\n" + P.performance_text(preds) + "\n\n"
    prompt = P.judge_prompt(d, _topic(pair), a["material_text"], a, b, cot=False, extra=extra)
    (v,) = yield [_verdict_ask("judge", prompt, False, cfg.judge_tokens, tag)]
    return [{"order": order, "verdict": v, **sim}]


def pair_jobs(method: str, pair: dict, items: dict, cfg: MethodConfig, profiles=None) -> list:
    """The jobs that judge ``pair`` in both orders with ``method`` (``profiles`` for qg-sms and
    direct: the material's step-1 profiles, or None if step 1 failed)."""
    if method == "swap":
        return [_swap_job(pair, items, cfg)]
    jobs = []
    for order, a, b in _orders(pair, items):
        if method == "vanilla":
            jobs.append(_simple_job(pair, items, order, a, b, cfg, cot=False))
        elif method == "cot":
            jobs.append(_simple_job(pair, items, order, a, b, cfg, cot=True))
        elif method == "metrics":
            jobs.append(_criteria_job(pair, items, order, a, b, cfg))
        elif method == "reference":
            jobs.append(_reference_job(pair, items, order, a, b, cfg))
        elif method == "chateval":
            jobs.append(_chateval_job(pair, items, order, a, b, cfg))
        elif method in ("qg-sms", "direct"):
            jobs.append(
                _qgsms_job(pair, items, order, a, b, cfg, profiles, direct=method == "direct")
            )
        else:
            raise ValueError(f"unknown method {method!r}")
    return jobs
