"""``edueval study``: run a study with real participants (serve, invite, export)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Annotated

import typer

from .common import OutOption, OverwriteOption, done, out_dir, say, typer_app

app = typer_app("The study web app: serve, invite, export.")

StudyArg = Annotated[Path, typer.Argument(help="study.yaml (see edueval.study.config).")]
DbOption = Annotated[
    str | None,
    typer.Option("--db", help="SQLAlchemy database URL (default $EDUEVAL_STUDY_DB, else a SQLite "
                 "file <study>.db beside study.yaml; PostgreSQL: postgresql+psycopg://...)."),
]  # fmt: skip


def _open(study_path: Path, db: str | None):
    from ..study import StudyDB, default_db_url, load_study

    study = load_study(study_path)
    return study, StudyDB(study, db or default_db_url(study_path))


@app.command()
def serve(
    study_path: StudyArg,
    db: DbOption = None,
    host: Annotated[str, typer.Option("--host")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port")] = 8000,
    admin_token: Annotated[
        str | None,
        typer.Option(
            "--admin-token",
            help="Researcher token (default $EDUEVAL_STUDY_ADMIN_TOKEN, "
            "else a new random one, printed).",
        ),
    ] = None,  # fmt: skip
    workers: Annotated[
        int, typer.Option("--workers", min=1, help="Server processes (e.g. the number of cores).")
    ] = 1,
) -> None:
    """Start the web app (participants open their invite links)."""
    import uvicorn

    from ..io import InputError
    from ..study import default_db_url, load_study
    from ..study.app import create_app

    study = load_study(study_path)
    url = db or default_db_url(study_path)
    token = admin_token or os.environ.get("EDUEVAL_STUDY_ADMIN_TOKEN")
    if token is None:
        token = secrets.token_urlsafe(24)
        say(f"admin token (use as 'Authorization: Bearer ...'): {token}")
    if len(token) < 16:
        raise InputError("the admin token must have at least 16 characters")
    app = create_app(study, url, token)  # also checks the database belongs to this study
    say(f"{study.kind} study '{study.title}' on http://{host}:{port}/ (database {url})")
    if workers == 1:
        uvicorn.run(app, host=host, port=port, log_level="warning", timeout_keep_alive=5)
        return
    os.environ.update(EDUEVAL_STUDY_FILE=str(Path(study_path).resolve()), EDUEVAL_STUDY_DB=url,
                      EDUEVAL_STUDY_ADMIN_TOKEN=token)  # fmt: skip
    uvicorn.run("edueval.study.app:app_from_env", factory=True, workers=workers, host=host,
                port=port, log_level="warning", timeout_keep_alive=5)  # fmt: skip


@app.command()
def invite(
    study_path: StudyArg,
    n: Annotated[int, typer.Option("--n", min=0, help="New participants p001, p002, ...")] = 0,
    participants: Annotated[
        Path | None, typer.Option("--participants", help="File with one participant id a line.")
    ] = None,
    base_url: Annotated[str, typer.Option("--base-url")] = "http://127.0.0.1:8000",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="CSV of links to write.")] = None,
    db: DbOption = None,
) -> None:
    """Create participants with their assignments and print their invite links (CSV)."""
    import pandas as pd

    from ..io import InputError
    from ..runs import atomic_write

    study, sdb = _open(study_path, db)
    try:
        labels: list[str] = []
        if participants is not None:
            if not participants.is_file():
                raise InputError("file not found", file=participants)
            labels = [x.strip() for x in participants.read_text().splitlines() if x.strip()]
        start = sdb.status()["participants"]
        labels += [f"p{start + i + 1:03d}" for i in range(n)]
        if not labels and study.kind == "mcq":
            labels = study.students()
        if not labels:
            raise InputError("nobody to invite: give --n or --participants")
        rows = sdb.invite(labels)
    finally:
        sdb.close()
    table = pd.DataFrame([{"participant": r["label"],
                           "url": f"{base_url.rstrip('/')}/p/{r['token']}"} for r in rows])  # fmt: skip
    text = table.to_csv(index=False, lineterminator="\n")
    if out is not None:
        atomic_write(out, text)
        say(f"{len(table)} invite links -> {out}")
    else:
        typer.echo(text, nl=False)


@app.command()
def export(
    study_path: StudyArg,
    db: DbOption = None,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
) -> None:
    """Write the answers as the CSV the analysis reads: comparisons.csv (pairwise fit),
    choices.csv (turing analyze) or phase1.csv (turing generate)."""
    from ..study.export import export_run

    path = out_dir(out, "study export", overwrite)
    study, sdb = _open(study_path, db)
    try:
        res = export_run(path, study, sdb)
    finally:
        sdb.close()
    say(f"{res['n_rows']} answers from {res['n_participants']} participants -> "
        f"{path / res['file']}")  # fmt: skip
    done(path)
