"""Throughput of the model layer against the scripted OpenAI-compatible server.

The server answers every call after a fixed latency (default 200 ms), so with ``C`` connections the
ideal rate is ``C / latency`` calls per second; the ratio measured/ideal says how much the shared
layer (openai SDK, concurrency control, retries bookkeeping, SQLite cache, calls.jsonl) costs.
Then the same requests are run again with the cache on: the first pass fills it, the second is
answered from it (zero HTTP calls) -- the cache-hit rate.

The server runs in a separate process (as a real one would) and, for comparison, in the
benchmark's own process, where its threads compete with the client for the GIL.

    python benchmarks/models_throughput.py                 # 1000 calls, 200 ms, 32 connections
    python benchmarks/models_throughput.py --n 300 --latency 0.05
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

from edueval.models import ChatRequest, get_model

# the scripted server is test support, not part of edueval: tests/support/scripted_server.py
TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))
from support.scripted_server import ScriptedServer  # noqa: E402


@contextlib.contextmanager
def server_in_process(latency: float) -> Iterator[tuple[str, Callable[[], dict]]]:
    with ScriptedServer(latency=latency) as server:
        yield server.url, lambda: {"calls": server.calls, "max_in_flight": server.max_in_flight}


@contextlib.contextmanager
def server_subprocess(latency: float) -> Iterator[tuple[str, Callable[[], dict]]]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cmd = [sys.executable, str(TESTS / "support" / "scripted_server.py"), "--port", str(port)]
    proc = subprocess.Popen([*cmd, "--latency", str(latency)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and "serving on" in proc.stdout.readline()
        base = f"http://127.0.0.1:{port}"

        def stats() -> dict:
            with urllib.request.urlopen(f"{base}/scripted/stats") as resp:
                return json.load(resp)

        yield f"{base}/v1", stats
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def run(
    url: str, server_stats: Callable[[], dict], n: int, latency: float, connections: int
) -> dict[str, float]:
    requests = [
        ChatRequest.user(f"Student {i} answered {i % 7} + {i % 5} = {i % 11}. Why?", max_tokens=32)
        for i in range(n)
    ]
    out: dict[str, float] = {}
    common = {
        "base_url": url,
        "max_connections": connections,
        "timeout": 30.0,
        "api_key_env": "EDUEVAL_BENCH_NO_KEY",
    }
    with tempfile.TemporaryDirectory() as tmp:
        # warm-up: imports, connection pool
        with get_model("openai/bench", no_cache=True, **common) as m:
            m.complete_many(requests[:connections])

        before = server_stats()["calls"]
        with get_model(
            "openai/bench", no_cache=True, log_path=Path(tmp) / "nocache.jsonl", **common
        ) as m:
            t0 = time.perf_counter()
            res = m.complete_many(requests)
            out["nocache_s"] = time.perf_counter() - t0
        assert all(r.ok for r in res) and server_stats()["calls"] - before == n
        out["nocache_rate"] = n / out["nocache_s"]

        cache_dir = Path(tmp) / "cache"
        with get_model("openai/bench", cache_dir=cache_dir, **common) as m:  # fill the cache
            t0 = time.perf_counter()
            m.complete_many(requests)
            out["fill_s"] = time.perf_counter() - t0
        before = server_stats()["calls"]
        with get_model(
            "openai/bench", cache_dir=cache_dir, log_path=Path(tmp) / "hit.jsonl", **common
        ) as m:
            t0 = time.perf_counter()
            res = m.complete_many(requests)
            out["hit_s"] = time.perf_counter() - t0
            assert all(r.cached for r in res)
        stats = server_stats()
        out["hit_calls"] = stats["calls"] - before
        out["hit_rate"] = n / out["hit_s"]
        out["max_in_flight"] = stats["max_in_flight"]
    out["ideal_rate"] = connections / latency
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000, help="calls per pass")
    ap.add_argument("--latency", type=float, default=0.2, help="server latency, seconds")
    ap.add_argument("--connections", type=int, default=32, help="max_connections")
    args = ap.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    )
    print(
        f"{args.n} calls, server latency {args.latency * 1000:.0f} ms, {args.connections} connections"
    )
    for label, where in (("server in another process", server_subprocess),
                         ("server in this process", server_in_process)):  # fmt: skip
        with where(args.latency) as (url, stats):
            r = run(url, stats, args.n, args.latency, args.connections)
        print(f"-- {label}")
        print(
            f"cache off : {r['nocache_s']:.2f} s = {r['nocache_rate']:.1f} calls/s "
            f"(ideal {r['ideal_rate']:.0f}/s, ratio {r['nocache_rate'] / r['ideal_rate']:.3f}); "
            f"max in flight at the server {r['max_in_flight']:.0f}"
        )
        print(f"cache fill: {r['fill_s']:.2f} s")
        print(
            f"cache hits: {r['hit_s']:.3f} s = {r['hit_rate']:.0f} calls/s, "
            f"{r['hit_calls']:.0f} HTTP calls"
        )


if __name__ == "__main__":
    main()
