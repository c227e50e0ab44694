"""P4 -- classical test-item analysis and the QG-SMS pair construction (Nguyen et al.).

Python API (mirrors ``edueval items ...``)::

    from edueval.items import (
        load_item_data, read_qgsms_questions, analyze_items, make_pairs,
        ClassroomConfig, simulate_classroom,
    )

    res = analyze_items(responses_df, items_df)   # the user's own frames (or paths), validated
    scores = read_scores("scores.csv")   # long or wide 0/1 table -> students x items, NaN = blank
    data = load_item_data("responses.csv", "items.jsonl")   # or read_qgsms_questions("qs.json")
    from edueval.items.reliability import reliability          # items reliability
    rel = reliability(scores, missing="pairwise"); rel.alpha; rel.save("rel")   # the run folder
    res = analyze_items(data)          # res.items: DF, DC, DC_rest, DC_ul, DE, nonfunctional
    print(res.summary()); res.mean["DC"]; res.to_frame()   # no run folder, no file written
    pairs = make_pairs(res.items, alpha={"DF": 0.15}, seed=1)
    room = simulate_classroom(ClassroomConfig(n_students=60, seed=1))   # offline ground truth
"""

from .analysis import ItemAnalysis, analyze_items, pearson
from .data import ItemData, load_item_data, read_items, read_qgsms_questions, read_responses
from .irt import IRT, IRTComparison, IRTResults, compare_irt, simulate_irt
from .pairs import DEFAULT_ALPHA, DIMENSIONS, REQUIREMENTS, make_pairs, parse_alpha
from .reliability import Reliability
from .scores import ScoreTable, load_scores, read_scores
from .simulate import Classroom, ClassroomConfig, simulate_classroom

__all__ = [
    "IRT",
    "IRTComparison",
    "IRTResults",
    "compare_irt",
    "simulate_irt",
    "DEFAULT_ALPHA",
    "DIMENSIONS",
    "REQUIREMENTS",
    "Reliability",
    "ScoreTable",
    "Classroom",
    "ClassroomConfig",
    "ItemAnalysis",
    "ItemData",
    "analyze_items",
    "load_item_data",
    "load_scores",
    "make_pairs",
    "parse_alpha",
    "pearson",
    "read_items",
    "read_qgsms_questions",
    "read_responses",
    "read_scores",
    "simulate_classroom",
]
