"""QG-SMS and baselines end to end against a scripted OpenAI-compatible server on loopback.

A perfect judge must score AA = CA = 100%, a judge that always answers "(a)" exactly AA = 50% and
CA = 0% (every pair is shown in both orders); malformed step outputs are retried and then recorded
as failures."""

from __future__ import annotations

import contextlib
import json
import re

import numpy as np
import pandas as pd
import pytest

from edueval.items.pairs import REQUIREMENTS
from edueval.items.pipeline import simulate_run
from edueval.items.simulate import ClassroomConfig
from edueval.models import get_model
from edueval.models.budget import MaxFailures
from edueval.qgsms import METHODS, run_qgsms
from support.scripted_server import ScriptedServer, last_user_message, messages_key

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


def _questions(prompt: str) -> tuple[str, str]:
    """The texts of Step 2's Question 1 and Question 2."""
    return tuple(re.search(rf"# Question {k}\n(.*?)\n[A-Z]\) ", prompt, re.S).group(1)
                 for k in (1, 2))  # type: ignore[return-value]  # fmt: skip


def _understanding(i: int, long: bool) -> str:
    text = f"Student {i} has level {i} of understanding of the material"
    if long:  # a detailed profile, far over the 160 characters an earlier version kept
        text += "; " + ", ".join(f"detail {i}.{k} about what they know and confuse"
                                 for k in range(12))  # fmt: skip
    return text


def make_script(room, verdict: str = "perfect", bad_predictions: bool | str = False,
                extra_profiles: int = 0, long_profiles: bool = False, favour_first: bool = False):  # fmt: skip
    """A scripted model: step outputs by schema title; verdicts perfect or always "(a)".
    ``favour_first``: Step 2 has every student right on Question 1 and wrong on Question 2 (a
    simulator with a position preference)."""
    _, pairs, items = room
    by_text = {v["text"]: k for k, v in items.items()}
    truth = {(frozenset((r["q1"], r["q2"])), r["dimension"]): r["better"]
             for r in pairs.to_dict("records")}  # fmt: skip
    dims = {REQUIREMENTS[d]: d for d in ("DF", "DC", "DE")}
    seen: set[str] = set()

    def decide(prompt: str) -> str:
        a, b = (by_text[t] for t in _sections(prompt))
        req = re.search(r"requirement: (.*?)\.\n", prompt).group(1)
        d = "TC" if "covers the target topic" in req else dims[req]
        better = truth[(frozenset((a, b)), d)]
        return "a" if better == a else "b"

    def predictions(schema, body):
        st = schema["properties"]["students"]
        names = st["required"]
        out = {}
        # the schema lists every option alike: the script knows the key from the items file
        shown = [items[by_text[t]] for t in _questions(last_user_message(body))]
        for i, name in enumerate(names):
            row = {}
            for j, s in enumerate(("question_1", "question_2")):
                opts = st["properties"][name]["properties"][s]["properties"]["choice"]["enum"]
                key = shown[j]["answer"]
                assert sorted(opts) == [chr(65 + k) for k in range(len(shown[j]["choices"]))]
                wrong = [o for o in opts if o != key]
                ok = (j == 0) if favour_first else (i + j) % 2 == 0
                row[s] = {"choice": key if ok else wrong[i % len(wrong)],
                          "explanation": f"because {name} on {s}"}  # fmt: skip
            out[name] = row
        first_time = messages_key(body["messages"]) not in seen
        seen.add(messages_key(body["messages"]))
        if bad_predictions == "always" or (bad_predictions and first_time):
            out.pop(names[-1])  # incomplete (on the first attempt; or always)
        return json.dumps({"students": out})

    def script(body):
        schema = _schema(body)
        title = schema.get("title")
        prompt = last_user_message(body)
        if title == "profiles":
            n = schema["properties"]["students"]["minItems"] + extra_profiles
            return json.dumps({"students": [{"name": f"Student{i}", "understanding":
                                             _understanding(i, long_profiles)}
                                            for i in range(n)]})  # fmt: skip
        if title == "predictions":
            return predictions(schema, body)
        if title == "personas":
            k = schema["properties"]["experts"]["minItems"]
            return json.dumps({"experts": [{"role": f"Expert{i}", "description": f"knows {i}"}
                                           for i in range(k)]})  # fmt: skip
        if title == "criteria":
            return json.dumps({"criteria": ["clear", "on topic", "fair"]})
        if title == "reference":
            return json.dumps({"question": "What is 2 + 2?"})
        if verdict == "a":
            return "(a)"
        v = decide(prompt)
        if title == "verdict_cot":
            return json.dumps({"reasoning": "because", "better": v})
        if title == "discussion":
            return json.dumps({"comment": "I agree", "better": v})
        return json.dumps({"better": v})

    return script


