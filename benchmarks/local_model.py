"""Per-call time of the embedded model: edueval's ``local`` backend against raw llama-cpp-python.

Issue 22: each call of ``malalgo run --model local`` should take at most 1.2x what
``llama_cpp.Llama.create_chat_completion`` takes on the same prompt with the same settings
(greedy decoding, the same ``max_tokens``, the same JSON-schema grammar for simple prompts).
The prompts are real MalAlgoQA prompts: generated items (:func:`edueval.misconceptions.
generate_items`) through :func:`edueval.malalgo.build_tasks`, in the order ``malalgo run`` sends
them (the four identification prompts of a question, then its MCQ), for six kinds:
simple / CoT / CoT + 3 shots, each with generate and logprob scoring.

Engines, each its own ``Llama`` (own KV cache), called in turn on every prompt (interleaved, so
that a machine whose speed drifts affects all of them alike):

* ``edueval``  -- ``LocalBackend`` (this package, as ``malalgo run`` calls it);
* ``raw``      -- ``Llama(logits_all=False).create_chat_completion`` with the same messages,
  ``max_tokens``, temperature, seed and grammar, no log-probabilities: llama.cpp's own speed;
* ``legacy``   -- edueval's settings before issue 22: ``Llama(logits_all=True)``, and in logprob
  mode llama-cpp-python's ``logprobs=True, top_logprobs=20`` (same threads as ``edueval``);
* ``legacy-threads`` (optional) -- ``legacy`` with its thread counts too (all cores for both
  generation and prompt evaluation): edueval exactly as it was;
* ``raw-reset`` (optional) -- ``raw`` with ``Llama.reset()`` before each call: no prefix reuse.

Every call's text must be the same across engines (asserted: exit status 1 otherwise), and
edueval's token log-probabilities are compared with llama-cpp-python's (``legacy``).  Per call:
tokens in, tokens actually evaluated (after prefix reuse), tokens out, wall and CPU seconds (CPU
seconds are steadier on a shared machine: a call waiting for a core does not count), and
llama.cpp's own split into prompt evaluation and generation (``llama_perf_context``); the rest
is Python (sampling glue, log-probabilities, detokenizing).

    python benchmarks/local_model.py --quick              # < 3 min on 2 cores
    python benchmarks/local_model.py --questions 1 --out local_model.json
    python benchmarks/local_model.py --from-json local_model.json   # its summary again
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any

KINDS = [
    ("simple", 0, "generate"),
    ("simple", 0, "logprob"),
    ("cot", 0, "generate"),
    ("cot", 0, "logprob"),
    ("cot", 3, "generate"),
    ("cot", 3, "logprob"),
]
ENGINES = ("edueval", "raw", "legacy", "legacy-threads", "raw-reset")


@dataclass
class Call:
    kind: str
    task: str
    engine: str
    seconds: float
    cpu_seconds: float
    tokens_in: int
    tokens_evaluated: int
    tokens_out: int
    prompt_eval_s: float
    generation_s: float
    text: str = field(repr=False)
    finish: str | None = None
    logprobs: Any = field(default=None, repr=False)


def kind_name(prompt: str, shots: int, scoring: str) -> str:
    return f"{prompt}{'+' + str(shots) + 'shots' if shots else ''}/{scoring}"


def build_requests(n_questions: int, per_question: int, cot_max_tokens: int | None, seed: int):
    """{kind: [(task_id, ChatRequest)]}: the first ``n_questions`` questions of 20 generated items
    (the shots are drawn from all 20, as ``malalgo run`` draws them), ``per_question`` prompts each
    (4 identification prompts then the MCQ; fewer keeps the first ones)."""
    import dataclasses

    from edueval.malalgo import build_tasks
    from edueval.malalgo.data import read_questions
    from edueval.misconceptions import generate_items

    items = read_questions(generate_items(20, seed=seed))
    out = {}
    for prompt, shots, scoring in KINDS:
        tasks = build_tasks(items, prompt=prompt, shots=shots, scoring=scoring, seed=seed)
        qids = list(dict.fromkeys(t.question_id for t in tasks))[:n_questions]
        reqs = []
        for q in qids:
            for t in [t for t in tasks if t.question_id == q][:per_question]:
                r = t.request
                if cot_max_tokens is not None and prompt == "cot":
                    r = dataclasses.replace(r, max_tokens=min(r.max_tokens, cot_max_tokens))
                reqs.append((t.task_id, r))
        out[kind_name(prompt, shots, scoring)] = reqs
    return out


class Engines:
    def __init__(self, names: list[str], n_threads: int | None) -> None:
        import llama_cpp

        from edueval.models.local import N_CTX, LocalBackend, _n_threads, smollm2_path

        self.llama_cpp = llama_cpp
        self.backend = LocalBackend(n_threads=n_threads, engine="llama-cpp-python")
        self.threads = (self.backend.n_threads, self.backend.n_threads_batch)
        path = str(smollm2_path())
        common: dict[str, Any] = dict(model_path=path, n_ctx=N_CTX, n_threads=self.threads[0],
                      n_threads_batch=self.threads[1], seed=0, verbose=False)  # fmt: skip
        self.llms: dict[str, Any] = {}
        if "edueval" in names:
            self.llms["edueval"] = self.backend._model()
        if "raw" in names:
            self.llms["raw"] = llama_cpp.Llama(logits_all=False, **common)
        if "raw-reset" in names:
            self.llms["raw-reset"] = llama_cpp.Llama(logits_all=False, **common)
        if "legacy" in names:
            self.llms["legacy"] = llama_cpp.Llama(logits_all=True, **common)
        if "legacy-threads" in names:
            old = dict(common, n_threads=_n_threads(), n_threads_batch=_n_threads())
            self.llms["legacy-threads"] = llama_cpp.Llama(logits_all=True, **old)
        self.grammars: dict[str, Any] = {}

    def _kwargs(self, req) -> dict[str, Any]:
        kw: dict[str, Any] = {
            "messages": [dict(m) for m in req.messages],
            "max_tokens": req.max_tokens,
            "temperature": float(req.temperature),
            "seed": req.seed if req.seed is not None else 0,
            "stop": list(req.stop) if req.stop else [],
        }
        if req.json_schema is not None:
            text = json.dumps(req.json_schema)  # properties in the order written, as edueval
            if text not in self.grammars:
                self.grammars[text] = self.llama_cpp.LlamaGrammar.from_json_schema(
                    text, verbose=False
                )
            kw["grammar"] = self.grammars[text]
        return kw

    def call(self, engine: str, kind: str, task: str, req) -> Call:
        from edueval.models.local import _logprobs

        lc = self.llama_cpp
        llm = self.llms[engine]
        lc.llama_perf_context_reset(llm.ctx)
        if engine == "edueval":
            t0, c0 = time.perf_counter(), time.process_time()
            reply = self.backend._generate_sync(req)
            dt, cpu = time.perf_counter() - t0, time.process_time() - c0
            text, lps, finish = reply.text, reply.logprobs, reply.finish_reason
            n_in, n_out = reply.prompt_tokens or 0, reply.completion_tokens or 0
        else:
            kw = self._kwargs(req)
            want_lp = engine.startswith("legacy") and req.top_logprobs is not None
            if want_lp:
                kw.update(logprobs=True, top_logprobs=req.top_logprobs)
            if engine == "raw-reset":
                llm.reset()
            # the threads edueval's backend chose for its last call (by load), so both engines
            # run each prompt with the same settings
            threads = getattr(self.llms.get("edueval"), "threads", None) or self.threads
            lc.llama_set_n_threads(llm.ctx, *threads)
            t0, c0 = time.perf_counter(), time.process_time()
            out = llm.create_chat_completion(**kw)
            lps = (
                _logprobs(out["choices"][0].get("logprobs"), req.top_logprobs) if want_lp else None
            )
            dt, cpu = time.perf_counter() - t0, time.process_time() - c0
            ch = out["choices"][0]
            text, finish = ch["message"].get("content") or "", ch.get("finish_reason")
            n_in, n_out = out["usage"]["prompt_tokens"], out["usage"]["completion_tokens"]
        perf = lc.llama_perf_context(llm.ctx)
        return Call(kind, task, engine, dt, cpu, n_in, int(perf.n_p_eval), n_out,
                    perf.t_p_eval_ms / 1e3, perf.t_eval_ms / 1e3, text, finish, lps)  # fmt: skip


def compare_logprobs(a, b) -> float:
    """Largest |difference| between two calls' token log-probabilities (chosen tokens and the
    top lists); ``inf`` when the tokens or the top lists' tokens differ."""
    if a is None or b is None:
        return 0.0 if a is b else math.inf
    if len(a) != len(b):
        return math.inf
    worst = 0.0
    for x, y in zip(a, b, strict=True):
        if x.token != y.token or set(x.top) != set(y.top):
            return math.inf
        worst = max(worst, abs(x.logprob - y.logprob))
        worst = max([worst] + [abs(x.top[t] - y.top[t]) for t in x.top])
    return worst


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def _ratios(engine: str, calls: list[Call], base: list[Call]) -> dict[str, float]:
    """Per-call ``engine``/raw ratios of wall and CPU seconds: their median and maximum."""
    wall = [c.seconds / r.seconds for c, r in zip(calls, base, strict=True)]
    cpu = [c.cpu_seconds / r.cpu_seconds for c, r in zip(calls, base, strict=True)]
    return {f"{engine}/raw": median(wall), f"{engine}/raw_max": max(wall),
            f"{engine}/raw_cpu": median(cpu), f"{engine}/raw_cpu_max": max(cpu)}  # fmt: skip


