"""P1 -- knowledge tracing and moment of learning (Pardos & Yudelson), and the models users
compare beside it.

Python API (in memory: DataFrames in, results objects out, nothing written)::

    from edueval.kt import BKT, evaluate, simulate, forward, random_params, moment_of_learning
    model = BKT(seed=1).fit(responses)           # a DataFrame: student, skill, correct[, order]
    print(model.summary())                       # fitted parameters and fit statistics per skill
    ev = evaluate(model.predict(responses), params=model)   # KTEvaluation
    print(ev.summary()); ev.performance["auc"]; ev.mol_mad; ev.to_frame()
    from edueval.kt import AFM, PFA, Roster, save_model, load_model, cross_validate, compare_models
    from edueval.kt import StudyConfig, replicate_study      # kt study
    reps = replicate_study(StudyConfig(n_students=200, n_skills=10), 3); print(reps.summary())

Layout (compute modules import no run folder, report or command line; run modules stay apart):

- shared: :mod:`.data` (response tables, packing), :mod:`.metrics`, :mod:`.mastery` (moment of
  learning), :mod:`.evaluation` (:class:`KTEvaluation`), :mod:`.prediction_stats`,
  :mod:`._common_kernels`;
- :mod:`.bkt` -- the BKT model, its parameters, variants, item simulation and kernels;
- :mod:`.models` -- AFM/PFA, the model registry, cross-validation, comparison, roster, model files;
- :mod:`.replication` -- the Pardos & Yudelson study and its replications;
- :mod:`.scale` -- out-of-core fitting, prediction and evaluation, simulated logs on disk;
- :mod:`.commands` -- the run layer of the ``edueval kt`` commands (writes run folders; never
  imported by the modules above).
"""

import importlib
from typing import TYPE_CHECKING, Any

from . import metrics
from .bkt.params import PAPER_RANGES, BKTParams, random_params, read_params
from .bkt.simulate_items import draw_item_params, item_params_long, simulate_items
from .data import Columns, RowFilter, Sequences, pack, read_responses
from .evaluation import KTEvaluation, evaluate
from .mastery import moment_of_learning, n_correct_in_a_row

if TYPE_CHECKING:  # the names imported on first use, for type checkers
    from .bkt.model import BKT, FitResult, NotFittedError, forward, simulate
    from .replication.replications import StudyReplications, replicate_study
    from .replication.study import StudyConfig

# Imported on first use (PEP 562): the model comparison pulls in scipy.stats, scipy.optimize and
# scipy.sparse, about a second that every `edueval` command would otherwise pay at start-up; the
# estimators are scikit-learn's BaseEstimators, whose import costs as much again.
_LAZY = {
    "BKT": "bkt.model",
    "FitResult": "bkt.model",
    "NotFittedError": "bkt.model",
    "forward": "bkt.model",
    "simulate": "bkt.model",
    "AFM": "models.logistic",
    "PFA": "models.logistic",
    "CompareResult": "models.compare",
    "compare_models": "models.compare",
    "CVResult": "models.crossval",
    "cross_validate": "models.crossval",
    "make_folds": "models.crossval",
    "load_model": "models.model_files",
    "save_model": "models.model_files",
    "make_model": "models.registry",
    "Roster": "models.roster",
    "replay": "models.roster",
    "StudyConfig": "replication.study",
    "StudyReplications": "replication.replications",
    "replicate_study": "replication.replications",
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
    "StudyConfig",
    "StudyReplications",
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
    "replicate_study",
    "save_model",
    "simulate",
    "simulate_items",
]
