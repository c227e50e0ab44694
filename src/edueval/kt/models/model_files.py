"""Saving a fitted BKT model for a tutoring service, and loading it back (no pickle).

A model folder holds ``params.csv`` and ``model.json``:

* classic BKT: ``params.csv`` is the wide table (one row per skill), as ``kt fit`` writes it;
* a BKT variant (``multigs``, ``multilearn``, ``multiprior``, ``multipair``, ``fixed``, ``init``):
  ``params.csv`` is the long table ``skill, parameter, group, value, free`` (held parameters of
  ``fixed`` are in it with ``free = 0``, so the ``fixed`` / ``init`` tables themselves are not
  needed to predict and are not saved).

``model.json`` records the format, the estimator's options (the variant's columns among them),
the data columns, the skills, the number of free parameters and each skill's log-likelihood.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pandas as pd

from ...io import InputError, atomic_write, load_json
from ..bkt.model import BKT
from ..bkt.params import read_params
from ..bkt.variants import read_param_file
from ..data import Columns

__all__ = ["save_model", "load_model", "MODEL_FORMAT"]

MODEL_FORMAT = "edueval-bkt/1"
_OPTIONS = ("forgets", "n_restarts", "max_iter", "tol", "guess_max", "slip_max", "seed")
_VARIANT = ("multigs", "multilearn", "multiprior", "multipair")


def _is_variant(model: BKT) -> bool:
    return "parameter" in model.params_.columns


def _skills(model: BKT) -> list[str]:
    if _is_variant(model):
        return [str(s) for s in pd.unique(model.params_["skill"])]
    return [str(s) for s in model.params_.index]


def save_model(model: BKT, folder: str | Path) -> Path:
    """Write a fitted BKT model (classic or any variant) as ``params.csv`` plus ``model.json``."""
    if not hasattr(model, "params_"):
        raise RuntimeError("the model is not fitted; nothing to save")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    table = model.params_ if _is_variant(model) else model.params_.reset_index()
    atomic_write(folder / "params.csv", table.to_csv(index=False))
    meta = {
        "format": MODEL_FORMAT,
        "estimator": "BKT",
        "params_format": "long" if _is_variant(model) else "wide",
        "options": {name: getattr(model, name) for name in (*_OPTIONS, *_VARIANT)},
        "columns": asdict(model.columns or Columns()),
        "skills": _skills(model),
        "n_params": int(model.n_params_),
        "log_likelihood": {str(k): float(v) for k, v in model.log_likelihood_.items()},
    }
    atomic_write(folder / "model.json", json.dumps(meta, indent=2) + "\n")
    return folder


def _read_meta(folder: Path) -> dict:
    meta_path = folder / "model.json"
    if not meta_path.is_file():
        raise InputError("expected model.json (written by save_model)", file=meta_path)
    meta = load_json(meta_path.read_text(encoding="utf-8"), file=meta_path)
    if not isinstance(meta, dict) or meta.get("format") != MODEL_FORMAT:
        got = meta.get("format") if isinstance(meta, dict) else None
        raise InputError(f"expected format {MODEL_FORMAT!r}, got {got!r}", file=meta_path)
    return meta


def load_model(folder: str | Path) -> BKT:
    """A fitted :class:`BKT` from a folder written by :func:`save_model` (predicts at once)."""
    folder = Path(folder)
    meta = _read_meta(folder)
    model = BKT(**meta["options"], columns=Columns(**meta["columns"]))
    path = folder / "params.csv"
    if meta.get("params_format", "wide") == "long":
        model.params_ = read_param_file(path, collapse=False)
    else:
        model.params_ = read_params(path)
    if _skills(model) != meta["skills"]:
        raise InputError("params.csv does not hold the skills model.json lists", file=path)
    model.n_params_ = int(meta["n_params"])
    model.log_likelihood_ = pd.Series(meta["log_likelihood"], name="log_likelihood")
    return model