def summarise(calls: list[Call], engines: list[str]) -> list[dict[str, Any]]:
    """One row per kind of prompt, then one over all calls (\"all\")."""
    rows = []
    kinds = list(dict.fromkeys(c.kind for c in calls))
    for kind in kinds + (["all"] if len(kinds) > 1 else []):
        by = {e: [c for c in calls if kind in ("all", c.kind) and c.engine == e] for e in engines}
        base = by.get("raw") or []
        row: dict[str, Any] = {"kind": kind, "calls": len(base)}
        ref = by.get("edueval") or base
        row["tokens_in"] = median([c.tokens_in for c in ref])
        row["tokens_evaluated"] = median([c.tokens_evaluated for c in ref])
        row["tokens_out"] = median([c.tokens_out for c in ref])
        for e in engines:
            row[f"{e}_s"] = median([c.seconds for c in by[e]])
            row[f"{e}_cpu_s"] = median([c.cpu_seconds for c in by[e]])
            if e != "raw" and base:
                row.update(_ratios(e, by[e], base))
        ed = by.get("edueval") or []
        if ed:
            row["edueval_prompt_eval_s"] = median([c.prompt_eval_s for c in ed])
            row["edueval_generation_s"] = median([c.generation_s for c in ed])
            row["edueval_python_s"] = median([outside(c) for c in ed])
        if ed and base:  # the time edueval adds outside llama.cpp, call by call
            extra = [outside(c) - outside(r) for c, r in zip(ed, base, strict=True)]
            row["edueval-raw_outside_s"] = median(extra)
            row["edueval-raw_outside_max_s"] = max(extra)
        rows.append(row)
    return rows


