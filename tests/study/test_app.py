"""The study web app on SQLite through FastAPI's TestClient: whole sessions, idempotence, restart,
access control, CSRF, validation, and export read by `pairwise fit` / `turing analyze`."""

from __future__ import annotations

import collections

import pandas as pd
import pytest
from fastapi.testclient import TestClient

from edueval.study import StudyDB, load_study
from edueval.study.app import create_app
from edueval.study.db import assign_units

from .conftest import ADMIN, Participant, comparative_study, csrf_of, mcq_study

ANSWERS = {"q0": "first", "q1": "tie"}


def invite(ctx, n):
    rows = ctx["app"].state.db.invite([f"r{i}" for i in range(n)])
    return [Participant(ctx["client"], f"http://t/p/{r['token']}") for r in rows]


def full_session(p: Participant, answers=ANSWERS) -> int:
    r = p.consent()
    assert "Practice item" in r.text  # practice comes first and is not recorded
    r = p.answer_current(r, {"q0": "second", "q1": "second"})
    n = 0
    while "/a/" in str(r.url):
        assert r.status_code == 200
        r = p.answer_current(r, answers)
        n += 1
    assert r.status_code == 200 and "All your answers are saved" in r.text
    return n


def export(ctx) -> pd.DataFrame:
    return ctx["app"].state.db.export()


def test_full_session_and_export_read_by_pairwise_fit(comp, cli, tmp_path):
    ps = invite(comp, 4)
    for p in ps:
        assert full_session(p) == 3
    df = export(comp)
    assert list(df.columns[:6]) == ["item", "attribute", "rater", "first", "second", "outcome"]
    assert len(df) == 4 * 3 * 2  # participants x items x questions, each exactly once
    assert not df.duplicated(["item", "attribute", "rater"]).any()
    assert set(df["outcome"]) == {"first", "tie"}
    assert (df["first_click_s"] == 1.5).all() and (df["submit_s"] == 3.0).all()
    # the CLI export writes the same rows and `pairwise fit` reads them without edits
    comp["app"].state.db.close()
    r = cli("study", "export", comp["path"], "--db", comp["url"], "--out", tmp_path / "exp")
    assert r.code == 0, r.err
    csv = tmp_path / "exp" / "comparisons.csv"
    assert len(pd.read_csv(csv)) == 24
    r = cli("pairwise", "fit", csv, "--out", tmp_path / "fit", "--chains", "1", "--warmup", "30",
            "--draws", "30", "--min-comparisons", "1")  # fmt: skip
    assert r.code == 0, r.err
    assert (tmp_path / "fit" / "results.json").exists()


def test_double_submit_and_refresh_never_duplicate(comp):
    (p,) = invite(comp, 1)
    r = p.consent()
    r = p.answer_current(r, ANSWERS)  # practice
    page = r
    r1 = p.answer_current(page, ANSWERS)
    r2 = p.answer_current(page, {"q0": "second", "q1": "second"})  # same form sent again
    assert r1.status_code == r2.status_code == 200
    df = export(comp)
    assert len(df) == 2 and set(df["outcome"]) == {"second"}  # the later submit wins, no copy
    p.get()  # a refresh
    assert len(export(comp)) == 2


def test_restart_loses_nothing(comp):
    ps = invite(comp, 2)
    full_session(ps[0])
    before = export(comp)
    comp["app"].state.db.close()
    app2 = create_app(load_study(comp["path"]), comp["url"], ADMIN)  # a new server, same DB
    with TestClient(app2) as c2:
        p = Participant(c2, f"http://t{ps[1].path}")
        assert full_session(p) == 3
        old = Participant(c2, f"http://t{ps[0].path}")
        assert "All your answers are saved" in old.get().text  # consent and progress kept
    after = app2.state.db.export()
    app2.state.db.close()
    assert len(after) == len(before) + 6
    pd.testing.assert_frame_equal(after.iloc[: len(before)], before)


def test_other_participants_assignment_is_not_reachable(comp):
    a, b = invite(comp, 2)
    ra = a.consent()
    rb = b.consent()
    b.answer_current(rb, ANSWERS)
    db = comp["app"].state.db
    pid_b = db.participant(b.token)["id"]
    aid_b = db.assignments_of(pid_b)[0]["id"]
    assert comp["client"].get(f"{a.path}/a/{aid_b}").status_code == 404
    r = comp["client"].post(f"{a.path}/a/{aid_b}", data={"csrf": csrf_of(ra.text), **ANSWERS})
    assert r.status_code == 404
    assert comp["client"].get("/p/not-a-token").status_code == 404
    assert len(export(comp)) == 0


