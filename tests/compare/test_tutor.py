"""``edueval compare`` on ``tutor reply`` runs: two scripted "models" reply to the same dialogues;
each run's mean F1 is the mean of its ``replies.csv`` (a failed call or an empty reply as 0), the
paired difference equals statsmodels' OLS with dialogue-clustered SEs on the per-turn
differences, and ``compare([rep_a, rep_b])`` on the in-memory results gives the same numbers."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from edueval.compare import compare, tutor_units
from edueval.io import InputError
from edueval.models import get_model
from support.scripted_server import Faults, ScriptedServer, last_user_message

MODELS = ("openai/A", "openai/B")


def _dialogue(i: int, exchanges: int) -> dict:
    turns = []
    for k in range(exchanges):
        turns.append({"speaker": "student", "text": f"In problem {i}.{k} I added {i} and {k}."})
        teacher = f"Why did you add {i} and {k}? Show me problem {i}.{k} again."
        turns.append({"speaker": "teacher", "text": teacher})
    if i == 1:
        turns[2]["text"] = "hmm I do not know"  # model A replies nothing to this turn
    if i == 4:
        turns[0]["text"] = "FAIL " + turns[0]["text"]  # model B's call fails (HTTP 400)
    return {"id": f"d{i}", "turns": turns}


@pytest.fixture(scope="module")
def dialogues(tmp_path_factory):
    path = tmp_path_factory.mktemp("dlg") / "dialogues.jsonl"
    rows = [_dialogue(i, n) for i, n in enumerate([3, 1, 2, 3, 2, 1, 2], start=1)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _script(body):
    """``A`` echoes the student's words with a question ("" to "hmm ..."); ``B`` asks to see
    the problem again, naming it (close to the teacher) in even-numbered dialogues."""
    student = last_user_message(body)
    if body["model"] == "A":
        return "" if student.startswith("hmm") else f"Why? {student}"
    found = re.search(r"problem (\d+)\.(\d+)", student)
    if found and int(found.group(1)) % 2 == 0:
        return f"Why did you add them? Show me problem {found.group(0).split()[1]} again."
    return "Can you show me again?"


def _fault(body, nth):
    """``B``'s call on a "FAIL ..." turn: HTTP 400, a permanent error (no retry)."""
    return "400" if body["model"] == "B" and last_user_message(body).startswith("FAIL") else None


FAULTS = Faults(rule=_fault)


@pytest.fixture(scope="module")
def runs(tmp_path_factory, dialogues):
    """The two ``tutor reply`` runs, their comparison, and the same replies in memory."""
    from edueval.cli.main import main
    from edueval.tutor import reply

    tmp = tmp_path_factory.mktemp("runs")
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_API_KEY", "test-key")
    mp.setenv("EDUEVAL_CACHE_DIR", str(tmp / "cache"))
    try:
        with ScriptedServer(_script, faults=FAULTS) as server:
            for m in MODELS:
                code = main(["tutor", "reply", str(dialogues), "--model", m, "--base-url",
                             server.url, "--max-failures", "2",
                             "--out", str(tmp / m[-1])])  # fmt: skip
                assert code == 0
            mem = [reply(dialogues, lambda log_path, m=m: get_model(
                m, base_url=server.url, cache_dir=tmp / "mem-cache", log_path=log_path,
                max_attempts=1), model_name=m, max_failures=2) for m in MODELS]  # fmt: skip
        code = main(["compare", str(tmp / "A"), str(tmp / "B"), "--out", str(tmp / "cmp")])
        assert code == 0
    finally:
        mp.undo()
    return tmp, mem


def _per_turn(path) -> pd.DataFrame:
    t = pd.read_csv(path / "replies.csv", dtype={"dialogue": str})
    t["score"] = t["f1"].where(t["status"].isin(["ok", "degenerate"]), 0.0)
    return t


def _ols_clustered(d: np.ndarray, groups: np.ndarray):
    import statsmodels.api as sm

    fit = sm.OLS(d, np.ones((len(d), 1))).fit(cov_type="cluster", cov_kwds={"groups": groups},
                                              use_t=True)  # fmt: skip
    lo, hi = fit.conf_int(0.05)[0]
    return fit.params[0], fit.bse[0], lo, hi, fit.pvalues[0]


