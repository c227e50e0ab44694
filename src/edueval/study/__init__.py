"""The study web app: collect the human judgements P2 (comparative) and P5 (open, mcq) need.

* :mod:`.config` -- ``study.yaml`` and its items;
* :mod:`.db` -- the database (SQLAlchemy; SQLite by default, PostgreSQL by URL): participants,
  their assignments (made at invite time, spread evenly over items and pairs, order seeded),
  idempotent answers, export tables;
* :mod:`.app` -- the FastAPI app with server-rendered pages.
"""

from .config import Study, load_study
from .db import StudyDB, default_db_url

__all__ = ["Study", "StudyDB", "default_db_url", "load_study"]
