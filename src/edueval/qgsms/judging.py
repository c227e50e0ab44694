"""Judging the pairs: QG-SMS's steps and the baselines, every method on every pair in both orders,
through one open model client (the jobs of :mod:`.methods`, driven by :func:`.engine.drive` over
the shared loop :func:`edueval.models.evaluate.evaluate_requests`).

:func:`judge_pairs` returns a :class:`Judged`: the judgement rows, the cost per method, the
robustness repeats and the logs of the shared steps (profiles, simulations, ChatEval panels).
Nothing is written; ``log`` (a callable) is the only output, and only when given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..io import InputError
from .engine import StepFailed, drive
from .methods import (
    METHODS,
    MIN_PROFILES,
    PERSONA_SOURCES,
    SIMULATE_MODES,
    MethodConfig,
    pair_jobs,
    persona_job,
    persona_key,
    predictions_ask,
    profile_job,
    sim_tag,
    simulation_job,
)
from .prompts import PERSONAS

__all__ = ["SEED_RULE", "Judged", "check_config", "judge_pairs"]

SEED_RULE = (
    "each call's seed = first 31 bits of SHA-256('<seed>:<step>:<tag>:<speaker>'); a retry's = "
    "first 31 bits of SHA-256('<that seed>:retry:<attempt>'); both are in calls.jsonl"
)


def _items_dict(items: pd.DataFrame) -> dict[str, dict]:
    return {r["item"]: r for r in items.to_dict("records")}


def _judgement_rows(method, pair, outcome, orders) -> list[dict]:
    got = {}
    if outcome.failed is None:
        for j in outcome.value:
            got[j["order"]] = j
    rows = []
    for order in orders:
        a, b = (pair["q1"], pair["q2"]) if order == 1 else (pair["q2"], pair["q1"])
        ma, mb = pair.get("measure_q1", np.nan), pair.get("measure_q2", np.nan)
        ma, mb = (ma, mb) if order == 1 else (mb, ma)
        base = {"method": method, "pair_id": pair["pair_id"], "dimension": pair["dimension"],
                "material": pair["material"], "order": order, "a": a, "b": b,
                "better": pair["better"], "diff": pair["diff"], "measure_a": ma,
                "measure_b": mb}  # fmt: skip
        if order not in got:
            if outcome.failed is None:
                continue  # this job covered the other order
            rows.append({**base, "verdict": "", "chosen": "", "correct": 0, "status": "failed",
                         "step": outcome.failed.step, "error": outcome.failed.reason})  # fmt: skip
            continue
        j = got[order]
        v = j.get("verdict")
        chosen = (a if v == "a" else b) if v in ("a", "b") else ""
        status = j.get("status", "ok")
        row = {**base, "verdict": v or "", "chosen": chosen, "correct": int(chosen ==
               pair["better"]), "status": status, "step": "", "error": ""}  # fmt: skip
        for side in ("a", "b"):
            for k, val in (j.get(f"sim_{side}") or {}).items():
                row[f"sim_{k}_{side}"] = val
        rows.append(row)
    return rows


def check_config(methods: list[str], cfg: MethodConfig, repeats: int, retries: int) -> None:
    for m in methods:
        if m not in METHODS:
            raise InputError(f"unknown method {m!r}; expected one of {', '.join(METHODS)}")
    if not methods:
        raise InputError("methods= is empty: give at least one method")
    if cfg.n_profiles < MIN_PROFILES:
        raise InputError("profiles= must be at least 10 (the paper's minimum)")
    if cfg.max_profiles < cfg.n_profiles:
        raise InputError("max_profiles= must be at least profiles=")
    if cfg.explanation_chars < 20:
        raise InputError("explanation_chars= must be at least 20")
    if repeats < 1 or retries < 0:
        raise InputError("repeats= must be >= 1 and retries= >= 0")
    if not 0.0 <= cfg.temperature <= 2.0:
        raise InputError("temperature= must be between 0 and 2")
    if cfg.simulate not in SIMULATE_MODES:
        raise InputError(f"simulate= must be one of {', '.join(SIMULATE_MODES)}")
    if cfg.chateval_personas not in PERSONA_SOURCES:
        raise InputError(f"chateval_personas= must be one of {', '.join(PERSONA_SOURCES)}")
    top = len(PERSONAS) if cfg.chateval_personas == "fixed" else 5
    if not 1 <= cfg.personas <= top or cfg.rounds < 1:
        raise InputError(f"personas= must be 1-{top} with chateval_personas= "
                         f"{cfg.chateval_personas}, and rounds= >= 1")  # fmt: skip


def _phase_cost(outs: list) -> dict[str, int]:
    return {"calls": sum(o.cost.calls for o in outs),
            "tokens": sum(o.cost.prompt_tokens + o.cost.completion_tokens for o in outs),
            "retries": sum(o.cost.retries for o in outs),
            "malformed": sum(o.cost.malformed for o in outs)}  # fmt: skip


def _add(*costs: dict[str, int]) -> dict[str, int]:
    return {k: sum(c.get(k, 0) for c in costs) for k in ("calls", "tokens", "retries", "malformed")}


def _value(o) -> Any:
    return o.value if o.failed is None else StepFailed(o.failed.step, o.failed.reason)


def _step1(client, materials, mat_text, cfg, repeats, retries) -> tuple[dict, list, dict]:
    """Step 1 (profiles) for every material and repeat; the cost of repeat 0 (what the methods
    use) is returned apart from the robustness repeats'."""
    keys = [(m, r) for m in materials for r in range(repeats)]
    outs = drive([profile_job(m, mat_text[m], cfg, r) for m, r in keys], client,
                 retries=retries, progress="qgsms step 1: profiles")  # fmt: skip
    profiles: dict[tuple[str, int], list | None] = {}
    log = []
    for (m, r), o in zip(keys, outs, strict=True):
        profiles[(m, r)] = o.value if o.failed is None else None
        log.append({"material": m, "repeat": r, "ok": o.failed is None,
                    "error": str(o.failed or ""), "profiles": o.value})  # fmt: skip
    cost = _phase_cost([o for (_, r), o in zip(keys, outs, strict=True) if r == 0])
    return profiles, log, cost


