"""``--method ml``: equal to choix, standard errors equal to statsmodels' on the same model."""

from __future__ import annotations

import json

import choix
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from edueval.pairwise import BradleyTerry
from edueval.pairwise.ml import fit_ml_design

from .cj_data import cj_study


def _choix_data(df: pd.DataFrame, agents: list[str]) -> list[tuple[int, int]]:
    idx = {a: k for k, a in enumerate(agents)}
    f, s = df["first"].map(idx).to_numpy(), df["second"].map(idx).to_numpy()
    won = (df["outcome"] == "first").to_numpy()
    return [(a, b) if w else (b, a) for a, b, w in zip(f, s, won, strict=True)]


@pytest.fixture(scope="module")
def study():
    df, _ = cj_study(3, n_random=0)
    model = BradleyTerry(df, ties="drop", seed=1)
    return df, model, list(model.design.agents)


def test_plain_ml_equals_choix_ilsr(study):
    """No order effect, no penalty, sum-to-zero: choix's I-LSR ML estimate, to 1e-6."""
    df, model, agents = study
    ours = model.fit_ml(order_effect=False, split_half_repeats=1)
    theirs = choix.ilsr_pairwise(len(agents), _choix_data(df, agents), tol=1e-12, max_iter=500)
    est = ours.abilities.set_index("agent").loc[agents, "alpha_mean"].to_numpy()
    assert np.abs(est.sum()) < 1e-9  # sum-to-zero identification, as choix's centred estimates
    np.testing.assert_allclose(est, theirs, atol=1e-6, rtol=0)
    assert ours.groups["converged"].all() and ours.groups["ml_exists"].all()


def test_penalised_ml_equals_choix_opt_with_alpha_half_the_ridge(study):
    df, model, agents = study
    ridge = 0.3
    est = fit_ml_design(model.design, ridge=ridge, order_effect=False).alpha[0]
    theirs = choix.opt_pairwise(
        len(agents), _choix_data(df, agents), alpha=ridge / 2, method="Newton-CG", tol=1e-12
    )
    np.testing.assert_allclose(est, theirs, atol=1e-6, rtol=0)


def test_order_effect_is_zero_on_mirrored_data_and_abilities_equal_choix(study):
    """Every judgement also shown in the other order with the same winner: alpha0-hat is 0 and
    the abilities are choix's (which has no order effect) on the doubled data."""
    df, _, agents = study
    mirror = df.rename(columns={"first": "second", "second": "first"})
    mirror["outcome"] = df["outcome"].map({"first": "second", "second": "first"})
    both = pd.concat([df, mirror], ignore_index=True)
    res = BradleyTerry(both, ties="drop").fit_ml(split_half_repeats=1)
    assert abs(res.groups["alpha0"].iloc[0]) < 1e-9
    theirs = choix.ilsr_pairwise(len(agents), _choix_data(both, agents), tol=1e-12, max_iter=500)
    est = res.abilities.set_index("agent").loc[agents, "alpha_mean"].to_numpy()
    np.testing.assert_allclose(est, theirs, atol=1e-6, rtol=0)


def test_standard_errors_equal_statsmodels_logit_mapped_to_sum_to_zero():
    """The same model as a logistic regression (agent 0 the reference, a constant for alpha0),
    fitted by statsmodels; its covariance mapped to sum-to-zero abilities gives our SEs."""
    df, _ = cj_study(5, n_objects=8, n_raters=10, per_rater=30, n_random=0, order_effect=0.4)
    res = BradleyTerry(df, ties="drop").fit_ml(split_half_repeats=1)
    agents = list(res.design.agents)
    k = len(agents)
    idx = {a: q for q, a in enumerate(agents)}
    X = np.zeros((len(df), k))
    X[np.arange(len(df)), df["first"].map(idx)] += 1
    X[np.arange(len(df)), df["second"].map(idx)] -= 1
    X = np.column_stack([np.ones(len(df)), X[:, 1:]])  # alpha0, alpha_1..alpha_{k-1}
    y = (df["outcome"] == "first").to_numpy(float)
    fit = sm.Logit(y, X).fit(disp=0, tol=1e-12, maxiter=200)
    # theta = (0, phi) centred: theta = A phi
    A = np.vstack([np.zeros(k - 1), np.eye(k - 1)])
    A = A - A.mean(axis=0)
    cov_theta = A @ fit.cov_params()[1:, 1:] @ A.T
    ab = res.abilities.set_index("agent").loc[agents]
    np.testing.assert_allclose(ab["alpha_mean"], A @ fit.params[1:], atol=1e-7)
    np.testing.assert_allclose(ab["alpha_se"], np.sqrt(np.diag(cov_theta)), rtol=1e-6)
    g = res.groups.iloc[0]
    assert g["alpha0"] == pytest.approx(fit.params[0], abs=1e-7)
    assert g["alpha0_se"] == pytest.approx(fit.bse[0], rel=1e-6)


