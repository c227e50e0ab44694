"""P4 -- QG-SMS (Nguyen et al.): judging which of two quiz questions is easier, more
discriminating, has better distractors or covers a topic, with an LLM that first simulates a
classroom; and the baselines vanilla, cot, metrics, reference, swap, chateval and direct.

In memory (no output folder, nothing written or printed)::

    from edueval.qgsms import evaluate, score

    res = evaluate("pairs.csv", "items.jsonl", model="local",   # or "openai/<model>"; pairs and
                   methods=["vanilla", "qg-sms"])                # items may be DataFrames too
    print(res.summary())                     # AA / CA per method and dimension, sign tests
    res.accuracy["qg-sms"]["DF"].CA          # PairAccuracy: pairs, AA, CA, consistent, failed, ties
    res.sign_tests["qg-sms", "CA", "all"].p_value   # exact sign test against vanilla
    res.ranking["qg-sms"]["DE"]["score"].spearman   # ranking score vs the true measure
    res.judgements, res.cost, res.to_frame(), res.n_failed, res.complete

    scores = score(res.judgements, bradley_terry=False)   # the scores of judgements.csv tables

Past ``max_failures`` (failed calls + unparseable answers) :func:`evaluate` raises
:class:`edueval.models.FailureBudgetExceeded`, the incomplete results in its ``.result``.

Run folders (``edueval qgsms run``/``score``): :func:`run_qgsms` and :func:`score_run` write the
same numbers with the tables, ``results.json`` and a report (imported on first use).
"""

import importlib
from typing import Any

from .data import read_judgements, read_pairs
from .evaluation import (
    PairAccuracy,
    QGSMSEvaluation,
    QGSMSScores,
    RankCorrelation,
    SignTest,
    evaluate,
    score,
    score_judgements,
)
from .methods import METHODS, MethodConfig
from .ranking import anova, bt_abilities, rank_correlations, ranking_scores, true_measures
from .scoring import accuracy_table, alpha_curve, binomial_tests, pair_table

# The run layer (run folder, report: jinja2, matplotlib) is imported on first use (PEP 562), so
# importing the science does not load it.
_LAZY = {
    "run_qgsms": "pipeline",
    "score_run": "pipeline",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "METHODS",
    "MethodConfig",
    "PairAccuracy",
    "QGSMSEvaluation",
    "QGSMSScores",
    "RankCorrelation",
    "SignTest",
    "evaluate",
    "read_judgements",
    "score",
    "accuracy_table",
    "anova",
    "bt_abilities",
    "alpha_curve",
    "binomial_tests",
    "pair_table",
    "rank_correlations",
    "ranking_scores",
    "read_pairs",
    "run_qgsms",
    "score_judgements",
    "score_run",
    "true_measures",
]
