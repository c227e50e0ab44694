"""Seeded randomness: every random choice in a run flows from one seed.

``rng(seed)`` gives the run's generator; ``child_seeds(seed, n)`` gives independent, reproducible
streams for chunks of work (per skill, per item, per replication), so a chunk's result does not
depend on how many workers ran it or in what order.
"""

from __future__ import annotations

import numpy as np

__all__ = ["rng", "child_rngs", "DEFAULT_SEED"]

DEFAULT_SEED = 20120601


def rng(seed: int | None) -> np.random.Generator:
    """The run's random generator (``seed=None`` uses :data:`DEFAULT_SEED`, never the clock)."""
    return np.random.default_rng(DEFAULT_SEED if seed is None else seed)


def child_rngs(seed: int | None, n: int) -> list[np.random.Generator]:
    """``n`` independent generators derived from ``seed`` (one per chunk of work)."""
    ss = np.random.SeedSequence(DEFAULT_SEED if seed is None else seed)
    return [np.random.default_rng(s) for s in ss.spawn(n)]
