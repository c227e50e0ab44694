"""The study database (SQLAlchemy Core): SQLite by default, PostgreSQL by URL.

Reliability by construction:

* assignments are made when a participant is invited and stored, so a restart changes nothing;
* an answer is one row per (assignment, question) under a UNIQUE constraint, written with an
  upsert (``INSERT ... ON CONFLICT DO UPDATE``): a refresh or double submit rewrites the same row,
  never adds one (``n_submits`` counts them);
* every write is its own committed transaction before the browser is redirected;
* SQLite: the writers of one database file take turns through a lock file beside it
  (:class:`_WriteGate`: a thread lock, then ``flock``), so the processes of ``study serve
  --workers N`` queue for SQLite's single write lock instead of polling for it;
* a database belongs to one study (its fingerprint is stored); opening it with other items fails;
* several ``study serve`` hosts may share one PostgreSQL database: nothing lives in a process
  (CSRF tokens are stored per participant), and the steps that read before they write -- creating
  the tables at start-up, numbering invited participants -- hold one advisory lock, so hosts that
  start at once, or invites run at once, cannot collide.

Even assignment (comparative, open): the units (item x unordered pair of agents) are laid out in
rounds -- round r holds the r-th pair of every item, items in a seeded order -- and participant k
(0-based, in invite order) takes the ``n`` units starting at ``k * n`` cyclically.  So every unit is
shown equally often (+-1) and a participant sees ``n`` different items while ``n`` <= items.  The
order of a participant's units and the A/B side of each pair are shuffled with a generator seeded
by ``(seed, k)``.  ``mcq``: each participant (a student id) gets all of their own MCQs.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import os
import re
import secrets
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..extras import missing
from ..io import InputError, identifier_problem
from .config import Study

try:
    from sqlalchemy import (
        Column,
        DateTime,
        Float,
        ForeignKey,
        Index,
        Integer,
        MetaData,
        String,
        Table,
        Text,
        UniqueConstraint,
        create_engine,
        event,
        func,
        select,
        text,
    )
    from sqlalchemy.exc import IntegrityError, SQLAlchemyError
except ImportError as exc:  # a core install: the study extra is not there
    raise missing("study", "the study web app (edueval study)", exc.name) from exc

__all__ = ["StudyDB", "default_db_url", "assign_units", "unit_layout"]

metadata = MetaData()
#: columns of ``assignments`` on how its pair was chosen: the policy (``random``: at invite time,
#: :func:`assign_units`; adaptive: when the participant comes to the slot, :mod:`.pairing`), the
#: judge's panel, the pair's place in its item's (and panel's) stream and its round, and the
#: estimates and standard errors of the two agents (``first`` as shown first) that it was chosen
#: from, fitted on ``fitted_on`` judgements.  Exported beside each answer.
PAIRING_COLUMNS = (
    Column("pairing", String(32)),
    Column("panel", Integer),
    Column("pair_seq", Integer),
    Column("pairing_round", Integer),
    Column("fitted_on", Integer),
    Column("est_first", Float),
    Column("se_first", Float),
    Column("est_second", Float),
    Column("se_second", Float),
    Column("chosen_at", DateTime(timezone=True)),
)
meta = Table("study_meta", metadata, Column("key", String(64), primary_key=True),
             Column("value", Text, nullable=False))  # fmt: skip
participants = Table(
    "participants",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("label", String(200), unique=True, nullable=False),
    Column("token", String(64), unique=True, nullable=False),
    Column("csrf", String(64), nullable=False),
    Column("idx", Integer, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("consented_at", DateTime(timezone=True)),
    Column("practice_done_at", DateTime(timezone=True)),
)
assignments = Table(
    "assignments",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("participant_id", Integer, ForeignKey("participants.id"), nullable=False),
    Column("position", Integer, nullable=False),
    Column("item_id", String(200), nullable=False),
    Column("first", String(200)),
    Column("second", String(200)),
    # the pairing policy and, under an adaptive one, what the pair was chosen from (first/second
    # stay empty until the participant opens the slot): see .pairing
    *PAIRING_COLUMNS,
    UniqueConstraint("participant_id", "position", name="uq_assignment_position"),
)
#: one pair per place in an item's (and panel's) stream of adaptive pairs: two hosts choosing
#: at once cannot both take the same place (also the index of the pair look-ups)
Index("uq_assignment_pair", assignments.c.item_id, assignments.c.panel, assignments.c.pair_seq,
      unique=True)  # fmt: skip
responses = Table(
    "responses",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("assignment_id", Integer, ForeignKey("assignments.id"), nullable=False),
    Column("question", String(200), nullable=False),
    Column("value", Text, nullable=False),
    Column("first_click_s", Float),
    Column("last_click_s", Float),
    Column("submit_s", Float),
    Column("submitted_at", DateTime(timezone=True), nullable=False),
    Column("n_submits", Integer, nullable=False, default=1),
    UniqueConstraint("assignment_id", "question", name="uq_response"),
)


def _migrate(c: Any) -> None:
    """Bring a database made by an older edueval up to these tables, in the caller's transaction
    (under the study's lock): the pairing columns of ``assignments`` (a row without them was
    paired at random, and reads as ``random``) and their unique index."""
    from sqlalchemy import inspect

    have = {col["name"] for col in inspect(c).get_columns(assignments.name)}
    for col in PAIRING_COLUMNS:
        if col.name not in have:
            kind = col.type.compile(dialect=c.dialect)
            c.execute(text(f'ALTER TABLE {assignments.name} ADD COLUMN "{col.name}" {kind}'))
    c.execute(text("CREATE UNIQUE INDEX IF NOT EXISTS uq_assignment_pair ON "
                   f"{assignments.name} (item_id, panel, pair_seq)"))  # fmt: skip


def default_db_url(study_path: str | Path) -> str:
    """``$EDUEVAL_STUDY_DB``, else a SQLite file beside the study: ``<study>.db``."""
    env = os.environ.get("EDUEVAL_STUDY_DB")
    if env:
        return env
    p = Path(study_path).resolve()
    return f"sqlite:///{p.with_suffix('.db')}"


def masked_url(url: str) -> str:
    """The database URL with its password replaced by ``***``, for messages and logs."""
    try:
        from sqlalchemy.engine import make_url

        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # not a URL SQLAlchemy can parse: hide anything between ':' and '@'
        return re.sub(r"(//[^:/@]*:)[^@]*@", r"\1***@", url)


def _mask(exc: BaseException, url: str) -> str:
    """An error's text, on one line, with the URL's password (if any) masked."""
    text = " ".join(str(exc).split())
    try:
        from sqlalchemy.engine import make_url

        password = make_url(url).password
    except Exception:
        password = None
    return text.replace(str(password), "***") if password else text


def _private(url: str) -> None:
    """A SQLite database holds participants' tokens and answers: readable by its owner only."""
    if url.startswith("sqlite:///"):
        base = url.removeprefix("sqlite:///")
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.chmod(base + suffix, 0o600)