def test_compare_tutor_runs_equals_replies_and_clustered_ols(runs):
    tmp, _ = runs
    a, b = _per_turn(tmp / "A"), _per_turn(tmp / "B")
    assert (a["status"] == "empty").sum() == 1 and (b["status"] == "failed").sum() == 1
    assert a[["dialogue", "turn"]].equals(b[["dialogue", "turn"]])
    res = json.loads((tmp / "cmp" / "results.json").read_text())
    assert set(res["metrics"]) == {"f1"} and res["metrics"]["f1"]["cluster"] == "dialogues"
    est = pd.DataFrame(res["estimates"]).set_index("run")
    assert list(est.index) == list(MODELS)  # rows named by the differing setting: the model
    for m, t in zip(MODELS, (a, b), strict=True):
        assert est.loc[m, "estimate"] == pytest.approx(t["score"].mean(), abs=1e-12)
        assert est.loc[m, "n"] == len(t) and est.loc[m, "n_clusters"] == t["dialogue"].nunique()
    assert est.loc["openai/A", "unparseable"] == 1 and est.loc["openai/B", "failed"] == 1
    # each run's interval: the same OLS on its own scores
    for m, t in zip(MODELS, (a, b), strict=True):
        mean, _, lo, hi, _ = _ols_clustered(t["score"].to_numpy(), t["dialogue"].to_numpy())
        assert (est.loc[m, "ci_low"], est.loc[m, "ci_high"]) == pytest.approx(
            (max(lo, 0), min(hi, 1)), abs=1e-10)  # fmt: skip
    ref = res["reference"]["f1"]
    assert ref == max(MODELS, key=lambda m: est.loc[m, "estimate"])
    run, x, y = ("openai/B", b, a) if ref == "openai/A" else ("openai/A", a, b)
    d = x["score"].to_numpy() - y["score"].to_numpy()
    mean, se, lo, hi, p = _ols_clustered(d, a["dialogue"].to_numpy())
    diff = res["differences"][0]
    assert diff["run"] == run and diff["n"] == len(d) and diff["failed_either"] == 2
    got = [diff[k] for k in ("difference", "se", "ci_low", "ci_high", "p")]
    assert got == pytest.approx([mean, se, lo, hi, p], abs=1e-10)
    assert diff["df"] == a["dialogue"].nunique() - 1
    assert (diff["run_only"], diff["reference_only"]) == (int((d > 0).sum()), int((d < 0).sum()))
    html = (tmp / "cmp" / "report.html").read_text()
    assert "Token F1" in html and "F1 0" in html


def test_in_memory_compare_gives_the_same_numbers(runs):
    tmp, mem = runs
    res = json.loads((tmp / "cmp" / "results.json").read_text())
    cmp = compare(mem)
    assert cmp.names == list(MODELS)
    for table, written in ((cmp.estimates, res["estimates"]),
                           (cmp.differences, res["differences"])):  # fmt: skip
        want = pd.DataFrame(written)
        for col in ("n", "estimate", "ci_low", "ci_high", "failed", "unparseable"):
            if col in table:
                assert table[col].tolist() == pytest.approx(want[col].tolist(), abs=1e-12), col
    d = cmp.differences.iloc[0]
    w = res["differences"][0]
    for k in ("difference", "se", "ci_low", "ci_high", "p", "p_holm", "detectable"):
        assert d[k] == pytest.approx(w[k], abs=1e-12), k
    assert "Token F1" in cmp.summary() and "F1 0" in cmp.summary()


def test_exclude_drops_failed_and_empty_pairwise(runs):
    tmp, mem = runs
    cmp = compare(mem, failures="exclude")
    a, b = _per_turn(tmp / "A"), _per_turn(tmp / "B")
    ok = a["status"].isin(["ok", "degenerate"]) & b["status"].isin(["ok", "degenerate"])
    est = cmp.estimates.set_index("run")
    assert est.loc["openai/A", "estimate"] == pytest.approx(a.loc[a["f1"].notna(), "f1"].mean())
    assert est.loc["openai/A", "excluded"] == 1 and est.loc["openai/B", "excluded"] == 1
    d = cmp.differences.iloc[0]
    assert d["n"] == int(ok.sum()) and d["excluded"] == 2
    sign = 1 if d["run"] == "openai/A" else -1
    want = _ols_clustered(sign * (a.loc[ok, "f1"].to_numpy() - b.loc[ok, "f1"].to_numpy()),
                          a.loc[ok, "dialogue"].to_numpy())  # fmt: skip
    assert [d["difference"], d["se"], d["p"]] == pytest.approx(
        [want[0], want[1], want[4]], abs=1e-10)  # fmt: skip


def test_different_targets_or_dialogues_are_refused(runs, tmp_path, dialogues, cli, monkeypatch):
    tmp, mem = runs
    fewer = mem[1].replies.iloc[:-1]
    with pytest.raises(InputError, match="not on the same items"):
        compare([mem[0].replies.pipe(tutor_units), fewer.pipe(tutor_units)])
    cmp = compare([tutor_units(mem[0].replies), tutor_units(fewer)], allow_subset=True)
    assert cmp.differences.iloc[0]["n"] == len(fewer)
    # a run on other dialogues: refused from config.json's input SHA-256, in one line
    other = tmp_path / "other.jsonl"
    other.write_text(dialogues.read_text().replace("problem 1.0", "problem 9.9"))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("EDUEVAL_CACHE_DIR", str(tmp_path / "cache"))
    with ScriptedServer(_script, faults=FAULTS) as server:
        r = cli("tutor", "reply", other, "--model", "openai/A", "--base-url", server.url,
                "--max-failures", "2", "--out", tmp_path / "other")  # fmt: skip
    assert r.code == 0, r.err
    r = cli("compare", tmp / "A", tmp_path / "other", "--out", tmp_path / "cmp")
    assert r.code == 2 and len(r.err_lines) == 1 and "other dialogues" in r.err


def test_scores_outside_0_1_are_refused():
    units = pd.DataFrame({"dialogue": ["d1"], "turn": [1], "status": ["ok"], "f1": [1.5]})
    with pytest.raises(InputError, match="score in"):
        compare([tutor_units(units), tutor_units(units.assign(f1=0.5))])