def _run(tmp_path, room, script, methods, pairs_file="small_pairs.csv", server=None, **kw):
    """``qgsms run`` against a scripted server (a new one, or ``server`` still running: the
    response cache is keyed by the server too, so a re-run from the cache needs the same one)."""
    path, _, _ = room
    kw.setdefault("bradley_terry", False)  # the ranking's NUTS fit is tested on its own
    with contextlib.nullcontext(server) if server else ScriptedServer(script) as server:

        def opener(log_path):
            return get_model("openai/scripted", base_url=server.url, cache_dir=tmp_path / "c",
                             log_path=log_path)  # fmt: skip

        res = run_qgsms(tmp_path / "out", path / pairs_file, path / "items.jsonl",
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
    assert cost.at["swap", "calls_per_pair"] == 2.0  # the CoT verdicts agree: no synthesis
    n_mat = j["material"].nunique()
    n_pairs = j["pair_id"].nunique()
    _, pairs, items = room
    panels = {(items[r["q1"]]["material"], r["dimension"], r.get("target_topic") or "")
              for r in pairs.fillna("").to_dict("records")}  # fmt: skip
    # a generated panel per (material, requirement, topic), then 3 experts x 2 rounds x 2 orders
    assert cost.at["chateval", "calls"] == len(panels) + 12 * n_pairs
    # profiles per material, one simulation per pair, the judgement in each order
    assert cost.at["qg-sms", "calls"] == n_mat + 3 * n_pairs
    assert cost.at["direct", "calls"] == n_mat + n_pairs  # the same steps 1-2, no call of its own
    assert (cost["tokens_per_pair"] > 0).all()
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Cost per method" in html and "Exact sign tests" in html


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
                  ["qg-sms"], retries=1, max_failures=MaxFailures(share=1.0))  # fmt: skip
    acc = res["accuracy"]["qg-sms"]["all"]
    assert acc["AA"] == 0.0 and acc["failed"] == 2 * acc["pairs"]
    # one Step 2 per pair, still malformed after its retry: an unparseable answer each, counted
    # against --max-failures (the malformed first attempts were retried and are not)
    assert res["model_failures"]["unparseable"] == acc["pairs"] and res["complete"]
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
    r = cli("qgsms", "score", tmp_path / "out" / "judgements.csv", "--no-bt", "--out",
            tmp_path / "s")  # fmt: skip
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


# -- the ranking extension ------------------------------------------------------------------------


