"""``edueval.qgsms.evaluate``: the in-memory API gives the numbers of ``qgsms run``'s
``results.json`` on the same pairs, items and options, writes nothing, prints nothing, checks a
pairs DataFrame as the run checks its file, and raises past the failure budget."""

from __future__ import annotations

import json
import math
import zlib

import pandas as pd
import pytest

from edueval.io import InputError
from edueval.models import FailureBudgetExceeded, get_model
from edueval.models.budget import MaxFailures
from edueval.qgsms import (
    METHODS,
    MethodConfig,
    PairAccuracy,
    QGSMSEvaluation,
    evaluate,
    run_qgsms,
    score,
)
from support.scripted_server import Faults, ScriptedServer, last_user_message

from . import test_qgsms as base
from .test_qgsms import _schema, make_script

room = base.room  # the module-scoped fixture: a simulated classroom, its pairs and items

METHODS_RUN = ["vanilla", "qg-sms", "direct"]
VERDICTS = ("verdict", "verdict_cot")


def _opener(server, cache):
    def opener(log_path):
        return get_model("openai/scripted", base_url=server.url, cache_dir=cache,
                         log_path=log_path, max_attempts=2,
                         retry_base_delay=0.001)  # fmt: skip

    return opener


def _mixed(room):
    """The perfect judge, its verdict flipped on about a third of the prompts (by a hash of the
    prompt: the same in every run), so that AA, CA and the sign tests are not trivial."""
    perfect = make_script(room)

    def script(body):
        text = perfect(body)
        if _schema(body).get("title") in VERDICTS and zlib.crc32(
            last_user_message(body).encode()
        ) % 3 == 0:  # fmt: skip
            answer = json.loads(text)
            answer["better"] = "b" if answer["better"] == "a" else "a"
            return json.dumps(answer)
        return text

    return script


def _fail_one(room):
    """Every call judging the first pair's first question against the second in order 1 fails
    (HTTP 500): a failed judgement, failed calls counted against the budget."""
    _, pairs, items = room
    first = pairs.iloc[0]
    a, b = items[first["q1"]]["text"], items[first["q2"]]["text"]

    def rule(body, nth):
        text = last_user_message(body)
        if _schema(body).get("title") == "verdict" and text.find(a) != -1 and text.find(b) != -1:
            return "500" if text.find(a) < text.find(b) else None
        return None

    return rule


