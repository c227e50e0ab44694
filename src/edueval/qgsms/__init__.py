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

from .methods import METHODS, MethodConfig
from .pipeline import read_pairs, run_qgsms, score_judgements, score_run
from .ranking import anova, bt_abilities, rank_correlations, ranking_scores, true_measures
from .scoring import accuracy_table, alpha_curve, binomial_tests, pair_table

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
