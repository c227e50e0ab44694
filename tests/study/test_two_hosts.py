"""Two `study serve` hosts on one PostgreSQL database behave as one study.

The worst case of a load balancer without sticky sessions: every participant's requests alternate
between the two hosts, and some answers are submitted twice at the same moment, once to each
host.  The export must hold every answer exactly once, with the value the participant sent.
Also: hosts starting at once on an empty database, and invites run at once, do not collide.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pandas as pd
import pytest
from sqlalchemy import create_engine, func, select

from edueval.study import StudyDB, load_study
from edueval.study.db import assignments, participants, responses

from .conftest import ADMIN, comparative_study, empty_pg_url
from .test_browser import _free_port

EDUEVAL = [sys.executable, "-m", "edueval"]
N_PARTICIPANTS = 200
N_ITEMS, PER = 6, 2  # 18 units (6 items x 3 pairs), 3 items per participant
QUESTIONS = {"q0": "teacher-like", "q1": "helpful"}
VALUES = ("first", "second", "tie")
CSRF = re.compile(r'name="csrf" value="([^"]+)"')
ACTION = re.compile(r'<form method="post" action="([^"]+)"')
ITEM = re.compile(r"Is (\d+) \+")
TIMING = {"first_click": "1", "last_click": "2", "submit": "3"}


@pytest.fixture
def pg_url() -> str:
    return empty_pg_url()


def _edueval(*args: object) -> None:
    subprocess.run([*EDUEVAL, *map(str, args)], check=True, capture_output=True, timeout=120)


def _answer(label: str, item: str) -> dict[str, str]:
    """A deterministic answer per (participant, item), so the export is checked value by value."""
    h = sum(map(ord, label + item))
    return {"q0": VALUES[h % 3], "q1": VALUES[(h // 3) % 3]}


def _wait_until_up(proc: subprocess.Popen, base: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"{base} exited: {proc.stderr.read().decode()[-2000:]}"
        try:
            if httpx.get(base + "/", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise AssertionError(f"{base} did not start")


class _Hosts:
    """The two hosts as a load balancer without sticky sessions would use them: each request of
    a participant goes to the other host than the one before."""

    def __init__(self, clients: list[httpx.AsyncClient]) -> None:
        self.clients = clients

    async def send(self, turn: list[int], method: str, url: str, **kw) -> httpx.Response:
        client = self.clients[turn[0] % 2]
        turn[0] += 1
        try:
            return await client.request(method, url, **kw)
        except (httpx.ReadError, httpx.RemoteProtocolError):
            # a kept-alive connection the server closed as it was reused: sent again, as a
            # browser or balancer does (every request here is idempotent, answers included)
            return await client.request(method, url, **kw)

    async def post_to_both(self, url: str, data: dict[str, str]) -> list[httpx.Response]:
        """The same form sent to both hosts at once (a double click split by the balancer)."""
        return await asyncio.gather(*(c.post(url, data=data) for c in self.clients))


async def _participant(hosts: _Hosts, label: str, link: str, double: bool, sent: dict) -> None:
    path, turn = urlsplit(link).path, [hash(label) % 2]
    r = await hosts.send(turn, "GET", path)
    assert r.status_code == 200 and "Consent text" in r.text, (r.status_code, r.text[:200])
    r = await hosts.send(turn, "POST", f"{path}/consent",
                         data={"csrf": CSRF.search(r.text)[1], "agree": "yes"})  # fmt: skip
    while True:
        assert r.status_code == 303, (label, r.status_code, r.text[:300])
        location = r.headers["location"]
        r = await hosts.send(turn, "GET", location)
        assert r.status_code == 200, (label, location, r.status_code, r.text[:300])
        if location.endswith("/done"):
            assert "All your answers are saved" in r.text
            return
        form = {"csrf": CSRF.search(r.text)[1], **TIMING}
        action = ACTION.search(r.text)[1]
        if "/a/" not in action:  # the practice item: not stored
            r = await hosts.send(turn, "POST", action, data={**form, "q0": "first", "q1": "tie"})
            continue
        item = "item" + ITEM.search(r.text)[1]
        sent[(label, item)] = _answer(label, item)
        form.update(sent[(label, item)])
        if double:
            both = await hosts.post_to_both(action, form)
            assert [x.status_code for x in both] == [303, 303], [x.text[:200] for x in both]
            r = both[0]
        else:
            r = await hosts.send(turn, "POST", action, data=form)


async def _run_participants(bases: list[str], links: pd.DataFrame, sent: dict) -> list:
    limits = httpx.Limits(max_connections=N_PARTICIPANTS, max_keepalive_connections=N_PARTICIPANTS)
    clients = [httpx.AsyncClient(base_url=b, timeout=60, limits=limits) for b in bases]
    try:
        hosts = _Hosts(clients)
        return await asyncio.gather(*(
            _participant(hosts, row.participant, row.url, n % 4 == 0, sent)
            for n, row in enumerate(links.itertuples())
        ), return_exceptions=True)  # fmt: skip
    finally:
        for c in clients:
            await c.aclose()


def _serve_two(study: Path, url: str) -> tuple[list[subprocess.Popen], list[str]]:
    """Two `study serve` processes on two ports, started at the same moment."""
    env = {**os.environ, "EDUEVAL_STUDY_ADMIN_TOKEN": ADMIN}
    ports = [_free_port(), _free_port()]
    procs = [subprocess.Popen([*EDUEVAL, "study", "serve", str(study), "--db", url,
                               "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
             for port in ports]  # fmt: skip
    return procs, [f"http://127.0.0.1:{port}" for port in ports]


def _check_export(study: Path, url: str, out: Path, sent: dict) -> pd.DataFrame:
    _edueval("study", "export", study, "--db", url, "--out", out)
    df = pd.read_csv(out / "comparisons.csv", keep_default_na=False)
    assert len(sent) == N_PARTICIPANTS * PER, "some participant did not reach every item"
    assert not df.duplicated(["rater", "item", "attribute"]).any(), "an answer is duplicated"
    got = {(r.rater, r.item, r.attribute): r.outcome for r in df.itertuples()}
    expected = {(label, item, QUESTIONS[q]): v
                for (label, item), answer in sent.items() for q, v in answer.items()}  # fmt: skip
    assert got == expected  # none lost, none extra, each with the value sent
    return df


@pytest.mark.parametrize("pairing", ["random", "adaptive"])
def test_two_hosts_one_postgresql_200_participants(tmp_path, pg_url, pairing):
    """Under adaptive pairing the hosts also choose the pairs as participants open their slots
    (the items' streams shared through the database): every slot gets one pair, each place of
    a stream is taken once, and no answer is lost."""
    study = comparative_study(tmp_path / "study", n_items=N_ITEMS, per=PER,
                              pairing={"policy": pairing, "refit_every": 3})  # fmt: skip
    procs, bases = _serve_two(study, pg_url)  # both create the tables, at once
    sent: dict = {}
    try:
        _edueval("study", "invite", study, "--db", pg_url, "--n", N_PARTICIPANTS,
                 "--out", tmp_path / "links.csv")  # fmt: skip
        links = pd.read_csv(tmp_path / "links.csv")
        assert len(links) == N_PARTICIPANTS
        for proc, base in zip(procs, bases, strict=True):
            _wait_until_up(proc, base)
        results = asyncio.run(_run_participants(bases, links, sent))
        errors = [repr(x)[:300] for x in results if isinstance(x, BaseException)]
        assert not errors, f"{len(errors)} participants failed, e.g. {errors[:3]}"
        status = [httpx.get(b + "/admin/status", headers={"Authorization": f"Bearer {ADMIN}"},
                            timeout=10).json() for b in bases]  # fmt: skip
        assert status[0] == status[1]  # both hosts see the same study
        assert status[0]["responses"] == N_PARTICIPANTS * PER * len(QUESTIONS)
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=30)
    df = _check_export(study, pg_url, tmp_path / "export", sent)
    assert (df["pairing"] == pairing).all()
    engine = create_engine(pg_url)
    with engine.connect() as c:  # each double submission reached the database twice, as one row
        doubles = c.execute(select(func.count()).where(responses.c.n_submits == 2)).scalar_one()
        slots = pd.DataFrame(c.execute(select(assignments)).mappings().all())
    engine.dispose()
    assert doubles == len(range(0, N_PARTICIPANTS, 4)) * PER * len(QUESTIONS)
    if pairing == "adaptive":  # every slot paired once, the places of each stream 0, 1, 2, ...
        assert slots["first"].notna().all() and (slots["first"] != slots["second"]).all()
        for _, stream in slots.groupby(["item_id", "panel"]):
            assert sorted(stream["pair_seq"]) == list(range(len(stream)))


def _at_once(n: int, work) -> list:
    """``work()`` in ``n`` threads released together; their results or exceptions."""
    barrier, out = threading.Barrier(n), [None] * n

    def run(k: int) -> None:
        barrier.wait()
        try:
            out[k] = work(k)
        except Exception as exc:  # noqa: BLE001 - reported by the caller
            out[k] = exc

    threads = [threading.Thread(target=run, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def test_hosts_starting_at_once_on_an_empty_database(tmp_path, pg_url):
    study = load_study(comparative_study(tmp_path / "study"))

    def start(_k: int) -> str:
        StudyDB(study, pg_url).close()
        return "ok"

    assert _at_once(6, start) == ["ok"] * 6


def test_invites_run_at_once_number_participants_once(tmp_path, pg_url):
    study = load_study(comparative_study(tmp_path / "study"))
    StudyDB(study, pg_url).close()

    def invite(k: int) -> list:
        db = StudyDB(study, pg_url)
        try:
            return db.invite([f"h{k}-{i}" for i in range(10)])
        finally:
            db.close()

    results = _at_once(4, invite)
    assert all(isinstance(r, list) for r in results), results
    engine = create_engine(pg_url)
    with engine.connect() as c:
        idx = c.execute(select(participants.c.idx)).scalars().all()
    engine.dispose()
    assert sorted(idx) == list(range(40))  # each participant its own place in the layout


def test_numbered_invites_run_at_once_hand_out_each_label_once(tmp_path, pg_url):
    """``study invite --n`` from two places at once: the next free number is taken under the
    study's lock, so no two inviters get the same participant (and the same link)."""
    study = load_study(comparative_study(tmp_path / "study"))
    db = StudyDB(study, pg_url)
    db.invite(["p003"])  # a label from a participants file, in the numbered range
    db.close()

    def invite(_k: int) -> list:
        db = StudyDB(study, pg_url)
        try:
            return db.invite_numbered(10)
        finally:
            db.close()

    results = _at_once(4, invite)
    assert all(isinstance(r, list) for r in results), results
    labels = [r["label"] for batch in results for r in batch]
    tokens = [r["token"] for batch in results for r in batch]
    assert len(set(labels)) == len(set(tokens)) == 40 and "p003" not in labels
    assert sorted(labels) == [f"p{j:03d}" for j in range(1, 42) if j != 3]
