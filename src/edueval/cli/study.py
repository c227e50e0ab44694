"""``edueval study``: run a study with real participants (serve, invite, export)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Annotated, Any

import typer

from ..study.inputs import MAX_PARTICIPANTS
from .common import (
    JsonOption,
    OutOption,
    OverwriteOption,
    check_outputs,
    done,
    out_dir,
    out_file,
    say,
    typer_app,
    warn,
)

#: Most ``study serve --workers``: one process per core is the rule; each holds up to 30
#: database connections.
MAX_WORKERS = 256

app = typer_app("The study web app: serve, invite, export.")

StudyArg = Annotated[
    Path, typer.Argument(dir_okay=False, help="study.yaml (see edueval.study.config).")
]
DbOption = Annotated[
    str | None,
    typer.Option("--db", help="SQLAlchemy database URL (default $EDUEVAL_STUDY_DB, else a SQLite "
                 "file <study>.db beside study.yaml; PostgreSQL: postgresql+psycopg://...)."),
]  # fmt: skip


def _open(study_path: Path, db: str | None, *, create: bool = True):
    from ..study import StudyDB, default_db_url, load_study

    study = load_study(study_path)
    return study, StudyDB(study, db or default_db_url(study_path), create=create)


def items_file(study_path: Path) -> Path | None:
    """The items file that ``study.yaml`` names (None if it names none: reading the study will
    say what is wrong)."""
    import yaml

    if not Path(study_path).is_file():  # a FIFO would block here: the study's reader refuses it
        return None
    try:
        settings = yaml.safe_load(Path(study_path).read_text(encoding="utf-8"))
    except (OSError, ValueError, yaml.YAMLError, RecursionError):
        return None
    items = settings.get("items") if isinstance(settings, dict) else None
    if isinstance(items, str) and items and "\0" not in items:
        return Path(study_path).parent / items
    return None


def database_file(study_path: Path, db: str | None) -> Path | None:
    """The study's SQLite database file (None for a server database)."""
    from ..study import default_db_url

    return sqlite_file(db or default_db_url(study_path))


#: the files SQLite and the study app keep beside a database file (its write-ahead log and index,
#: a rollback journal, the lock file its writers take turns on): part of the database
COMPANIONS = ("-wal", "-shm", "-journal", "-writer")


def _with_companions(db: Path | None) -> list[Path | None]:
    return [db] if db is None else [db, *(Path(f"{db}{s}") for s in COMPANIONS)]


def study_files(study_path: Path, db: str | None) -> list[Path | None]:
    """What a study command reads besides its arguments: the items file that ``study.yaml``
    names and the study's SQLite database with its companion files (never to be written over)."""
    return [items_file(study_path), *_with_companions(database_file(study_path, db))]


def _check_database(study_path: Path, db: str | None) -> None:
    """The database a command writes (participants, answers) is none of its other inputs: not
    the study file, its items or a participants list, and not the companion file of another
    database (its write-ahead log, lock file ...)."""
    from ..io import InputError

    path = database_file(study_path, db)
    check_outputs([path], inputs=[items_file(study_path)])
    for suffix in COMPANIONS:
        if path is not None and path.name.endswith(suffix):
            owner = Path(str(path)[: -len(suffix)])
            if owner.is_file():
                raise InputError(f"{path} is a file SQLite or the study app keeps beside the "
                                 f"database {owner}, not a database; give the database itself")  # fmt: skip


def sqlite_file(url: str) -> Path | None:
    """The file behind a SQLite database URL (None for a server database or an in-memory one)."""
    if not url.startswith("sqlite"):
        return None
    try:
        from sqlalchemy.engine import make_url

        name = make_url(url).database
    except Exception:  # an unusable URL: opening the database will say so
        return None
    return Path(name) if name and name != ":memory:" and not name.startswith("file:") else None


