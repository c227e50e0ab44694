"""``edueval study`` under usage mistakes and bad files, through the console script."""

from __future__ import annotations

import yaml

from .conftest import assert_refused


def _study(tmp_path, **changes):
    folder = tmp_path / "s"
    folder.mkdir(exist_ok=True)
    (folder / "items.jsonl").write_text(
        '{"id": "i1", "context": "c", "replies": {"a": "x", "b": "y"}}\n'
        '{"id": "i2", "context": "c", "replies": {"a": "z", "b": "w"}}\n'
    )
    cfg = {"title": "T", "kind": "comparative", "items": "items.jsonl", "seed": 1,
           "questions": [{"id": "q", "text": "Which?"}], **changes}  # fmt: skip
    (folder / "study.yaml").write_text(yaml.safe_dump(cfg))
    return folder / "study.yaml"


def test_export_of_a_missing_database_creates_nothing(edueval, tmp_path):
    study = _study(tmp_path)
    out = tmp_path / "exp"
    run = edueval("study", "export", study, "--out", out)
    assert_refused(run, out=out, contains="no database")
    assert not (tmp_path / "s" / "study.db").exists()


def test_export_of_a_database_without_the_study(edueval, tmp_path):
    study = _study(tmp_path)
    (tmp_path / "other.db").write_bytes(b"")
    run = edueval("study", "export", study, "--db", f"sqlite:///{tmp_path / 'other.db'}",
                  "--out", tmp_path / "exp")  # fmt: skip
    assert_refused(run, out=tmp_path / "exp", contains="holds no study")


def test_invite_checks_out_before_creating_anyone(edueval, tmp_path):
    study = _study(tmp_path)
    (tmp_path / "adir").mkdir()
    run = edueval("study", "invite", study, "--n", "3", "--out", tmp_path / "adir")
    assert_refused(run, contains="--out")
    assert not (tmp_path / "s" / "study.db").exists(), "participants were created"


def test_non_integer_items_per_participant(edueval, tmp_path):
    run = edueval("study", "invite", _study(tmp_path, items_per_participant=2.7), "--n", "1")
    assert_refused(run, contains="items_per_participant")


def test_non_utf8_study_and_participants_files(edueval, tmp_path):
    study = _study(tmp_path)
    people = tmp_path / "people.txt"
    people.write_bytes(b"ann\n\xe9ric\n")
    assert_refused(edueval("study", "invite", study, "--participants", people), contains="UTF-8")
    study.write_bytes(study.read_bytes() + b"title2: \xff\n")
    assert_refused(edueval("study", "invite", study, "--n", "1"), contains="UTF-8")


def test_a_participant_id_with_a_nul_is_refused(edueval, tmp_path):
    people = tmp_path / "people.txt"
    people.write_bytes(b"ann\nbo\x00b\n")
    run = edueval("study", "invite", _study(tmp_path), "--participants", people)
    assert_refused(run, contains="printable")


def test_serve_refuses_a_weak_admin_token(edueval_process, tmp_path):
    edueval = edueval_process  # a refusal that failed would start the server
    study = _study(tmp_path)
    run = edueval("study", "serve", study, env={"EDUEVAL_STUDY_ADMIN_TOKEN": "a" * 40})
    assert_refused(run, contains="too easy to guess")


def test_serve_needs_both_tls_files(edueval_process, tmp_path):
    edueval = edueval_process  # a refusal that failed would start the server
    cert = tmp_path / "cert.pem"
    cert.write_text("x")
    run = edueval("study", "serve", _study(tmp_path), "--ssl-certfile", cert,
                  env={"EDUEVAL_STUDY_ADMIN_TOKEN": "Zq3_x9-LmP0aR7tYw2Kc8vBn"})  # fmt: skip
    assert_refused(run, contains="--ssl-keyfile")


def test_serve_refuses_a_garbage_or_special_tls_file_before_the_database(edueval_process, tmp_path):
    import os

    edueval = edueval_process  # a refusal that failed would start the server
    study = _study(tmp_path)
    cert, key, fifo = tmp_path / "cert.pem", tmp_path / "key.pem", tmp_path / "pipe.pem"
    cert.write_text("-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n")
    key.write_text("garbage\n")
    os.mkfifo(fifo)
    env = {"EDUEVAL_STUDY_ADMIN_TOKEN": "Zq3_x9-LmP0aR7tYw2Kc8vBn"}
    run = edueval("study", "serve", study, "--ssl-certfile", cert, "--ssl-keyfile", key, env=env)
    assert_refused(run, contains="not a PEM certificate and its private key")
    run = edueval("study", "serve", study, "--ssl-certfile", fifo, "--ssl-keyfile", key,
                  env=env, timeout=60)  # fmt: skip
    assert_refused(run, contains="FIFO")
    assert not (tmp_path / "s" / "study.db").exists()
