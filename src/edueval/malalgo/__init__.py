"""P3 -- malgorithm identification (Sonkar, Liu, Le, Baraniuk: MalAlgoQA).

Can a model name the flawed reasoning ("malgorithm") behind a wrong answer?  Python API::

    from edueval.malalgo import evaluate
    from edueval.misconceptions import generate_items      # license-clean questions

    res = evaluate(generate_items(20, seed=0), "local")    # a DataFrame or a file; a model spec
    print(res.summary()); res.mia.accuracy; res.to_frame(); res.responses

or the parts: ``read_questions``, ``build_tasks``, ``read_answer``, ``scored_frame``, ``summary``.
"""

from .data import LETTERS, normalise_questions, read_questions
from .evaluation import Accuracy, MalAlgoEvaluation, evaluate, scored_frame
from .metrics import breakdown, grade_dok_heatmap, summary
from .tasks import Task, build_tasks, read_answer

__all__ = [
    "LETTERS",
    "Accuracy",
    "MalAlgoEvaluation",
    "Task",
    "breakdown",
    "build_tasks",
    "evaluate",
    "grade_dok_heatmap",
    "normalise_questions",
    "read_answer",
    "read_questions",
    "scored_frame",
    "summary",
]
