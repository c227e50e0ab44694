"""Item response theory: Rasch, 2PL, 3PL by marginal maximum likelihood (mirt's shape).

from edueval.items import IRT
m = IRT(model="2pl").fit(scores_df)      # wide 0/1/NaN frame, a path, or a long table
m.items_            # a, d, g, b with SEs; S-X2 with df and p
m.persons_          # EAP / MAP with SEs
print(m.summary()); m.results_.m2; m.results_.test_information()
"""

from .compare import IRTComparison, compare_irt
from .model import IRT, IRTResults, as_response_matrix
from .simulate import simulate_irt

__all__ = [
    "IRT",
    "IRTComparison",
    "IRTResults",
    "as_response_matrix",
    "compare_irt",
    "simulate_irt",
]