def _require_existing_file(url: str) -> None:
    """A SQLite database given for reading must exist (SQLite would create an empty one)."""
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        if not path.is_file():
            raise InputError(f"no database at {path}: nothing to export (give the database "
                             "that 'study serve' used, with db=)")  # fmt: skip


class _WriteGate:
    """One writer at a time on a SQLite database file, across this process's threads and every
    process on the host that opens the same file: a thread lock, then an exclusive ``flock`` on
    the lock file ``<database>-writer``, held until the transaction has committed.

    SQLite has one write lock per database; a writer that finds it taken polls for it (the busy
    handler sleeps 1, 2, 5, ... up to 100 ms between tries), so with two server processes most
    of a write's time was spent asleep while the lock was free (issue 37: a pair choice waited
    145-175 ms for it on average, an answer's upsert about 200 ms).  The kernel wakes a waiter
    of ``flock`` as soon as the lock is released.  Without ``fcntl`` (Windows), or for a database
    not in a file, the thread lock alone (one process)."""

    def __init__(self, path: str | None) -> None:
        self._path = path if path and path != ":memory:" else None
        self._thread = threading.Lock()
        self._fd: int | None = None
        self._pid = 0

    def _file(self) -> int | None:
        try:
            import fcntl  # noqa: F401  (POSIX only)
        except ImportError:
            return None
        if self._path is None:
            return None
        if self._fd is None or self._pid != os.getpid():  # a forked child opens its own
            self._fd = os.open(self._path + "-writer", os.O_RDWR | os.O_CREAT, 0o600)
            self._pid = os.getpid()
        return self._fd

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        with self._thread:
            fd = self._file()
            if fd is None:
                yield
                return
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd is not None and self._pid == os.getpid():
            with contextlib.suppress(OSError):
                os.close(self._fd)
        self._fd = None