def outside(c: Call) -> float:
    """Wall seconds of a call spent outside llama.cpp's prompt evaluation and generation (its
    own timers, ``llama_perf_context``): Python, sampling glue, log-probabilities, waiting."""
    return c.seconds - c.prompt_eval_s - c.generation_s


def print_table(rows: list[dict[str, Any]], engines: list[str]) -> None:
    cols = ["kind", "calls", "tokens_in", "tokens_evaluated", "tokens_out"]
    cols += [f"{e}_s" for e in engines]
    cols += [f"{e}/raw" for e in engines if e != "raw"]
    cols += [f"{e}/raw_cpu" for e in engines if e != "raw"]
    cols += ["edueval/raw_max", "edueval/raw_cpu_max"]
    cols += ["edueval_prompt_eval_s", "edueval_generation_s", "edueval_python_s"]
    cols += ["edueval-raw_outside_s", "edueval-raw_outside_max_s"]
    cols = [c for c in cols if any(c in r for r in rows)]
    head = {"tokens_in": "tok_in", "tokens_evaluated": "tok_eval", "tokens_out": "tok_out",
            "edueval_prompt_eval_s": "ed_prompt_s", "edueval_generation_s": "ed_gen_s",
            "edueval_python_s": "ed_python_s", "edueval-raw_outside_s": "ed-raw_outside_s",
            "edueval-raw_outside_max_s": "ed-raw_outside_max_s"}  # fmt: skip
    print(" | ".join(head.get(c, c) for c in cols))
    for r in rows:
        cells = []
        for c in cols:
            v = r.get(c, "")
            cells.append(f"{v:.3f}" if isinstance(v, float) else str(v))
        print(" | ".join(cells))


def write_json(args, threads, calls, engines, mismatches, lp_diff) -> None:
    payload = {
        "threads": threads,
        "args": vars(args),
        "summary": summarise(calls, engines),
        "greedy_identical": not mismatches,
        "mismatches": mismatches,
        "logprob_max_abs_diff": lp_diff,
        "calls": [{k: v for k, v in asdict(c).items() if k != "logprobs"} for c in calls],
    }
    with open(args.out, "w") as fh:
        json.dump(payload, fh, indent=1, default=str)


