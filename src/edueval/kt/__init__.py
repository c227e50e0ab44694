"""P1 -- knowledge tracing and moment of learning (Pardos & Yudelson).

Python API::

    from edueval.kt import BKT, simulate, forward, random_params, moment_of_learning, metrics
"""

from . import metrics
from .bkt import BKT, FitResult, forward, simulate
from .data import Columns, Sequences, pack
from .mastery import moment_of_learning, n_correct_in_a_row
from .params import PAPER_RANGES, BKTParams, random_params, read_params

__all__ = [
    "BKT",
    "BKTParams",
    "Columns",
    "FitResult",
    "PAPER_RANGES",
    "Sequences",
    "forward",
    "metrics",
    "moment_of_learning",
    "n_correct_in_a_row",
    "pack",
    "random_params",
    "read_params",
    "simulate",
]
