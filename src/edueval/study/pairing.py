"""Adaptive pairing in the study app: the pair of a slot, chosen just before the participant
comes to it.

Under ``pairing: adaptive`` (or ``adaptive-shared``) in ``study.yaml`` a participant's slots get
their items when they are invited (laid out as under random pairing, so items stay evenly
spread), but not their pairs.  A slot's pair is chosen by :meth:`AdaptivePairer.choose` in the
transaction that stores the participant's answer to the slot before it (the app's
``save_then_next``; one write instead of two), or when the participant opens the slot if it has
none yet (the first slot; a choice that failed), with the policy of ``pairwise simulate``
(:mod:`edueval.pairwise.pairing`):

* per item and panel (``adaptive``: participants of even and odd invite number pair from their
  own judgements, two independent streams; ``adaptive-shared``: one), pairs are made in rounds
  that compare every agent once -- exposure balanced -- each new pair the next one of the
  current round (:func:`~edueval.pairwise.pairing.next_in_stream`); the round's order is drawn
  from ``(seed, item, panel, round)``, so the same history gives the same pairs;
* the first ``random_rounds`` rounds are random; then each anchor takes the free partner with
  the closest estimate (most information), preferring one not met before, and never a pair the
  participant has judged already while another is possible (if the round's free agents hold
  only such pairs, the round is closed early and a new one begun);
* the estimates are a penalised ML fit (:func:`~edueval.pairwise.pairing.fit_estimates`) of the
  answers to the pairing question stored for that item and panel, refreshed every
  ``refit_every`` judgements: the fit for ``m`` judgements uses the first ``m`` stored (by
  answer id), so every host computes the same estimates; each host caches its fits and refits
  one item at a time (milliseconds for a few hundred judgements).

Several hosts on one PostgreSQL: the choice (read the stream, pick, write) runs under an advisory
lock per (item, panel), and the place of a pair in its stream is unique in the database
(``uq_assignment_pair``), so two hosts never give one place twice; a slot opened on two hosts at
once gets one pair (the second host finds it chosen and shows it).  On SQLite the transaction
waits its turn among the database's writers (:meth:`~.db.StudyDB.begin_write`: the processes of
``study serve --workers N`` queue on a lock file rather than poll SQLite's write lock) and then
takes the database's write lock first.  Each chosen slot records the policy, the panel, the
round, the place, and the two agents' estimates and standard errors with the number of
judgements they were fitted on; ``study export`` writes them beside every answer.
"""

from __future__ import annotations

import datetime as _dt
import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from sqlalchemy import (  # the study extra: db.py, imported above, checks it
    bindparam,
    func,
    select,
    text,
)
from sqlalchemy.exc import DBAPIError

from .config import Study
from .db import StudyDB, assignments, responses

__all__ = ["COUNT_TTL_S", "AdaptivePairer"]

#: seconds a host reuses a stream's count of stored judgements before counting again
COUNT_TTL_S = 1.0

#: first key of the PostgreSQL advisory locks of the pairing streams (two 32-bit keys: a key
#: space apart from the study's one 64-bit lock); the second is the stream's number
_LOCK_CLASS = 0x65647570
#: the columns a choice writes
_CHOSEN = ("first", "second", "pair_seq", "pairing_round", "fitted_on", "est_first", "se_first",
           "est_second", "se_second", "chosen_at")  # fmt: skip
#: tries of a choice that lost a race (a unique place taken, a stale SQLite snapshot)
_TRIES = 20


class _Gap(Exception):
    """A host's cached stream no longer matches the database: read it again."""


@dataclass
class _Fit:
    """Estimates of one stream's agents from its first ``m`` judgements."""

    m: int
    est: np.ndarray
    se: np.ndarray


@dataclass
class _Stream:
    """What a host knows of one stream's pairs (places ``0 .. len(pairs) - 1``)."""

    pairs: list[tuple[int, int]]
    rounds: list[int]
    mine: dict[int, list[tuple[int, int]]]  # each participant's pairs
    met: np.ndarray


