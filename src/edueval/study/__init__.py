"""The study web app: collect the human judgements P2 (comparative) and P5 (open, mcq) need.

* :mod:`.config` -- ``study.yaml`` and its items;
* :mod:`.inputs` -- the strict readers behind it (ids as written, no duplicates) and the
  participants list;
* :mod:`.db` -- the database (SQLAlchemy; SQLite by default, PostgreSQL by URL): participants,
  their assignments (made at invite time, spread evenly over items and pairs, order seeded),
  idempotent answers, export tables;
* :mod:`.app` -- the FastAPI app with server-rendered pages.

The names below are imported on first use, so that the command line can read this package's
limits (:data:`.inputs.MAX_PARTICIPANTS`) without loading SQLAlchemy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import Study, load_study
    from .db import StudyDB, default_db_url

__all__ = ["Study", "StudyDB", "default_db_url", "load_study"]

_WHERE = {"Study": "config", "load_study": "config", "StudyDB": "db", "default_db_url": "db"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