def _step2(client, precs, idict, cfg, profiles, retries) -> tuple[dict, list, dict]:
    """Step 2 once per pair (``simulate="per-pair"``): ``{pair_id: predictions | StepFailed}``."""
    jobs = [simulation_job(p, idict, cfg, profiles.get((p["material"], 0))) for p in precs]
    outs = drive(jobs, client, retries=retries, progress="qgsms step 2: simulated students")
    sims, log = {}, []
    for p, o in zip(precs, outs, strict=True):
        sims[p["pair_id"]] = _value(o)
        log.append({"pair_id": p["pair_id"], "q1": p["q1"], "q2": p["q2"],
                    "ok": o.failed is None, "error": str(o.failed or ""),
                    "predictions": o.value})  # fmt: skip
    return sims, log, _phase_cost(outs)


def _panels(client, precs, mat_text, cfg, retries) -> tuple[dict, list, dict]:
    """ChatEval's generated panels, one per (material, dimension, topic)."""
    keys = sorted({persona_key(p) for p in precs})
    outs = drive([persona_job(k, mat_text[k[0]], cfg) for k in keys], client, retries=retries,
                 progress="qgsms chateval: personas")  # fmt: skip
    panels = {k: _value(o) for k, o in zip(keys, outs, strict=True)}
    log = [{"material": k[0], "dimension": k[1], "target_topic": k[2], "ok": o.failed is None,
            "error": str(o.failed or ""), "experts": [{"role": r, "description": d} for r, d
                                                     in (o.value or [])]}
           for k, o in zip(keys, outs, strict=True)]  # fmt: skip
    return panels, log, _phase_cost(outs)


def _judge(client, method, precs, idict, cfg, ctx, retries) -> tuple[list[dict], dict]:
    """Every pair with ``method``; ``ctx`` holds the shared steps (profiles, simulations,
    panels) and their costs. Returns the judgement rows and the method's cost row (its share of
    the shared steps included: what the method costs on its own)."""
    jobs, owners = [], []
    for p in precs:
        made = pair_jobs(method, p, idict, cfg, ctx["profiles"].get((p["material"], 0)),
                         ctx["sims"].get(p["pair_id"]), ctx["panels"].get(persona_key(p)))  # fmt: skip
        covers = [[1, 2]] if len(made) == 1 else [[1], [2]]
        for job, orders in zip(made, covers, strict=True):
            jobs.append(job)
            owners.append((p, orders))
    outs = drive(jobs, client, retries=retries, progress=f"qgsms {method}")
    shared = [ctx["cost_profiles"], ctx["cost_sims"]] if method in ("qg-sms", "direct") else \
        [ctx["cost_panels"]] if method == "chateval" else []  # fmt: skip
    c = _add(_phase_cost(outs), *shared)
    n = max(1, len(precs))
    cost = {"method": method, "pairs": len(precs), "calls": c["calls"],
            "calls_per_pair": c["calls"] / n, "tokens": c["tokens"],
            "tokens_per_pair": c["tokens"] / n, "retries": c["retries"],
            "malformed_answers": c["malformed"],
            "failed_jobs": sum(o.failed is not None for o in outs)}  # fmt: skip
    rows: list[dict] = []
    for (p, orders), o in zip(owners, outs, strict=True):
        rows += _judgement_rows(method, p, o, orders)
    return rows, cost