def print_saved(path: str) -> int:
    """The summary table of a run saved with ``--out`` (e.g. one cut short)."""
    with open(path) as fh:
        saved = json.load(fh)
    calls = [Call(**c) for c in saved["calls"]]
    engines = list(dict.fromkeys(c.engine for c in calls))
    if "raw" in engines:  # only prompts that every engine answered (a run cut short)
        done = {(c.kind, c.task) for c in calls if c.engine == engines[-1]}
        calls = [c for c in calls if (c.kind, c.task) in done]
    print_table(summarise(calls, engines), engines)
    print(f"# greedy text identical across engines: {saved['greedy_identical']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="1 question, 2 prompts per kind, CoT capped at 16 tokens (< 3 min)")  # fmt: skip
    ap.add_argument("--questions", type=int, default=1, help="questions per kind (default 1)")
    ap.add_argument("--per-question", type=int, default=5,
                    help="prompts per question: 4 identification + MCQ (default 5)")  # fmt: skip
    ap.add_argument("--cot-max-tokens", type=int, default=None,
                    help="cap CoT max_tokens (default: malalgo's 512)")  # fmt: skip
    ap.add_argument(
        "--kinds", default=None, help="comma-separated kinds, e.g. 'cot+3shots/logprob'"
    )
    ap.add_argument("--engines", default="edueval,raw,legacy")
    ap.add_argument("--threads", type=int, default=None,
                    help="LocalBackend(n_threads=...); default: its own default")  # fmt: skip
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="write every call and the summary as JSON")
    ap.add_argument("--from-json", default=None, metavar="PATH",
                    help="print the summary of a run saved with --out (no model is loaded)")  # fmt: skip
    args = ap.parse_args(argv)
    if args.from_json:
        return print_saved(args.from_json)
    if args.quick:
        args.questions, args.per_question = 1, 2
        args.cot_max_tokens = args.cot_max_tokens or 16
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    bad = [e for e in engines if e not in ENGINES]
    if bad or "raw" not in engines:
        ap.error(f"--engines: from {ENGINES}, including raw")

    t_start = time.perf_counter()
    reqs = build_requests(args.questions, args.per_question, args.cot_max_tokens, args.seed)
    if args.kinds:
        keep = [k.strip() for k in args.kinds.split(",")]
        reqs = {k: v for k, v in reqs.items() if k in keep}
    eng = Engines(engines, args.threads)
    threads = eng.threads
    if eng.backend.auto_threads:
        threads = (f"{threads[0]}-{eng.backend.cores} by load", threads[1])
    load = os.getloadavg()
    print(
        f"# threads (generation, prompt): {threads}; load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    calls: list[Call] = []
    mismatches: list[str] = []
    lp_diff = 0.0
    for kind, items in reqs.items():
        for task, req in items:
            got = {e: eng.call(e, kind, task, req) for e in engines}
            calls.extend(got.values())
            ref = got["raw"]
            for e, c in got.items():
                if (c.text, c.tokens_out) != (ref.text, ref.tokens_out):
                    mismatches.append(f"{kind} {task}: {e} != raw: {c.text!r} vs {ref.text!r}")
            if "legacy" in got and req.top_logprobs is not None and "edueval" in got:
                d = compare_logprobs(got["edueval"].logprobs, got["legacy"].logprobs)
                lp_diff = max(lp_diff, d)
            line = " ".join(f"{e}={c.seconds:.2f}s/{c.cpu_seconds:.2f}cpu" for e, c in got.items())
            print(f"{kind:22s} {task:10s} in={ref.tokens_in:5d} eval={got[engines[0]].tokens_evaluated:5d} "
                  f"out={ref.tokens_out:4d} {line}", flush=True)  # fmt: skip
            if args.out:  # after every prompt: a run cut short keeps what it measured
                write_json(args, threads, calls, engines, mismatches, lp_diff)
    rows = summarise(calls, engines)
    print()
    print_table(rows, engines)
    load = os.getloadavg()
    print(f"# load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"{time.perf_counter() - t_start:.0f} s in all")  # fmt: skip
    print(f"# greedy text identical across engines: {not mismatches}")
    if "legacy" in engines:
        print(f"# edueval vs llama-cpp-python log-probabilities: max |diff| = {lp_diff:.3g}")
    for m in mismatches:
        print("MISMATCH", m)
    if args.out:
        write_json(args, threads, calls, engines, mismatches, lp_diff)
    return 1 if mismatches or lp_diff > 1e-4 else 0


if __name__ == "__main__":
    sys.exit(main())
