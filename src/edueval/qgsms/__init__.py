"""P4 -- QG-SMS (Nguyen et al.): judging which of two quiz questions is easier, more
discriminating, has better distractors or covers a topic, with an LLM that first simulates a
classroom; and the baselines vanilla, cot, metrics, reference, swap, chateval and direct.

Python API (mirrors ``edueval qgsms ...``)::

    from edueval.qgsms import METHODS, MethodConfig, run_qgsms, score_judgements
    from edueval.models import get_model

    res = run_qgsms(out, "pairs.csv", "items.jsonl", methods=["vanilla", "qg-sms"],
                    open_model=lambda log: get_model("local", log_path=log), model_name="local")
    res["accuracy"]["qg-sms"]["DF"]        # {"AA", "CA", "pairs", "failed", "ties"}
    res["ranking"]["qg-sms"]["DE"]         # Spearman/Kendall/Pearson of score and BT vs true DE
"""

import importlib
from typing import Any

from .methods import METHODS, MethodConfig
from .ranking import anova, bt_abilities, rank_correlations, ranking_scores, true_measures
from .scoring import accuracy_table, alpha_curve, binomial_tests, pair_table

# The run layer (run folder, report: jinja2, matplotlib) is imported on first use (PEP 562), so
# importing the science does not load it.
_LAZY = {
    "read_pairs": "pipeline",
    "run_qgsms": "pipeline",
    "score_judgements": "pipeline",
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
