"""Model specifications for ``kt crossvalidate`` and ``kt compare``: one short text per model.

- ``bkt`` -- classic BKT; options joined with ``-``: ``forgets``, ``multigs:COLUMN``,
  ``multilearn:COLUMN``, ``multipair:COLUMN``, ``multiprior`` (e.g. ``bkt-forgets``,
  ``bkt-multigs:item``, ``bkt-forgets-multigs:item``);
- ``afm`` -- Additive Factor Model (:class:`~edueval.kt.models.logistic.AFM`, default penalty);
- ``pfa`` -- Performance Factors Analysis (:class:`~edueval.kt.models.logistic.PFA`).

A column name in a specification may not contain ``-`` or ``,`` (they separate options and
models).
"""

from __future__ import annotations

import inspect

from ...defaults import SEED
from ...io import InputError
from ..bkt.model import BKT
from ..data import Columns
from .logistic import AFM, PFA

__all__ = ["make_model", "parse_models", "spec_columns"]

_BKT_FLAGS = {"forgets", "multiprior"}
_BKT_COLUMN_OPTIONS = {"multigs", "multilearn", "multipair"}


def parse_models(text: str) -> list[str]:
    """``"bkt,afm"`` -> ``["bkt", "afm"]``, each checked; duplicates refused."""
    specs = [s.strip() for s in text.split(",") if s.strip()]
    if not specs:
        raise InputError("models= needs at least one model, e.g. bkt,afm,pfa")
    dupes = sorted({s for s in specs if specs.count(s) > 1})
    if dupes:
        raise InputError(f"models= names {dupes[0]!r} twice")
    for spec in specs:
        _bkt_options(spec) if spec.startswith("bkt") else _plain(spec)
    return specs


def _plain(spec: str) -> str:
    if spec not in ("afm", "pfa"):
        raise InputError(
            f"unknown model {spec!r}: expected bkt[-forgets][-multigs:COLUMN]..., afm or pfa"
        )
    return spec


def _bkt_options(spec: str) -> dict:
    """Keyword arguments of :class:`BKT` for a ``bkt-...`` specification."""
    head, *parts = spec.split("-")
    if head != "bkt":
        raise InputError(f"unknown model {spec!r}: expected bkt, afm or pfa")
    options: dict = {}
    for part in parts:
        name, sep, column = part.partition(":")
        if name in _BKT_FLAGS and not sep:
            options[name] = True
        elif name in _BKT_COLUMN_OPTIONS and sep and column:
            options[name] = column
        else:
            raise InputError(
                f"unknown option {part!r} in model {spec!r}: expected forgets, multiprior, "
                "multigs:COLUMN, multilearn:COLUMN or multipair:COLUMN"
            )
    accepted = inspect.signature(BKT).parameters
    missing = [name for name in options if name not in accepted]
    if missing:
        raise InputError(f"model {spec!r}: this BKT has no {missing[0]} option")
    return options


def spec_columns(spec: str) -> list[str]:
    """Columns of the data a specification needs beyond student, skill and correct."""
    if not spec.startswith("bkt"):
        return []
    return [v for v in _bkt_options(spec).values() if isinstance(v, str)]


def make_model(
    spec: str, *, seed: int | None = SEED, n_restarts: int = 5, columns: Columns | None = None
):
    """A fresh, unfitted estimator for a specification (``seed``: the BKT restarts' seed, by
    default the command line's, :data:`edueval.defaults.SEED`)."""
    if spec.startswith("bkt"):
        return BKT(n_restarts=n_restarts, seed=seed, columns=columns, **_bkt_options(spec))
    return {"afm": AFM, "pfa": PFA}[_plain(spec)](columns=columns)
