"""Model comparison the way the papers do it: paired leaderboards across runs, the items as the
unit (issue 21).  Python API::

    from edueval.compare import compare

    cmp = compare([res_a, res_b, res_c])      # MalAlgoEvaluation objects on the same questions
                                              # (or TutorReplies on the same dialogues: F1)
    print(cmp.summary())                      # per metric: estimates, paired differences, Holm
    cmp.differences, cmp.estimates, cmp.discordant, cmp.to_frame()

Compute only (no file written, nothing printed); ``edueval compare RUN RUN ...`` reads run
folders and writes the comparison folder (:mod:`edueval.compare.pipeline`).
"""

from .outcomes import (
    METRICS,
    UNIT_COLUMNS,
    Arm,
    MetricSpec,
    as_arms,
    malalgo_units,
    qgsms_units,
    tutor_units,
)
from .paired import compare
from .results import Comparison

__all__ = [
    "METRICS",
    "UNIT_COLUMNS",
    "Arm",
    "Comparison",
    "MetricSpec",
    "as_arms",
    "compare",
    "malalgo_units",
    "qgsms_units",
    "tutor_units",
]


def _callable_module() -> None:
    """``edueval.compare([...])`` as the issue writes it: the package is callable as its
    :func:`compare` (``from edueval.compare import compare`` is the same function)."""
    import sys
    import types

    class _Module(types.ModuleType):
        def __call__(self, *args, **kwargs) -> Comparison:
            return compare(*args, **kwargs)

    sys.modules[__name__].__class__ = _Module


_callable_module()