def test_admin_needs_the_token(comp):
    c = comp["client"]
    for path in ("/admin/status", "/admin/export.csv"):
        assert c.get(path).status_code == 401
        assert (
            c.get(path, headers={"Authorization": "Bearer wrong-token-123456"}).status_code == 401
        )
        assert c.get(path, headers={"Authorization": f"Bearer {ADMIN}"}).status_code == 200
    invite(comp, 2)
    s = c.get("/admin/status", headers={"Authorization": f"Bearer {ADMIN}"}).json()
    assert s["participants"] == 2 and s["assignments"] == 6


def test_csrf_missing_or_forged_is_rejected(comp):
    (p,) = invite(comp, 1)
    r = comp["client"].post(f"{p.path}/consent", data={"agree": "yes"})
    assert r.status_code == 403 and "Traceback" not in r.text
    r = comp["client"].post(f"{p.path}/consent", data={"agree": "yes", "csrf": "forged"})
    assert r.status_code == 403
    assert comp["app"].state.db.participant(p.token)["consented_at"] is None
    r = p.consent()
    r = p.answer_current(r, ANSWERS)
    action = r.url.path
    assert comp["client"].post(action, data=ANSWERS).status_code == 403
    assert len(export(comp)) == 0


def test_invalid_input_is_refused_without_traceback(comp):
    (p,) = invite(comp, 1)
    r = p.consent()
    r = p.answer_current(r, ANSWERS)
    bad = p.answer_current(r, {"q0": "first", "q1": "maybe"})
    assert bad.status_code == 400 and "Please answer every question" in bad.text
    assert p.answer_current(r, {"q0": "first"}).status_code == 400
    r2 = comp["client"].post(r.url.path, data={"csrf": csrf_of(r.text), **ANSWERS,
                                              "first_click": "NaN", "submit": "-5"})  # fmt: skip
    assert r2.status_code == 200
    df = export(comp)
    assert len(df) == 2 and df["first_click_s"].isna().all() and df["submit_s"].isna().all()
    r = comp["client"].get(f"{p.path}/a/notanumber")
    assert r.status_code == 400 and "Traceback" not in r.text
    # HTML in items is escaped
    assert "<b>" not in r.text and "&lt;b&gt;" in p.get(r.url.path.rsplit("/a/", 1)[0]).text


def test_assignment_is_even_and_seeded(tmp_path):
    study = load_study(comparative_study(tmp_path / "s", n_items=5, per=4))
    units = collections.Counter()
    for k in range(30):  # 30 x 4 = 120 = 8 x 15 units
        mine = assign_units(study, k)
        assert len({u[0] for u in mine}) == 4  # distinct items per participant
        units.update((i, *sorted((a, b))) for i, a, b in mine)
        assert mine == assign_units(study, k)
    assert len(units) == 15 and set(units.values()) == {8}


def test_mcq_session_export_read_by_turing_analyze(tmp_path, cli, db_url):
    path = mcq_study(tmp_path / "m")
    url = db_url
    r = cli("study", "invite", path, "--db", url, "--out", tmp_path / "links.csv")
    assert r.code == 0, r.err
    links = pd.read_csv(tmp_path / "links.csv")
    assert sorted(links["participant"]) == ["s1", "s2"]
    app = create_app(load_study(path), url, ADMIN)
    with TestClient(app) as c:
        for url_ in links["url"]:
            p = Participant(c, url_)
            r = p.consent()
            n = 0
            while "/a/" in str(r.url):
                r = p.answer_current(r, {"choice": str(1 + n % 4)})
                n += 1
            assert n == 3 and "All your answers are saved" in r.text
    app.state.db.close()
    r = cli("study", "export", path, "--db", url, "--out", tmp_path / "exp")
    assert r.code == 0, r.err
    choices = pd.read_csv(tmp_path / "exp" / "choices.csv")
    assert len(choices) == 6 and set(choices["chosen"]) <= {"correct", "ai", "human", "random"}
    r = cli("turing", "analyze", tmp_path / "exp" / "choices.csv", "--out", tmp_path / "an")
    assert r.code == 0, r.err


