"""Load test of the study web app: concurrent participants completing a comparative study.

Builds a comparative study like ``tests/study/conftest.py`` does (three agents per item, so three
pairs per item; two questions; a practice item), invites the participants with ``edueval study
invite``, starts ``edueval study serve`` (uvicorn, SQLite) on loopback in a subprocess, and runs
every participant concurrently (asyncio, one ``httpx.AsyncClient`` each, its own cookies): consent
page, consent, practice, then every assigned item -- GET the page, parse the CSRF token, POST the
answer (POST/redirect/GET, redirects followed by hand so GET and POST are timed separately).

Measured: p50/p95/max latency of page GETs and of form POSTs, item submissions/s over the run (from
the first request to the last response), and the load average sampled during the run.  Afterwards
``edueval study export`` is run and the export must hold every answer exactly once: rows =
participants x items x questions, no duplicate (rater, item, attribute) rows, and every answer's
value the one that participant sent.  The client runs on the same machine as the server.

    python benchmarks/study_load.py                          # 200 participants x 10 items
    python benchmarks/study_load.py --participants 50 --per 5
    python benchmarks/study_load.py --workers 2   # same app, uvicorn --workers 2 (not `serve`)
    python benchmarks/study_load.py --pairing random --pairing adaptive   # both, one run each,
                                                  # and the ratio of their submissions/s
    python benchmarks/study_load.py --items 1 --agents 30 --pairing random --pairing adaptive

``--pairing`` sets ``pairing:`` in ``study.yaml`` (``adaptive``: each slot's pair is chosen when
the participant comes to it -- with the answer to the slot before, or on opening the first --
from estimates refitted every ``--refit-every`` judgements); under
it the export must also give every participant's slot a pair and every place of an item's
stream of pairs once.  Answers are checked per (participant, item, pair shown).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import re
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import pandas as pd
import yaml

ADMIN = "bench-admin-token-0123456789"
AGENTS = ("teacher", "model_a", "model_b")
CSRF = re.compile(r'name="csrf" value="([^"]+)"')
ACTION = re.compile(r'<form method="post" action="([^"]+)"')
EDUEVAL = [sys.executable, "-m", "edueval"]
SHOWN = re.compile(r"(\w+) says &lt;b&gt;")  # the reply text, HTML-escaped


def comparative_study(
    folder: Path,
    n_items: int,
    per: int,
    n_agents: int = 3,
    pairing: str = "random",
    refit_every: int = 10,
) -> Path:
    """The study of the tests' ``comparative_study`` (sizes as given; more than three agents
    are named ``agent03``, ...)."""
    folder.mkdir(parents=True, exist_ok=True)
    agents = list(AGENTS[:n_agents]) + [f"agent{j:02d}" for j in range(3, n_agents)]
    items = [
        {"id": f"item{i}", "context": [{"speaker": "student", "text": f"Is {i} + {i} = {2 * i}?"}],
         "replies": {a: f"{a} says <b>{i}</b>" for a in agents}}
        for i in range(n_items)
    ]  # fmt: skip
    (folder / "items.jsonl").write_text("".join(json.dumps(x) + "\n" for x in items))
    cfg = {
        "title": "Load test", "kind": "comparative", "items": "items.jsonl",
        "items_per_participant": per, "seed": 3, "consent": "Consent text.",
        "questions": [{"id": "teacher-like", "text": "Which is more like a teacher?"},
                      {"id": "helpful", "text": "Which helps more?"}],
        "practice": {"context": "practice context", "replies": {"x": "good", "y": "bad"}},
        "pairing": {"policy": pairing, "refit_every": refit_every},
    }  # fmt: skip
    (folder / "study.yaml").write_text(yaml.safe_dump(cfg))
    return folder / "study.yaml"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers_of(label: str, position: int) -> dict[str, str]:
    """A deterministic answer per (participant, item) so the export can be checked value by value."""
    vals = ("first", "second", "tie")
    h = sum(map(ord, label)) + 7 * position
    return {"q0": vals[h % 3], "q1": vals[(h // 3) % 3]}


class Stats:
    def __init__(self) -> None:
        self.get: list[float] = []
        self.post: list[float] = []
        self.submits = 0
        self.sent: dict[tuple[str, str, str, str], dict[str, str]] = {}
        self.errors: list[str] = []


async def timed(stats: Stats, client: httpx.AsyncClient, method: str, url: str, **kw):
    t = time.perf_counter()
    r = await client.request(method, url, **kw)
    (stats.get if method == "GET" else stats.post).append(time.perf_counter() - t)
    return r


async def participant(base: str, label: str, link: str, stats: Stats, gate: asyncio.Event):
    path = "/" + link.split("://", 1)[1].split("/", 1)[1]
    async with httpx.AsyncClient(base_url=base, timeout=120) as c:
        await gate.wait()
        r = await timed(stats, c, "GET", path)
        assert r.status_code == 200 and "Consent text" in r.text, (r.status_code, r.text[:200])
        csrf = CSRF.search(r.text).group(1)
        r = await timed(stats, c, "POST", f"{path}/consent", data={"csrf": csrf, "agree": "yes"})
        n_items = 0
        while True:
            assert r.status_code == 303, (r.status_code, r.text[:300])
            loc = r.headers["location"]
            r = await timed(stats, c, "GET", loc)
            assert r.status_code == 200, (r.status_code, r.text[:300])
            if loc.endswith("/done"):
                assert "All your answers are saved" in r.text
                return n_items
            csrf = CSRF.search(r.text).group(1)
            action = ACTION.search(r.text).group(1)
            if "/a/" in loc:
                pos = int(re.search(r"Item (\d+) of", r.text).group(1))
                item = "item" + re.search(r"Is (\d+) \+", r.text).group(1)
                first, second = SHOWN.findall(r.text)[:2]
                data = answers_of(label, pos)
                stats.sent[(label, item, first, second)] = dict(data)
            else:  # practice: not recorded
                data = {"q0": "first", "q1": "first"}
            data.update(csrf=csrf, first_click="1.0", last_click="2.0", submit="3.0")
            r = await timed(stats, c, "POST", action, data=data)
            if "/a/" in action:
                n_items += 1
                stats.submits += 1


async def run_all(base: str, links: pd.DataFrame, stats: Stats) -> tuple[float, list[int]]:
    gate = asyncio.Event()
    tasks = [
        asyncio.create_task(participant(base, row.participant, row.url, stats, gate))
        for row in links.itertuples()
    ]
    await asyncio.sleep(0.2)  # let every client be built before the clock starts
    t0 = time.perf_counter()
    gate.set()
    done = await asyncio.gather(*tasks, return_exceptions=True)
    wall = time.perf_counter() - t0
    for d in done:
        if isinstance(d, BaseException):
            stats.errors.append(repr(d)[:300])
    return wall, [d for d in done if isinstance(d, int)]


def proc_cpu(pid: int) -> float:
    """User + system CPU seconds of a process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_cpu(pid: int) -> float:
    """CPU seconds of the server process and its worker processes."""
    kids = Path(f"/proc/{pid}/task/{pid}/children")
    pids = [pid, *map(int, kids.read_text().split())] if kids.exists() else [pid]
    return sum(proc_cpu(p) for p in pids)


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs) * 1000, q)) if xs else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--participants", type=int, default=200)
    ap.add_argument("--items", type=int, default=20, help="items in the study (3 pairs each)")
    ap.add_argument("--per", type=int, default=10, help="items per participant")
    ap.add_argument("--workers", type=int, default=1,
                    help="server processes: edueval study serve --workers N")  # fmt: skip
    ap.add_argument("--agents", type=int, default=3, help="agents (replies) per item")
    ap.add_argument("--pairing", action="append", choices=("random", "adaptive", "adaptive-shared"),
                    help="pairing policy; repeat to run each in turn (default: random)")  # fmt: skip
    ap.add_argument("--repeat", type=int, default=1,
                    help="run the policies this many times, interleaved")  # fmt: skip
    ap.add_argument("--refit-every", type=int, default=10, help="pairing: refit_every")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = ap.parse_args()
    pairings = args.pairing or ["random"]
    runs = [run_once(args, p) for _ in range(args.repeat) for p in pairings]  # interleaved
    if len(pairings) > 1:  # each run against the random run just before it (or the first run)
        base = runs[0]
        for res in runs:
            base = res if res["pairing"] == "random" else base
            res["submissions_per_s_vs_random"] = round(
                res["submissions_per_s"] / max(base["submissions_per_s"], 1e-9), 3
            )
    print(json.dumps(runs if len(runs) > 1 else runs[0], indent=2))
    return 0 if all(r["export_ok"] for r in runs) else 1


