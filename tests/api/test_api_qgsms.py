"""docs "From Python: qgsms": evaluate in memory equals `qgsms run` (scripted server).

The inputs are a small synthetic classroom (`items simulate`, one material of 6 questions) and
at most 3 pairs per dimension (`items pairs --max-pairs 3`); the scripted model answers QG-SMS's
steps by their JSON schema (as tests/qgsms/test_qgsms.py's ``make_script``): profiles, each
student's answers, and a judge that names the truly better question except on about a third of
the prompts (picked by a hash of the prompt, the same in both runs), so that AA, CA and the sign
tests are not trivial.
"""

from __future__ import annotations

import json
import re
import zlib

import pandas as pd

from edueval.items.pairs import REQUIREMENTS
from support.scripted_server import last_user_message

from .conftest import assert_same, assert_same_table

MODEL = "openai/gpt-4o-mini"  # the snippet's model string; OPENAI_BASE_URL is the mock server
RUN_ONLY = {"seconds", "model_calls", "status", "tables"}  # results.json keys not in memory


def _schema(body: dict) -> dict:
    rf = body.get("response_format") or {}
    return (rf.get("json_schema") or {}).get("schema") or {}


def qgsms_script(pairs: pd.DataFrame, items: list[dict]):
    """Deterministic answers to QG-SMS's prompts, by the schema's title: Step 1 profiles, Step 2
    predictions (student i right on question j when i + j is even), and verdicts -- the truly
    better question, flipped when a hash of the prompt is 0 mod 3."""
    by_text = {it["text"]: it["item"] for it in items}
    truth = {(frozenset((r["q1"], r["q2"])), r["dimension"]): r["better"]
             for r in pairs.to_dict("records")}  # fmt: skip
    dims = {REQUIREMENTS[d]: d for d in ("DF", "DC", "DE")}

    def decide(prompt: str) -> str:
        a = re.search(r"# Output \(a\)\n(.*?)\n[A-Z]\) ", prompt, re.S).group(1)
        b = re.search(r"# Output \(b\)\n(.*?)\n[A-Z]\) ", prompt, re.S).group(1)
        a, b = by_text[a], by_text[b]
        req = re.search(r"requirement: (.*?)\.\n", prompt).group(1)
        d = "TC" if "covers the target topic" in req else dims[req]
        v = "a" if truth[(frozenset((a, b)), d)] == a else "b"
        if zlib.crc32(prompt.encode()) % 3 == 0:
            v = "b" if v == "a" else "a"
        return v

    by_id = {it["item"]: it for it in items}

    def predictions(schema: dict, prompt: str) -> str:
        st = schema["properties"]["students"]
        shown = [by_id[by_text[re.search(rf"# Question {k}\n(.*?)\n[A-Z]\) ", prompt,
                                         re.S).group(1)]] for k in (1, 2)]  # fmt: skip
        out = {}
        for i, name in enumerate(st["required"]):
            row = {}
            for j, s in enumerate(("question_1", "question_2")):
                key = shown[j]["answer"]  # the schema lists every option alike
                wrong = [chr(65 + k) for k in range(len(shown[j]["choices"])) if chr(65 + k) != key]
                ok = (i + j) % 2 == 0
                row[s] = {"choice": key if ok else wrong[i % len(wrong)],
                          "explanation": f"because {name} on {s}"}  # fmt: skip
            out[name] = row
        return json.dumps({"students": out})

    def script(body: dict) -> str:
        schema = _schema(body)
        title = schema.get("title")
        if title == "profiles":
            n = schema["properties"]["students"]["minItems"]
            return json.dumps({"students": [
                {"name": f"Student{i}", "understanding": f"Student {i} understands level {i}"}
                for i in range(n)]})  # fmt: skip
        if title == "predictions":
            return predictions(schema, last_user_message(body))
        v = decide(last_user_message(body))
        if title == "verdict_cot":
            return json.dumps({"reasoning": "because", "better": v})
        return json.dumps({"better": v})

    return script


def test_qgsms_snippet_equals_the_command_line(sandbox, serve):
    cli = sandbox.cli_dir
    sandbox.cli("items", "simulate", "--students", 40, "--materials", 1, "--questions", 6,
                "--seed", 4, "--out", "room")  # fmt: skip
    sandbox.cli("items", "pairs", cli / "room/responses.csv", cli / "room/items.jsonl",
                "--max-pairs", 3, "--out", "pairs")  # fmt: skip
    pairs = pd.read_csv(cli / "pairs/pairs.csv", dtype=str)
    items = [json.loads(x) for x in (cli / "room/items.jsonl").read_text().splitlines() if x]
    assert set(pairs["dimension"]) >= {"DF", "DE"}  # the snippet reads both
    server = serve(qgsms_script(pairs, items))
    # the snippet's options: methods vanilla and qg-sms, bradley_terry=False, seed 0
    sandbox.cli("qgsms", "run", cli / "pairs/pairs.csv", cli / "room/items.jsonl",
                "--model", MODEL, "--method", "vanilla", "--method", "qg-sms", "--no-bt",
                "--seed", 0, "--out", "run")  # fmt: skip
    calls = server.calls
    sandbox.give(cli / "pairs/pairs.csv")
    sandbox.give(cli / "room/items.jsonl")

    ns = sandbox.run_snippet("qgsms")

    res = ns["res"]
    assert server.calls > calls  # asked the server, not the command's cache
    assert (sandbox.cache / "responses.sqlite").exists()  # the cache the test named
    sandbox.check_summary(res)
    written = sandbox.results("run")
    got = {k: v for k, v in res.results().items() if k not in RUN_ONLY}
    assert set(written) - set(res.results()) == {"status", "tables"}
    assert_same(got, {k: written[k] for k in got}, "qgsms run")
    assert res.complete and res.n_failed == 0 and res.failed_judgements == 0
    assert res.n_pairs == len(pairs) and res.methods == ["vanilla", "qg-sms"]
    assert 0 < res.accuracy["vanilla"]["all"].AA < 1  # the judge is neither perfect nor useless
    table = pd.read_csv(cli / "run/judgements.csv")
    assert len(res.judgements) == 2 * 2 * len(pairs)  # two methods, two orders
    assert_same_table(res.judgements, cli / "run/judgements.csv")
    assert {"method", "pair_id", "correct", "status"} <= set(table.columns)
    assert_same_table(res.cost, cli / "run/cost.csv")
    frame = res.to_frame()
    assert list(frame.columns) == ["method", "dimension", "measure", "value"]
    ca = frame[(frame["method"] == "qg-sms") & (frame["dimension"] == "DF")
               & (frame["measure"] == "CA")]  # fmt: skip
    assert ca["value"].item() == written["accuracy"]["qg-sms"]["DF"]["CA"]
