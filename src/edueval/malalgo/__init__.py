"""P3 -- malgorithm identification (Sonkar, Liu, Le, Baraniuk: MalAlgoQA).

Can a model name the flawed reasoning ("malgorithm") behind a wrong answer?  Python API::

    from edueval.malalgo import read_questions, build_tasks, summary
    from edueval.misconceptions import generate_items      # license-clean questions
"""

from .data import LETTERS, normalise_questions, read_questions
from .metrics import breakdown, grade_dok_heatmap, summary
from .tasks import Task, build_tasks, read_answer

__all__ = [
    "LETTERS",
    "Task",
    "breakdown",
    "build_tasks",
    "grade_dok_heatmap",
    "normalise_questions",
    "read_answer",
    "read_questions",
    "summary",
]