#: key of the PostgreSQL advisory lock that serialises schema creation and invites ("edueval")
_LOCK_KEY = 0x6564756576616C


def _serialised(conn: Any) -> None:
    """On PostgreSQL, wait for the study's advisory lock, held until ``conn``'s transaction ends:
    a read-then-write step under it cannot interleave with the same step on another host.
    (SQLite needs nothing: its writers are serialised, and a stale read fails, never duplicates.)"""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC)


def unit_layout(study: Study) -> list[tuple[str, str | None, str | None]]:
    """All units in assignment order: round r holds the r-th pair of every item, items in the
    seeded order.  The same for every participant, so computed once per invite."""
    rng0 = np.random.default_rng(study.seed)
    order = [study.items[i]["id"] for i in rng0.permutation(len(study.items))]
    per_item: dict[str, list] = {}
    for u in study.units():
        per_item.setdefault(u[0], []).append(u)
    rounds = max(len(v) for v in per_item.values())
    return [per_item[i][r] for r in range(rounds) for i in order if r < len(per_item[i])]


def assign_units(
    study: Study, k: int, layout: list[tuple[str, str | None, str | None]] | None = None
) -> list[tuple[str, str | None, str | None]]:
    """The units of participant ``k`` (0-based), in shown order, A/B sides resolved
    (``layout``: :func:`unit_layout` of the study, if already computed)."""
    layout = unit_layout(study) if layout is None else layout
    n = min(study.items_per_participant, len(layout))
    chosen = [layout[(k * n + j) % len(layout)] for j in range(n)]
    rng = np.random.default_rng([study.seed, k])
    chosen = [chosen[i] for i in rng.permutation(n)]
    flips = rng.random(n) < 0.5
    return [(i, b, a) if f and a is not None else (i, a, b)
            for (i, a, b), f in zip(chosen, flips, strict=True)]  # fmt: skip


