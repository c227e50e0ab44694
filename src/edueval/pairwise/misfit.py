"""Infit and outfit mean squares per rater and per object (agent in a group), from the model's
expected probabilities -- the fit statistics comparative-judgement practice reports for every
judge and every script (Pollitt 2012; sirt's ``btm``; No More Marking).

For judgement ``n`` with outcome ``y_n`` (1 when the first-shown option won, 0 when the second,
0.5 for a tie counted half) and model probability ``p_n = logistic(alpha0 + alpha_first -
alpha_second)`` at the point estimates (ML, or the posterior means of a NUTS fit):

    W_n = p_n (1 - p_n)                                   (the variance of y_n)
    C_n = p_n (1 - p_n)^4 + (1 - p_n) p_n^4               (its fourth central moment)
    outfit = mean_n (y_n - p_n)^2 / W_n                   (unweighted mean square)
    infit  = sum_n (y_n - p_n)^2 / sum_n W_n              (information-weighted mean square)

over the judgements of one rater, or of one object (each judgement counts for both its objects;
the residual is the same from either side).  Both are 1 when the judgements are as noisy as the
model expects; a rater answering at random has infit well above 1 (they "lose" the easy pairs).
The standardised forms are the Wilson-Hilferty cube-root transforms (Wright & Masters 1982,
Eqs. 5.4-5.5; Linacre's "ZSTD"): ``t = (MS^{1/3} - 1) (3 / q) + q / 3`` with
``q^2 = sum(C_n / W_n^2) / N^2 - 1 / N`` (outfit) and ``q^2 = sum(C_n - W_n^2) / (sum W_n)^2``
(infit).

Flags (documented cut-offs): ``misfit`` when the infit t exceeds :data:`T_CUT` (2, the usual
|t| > 2 of Wright & Linacre 1994: more erratic than the model expects); ``overfit`` when it is
below -2 (too predictable; reported, not a problem of quality); ``infit_above_2sd`` when the
infit mean square exceeds the mean plus two standard deviations of all raters' (or objects') infits
(Pollitt 2012's rule for judges in comparative judgement).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.special import expit

from .design import Design

__all__ = ["T_CUT", "expected_first", "fit_statistics", "object_fit", "rater_fit", "row_index"]

#: |t| cut-off of the standardised infit (Wright & Linacre 1994)
T_CUT = 2.0


def row_index(data: pd.DataFrame, design: Design) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group and agent indices in ``design`` of each row of a comparisons table."""
    keys = list(design.groups)
    g_index = pd.MultiIndex.from_frame(design.keys[keys])
    g = g_index.get_indexer(pd.MultiIndex.from_frame(data[keys]))
    a_index = pd.Index(design.agents)
    return g, a_index.get_indexer(data["first"]), a_index.get_indexer(data["second"])


def expected_first(
    data: pd.DataFrame, design: Design, alpha: np.ndarray, alpha0: np.ndarray
) -> np.ndarray:
    """P(first preferred) of each row of ``data`` at abilities ``alpha`` (G, K), ``alpha0`` (G,)."""
    g, i, j = row_index(data, design)
    return expit(alpha0[g] + alpha[g, i] - alpha[g, j])


def _components(data: pd.DataFrame, p: np.ndarray) -> pd.DataFrame:
    w1 = data["w_first"].to_numpy(float)
    w2 = data["w_second"].to_numpy(float)
    y = w1 / np.where(w1 + w2 > 0, w1 + w2, 1.0)
    w = p * (1 - p)
    return pd.DataFrame(
        {
            "r2": (y - p) ** 2,
            "z2": (y - p) ** 2 / w,
            "w": w,
            "c": p * (1 - p) ** 4 + (1 - p) * p**4,
        }
    )


def _wilson_hilferty(ms: np.ndarray, q: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return (np.cbrt(ms) - 1.0) * (3.0 / q) + q / 3.0


def fit_statistics(comp: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Infit/outfit (mean squares and t) per ``by`` of per-judgement components (``r2, z2, w, c``
    and the ``by`` columns), with the flags of the module docstring."""
    t = comp.assign(c_over_w2=comp["c"] / comp["w"] ** 2, c_minus_w2=comp["c"] - comp["w"] ** 2)
    agg = t.groupby(list(by), sort=True).agg(
        n_judgements=("r2", "size"),
        sum_r2=("r2", "sum"),
        sum_w=("w", "sum"),
        outfit=("z2", "mean"),
        sum_c_over_w2=("c_over_w2", "sum"),
        sum_c_minus_w2=("c_minus_w2", "sum"),
    )
    n = agg["n_judgements"].to_numpy(float)
    infit = (agg["sum_r2"] / agg["sum_w"]).to_numpy()
    outfit = agg["outfit"].to_numpy()
    q_out = np.sqrt(np.maximum(agg["sum_c_over_w2"].to_numpy() / n**2 - 1.0 / n, 1e-12))
    q_in = np.sqrt(
        np.maximum(agg["sum_c_minus_w2"].to_numpy() / agg["sum_w"].to_numpy() ** 2, 1e-12)
    )
    out = agg[["n_judgements"]].reset_index()
    out["infit"] = infit
    out["infit_t"] = _wilson_hilferty(infit, q_in)
    out["outfit"] = outfit
    out["outfit_t"] = _wilson_hilferty(outfit, q_out)
    out["misfit"] = out["infit_t"] > T_CUT
    out["overfit"] = out["infit_t"] < -T_CUT
    sd = out["infit"].std(ddof=1) if len(out) > 1 else np.nan
    out["infit_above_2sd"] = out["infit"] > out["infit"].mean() + 2 * sd
    return out


def rater_fit(data: pd.DataFrame, p: np.ndarray) -> pd.DataFrame:
    """Per rater: judgements, infit, outfit, their t, flags; sorted worst infit first."""
    comp = _components(data, p).assign(rater=data["rater"].to_numpy())
    return (
        fit_statistics(comp, ["rater"])
        .sort_values("infit", ascending=False, kind="stable")
        .reset_index(drop=True)
    )


def object_fit(data: pd.DataFrame, p: np.ndarray, groups: Sequence[str]) -> pd.DataFrame:
    """Per (group, agent): infit, outfit, their t and flags; each judgement counts for both its
    agents."""
    comp = _components(data, p)
    keys = {k: data[k].to_numpy() for k in groups}
    both = pd.concat(
        [
            comp.assign(**keys, agent=data["first"].to_numpy()),
            comp.assign(**keys, agent=data["second"].to_numpy()),
        ],
        ignore_index=True,
    )
    return fit_statistics(both, [*groups, "agent"])
