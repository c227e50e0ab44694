"""Simulated versus real students (P4's premise): the same items' parameters, side by side.

Both response sets are fitted with the same model; for every item they share, the difficulty
``b`` and discrimination ``a`` from each with Wald 95% intervals, and across items the Pearson
and Spearman correlations (Fisher-z 95% intervals) -- does the simulation reproduce the item
ordering and the discrimination?
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ...io import InputError
from ...results import RunResults
from .model import IRT, IRTResults, as_response_matrix

__all__ = ["IRTComparison", "compare_irt", "correlation_ci"]

Z95 = float(stats.norm.ppf(0.975))


def correlation_ci(x: np.ndarray, y: np.ndarray, method: str = "pearson") -> dict:
    """r (Pearson or Spearman), its Fisher-z 95% interval (SE 1/sqrt(n-3); for Spearman the
    Bonett-Wright 2000 SE sqrt((1 + r^2/2)/(n-3))) and n."""
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    n = len(x)
    if n < 4:
        return {"r": float("nan"), "low": float("nan"), "high": float("nan"), "n": n}
    if method == "pearson":
        r = float(stats.pearsonr(x, y)[0])
        se = 1 / np.sqrt(n - 3)
    else:
        r = float(stats.spearmanr(x, y)[0])
        se = np.sqrt((1 + r**2 / 2) / (n - 3))
    z = np.arctanh(np.clip(r, -0.999999, 0.999999))
    return {"r": r, "low": float(np.tanh(z - Z95 * se)), "high": float(np.tanh(z + Z95 * se)),
            "n": n}  # fmt: skip


@dataclass
class IRTComparison(RunResults):
    """Item parameters of the real and the simulated students and their agreement."""

    items: pd.DataFrame
    correlations: pd.DataFrame
    real: IRTResults
    simulated: IRTResults

    _writer = "edueval.items.irt_pipeline:save_irt_compare"

    def to_frame(self) -> pd.DataFrame:
        return self.items.copy()

    def headline(self) -> dict[str, Any]:
        return {
            "model": self.real.model,
            "n_items": len(self.items),
            "n_real": self.real.n_persons,
            "n_simulated": self.simulated.n_persons,
            "correlations": self.correlations.to_dict("records"),
        }

    def summary(self) -> str:
        c = self.correlations
        lines = [
            f"{len(self.items)} common items; {self.real.model.upper()} fitted to "
            f"{self.real.n_persons} real and {self.simulated.n_persons} simulated students",
            c.to_string(float_format=lambda v: f"{v:.3f}"),
        ]
        return "\n".join(lines)


def compare_irt(real: Any, simulated: Any, *, model: str = "2pl", **kwargs: Any) -> IRTComparison:
    """Fit ``model`` to the real and to the simulated students' score tables (paths or frames,
    long or wide) and put the common items' parameters side by side."""
    r_df, s_df = as_response_matrix(real), as_response_matrix(simulated)
    common = [c for c in r_df.columns if c in set(s_df.columns)]
    if len(common) < 4:
        raise InputError(
            f"real and simulated responses share {len(common)} items; at least 4 are needed"
        )
    fr = IRT(model=model, **kwargs).fit(r_df[common])
    fs = IRT(model=model, **kwargs).fit(s_df[common])
    rows = {}
    for name, res in (("real", fr.results_), ("sim", fs.results_)):
        t = res.items
        for p in ("b", "a", "d"):
            rows[f"{p}_{name}"] = t[p]
            rows[f"{p}_{name}_low"] = t[p] - Z95 * t[f"{p}_se"]
            rows[f"{p}_{name}_high"] = t[p] + Z95 * t[f"{p}_se"]
    items = pd.DataFrame(rows)
    items["b_diff"] = items["b_sim"] - items["b_real"]
    corr = []
    for p in ("b", "a", "d"):
        if p == "a" and model == "rasch":
            continue
        for method in ("pearson", "spearman"):
            c = correlation_ci(items[f"{p}_real"].to_numpy(), items[f"{p}_sim"].to_numpy(), method)
            corr.append({"parameter": p, "method": method, **c})
    return IRTComparison(items, pd.DataFrame(corr), fr.results_, fs.results_)