def test_ranking_score_and_statistics_by_hand():
    from scipy import stats

    from edueval.qgsms import anova, rank_correlations, ranking_scores, true_measures

    # three questions on DE (true DE 3, 2, 0 -> x, y, z); every pair in both orders
    measure = {"x": 3.0, "y": 2.0, "z": 0.0, "w": 2.0}
    rows = []
    verdicts = {  # pair: (a, b, chosen in order 1, chosen in order 2)
        "p1": ("x", "y", "x", "x"),  # x preferred in both orders: x +1, y +0
        "p2": ("x", "z", "x", "z"),  # split: x +0.5, z +0.5
        "p3": ("y", "z", "y", ""),  # order 2 failed: y +0.5, z +0
        "p4": ("w", "z", "w", "w"),
        "p5": ("w", "x", "x", "w"),
    }
    for pid, (q1, q2, c1, c2) in verdicts.items():
        for order, (a, b, c) in enumerate(((q1, q2, c1), (q2, q1, c2)), start=1):
            rows.append({"method": "m", "pair_id": pid, "dimension": "DE", "order": order,
                         "a": a, "b": b, "chosen": c, "verdict": "" if not c else
                         ("a" if c == a else "b"), "status": "ok" if c else "failed",
                         "measure_a": measure[a], "measure_b": measure[b]})  # fmt: skip
    j = pd.DataFrame(rows)
    sc = ranking_scores(j, true_measures(j)).set_index("item")
    assert sc.loc["x", "score"] == pytest.approx((1 + 0.5 + 0.5) / 3, abs=1e-12)
    assert sc.loc["y", "score"] == pytest.approx((0 + 0.5) / 2, abs=1e-12)
    assert sc.loc["z", "score"] == pytest.approx((0.5 + 0 + 0) / 3, abs=1e-12)
    assert sc.loc["w", "score"] == pytest.approx((1 + 0.5) / 2, abs=1e-12)
    assert sc["pairs"].to_dict() == {"w": 2, "x": 3, "y": 2, "z": 3}
    assert sc["measure"].to_dict() == measure
    rc = rank_correlations(sc.reset_index()).iloc[0]
    x, y = sc["score"].to_numpy(), sc["measure"].to_numpy()
    assert rc["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert rc["kendall"] == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
    assert rc["pearson"] == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    av = anova(sc.reset_index()).iloc[0]
    f = stats.f_oneway(sc.loc[["x"], "score"], sc.loc[["y", "w"], "score"], sc.loc[["z"], "score"])
    assert av["groups"] == 3 and av["F"] == pytest.approx(f.statistic, rel=1e-12)
    assert av["p_value"] == pytest.approx(f.pvalue, rel=1e-12)


def test_perfect_judge_ranks_every_question_in_order(tmp_path, room, cli):
    """All pairs of one material (alpha 0 for DF and DE): with a perfect judge the 1 / 0.5 score
    and P2's Bradley-Terry ability order the questions exactly as the true measure."""
    from scipy import stats

    from edueval.items.pairs import make_pairs

    path, _, items = room
    st = pd.read_csv(path / "item_stats.csv")
    st = st[st["material"] == st["material"].iloc[0]]
    allp = make_pairs(st, dimensions=["DF", "DE"], alpha={"DF": 0, "DE": 0}, seed=1)
    allp.to_csv(path / "all_pairs.csv", index=False)
    script = make_script((path, allp.astype(str), items))
    res, _ = _run(tmp_path, room, script, ["vanilla"], pairs_file="all_pairs.csv",
                  bradley_terry=True)  # fmt: skip
    sc = pd.read_csv(tmp_path / "out" / "ranking.csv")
    rc = pd.read_csv(tmp_path / "out" / "rank_correlations.csv")
    for d in ("DF", "DE"):
        g = sc[sc["dimension"] == d]
        truth = st.set_index("item").loc[g["item"], d].to_numpy()
        assert np.allclose(g["measure"], truth, atol=1e-12)
        # a perfect judge: the score is the share of the question's pairs it should win
        n = len(g)
        assert n >= 3
        r = rc[(rc["dimension"] == d) & (rc["ranking"] == "score")].iloc[0]
        assert r["spearman"] == pytest.approx(1.0, abs=1e-12)
        assert r["kendall"] == pytest.approx(1.0, abs=1e-12)
        assert r["pearson"] == pytest.approx(
            stats.pearsonr(g["score"], g["measure"]).statistic, abs=1e-12
        )
        # Bradley-Terry: every question with a higher true measure gets a higher ability (within
        # a group of equal DE the posterior means differ only by Monte Carlo noise)
        lev = g.groupby("measure")["bt_alpha"].agg(["min", "max"]).sort_index()
        assert (lev["min"].to_numpy()[1:] > lev["max"].to_numpy()[:-1]).all()
        b = rc[(rc["dimension"] == d) & (rc["ranking"] == "bradley_terry")].iloc[0]
        assert b["spearman"] > (0.9 if d == "DF" else 0.7)
        assert res["ranking"]["vanilla"][d]["score"]["spearman"] == pytest.approx(1.0)
    de = sc[sc["dimension"] == "DE"]
    if de["measure"].nunique() >= 2:
        assert res["anova_DE"]["vanilla"]["p_value"] < 0.05 or not np.isfinite(
            res["anova_DE"]["vanilla"]["F"]
        ) or res["anova_DE"]["vanilla"]["F"] > 1  # fmt: skip
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Ranking the questions" in html
    # `qgsms score` recomputes the same ranking from judgements.csv
    r = cli("qgsms", "score", tmp_path / "out" / "judgements.csv", "--no-bt", "--out",
            tmp_path / "s")  # fmt: skip
    assert r.code == 0, r.err
    again = pd.read_csv(tmp_path / "s" / "ranking.csv")
    assert np.allclose(again["score"], sc["score"], atol=1e-12)


def test_repeated_profile_names_are_predicted_once_each(room):
    """Step 1 keeps a repeated name as a separate student ("Ana (2)"); step 2's schema is an
    object with one required key per name, so no name can be written twice or left out."""
    from edueval.items.data import read_items
    from edueval.models import ChatResult
    from edueval.qgsms.methods import MethodConfig, predictions_ask, profile_job

    path, pairs, _ = room
    items = {r["item"]: r for r in read_items(path / "items.jsonl").to_dict("records")}
    job = profile_job("M1", "material", MethodConfig())
    (ask,) = next(job)
    twice = [{"name": "Ana", "understanding": f"u{i}"} for i in range(10)]
    res = ChatResult(text=json.dumps({"students": twice}))
    profiles = ask.parse(res)
    names = [p["name"] for p in profiles]
    assert names[:3] == ["Ana", "Ana (2)", "Ana (3)"] and len(set(names)) == 10
    a, b = items[pairs.iloc[0]["q1"]], items[pairs.iloc[0]["q2"]]
    pask = predictions_ask(profiles, a, b, MethodConfig(), "t")
    schema = pask.build(0).json_schema["properties"]["students"]
    assert schema["required"] == names and set(schema["properties"]) == set(names)
    right = {"choice": a["answer"], "explanation": "knows it"}
    rb = {"choice": b["answer"], "explanation": "knows it too"}
    full = {n: {"question_1": right, "question_2": rb} for n in names}
    got = pask.parse(ChatResult(text=json.dumps({"students": full})))
    assert [g["name"] for g in got] == names
    assert got[0]["answers"][a["item"]]["explanation"] == "knows it"
    assert got[0]["answers"][a["item"]]["correct"] is True
    # correctness is edueval's, from the choice: a distractor is wrong even if the model says
    # "correct" (a backend that does not enforce the schema may add the field)
    d = next(o for o in a["options"] if o != a["answer"])
    claim = {n: {"question_1": {"choice": d, "correct": True, "explanation": "sure"},
                 "question_2": rb} for n in names}  # fmt: skip
    wrong = pask.parse(ChatResult(text=json.dumps({"students": claim})))
    assert wrong[0]["answers"][a["item"]] == {"correct": False, "choice": d, "explanation": "sure"}
    no_why = {n: {"question_1": {**right, "explanation": ""}, "question_2": rb} for n in names}
    assert pask.parse(ChatResult(text=json.dumps({"students": no_why}))) is None
    short = predictions_ask(profiles, a, b, MethodConfig(explanation_chars=120), "t").build(0)
    one = short.json_schema["properties"]["students"]["properties"]["Ana"]["properties"]
    assert one["question_1"]["properties"]["explanation"]["maxLength"] == 120
    del full["Ana (2)"]
    assert pask.parse(ChatResult(text=json.dumps({"students": full}))) is None


def test_swap_synthesis_names_the_questions_as_this_prompt_shows_them(tmp_path, room):
    """Both CoT verdicts say "(a)" -- different questions, since the orders differ -- so swap
    asks for a synthesis.  Its prompt must say which question each assessment preferred in the
    labels of that prompt (not by item ids the model never sees)."""

    def script(body):
        schema = _schema(body)
        prompt = last_user_message(body)
        if "Two earlier assessments disagreed" in prompt:
            # the question each assessment preferred, read back through this prompt's labels
            a, b = _sections(prompt)
            said = re.findall(r"Assessment (\d) preferred Output \(([ab])\)", prompt)
            texts = {"a": a, "b": b}
            script.synthesis.append({int(i): texts[lab] for i, lab in said})
            script.prompts.append(prompt)
            return json.dumps({"reasoning": "weighing", "better": "a"})
        assert schema.get("title") == "verdict_cot"
        a, _ = _sections(prompt)
        script.first_choice.append(a)  # each CoT assessment prefers the question shown first
        return json.dumps({"reasoning": "the first one", "better": "a"})

    script.synthesis, script.first_choice, script.prompts = [], [], []
    _run(tmp_path, room, script, ["swap"])
    assert script.synthesis, "no synthesis was asked for"
    _, _, items = room
    ids = set(items)
    for said in script.synthesis:
        # assessment 1 saw order 1 and preferred its first question; assessment 2 the other one
        assert said[1] != said[2]
        assert {said[1], said[2]} <= set(script.first_choice)
    for prompt in script.prompts:
        assert not any(f"preferred {i}" in prompt for i in ids), prompt


# -- QG-SMS as the paper runs it ------------------------------------------------------------------


def _titled(server, title: str) -> list[dict]:
    return [b for b in server.bodies if _schema(b).get("title") == title]


def _shown(prompt: str, items: dict, first: str, second: str) -> tuple[str, str]:
    """The two questions a prompt shows under the headings ``first`` and ``second``."""
    by_text = {v["text"]: k for k, v in items.items()}
    return tuple(by_text[re.search(rf"# {re.escape(h)}\n(.*?)\n[A-Z]\) ", prompt, re.S).group(1)]
                 for h in (first, second))  # fmt: skip


def _performance(prompt: str) -> str:
    return prompt.split("# The simulated students' performance\n", 1)[1].rsplit("\n\n", 1)[0]


def test_qgsms_simulates_once_per_pair_and_judges_both_orders_on_it(tmp_path, room):
    """Through the server's request log (each call is named by its seed, which the method
    derives from the pair and the step): one Step-1 call per material, one Step-2 call per pair
    with its questions in the pair's order, two Step-3 calls per pair, one per order. Step 3 sees
    the requirement, the two questions and every profile whole with its answers and
    explanations -- not the learning material -- and its two orders differ only in the labels."""
    from edueval.qgsms.methods import call_seed

    _, pairs, items = room
    script = make_script(room, extra_profiles=2, long_profiles=True)
    res, server = _run(tmp_path, room, script, ["qg-sms"])
    n_mat = len({items[q]["material"] for q in pairs["q1"]})
    assert len(_titled(server, "profiles")) == n_mat
    step2 = {b["seed"]: b for b in _titled(server, "predictions")}
    assert len(step2) == len(_titled(server, "predictions")) == len(pairs)
    step3 = {b["seed"]: b for b in _titled(server, "sms_verdict")}
    assert len(step3) == len(_titled(server, "sms_verdict")) == 2 * len(pairs)
    judged: dict[str, tuple[str, str]] = {}
    for r in pairs.to_dict("records"):
        sim = step2.pop(call_seed(0, "predictions", f"simulate:{r['pair_id']}", ""))
        assert _shown(last_user_message(sim), items, "Question 1", "Question 2") == (
            r["q1"],
            r["q2"],
        )
        p1, p2 = (last_user_message(step3.pop(call_seed(0, "judge", f"qg-sms:{r['pair_id']}:{o}",
                                                        ""))) for o in (1, 2))  # fmt: skip
        assert _shown(p1, items, "Output (a)", "Output (b)") == (r["q1"], r["q2"])
        assert _shown(p2, items, "Output (a)", "Output (b)") == (r["q2"], r["q1"])
        judged[r["pair_id"]] = (p1, p2)
    assert not step2 and not step3  # nothing else was asked
    logged = [json.loads(x) for x in (tmp_path / "out" / "profiles.jsonl").read_text().splitlines()]
    profiles = {e["material"]: e["profiles"] for e in logged}
    for students in profiles.values():
        assert len(students) == 12  # more than the 10 asked for: all are kept
        assert all(len(s["understanding"]) > 400 for s in students)  # not cut at 160 characters
    for pid, (p1, p2) in judged.items():
        item = items[pairs.set_index("pair_id").at[pid, "q1"]]
        assert item["material_text"] not in p1 and "# Learning material" not in p1
        for s in profiles[item["material"]]:
            assert s["understanding"] in p1 and f"because {s['name']} on question_1" in p1
        swapped = _performance(p1).replace("(a)", "(x)").replace("(b)", "(a)").replace("(x)", "(b)")
        perf2 = _performance(p2)
        # same students, same answers; only the Output labels trade places (line order aside)
        assert sorted(swapped.split("\n")) == sorted(perf2.split("\n"))
    sim_log = (tmp_path / "out" / "simulations.jsonl").read_text().splitlines()
    assert len(sim_log) == len(pairs)
    acc = res["accuracy"]["qg-sms"]["all"]
    assert acc["AA"] == 1.0 and acc["CA"] == 1.0


def test_sampling_is_the_papers_with_a_recorded_seed_and_reruns_from_the_cache(tmp_path, room):
    """Temperature 1 by default, every call with a seed of its own, written to calls.jsonl and
    config.json's rule; a re-run with the same cache sends nothing and gives the same table.
    ``temperature=0`` is greedy."""
    from edueval.models.calllog import read_calls
    from edueval.qgsms import MethodConfig

    script = make_script(room)
    methods = ["vanilla", "qg-sms", "chateval"]
    with ScriptedServer(script) as server:  # the cache is keyed by model and server: one server
        _run(tmp_path, room, script, methods, server=server, seed=7)
        bodies = list(server.bodies)
        (tmp_path / "again").mkdir()
        (tmp_path / "again" / "c").symlink_to(tmp_path / "c")
        before = server.calls
        _run(tmp_path / "again", room, script, methods, server=server, seed=7)
        again_calls = server.calls - before
    assert bodies and all(b["temperature"] == 1.0 for b in bodies)
    seeds = [b["seed"] for b in bodies]
    assert all(isinstance(x, int) for x in seeds) and len(set(seeds)) == len(seeds)
    logged = [c["request"]["seed"] for c in read_calls(tmp_path / "out" / "calls.jsonl")]
    assert sorted(logged) == sorted(seeds)
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    params = config["params"]
    assert (
        params["temperature"] == 1.0 and params["seed"] == 7 and "SHA-256" in params["call_seeds"]
    )
    first = pd.read_csv(tmp_path / "out" / "judgements.csv")
    assert again_calls == 0  # every request identical, seeds included: all from the cache
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "again" / "out" / "judgements.csv"), first)
    _, greedy = _run(tmp_path / "g", room, script, ["vanilla", "qg-sms"],
                     cfg=MethodConfig(temperature=0.0), limit=1)  # fmt: skip
    assert greedy.bodies and all(b["temperature"] == 0.0 for b in greedy.bodies)


