"""Independent references for the P2 tests: NumPy/SciPy only, no numpyro, no edueval code.

* :func:`log_posterior` -- the Bradley-Terry-with-order-effect log posterior written directly from
  the paper's Eq. 2 over individual comparisons (no sufficient statistics, no rotation);
* :func:`posterior_mean_is` -- its posterior mean by self-normalised importance sampling from a
  multivariate Student-t centred at the MAP (found by scipy.optimize) with the Laplace covariance;
* :func:`simulate` -- comparisons drawn from known abilities.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import optimize, stats
from scipy.special import expit, log_expit


def log_posterior(theta: np.ndarray, first, second, w1, w2, k: int) -> np.ndarray:
    """log p(theta | data) up to a constant; ``theta`` (..., k + 1) = (alpha_1..alpha_k, alpha0)."""
    theta = np.atleast_2d(theta)
    a, a0 = theta[:, :k], theta[:, k]
    x = a0[:, None] + a[:, first] - a[:, second]
    ll = (w1 * log_expit(x) + w2 * log_expit(-x)).sum(axis=1)
    return ll - 0.5 * (theta**2).sum(axis=1)


def posterior_mean_is(
    first, second, w1, w2, k: int, *, n: int = 100_000, seed: int = 0
) -> tuple[np.ndarray, float]:
    """Posterior mean of (alpha_1..alpha_k, alpha0) and the importance-sampling ESS."""
    first, second = np.asarray(first), np.asarray(second)
    w1, w2 = np.asarray(w1, float), np.asarray(w2, float)

    def nlp(t):
        return -log_posterior(t, first, second, w1, w2, k)[0]

    def grad(t):
        a, a0 = t[:k], t[k]
        x = a0 + a[first] - a[second]
        r = w1 * expit(-x) - w2 * expit(x)  # d ll / d x
        g = np.zeros(k + 1)
        np.add.at(g, first, r)
        np.add.at(g, second, -r)
        g[k] = r.sum()
        return -(g - t)

    opt = optimize.minimize(nlp, np.zeros(k + 1), jac=grad, method="BFGS", options={"gtol": 1e-9})
    # Hessian of the negative log posterior at the MAP (closed form)
    a, a0 = opt.x[:k], opt.x[k]
    x = a0 + a[first] - a[second]
    s = (w1 + w2) * expit(x) * expit(-x)
    D = np.zeros((len(x), k + 1))
    D[np.arange(len(x)), first] += 1
    D[np.arange(len(x)), second] -= 1
    D[:, k] = 1
    H = D.T @ (s[:, None] * D) + np.eye(k + 1)
    cov = np.linalg.inv(H)
    prop = stats.multivariate_t(loc=opt.x, shape=1.5 * cov, df=6, seed=seed)
    draws = prop.rvs(n)
    logw = log_posterior(draws, first, second, w1, w2, k) - prop.logpdf(draws)
    w = np.exp(logw - logw.max())
    w /= w.sum()
    return w @ draws, float(1.0 / (w**2).sum())


def simulate(
    n_groups: int,
    n_per_group: int,
    *,
    agents=("A", "B", "C"),
    alpha0_sd: float = 1.0,
    seed: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Comparisons from abilities drawn from the model's own prior (alpha ~ N(0, 1), alpha0 ~
    N(0, alpha0_sd)); returns (comparisons, truth with item, agent, alpha, alpha0)."""
    rng = np.random.default_rng(seed)
    k = len(agents)
    alpha = rng.normal(size=(n_groups, k))
    alpha0 = rng.normal(scale=alpha0_sd, size=n_groups)
    rows = []
    for g in range(n_groups):
        for c in range(n_per_group):
            i, j = rng.choice(k, size=2, replace=False)
            p = expit(alpha0[g] + alpha[g, i] - alpha[g, j])
            rows.append(
                {
                    "item": f"item{g:04d}",
                    "attribute": "quality",
                    "rater": f"r{c}",
                    "first": agents[i],
                    "second": agents[j],
                    "outcome": "first" if rng.random() < p else "second",
                }
            )
    truth = pd.DataFrame(
        {
            "item": np.repeat([f"item{g:04d}" for g in range(n_groups)], k),
            "agent": np.tile(list(agents), n_groups),
            "alpha": alpha.reshape(-1),
            "alpha0": np.repeat(alpha0, k),
        }
    )
    return pd.DataFrame(rows), truth
