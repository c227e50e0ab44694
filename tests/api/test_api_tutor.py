"""docs "From Python: tutor": reply in memory equals `tutor reply` (scripted server)."""

from __future__ import annotations

import json

from .conftest import assert_same, assert_same_table

MODEL = "openai/gpt-4o-mini"  # the snippet's model string; OPENAI_BASE_URL is the mock server

DIALOGUES = [
    {"id": "d1", "turns": [{"speaker": "teacher", "text": "What is 2 + 2?"},
                           {"speaker": "student", "text": "It is four."},
                           {"speaker": "teacher", "text": "Yes, the answer is four. How did you get it?"},
                           {"speaker": "student", "text": "I counted on my fingers."},
                           {"speaker": "teacher", "text": "Counting works. Can you do 3 + 4?"}]},
    {"id": "d2", "turns": [{"speaker": "student", "text": "Why is a half bigger than a third?"},
                           {"speaker": "teacher", "text": "Cut a cake in two and in three: which piece is bigger?"}],
     "meta": {"uptake": 1.5}},
]  # fmt: skip


def test_tutor_snippet_equals_the_command_line(sandbox, mock_server):
    cli = sandbox.cli_dir
    path = cli / "dialogues.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in DIALOGUES), encoding="utf-8")
    sandbox.cli("tutor", "reply", path, "--model", MODEL, "--max-tokens", 80, "--out", "run")
    calls = mock_server.calls
    sandbox.give(path)

    ns = sandbox.run_snippet("tutor")

    rep = ns["rep"]
    assert mock_server.calls > calls  # asked the server, not the command's cache
    sandbox.check_summary(rep)
    written = sandbox.results("run")
    assert_same(rep.counts(), {k: written[k] for k in rep.counts()}, "tutor reply")
    assert rep.n_targets == 3 and rep.n_ok == 3 and rep.mean_f1 > 0
    assert_same_table(rep.to_frame(), cli / "run/replies.csv",
                      ["dialogue", "turn", "ai_reply", "status", "f1", "ai_perplexity"])  # fmt: skip
