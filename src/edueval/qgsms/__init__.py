"""P4 -- QG-SMS (Nguyen et al.): judging which of two quiz questions is easier, more
discriminating, has better distractors or covers a topic, with an LLM that first simulates a
classroom; and the baselines vanilla, cot, metrics, reference, swap, chateval and direct.

Python API (mirrors ``edueval qgsms ...``)::

    from edueval.qgsms import METHODS, MethodConfig, run_qgsms, score_judgements
    from edueval.models import get_model

    res = run_qgsms(out, "pairs.csv", "items.jsonl", methods=["vanilla", "qg-sms"],
                    open_model=lambda log: get_model("local", log_path=log), model_name="local")
    res["accuracy"]["qg-sms"]["DF"]        # {"AA", "CA", "pairs", "failed", "ties"}
"""

from .methods import METHODS, MethodConfig
from .pipeline import read_pairs, run_qgsms, score_judgements, score_run
from .scoring import accuracy_table, alpha_curve, binomial_tests, pair_table

__all__ = [
    "METHODS",
    "MethodConfig",
    "accuracy_table",
    "alpha_curve",
    "binomial_tests",
    "pair_table",
    "read_pairs",
    "run_qgsms",
    "score_judgements",
    "score_run",
]
