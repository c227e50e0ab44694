"""Compiled loss, gradient and Hessian-vector product of a logistic regression on a CSR design
(numba): one pass over the non-zeros, no temporaries of the design's length.

Rows are aggregated binomial observations: ``n[i]`` trials with ``y[i]`` successes share row
``i`` of the design (one row per response when nothing is aggregated).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def _row_eta(indptr, indices, data, w, i):
    eta = 0.0
    for j in range(indptr[i], indptr[i + 1]):
        eta += data[j] * w[indices[j]]
    return eta


@njit(cache=True)
def loss_grad(indptr, indices, data, y, n, w, lam, grad):
    """Penalised negative log-likelihood sum(n log(1 + e^eta) - y eta) + sum(lam w^2) / 2;
    its gradient is written into ``grad``."""
    total = 0.0
    for c in range(w.shape[0]):
        grad[c] = lam[c] * w[c]
        total += 0.5 * lam[c] * w[c] * w[c]
    for i in range(indptr.shape[0] - 1):
        eta = _row_eta(indptr, indices, data, w, i)
        # log(1 + e^eta) without overflow; p = expit(eta)
        if eta > 0:
            e = math.exp(-eta)
            total += n[i] * (eta + math.log1p(e)) - y[i] * eta
            p = 1.0 / (1.0 + e)
        else:
            e = math.exp(eta)
            total += n[i] * math.log1p(e) - y[i] * eta
            p = e / (1.0 + e)
        r = n[i] * p - y[i]
        for j in range(indptr[i], indptr[i + 1]):
            grad[indices[j]] += data[j] * r
    return total


@njit(cache=True)
def hess_vec(indptr, indices, data, n, w, lam, v, out):
    """Hessian of :func:`loss_grad` at ``w`` times ``v``, written into ``out``."""
    for c in range(w.shape[0]):
        out[c] = lam[c] * v[c]
    for i in range(indptr.shape[0] - 1):
        eta = _row_eta(indptr, indices, data, w, i)
        xv = _row_eta(indptr, indices, data, v, i)
        p = 1.0 / (1.0 + math.exp(-eta))
        r = n[i] * p * (1.0 - p) * xv
        for j in range(indptr[i], indptr[i + 1]):
            out[indices[j]] += data[j] * r


def csr_arrays(X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The CSR arrays of ``X`` in the dtypes the kernels are compiled for."""
    return (
        np.ascontiguousarray(X.indptr, dtype=np.int64),
        np.ascontiguousarray(X.indices, dtype=np.int64),
        np.ascontiguousarray(X.data, dtype=np.float64),
    )