def test_no_finite_ml_is_reported_not_invented():
    """An agent that wins every comparison has no finite ML ability: NaN and a warning; a ridge
    gives finite MAP estimates."""
    rows = [("i", "q", f"r{n}", "A", "B", "first") for n in range(4)]
    rows += [("i", "q", f"r{n}", "B", "C", "first" if n % 2 else "second") for n in range(6)]
    rows += [("i", "q", "r9", "A", "C", "first")]
    df = pd.DataFrame(rows, columns=["item", "attribute", "rater", "first", "second", "outcome"])
    res = BradleyTerry(df, ties="drop").fit_ml(order_effect=False, split_half_repeats=1)
    assert not res.groups["ml_exists"].iloc[0]
    assert res.abilities["alpha_mean"].isna().all()
    assert res.warnings() and "ridge" in res.warnings()[0]
    pen = BradleyTerry(df, ties="drop").fit_ml(ridge=1.0, order_effect=False, split_half_repeats=1)
    assert pen.abilities["alpha_mean"].notna().all()
    assert pen.abilities.set_index("agent").loc["A", "alpha_mean"] > 0


def test_many_groups_with_different_agents(study):
    """Groups fitted together equal groups fitted alone."""
    a, _ = cj_study(1, n_objects=5, n_raters=4, per_rater=20, n_random=0)
    b, _ = cj_study(2, n_objects=9, n_raters=4, per_rater=30, n_random=0)
    b["item"] = "other"
    together = BradleyTerry(pd.concat([a, b]), ties="drop").fit_ml(split_half_repeats=1)
    alone = BradleyTerry(b, ties="drop").fit_ml(split_half_repeats=1)
    t = together.abilities[together.abilities["item"] == "other"].set_index("agent")
    np.testing.assert_allclose(
        t.loc[alone.abilities["agent"], "alpha_mean"], alone.abilities["alpha_mean"], atol=1e-8
    )
    assert len(together.abilities) == 5 + 9


def test_cli_method_ml(cli, write, tmp_path):
    df, _ = cj_study(4)
    path = write("cj.csv", df.to_csv(index=False))
    out = tmp_path / "ml"
    res = cli("pairwise", "fit", path, "--method", "ml", "--out", out, "--ties", "drop")
    assert res.code == 0, res.err
    results = json.loads((out / "results.json").read_text())
    assert results["method"] == "ml" and results["n_ml_missing"] == 0
    assert set(results["raters_misfit"]) == {"r00", "r01"}
    ab = pd.read_csv(out / "abilities.csv")
    assert {"alpha_mean", "alpha_se", "infit", "outfit", "ssr", "split_half"} <= set(ab.columns)
    assert (out / "raters.csv").exists() and "Reliability" in (out / "report.html").read_text()
    bad = cli("pairwise", "fit", path, "--method", "bogus", "--out", tmp_path / "x")
    assert bad.code == 2 and "method" in bad.err
    bad = cli("pairwise", "fit", path, "--method", "ml", "--save-draws", "--out", tmp_path / "y")
    assert bad.code == 2 and "--save-draws" in bad.err


def test_warm_start_reaches_the_same_optimum(study):
    _, model, _ = study
    cold = fit_ml_design(model.design, ridge=0.1)
    rng = np.random.default_rng(0)
    warm = fit_ml_design(model.design, ridge=0.1, init=rng.normal(size=cold.alpha.shape))
    np.testing.assert_allclose(warm.alpha, cold.alpha, atol=1e-9)
    np.testing.assert_allclose(warm.se, cold.se, rtol=1e-7)
