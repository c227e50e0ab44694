"""P1 -- knowledge tracing and moment of learning (Pardos & Yudelson), and the models users
compare beside it.

Python API::

    from edueval.kt import BKT, simulate, forward, random_params, moment_of_learning, metrics
    from edueval.kt import AFM, PFA, Roster, save_model, load_model, cross_validate, compare_models
"""

from . import metrics
from .bkt import BKT, FitResult, forward, simulate
from .compare import CompareResult, compare_models
from .crossval import CVResult, cross_validate, make_folds
from .data import Columns, Sequences, pack
from .logistic import AFM, PFA
from .mastery import moment_of_learning, n_correct_in_a_row
from .model_files import load_model, save_model
from .params import PAPER_RANGES, BKTParams, random_params, read_params
from .registry import make_model
from .roster import Roster, replay
from .simulate_items import draw_item_params, item_params_long, simulate_items

__all__ = [
    "AFM",
    "BKT",
    "BKTParams",
    "Columns",
    "CompareResult",
    "CVResult",
    "FitResult",
    "PAPER_RANGES",
    "PFA",
    "Roster",
    "Sequences",
    "compare_models",
    "cross_validate",
    "draw_item_params",
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
    "replay",
    "save_model",
    "simulate",
    "simulate_items",
]
