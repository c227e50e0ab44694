"""Simulation (issue 21): two "models" with known per-item accuracies and a chosen correlation
answer the same items; the paired test holds its level at equal accuracy and has more power
than comparing two independent intervals.

Items: each item ``i`` has an ease ``z_i ~ N(0, 1)``; model ``m`` gets it right when
``√r·z_i + √(1−r)·e_mi < Φ⁻¹(p_m)`` (``e`` independent N(0, 1)), so its accuracy on item ``i``
is ``Φ((Φ⁻¹(p_m) − √r·z_i)/√(1−r))`` and ``p_m`` over items; ``r`` (0.6) makes the two models'
outcomes correlated through the items (phi ≈ 0.4).  Per-item 0/1 outcomes (MCQ, AIA): the
exact McNemar test vs "the two Wilson 95% intervals do not overlap".  Three rows per question
(MIA): the question-clustered paired t test vs "the two clustered 95% intervals do not
overlap".  ``python -m tests.compare.test_simulation`` prints the table for RESULTS.md.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from edueval import stats
from edueval.compare import Arm, compare

ALPHA = 0.05
REPS = 4000
R = 0.6


def _outcomes(rng, reps, n, p, rows=1):
    """0/1 outcomes, shape (2, reps, n, rows): two models, ``rows`` per item sharing its ease."""
    ease = rng.normal(size=(reps, n, 1))
    cut = sps.norm.ppf(np.asarray(p, dtype=float))[:, None, None, None]
    noise = rng.normal(size=(2, reps, n, rows))
    return (np.sqrt(R) * ease[None] + np.sqrt(1 - R) * noise < cut).astype(int)


def _binary(rng, n, p, reps=REPS):
    x = _outcomes(rng, reps, n, p)[..., 0]
    a, b = x[0], x[1]
    n10, n01 = ((a == 1) & (b == 0)).sum(1), ((a == 0) & (b == 1)).sum(1)
    paired = stats.sign_test(n10, n01, "two-sided") < ALPHA
    la, ha = stats.wilson_interval(a.sum(1), n, ALPHA)
    lb, hb = stats.wilson_interval(b.sum(1), n, ALPHA)
    apart = (la > hb) | (lb > ha)
    phi = np.nanmean([stats.pearson(a[i], b[i]) for i in range(min(reps, 300))])
    return paired.mean(), apart.mean(), phi


def _t_interval(sums, n_rows):
    est = stats.cr1_mean(sums, np.full(sums.shape, float(n_rows)))
    q = sps.t.ppf(1 - ALPHA / 2, est.df)
    return est.mean - q * est.se, est.mean + q * est.se


def _clustered(rng, g, p, reps=REPS, rows=3):
    x = _outcomes(rng, reps, g, p, rows)
    d = (x[0] - x[1]).sum(-1).astype(float)  # per-question sums of the paired differences
    est = stats.cr1_mean(d, np.full(d.shape, float(rows)))
    pval = 2 * sps.t.sf(np.abs(est.mean / est.se), est.df)
    paired = np.where(np.isfinite(pval), pval, 1.0) < ALPHA
    la, ha = _t_interval(x[0].sum(-1).astype(float), rows)
    lb, hb = _t_interval(x[1].sum(-1).astype(float), rows)
    apart = (la > hb) | (lb > ha)
    return paired.mean(), apart.mean(), np.nan


def simulate(reps: int = REPS, seed: int = 0) -> pd.DataFrame:
    """The table: rejection rates of the paired test and of non-overlapping intervals."""
    rng = np.random.default_rng(seed)
    rows = []
    for kind, n, p in (("per item (McNemar)", 50, (0.6, 0.6)), ("per item (McNemar)", 200, (0.6, 0.6)),
                       ("per item (McNemar)", 50, (0.75, 0.6)), ("per item (McNemar)", 200, (0.68, 0.6)),
                       ("3 rows per question (clustered t)", 50, (0.5, 0.5)),
                       ("3 rows per question (clustered t)", 200, (0.5, 0.5)),
                       ("3 rows per question (clustered t)", 50, (0.6, 0.5)),
                       ("3 rows per question (clustered t)", 200, (0.55, 0.5))):  # fmt: skip
        f = _binary if kind.startswith("per item") else _clustered
        paired, apart, phi = f(rng, n, p, reps)
        rows.append({"outcome": kind, "items": n, "accuracy A": p[0], "accuracy B": p[1],
                     "paired test rejects": paired, "Wilson/clustered CIs apart": apart,
                     "phi": phi})  # fmt: skip
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def table():
    return simulate()


def test_type_one_error_of_the_paired_tests_is_at_most_alpha(table):
    mc_se = np.sqrt(ALPHA * (1 - ALPHA) / REPS)
    null = table[table["accuracy A"] == table["accuracy B"]]
    assert len(null) == 4
    assert (null["paired test rejects"] <= ALPHA + 2 * mc_se).all(), null


def test_paired_tests_are_more_powerful_than_two_independent_intervals(table):
    alt = table[table["accuracy A"] != table["accuracy B"]]
    assert len(alt) == 4
    assert (alt["paired test rejects"] > alt["Wilson/clustered CIs apart"] + 0.1).all(), alt


def test_compare_gives_the_simulations_p_value():
    """The vectorised simulation tests what :func:`compare` computes."""
    rng = np.random.default_rng(9)
    x = _outcomes(rng, 1, 60, (0.7, 0.6))[:, 0, :, 0]
    arms = [Arm(name, pd.DataFrame({"metric": "mcq", "unit": list(map(str, range(60))),
                                    "cluster": list(map(str, range(60))), "correct": x[i],
                                    "status": "ok"})) for i, name in enumerate("AB")]  # fmt: skip
    d = compare(arms, reference="B").differences.iloc[0]
    n10, n01 = int(((x[0] == 1) & (x[1] == 0)).sum()), int(((x[0] == 0) & (x[1] == 1)).sum())
    assert d["p"] == stats.sign_test(n10, n01, "two-sided")


if __name__ == "__main__":  # the table for RESULTS.md
    out = simulate()
    print(f"{REPS} simulated studies per row, alpha {ALPHA}, latent item correlation {R}")
    print(out.to_markdown(index=False, floatfmt=".3f"))