def test_direct_does_not_inherit_the_simulators_position_preference(tmp_path, room):
    """A simulator that puts every student right on the question it shows first. Simulating per
    order, ``direct`` then prefers Output (a) in both orders (AA 0.5, CA 0 on DF: the earlier
    behaviour, kept as ``simulate="per-order"``). With one simulation per pair, as the paper, the
    two orders pick the same question: the position preference can no longer split them."""
    from edueval.qgsms import MethodConfig

    script = make_script(room, favour_first=True)
    res, _ = _run(tmp_path, room, script, ["direct"], cfg=MethodConfig(simulate="per-order"))
    assert res["accuracy"]["direct"]["DF"]["AA"] == 0.5
    assert res["accuracy"]["direct"]["DF"]["CA"] == 0.0
    res, _ = _run(tmp_path / "p", room, script, ["direct"])
    j = pd.read_csv(tmp_path / "p" / "out" / "judgements.csv")
    j = j[j["status"] == "ok"]
    assert len(j) and (j.groupby("pair_id")["chosen"].nunique() == 1).all()
    for d, s in res["accuracy"]["direct"].items():
        assert s["AA"] == s["CA"], d  # both orders agree on every pair
    # the simulator's preference is now a preference for q1, right on the pairs where q1 is better
    _, pairs, _ = room
    df = pairs[pairs["dimension"] == "DF"]
    assert res["accuracy"]["direct"]["DF"]["CA"] == pytest.approx((df["better"] == df["q1"]).mean())


