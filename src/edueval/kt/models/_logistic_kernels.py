"""Compiled loss, gradient and Hessian-vector product of a logistic regression on a CSR design
(numba): one pass over the non-zeros, no temporaries of the design's length.

Rows are aggregated binomial observations: ``n[i]`` trials with ``y[i]`` successes share row
``i`` of the design (one row per response when nothing is aggregated).

The rows are cut into a fixed number of blocks (:data:`BLOCKS`) summed in parallel (numba
``prange``), each into its own gradient buffer; the buffers are then added in block order, so
the result does not depend on the number of threads or on their scheduling.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

#: Row blocks of the parallel sums (fixed: the sums' order must not depend on the threads).
BLOCKS = 8


@njit(cache=True, inline="always")
def _row_eta(indptr, indices, data, w, i):
    eta = 0.0
    for j in range(indptr[i], indptr[i + 1]):
        eta += data[j] * w[indices[j]]
    return eta


@njit(cache=True, inline="always")
def _nll_row(eta, y, n):
    """(n log(1 + e^eta) - y eta, P = expit(eta)) without overflow."""
    if eta > 0:
        e = math.exp(-eta)
        return n * (eta + math.log1p(e)) - y * eta, 1.0 / (1.0 + e)
    e = math.exp(eta)
    return n * math.log1p(e) - y * eta, e / (1.0 + e)


@njit(cache=True, inline="always")
def _block(b, n_rows):
    step = (n_rows + BLOCKS - 1) // BLOCKS
    return min(b * step, n_rows), min((b + 1) * step, n_rows)


@njit(cache=True, parallel=True)
def loss_grad(indptr, indices, data, y, n, w, lam, grad):
    """Penalised negative log-likelihood sum(n log(1 + e^eta) - y eta) + sum(lam w^2) / 2;
    its gradient is written into ``grad``."""
    n_rows = indptr.shape[0] - 1
    part = np.zeros((BLOCKS, w.shape[0]))
    totals = np.zeros(BLOCKS)
    for b in prange(BLOCKS):
        lo, hi = _block(b, n_rows)
        acc = 0.0
        for i in range(lo, hi):
            eta = _row_eta(indptr, indices, data, w, i)
            val, p = _nll_row(eta, y[i], n[i])
            acc += val
            r = n[i] * p - y[i]
            for j in range(indptr[i], indptr[i + 1]):
                part[b, indices[j]] += data[j] * r
        totals[b] = acc
    total = 0.0
    for c in range(w.shape[0]):
        g = lam[c] * w[c]
        total += 0.5 * lam[c] * w[c] * w[c]
        for b in range(BLOCKS):
            g += part[b, c]
        grad[c] = g
    for b in range(BLOCKS):
        total += totals[b]
    return total


@njit(cache=True, parallel=True)
def hess_weights(indptr, indices, data, n, w, out):
    """The Hessian's row weights at ``w``: ``n p (1 - p)`` per row, written into ``out`` (they
    stay the same for every product at one point, e.g. a Newton step's CG iterations)."""
    n_rows = indptr.shape[0] - 1
    for b in prange(BLOCKS):
        lo, hi = _block(b, n_rows)
        for i in range(lo, hi):
            p = 1.0 / (1.0 + math.exp(-_row_eta(indptr, indices, data, w, i)))
            out[i] = n[i] * p * (1.0 - p)


@njit(cache=True, parallel=True)
def hess_vec(indptr, indices, data, weights, lam, v, out):
    """Hessian of :func:`loss_grad` times ``v``, written into ``out``, from the row
    ``weights`` of :func:`hess_weights` at the point."""
    n_rows = indptr.shape[0] - 1
    part = np.zeros((BLOCKS, v.shape[0]))
    for b in prange(BLOCKS):
        lo, hi = _block(b, n_rows)
        for i in range(lo, hi):
            r = weights[i] * _row_eta(indptr, indices, data, v, i)
            for j in range(indptr[i], indptr[i + 1]):
                part[b, indices[j]] += data[j] * r
    for c in range(v.shape[0]):
        acc = lam[c] * v[c]
        for b in range(BLOCKS):
            acc += part[b, c]
        out[c] = acc


def csr_arrays(X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The CSR arrays of ``X`` in the dtypes the kernels are compiled for."""
    return (
        np.ascontiguousarray(X.indptr, dtype=np.int64),
        np.ascontiguousarray(X.indices, dtype=np.int32),
        np.ascontiguousarray(X.data, dtype=np.float64),
    )