def _admin_token(given: str | None, token_file: Path | None) -> str:
    """From --admin-token-file, $EDUEVAL_STUDY_ADMIN_TOKEN or --admin-token (warned: other users
    see a process's arguments in ``ps``), else a new random one, printed once.

    A source that is given but empty or unreadable is refused, never replaced by a random token:
    each host of a multi-host study would then make up its own."""
    from ..io import InputError
    from ..study.app import admin_token_problem

    env = os.environ.get("EDUEVAL_STUDY_ADMIN_TOKEN")
    if token_file is not None and given is not None:
        raise InputError("give --admin-token-file or --admin-token, not both")
    if token_file is not None:
        token = _token_from_file(token_file)
    elif given is not None:
        warn("--admin-token is visible to other users in 'ps'; prefer --admin-token-file or "
             "$EDUEVAL_STUDY_ADMIN_TOKEN")  # fmt: skip
        if not given.strip():
            raise InputError("--admin-token is empty")
        token = given
    elif env is not None:
        if not env.strip():
            raise InputError("$EDUEVAL_STUDY_ADMIN_TOKEN is set but empty: set it to the admin "
                             "token, or unset it for a new random one")  # fmt: skip
        token = env
    else:
        token = secrets.token_urlsafe(24)
        say(f"admin token (use as 'Authorization: Bearer ...'): {token}")
    problem = admin_token_problem(token)
    if problem:
        raise InputError(problem)
    return token


def _token_from_file(path: Path) -> str:
    """The admin token in ``path`` (surrounding white space, e.g. the final newline, dropped);
    a missing, unreadable, non-UTF-8 or empty file is one line."""
    from ..io import InputError, read_text

    try:
        token = read_text(path).strip()
    except OSError as exc:
        raise InputError(f"--admin-token-file: cannot read the file ({exc.strerror or exc})",
                         file=path) from None  # fmt: skip
    except InputError as exc:
        raise InputError(f"--admin-token-file: {exc.message}", file=path, line=exc.line) from None
    if "\n" in token or "\r" in token:
        raise InputError("--admin-token-file: the file holds more than one line; write only "
                         "the admin token in it", file=path)  # fmt: skip
    if not token:
        raise InputError("--admin-token-file: the file is empty; write the admin token in it, "
                         "e.g. python -c 'import secrets; print(secrets.token_urlsafe(24))'",
                         file=path)  # fmt: skip
    return token


@app.command()
def serve(
    study_path: StudyArg,
    db: DbOption = None,
    host: Annotated[str, typer.Option("--host")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", min=1, max=65535, help="TCP port, 1-65535.")
    ] = 8000,
    admin_token_file: Annotated[
        Path | None,
        typer.Option("--admin-token-file", help="File holding the researcher token."),
    ] = None,
    admin_token: Annotated[
        str | None,
        typer.Option(
            "--admin-token",
            help="Researcher token (visible in 'ps': prefer --admin-token-file or "
            "$EDUEVAL_STUDY_ADMIN_TOKEN; default a new random one, printed).",
        ),
    ] = None,  # fmt: skip
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            min=1,
            max=MAX_WORKERS,
            help=f"Server processes, 1-{MAX_WORKERS} (e.g. the number of cores).",
        ),
    ] = 1,  # fmt: skip
    ssl_certfile: Annotated[
        Path | None,
        typer.Option("--ssl-certfile", exists=True, dir_okay=False, help="TLS certificate (PEM)."),
    ] = None,
    ssl_keyfile: Annotated[
        Path | None,
        typer.Option("--ssl-keyfile", exists=True, dir_okay=False, help="TLS private key (PEM)."),
    ] = None,
) -> None:
    """Start the web app (participants open their invite links); Ctrl-C stops it."""
    from ..extras import require
    from ..io import InputError
    from ..study import default_db_url, load_study
    from ..study.app import create_app
    from ..study.db import masked_url

    uvicorn = require("uvicorn", "study", "the study web app (edueval study)")

    if (ssl_certfile is None) != (ssl_keyfile is None):
        raise InputError("--ssl-certfile and --ssl-keyfile go together")
    tls = ssl_certfile is not None
    if ssl_certfile is not None and ssl_keyfile is not None:
        _check_tls(ssl_certfile, ssl_keyfile)
    _check_database(study_path, db)
    study = load_study(study_path)
    url = db or default_db_url(study_path)
    token = _admin_token(admin_token, admin_token_file)
    app = create_app(study, url, token, tls=tls)  # also checks the database belongs to this study
    scheme = "https" if tls else "http"
    say(f"{study.kind} study '{study.title}' on {scheme}://{host}:{port}/ "
        f"(database {masked_url(url)})")  # fmt: skip
    options: dict[str, Any] = {"host": host, "port": port, "log_level": "warning",
               "timeout_keep_alive": 5, "ssl_certfile": ssl_certfile, "ssl_keyfile": ssl_keyfile}  # fmt: skip
    if workers == 1:
        uvicorn.run(app, **options)
        return
    os.environ.update(EDUEVAL_STUDY_FILE=str(Path(study_path).resolve()), EDUEVAL_STUDY_DB=url,
                      EDUEVAL_STUDY_ADMIN_TOKEN=token, EDUEVAL_STUDY_TLS="1" if tls else "0",
                      EDUEVAL_STUDY_MASTER_PID=str(os.getpid()))  # fmt: skip
    uvicorn.run("edueval.study.app:app_from_env", factory=True, workers=workers, **options)


