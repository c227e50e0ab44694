"""Retry policy: capped exponential backoff with jitter, honouring the server's ``Retry-After``."""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["RetryPolicy"]


@dataclass(frozen=True)
class RetryPolicy:
    """When to try a failed call again and how long to wait first.

    Attempt ``n`` (1-based) that failed transiently is followed, if ``n < max_attempts``, by a wait
    drawn uniformly from ``[b/2, b]`` with ``b = min(max_delay, base_delay * 2**(n-1))`` ("equal
    jitter": spreads clients apart while keeping the exponential growth).  A server's
    ``Retry-After`` hint is honoured as a lower bound (capped at ``max_retry_after``).
    """

    max_attempts: int = 6
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 60.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be >= 1")
        if self.base_delay < 0 or self.max_delay < 0:
            raise ValueError("retry delays must be >= 0")

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        b = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        wait = rng.uniform(b / 2, b) if b > 0 else 0.0
        if retry_after is not None and retry_after > 0:
            wait = max(wait, min(retry_after, self.max_retry_after))
        return wait
