"""The Pardos & Yudelson study: internal consistency on a small run; main findings at full size."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from edueval.kt.commands.study_report import discussion, study_report
from edueval.kt.replication.study import StudyConfig, simulate_study


@pytest.fixture(scope="module")
def small():
    return simulate_study(StudyConfig(n_students=150, n_skills=12, n_opportunities=20, seed=3))


def test_shapes_and_true_set(small):
    s = small.scores
    assert len(s) == 12 * 16 and set(s["set"]) >= {"true", "typical1", "random0"}
    assert (s["perf_loglik"] < 0).all()
    # the same 15 non-true sets in every skill
    assert len(small.candidates) == 15


def test_table2_is_pearson_over_non_true_sets(small):
    d = small.scores[small.scores["set"] != "true"]
    t2 = small.table2.set_index("metric")
    r, p = stats.pearsonr(d["perf_recall"], d["mol_mad"])
    assert t2.loc["recall", "r_perf_mad"] == pytest.approx(r, abs=1e-12)
    assert t2.loc["recall", "p_perf_mad"] == pytest.approx(p, rel=1e-9)
    # AIC = -2 LL + const within the study, so their correlations are exact negatives
    for col in ("r_perf_know", "r_perf_mad", "r_know_mad"):
        sign = 1 if col == "r_perf_know" else -1
        assert t2.loc["aic", col] == pytest.approx(sign * t2.loc["loglik", col], abs=1e-12)


def test_table3_ranks(small):
    t3 = small.table3.set_index("metric")
    wide = small.scores.pivot(index="skill", columns="set", values="perf_loglik")
    first = int((wide.idxmax(axis=1) == "true").sum())
    assert t3.loc["loglik", "n_true_first"] == first
    assert 1 <= t3.loc["rmse", "mean_rank_true"] <= 16


def test_reproducible():
    a = simulate_study(StudyConfig(n_students=40, n_skills=4, n_opportunities=10, seed=9))
    b = simulate_study(StudyConfig(n_students=40, n_skills=4, n_opportunities=10, seed=9))
    assert a.scores.equals(b.scores)


def test_report_renders(small):
    html = study_report(small, None).render()
    assert "Table 2" in html and "data:image/png;base64" in html
    assert len(discussion(small)) >= 6


@pytest.mark.slow
def test_full_size_main_findings():
    """Paper size: the true set ranks first by log-likelihood and RMSE in most skills, and
    recall / F-measure / accuracy are tied to MoL error far more than AUC."""
    r = simulate_study(StudyConfig())
    t3 = r.table3.set_index("metric")
    t2 = r.table2.set_index("metric")
    assert t3.loc["loglik", "n_true_first"] >= 80 and t3.loc["rmse", "n_true_first"] >= 80
    for m in ("recall", "f1", "accuracy"):
        assert t2.loc[m, "r_perf_mad"] < -0.4
        assert abs(t2.loc[m, "r_perf_mad"]) > 2 * abs(t2.loc["auc", "r_perf_mad"])
    assert np.isfinite(t2.values[:, 1:].astype(float)).all()
