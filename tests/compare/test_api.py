"""``edueval.compare`` in memory: on MalAlgoEvaluation objects (their estimates are the
evaluation's own numbers), the failure rule, the same-items check, the reference rule, and the
QG-SMS adapter on a judgements table."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import edueval.compare as compare_pkg
from edueval import stats
from edueval.compare import Arm, compare, qgsms_units
from edueval.io import InputError
from edueval.malalgo import evaluate
from edueval.misconceptions import generate_items
from edueval.models import get_model
from support.scripted_server import ScriptedServer, last_user_message

from .scripts import oracle_script


@pytest.fixture(scope="module")
def evaluations(tmp_path_factory):
    """Three models on 8 questions: the oracle, always "A", and the oracle that cannot answer
    (not JSON) on the last question."""
    q = generate_items(8, seed=11)
    oracle = oracle_script(q)
    last = q["question"].iloc[-1].strip()

    def script(body):
        if body["model"] == "always-a":
            return '{"Correct Choice": "A"}'
        if body["model"] == "flaky" and last in last_user_message(body):
            return "no idea"
        return oracle(body)

    cache = tmp_path_factory.mktemp("cache")
    out = {}
    with ScriptedServer(script) as server:
        for name in ("oracle", "always-a", "flaky"):

            def opener(log_path, name=name):
                return get_model(f"openai/{name}", base_url=server.url, cache_dir=cache,
                                 log_path=log_path, max_attempts=2, retry_base_delay=0.001)  # fmt: skip

            out[name] = evaluate(q, opener, max_failures="50%")
            out[name].params["model"] = name
    return out


def test_estimates_are_the_evaluations_own_numbers(evaluations):
    res = compare_pkg(list(evaluations.values()))  # the package is callable, as the issue has it
    assert res.names == ["oracle", "always-a", "flaky"]  # named by the model, which differs
    for name, ev in evaluations.items():
        for m in ("mcq", "aia", "mia"):
            e = res.estimates[(res.estimates["run"] == name) & (res.estimates["metric"] == m)]
            a = getattr(ev, m)
            e = e.iloc[0]
            assert (e["n"], e["correct"], e["failed"], e["unparseable"]) == (
                a.n, a.correct, a.failed, a.unparseable)  # fmt: skip
            lo, hi = (
                (a.ci_low_clustered, a.ci_high_clustered) if m == "mia" else (a.ci_low, a.ci_high)
            )
            assert (e["ci_low"], e["ci_high"]) == (lo, hi)
    assert set(res.reference.values()) == {"oracle"}
    text = res.summary()
    assert "MIA (incorrect choices)" in text and "oracle (ref)" in text
    assert "count as wrong answers" in text
    assert len(res.to_frame()) == 9 and len(res.discordant) == 6


def test_failures_counted_as_wrong_or_excluded_pairwise(evaluations):
    ev = [evaluations["oracle"], evaluations["flaky"]]
    wrong = compare(ev, names=["oracle", "flaky"], reference="oracle")
    excl = compare(ev, names=["oracle", "flaky"], reference="oracle", failures="exclude")
    w = wrong.differences.set_index("metric")
    x = excl.differences.set_index("metric")
    # the flaky model's last question: 1 MCQ, 1 AIA, 3 MIA prompts unparseable
    assert list(w.loc[["mcq", "aia", "mia"], "failed_either"]) == [1, 1, 3]
    assert list(w.loc[["mcq", "aia", "mia"], "reference_only"]) == [1, 1, 3]
    assert list(x.loc[["mcq", "aia", "mia"], "excluded"]) == [1, 1, 3]
    assert list(x.loc[["mcq", "aia", "mia"], "reference_only"]) == [0, 0, 0]
    assert list(x.loc[["mcq", "aia", "mia"], "n"]) == [7, 7, 21]
    est = excl.estimates.set_index(["run", "metric"])
    assert est.loc[("flaky", "mcq"), "n"] == 7 and est.loc[("flaky", "mcq"), "unparseable"] == 1
    assert est.loc[("oracle", "mcq"), "n"] == 8
    assert "left out" in excl.summary()


def _units(n, correct, metric="mcq"):
    return pd.DataFrame({"metric": metric, "unit": [str(i) for i in range(n)],
                         "cluster": [str(i) for i in range(n)], "correct": correct,
                         "status": "ok"})  # fmt: skip


def test_different_items_are_refused_unless_allow_subset():
    a = Arm("a", _units(10, [1] * 10))
    b = Arm("b", _units(8, [0] * 8))
    with pytest.raises(InputError, match="not on the same items.*allow_subset"):
        compare([a, b])
    res = compare([a, b], allow_subset=True)
    assert res.dropped["mcq"] == {"a": 2, "b": 0}
    d = res.differences.iloc[0]
    assert (d["n"], d["run"], d["reference"], d["reference_only"]) == (8, "b", "a", 8)
    assert d["p"] == pytest.approx(stats.sign_test(0, 8, "two-sided"))


def test_reference_best_per_metric_or_given_and_holm_per_metric():
    rng = np.random.default_rng(0)
    arms = [Arm(n, pd.concat([_units(40, (rng.random(40) < p).astype(int)),
                              _units(40, (rng.random(40) < 1 - p).astype(int), "aia")]))
            for n, p in (("x", 0.3), ("y", 0.8), ("z", 0.5))]  # fmt: skip
    res = compare(arms)
    assert res.reference == {"mcq": "y", "aia": "x"}
    fixed = compare(arms, reference="z")
    assert fixed.reference == {"mcq": "z", "aia": "z"} and fixed.fixed_reference
    for m in ("mcq", "aia"):
        d = fixed.differences[fixed.differences["metric"] == m]
        np.testing.assert_allclose(d["p_holm"], stats.holm(d["p"]))
    with pytest.raises(InputError, match="not one of the runs"):
        compare(arms, reference="nope")
    with pytest.raises(InputError, match="at least two"):
        compare(arms[:1])
    with pytest.raises(InputError, match="failures"):
        compare(arms, failures="drop")


def test_detect_gives_items_needed_at_the_observed_discordance():
    a = Arm("a", _units(100, [1] * 60 + [0] * 40))
    b = Arm("b", _units(100, [1] * 50 + [0] * 10 + [1] * 10 + [0] * 30))
    res = compare([a, b], reference="a", detect=0.05)
    d = res.differences.iloc[0]
    assert (d["run_only"], d["reference_only"], d["discordance"]) == (10, 10, 0.2)
    assert d["needed"] == stats.mcnemar_items_needed(0.05, 0.2)
    assert d["detectable"] == pytest.approx(stats.mcnemar_detectable_difference(0.2, 100))
    assert "0.05 needs" in res.detectable_lines()[0]


def test_qgsms_judgements_become_two_arms_with_the_papers_counts():
    rows = []
    right = {
        "vanilla": [(1, 1), (1, 0), (0, 0), (1, 1)],
        "qg-sms": [(1, 1), (1, 1), (1, 1), (0, 1)],
    }
    for method, pairs in right.items():
        for i, orders in enumerate(pairs):
            for order, ok in zip((1, 2), orders, strict=True):
                rows.append({"method": method, "dimension": "DF", "pair_id": i, "order": order,
                             "correct": ok, "status": "ok"})  # fmt: skip
    rows[-1]["status"] = "failed"
    units = qgsms_units(pd.DataFrame(rows))
    arms = [Arm(m, u, {"method": m}) for m, u in units.items()]
    res = compare(arms, reference="vanilla")
    ca = res.differences[res.differences["metric"] == "CA"].iloc[0]
    # CA: vanilla right in both orders on pairs 0 and 3, qg-sms on 0, 1, 2
    assert (ca["run_only"], ca["reference_only"]) == (2, 1)
    aa = res.differences[res.differences["metric"] == "AA"].iloc[0]
    assert aa["n"] == 8 and aa["n_clusters"] == 4 and aa["difference"] == pytest.approx(2 / 8)
    est = res.estimates.set_index(["run", "metric"])
    assert est.loc[("qg-sms", "AA"), "failed"] == 1 and est.loc[("qg-sms", "CA"), "failed"] == 1


def test_a_results_object_plugs_in_through_comparison_units():
    class Methods:  # the protocol a results object implements (no import of edueval.compare)
        def comparison_units(self):
            return pd.concat(
                [
                    _units(20, [1] * 15 + [0] * 5).assign(arm="m1"),
                    _units(20, [1] * 10 + [0] * 10).assign(arm="m2"),
                ]
            )

        def comparison_labels(self):
            return {"model": "x", "m1": {"method": "m1"}, "m2": {"method": "m2"}}

    res = compare([Methods()])
    assert res.names == ["m1", "m2"] and res.reference["mcq"] == "m1"
    assert json.dumps(res.as_dict(), default=str)


def test_a_qgsms_like_results_object_plugs_in_through_its_judgements():
    rows = [{"method": m, "dimension": "DC", "pair_id": i, "order": o, "correct": int(ok),
             "status": "ok"}
            for m, p in (("vanilla", 0.5), ("qg-sms", 0.8)) for i in range(30) for o in (1, 2)
            for ok in [((i * 7 + o) % 10) / 10 < p]]  # fmt: skip

    class QGSMSLike:
        judgements = pd.DataFrame(rows)
        params = {"model": "openai/x", "methods": ["vanilla", "qg-sms"]}

    res = compare([QGSMSLike()], reference="vanilla")
    assert res.names == ["vanilla", "qg-sms"] and set(res.metrics) == {"CA", "AA"}
    assert res.runs.columns.tolist() == ["run", "method"]
