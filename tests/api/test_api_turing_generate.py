"""docs "From Python: turing generate": generate in memory equals `turing generate` (scripted
server answering the generator's, the key check's and the AI's prompts)."""

from __future__ import annotations

import json
import threading
from fractions import Fraction

import pandas as pd

from support.scripted_server import last_user_message

from .conftest import assert_same, assert_same_table

MODEL = "openai/gpt-4o-mini"  # the snippet's model string; OPENAI_BASE_URL is the mock server
TABLES = ("questions", "distractors", "worksheet")

# Phase 1: q′ of the first two questions are bare expressions (their keys evaluated), of the third
# a word problem (its key solved a second time); s4 makes no error (not in Phase 2).
PHASE1 = [
    ("s1", "What is 1/2 + 1/3?", "2/5", "5/6"),
    ("s2", "What is 1/2 + 1/3?", "2/5", "5/6"),
    ("s3", "What is 1/2 + 1/3?", "0.8333", "5/6"),  # right, as a rounded decimal
    ("s4", "What is 1/2 + 1/3?", "5/6", "5/6"),
    ("s1", "What is 7 + 2 × 3?", "27", "13"),
    ("s2", "What is 7 + 2 × 3?", "13", "13"),
    ("s3", "What is 7 + 2 × 3?", "27", "13"),
    ("s4", "What is 7 + 2 × 3?", "13", "13"),
    ("s1", "Ann has 20 apples and buys 5 more. How many apples?", "25 apples", "25"),
    ("s2", "Ann has 20 apples and buys 5 more. How many apples?", "15", "25"),
    ("s3", "Ann has 20 apples and buys 5 more. How many apples?", "2,500", "25"),
    ("s4", "Ann has 20 apples and buys 5 more. How many apples?", "25", "25"),
]
#: the generator's (q′, key) per Phase-1 question; the first key is wrong (7/12): disputed
QPRIME = {
    "What is 1/2 + 1/3?": ("What is 1/4 + 1/3?", "2/7"),
    "What is 7 + 2 × 3?": ("What is 9 + 4 × 5?", "29"),
    "Ann has 20 apples and buys 5 more. How many apples?": (
        "Ben has 31 pears and buys 8 more. How many pears does he have?",
        "39",
    ),
}
SOLVED = {"Ben has 31 pears and buys 8 more. How many pears does he have?": "39 pears"}


class Script:
    """The generator (q′ and its key), the key check (a second solve) and the AI (a distractor:
    q′'s key plus 100, but the key itself - invalid - for the student who answered 15) on one
    scripted server; the model names the requests carried are kept."""

    def __init__(self) -> None:
        self.models: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, body: dict) -> str:
        with self._lock:
            self.models.add(body["model"])
        text = last_user_message(body)
        if "Write one new question" in text:
            rq, key = QPRIME[text.split("\n")[1]]
            return json.dumps({"related_question": rq, "correct_answer": key})
        if text.startswith("Solve this question:"):
            return json.dumps({"answer": SOLVED[text.split("\n")[1]]})
        if '{"distractor"' in text:
            rq, key = next((q, k) for q, k in QPRIME.values() if q in text)
            wrong = key if "the student answered 15." in text else str(Fraction(key) + 100)
            return json.dumps({"distractor": wrong})
        raise AssertionError(f"unexpected request: {text[:80]}")


def _without_timings(results: dict) -> dict:
    """``results`` without the calls' latencies (the two runs' own wall-clock times)."""
    out = dict(results)
    out["model_calls"] = {k: v for k, v in results["model_calls"].items() if k != "latency_s"}
    out["model_calls_by_client"] = {
        name: {k: v for k, v in stats.items() if k != "latency_s"}
        for name, stats in results["model_calls_by_client"].items()
    }
    return out


def test_turing_generate_snippet_equals_the_command_line(sandbox, serve):
    script = Script()
    server = serve(script)
    cli = sandbox.cli_dir
    path = cli / "phase1.csv"
    pd.DataFrame(PHASE1, columns=["student", "question", "answer", "correct_answer"]).to_csv(
        path, index=False
    )
    sandbox.cli("turing", "generate", path, "--model", MODEL, "--out", "run")
    calls = server.calls
    sandbox.give(path)

    ns = sandbox.run_snippet("turing generate")

    gen = ns["gen"]
    assert server.calls - calls == calls  # asked the server again, not the command's cache
    assert script.models == {"gpt-4o-mini"}  # the server's name of the snippet's model
    assert (sandbox.cache / "responses.sqlite").exists()  # the cache the test named
    sandbox.check_summary(gen)
    written = sandbox.results("run")
    got = {k: v for k, v in gen.results().items() if k != "seconds"}  # the runs' own times
    for key in ("model_calls", "model_calls_by_client"):  # latencies there, differing
        assert set(got[key]) == set(written[key]), key
    assert_same(_without_timings(got), _without_timings({k: written[k] for k in got}),
                "turing generate")  # fmt: skip
    for name in TABLES:
        table = getattr(gen, name)
        assert_same_table(table, cli / f"run/{name}.csv")
        assert list(table.columns) == list(pd.read_csv(cli / f"run/{name}.csv").columns), name
    assert_same_table(gen.to_frame(), cli / "run/distractors.csv")
    # the model recorded is the one that answered, in memory as on disk
    config = json.loads((cli / "run/config.json").read_text(encoding="utf-8"))
    assert gen.model == gen.generator_model == written["model"] == MODEL
    assert written["generator_model"] == config["params"]["model"] == MODEL
    assert config["params"]["generator_model"] == MODEL
    assert gen.generator_same_as_model is written["generator_same_as_model"] is True
    # the scripted answers give every kind of outcome the counts hold
    assert gen.complete and gen.n_tuples == 6 and gen.n_questions == 3
    assert gen.students_without_error == ["s4"]
    assert gen.requests_by_source == {"generator": 3, "key_check": 1, "ai": 6}
    assert gen.key_check == {"agree": 2, "disagree": 1, "unchecked": 0}
    assert gen.key_method == {"evaluated": 2, "second_solve": 1}
    assert gen.ai_status["ok"] == 5 and gen.ai_status["invalid"] == 1
    assert gen.tuples_key_disputed == 2 and len(gen.worksheet) == 6
