"""P1 -- knowledge tracing and moment of learning (Pardos & Yudelson), and the models users
compare beside it.

Python API (in memory: DataFrames in, results objects out, nothing written)::

    from edueval.kt import BKT, evaluate, simulate, forward, random_params, moment_of_learning
    model = BKT(seed=1).fit(responses)           # a DataFrame: student, skill, correct[, order]
    print(model.summary())                       # fitted parameters and fit statistics per skill
    ev = evaluate(model.predict(responses), params=model)   # KTEvaluation
    print(ev.summary()); ev.performance["auc"]; ev.mol_mad; ev.to_frame()
    from edueval.kt import AFM, PFA, Roster, save_model, load_model, cross_validate, compare_models
"""

import importlib
from typing import Any

from . import metrics
from .bkt import BKT, FitResult, NotFittedError, forward, simulate
from .data import Columns, RowFilter, Sequences, pack, read_responses
from .evaluation import KTEvaluation, evaluate
from .mastery import moment_of_learning, n_correct_in_a_row
from .params import PAPER_RANGES, BKTParams, random_params, read_params
from .simulate_items import draw_item_params, item_params_long, simulate_items

# Imported on first use (PEP 562): the model comparison pulls in scipy.stats, scipy.optimize and
# scipy.sparse, about a second that every `edueval` command would otherwise pay at start-up.
_LAZY = {
    "AFM": "logistic",
    "PFA": "logistic",
    "CompareResult": "compare",
    "compare_models": "compare",
    "CVResult": "crossval",
    "cross_validate": "crossval",
    "make_folds": "crossval",
    "load_model": "model_files",
    "save_model": "model_files",
    "make_model": "registry",
    "Roster": "roster",
    "replay": "roster",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AFM",
    "BKT",
    "BKTParams",
    "Columns",
    "CompareResult",
    "CVResult",
    "FitResult",
    "KTEvaluation",
    "NotFittedError",
    "PAPER_RANGES",
    "PFA",
    "Roster",
    "RowFilter",
    "Sequences",
    "compare_models",
    "cross_validate",
    "draw_item_params",
    "evaluate",
    "forward",
    "item_params_long",
    "load_model",
    "make_folds",
    "make_model",
    "metrics",
    "moment_of_learning",
    "n_correct_in_a_row",
    "pack",
    "random_params",
    "read_params",
    "read_responses",
    "replay",
    "save_model",
    "simulate",
    "simulate_items",
]
