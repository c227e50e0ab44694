"""Small studies on disk and a participant driver for the study app tests."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import yaml
from fastapi.testclient import TestClient

from edueval.study import load_study
from edueval.study.app import create_app

ADMIN = "admin-token-0123456789"
AGENTS = ("teacher", "model_a", "model_b")


def comparative_study(
    folder: Path, n_items: int = 4, per: int = 3, pairing: str | dict | None = None
) -> Path:
    """``n_items`` items of three agents; ``pairing``: the ``pairing:`` setting, if any."""
    folder.mkdir(parents=True, exist_ok=True)
    items = [
        {"id": f"item{i}", "context": [{"speaker": "student", "text": f"Is {i} + {i} = {2 * i}?"}],
         "replies": {a: f"{a} says <b>{i}</b>" for a in AGENTS}}
        for i in range(n_items)
    ]  # fmt: skip
    (folder / "items.jsonl").write_text("".join(json.dumps(x) + "\n" for x in items))
    cfg = {
        "title": "Test study", "kind": "comparative", "items": "items.jsonl",
        "items_per_participant": per, "seed": 3, "consent": "Consent text.",
        "questions": [{"id": "teacher-like", "text": "Which is more like a teacher?"},
                      {"id": "helpful", "text": "Which helps more?"}],
        "practice": {"context": "practice context", "replies": {"x": "good", "y": "bad"}},
    }  # fmt: skip
    if pairing is not None:
        cfg["pairing"] = pairing
    (folder / "study.yaml").write_text(yaml.safe_dump(cfg))
    return folder / "study.yaml"


def mcq_study(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    head = "student,question,related_question,option_1,option_2,option_3,option_4,source_1,source_2,source_3,source_4\n"
    rows = []
    for s in ("s1", "s2"):
        for q in ("q1", "q2", "q3"):
            rows.append(
                f"{s},{q},What is 1/2 + 1/4 ({q})?,3/4,2/6,1/6,5/4,correct,ai,human,random\n"
            )
    (folder / "mcqs.csv").write_text(head + "".join(rows))
    cfg = {"title": "Phase 2", "kind": "mcq", "items": "mcqs.csv", "seed": 1, "consent": "ok"}
    (folder / "study.yaml").write_text(yaml.safe_dump(cfg))
    return folder / "study.yaml"


def csrf_of(html: str) -> str:
    m = re.search(r'name="csrf" value="([^"]+)"', html)
    assert m, html[:500]
    return m.group(1)


def action_of(html: str) -> str:
    m = re.search(r'<form method="post" action="([^"]+)"', html)
    assert m
    return m.group(1)


class Participant:
    """Drives one participant through the pages like a browser would (follows redirects)."""

    def __init__(self, client: TestClient, url: str) -> None:
        self.client = client
        self.path = url.split("://", 1)[-1].split("/", 1)[1]
        self.path = "/" + self.path
        self.token = self.path.rsplit("/", 1)[-1]

    def get(self, path: str | None = None):
        return self.client.get(path or self.path)

    def consent(self):
        r = self.get()
        assert r.status_code == 200 and "Consent text" in r.text or "ok" in r.text
        return self.client.post(
            f"{self.path}/consent", data={"csrf": csrf_of(r.text), "agree": "yes"}
        )

    def answer_current(self, r, values: dict[str, str], timing: bool = True):
        data = {"csrf": csrf_of(r.text), **values}
        if timing:
            data.update(first_click="1.5", last_click="2.25", submit="3.0")
        return self.client.post(action_of(r.text), data=data)


PG_ENV = "EDUEVAL_TEST_PG_URL"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path) -> str:
    """A clean, empty database: a SQLite file, or the PostgreSQL server named by
    ``$EDUEVAL_TEST_PG_URL`` (``.ci/run`` starts one and sets it), emptied first.  Without that
    variable the PostgreSQL runs are skipped -- except in CI (``$CI`` set), where they fail."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'study.db'}"
    return empty_pg_url()


def empty_pg_url() -> str:
    """``$EDUEVAL_TEST_PG_URL`` with the study tables dropped; skips without it (fails in CI)."""
    url = os.environ.get(PG_ENV)
    if not url:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but {PG_ENV} is not: .ci/run must start PostgreSQL")
        pytest.skip(f"no PostgreSQL server: set {PG_ENV}=postgresql+psycopg://user:pw@host/db")
    from sqlalchemy import create_engine

    from edueval.study.db import metadata

    engine = create_engine(url)
    metadata.drop_all(engine)
    engine.dispose()
    return url


@pytest.fixture
def comp(tmp_path, db_url):
    path = comparative_study(tmp_path / "comp")
    study = load_study(path)
    url = db_url
    app = create_app(study, url, ADMIN)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield {"path": path, "study": study, "url": url, "app": app, "client": client,
               "tmp": tmp_path}  # fmt: skip
    app.state.db.close()
