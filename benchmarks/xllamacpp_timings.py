"""Where the embedded model's time goes on the xllamacpp engine, from llama.cpp's own timers.

Two commands:

``log OUT.jsonl -- EDUEVAL ARGS...`` runs an edueval command (``EDUEVAL_LOCAL_ENGINE=xllamacpp``)
and writes one line per model call: the generation threads of the loaded model that answered,
the call's wall time, and the server's ``timings`` (prompt tokens evaluated and milliseconds,
generated tokens and milliseconds); totals are printed at the end::

    python benchmarks/xllamacpp_timings.py log calls_timed.jsonl -- malalgo run q/questions.csv \\
        --model local --prompt cot --shots 3 --scoring logprob --no-cache --seed 1 --out p3

``steps --calls RUN/calls.jsonl --seq 21 --steps 512,256,128`` evaluates one recorded prompt of a
run afresh on one loaded model per prompt step size (``n_ubatch``), interleaved, ``--repeats``
times, and prints the prompt-evaluation rate of each and whether their log-probabilities agree.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from typing import Any

STEPS_PARAMS = {"n_ctx": 4096, "n_batch": 512, "threads": 2}


class _Timed:
    """A server proxy that logs each chat call's wall time and llama.cpp timings."""

    def __init__(self, server: Any, threads: int, log: Any) -> None:
        self._server, self._threads, self._log = server, threads, log

    def handle_chat_completions(self, body: dict[str, Any]) -> dict[str, Any]:
        t0 = time.perf_counter()
        out = self._server.handle_chat_completions(body)
        t = out.get("timings") or {}
        row = {
            "threads": self._threads,
            "wall_s": time.perf_counter() - t0,
            "prompt_n": t.get("prompt_n"),
            "prompt_ms": t.get("prompt_ms"),
            "predicted_n": t.get("predicted_n"),
            "predicted_ms": t.get("predicted_ms"),
        }
        self._log.write(json.dumps(row) + "\n")
        self._log.flush()
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self._server, name)


def log_command(out_path: str, argv: list[str]) -> int:
    os.environ["EDUEVAL_LOCAL_ENGINE"] = "xllamacpp"
    from edueval.cli import run
    from edueval.models import local_xllamacpp

    log = open(out_path, "w", encoding="utf-8")  # noqa: SIM115 - open for the whole command
    load = local_xllamacpp.load

    def timed_load(path, n_ctx, n_threads, n_threads_batch):
        model = load(path, n_ctx, n_threads, n_threads_batch)
        if not isinstance(model.server, _Timed):
            model.server = _Timed(model.server, n_threads, log)
        return model

    local_xllamacpp.load = timed_load
    sys.argv = ["edueval", *argv]
    try:
        run()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0
    else:
        code = 0
    finally:
        log.close()
    _totals(out_path)
    return code


def _read(path: str) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def _totals(path: str) -> None:
    rows = _read(path)
    if not rows:
        print("no model calls")
        return
    pn = sum(r["prompt_n"] or 0 for r in rows)
    pms = sum(r["prompt_ms"] or 0 for r in rows) / 1000
    gn = sum(r["predicted_n"] or 0 for r in rows)
    gms = sum(r["predicted_ms"] or 0 for r in rows) / 1000
    wall = sum(r["wall_s"] for r in rows)
    threads = sorted({r["threads"] for r in rows})
    print(
        f"{len(rows)} calls, {wall:.1f} s; threads {threads} "
        f"(calls on fewer than the most: {sum(r['threads'] < threads[-1] for r in rows)})"
    )
    print(f"prompt: {pn} tokens evaluated in {pms:.1f} s ({pn / max(pms, 1e-9):.1f} tokens/s)")
    print(f"generation: {gn} tokens in {gms:.1f} s ({1000 * gms / max(gn, 1):.2f} ms per token)")
    print(f"outside llama.cpp's timers: {wall - pms - gms:.1f} s")  # fmt: skip


def _server(path: str, ubatch: int) -> Any:
    import xllamacpp as xl

    p = xl.CommonParams()
    p.model.path = path
    p.n_ctx, p.n_batch, p.n_ubatch, p.n_parallel = STEPS_PARAMS["n_ctx"], 512, ubatch, 1
    p.cpuparams.n_threads = p.cpuparams_batch.n_threads = STEPS_PARAMS["threads"]
    p.flash_attn_type, p.use_jinja, p.verbosity, p.warmup = 0, True, -1, False
    p.cache_ram_mib = 0
    p.hostnames = [os.path.join(tempfile.mkdtemp(prefix="xl-steps-"), "s.sock")]
    return xl.Server(p)


def compare_steps(calls: str, seq: int, steps: list[int], repeats: int) -> int:
    from edueval.models.local import smollm2_path

    rows = _read(calls)
    request = next(r["request"] for r in rows if r["seq"] == seq)
    servers = {s: _server(str(smollm2_path()), s) for s in steps}
    rates: dict[int, list[float]] = {s: [] for s in steps}
    logprobs: set[str] = set()
    body = {
        "messages": request["messages"], "max_tokens": 8, "temperature": 0.0,
        "cache_prompt": False, "logprobs": True, "top_logprobs": 5,
    }  # fmt: skip
    for _ in range(repeats):
        for s in steps:
            out = servers[s].handle_chat_completions(body)
            t = out["timings"]
            rates[s].append(t["prompt_n"] / t["prompt_ms"] * 1000)
            logprobs.add(json.dumps(out["choices"][0]["logprobs"]))
    n = out["timings"]["prompt_n"]
    for s in steps:
        print(f"n_ubatch {s}: {n} prompt tokens at "
              f"{' '.join(f'{r:.1f}' for r in rates[s])} tokens/s "
              f"(median {statistics.median(rates[s]):.1f})")  # fmt: skip
    print("same log-probabilities for every step size:", len(logprobs) == 1)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["log"]:
        if len(argv) < 4 or argv[2] != "--":
            print("usage: xllamacpp_timings.py log OUT.jsonl -- EDUEVAL ARGS...", file=sys.stderr)
            return 2
        return log_command(argv[1], argv[3:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    st = sub.add_parser("steps")
    st.add_argument("--calls", required=True, help="a run's calls.jsonl")
    st.add_argument("--seq", type=int, default=21, help="the call whose prompt is evaluated")
    st.add_argument("--steps", default="512,256,128")
    st.add_argument("--repeats", type=int, default=4)
    args = ap.parse_args(argv)
    steps = [int(s) for s in args.steps.split(",")]
    return compare_steps(args.calls, args.seq, steps, args.repeats)


if __name__ == "__main__":
    sys.exit(main())
