"""The study app under hostile or careless input (issue 11, 4, 6 and 7)."""

from __future__ import annotations

import logging
import os
import stat

import pytest
import yaml
from fastapi.testclient import TestClient

from edueval.io import InputError
from edueval.study import StudyDB, load_study
from edueval.study.app import MAX_BODY_BYTES, admin_token_problem, clean_text, create_app
from edueval.study.db import masked_url
from edueval.study.export import spreadsheet_safe

from .conftest import ADMIN, Participant, comparative_study, csrf_of
from .test_app import ANSWERS, export, invite


def _open_study(tmp_path):
    folder = tmp_path / "open"
    folder.mkdir()
    (folder / "items.jsonl").write_text(
        '{"id": "q1", "question": "What is 3 - 5?", "correct_answer": "-2"}\n'
    )
    cfg = {"title": "Phase 1", "kind": "open", "items": "items.jsonl", "consent": "ok"}
    (folder / "study.yaml").write_text(yaml.safe_dump(cfg))
    return folder / "study.yaml"


@pytest.fixture
def open_ctx(tmp_path, db_url):
    study = load_study(_open_study(tmp_path))
    app = create_app(study, db_url, ADMIN)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield {"app": app, "client": client, "study": study, "url": db_url}
    app.state.db.close()


def _server_log(caplog) -> str:
    """What the server side logged (the test client's own request log is not the server's)."""
    return "\n".join(r.getMessage() for r in caplog.records if not r.name.startswith("httpx"))


def _first_item(ctx) -> tuple[Participant, object]:
    (p,) = invite(ctx, 1)
    r = p.consent()
    assert "/a/" in str(r.url), r.url
    return p, r


def test_a_nul_byte_or_control_characters_are_removed_not_a_500(open_ctx):
    p, r = _first_item(open_ctx)
    sent = p.answer_current(r, {"answer": "minus\x00 two\x07\r\nthat is -2"})
    assert sent.status_code == 200, sent.text[:300]
    (answer,) = export(open_ctx)["answer"]
    assert answer == "minus two\nthat is -2"


def test_line_breaks_count_once_as_in_the_browser(open_ctx):
    p, r = _first_item(open_ctx)
    text = ("x" * 99 + "\r\n") * 50  # 5,000 characters as the browser counts, 5,050 as sent
    assert p.answer_current(r, {"answer": text}).status_code == 200
    (answer,) = export(open_ctx)["answer"]
    assert len(answer) == 4999 and "\r" not in answer  # the last break is trimmed


def test_clean_text():
    assert clean_text("a\r\nb\rc\x00d\x1be\tf") == "a\nb\ncde\tf"


@pytest.mark.parametrize("aid", ["99999999999999999999", "2147483648", "0", "-1"])
def test_an_assignment_id_out_of_range_is_400_and_logs_no_token(comp, caplog, aid):
    (p,) = invite(comp, 1)
    r = p.consent()
    caplog.set_level(logging.DEBUG)
    got = comp["client"].get(f"{p.path}/a/{aid}")
    posted = comp["client"].post(f"{p.path}/a/{aid}", data={"csrf": csrf_of(r.text), **ANSWERS})
    assert got.status_code in (400, 404) and posted.status_code in (400, 404), (got, posted)
    assert p.token not in _server_log(caplog)


def test_tokens_never_reach_the_log_even_when_the_server_fails(comp, caplog, monkeypatch):
    (p,) = invite(comp, 1)
    r = p.consent()
    r = p.answer_current(r, ANSWERS)

    def boom(*a, **k):
        raise RuntimeError("database gone")

    monkeypatch.setattr(comp["app"].state.db, "save", boom)
    caplog.set_level(logging.DEBUG)
    assert p.answer_current(r, ANSWERS).status_code == 500
    logged = _server_log(caplog)
    assert "error on /p/<token>/a/" in logged and p.token not in logged