def test_per_order_and_judge_material_variants(tmp_path, room):
    """The named variants: ``simulate="per-order"`` makes one Step-2 call per order; with
    ``judge_material`` Step 3 shows the learning material."""
    from edueval.qgsms import MethodConfig

    _, pairs, items = room
    cfg = MethodConfig(simulate="per-order", judge_material=True)
    _, server = _run(tmp_path, room, make_script(room), ["qg-sms"], cfg=cfg)
    assert len(_titled(server, "predictions")) == 2 * len(pairs)
    for b in _titled(server, "sms_verdict"):
        prompt = last_user_message(b)
        a, _ = _shown(prompt, items, "Output (a)", "Output (b)")
        assert items[a]["material_text"] in prompt


def test_profiles_are_at_least_ten_and_whole():
    from edueval.models import ChatResult
    from edueval.qgsms.methods import MethodConfig, profile_job

    (ask,) = next(profile_job("M1", "material", MethodConfig(n_profiles=12, max_profiles=20)))
    schema = ask.build(0).json_schema["properties"]["students"]
    assert schema["minItems"] == 12 and schema["maxItems"] == 20
    assert "maxLength" not in schema["items"]["properties"]["understanding"]
    long = "x" * 2000

    def answer(n: int) -> ChatResult:
        return ChatResult(text=json.dumps({"students": [{"name": f"S{i}", "understanding": long}
                                                        for i in range(n)]}))  # fmt: skip

    assert ask.parse(answer(11)) is None  # fewer than asked for: malformed, asked again
    got = ask.parse(answer(25))  # more than the schema's bound (a model without a grammar): kept
    assert len(got) == 25 and all(p["understanding"] == long for p in got)
    (ask10,) = next(profile_job("M1", "material", MethodConfig(n_profiles=3)))
    assert ask10.build(0).json_schema["properties"]["students"]["minItems"] == 10


