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
* ``chateval`` -- ChatEval (Chan et al. 2023): the model first writes a panel of expert personas
  for the task (once per learning material, requirement and topic; the QG-SMS paper used
  AutoAgents for this), then the experts speak in turns over several rounds, each seeing the
  discussion so far and answering with a comment that ends in its verdict; the verdict is the
  majority of the last round (a tie goes to the last speaker). ``chateval_personas="fixed"`` uses
  three built-in personas instead.
* ``qg-sms`` -- as the paper and the authors' code run it. Step 1 (per learning material, shared
  by its pairs): at least ``n_profiles`` (>= 10) student profiles, kept whole. Step 2, **once per
  pair**: for every profile, the option chosen and a short explanation on both questions (the
  schema lists every option alike, so it never tells the model the key; edueval scores each
  choice against the key; the answer is an object keyed by the profiles' names, each required
  once). Step 3 in both orders on that one simulation, only the labels swapped: requirement and
  definition, the two questions, every profile with its answers and explanations -- not the
  learning material (the paper's Figure 5). ``simulate="per-order"`` runs Step 2 again for each order (an earlier
  edueval behaviour, kept to measure what it does to CA); ``judge_material=True`` adds the
  material to Step 3.
* ``direct`` -- steps 1-2 of qg-sms, then DF, DC, DE computed from the simulated answers and
  compared (the paper's ablation). DC is the item-total correlation with the total score (share
  correct) over the two questions; TC cannot be computed from performance (status ``n/a``);
  equal measures give status ``tie`` (scored as wrong). With one simulation per pair its two orders agree by construction.

Sampling: every call samples at ``temperature`` (default 1, GPT-4o's default, which the paper
used) with a seed of its own, :func:`call_seed` of the run's seed, the step and the call's tag,
so a re-run sends the same requests and is answered from the cache; ``temperature=0`` is greedy.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..models import ChatResult, parse_json_answer
from ..stats import pearson
from . import prompts as P
from .engine import Ask, StepFailed

__all__ = [
    "METHODS",
    "MIN_PROFILES",
    "PERSONA_SOURCES",
    "SIMULATE_MODES",
    "MethodConfig",
    "call_seed",
    "pair_jobs",
    "persona_job",
    "predictions_ask",
    "profile_job",
    "simulated_measures",
    "sim_tag",
    "simulation_job",
]

METHODS = ("vanilla", "cot", "metrics", "reference", "swap", "chateval", "qg-sms", "direct")
SIMULATE_MODES = ("per-pair", "per-order")
PERSONA_SOURCES = ("generated", "fixed")
MIN_PROFILES = 10


@dataclass(frozen=True)
class MethodConfig:
    """How the methods run.

    Parameters
    ----------
    n_profiles, max_profiles : Step 1 asks for at least ``n_profiles`` (>= 10, the paper's
        minimum) students; the schema lets the model write up to ``max_profiles``, all of which
        are used (the bound only lets a grammar-constrained model end its list).
    personas, rounds : ChatEval's panel size and discussion rounds.
    temperature : sampling temperature of every call (1 = the paper's GPT-4o default; 0 = greedy).
    seed : the run's seed; each call's seed is :func:`call_seed` of it.
    simulate : ``"per-pair"`` (the paper: one Step-2 simulation serves both orders) or
        ``"per-order"`` (Step 2 again for each order).
    judge_material : add the learning material to QG-SMS Step 3 (the paper does not).
    chateval_personas : ``"generated"`` (the model writes the panel) or ``"fixed"``.
    explanation_chars : the most characters of one Step-2 explanation (the schema's bound; the
        paper sets none). The embedded model's 2048-token context needs ~120 with 10 students.
    judge_tokens, cot_tokens, profile_tokens, prediction_tokens : generation limits;
        ``prediction_tokens`` is per simulated student.
    """

    n_profiles: int = 10
    max_profiles: int = 20
    personas: int = 3
    rounds: int = 2
    temperature: float = 1.0
    seed: int = 0
    simulate: str = "per-pair"
    judge_material: bool = False
    chateval_personas: str = "generated"
    explanation_chars: int = P.EXPLANATION_CHARS
    judge_tokens: int = 16
    cot_tokens: int = 320
    profile_tokens: int = 3000
    prediction_tokens: int = 240
    persona_tokens: int = 900