class AdaptivePairer:
    """Chooses the pairs of one study's adaptive slots (see the module docstring)."""

    def __init__(self, study: Study, db: StudyDB, policy: str | None = None) -> None:
        """``db``: the study's database (its writes take turns through
        :meth:`~.db.StudyDB.begin_write`); ``policy``: pair under this policy with the study's
        other pairing settings (slots invited under an adaptive policy, opened after
        ``study.yaml`` changed it)."""
        from ..pairwise.pairing import PANELS

        self.study = study
        self.db = db
        self.engine = db.engine
        self.policy = study.pairing if policy is None else replace(study.pairing, policy=policy)
        self.panels = PANELS[self.policy.policy]
        self.question = self.policy.question or study.questions[0]["id"]
        self.agents = {i["id"]: sorted(i["replies"]) for i in study.items}
        self.item_no = {i["id"]: n for n, i in enumerate(study.items)}
        self._fits: dict[tuple[str, int], _Fit] = {}
        self._counts: dict[tuple[str, int], tuple[int, float]] = {}
        self._streams: dict[tuple[str, int], _Stream] = {}
        self._locks: dict[tuple, threading.Lock] = {}
        self._guard = threading.Lock()

    def _lock(self, key: tuple) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())

    # -- estimates ----------------------------------------------------------------------------
    @functools.cached_property
    def _sql(self) -> dict[str, Any]:
        """The statements of a choice, built once (building one costs more than running it)."""
        t, r = assignments.c, responses.c
        judged = (
            select(t.first, t.second, r.value)
            .join(responses, r.assignment_id == t.id)
            .where(t.item_id == bindparam("item"), t.panel == bindparam("panel"),
                   t.pair_seq.is_not(None), r.question == self.question)
        )  # fmt: skip
        values: dict[str, Any] = {c: bindparam(f"v_{c}") for c in _CHOSEN}
        return {
            "count": select(func.count()).select_from(judged.subquery()),
            "judged": judged.order_by(r.id).limit(bindparam("m")),
            "stream": select(t.pair_seq, t.first, t.second, t.participant_id, t.pairing_round)
            .where(t.item_id == bindparam("item"), t.panel == bindparam("panel"),
                   t.pair_seq >= bindparam("seq"))
            .order_by(t.pair_seq),
            "write_lock": assignments.update().where(t.id == bindparam("aid")).values(panel=t.panel),
            "advisory": text("SELECT pg_advisory_xact_lock(:a, :b)"),
            "store": assignments.update()
            .where(t.id == bindparam("aid"), t.first.is_(None)).values(values),
            "row": select(assignments).where(t.id == bindparam("aid")),
        }  # fmt: skip

    def answered(self, item: str, panel: int) -> None:
        """This host stored a first answer to a slot of the stream: its count goes up by one
        without counting again (other hosts' answers are counted every :data:`COUNT_TTL_S`)."""
        with self._guard:
            seen = self._counts.get((item, panel))
            if seen is not None:
                self._counts[(item, panel)] = (seen[0] + 1, seen[1])

    def _judged(self, item: str, panel: int) -> int:
        """How many judgements the stream has stored: this host's own answers as it stores them
        (:meth:`answered`), counted in the database at most every :data:`COUNT_TTL_S` seconds per
        stream (the count was a third of a choice's cost), so another host's answers reach the
        estimates at most that much later; every choice records the number of judgements its
        estimates were fitted on."""
        now = time.monotonic()
        seen = self._counts.get((item, panel))
        if seen is not None and now - seen[1] < COUNT_TTL_S:
            return seen[0]
        with self.engine.connect() as c:
            n = int(c.execute(self._sql["count"], {"item": item, "panel": panel}).scalar_one())
        self._counts[(item, panel)] = (n, now)
        return n

    def estimates(self, item: str, panel: int) -> _Fit:
        """The stream's estimates from its first ``m`` judgements, ``m`` the count stored
        rounded down to a multiple of ``refit_every`` (cached per host)."""
        from ..pairwise.pairing import fit_estimates

        key = (item, panel)
        k = len(self.agents[item])
        n = self._judged(item, panel)
        m = n // self.policy.refit_every * self.policy.refit_every
        fit = self._fits.get(key)
        if fit is not None and fit.m == m:
            return fit
        with self._lock(key):  # one refit of a stream at a time on this host
            fit = self._fits.get(key)
            if fit is not None and fit.m == m:
                return fit
            if m == 0:
                fit = _Fit(0, np.zeros(k), np.full(k, np.nan))
            else:
                with self.engine.connect() as c:
                    rows = c.execute(self._sql["judged"], {"item": item, "panel": panel,
                                                           "m": m}).all()  # fmt: skip
                index = {a: n for n, a in enumerate(self.agents[item])}
                first = np.array([index[r[0]] for r in rows])
                second = np.array([index[r[1]] for r in rows])
                won = np.array([{"first": 1.0, "second": 0.0}.get(r[2], 0.5) for r in rows])
                est, se = fit_estimates(first, second, won, k, self.policy.ridge)
                fit = _Fit(len(rows), est, se)  # fewer than m only if the count ran ahead
            self._fits[key] = fit
            return fit

    # -- the choice -----------------------------------------------------------------------------
    def choose(
        self, a: dict[str, Any], before: Callable[[Any], None] | None = None
    ) -> dict[str, Any]:
        """Choose the pair of slot ``a`` (an ``assignments`` row without one) and store it;
        returns the row as stored (the pair another host chose, if it was quicker).

        ``before(connection)``: a write to make first in the same transaction (the app stores
        the participant's previous answer with it, one write transaction instead of two); it
        is made again if the choice is tried again, and undone if every try fails."""
        last: Exception | None = None
        for _ in range(_TRIES):
            fit = self.estimates(a["item_id"], a["panel"])
            key = (a["item_id"], a["panel"])
            # this host's threads take turns on a stream (its cache is theirs), hosts take turns
            # through the database's lock
            with self._lock(("choose", *key)):
                try:
                    return self._choose_once(a, fit, before)
                except (DBAPIError, _Gap) as exc:  # a place taken at once, a stale snapshot
                    self._streams.pop(key, None)
                    last = exc
        raise RuntimeError(f"no pair could be chosen for slot {a['id']}") from last

    def _stream(self, c: Any, item: str, panel: int) -> _Stream:
        """The stream's pairs, read from the database past what this host has seen (under the
        stream's lock, so places are complete)."""
        key = (item, panel)
        k = len(self.agents[item])
        stream = self._streams.setdefault(key, _Stream([], [], {}, np.zeros((k, k))))
        index = {x: n for n, x in enumerate(self.agents[item])}
        rows = c.execute(self._sql["stream"], {"item": item, "panel": panel,
                                               "seq": len(stream.pairs)}).all()  # fmt: skip
        for seq, first, second, who, rnd in rows:
            if seq != len(stream.pairs):  # not contiguous: read it all again
                raise _Gap(f"pairs of item {item!r} panel {panel} skip place {seq}")
            i, j = index[first], index[second]
            stream.pairs.append((i, j))
            stream.rounds.append(rnd)
            stream.mine.setdefault(who, []).append((i, j))
            stream.met[i, j] += 1
            stream.met[j, i] += 1
        return stream

    def _lock_stream(self, c: Any, a: dict[str, Any], written: bool) -> None:
        """PostgreSQL: the stream's advisory lock.  SQLite: the database's write lock, taken by
        a write (``written``: the transaction has written already), so every read is fresh."""
        if c.dialect.name == "postgresql":
            key = self.item_no[a["item_id"]] * self.panels + a["panel"]
            c.execute(self._sql["advisory"], {"a": _LOCK_CLASS, "b": key % 2**31})
        elif not written:
            c.execute(self._sql["write_lock"], {"aid": a["id"]})

    def _choose_once(
        self, a: dict[str, Any], fit: _Fit, before: Callable[[Any], None] | None = None
    ) -> dict[str, Any]:
        from ..pairwise.pairing import next_in_stream

        item, panel = a["item_id"], a["panel"]
        agents = self.agents[item]
        k = len(agents)
        with self.db.begin_write() as c:
            if before is not None:
                before(c)
            self._lock_stream(c, a, written=before is not None)
            stream = self._stream(c, item, panel)
            seq = len(stream.pairs)
            avoid = np.zeros((k, k), dtype=bool)  # the pairs this participant has had
            for x, y in stream.mine.get(a["participant_id"], []):
                avoid[x, y] = avoid[y, x] = True
            base = [self.study.seed, self.item_no[item], panel]
            pair, rnd = next_in_stream(
                k, stream.pairs, stream.rounds,
                lambda r: _order(*base, r, k),
                fit.est, stream.met, avoid, self.policy.random_rounds,
            )  # fmt: skip
            entropy = [*base, rnd]
            i, j = pair
            if np.random.default_rng([*entropy, seq, 1]).random() < 0.5:
                i, j = j, i  # the side shown first
            values = {"first": agents[i], "second": agents[j], "pair_seq": seq,
                      "pairing_round": rnd, "fitted_on": fit.m,
                      "est_first": _num(fit.est[i]), "se_first": _num(fit.se[i]),
                      "est_second": _num(fit.est[j]), "se_second": _num(fit.se[j]),
                      "chosen_at": _dt.datetime.now(_dt.UTC)}  # fmt: skip
            done = c.execute(self._sql["store"],
                             {"aid": a["id"], **{f"v_{n}": v for n, v in values.items()}})  # fmt: skip
            if done.rowcount == 0:  # chosen meanwhile (the same slot opened twice): that pair
                return {**a, **c.execute(self._sql["row"], {"aid": a["id"]}).mappings().one()}
        return {**a, **values}  # the stream's cache reads it back with the next choice


@functools.lru_cache(maxsize=4096)
def _order(seed: int, item_no: int, panel: int, rnd: int, k: int) -> np.ndarray:
    """Round ``rnd``'s seeded order of a stream's ``k`` agents (read-only; cached: drawing it
    took a tenth of a millisecond, inside the database's write lock)."""
    order = np.random.default_rng([seed, item_no, panel, rnd]).permutation(k)
    order.setflags(write=False)
    return order


def _num(x: float) -> float | None:
    """A float for the database (NaN, an SE before any fit, as NULL)."""
    return float(x) if np.isfinite(x) else None