def test_request_bodies_are_capped(comp):
    (p,) = invite(comp, 1)
    r = p.consent()
    big = "x" * (MAX_BODY_BYTES + 1)
    sent = comp["client"].post(f"{p.path}/consent", data={"csrf": csrf_of(r.text), "pad": big})
    assert sent.status_code == 413

    def chunks():  # no Content-Length: the streamed body is counted as it arrives
        for _ in range(MAX_BODY_BYTES // 1024 + 2):
            yield b"x" * 1024

    streamed = comp["client"].post(f"{p.path}/consent", content=chunks(),
                                   headers={"content-type": "application/x-www-form-urlencoded"})  # fmt: skip
    assert streamed.status_code == 413


def test_practice_needs_consent_and_items_need_the_practice(comp):
    (p,) = invite(comp, 1)
    home = p.get()
    csrf = csrf_of(home.text)
    early = comp["client"].post(f"{p.path}/practice", data={"csrf": csrf, **ANSWERS},
                                follow_redirects=False)  # fmt: skip
    assert early.status_code == 303 and early.headers["location"] == p.path
    assert comp["app"].state.db.participant(p.token)["practice_done_at"] is None
    r = p.consent()
    assert "Practice item" in r.text
    first_item = comp["app"].state.db.assignments_of(
        comp["app"].state.db.participant(p.token)["id"]
    )[0]["id"]
    skip = comp["client"].post(f"{p.path}/a/{first_item}", data={"csrf": csrf, **ANSWERS},
                               follow_redirects=False)  # fmt: skip
    assert skip.status_code == 303 and skip.headers["location"].endswith("/practice")
    assert len(export(comp)) == 0


def test_security_headers_and_hsts_only_with_tls(tmp_path):
    study = load_study(comparative_study(tmp_path / "s"))
    for tls in (False, True):
        app = create_app(study, f"sqlite:///{tmp_path / f'{tls}.db'}", ADMIN, tls=tls)
        with TestClient(app) as client:
            headers = client.get("/").headers
        assert headers["x-frame-options"] == "DENY"
        assert headers["referrer-policy"] == "no-referrer"
        assert "default-src 'none'" in headers["content-security-policy"]
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
        assert ("strict-transport-security" in headers) is tls
        app.state.db.close()


@pytest.mark.parametrize(
    ("token", "ok"),
    [("short", False), ("a" * 40, False), ("ab" * 20, False), ("admin-token-0123456789", True),
     ("Zq3_x9-LmP0aR7tYw2Kc8vBn", True)],
)  # fmt: skip
def test_weak_admin_tokens_are_refused(token, ok):
    assert (admin_token_problem(token) is None) is ok


def test_passwords_are_masked(tmp_path, cli):
    from edueval.study.db import _mask

    url = "postgresql+psycopg://alice:s3cret-pw@db.example:5432/study"
    assert "s3cret" not in masked_url(url) and "alice" in masked_url(url)
    assert "s3cret" not in _mask(RuntimeError(f"cannot reach {url}"), url)
    # a server that cannot be reached: the one-line error names the URL without its password
    path = comparative_study(tmp_path / "s")
    bad = "postgresql+psycopg://alice:s3cret-pw@127.0.0.1:9/none"
    r = cli("study", "export", path, "--db", bad, "--out", tmp_path / "e")
    assert r.code == 2 and "s3cret" not in r.err and "***" in r.err, r.err


def test_export_never_creates_a_database(tmp_path, cli):
    path = comparative_study(tmp_path / "s")
    missing = tmp_path / "moved.db"
    r = cli("study", "export", path, "--db", f"sqlite:///{missing}", "--out", tmp_path / "e1")
    assert r.code == 2 and "no database" in r.err and not missing.exists()
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    r = cli("study", "export", path, "--db", f"sqlite:///{empty}", "--out", tmp_path / "e2")
    assert r.code == 2 and "holds no study" in r.err, r.err
    assert not (tmp_path / "e2" / "results.json").exists()


def test_the_database_file_is_private_and_run_files_follow_the_umask(tmp_path, cli):
    path = comparative_study(tmp_path / "s")
    db = StudyDB(load_study(path), f"sqlite:///{tmp_path / 's' / 'study.db'}")
    db.close()
    assert stat.S_IMODE(os.stat(tmp_path / "s" / "study.db").st_mode) == 0o600
    old = os.umask(0o022)
    try:
        assert cli("turing", "power", "--out", tmp_path / "run").code == 0
    finally:
        os.umask(old)
    for name in ("report.html", "results.json", "config.json"):
        assert stat.S_IMODE(os.stat(tmp_path / "run" / name).st_mode) == 0o644, name


@pytest.mark.parametrize(
    ("value", "expected"),
    [("=HYPERLINK(\"x\")", "'=HYPERLINK(\"x\")"), ("+1+2", "'+1+2"), ("@SUM(A1)", "'@SUM(A1)"),
     ("-5", "-5"), ("+3.5", "+3.5"), ("-x", "'-x"), ("\tcmd", "'\tcmd"), ("plain", "plain")],
)  # fmt: skip
def test_spreadsheet_formulas_are_neutralised(value, expected):
    import pandas as pd

    assert spreadsheet_safe(pd.DataFrame({"a": [value]}))["a"][0] == expected


def test_study_config_values_are_not_rounded(tmp_path):
    path = comparative_study(tmp_path / "s")
    cfg = yaml.safe_load(path.read_text())
    for bad in (2.7, "two", True, [3]):
        path.write_text(yaml.safe_dump({**cfg, "items_per_participant": bad}))
        with pytest.raises(InputError, match="items_per_participant"):
            load_study(path)
    path.write_text(yaml.safe_dump({**cfg, "items_per_participant": 2.0}))
    assert load_study(path).items_per_participant == 2