class StudyDB:
    """One study's database.  ``url``: any SQLAlchemy URL (``sqlite:///file.db``,
    ``postgresql+psycopg://user@host/db``)."""

    def __init__(self, study: Study, url: str, *, create: bool = True) -> None:
        self.study = study
        self.url = url
        self.shown_url = masked_url(url)
        if not create:
            _require_existing_file(url)
        # a server database: connections checked before use (one may have gone stale), and a
        # pool of 20 + 10: SQLAlchemy's 5 + 10 made each busy host open and close a connection
        # (a password handshake each) for most requests under load, as overflow connections are
        # closed on return; 30 per process keeps 3 hosts within PostgreSQL's 100 connections
        kw: dict[str, Any] = {"future": True, "pool_pre_ping": True, "pool_size": 20,
                              "max_overflow": 10}  # fmt: skip
        if url.startswith("sqlite"):
            # a local file: no connection to go stale (no ping); a pool as large as the app's
            # thread pool (anyio's default: 40 threads), so connections are reused, not reopened
            # (each new one runs the PRAGMAs below) under load
            kw = {"future": True, "pool_size": 40, "max_overflow": 10,
                  "connect_args": {"check_same_thread": False, "timeout": 30}}  # fmt: skip
        try:
            # hide_parameters: a failing query must not put a participant's token in an error
            self.engine = create_engine(url, hide_parameters=True, **kw)
        except (SQLAlchemyError, ImportError, ValueError) as exc:
            raise InputError(f"cannot use database {self.shown_url!r}: {_mask(exc, url)}") from None
        self._gate: _WriteGate | None = None
        if url.startswith("sqlite"):
            from sqlalchemy.engine import make_url

            self._gate = _WriteGate(make_url(url).database)

            @event.listens_for(self.engine, "connect")
            def _pragmas(dbapi_conn, _record):  # WAL: readers do not block the writer
                cur = dbapi_conn.cursor()
                cur.execute("PRAGMA journal_mode=WAL")
                cur.execute("PRAGMA synchronous=NORMAL")
                cur.execute("PRAGMA foreign_keys=ON")
                cur.close()

        try:
            if create:
                self._create_tables()
                _private(url)
                self._bind_study()
            else:
                self._require_study()
        except SQLAlchemyError as exc:
            raise InputError(
                f"cannot open database {self.shown_url!r}: {_mask(exc, url)[:200]}"
            ) from None

    def _require_study(self) -> None:
        """For reading only (``study export``): the database must already hold this study."""
        from sqlalchemy import inspect

        if not inspect(self.engine).has_table(meta.name):
            raise InputError(f"database {self.shown_url} holds no study: nothing to export (give "
                             "the database that 'study serve' used, with db=)",
                             file=self.study.path)  # fmt: skip
        with self.engine.connect() as c:
            row = c.execute(select(meta.c.value).where(meta.c.key == "fingerprint")).first()
        if row is None:
            raise InputError(f"database {self.shown_url} holds no study: nothing to export",
                             file=self.study.path)  # fmt: skip
        if row[0] != self.study.fingerprint:
            raise InputError(f"database {self.shown_url} belongs to another study (its items "
                             "or questions differ from this study.yaml)", file=self.study.path)  # fmt: skip

    def _create_tables(self) -> None:
        """``CREATE TABLE`` for the missing tables, safe when several hosts start at once on an
        empty database: on PostgreSQL under the advisory lock (its DDL is transactional); on
        SQLite a second pass sees the tables another process has just made."""
        for attempt in range(2):
            try:
                with self.begin_write() as c:
                    _serialised(c)
                    metadata.create_all(c)
                    _migrate(c)
                return
            except SQLAlchemyError:
                if attempt == 1:
                    raise

    def _bind_study(self) -> None:
        for _ in range(2):
            with self.engine.connect() as c:
                row = c.execute(select(meta.c.value).where(meta.c.key == "fingerprint")).first()
            if row is None:
                try:
                    with self.begin_write() as c:
                        c.execute(
                            meta.insert().values(key="fingerprint", value=self.study.fingerprint)
                        )
                    return
                except IntegrityError:  # another process bound it at the same moment: check it
                    continue
            if row[0] != self.study.fingerprint:
                raise InputError(
                    f"database {self.shown_url} belongs to another study (its items or questions "
                    "differ from this study.yaml); use a new database",
                    file=self.study.path,
                )
            return

    def close(self) -> None:
        self.engine.dispose()
        if self._gate is not None:
            self._gate.close()

    @contextlib.contextmanager
    def begin_write(self) -> Iterator[Any]:
        """A write transaction (``engine.begin()``, committed on leaving); on SQLite it waits its
        turn among the database's writers first (:class:`_WriteGate`).  Every write goes through
        it: a writer that bypassed the gate would fall back on SQLite's busy polling."""
        gate = self._gate() if self._gate is not None else contextlib.nullcontext()
        with gate, self.engine.begin() as c:
            yield c

    # -- participants ---------------------------------------------------------------------------
    #: participants created per transaction: one commit each made ``invite --n 1000`` take 24 s;
    #: a batch holds the write lock (SQLite) or the study's advisory lock (PostgreSQL) for well
    #: under a second, so a running ``study serve`` is not held up.
    BATCH = 500

    def invite(self, labels: list[str]) -> list[dict[str, str]]:
        """Create participants and their assignments; returns ``[{label, token}]``.  A label that
        already exists keeps its token and assignments (inviting twice is harmless).  Every
        label is checked before anyone is created."""
        labels = [self._valid_label(label) for label in labels]
        tokens: dict[str, str] = {}
        layout = self._layout()
        for start in range(0, len(labels), self.BATCH):
            batch = list(dict.fromkeys(labels[start : start + self.BATCH]))
            with self.begin_write() as c:
                _serialised(c)  # the count below numbers participants: one invite at a time
                rows = c.execute(select(participants.c.label, participants.c.token)
                                 .where(participants.c.label.in_(batch))).all()  # fmt: skip
                tokens.update({label: token for label, token in rows})
                new = [label for label in batch if label not in tokens]
                k = c.execute(select(func.count()).select_from(participants)).scalar_one()
                tokens.update(self._create(c, new, k, layout))
        return [{"label": label, "token": tokens[label]} for label in labels]

    def invite_numbered(self, n: int, prefix: str = "p") -> list[dict[str, str]]:
        """``n`` new participants labelled with the lowest free numbers: ``p001``, ``p002``, ...

        The next free numbers are read and taken in one step under the study's lock, so two
        invites run at once (from two hosts, say) never hand out the same participant."""
        out = []
        layout = self._layout()
        for start in range(0, n, self.BATCH):
            with self.begin_write() as c:
                _serialised(c)
                taken = set(c.execute(select(participants.c.label)).scalars())
                k, j, new = len(taken), 1, []
                for _ in range(min(self.BATCH, n - start)):
                    while f"{prefix}{j:03d}" in taken:
                        j += 1
                    new.append(self._valid_label(f"{prefix}{j:03d}"))
                    taken.add(new[-1])
                tokens = self._create(c, new, k, layout)
                out += [{"label": label, "token": tokens[label]} for label in new]
        return out

    def _layout(self) -> list[tuple[str, str | None, str | None]] | None:
        return None if self.study.kind == "mcq" else unit_layout(self.study)

    def _valid_label(self, label: Any) -> str:
        """A participant label exactly as given: 1-200 printable characters without
        surrounding spaces (``" ann"`` is not ``"ann"``); for ``mcq`` a student of the items."""
        if not isinstance(label, str):
            raise InputError(f"participant label must be text, got {label!r}")
        problem = identifier_problem(label)
        if not label or len(label) > 200 or not label.isprintable() or problem:
            raise InputError("participant label must be 1-200 printable characters without "
                             f"surrounding spaces, got {label!r}")  # fmt: skip
        if self.study.kind == "mcq" and label not in self._students:
            raise InputError(f"no MCQ for student {label!r} in the study's items")
        return label

    @functools.cached_property
    def _students(self) -> set[str]:
        return set(self._mcqs_of)

    @functools.cached_property
    def _mcqs_of(self) -> dict[str, list[str]]:
        """``mcq``: each student's question ids, in the items' order."""
        out: dict[str, list[str]] = {}
        for item in self.study.items if self.study.kind == "mcq" else []:
            out.setdefault(item["student"], []).append(item["id"])
        return out

    def _create(self, c: Any, labels: list[str], k: int, layout: list | None) -> dict[str, str]:
        """Insert participants ``labels`` (new, distinct) as the ``k``-th, ``k+1``-th, ...
        (0-based, in invite order) with their assignments, in the caller's transaction, in
        three statements; returns ``{label: token}``."""
        if not labels:
            return {}
        now = _now()
        people: list[dict[str, Any]] = [
            {"label": label, "token": secrets.token_urlsafe(24), "idx": k + n,
             "csrf": secrets.token_urlsafe(24), "created_at": now}
            for n, label in enumerate(labels)
        ]  # fmt: skip
        c.execute(participants.insert(), people)
        pid = dict(c.execute(select(participants.c.label, participants.c.id)
                             .where(participants.c.label.in_(labels))).all())  # fmt: skip
        rows = []
        for person in people:
            label, idx = person["label"], person["idx"]
            units: list[tuple[str, str | None, str | None]]
            if self.study.kind == "mcq":
                mine = self._mcqs_of[label]
                rng = np.random.default_rng([self.study.seed, idx])
                units = [(mine[i], None, None) for i in rng.permutation(len(mine))]
            else:
                units = assign_units(self.study, idx, layout)
            policy, panel = self.study.pairing.policy, None
            if self.study.pairing.adaptive:  # the item of each slot now, its pair when opened
                from ..pairwise.pairing import PANELS

                units, panel = [(i, None, None) for i, _, _ in units], idx % PANELS[policy]
            rows += [{"participant_id": pid[label], "position": pos, "item_id": i, "first": a,
                      "second": b, "pairing": policy if self.study.kind == "comparative" else None,
                      "panel": panel}
                     for pos, (i, a, b) in enumerate(units, start=1)]  # fmt: skip
        if rows:
            c.execute(assignments.insert(), rows)
        return {p["label"]: p["token"] for p in people}

    def participant(self, token: str) -> dict[str, Any] | None:
        with self.engine.connect() as c:
            row = (
                c.execute(select(participants).where(participants.c.token == token))
                .mappings()
                .first()
            )
            return dict(row) if row else None

    def mark(self, pid: int, column: str) -> None:
        col = participants.c[column]
        with self.begin_write() as c:
            c.execute(participants.update().where(participants.c.id == pid, col.is_(None))
                      .values({column: _now()}))  # fmt: skip

    # -- assignments and answers ----------------------------------------------------------------
    def assignments_of(self, pid: int) -> list[dict[str, Any]]:
        """A participant's assignments in order, each with ``answered`` (all questions stored)."""
        n_q = max(1, len(self.study.questions)) if self.study.kind == "comparative" else 1
        # a correlated count per assignment: an index search each, never a scan of all answers
        n_answers = (
            select(func.count()).select_from(responses)
            .where(responses.c.assignment_id == assignments.c.id).scalar_subquery()
        )  # fmt: skip
        with self.engine.connect() as c:
            rows = c.execute(
                select(assignments, n_answers.label("n"))
                .where(assignments.c.participant_id == pid).order_by(assignments.c.position)
            ).mappings().all()  # fmt: skip
        return [dict(r, answered=r["n"] >= n_q) for r in rows]

    def assignment(self, pid: int, aid: int) -> dict[str, Any] | None:
        """The assignment ``aid`` only if it belongs to participant ``pid``."""
        with self.engine.connect() as c:
            row = c.execute(select(assignments).where(
                assignments.c.id == aid, assignments.c.participant_id == pid)).mappings().first()  # fmt: skip
            if row is None:
                return None
            answers = c.execute(select(responses.c.question, responses.c.value)
                                .where(responses.c.assignment_id == aid)).all()  # fmt: skip
        return dict(row, answers={q: v for q, v in answers})

    def save(self, aid: int, answers: dict[str, str], timing: dict[str, float | None]) -> None:
        """Upsert the answers of one assignment in one transaction (idempotent)."""
        with self.begin_write() as c:
            self.save_in(c, aid, answers, timing)

    def save_in(self, c: Any, aid: int, answers: dict[str, str],
                timing: dict[str, float | None]) -> None:  # fmt: skip
        """:meth:`save` in the caller's write transaction ``c`` (:meth:`begin_write`)."""
        now = _now()
        times = {k: timing.get(k) for k in ("first_click_s", "last_click_s", "submit_s")}
        rows = [{"assignment_id": aid, "question": q, "value": v, "submitted_at": now,
                 "n_submits": 1, **times} for q, v in answers.items()]  # fmt: skip
        c.execute(self._upsert, rows)

    @functools.cached_property
    def _upsert(self) -> Any:
        """``INSERT ... ON CONFLICT DO UPDATE`` of answers, one row per parameter set: built
        once, so compiled once (a statement with the rows in its ``VALUES`` was compiled again
        for every answer, about 1 ms, inside the write lock)."""
        from sqlalchemy.dialects import postgresql, sqlite

        stmt: postgresql.Insert | sqlite.Insert
        if self.engine.dialect.name == "postgresql":
            stmt = postgresql.insert(responses)
        else:
            stmt = sqlite.insert(responses)
        return stmt.on_conflict_do_update(
            index_elements=["assignment_id", "question"],
            set_={"value": stmt.excluded.value, "first_click_s": stmt.excluded.first_click_s,
                  "last_click_s": stmt.excluded.last_click_s, "submit_s": stmt.excluded.submit_s,
                  "submitted_at": stmt.excluded.submitted_at,
                  "n_submits": responses.c.n_submits + 1},
        )  # fmt: skip

    # -- researcher -----------------------------------------------------------------------------
    def status(self) -> dict[str, int]:
        with self.engine.connect() as c:

            def count(t, *where) -> int:
                return c.execute(select(func.count()).select_from(t).where(*where)).scalar_one()

            return {
                "participants": count(participants),
                "consented": count(participants, participants.c.consented_at.is_not(None)),
                "assignments": count(assignments),
                "responses": count(responses),
            }

    def _pairing_columns(self) -> list[Any]:
        """The pairing columns to export; empty ones (NULL) for a database of an older edueval
        that no ``study serve`` has opened since (``study export`` reads, never alters)."""
        from sqlalchemy import inspect, null

        have = {col["name"] for col in inspect(self.engine).get_columns(assignments.name)}
        return [assignments.c[c.name] if c.name in have else null().label(c.name)
                for c in PAIRING_COLUMNS if c.name != "chosen_at"]  # fmt: skip

    def export(self) -> pd.DataFrame:
        """The answers as the table the analysis reads (see :func:`export_table`)."""
        pairing = self._pairing_columns()
        with self.engine.connect() as c:
            rows = c.execute(
                select(participants.c.label, participants.c.idx, assignments.c.position,
                       assignments.c.item_id, assignments.c.first, assignments.c.second,
                       *pairing,
                       responses.c.question, responses.c.value, responses.c.first_click_s,
                       responses.c.last_click_s, responses.c.submit_s, responses.c.submitted_at,
                       responses.c.n_submits)
                .join(assignments, assignments.c.participant_id == participants.c.id)
                .join(responses, responses.c.assignment_id == assignments.c.id)
                .order_by(participants.c.idx, assignments.c.position, responses.c.question)
            ).mappings().all()  # fmt: skip
        return export_table(self.study, pd.DataFrame([dict(r) for r in rows]))


