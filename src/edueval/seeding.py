"""Seeded randomness: every random choice in a run flows from one seed.

``rng(seed)`` gives the run's generator; ``child_seeds(seed, n)`` gives independent, reproducible
streams for chunks of work (per skill, per item, per replication), so a chunk's result does not
depend on how many workers ran it or in what order.
"""

from __future__ import annotations

import numpy as np

__all__ = ["rng", "child_rngs", "keyed_rng", "task_seeds", "DEFAULT_SEED"]

DEFAULT_SEED = 20120601


def rng(seed: int | None) -> np.random.Generator:
    """The run's random generator (``seed=None`` uses :data:`DEFAULT_SEED`, never the clock)."""
    return np.random.default_rng(DEFAULT_SEED if seed is None else seed)


def child_rngs(seed: int | None, n: int) -> list[np.random.Generator]:
    """``n`` independent generators derived from ``seed`` (one per chunk of work)."""
    ss = np.random.SeedSequence(DEFAULT_SEED if seed is None else seed)
    return [np.random.default_rng(s) for s in ss.spawn(n)]


def task_seeds(seed: int | None, n: int) -> list[int]:
    """``n`` independent integer seeds from ``SeedSequence(seed).spawn(n)``, one per task.

    Integers (63 bits) so that a task -- one replication, one group of models -- is reproduced
    alone by running it with its seed, and a task's numbers do not depend on which worker ran it.
    """
    ss = np.random.SeedSequence(DEFAULT_SEED if seed is None else seed)
    return [int(c.generate_state(1, np.uint64)[0] >> np.uint64(1)) for c in ss.spawn(n)]


def keyed_rng(seed: int | None, key: str) -> np.random.Generator:
    """A generator for one named unit of work (a skill), from the seed and the name alone.

    The name enters ``SeedSequence``'s spawn key through a 64-bit BLAKE2b digest, so the stream
    of skill ``"fractions"`` is the same whatever other skills a file or a partition holds.
    """
    import hashlib

    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest()
    ss = np.random.SeedSequence(
        DEFAULT_SEED if seed is None else seed, spawn_key=(int.from_bytes(digest, "little"),)
    )
    return np.random.default_rng(ss)