def test_database_of_another_study_is_refused(tmp_path, cli, db_url):
    path = comparative_study(tmp_path / "a")
    url = db_url
    StudyDB(load_study(path), url).close()
    other = mcq_study(tmp_path / "b")
    r = cli("study", "invite", other, "--db", url)
    assert r.code == 2 and "belongs to another study" in r.err and len(r.err_lines) == 1


@pytest.mark.parametrize("bad,expected", [
    ("kind: survey\nitems: i.jsonl\n", "kind"),
    ("kind: comparative\nitems: missing.jsonl\n", "items file not found"),
])  # fmt: skip
def test_bad_study_files_are_one_line(tmp_path, cli, bad, expected):
    (tmp_path / "s.yaml").write_text(bad)
    r = cli("study", "invite", tmp_path / "s.yaml", "--n", "1")
    assert r.code == 2 and expected in r.err and len(r.err_lines) == 1


def test_open_study_exports_phase1(tmp_path, db_url):
    import json

    import yaml

    folder = tmp_path / "o"
    folder.mkdir()
    items = [{"id": f"q{i}", "question": f"What is {i} x 3?", "correct_answer": str(3 * i)}
             for i in range(3)]  # fmt: skip
    (folder / "items.jsonl").write_text("".join(json.dumps(x) + "\n" for x in items))
    (folder / "study.yaml").write_text(yaml.safe_dump(
        {"title": "Phase 1", "kind": "open", "items": "items.jsonl", "consent": "ok"}))  # fmt: skip
    app = create_app(load_study(folder / "study.yaml"), db_url, ADMIN)
    (row,) = app.state.db.invite(["s1"])
    with TestClient(app) as c:
        p = Participant(c, f"http://t/p/{row['token']}")
        r = p.consent()
        assert p.answer_current(r, {"answer": "  "}).status_code == 400
        while "/a/" in str(r.url):
            r = p.answer_current(r, {"answer": "7"})
    df = app.state.db.export()
    app.state.db.close()
    assert list(df.columns[:4]) == ["student", "question", "answer", "correct_answer"]
    assert len(df) == 3 and set(df["answer"]) == {"7"}
    assert sorted(df["correct_answer"]) == ["0", "3", "6"]


def test_tutor_make_study_output_is_a_servable_study(tmp_path):
    import json

    from edueval.tutor import make_study

    replies = tmp_path / "replies.csv"
    pd.DataFrame([{"dialogue": f"d{i}", "turn": 1, "model": "m", "context": "Student: hi",
                   "real_reply": "Hello, what do you mean?", "ai_reply": "hey there", "status": "ok"}
                  for i in range(3)]).to_csv(replies, index=False)  # fmt: skip
    make_study(tmp_path / "st", [replies], items_per_participant=2)
    study = load_study(tmp_path / "st" / "study.yaml")
    assert study.kind == "comparative" and len(study.items) == 3 and study.practice is not None
    assert json.loads((tmp_path / "st" / "items.jsonl").read_text().splitlines()[0])["id"] == "d0:1"


def test_server_error_shows_no_traceback(comp, monkeypatch):
    (p,) = invite(comp, 1)
    r = p.consent()
    r = p.answer_current(r, ANSWERS)

    def boom(*a, **k):
        raise RuntimeError("secret internals /etc/passwd")

    monkeypatch.setattr(comp["app"].state.db, "save", boom)
    bad = p.answer_current(r, ANSWERS)
    assert bad.status_code == 500
    assert "secret" not in bad.text and "Traceback" not in bad.text and "went wrong" in bad.text


def test_numbered_invites_skip_labels_already_taken(tmp_path, cli, db_url):
    """A participants file may hold a label like p002: ``--n`` takes the next free numbers,
    never handing out an existing participant's link again."""
    path = comparative_study(tmp_path / "s")
    (tmp_path / "who.txt").write_text("p002\n")
    r = cli("study", "invite", path, "--db", db_url, "--participants", tmp_path / "who.txt",
            "--out", tmp_path / "a.csv")  # fmt: skip
    assert r.code == 0, r.err
    r = cli("study", "invite", path, "--db", db_url, "--n", "3", "--out", tmp_path / "b.csv")
    assert r.code == 0, r.err
    first, second = pd.read_csv(tmp_path / "a.csv"), pd.read_csv(tmp_path / "b.csv")
    assert list(second["participant"]) == ["p001", "p003", "p004"]
    assert not set(second["url"]) & set(first["url"])