def test_chateval_generates_its_panel_and_asks_each_turn_for_one_thing(tmp_path, room):
    """ChatEval: a persona call per (material, requirement, topic) before the discussion; every
    turn speaks as one generated expert (system message) and asks for a comment ending in a
    verdict -- never also for "only" a verdict. ``chateval_personas="fixed"`` makes no persona
    call."""
    from edueval.qgsms import MethodConfig

    _, pairs, items = room
    res, server = _run(tmp_path, room, make_script(room), ["chateval"],
                       cfg=MethodConfig(personas=2, rounds=2))  # fmt: skip
    panels = {(items[r["q1"]]["material"], r["dimension"], r.get("target_topic") or "")
              for r in pairs.fillna("").to_dict("records")}  # fmt: skip
    made = _titled(server, "personas")
    assert len(made) == len(panels)
    assert all("# Output (a)" not in last_user_message(b) for b in made)  # the task only
    turns = _titled(server, "discussion")
    assert len(turns) == 2 * 2 * 2 * len(pairs)  # experts x rounds x orders
    for b in turns:
        system = b["messages"][0]
        assert system["role"] == "system" and re.search(r"Expert[01]", system["content"])
        prompt = last_user_message(b)
        ask = prompt.rsplit("\n\n", 1)[1]  # what the turn asks for
        assert "only" not in ask.lower() and "comment first" in ask and "verdict last" in ask
    later = [last_user_message(b) for b in turns if "round 2 of 2" in last_user_message(b)]
    assert later and all("Expert0: I agree (verdict: Output (" in p for p in later)
    personas = (tmp_path / "out" / "personas.jsonl").read_text().splitlines()
    assert len(personas) == len(panels)
    assert res["accuracy"]["chateval"]["all"]["CA"] == 1.0
    _, fixed = _run(tmp_path / "f", room, make_script(room), ["chateval"],
                    cfg=MethodConfig(chateval_personas="fixed", rounds=1), limit=1)  # fmt: skip
    assert not _titled(fixed, "personas") and _titled(fixed, "discussion")


