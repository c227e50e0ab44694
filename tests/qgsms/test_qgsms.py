"""QG-SMS and baselines end to end against a scripted OpenAI-compatible server on loopback.

A perfect judge must score AA = CA = 100%, a judge that always answers "(a)" exactly AA = 50% and
CA = 0% (every pair is shown in both orders); malformed step outputs are retried and then recorded
as failures."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from edueval.items.pairs import REQUIREMENTS
from edueval.items.pipeline import simulate_run
from edueval.items.simulate import ClassroomConfig
from edueval.models import get_model
from edueval.models.scripted_server import ScriptedServer, last_user_message
from edueval.qgsms import METHODS, run_qgsms

JUDGES = [m for m in METHODS if m != "direct"]


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    path = tmp_path_factory.mktemp("room")
    simulate_run(path, ClassroomConfig(n_students=40, n_materials=2, questions_per_material=6,
                                       seed=4))  # fmt: skip
    pairs = pd.read_csv(path / "pairs.csv", dtype=str)
    small = pairs.groupby("dimension").head(3)  # 3 pairs per dimension
    small.to_csv(path / "small_pairs.csv", index=False)
    items = [json.loads(x) for x in (path / "items.jsonl").read_text().splitlines()]
    return path, small, {i["item"]: i for i in items}


def _schema(body) -> dict:
    rf = body.get("response_format") or {}
    return (rf.get("json_schema") or {}).get("schema") or {}


def _sections(prompt: str) -> tuple[str, str]:
    a = re.search(r"# Output \(a\)\n(.*?)\n[A-Z]\) ", prompt, re.S).group(1)
    b = re.search(r"# Output \(b\)\n(.*?)\n[A-Z]\) ", prompt, re.S).group(1)
    return a, b


def make_script(room, verdict: str = "perfect", bad_predictions: bool = False):
    _, pairs, items = room
    by_text = {v["text"]: k for k, v in items.items()}
    truth = {(frozenset((r["q1"], r["q2"])), r["dimension"]): r["better"]
             for r in pairs.to_dict("records")}  # fmt: skip
    dims = {REQUIREMENTS[d]: d for d in ("DF", "DC", "DE")}

    def decide(prompt: str) -> str:
        if verdict == "a":
            return "a"
        a, b = (by_text[t] for t in _sections(prompt))
        req = re.search(r"requirement: (.*?)\.\n", prompt).group(1)
        d = "TC" if "covers the target topic" in req else dims[req]
        better = truth[(frozenset((a, b)), d)]
        return "a" if better == a else "b"

    def script(body):
        schema = _schema(body)
        title = schema.get("title")
        prompt = last_user_message(body)
        if title == "profiles":
            n = schema["properties"]["students"]["minItems"]
            return json.dumps({"students": [{"name": f"Student{i}", "understanding": f"level {i}"}
                                            for i in range(n)]})  # fmt: skip
        if title == "predictions":
            st = schema["properties"]["students"]
            names = st["items"]["properties"]["name"]["enum"]
            opts = {s: st["items"]["properties"][s]["anyOf"] for s in ("a", "b")}
            out = []
            for i, name in enumerate(names):
                row = {"name": name}
                for s in ("a", "b"):
                    key = opts[s][0]["properties"]["choice"]["const"]
                    wrong = opts[s][1]["properties"]["choice"]["enum"]
                    ok = (i + (s == "b")) % 2 == 0
                    row[s] = {"correct": ok, "choice": key if ok else wrong[i % len(wrong)]}
                out.append(row)
            if bad_predictions and not body.get("temperature"):
                out = out[:-1]  # incomplete on the greedy attempt; retries (sampled) are fine
            if bad_predictions == "always":
                out = out[:-1]
            return json.dumps({"students": out})
        if title == "criteria":
            return json.dumps({"criteria": ["clear", "on topic", "fair"]})
        if title == "reference":
            return json.dumps({"question": "What is 2 + 2?"})
        v = decide(prompt)
        if verdict == "a":
            return "(a)"
        if title == "verdict_cot":
            return json.dumps({"reasoning": "because", "better": v})
        if title == "discussion":
            return json.dumps({"comment": "I agree", "better": v})
        return json.dumps({"better": v})

    return script


def _run(tmp_path, room, script, methods, **kw):
    path, _, _ = room
    with ScriptedServer(script) as server:

        def opener(log_path):
            return get_model("openai/scripted", base_url=server.url, cache_dir=tmp_path / "c",
                             log_path=log_path)  # fmt: skip

        res = run_qgsms(tmp_path / "out", path / "small_pairs.csv", path / "items.jsonl",
                        methods=methods, open_model=opener, model_name="scripted", **kw)  # fmt: skip
    return res, server


def test_perfect_judge_scores_100(tmp_path, room):
    res, _ = _run(tmp_path, room, make_script(room), METHODS)
    for m in JUDGES:
        for d, s in res["accuracy"][m].items():
            assert s["AA"] == 1.0 and s["CA"] == 1.0 and s["failed"] == 0, (m, d)
    # direct: TC is n/a, the others are computed from the scripted predictions
    assert "TC" not in res["accuracy"]["direct"]
    j = pd.read_csv(tmp_path / "out" / "judgements.csv")
    assert set(j["method"]) == set(METHODS)
    assert (j.groupby(["method", "pair_id"]).size() == 2).all()  # every pair in both orders
    cost = pd.read_csv(tmp_path / "out" / "cost.csv").set_index("method")
    assert cost.at["vanilla", "calls_per_pair"] == 2.0  # one call per order
    assert cost.at["chateval", "calls_per_pair"] == 12.0  # 3 personas x 2 rounds x 2 orders
    assert cost.at["swap", "calls_per_pair"] == 2.0  # the CoT verdicts agree: no synthesis
    n_mat = j["material"].nunique()
    n_pairs = j["pair_id"].nunique()
    assert cost.at["qg-sms", "calls"] == n_mat + 4 * n_pairs  # profiles + (predict, judge) x 2
    assert (cost["tokens_per_pair"] > 0).all()
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Cost per method" in html and "binomial" in html


def test_always_a_judge_scores_half_and_zero(tmp_path, room):
    res, _ = _run(tmp_path, room, make_script(room, verdict="a"), JUDGES)
    for m in JUDGES:
        for d, s in res["accuracy"][m].items():
            assert s["AA"] == 0.5 and s["CA"] == 0.0, (m, d)
    # the binomial test against vanilla: CA 0 vs 0 -> p = 1
    assert all(p == 1.0 for p in res["binomial_p"].values())
    cost = pd.read_csv(tmp_path / "out" / "cost.csv").set_index("method")
    assert cost.at["swap", "calls_per_pair"] == 4.0  # verdicts disagree: two syntheses


def test_malformed_steps_are_retried_then_recorded(tmp_path, room):
    res, _ = _run(tmp_path, room, make_script(room, bad_predictions=True), ["qg-sms"])
    assert res["accuracy"]["qg-sms"]["all"]["failed"] == 0  # the sampled retry was complete
    cost = pd.read_csv(tmp_path / "out" / "cost.csv")
    assert cost.at[0, "retries"] > 0 and cost.at[0, "malformed_answers"] > 0
    res, _ = _run(tmp_path / "b", room, make_script(room, bad_predictions="always"),
                  ["qg-sms"], retries=1)  # fmt: skip
    acc = res["accuracy"]["qg-sms"]["all"]
    assert acc["AA"] == 0.0 and acc["failed"] == 2 * acc["pairs"]
    f = pd.read_csv(tmp_path / "b" / "out" / "failures.csv")
    assert f["step"].tolist() == ["predictions"]
    j = pd.read_csv(tmp_path / "b" / "out" / "judgements.csv")
    assert (j["status"] == "failed").all() and j["error"].str.contains("2 attempts").all()


def test_robustness_repeats_and_score_command(tmp_path, room, cli):
    res, _ = _run(tmp_path, room, make_script(room), ["vanilla", "direct"], repeats=3)
    rob = pd.read_csv(tmp_path / "out" / "robustness.csv")
    assert set(rob["repeat"]) == {0, 1, 2}
    # direct on DF with the scripted predictions: alternate students right, so DF is 0.5 for a
    # and 0.5 for b -> all ties
    acc = res["accuracy"]["direct"]
    assert acc["DF"]["ties"] == 2 * acc["DF"]["pairs"]
    r = cli("qgsms", "score", tmp_path / "out" / "judgements.csv", "--out", tmp_path / "s")
    assert r.code == 0, r.err
    again = json.loads((tmp_path / "s" / "results.json").read_text())
    assert again["accuracy"] == json.loads(json.dumps(res["accuracy"]))


def test_scores_against_an_independent_count(tmp_path, room):
    rng = np.random.default_rng(0)
    _, pairs, _ = room
    flip = {p: rng.random(2) < 0.6 for p in pairs["pair_id"]}

    def script(body):  # right with a random pattern known in advance
        base = make_script(room)(body)
        schema = _schema(body)
        if schema.get("title") != "verdict":
            return base
        v = json.loads(base)["better"]
        prompt = last_user_message(body)
        a, b = _sections(prompt)
        for p in pairs.to_dict("records"):
            texts = {room[2][p["q1"]]["text"]: 1, room[2][p["q2"]]["text"]: 2}
            if a in texts and b in texts and json.loads(base)["better"] == v:
                order = texts[a]
                if req_dim(prompt) == p["dimension"] and not flip[p["pair_id"]][order - 1]:
                    v = "b" if v == "a" else "a"
        return json.dumps({"better": v})

    def req_dim(prompt):
        req = re.search(r"requirement: (.*?)\.\n", prompt).group(1)
        if "covers the target topic" in req:
            return "TC"
        return {REQUIREMENTS[d]: d for d in ("DF", "DC", "DE")}[req]

    res, _ = _run(tmp_path, room, script, ["vanilla"])
    right = np.array([flip[p] for p in pairs["pair_id"]])
    s = res["accuracy"]["vanilla"]["all"]
    assert s["AA"] == pytest.approx(right.mean(), abs=1e-12)
    assert s["CA"] == pytest.approx(right.all(axis=1).mean(), abs=1e-12)


def test_bad_pairs_are_one_line(tmp_path, room, cli):
    path, pairs, items = room
    bad = pairs.copy()
    other = next(k for k, v in items.items() if v["material"] != items[bad.at[0, "q1"]]["material"])
    bad.loc[0, "q2"] = other
    bad.to_csv(tmp_path / "bad.csv", index=False)
    r = cli("qgsms", "run", tmp_path / "bad.csv", path / "items.jsonl", "--method", "vanilla",
            "--model", "openai/none", "--base-url", "http://127.0.0.1:9/v1",
            "--out", tmp_path / "o")  # fmt: skip
    assert r.code == 2 and len(r.err_lines) == 1
    assert "come from different learning materials" in r.err
    r = cli("qgsms", "run", path / "small_pairs.csv", path / "items.jsonl", "--method", "nope",
            "--out", tmp_path / "o2")  # fmt: skip
    assert r.code == 2 and "unknown method 'nope'" in r.err
