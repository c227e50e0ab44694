"""Simulated comparative-judgement studies for the reliability, fit and ML tests (NumPy only)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit


def cj_study(
    seed: int,
    *,
    n_objects: int = 30,
    n_raters: int = 20,
    per_rater: int = 60,
    n_random: int = 2,
    spread: float = 1.5,
    order_effect: float = 0.0,
) -> tuple[pd.DataFrame, np.ndarray]:
    """One (item, attribute) group: random pairs, raters ``r00``.. of whom the first
    ``n_random`` answer by a coin flip; returns (comparisons, true qualities)."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, spread, size=n_objects)
    n = n_raters * per_rater
    i = rng.integers(0, n_objects, size=n)
    j = (i + rng.integers(1, n_objects, size=n)) % n_objects  # j != i
    rater = np.repeat(np.arange(n_raters), per_rater)
    p = np.where(rater < n_random, 0.5, expit(order_effect + theta[i] - theta[j]))
    won = rng.random(n) < p
    df = pd.DataFrame(
        {
            "item": "essay",
            "attribute": "quality",
            "rater": [f"r{r:02d}" for r in rater],
            "first": [f"o{k:02d}" for k in i],
            "second": [f"o{k:02d}" for k in j],
            "outcome": np.where(won, "first", "second"),
        }
    )
    return df, theta