def call_seed(base: int, *parts: Any) -> int:
    """A call's sampling seed: the first 31 bits of SHA-256 over the run's seed and the parts that
    name the call (step, tag, speaker), so every call has its own, reproducible seed."""
    digest = hashlib.sha256(":".join(map(str, (base, *parts))).encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def _ask(
    step: str,
    prompt: str,
    schema: dict | None,
    parse: Any,
    cfg: MethodConfig,
    tag: str,
    max_tokens: int,
    *,
    system: str | None = None,
    temperature: float | None = None,
    who: Any = "",
) -> Ask:
    """An :class:`Ask` sampled at the run's temperature with the call's own seed."""
    t = cfg.temperature if temperature is None else temperature
    seed = call_seed(cfg.seed, step, tag, who)
    return Ask(step, lambda k: P.request(prompt, schema, k, max_tokens=max_tokens, system=system,
                                         tag=tag, temperature=t, seed=seed), parse)  # fmt: skip


def _orders(pair: dict, items: dict) -> list[tuple[int, dict, dict]]:
    a, b = items[pair["q1"]], items[pair["q2"]]
    return [(1, a, b), (2, b, a)]


def _topic(pair: dict) -> str | None:
    t = pair.get("target_topic")
    return t if isinstance(t, str) and t else None


def _verdict_ask(
    step: str, prompt: str, cot: bool, cfg: MethodConfig, tag: str, schema: dict | None = None
) -> Ask:
    schema = schema or P.verdict_schema(cot)

    def parse(res: ChatResult) -> Any:
        v = P.parse_verdict(res)
        if v is None:
            return None
        if cot:
            obj = parse_json_answer(res.text) or {}
            return {"better": v, "reasoning": str(obj.get("reasoning", res.text))[:600]}
        return v

    tokens = cfg.cot_tokens if cot else cfg.judge_tokens
    return _ask(step, prompt, schema, parse, cfg, tag, tokens)


# -- simple baselines -----------------------------------------------------------------------------


def _tag(method: str, pair: dict, order: int | str) -> str:
    """A call's tag (in calls.jsonl, and part of its seed): method, pair and order."""
    return f"{method}:{pair['pair_id']}:{order}"


def _simple_job(pair, order, a, b, cfg, cot):
    tag = _tag("cot" if cot else "vanilla", pair, order)
    prompt = P.judge_prompt(pair["dimension"], _topic(pair), a["material_text"], a, b, cot=cot)
    (v,) = yield [_verdict_ask("judge", prompt, cot, cfg, tag)]
    return [{"order": order, "verdict": v["better"] if cot else v}]


def _criteria_job(pair, order, a, b, cfg):
    tag = _tag("metrics", pair, order)
    d, topic, mat = pair["dimension"], _topic(pair), a["material_text"]

    def parse(res):
        obj = parse_json_answer(res.text, require_keys=["criteria"])
        if not obj or not isinstance(obj["criteria"], list):
            return None
        crit = [str(c).strip() for c in obj["criteria"] if str(c).strip()]
        return crit if len(crit) >= 1 else None

    cprompt = P.criteria_prompt(d, topic, mat)
    (crit,) = yield [_ask("criteria", cprompt, P.CRITERIA_SCHEMA, parse, cfg, tag, 300)]
    extra = (
        "# Criteria you wrote before seeing the questions\n"
        + "\n".join(f"- {c}" for c in crit)
        + "\n\n"
    )
    prompt = P.judge_prompt(d, topic, mat, a, b, cot=False, extra=extra)
    (v,) = yield [_verdict_ask("judge", prompt, False, cfg, tag)]
    return [{"order": order, "verdict": v}]


def _reference_job(pair, order, a, b, cfg):
    tag = _tag("reference", pair, order)
    d, topic, mat = pair["dimension"], _topic(pair), a["material_text"]

    def parse(res):
        obj = parse_json_answer(res.text, require_keys=["question"])
        q = str(obj["question"]).strip() if obj else ""
        return q or None

    rprompt = P.reference_prompt(d, topic, mat)
    (ref,) = yield [_ask("reference", rprompt, P.REFERENCE_SCHEMA, parse, cfg, tag, 200)]
    extra = f"# A reference question that meets the requirement\n{ref}\n\n"
    prompt = P.judge_prompt(d, topic, mat, a, b, cot=False, extra=extra)
    (v,) = yield [_verdict_ask("judge", prompt, False, cfg, tag)]
    return [{"order": order, "verdict": v}]


def _swap_job(pair, items, cfg):
    d, topic = pair["dimension"], _topic(pair)
    (o1, a1, b1), (o2, a2, b2) = _orders(pair, items)
    mat = a1["material_text"]
    p1 = P.judge_prompt(d, topic, mat, a1, b1, cot=True)
    p2 = P.judge_prompt(d, topic, mat, a2, b2, cot=True)
    v1, v2 = yield [
        _verdict_ask("cot", p1, True, cfg, _tag("swap", pair, 1)),
        _verdict_ask("cot", p2, True, cfg, _tag("swap", pair, 2)),
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
        _verdict_ask("synthesis", s1, True, cfg, _tag("swap", pair, 1)),
        _verdict_ask("synthesis", s2, True, cfg, _tag("swap", pair, 2)),
    ]
    return [{"order": 1, "verdict": w1["better"]}, {"order": 2, "verdict": w2["better"]}]


# -- ChatEval -------------------------------------------------------------------------------------


def persona_key(pair: dict) -> tuple[str, str, str]:
    """The ChatEval instruction a pair belongs to: (material, dimension, target topic)."""
    return (str(pair["material"]), str(pair["dimension"]), _topic(pair) or "")


def persona_job(key: tuple[str, str, str], material: str, cfg: MethodConfig):
    """ChatEval's first step for one instruction (material, requirement, topic): the model writes
    ``cfg.personas`` expert personas, ``[(role, description), ...]``, shared by every pair of that
    instruction in both orders."""
    mat_id, dimension, topic = key
    k = cfg.personas
    prompt = P.personas_prompt(dimension, topic or None, material, k)

    def parse(res):
        obj = parse_json_answer(res.text, require_keys=["experts"])
        if not obj or not isinstance(obj["experts"], list):
            return None
        out = []
        for e in obj["experts"]:
            if not isinstance(e, dict):
                return None
            role, desc = str(e.get("role", "")).strip(), str(e.get("description", "")).strip()
            if not role or not desc:
                return None
            out.append((role, desc))
        return out if len(out) == k else None

    tag = f"chateval:personas:{mat_id}:{dimension}:{topic}"
    (personas,) = yield [
        _ask("personas", prompt, P.personas_schema(k), parse, cfg, tag, cfg.persona_tokens)
    ]
    return personas


def _chateval_job(pair, order, a, b, cfg, personas):
    if isinstance(personas, StepFailed):
        raise StepFailed(personas.step, personas.reason)
    if cfg.chateval_personas == "fixed":
        personas = list(P.PERSONAS[: cfg.personas])
    tag = _tag("chateval", pair, order)
    d, topic, mat = pair["dimension"], _topic(pair), a["material_text"]
    schema = P.discussion_schema()

    def parse(res):
        obj = parse_json_answer(res.text, require_keys=["better"])
        v = P.parse_verdict(res)
        if v is None:
            return None
        return {"better": v, "comment": str((obj or {}).get("comment", ""))[:600]}

    history: list[str] = []
    last: list[str] = []
    for rnd in range(1, cfg.rounds + 1):
        last = []
        for who, (role, desc) in enumerate(personas):
            prompt = P.discussion_prompt(d, topic, mat, a, b, history, rnd, cfg.rounds)
            system = P.persona_system(role, desc, len(personas))
            (turn,) = yield [_ask(f"discussion r{rnd}", prompt, schema, parse, cfg, tag,
                                  cfg.cot_tokens, system=system, who=who)]  # fmt: skip
            history.append(f"{role}: {turn['comment']} (verdict: Output ({turn['better']}))")
            last.append(turn["better"])
    n_a = last.count("a")
    verdict = "a" if n_a * 2 > len(last) else "b" if n_a * 2 < len(last) else last[-1]
    return [{"order": order, "verdict": verdict}]


# -- QG-SMS ---------------------------------------------------------------------------------------


def profile_job(material_id: str, material: str, cfg: MethodConfig, repeat: int = 0):
    """Step 1 for one learning material: at least ``n_profiles`` (>= 10) distinct named profiles,
    each kept whole. Repeat 0 samples at ``cfg.temperature``; repeats >= 1 (profile robustness)
    at temperature 1, as the paper's robustness runs, each with its own seed."""
    n = max(cfg.n_profiles, MIN_PROFILES)
    prompt = P.profiles_prompt(material, n)
    schema = P.profiles_schema(n, cfg.max_profiles)

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
        return out if len(out) >= n else None  # the count is checked; every profile is used

    temperature = cfg.temperature if repeat == 0 else 1.0
    tag = f"profiles:{material_id}:r{repeat}"
    (profiles,) = yield [_ask("profiles", prompt, schema, parse, cfg, tag, cfg.profile_tokens,
                              temperature=temperature)]  # fmt: skip
    return profiles


def _check_answer(x: Any, item: dict) -> dict | None:
    """One simulated answer, or None when malformed (no such option, or no explanation).
    Correctness is edueval's: the chosen option against the item's key, which the model was never
    shown; a ``correct`` field the model may add anyway is ignored."""
    if not isinstance(x, dict) or "choice" not in x:
        return None
    choice = str(x["choice"]).strip().upper()
    why = str(x.get("explanation") or "").strip()
    if choice not in item["options"] or not why:
        return None
    return {"correct": choice == item["answer"], "choice": choice, "explanation": why}


def predictions_ask(
    profiles: list[dict],
    first: dict,
    second: dict,
    cfg: MethodConfig,
    tag: str,
    *,
    temperature: float | None = None,
) -> Ask:
    """Step 2: every profile's answer on ``first`` (shown as Question 1) and ``second``. The value
    is ``[{"name", "answers": {item id: {"correct", "choice", "explanation"}}}]`` in profile
    order (``correct`` is edueval's: the choice against the key); an answer missing a profile,
    or with a profile twice, is malformed."""
    names = [p["name"] for p in profiles]
    prompt = P.predictions_prompt(first["material_text"], profiles, first, second)
    schema = P.predictions_schema(names, first, second, cfg.explanation_chars)
    k1, k2 = P.SIM_KEYS

    def parse(res: Any) -> list[dict] | None:
        obj = parse_json_answer(res.text, require_keys=["students"])
        if not obj:
            return None
        students = obj["students"]
        if isinstance(students, dict):  # the schema's form: {name: {"question_1", ...}}
            students = [{**v, "name": k} if isinstance(v, dict) else None
                        for k, v in students.items()]  # fmt: skip
        if not isinstance(students, list):
            return None
        got: dict[str, dict] = {}
        for s in students:
            if not isinstance(s, dict):
                return None
            name = str(s.get("name", "")).strip()
            p1, p2 = _check_answer(s.get(k1), first), _check_answer(s.get(k2), second)
            if name not in names or name in got or p1 is None or p2 is None:
                return None
            got[name] = {"name": name, "answers": {first["item"]: p1, second["item"]: p2}}
        if set(got) != set(names):
            return None  # incomplete: every profile must be predicted on both questions
        return [got[n] for n in names]

    tokens = 200 + cfg.prediction_tokens * len(profiles)
    return _ask("predictions", prompt, schema, parse, cfg, tag, tokens, temperature=temperature)


def sim_tag(pair: dict, order: int | None = None, repeat: int = 0) -> str:
    """The tag of a Step-2 call: the pair's one simulation, one order's (``per-order``), or a
    robustness repeat's. qg-sms and direct share it, so they share the simulation."""
    tag = f"simulate:{pair['pair_id']}" + (f":{order}" if order is not None else "")
    return tag + (f":r{repeat}" if repeat else "")


def simulation_job(pair: dict, items: dict, cfg: MethodConfig, profiles: list[dict] | None):
    """Step 2 once for a pair, its questions in the pair's own order (q1 = Question 1)."""
    if profiles is None:
        raise StepFailed("profiles", "no valid student profiles for this learning material")
    first, second = items[pair["q1"]], items[pair["q2"]]
    (preds,) = yield [predictions_ask(profiles, first, second, cfg, sim_tag(pair))]
    return preds


def simulated_measures(preds: list[dict], item: dict, other: dict) -> dict[str, float]:
    """DF, DC (item-total over the two questions) and DE (distractors chosen by >= 5% of the
    simulated students) of ``item`` from Step-2 predictions of the pair (``item``, ``other``).
    The total score is the share correct, as in :func:`~edueval.items.analyze_items`; every
    simulated student answers both questions, so the count would give the same DC."""
    x = np.array([float(p["answers"][item["item"]]["correct"]) for p in preds])
    t = (x + np.array([float(p["answers"][other["item"]]["correct"]) for p in preds])) / 2
    n = len(preds)
    chosen = [p["answers"][item["item"]]["choice"] for p in preds]
    de = sum(1 for o in item["options"] if o != item["answer"] and chosen.count(o) * 100 >= 5 * n)
    return {"DF": float(x.mean()), "DC": pearson(x, t), "DE": float(de)}


def _sim_fields(preds: list[dict], a: dict, b: dict) -> dict:
    return {"sim_a": simulated_measures(preds, a, b), "sim_b": simulated_measures(preds, b, a)}


def _direct_verdict(dimension: str, order: int, preds: list[dict], a: dict, b: dict) -> dict:
    sim = _sim_fields(preds, a, b)
    if dimension == "TC":
        return {"order": order, "verdict": None, "status": "n/a", **sim}
    ma, mb = sim["sim_a"][dimension], sim["sim_b"][dimension]
    if not (np.isfinite(ma) and np.isfinite(mb)) or ma == mb:
        return {"order": order, "verdict": None, "status": "tie", **sim}
    return {"order": order, "verdict": "a" if ma > mb else "b", **sim}


def _sms_judge_ask(pair, order, a, b, cfg, profiles, preds) -> Ask:
    perf = P.performance_text(profiles, preds, a, b)
    mat = a["material_text"] if cfg.judge_material else None
    prompt = P.sms_judge_prompt(pair["dimension"], _topic(pair), a, b, perf, mat)
    return _verdict_ask("judge", prompt, False, cfg, _tag("qg-sms", pair, order),
                        schema=P.SMS_VERDICT_SCHEMA)  # fmt: skip


def _reraise(sim: Any) -> None:
    if isinstance(sim, StepFailed):
        raise StepFailed(sim.step, sim.reason)


def _sms_job(pair, order, a, b, cfg, profiles, sim):
    """Step 3 of one order on the pair's shared simulation ``sim`` (or its failure)."""
    _reraise(sim)
    (v,) = yield [_sms_judge_ask(pair, order, a, b, cfg, profiles, sim)]
    return [{"order": order, "verdict": v, **_sim_fields(sim, a, b)}]


def _direct_job(pair, items, sim):
    """Both orders of the ablation from the pair's one simulation: no model call."""
    _reraise(sim)
    yield from ()  # a generator only so that drive() runs it like the others
    return [_direct_verdict(pair["dimension"], o, sim, a, b) for o, a, b in _orders(pair, items)]


def _per_order_job(pair, order, a, b, cfg, profiles, *, direct: bool):
    """``simulate="per-order"``: Step 2 again for this order (Output (a) shown as Question 1)."""
    if profiles is None:
        raise StepFailed("profiles", "no valid student profiles for this learning material")
    (preds,) = yield [predictions_ask(profiles, a, b, cfg, sim_tag(pair, order))]
    if direct:
        return [_direct_verdict(pair["dimension"], order, preds, a, b)]
    (v,) = yield [_sms_judge_ask(pair, order, a, b, cfg, profiles, preds)]
    return [{"order": order, "verdict": v, **_sim_fields(preds, a, b)}]


def pair_jobs(
    method: str,
    pair: dict,
    items: dict,
    cfg: MethodConfig,
    profiles: list[dict] | None = None,
    simulation: list[dict] | StepFailed | None = None,
    personas: list[tuple[str, str]] | StepFailed | None = None,
) -> list:
    """The jobs that judge ``pair`` in both orders with ``method``; each job covers one order,
    or both when it is the only one.

    ``profiles``: the material's Step-1 profiles (None if Step 1 failed), for qg-sms and direct;
    ``simulation``: the pair's Step-2 predictions or their failure (``simulate="per-pair"``);
    ``personas``: ChatEval's generated panel for the pair's instruction, or its failure."""
    if method == "swap":
        return [_swap_job(pair, items, cfg)]
    if method in ("qg-sms", "direct") and cfg.simulate == "per-pair":
        if simulation is None:
            raise ValueError("qg-sms/direct with simulate='per-pair' need the pair's simulation")
        if method == "direct":
            return [_direct_job(pair, items, simulation)]
        return [_sms_job(pair, o, a, b, cfg, profiles, simulation) for o, a, b in
                _orders(pair, items)]  # fmt: skip
    if method == "chateval" and cfg.chateval_personas == "generated" and personas is None:
        raise ValueError("chateval with generated personas needs the pair's personas")
    jobs = []
    for order, a, b in _orders(pair, items):
        if method in ("vanilla", "cot"):
            jobs.append(_simple_job(pair, order, a, b, cfg, cot=method == "cot"))
        elif method == "metrics":
            jobs.append(_criteria_job(pair, order, a, b, cfg))
        elif method == "reference":
            jobs.append(_reference_job(pair, order, a, b, cfg))
        elif method == "chateval":
            jobs.append(_chateval_job(pair, order, a, b, cfg, personas))
        elif method in ("qg-sms", "direct"):
            jobs.append(_per_order_job(pair, order, a, b, cfg, profiles,
                                       direct=method == "direct"))  # fmt: skip
        else:
            raise ValueError(f"unknown method {method!r}")
    return jobs
