"""Throughput of two model servers against one (edueval.models.pool, issue 14).

Two scripted OpenAI-compatible servers, each in its own process, answer after a fixed latency
(default 200 ms); the client allows 16 connections per server.  The same number of calls is sent
to one server alone, then to both (``--base-url A --base-url B``); rounds alternate so that a
change in the machine's load hits both configurations, and the ratio of the best times is
reported (ideal 2.0).

    python benchmarks/models_pool.py                      # 640 calls, 200 ms, 16 each, 3 rounds
    python benchmarks/models_pool.py --n 320 --rounds 5
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import statistics
import time

from models_throughput import server_subprocess

from edueval.models import ChatRequest, get_model


def timed(urls: list[str], n: int, connections: int, tag: str) -> float:
    requests = [
        ChatRequest.user(f"{tag} call {i}: why {i} + {i}?", max_tokens=16) for i in range(n)
    ]
    with get_model("openai/bench", base_url=urls, max_connections=connections, no_cache=True,
                   timeout=30.0, api_key_env="EDUEVAL_BENCH_NO_KEY") as model:  # fmt: skip
        model.complete_many(requests[:connections], progress=None)  # warm-up: connections
        t0 = time.perf_counter()
        results = model.complete_many(requests)
        elapsed = time.perf_counter() - t0
    assert all(r.ok for r in results)
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=640, help="calls per measurement")
    ap.add_argument("--latency", type=float, default=0.2, help="server latency, seconds")
    ap.add_argument("--connections", type=int, default=16, help="connections per server")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    with contextlib.ExitStack() as stack:
        (a, stats_a), (b, stats_b) = (stack.enter_context(server_subprocess(args.latency))
                                      for _ in range(2))  # fmt: skip
        one, two = [], []
        for r in range(args.rounds):
            one.append(timed([a], args.n, args.connections, f"one{r}"))
            two.append(timed([a, b], args.n, args.connections, f"two{r}"))
            print(f"round {r + 1}: one server {one[-1]:.2f} s, two servers {two[-1]:.2f} s, "
                  f"ratio {one[-1] / two[-1]:.2f}")  # fmt: skip
        sa, sb = stats_a(), stats_b()
    ideal = args.connections / args.latency
    print(
        f"one server: best {min(one):.2f} s = {args.n / min(one):.1f} calls/s (ideal {ideal:.0f})"
    )
    print(f"two servers: best {min(two):.2f} s = {args.n / min(two):.1f} calls/s "
          f"(ideal {2 * ideal:.0f})")  # fmt: skip
    ratios = [o / t for o, t in zip(one, two, strict=True)]
    print(
        f"throughput ratio: best times {min(one) / min(two):.2f}, per round median "
        f"{statistics.median(ratios):.2f} (min {min(ratios):.2f}, max {max(ratios):.2f})"
    )
    print(f"server calls: A {sa['calls']}, B {sb['calls']}; max in flight A {sa['max_in_flight']}, "
          f"B {sb['max_in_flight']}; load average now {os.getloadavg()[0]:.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