def _check_tls(certfile: Path, keyfile: Path) -> None:
    """Load the certificate and key as the server will, before the database is touched or the
    server started: an unreadable, garbage or mismatched PEM is one line, not ``ssl.SSLError``."""
    import ssl

    from ..io import InputError, check_regular_file

    check_regular_file(certfile)  # a FIFO or device would block the TLS loader
    check_regular_file(keyfile)
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(certfile, keyfile)
    except ssl.SSLError as exc:
        reason = exc.reason or exc.strerror or str(exc)
        raise InputError(f"--ssl-certfile {certfile} with --ssl-keyfile {keyfile}: not a PEM "
                         f"certificate and its private key ({reason})") from None  # fmt: skip
    except OSError as exc:
        raise InputError(f"--ssl-certfile {certfile} / --ssl-keyfile {keyfile}: cannot be "
                         f"read ({exc.strerror or exc})") from None  # fmt: skip


@app.command()
def invite(
    study_path: StudyArg,
    n: Annotated[
        int | None,
        typer.Option("--n", min=1, max=MAX_PARTICIPANTS,
                     help=f"New participants p001, p002, ... (1-{MAX_PARTICIPANTS:,})."),
    ] = None,
    participants: Annotated[
        Path | None,
        typer.Option("--participants", dir_okay=False, help="File with one participant id a "
                     f"line, exactly as written (at most {MAX_PARTICIPANTS:,})."),
    ] = None,
    base_url: Annotated[str, typer.Option("--base-url")] = "http://127.0.0.1:8000",
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", dir_okay=False, help="CSV of links to write (readable by "
                     "you only: it holds every participant's token)."),
    ] = None,
    db: DbOption = None,
) -> None:  # fmt: skip
    """Create participants with their assignments and print their invite links (CSV)."""
    import pandas as pd

    from ..io import InputError
    from ..study.export import spreadsheet_safe, write_private
    from ..study.inputs import read_participants

    if out is not None:
        # before any participant is created: their links must not be lost
        out_file(out, inputs=study_files(study_path, db), own=b"participant,url\n")
    _check_database(study_path, db)
    labels: list[str] = []
    if participants is not None:
        labels = [label for label, _ in read_participants(participants)]
    study, sdb = _open(study_path, db)
    try:
        if not labels and not n and study.kind == "mcq":
            labels = study.students()
        if not labels and not n:
            raise InputError("nobody to invite: give --n or --participants")
        rows = sdb.invite(labels) + sdb.invite_numbered(n or 0)
    finally:
        sdb.close()
    table = pd.DataFrame([{"participant": r["label"],
                           "url": f"{base_url.rstrip('/')}/p/{r['token']}"} for r in rows])  # fmt: skip
    text = spreadsheet_safe(table).to_csv(index=False, lineterminator="\n")
    if out is not None:
        write_private(out, text)
        say(f"{len(table)} invite links -> {out} (readable by you only)")
    else:
        typer.echo(text, nl=False)


@app.command()
def export(
    study_path: StudyArg,
    db: DbOption = None,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    json_out: JsonOption = False,
) -> None:
    """Write the answers as the CSV the analysis reads: comparisons.csv (pairwise fit),
    choices.csv (turing analyze) or phase1.csv (turing generate)."""
    from ..study.export import export_run

    path = out_dir(out, "study export", overwrite, inputs=study_files(study_path, db))
    study, sdb = _open(study_path, db, create=False)
    try:
        res = export_run(path, study, sdb)
    finally:
        sdb.close()
    say(f"{res['n_rows']} answers from {res['n_participants']} participants -> "
        f"{path / res['file']}")  # fmt: skip
    done(path, json=json_out)
