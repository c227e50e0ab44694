"""Simulated responses from known item parameters (for recovery studies and benchmarks)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit

from ...seeding import rng as make_rng

__all__ = ["simulate_irt"]


def simulate_irt(
    a: np.ndarray,
    d: np.ndarray,
    g: np.ndarray | None = None,
    *,
    n_persons: int,
    missing: float = 0.0,
    sd: float = 1.0,
    seed: int = 0,
) -> tuple[pd.DataFrame, np.ndarray]:
    """0/1 responses of ``n_persons`` with theta ~ N(0, sd^2) to items with slope ``a``,
    intercept ``d`` and lower asymptote ``g``; a fraction ``missing`` of the cells, at random,
    set to NaN (not administered).  Returns the wide frame and the true thetas."""
    rng = make_rng(seed)
    a, d = np.asarray(a, float), np.asarray(d, float)
    g = np.zeros_like(a) if g is None else np.asarray(g, float)
    theta = rng.normal(0.0, sd, n_persons)
    p = g + (1 - g) * expit(theta[:, None] * a + d)
    y = (rng.random(p.shape) < p).astype(float)
    if missing > 0:
        y[rng.random(y.shape) < missing] = np.nan
    df = pd.DataFrame(y, columns=[f"item{j + 1}" for j in range(len(a))])
    df.index = pd.Index([f"s{i + 1}" for i in range(n_persons)], name="student")
    return df, theta
