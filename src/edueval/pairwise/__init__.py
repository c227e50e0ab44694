"""P2 -- comparative judgement of tutor replies (Tack & Piech, EDM 2022, "the AI Teacher Test").

Python API (mirrors ``edueval pairwise ...``)::

    from edueval.pairwise import (
        read_comparisons, import_teacher_test, resolve_ties, read_rater_ids, exclude_raters,
        BradleyTerry, RaterModel, HierarchicalBradleyTerry, summarize,
    )

    df = import_teacher_test("items.jsonl")                 # item, attribute, rater, first, ...
    df, removed, _ = exclude_raters(df, read_rater_ids("outliers.yaml"))
    res = BradleyTerry(df, ties="random", seed=1).fit()     # NUTS, all (item, attribute) at once
    print(res.summary()); res.abilities                     # alpha, rank, softmax prob, HDIs
    summarize(res.abilities).tukey                          # ANOVA / Tukey HSD / Table 3
    HierarchicalBradleyTerry(df, seed=1).fit().differences  # agent differences with HDIs
    RaterModel(all_comparisons, ties="drop").fit().flagged  # raters with an order bias
    ml = BradleyTerry(df, ties="drop").fit_ml()             # ML in seconds, SEs (sum-to-zero)
    ml.groups[["ssr", "split_half"]]; ml.raters             # reliability; infit/outfit per rater
    simulate(SimulationConfig(spread=0.0)).budgets          # what SSR says on coin flips

Each ``fit`` returns a results object (statsmodels style) with DataFrames and ``summary()``.
"""

from .bradley_terry import BradleyTerry, BradleyTerryResults
from .comparisons import (
    COLUMNS,
    OUTCOMES,
    TIE_MODES,
    exclude_raters,
    read_comparisons,
    read_rater_ids,
    resolve_ties,
    validate_comparisons,
)
from .hierarchical import HierarchicalBradleyTerry, HierarchicalResults
from .ml_fit import MLResults
from .raters import RaterModel, RaterResults
from .reliability import split_half, ssr, ssr_table
from .simulation import SimulationConfig, SimulationResults, simulate
from .summary import SummaryResults, read_abilities, read_scores, summarize
from .teacher_test import PAPER, bundled_folder, import_teacher_test

__all__ = [
    "COLUMNS",
    "OUTCOMES",
    "PAPER",
    "TIE_MODES",
    "BradleyTerry",
    "BradleyTerryResults",
    "HierarchicalBradleyTerry",
    "HierarchicalResults",
    "MLResults",
    "RaterModel",
    "RaterResults",
    "SimulationConfig",
    "SimulationResults",
    "SummaryResults",
    "bundled_folder",
    "exclude_raters",
    "import_teacher_test",
    "read_abilities",
    "read_comparisons",
    "read_rater_ids",
    "read_scores",
    "resolve_ties",
    "simulate",
    "split_half",
    "ssr",
    "ssr_table",
    "summarize",
    "validate_comparisons",
]
