"""``qgsms run`` and ``qgsms score`` as functions writing run directories (the CLI wraps them).

``run`` reads a pairs file (``items pairs``' ``pairs.csv``: ``pair_id, dimension, q1, q2,
better`` or ``label``, optional ``diff``, ``alpha``, ``target_topic``) and an items file, judges
every pair in both orders with each method, and writes ``judgements.csv`` (one row per method,
pair and order), ``pair_scores.csv``, ``accuracy.csv`` (AA/CA), ``binomial.csv``,
``alpha_curve.csv``, ``cost.csv``, ``failures.csv``, ``profiles.jsonl`` (QG-SMS Step 1),
``simulations.jsonl`` (Step 2, one per pair), ``personas.jsonl`` (ChatEval's panels), the ranking extension
(:mod:`.ranking`: ``ranking.csv`` -- 1 / 0.5 score and Bradley-Terry ability per question --
``rank_correlations.csv``, ``anova.csv``) and -- with ``repeats`` > 1 -- ``robustness.csv``; plus
``calls.jsonl``, ``report.html`` and ``results.json``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..io import InputError, line_of, read_table, shown
from ..items.data import read_items
from ..items.pairs import DEFAULT_ALPHA, DIMENSIONS
from ..model_runs import finish_model_run
from ..models.budget import DEFAULT_MAX_FAILURES, MaxFailures, decide
from ..report import Report
from ..report.figures import plt
from ..runs import RunDir
from ..tables import Col, Schema
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
from .ranking import anova, bt_abilities, rank_correlations, ranking_scores, true_measures
from .scoring import accuracy_table, alpha_curve, binomial_tests, pair_table

__all__ = ["JUDGEMENTS_SCHEMA", "PAIRS_SCHEMA", "read_pairs", "run_qgsms", "score_run",
           "score_judgements"]  # fmt: skip

_PAIR_NUMBERS = ("measure_q1", "measure_q2", "diff", "alpha")

#: A pairs file, as ``items pairs`` writes it: closed (a misspelt ``measure_q1`` is refused, not
#: read as "no measure"); one row per ``pair_id``; ``better`` or ``label`` says which question
#: is better; the numbers may be empty but never text.
PAIRS_SCHEMA = Schema(
    "pairs file",
    (Col("pair_id", "id"), Col("dimension", "text"), Col("material", "raw", required=False),
     Col("q1", "id"), Col("q2", "id"), Col("label", "raw", required=False),
     Col("better", "raw", required=False), Col("target_topic", "raw", required=False),
     *(Col(c, "raw", required=False) for c in _PAIR_NUMBERS)),
    key=("pair_id",),
    closed=True,
)  # fmt: skip

#: ``judgements.csv`` of ``qgsms run``, read back by ``qgsms score``: open (``sim_*`` columns
#: vary with the method); one row per method, pair and order; ``correct`` 0/1 and, like
#: ``chosen``, consistent with ``verdict``, ``a``, ``b`` and ``better`` (checked by
#: :func:`_check_judgements`).
JUDGEMENTS_SCHEMA = Schema(
    "judgements file",
    (Col("method", "id"), Col("pair_id", "id"), Col("dimension", "text"),
     Col("order", "integer", low=1, high=2), Col("a", "id"), Col("b", "id"), Col("better", "id"),
     Col("verdict", "raw"), Col("chosen", "raw"), Col("correct", "binary"),
     Col("status", "text"), Col("diff", "raw")),
    key=("method", "pair_id", "order"),
)  # fmt: skip


def _optional_numbers(df: pd.DataFrame, columns: tuple[str, ...]) -> None:
    """Refuse a cell of ``columns`` that is neither empty nor a finite number."""
    for c in columns:
        if c not in df.columns:
            continue
        values = pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(values) & df[c].notna().to_numpy()
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            raise InputError(f"expected a finite number or an empty cell, got {shown(df[c].iloc[pos])}",
                             file=df.attrs.get("file"), line=line_of(df, pos),
                             column=c)  # fmt: skip


def read_pairs(path: Path, items: pd.DataFrame) -> pd.DataFrame:
    """Read and check a pairs file against the items (same material, known questions, labels)."""
    df = read_table(path, text_columns=["pair_id", "q1", "q2", "better", "target_topic"])
    file = str(path)
    PAIRS_SCHEMA.check_header(df)
    if "better" not in df.columns and "label" not in df.columns:
        raise InputError("expected a 'better' or a 'label' column (which question is better)",
                         file=file)  # fmt: skip
    PAIRS_SCHEMA.validate(df)
    _optional_numbers(df, _PAIR_NUMBERS)
    by_id = items.set_index("item")
    rows = []
    for pos, r in enumerate(df.to_dict("records")):
        line = line_of(df, pos)
        pid, d = str(r["pair_id"]), str(r["dimension"]).strip().upper()
        if d not in DIMENSIONS:
            raise InputError(f"dimension must be TC, DF, DC or DE, got {shown(r['dimension'])}",
                             file=file, line=line, column="dimension")  # fmt: skip
        for c in ("q1", "q2"):
            if r[c] not in by_id.index:
                raise InputError(f"question {r[c]!r} is not in the items file", file=file,
                                 line=line, column=c)  # fmt: skip
        if r["q1"] == r["q2"]:
            raise InputError("a pair needs two different questions", file=file, line=line)
        m1, m2 = by_id.at[r["q1"], "material"], by_id.at[r["q2"], "material"]
        if m1 != m2:
            raise InputError(
                f"pair {pid!r}: questions {r['q1']!r} (material {m1!r}) and {r['q2']!r} "
                f"(material {m2!r}) come from different learning materials; a pair must share "
                "one",
                file=file,
                line=line,
            )
        better = r.get("better")
        if not isinstance(better, str) or not better.strip():
            lab = str(r.get("label", "")).strip()
            better = {"1": r["q1"], "2": r["q2"], "1.0": r["q1"], "2.0": r["q2"]}.get(lab)
        if better not in (r["q1"], r["q2"]):
            raise InputError(
                f"pair {pid!r}: the better question must be q1 or q2 (label 1 or 2)",
                file=file,
                line=line,
            )
        topic = r.get("target_topic")
        topic = topic if isinstance(topic, str) and topic.strip() else ""
        if d == "TC" and not topic:
            raise InputError(f"pair {pid!r}: a TC pair needs a target_topic", file=file,
                             line=line, column="target_topic")  # fmt: skip
        diff = r.get("diff")
        diff = float(diff) if diff is not None and np.isfinite(pd.to_numeric(diff, errors="coerce")) \
            else np.nan  # fmt: skip
        mq = [pd.to_numeric(r.get(f"measure_{q}"), errors="coerce") for q in ("q1", "q2")]
        rows.append({"pair_id": pid, "dimension": d, "material": m1, "q1": r["q1"],
                     "q2": r["q2"], "better": better, "target_topic": topic, "diff": diff,
                     "measure_q1": float(mq[0]), "measure_q2": float(mq[1])})  # fmt: skip
    return pd.DataFrame(rows)


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


def score_judgements(
    judgements: pd.DataFrame,
    alpha: dict[str, float] | None = None,
    *,
    bradley_terry: bool = True,
    seed: int = 0,
) -> dict:
    """All score tables from a judgements table, with the ranking extension (ranking scores,
    correlations with the true measure, ANOVA over DE groups; the Bradley-Terry fit unless
    ``bradley_terry`` is False)."""
    pairs = pair_table(judgements)
    acc = accuracy_table(pairs)
    tests = binomial_tests(pairs) if "vanilla" in set(acc["method"]) else pd.DataFrame()
    curve = alpha_curve(pairs, {**DEFAULT_ALPHA, **(alpha or {})})
    fails = (
        judgements[judgements["status"] == "failed"]
        .groupby(["method", "step"])
        .size()
        .rename("failed_judgements")
        .reset_index()
    )
    scores = ranking_scores(judgements, true_measures(judgements))
    bt = bt_abilities(judgements, seed=seed) if bradley_terry else None
    if bt is not None and len(bt):
        scores = scores.merge(bt, on=["method", "dimension", "item"], how="left")
    return {"pairs": pairs, "accuracy": acc, "binomial": tests, "alpha_curve": curve,
            "failures": fails, "ranking": scores, "rank_correlations":
            rank_correlations(scores), "anova": anova(scores)}  # fmt: skip


def _report(title: str, subtitle: str, s: dict, cost: pd.DataFrame | None,
            robustness: pd.DataFrame | None, call_summary: str | None) -> Report:  # fmt: skip
    rep = Report(title, subtitle)
    acc = s["accuracy"]
    sec = rep.section("Average and Consistent Accuracy")
    sec.text(
        "AA = share of correct judgements over both presentation orders; CA = share of pairs "
        "judged correctly in both orders. Failed judgements and ties count as wrong."
    )
    sec.table(acc)
    dims = [d for d in acc["dimension"].unique() if d != "all"]
    if len(acc) and dims:
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.4), layout="constrained", sharey=True)
        methods = list(acc["method"].unique())
        width = 0.8 / max(1, len(methods))
        for ax, metric in zip(axes, ("AA", "CA"), strict=True):
            for k, m in enumerate(methods):
                g = acc[(acc["method"] == m)].set_index("dimension").reindex(dims)
                ax.bar(np.arange(len(dims)) + k * width, g[metric].to_numpy(float), width,
                       label=m)  # fmt: skip
            ax.set_xticks(np.arange(len(dims)) + 0.4 - width / 2, dims)
            ax.set_title(metric)
            ax.set_ylim(0, 1)
            ax.axhline(0.5, color="grey", lw=0.8, ls=":")
        axes[1].legend(fontsize=7, ncols=2)
        sec.figure(fig, "AA and CA per dimension and method")
    if len(s["binomial"]):
        rep.section("Exact sign tests (exact McNemar) against Vanilla").text(
            "On the pairs both methods judged, b = units the method gets right and Vanilla "
            "wrong, c = the reverse; p = P(X >= b), X ~ Binomial(b + c, 1/2), one-sided (the "
            "paper's Table 6). CA: a unit is a pair, right in both orders; AA: a unit is one "
            "judgement (a pair in one order)."
        ).table(s["binomial"], digits=4)
    curve = s["alpha_curve"]
    if len(curve):
        sec = rep.section("Accuracy as a function of alpha")
        cdims = list(curve["dimension"].unique())
        fig, axes = plt.subplots(1, len(cdims), figsize=(3.6 * len(cdims), 3.2),
                                 layout="constrained", squeeze=False)  # fmt: skip
        for ax, d in zip(axes[0], cdims, strict=True):
            for m, g in curve[curve["dimension"] == d].groupby("method", sort=False):
                ax.plot(g["alpha"], g["AA"], marker="o", label=m)
            ax.set_title(f"{d}: AA vs alpha")
            ax.set_ylim(0, 1)
        axes[0][-1].legend(fontsize=7)
        sec.figure(fig)
        sec.table(curve)
    _ranking_section(rep, s)
    if cost is not None and len(cost):
        rep.section("Cost per method").table(cost)
    if len(s["failures"]):
        rep.section("Failures by step").table(s["failures"])
    if robustness is not None and len(robustness):
        sec = rep.section("Profile robustness")
        summ = robustness.groupby("item")["sim_DF"].agg(["count", "mean", "std", "min", "max"])
        sec.text(
            "Steps 1-2 repeated with independently sampled profile sets: the distribution of "
            "each question's simulated proportion correct across repeats."
        )
        sec.table(summ.reset_index())
        fig, ax = plt.subplots(figsize=(max(4, 0.5 * len(summ)), 3), layout="constrained")
        groups = [g["sim_DF"].to_numpy() for _, g in robustness.groupby("item")]
        ax.boxplot(groups, tick_labels=list(summ.index))
        ax.set_ylabel("simulated DF")
        ax.tick_params(axis="x", rotation=60, labelsize=7)
        sec.figure(fig)
    if call_summary:
        rep.section("Model calls").text(call_summary)
    return rep


def _ranking_section(rep: Report, s: dict) -> None:
    rc = s.get("rank_correlations")
    if rc is None or not len(s.get("ranking", [])):
        return
    sec = rep.section("Ranking the questions from the pairwise verdicts")
    sec.text(
        "Per question: the paper's ranking score (1 for a pair in which it is preferred in both "
        "orders, 0.5 in one, divided by its number of pairs) and, when fitted, the posterior mean "
        "ability of P2's Bradley-Terry model with an order effect (bt_alpha). Correlations with "
        "the true measure (Spearman, Kendall, Pearson; NaN with fewer than 3 questions or a "
        "constant side), and a one-way ANOVA of the score over the groups of questions with the "
        "same true DE. For a ranking of all pairs of a question set, build the pairs with "
        "`items pairs --alpha DE=0` (and DF=0, DC=0)."
    )
    sec.table(rc, digits=3)
    if len(s["anova"]):
        sec.table(s["anova"], digits=4)
    sec.table(s["ranking"], digits=3)


def _check_config(methods: list[str], cfg: MethodConfig, repeats: int, retries: int) -> None:
    for m in methods:
        if m not in METHODS:
            raise InputError(f"unknown method {m!r}; expected one of {', '.join(METHODS)}")
    if not methods:
        raise InputError("give at least one --method")
    if cfg.n_profiles < MIN_PROFILES:
        raise InputError("--profiles must be at least 10 (the paper's minimum)")
    if cfg.max_profiles < cfg.n_profiles:
        raise InputError("--max-profiles must be at least --profiles")
    if cfg.explanation_chars < 20:
        raise InputError("--explanation-chars must be at least 20")
    if repeats < 1 or retries < 0:
        raise InputError("--repeats must be >= 1 and --retries >= 0")
    if not 0.0 <= cfg.temperature <= 2.0:
        raise InputError("--temperature must be between 0 and 2")
    if cfg.simulate not in SIMULATE_MODES:
        raise InputError(f"--simulate must be one of {', '.join(SIMULATE_MODES)}")
    if cfg.chateval_personas not in PERSONA_SOURCES:
        raise InputError(f"--chateval-personas must be one of {', '.join(PERSONA_SOURCES)}")
    top = len(PERSONAS) if cfg.chateval_personas == "fixed" else 5
    if not 1 <= cfg.personas <= top or cfg.rounds < 1:
        raise InputError(f"--personas must be 1-{top} with --chateval-personas "
                         f"{cfg.chateval_personas}, and --rounds >= 1")  # fmt: skip


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


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def run_qgsms(
    out: Path,
    pairs_path: Path,
    items_path: Path,
    *,
    methods: list[str],
    open_model: Callable,
    model_name: str,
    cfg: MethodConfig = MethodConfig(),
    retries: int = 2,
    repeats: int = 1,
    limit: int | None = None,
    seed: int = 0,
    bradley_terry: bool = True,
    max_failures: MaxFailures = DEFAULT_MAX_FAILURES,
    log: Callable[[str], None] | None = None,
) -> dict:
    """Judge every pair in both orders with each method and score the judgements (with the
    ranking extension; ``bradley_terry=False`` skips its NUTS fit). ``seed`` seeds every call
    (``cfg.seed`` is set to it); besides the tables the run keeps ``profiles.jsonl``,
    ``simulations.jsonl`` (Step 2 per pair) and ``personas.jsonl`` (ChatEval's panels)."""
    cfg = replace(cfg, seed=seed)
    _check_config(methods, cfg, repeats, retries)
    items = read_items(items_path)
    pairs = read_pairs(pairs_path, items)
    if limit is not None:  # the first `limit` pairs of each dimension
        pairs = pairs.groupby("dimension", sort=False).head(limit).reset_index(drop=True)
    idict = _items_dict(items)
    params = {"methods": methods, "model": model_name, "retries": retries, "repeats": repeats,
              "limit": limit, "n_pairs": len(pairs), "bradley_terry": bradley_terry,
              **cfg.__dict__, "call_seeds": SEED_RULE}  # fmt: skip
    run = RunDir(out, command="qgsms run", params=params, seed=seed,
                 inputs={"pairs": pairs_path, "items": items_path})  # fmt: skip
    t0 = time.perf_counter()
    rows: list[dict] = []
    cost_rows = []
    none = {"calls": 0, "tokens": 0, "retries": 0, "malformed": 0}
    ctx: dict[str, Any] = {"profiles": {}, "sims": {}, "panels": {}, "cost_profiles": none,
                           "cost_sims": none, "cost_panels": none}  # fmt: skip
    logs: dict[str, list] = {"profiles": [], "simulations": [], "personas": []}
    with open_model(run.path / "calls.jsonl") as client:
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
        stats = client.stats()
    seconds = time.perf_counter() - t0
    judgements = pd.DataFrame(rows)
    s = score_judgements(judgements, bradley_terry=bradley_terry, seed=seed)
    cost = pd.DataFrame(cost_rows)
    robustness = pd.DataFrame(robust_rows, columns=["repeat", "pair_id", "item", "sim_DF"])
    run.table("judgements", judgements)
    for name in _TABLES:
        run.table("pair_scores" if name == "pairs" else name, s[name])
    run.table("cost", cost)
    if repeats > 1:
        run.table("robustness", robustness)
    for name, entries in logs.items():
        if entries or name == "profiles":
            run.text(f"{name}.jsonl", _jsonl(entries))
    rep = _report("Question evaluation with simulated students (QG-SMS and baselines)",
                  f"{pairs_path}, model {model_name}, methods {', '.join(methods)}",
                  s, cost, robustness, stats.summary())  # fmt: skip
    results = _results(s, cost)
    results.update({"seconds": seconds, "model_calls": stats.as_dict(), "n_pairs": len(pairs),
                    "profile_sets_failed": sum(v is None for v in ctx["profiles"].values()),
                    "simulations_failed": sum(isinstance(v, StepFailed)
                                              for v in ctx["sims"].values())})  # fmt: skip
    if log:
        log(stats.summary())
    return finish_model_run(run, results, rep, decide(stats, max_failures))


SEED_RULE = (
    "each call's seed = first 31 bits of SHA-256('<seed>:<step>:<tag>:<speaker>'); a retry's = "
    "first 31 bits of SHA-256('<that seed>:retry:<attempt>'); both are in calls.jsonl"
)


_TABLES = ("pairs", "accuracy", "binomial", "alpha_curve", "failures", "ranking",
           "rank_correlations", "anova")  # fmt: skip


def _results(s: dict, cost: pd.DataFrame | None) -> dict:
    acc = s["accuracy"]
    out: dict = {"accuracy": {}}
    for r in acc.to_dict("records"):
        out["accuracy"].setdefault(r["method"], {})[r["dimension"]] = {
            "AA": r["AA"], "CA": r["CA"], "pairs": r["pairs"], "failed": r["failed"],
            "ties": r["ties"]}  # fmt: skip
    if len(s["binomial"]):
        out["binomial_p"] = {
            f"{r['method']}/{r['dimension']}": r["p_value"]
            for r in s["binomial"].to_dict("records")
            if r["measure"] == "CA"
        }
        out["sign_tests"] = {f"{r['method']}/{r['measure']}/{r['dimension']}":
                             {"b": r["b"], "c": r["c"], "p_value": r["p_value"]}
                             for r in s["binomial"].to_dict("records")}  # fmt: skip
    rc = s.get("rank_correlations")
    if rc is not None and len(rc):
        for r in rc.to_dict("records"):
            out.setdefault("ranking", {}).setdefault(r["method"], {}).setdefault(
                r["dimension"], {})[r["ranking"]] = {
                k: r[k] for k in ("questions", "spearman", "kendall", "pearson")}  # fmt: skip
    av = s.get("anova")
    if av is not None and len(av):
        out["anova_DE"] = {r["method"]: {"F": r["F"], "p_value": r["p_value"]}
                           for r in av.to_dict("records")}  # fmt: skip
    if cost is not None and len(cost):
        out["cost"] = {r["method"]: {"calls_per_pair": r["calls_per_pair"],
                                     "tokens_per_pair": r["tokens_per_pair"]}
                       for r in cost.to_dict("records")}  # fmt: skip
    return out


def _check_judgements(df: pd.DataFrame, checked: pd.DataFrame) -> None:
    """Refuse a judgement whose ``chosen`` or ``correct`` is not what its ``verdict`` says:
    ``chosen`` is ``a`` for verdict a, ``b`` for verdict b and empty otherwise, and ``correct``
    is 1 exactly when ``chosen`` is the better question (``qgsms score`` counts ``correct``)."""
    verdict = checked["verdict"].astype(object).where(checked["verdict"].notna(), "")
    chosen = checked["chosen"].astype(object).where(checked["chosen"].notna(), "")
    verdict, chosen = verdict.astype(str).to_numpy(), chosen.astype(str).to_numpy()
    a, b, better = (checked[c].to_numpy() for c in ("a", "b", "better"))
    problems = [
        ("verdict", ~np.isin(verdict, ["a", "b", ""]), lambda k: "expected a, b or an empty "
         f"cell, got {shown(verdict[k])}"),
        ("chosen", chosen != np.where(verdict == "a", a, np.where(verdict == "b", b, "")),
         lambda k: f"chosen {chosen[k]!r} contradicts verdict {verdict[k]!r} (a = {a[k]!r}, "
         f"b = {b[k]!r})"),
        ("correct", checked["correct"].to_numpy() != ((chosen != "") & (chosen == better)),
         lambda k: f"correct={int(checked['correct'].iloc[k])} contradicts chosen {chosen[k]!r} "
         f"and better {better[k]!r}"),
    ]  # fmt: skip
    for column, bad, message in problems:
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise InputError(message(k) + (f" ({int(bad.sum())} such rows in all)"
                                           if bad.sum() > 1 else ""),
                             file=df.attrs.get("file"), line=line_of(df, k),
                             column=column)  # fmt: skip


def score_run(
    out: Path, judgement_paths: list[Path], *, bradley_terry: bool = True, seed: int = 0
) -> dict:
    """Recompute every score from one or more ``judgements.csv`` (e.g. one run per method)."""
    frames = []
    for p in judgement_paths:
        df = read_table(p, text_columns=["method", "pair_id", "a", "b", "better", "chosen",
                                         "verdict"])  # fmt: skip
        _check_judgements(df, JUDGEMENTS_SCHEMA.validate(df))
        frames.append(df)
    j = pd.concat(frames, ignore_index=True)
    for col in ("step", "error"):
        if col not in j.columns:
            j[col] = ""
    j["step"] = j["step"].astype(object).where(j["step"].notna(), "")
    dup = j.duplicated(["method", "pair_id", "order"])
    if dup.any():
        r = j[dup].iloc[0]
        raise InputError(f"method {r['method']!r} judged pair {r['pair_id']!r} (order "
                         f"{r['order']}) twice across the files")  # fmt: skip
    run = RunDir(out, command="qgsms score", params={"bradley_terry": bradley_terry}, seed=seed,
                 inputs={f"judgements_{i}": p for i, p in enumerate(judgement_paths)})  # fmt: skip
    s = score_judgements(j, bradley_terry=bradley_terry, seed=seed)
    for name in _TABLES:
        run.table("pair_scores" if name == "pairs" else name, s[name])
    rep = _report("QG-SMS: scores", ", ".join(map(str, judgement_paths)), s, None, None, None)
    res = _results(s, None)
    run.finish(res, rep.render())
    return res
