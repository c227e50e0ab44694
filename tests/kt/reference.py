"""Independent reference implementations for the tests: plain per-sequence loops written from the
textbook matrix form of a hidden Markov model (states 0 = unknown, 1 = known), sharing no code
with edueval's kernels."""

from __future__ import annotations

import numpy as np


def matrices(prior, learn, guess, slip, forget=0.0):
    pi = np.array([1 - prior, prior])
    A = np.array([[1 - learn, learn], [forget, 1 - forget]])  # A[from, to]
    B = np.array([[1 - guess, guess], [slip, 1 - slip]])  # B[state, y]
    return pi, A, B


def filter_sequence(y, params):
    """P(correct) before and P(known) after each response of one sequence."""
    pi, A, B = matrices(*params)
    belief = pi.copy()
    pc, pk = [], []
    for obs in y:
        pc.append(belief @ B[:, 1])
        post = belief * B[:, obs]
        post /= post.sum()
        pk.append(post[1])
        belief = post @ A
    return np.array(pc), np.array(pk)


def forward_backward(y, params):
    """Log-likelihood and the expected sufficient statistics of one sequence (scaled
    alpha-beta recursions, Rabiner 1989)."""
    pi, A, B = matrices(*params)
    n = len(y)
    alpha = np.zeros((n, 2))
    c = np.zeros(n)
    a = pi * B[:, y[0]]
    c[0] = a.sum()
    alpha[0] = a / c[0]
    for t in range(1, n):
        a = (alpha[t - 1] @ A) * B[:, y[t]]
        c[t] = a.sum()
        alpha[t] = a / c[t]
    beta = np.ones((n, 2))
    for t in range(n - 2, -1, -1):
        beta[t] = A @ (B[:, y[t + 1]] * beta[t + 1]) / c[t + 1]
    gamma = alpha * beta
    xi = np.zeros((2, 2))
    for t in range(n - 1):
        xi += alpha[t][:, None] * A * (B[:, y[t + 1]] * beta[t + 1])[None, :] / c[t + 1]
    return np.log(c).sum(), gamma, xi


def loglik(df, params_by_skill):
    total = 0.0
    for (skill, _), g in df.groupby(["skill", "student"], sort=False):
        y = g.sort_values("order")["correct"].to_numpy()
        ll, _, _ = forward_backward(y, params_by_skill[skill])
        total += ll
    return total