def _robustness(client, precs, idict, cfg, profiles, sims, repeats, retries) -> list[dict]:
    """Steps 1-2 repeated: repeat 0 is the run's own simulation; repeats >= 1 sample Step 2 at
    temperature 1 (as the paper's robustness runs) on that repeat's profiles."""
    jobs, keys, done_r0 = [], [], {}
    for p in precs:
        for r in range(repeats):
            if r == 0 and isinstance(sims.get(p["pair_id"]), list):
                done_r0[p["pair_id"]] = sims[p["pair_id"]]
                continue
            prof = profiles.get((p["material"], r))
            if prof is None:
                continue
            a, b = idict[p["q1"]], idict[p["q2"]]
            tag = sim_tag(p, repeat=r)
            temperature = None if r == 0 else 1.0

            def job(prof=prof, a=a, b=b, tag=tag, t=temperature):
                (preds,) = yield [predictions_ask(prof, a, b, cfg, tag, temperature=t)]
                return preds

            jobs.append(job())
            keys.append((p, r))
    outs = drive(jobs, client, retries=retries, progress="qgsms robustness")
    got = [((p, 0), v) for p in precs if (v := done_r0.get(p["pair_id"])) is not None]
    got += [(k, o.value) for k, o in zip(keys, outs, strict=True) if o.failed is None]
    rows = []
    for (p, r), preds in sorted(got, key=lambda x: (x[0][1], x[0][0]["pair_id"])):
        for q in (p["q1"], p["q2"]):
            x = [s["answers"][q]["correct"] for s in preds]
            rows.append({"repeat": r, "pair_id": p["pair_id"], "item": q,
                         "sim_DF": float(np.mean(x))})  # fmt: skip
    return rows


ROBUSTNESS_COLUMNS = ["repeat", "pair_id", "item", "sim_DF"]


@dataclass
class Judged:
    """What :func:`judge_pairs` got: ``judgements`` (one row per method, pair and order),
    ``cost`` (one row per method, its share of the shared steps included), ``robustness``
    (``repeats`` > 1: each question's simulated DF per repeat), ``logs`` (``profiles``,
    ``simulations``, ``personas``: the shared steps' outputs, as the run's ``*.jsonl``) and the
    failed shared steps."""

    judgements: pd.DataFrame
    cost: pd.DataFrame
    robustness: pd.DataFrame
    logs: dict[str, list] = field(default_factory=dict)
    profile_sets_failed: int = 0
    simulations_failed: int = 0


def judge_pairs(
    client: Any,
    pairs: pd.DataFrame,
    items: pd.DataFrame,
    *,
    methods: list[str],
    cfg: MethodConfig,
    retries: int = 2,
    repeats: int = 1,
    log: Callable[[str], None] | None = None,
) -> Judged:
    """Every pair (:func:`.data.read_pairs`) judged in both orders with each method, on an open
    client; the shared steps (QG-SMS profiles and simulations, ChatEval panels) run once and
    serve every method that needs them.  ``log`` gets one line per method."""
    idict = _items_dict(items)
    rows: list[dict] = []
    cost_rows = []
    none = {"calls": 0, "tokens": 0, "retries": 0, "malformed": 0}
    ctx: dict[str, Any] = {"profiles": {}, "sims": {}, "panels": {}, "cost_profiles": none,
                           "cost_sims": none, "cost_panels": none}  # fmt: skip
    logs: dict[str, list] = {"profiles": [], "simulations": [], "personas": []}
    materials = sorted(set(pairs["material"]))
    mat_text = {m: next(i["material_text"] for i in idict.values() if i["material"] == m)
                for m in materials}  # fmt: skip
    precs = pairs.to_dict("records")
    sms = any(m in ("qg-sms", "direct") for m in methods)
    if sms or repeats > 1:
        ctx["profiles"], logs["profiles"], ctx["cost_profiles"] = _step1(
            client, materials, mat_text, cfg, repeats, retries)  # fmt: skip
    if sms and cfg.simulate == "per-pair":
        ctx["sims"], logs["simulations"], ctx["cost_sims"] = _step2(
            client, precs, idict, cfg, ctx["profiles"], retries)  # fmt: skip
    if "chateval" in methods and cfg.chateval_personas == "generated":
        ctx["panels"], logs["personas"], ctx["cost_panels"] = _panels(
            client, precs, mat_text, cfg, retries)  # fmt: skip
    for method in methods:
        got, cost = _judge(client, method, precs, idict, cfg, ctx, retries)
        rows += got
        cost_rows.append(cost)
        if log:
            log(f"{method}: {cost['calls']} calls, {cost['failed_jobs']} failed")
    robust_rows = (_robustness(client, precs, idict, cfg, ctx["profiles"], ctx["sims"],
                               repeats, retries) if repeats > 1 else [])  # fmt: skip
    return Judged(
        judgements=pd.DataFrame(rows),
        cost=pd.DataFrame(cost_rows),
        robustness=pd.DataFrame(robust_rows, columns=ROBUSTNESS_COLUMNS),
        logs=logs,
        profile_sets_failed=sum(v is None for v in ctx["profiles"].values()),
        simulations_failed=sum(isinstance(v, StepFailed) for v in ctx["sims"].values()),
    )