#: the pairing columns of a comparative export, after the timing columns (see PAIRING_COLUMNS)
EXPORT_PAIRING = ("pairing", "panel", "pairing_round", "pair_seq", "fitted_on", "est_first",
                  "se_first", "est_second", "se_second")  # fmt: skip


def export_table(study: Study, raw: pd.DataFrame) -> pd.DataFrame:
    """``comparative`` -> ``item, attribute, rater, first, second, outcome`` (``pairwise fit``)
    and how each pair was chosen (:data:`EXPORT_PAIRING`: the policy, the judge's panel, the
    pair's round and place, and the two agents' estimates and SEs it was chosen from);
    ``open`` -> ``student, question, answer, correct_answer`` (P5 Phase 1);
    ``mcq`` -> ``student, question, chosen, position`` (``turing analyze``); all with timing
    columns ``first_click_s, last_click_s, submit_s`` (seconds after the page loaded)."""
    timing = ["first_click_s", "last_click_s", "submit_s"]
    if raw.empty:
        cols = {"comparative": ["item", "attribute", "rater", "first", "second", "outcome"],
                "open": ["student", "question", "answer", "correct_answer"],
                "mcq": ["student", "question", "chosen", "position"]}[study.kind]  # fmt: skip
        extra = list(EXPORT_PAIRING) if study.kind == "comparative" else []
        return pd.DataFrame(columns=[*cols, *timing, *extra])
    if study.kind == "comparative":
        qorder = {q["id"]: n for n, q in enumerate(study.questions)}
        raw = raw.assign(_q=raw["question"].map(qorder)).sort_values(["idx", "position", "_q"])
        out = pd.DataFrame({"item": raw["item_id"], "attribute": raw["question"],
                            "rater": raw["label"], "first": raw["first"],
                            "second": raw["second"], "outcome": raw["value"]})  # fmt: skip
    elif study.kind == "open":
        correct = {i["id"]: i["correct_answer"] for i in study.items}
        out = pd.DataFrame({"student": raw["label"], "question": raw["item_id"],
                            "answer": raw["value"],
                            "correct_answer": raw["item_id"].map(correct)})  # fmt: skip
    else:
        chosen = []
        for r in raw.itertuples():
            opts = {o["position"]: o["source"] for o in study.item(r.item_id, r.label)["options"]}
            chosen.append(opts[int(r.value)])
        out = pd.DataFrame({"student": raw["label"], "question": raw["item_id"],
                            "chosen": chosen, "position": raw["value"].astype(int)})  # fmt: skip
    for t in timing:
        out[t] = raw[t].to_numpy()
    if study.kind == "comparative":  # how each pair was chosen (older databases: at random)
        out["pairing"] = raw["pairing"].fillna("random").to_numpy()
        for col in EXPORT_PAIRING[1:]:
            out[col] = raw[col].to_numpy()
    return out.reset_index(drop=True)
