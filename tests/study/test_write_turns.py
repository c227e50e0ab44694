"""Writes to the study database under load: SQLite writers take turns through a lock file, and an
adaptive slot's pair is chosen in the transaction that stores the answer before it (issue 37:
the study app's rate with adaptive pairing and two server processes)."""

from __future__ import annotations

import fcntl
import os
import threading

import pandas as pd
from fastapi.testclient import TestClient
from sqlalchemy import select

from edueval.study import StudyDB, load_study
from edueval.study.app import create_app
from edueval.study.db import assignments, responses
from edueval.study.pairing import AdaptivePairer

from .conftest import ADMIN, Participant, comparative_study, csrf_of

ANSWER = {"teacher-like": "first", "helpful": "tie"}
TIMING = {"first_click_s": 1.0, "last_click_s": 2.0, "submit_s": 3.0}


def test_a_sqlite_write_waits_for_a_writer_of_another_process(tmp_path):
    """While another process holds the lock file (an open file description of its own, as a
    second ``study serve`` worker has), an answer waits and is stored once the lock is let go;
    reads do not wait."""
    path = tmp_path / "study.db"
    db = StudyDB(load_study(comparative_study(tmp_path / "s")), f"sqlite:///{path}")
    try:
        token = db.invite(["ann"])[0]["token"]
        aid = db.assignments_of(db.participant(token)["id"])[0]["id"]
        other = os.open(f"{path}-writer", os.O_RDWR)  # made by the writes of the invite
        fcntl.flock(other, fcntl.LOCK_EX)
        saver = threading.Thread(target=db.save, args=(aid, ANSWER, TIMING))
        saver.start()
        saver.join(0.5)
        waited = saver.is_alive()
        assert db.participant(token)["label"] == "ann"  # a read goes on meanwhile
        assert db.status()["responses"] == 0
        fcntl.flock(other, fcntl.LOCK_UN)
        os.close(other)
        saver.join(30)
        assert waited and not saver.is_alive()
        assert db.status()["responses"] == 2
        assert (path.parent / "study.db-writer").stat().st_mode & 0o077 == 0  # owner only
    finally:
        db.close()


def _slots(db: StudyDB, token: str) -> pd.DataFrame:
    pid = db.participant(token)["id"]
    with db.engine.connect() as c:
        rows = c.execute(select(assignments).where(assignments.c.participant_id == pid)
                         .order_by(assignments.c.position)).mappings().all()  # fmt: skip
    return pd.DataFrame(rows)


def test_the_next_pair_is_chosen_with_the_answer(tmp_path, db_url):
    """Posting slot 1's answer stores it and gives slot 2 its pair in the same step (before
    slot 2 is opened), recorded with the policy and estimates like a pair chosen on opening."""
    study = load_study(comparative_study(tmp_path / "s", per=3, pairing="adaptive"))
    app = create_app(study, db_url, ADMIN)
    db = app.state.db
    with TestClient(app, raise_server_exceptions=False) as client:
        token = db.invite(["ann"])[0]["token"]
        p = Participant(client, f"http://t/p/{token}")
        r = p.answer_current(p.consent(), {"q0": "first", "q1": "first"})  # the practice
        slots = _slots(db, token)  # the redirect opened slot 1: its pair chosen, and only its
        assert slots["first"].notna().tolist() == [True, False, False]
        assert r.status_code == 200 and r.url.path.endswith(f"/a/{slots['id'][0]}")
        sent = client.post(r.url.path, data={"csrf": csrf_of(r.text), "q0": "second",
                                             "q1": "tie"}, follow_redirects=False)  # fmt: skip
        assert sent.status_code == 303
        assert sent.headers["location"].endswith(f"/a/{slots['id'][1]}")
        slots = _slots(db, token)  # slot 2 paired by the post, before anyone opened it
        assert slots["first"].notna().tolist() == [True, True, False]
        assert slots.loc[1, "pairing"] == "adaptive" and slots.loc[1, "fitted_on"] == 0
        with db.engine.connect() as c:
            stored = c.execute(select(responses.c.assignment_id, responses.c.value)).all()
        assert sorted(v for _, v in stored) == ["second", "tie"]
        assert {a for a, _ in stored} == {slots["id"][0]}
    db.close()


def test_an_answer_is_kept_when_the_choice_with_it_fails(tmp_path, db_url, monkeypatch):
    """If the next pair cannot be chosen with the answer, the answer is stored alone and the
    pair is chosen when the slot is opened: the whole session is still exported."""
    study = load_study(comparative_study(tmp_path / "s", per=3, pairing="adaptive"))
    plain = AdaptivePairer.choose

    def choose(self, a, before=None):
        if before is not None:
            raise RuntimeError("no pair")
        return plain(self, a)

    monkeypatch.setattr(AdaptivePairer, "choose", choose)
    app = create_app(study, db_url, ADMIN)
    with TestClient(app, raise_server_exceptions=False) as client:
        token = app.state.db.invite(["ann"])[0]["token"]
        p = Participant(client, f"http://t/p/{token}")
        r = p.answer_current(p.consent(), {"q0": "first", "q1": "first"})
        n = 0
        while "/a/" in str(r.url):
            assert r.status_code == 200, r.text[:300]
            r = p.answer_current(r, {"q0": "first", "q1": "second"})
            n += 1
        assert n == 3 and "All your answers are saved" in r.text
        df = app.state.db.export()
    app.state.db.close()
    assert len(df) == 3 * 2 and (df["pairing"] == "adaptive").all()
    assert df["pair_seq"].notna().all() and df["first"].ne(df["second"]).all()
