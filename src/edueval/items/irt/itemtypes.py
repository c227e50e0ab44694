"""Dichotomous item models as small pluggable pieces (mirt's ``R/01-itemclass.R`` shape).

Every item type is a stateless object with the same four methods over a block of items that share
the type: ``prob`` (P(correct | theta) on a grid), ``dlog`` (derivatives of log P and log(1 - P)
with respect to each of its parameters, what the MML gradient and the per-person scores are made
of), ``dtheta`` (dP/dtheta, for item information and MAP scoring) and ``info`` (Fisher information).
Parameters are in mirt's slope-intercept form: ``a`` (slope), ``d`` (intercept), and for the 3PL
``logit_g`` (the lower asymptote on the logit scale, as mirt estimates it).  The IRT form is
``b = -d / a`` and ``g = 1 / (1 + exp(-logit_g))``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

__all__ = ["ITEM_TYPES", "ItemType", "ThreePL", "TwoPL"]


class ItemType:
    """The interface; ``pars`` is an (items x len(names)) array, ``theta`` a 1-D grid (Q,) or a
    per-person matrix broadcastable to (items, Q)."""

    names: tuple[str, ...] = ()

    def prob(self, pars: np.ndarray, theta: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def dlog(
        self, pars: np.ndarray, theta: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
        """(d log P / d par, d log(1-P) / d par), each of shape (n_par, items, Q)."""
        raise NotImplementedError

    def dtheta(
        self, pars: np.ndarray, theta: np.ndarray, p: np.ndarray | None = None
    ) -> np.ndarray:  # pragma: no cover
        """dP/dtheta (``p``: P at ``theta`` when the caller has it)."""
        raise NotImplementedError

    observed_equals_expected = False

    def info(self, pars: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """Fisher information of each item at ``theta``: (dP/dtheta)^2 / (P (1 - P))."""
        p = np.clip(self.prob(pars, theta), 1e-12, 1 - 1e-12)
        return self.dtheta(pars, theta) ** 2 / (p * (1 - p))


def _grid(pars: np.ndarray, theta: np.ndarray) -> np.ndarray:
    th = np.asarray(theta, dtype=float)
    return th[None, :] if th.ndim == 1 else th


class TwoPL(ItemType):
    """P = 1 / (1 + exp(-(a theta + d))); the Rasch model is this type with ``a`` fixed."""

    names = ("a", "d")

    def prob(self, pars, theta):
        th = _grid(pars, theta)
        return expit(pars[:, 0:1] * th + pars[:, 1:2])

    def dlog(self, pars, theta):
        th = _grid(pars, theta)
        p = self.prob(pars, theta)
        q = 1.0 - p
        th_b = np.broadcast_to(th, p.shape)
        return np.stack([q * th_b, q]), np.stack([-p * th_b, -p])

    def dtheta(self, pars, theta, p=None):
        p = self.prob(pars, theta) if p is None else p
        return pars[:, 0:1] * p * (1 - p)

    observed_equals_expected = True  # d2 log L / d theta2 = -sum a^2 P Q (canonical link)


class ThreePL(ItemType):
    """P = g + (1 - g) / (1 + exp(-(a theta + d))), g = expit(logit_g) (Birnbaum 1968)."""

    names = ("a", "d", "logit_g")

    def prob(self, pars, theta):
        th = _grid(pars, theta)
        g = expit(pars[:, 2:3])
        return g + (1 - g) * expit(pars[:, 0:1] * th + pars[:, 1:2])

    def dlog(self, pars, theta):
        th = _grid(pars, theta)
        g = expit(pars[:, 2:3])
        s = expit(pars[:, 0:1] * th + pars[:, 1:2])
        p = g + (1 - g) * s
        q = np.maximum(1.0 - p, 1e-300)
        deta = (1 - g) * s * (1 - s)  # dP / d eta
        dgam = (1 - s) * g * (1 - g)  # dP / d logit_g
        th_b = np.broadcast_to(th, p.shape)
        dp = np.stack([deta * th_b, deta, np.broadcast_to(dgam, p.shape)])
        return dp / p, -dp / q

    def dtheta(self, pars, theta, p=None):
        th = _grid(pars, theta)
        g = expit(pars[:, 2:3])
        s = expit(pars[:, 0:1] * th + pars[:, 1:2])
        return pars[:, 0:1] * (1 - g) * s * (1 - s)


ITEM_TYPES: dict[str, ItemType] = {"rasch": TwoPL(), "2pl": TwoPL(), "3pl": ThreePL()}
