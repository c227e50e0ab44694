"""Compiled inner loops shared by every knowledge-tracing model (numba): the run of correct
answers, the AUC of sorted scores and the radix sort that puts responses in sequence order.

Data layout as in :mod:`edueval.kt.bkt._kernels`: responses of all sequences concatenated in
``obs`` in time order, sequence ``s`` occupying ``obs[starts[s]:starts[s + 1]]``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True)
def run_lengths(obs, starts):
    """Length of the current run of correct answers at each response (0 after an error)."""
    out = np.empty(obs.shape[0], dtype=np.int64)
    for s in range(starts.shape[0] - 1):
        run = 0
        for i in range(starts[s], starts[s + 1]):
            run = run + 1 if obs[i] == 1 else 0
            out[i] = run
    return out


@njit(cache=True, parallel=True)
def auc_sorted(pos, neg):
    """AUC of each row from its positives' and negatives' scores, each sorted ascending.

    Mann-Whitney count: for every positive, the negatives below it plus half those tied with it
    (equal to the trapezoidal area under the ROC curve).
    """
    m = pos.shape[0]
    n_pos = pos.shape[1]
    n_neg = neg.shape[1]
    out = np.empty(m)
    for r in prange(m):
        if n_pos == 0 or n_neg == 0:
            out[r] = np.nan
            continue
        lo = 0
        hi = 0
        total = 0.0
        for i in range(n_pos):
            v = pos[r, i]
            while lo < n_neg and neg[r, lo] < v:
                lo += 1
            if hi < lo:
                hi = lo
            while hi < n_neg and neg[r, hi] <= v:
                hi += 1
            total += lo + 0.5 * (hi - lo)
        out[r] = total / (float(n_pos) * float(n_neg))
    return out


@njit(cache=True)
def radix_argsort(key, bits):
    """Stable sort of non-negative int64 ``key`` below ``2**bits`` (LSD radix, 11-bit digits).

    Returns ``(perm, key[perm])``.  Used to put responses in sequence order: linear in the number
    of rows, where a comparison sort of the same keys is several times slower; keys already in
    order are returned after one pass.
    """
    n = key.shape[0]
    perm = np.arange(n)
    k = key.copy()
    in_order = True  # files written in sequence order need no sorting
    for i in range(1, n):
        if k[i] < k[i - 1]:
            in_order = False
            break
    if in_order:
        return perm, k
    perm_tmp = np.empty(n, dtype=perm.dtype)
    k_tmp = np.empty(n, dtype=np.int64)
    radix = 11
    mask = (1 << radix) - 1
    shift = 0
    while shift < bits:
        count = np.zeros(mask + 2, dtype=np.int64)
        for i in range(n):
            count[((k[i] >> shift) & mask) + 1] += 1
        if count.max() < n:  # skip a digit that is the same in every key
            for d in range(mask + 1):
                count[d + 1] += count[d]
            for i in range(n):
                d = (k[i] >> shift) & mask
                j = count[d]
                count[d] = j + 1
                k_tmp[j] = k[i]
                perm_tmp[j] = perm[i]
            k, k_tmp = k_tmp, k
            perm, perm_tmp = perm_tmp, perm
        shift += radix
    return perm, k