def run_once(args: argparse.Namespace, pairing: str) -> dict:
    """One load run of a fresh study under ``pairing``: the measured figures and checks."""
    tmp = Path(tempfile.mkdtemp(prefix="study-load-"))
    study = comparative_study(tmp / "study", args.items, args.per, args.agents, pairing,
                              args.refit_every)  # fmt: skip
    db = f"sqlite:///{tmp / 'study.db'}"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONUNBUFFERED="1")

    t = time.perf_counter()
    subprocess.run([*EDUEVAL, "study", "invite", str(study), "--db", db, "--n",
                    str(args.participants), "--base-url", base, "--out", str(tmp / "links.csv")],
                   check=True, env=env, capture_output=True)  # fmt: skip
    t_invite = time.perf_counter() - t
    links = pd.read_csv(tmp / "links.csv")
    assert len(links) == args.participants

    serve_cmd = [*EDUEVAL, "study", "serve", str(study), "--db", db, "--port", str(port),
                 "--admin-token", ADMIN]  # fmt: skip
    if args.workers > 1:
        serve_cmd += ["--workers", str(args.workers)]
    log = open(tmp / "server.log", "w")  # noqa: SIM115
    server = subprocess.Popen(serve_cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        for _ in range(300):
            try:
                if httpx.get(base + "/", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        else:
            raise RuntimeError(f"server did not start: {(tmp / 'server.log').read_text()}")

        loads: list[float] = []
        stop = threading.Event()

        def sample() -> None:
            while not stop.wait(1.0):
                loads.append(os.getloadavg()[0])

        load_before = os.getloadavg()
        cpu_server0, cpu_client0 = server_cpu(server.pid), time.process_time()
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        stats = Stats()
        wall, per_participant = asyncio.run(run_all(base, links, stats))
        stop.set()
        sampler.join()
        load_after = os.getloadavg()
        cpu_server = server_cpu(server.pid) - cpu_server0
        cpu_client = time.process_time() - cpu_client0
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()

    out = tmp / "export"
    t = time.perf_counter()
    subprocess.run([*EDUEVAL, "study", "export", str(study), "--db", db, "--out", str(out)],
                   check=True, env=env, capture_output=True)  # fmt: skip
    t_export = time.perf_counter() - t
    df = pd.read_csv(out / "comparisons.csv", keep_default_na=False)
    n_q = 2
    n_units = args.items * args.agents * (args.agents - 1) // 2
    expected = args.participants * min(args.per, n_units) * n_q
    dups = int(df.duplicated(["rater", "item", "first", "second", "attribute"]).sum())
    # every stored value is the one the participant sent for that item, pair and question
    qkey = {"teacher-like": "q0", "helpful": "q1"}
    wrong = sum(
        stats.sent.get((r.rater, r.item, r.first, r.second), {}).get(qkey[r.attribute]) != r.outcome
        for r in df.itertuples()
    )
    places_ok = True
    if pairing != "random":  # every slot paired once; each place of a stream taken once
        with sqlite3.connect(tmp / "study.db") as con:
            slots = pd.read_sql("SELECT item_id, panel, pair_seq, first FROM assignments", con)
        places_ok = bool(slots["first"].notna().all()) and all(
            sorted(g["pair_seq"]) == list(range(len(g)))
            for _, g in slots.groupby(["item_id", "panel"])
        )

    complete = len(per_participant)
    submits = stats.submits
    res = {
        "pairing": pairing,
        "agents_per_item": args.agents,
        "participants": args.participants,
        "completed": complete,
        "items_per_participant": args.per,
        "errors": stats.errors[:5],
        "n_errors": len(stats.errors),
        "wall_s": round(wall, 2),
        "submissions": submits,
        "submissions_per_s": round(submits / wall, 1),
        "answer_rows_per_s": round(submits * n_q / wall, 1),
        "requests_per_s": round((len(stats.get) + len(stats.post)) / wall, 1),
        "get_ms": {
            "n": len(stats.get),
            "p50": round(pct(stats.get, 50), 1),
            "p95": round(pct(stats.get, 95), 1),
            "max": round(pct(stats.get, 100), 1),
        },
        "post_ms": {
            "n": len(stats.post),
            "p50": round(pct(stats.post, 50), 1),
            "p95": round(pct(stats.post, 95), 1),
            "max": round(pct(stats.post, 100), 1),
        },
        "server": f"study serve --workers {args.workers}" if args.workers > 1 else "study serve",
        "cpu_s_server": round(cpu_server, 1),
        "cpu_s_client": round(cpu_client, 1),
        "export_rows": len(df),
        "export_expected": expected,
        "export_duplicates": dups,
        "export_values_not_as_sent": int(wrong),
        "adaptive_places_ok": places_ok,
        "export_ok": len(df) == expected
        and dups == 0
        and wrong == 0
        and not stats.errors
        and places_ok,
        "load_avg_before": [round(x, 2) for x in load_before],
        "load_avg_1min_during": [round(min(loads), 2), round(max(loads), 2)] if loads else None,
        "load_avg_after": [round(x, 2) for x in load_after],
        "invite_s": round(t_invite, 2),
        "export_s": round(t_export, 2),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "date": dt.date.today().isoformat(),
        "tmp": str(tmp),
    }
    if not args.keep:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return res


if __name__ == "__main__":
    raise SystemExit(main())