def _close(got, want, where="results"):
    """``got`` (in memory) equals ``want`` (results.json) to 1e-12; a NaN or infinite number in
    memory is null there."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), (where, got, want)
        for k in want:
            _close(got[k], want[k], f"{where}.{k}")
    elif want is None:
        assert got is None or (isinstance(got, float) and not math.isfinite(got)), (where, got)
    elif isinstance(want, (int, float)) and not isinstance(want, bool):
        assert got == pytest.approx(want, abs=1e-12, rel=0, nan_ok=True), (where, got, want)
    else:
        assert got == want, (where, got, want)


def test_numbers_equal_the_run_folder_and_nothing_is_written(tmp_path, monkeypatch, capsys,
                                                             room):  # fmt: skip
    path, pairs, items = room
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    before = sorted(p.name for p in work.iterdir())
    limit = MaxFailures(count=20)
    records = [dict(v, choices=list(v["choices"])) for v in items.values()]
    with ScriptedServer(_mixed(room), faults=Faults(rule=_fail_one(room))) as server:
        res = evaluate(path / "small_pairs.csv", path / "items.jsonl",
                       model=_opener(server, tmp_path / "cache_path"), methods=METHODS_RUN,
                       bradley_terry=False, seed=3, max_failures=limit)  # fmt: skip
        with get_model("openai/scripted", base_url=server.url, cache_dir=tmp_path / "cache_obj",
                       max_attempts=2, retry_base_delay=0.001) as client:  # fmt: skip
            from_frames = evaluate(pairs, records, model=client, methods=METHODS_RUN,
                                   bradley_terry=False, seed=3, max_failures=20)  # fmt: skip
        assert sorted(p.name for p in work.iterdir()) == before
        assert capsys.readouterr() == ("", "")
        run_qgsms(tmp_path / "run", path / "small_pairs.csv", path / "items.jsonl",
                  methods=METHODS_RUN, open_model=_opener(server, tmp_path / "cache_run"),
                  model_name="scripted", bradley_terry=False, seed=3,
                  max_failures=limit)  # fmt: skip
    written = json.loads((tmp_path / "run" / "results.json").read_text())
    run_bound = ("seconds", "model_calls")  # the runs' own times and cache counts
    got = {k: v for k, v in res.results().items() if k not in run_bound}
    assert set(written) - set(res.results()) == {"status", "tables"}  # results.json's own
    _close(got, {k: written[k] for k in got})
    from_frames_got = {k: v for k, v in from_frames.results().items() if k not in run_bound}
    _close(from_frames_got, {k: written[k] for k in got})
    # the run's failures took part: failed calls, a failed judgement, within the budget
    assert res.n_failed == written["model_failures"]["failed"] > 0 and res.complete
    assert res.failed_judgements >= 1
    assert 0 < res.accuracy["vanilla"]["all"].AA < 1
    assert isinstance(res, QGSMSEvaluation) and isinstance(res.accuracy["qg-sms"]["DF"],
                                                           PairAccuracy)  # fmt: skip
    assert written["accuracy"]["vanilla"]["all"]["CA"] == res.accuracy["vanilla"]["all"].CA
    test = res.sign_tests["qg-sms", "CA", "all"]
    assert test.p_value == written["sign_tests"]["qg-sms/CA/all"]["p_value"]
    assert res.binomial_p["qg-sms", "all"] == written["binomial_p"]["qg-sms/all"]
    table = pd.read_csv(tmp_path / "run" / "judgements.csv")
    assert len(res.judgements) == len(table)
    assert list(res.judgements["correct"]) == list(table["correct"])
    cost = pd.read_csv(tmp_path / "run" / "cost.csv")
    assert list(res.cost["calls"]) == list(cost["calls"])
    frame = res.to_frame()
    assert list(frame.columns) == ["method", "dimension", "measure", "value"]
    row = frame[(frame["method"] == "vanilla") & (frame["dimension"] == "all")
                & (frame["measure"] == "AA")]  # fmt: skip
    assert row["value"].item() == written["accuracy"]["vanilla"]["all"]["AA"]
    text = res.summary()
    assert "qg-sms" in text and "CA" in text and "complete" in text
    again = score(res.judgements, bradley_terry=False)  # ``qgsms score`` in memory
    _close(again.metrics(), {k: v for k, v in res.metrics().items() if k != "cost"})
    assert "QG-SMS scores" in again.summary()


def test_past_the_budget_raises_with_the_counts_and_the_results(tmp_path, room):
    path, pairs, _ = room
    perfect = make_script(room)
    judgements = 2 * pairs["dimension"].nunique()  # limit=1: one pair per dimension, 2 orders

    def script(body):
        return "not json" if _schema(body).get("title") in VERDICTS else perfect(body)

    raises = pytest.raises(FailureBudgetExceeded, match="could not be parsed")
    with ScriptedServer(script) as server, raises as info:
        evaluate(path / "small_pairs.csv", path / "items.jsonl",
                 model=_opener(server, tmp_path / "cache"), methods=["vanilla"], retries=0,
                 limit=1, bradley_terry=False, max_failures=1)  # fmt: skip
    exc = info.value
    assert exc.budget.unparseable == judgements and exc.budget.allowed == 1
    res = exc.result
    assert isinstance(res, QGSMSEvaluation) and not res.complete
    assert res.accuracy["vanilla"]["all"].AA == 0.0 and res.failed_judgements == judgements
    assert "failed" in res.summary()


def test_a_bad_pairs_frame_is_one_line_naming_the_frame(room):
    path, pairs, _ = room
    bad = pairs.rename(columns={"measure_q1": "measure_1"})
    with pytest.raises(InputError, match="pairs DataFrame") as info:
        evaluate(bad, path / "items.jsonl", model="openai/never-called")
    assert "unknown column 'measure_1'" in str(info.value) and "\n" not in str(info.value)
    assert "measure_1" not in pairs.columns  # the caller's frame is not modified
    other = pairs.copy()
    other.loc[other.index[0], "q2"] = "nope"
    with pytest.raises(InputError, match="question 'nope' is not in the items file"):
        evaluate(other.to_dict("records"), path / "items.jsonl", model="openai/never-called")
    with pytest.raises(InputError, match="unknown method 'fancy'"):
        evaluate(pairs, path / "items.jsonl", model="openai/never-called", methods=["fancy"])
    assert set(METHODS) >= {"vanilla", "qg-sms"} and MethodConfig().n_profiles == 10