def test_several_models_one_run_each_then_their_comparison(tmp_path, room, cli, monkeypatch):
    """``qgsms run --model A --model B``: a run folder per model on the same pairs (one cache),
    then the paired comparison of every model x method in OUT/compare/."""
    path, _, _ = room
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("EDUEVAL_CACHE_DIR", str(tmp_path / "cache"))
    with ScriptedServer(make_script(room)) as server:
        r = cli("qgsms", "run", path / "small_pairs.csv", path / "items.jsonl", "--model",
                "openai/A", "--model", "openai/B", "--method", "vanilla", "--no-bt",
                "--base-url", server.url, "--out", tmp_path / "out")  # fmt: skip
        models = {b["model"] for b in server.bodies}
    assert r.code == 0, r.err
    assert models == {"A", "B"}  # each model asked for itself (the cache is per model)
    for m in "AB":
        config = json.loads((tmp_path / "out" / f"openai-{m}" / "config.json").read_text())
        assert config["status"] == "complete" and config["params"]["model"] == f"openai/{m}"
    res = json.loads((tmp_path / "out" / "compare" / "results.json").read_text())
    runs = {row["run"] for row in res["estimates"]}
    assert len(runs) == 2 and all("vanilla" in r or "openai" in r for r in runs), runs
    # the perfect judge: both models right on every pair, no discordant pair
    assert all(d["run_only"] == 0 and d["reference_only"] == 0 for d in res["differences"])
    assert (tmp_path / "out" / "compare" / "report.html").exists()
