"""edueval tutor: metrics by hand, context truncation, NCTE import, replies against the scripted
server (incl. a failing call), make-study, and the CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
import yaml

import edueval.tutor
from edueval.models import get_model
from edueval.models.budget import MaxFailures
from edueval.tutor import (
    build_messages,
    import_ncte,
    make_study,
    perplexity,
    read_dialogues,
    reply_run,
    reply_targets,
    truncate_context,
    unigram_f1,
    words,
)
from support.scripted_server import Faults, ScriptedServer, ScriptReply, last_user_message

#: the copy shipped with edueval (an unchanged copy of the upstream file, see NOTICE)
NCTE = Path(edueval.tutor.__file__).parent / "data" / "ncte-uptake" / "uptake_data.csv"
NCTE_SHA256 = "fe282dcc13696be7ba07beb9f5e9722b3dd4c3da52365470baea8b642b578d00"


def test_unigram_f1_hand_checked():
    # ParlAI's normalisation drops the article: "four is answer right" (4) vs "answer is four" (3)
    # overlap 3 -> P = 3/4, R = 3/3, F1 = 2 * 0.75 / 1.75 = 6/7
    assert unigram_f1("Four is the answer, right?", "The answer is four.") == pytest.approx(6 / 7)
    # counts are clipped: "two two two" vs "two" -> overlap 1, P = 1/3, R = 1, F1 = 0.5
    assert unigram_f1("two two two", "Two") == pytest.approx(0.5)
    # no overlap is 0 -- also for two empty texts, as ParlAI's _prec_recall_f1_score
    assert unigram_f1("", "") == 0.0 and unigram_f1("The.", "a") == 0.0
    assert unigram_f1("yes", "") == 0.0
    assert unigram_f1("cat", "dog") == 0.0
    # ASCII apostrophes split a word; typographic ones are no punctuation to ParlAI
    assert words("Don't  SAY it!") == ["don", "t", "say", "it"]
    assert words("Don\u2019t") == ["don\u2019t"]


def test_f1_equals_parlai_on_parlai_examples():
    """ParlAI's own test of token F1 (tests/tasks/test_wizard_of_wikipedia.py, ``test_custom_eval``,
    facebookresearch/ParlAI): a response equal to the checked sentence has knowledge F1 1, the
    response "incorrect" has 0.  ParlAI's tests/test_metrics.py has no other token-F1 example."""
    checked_sent = "Gardening is considered by many people to be a relaxing activity."
    assert unigram_f1(checked_sent, checked_sent) == 1.0
    assert unigram_f1("incorrect", checked_sent) == 0.0


@pytest.mark.parametrize(
    ("candidate", "reference", "f1"),
    [
        # "cat s hat" vs "cat hat": overlap 2, P 2/3, R 1 -> 0.8 (SQuAD, which deletes punctuation
        # instead of spacing it, gives "cats hat" -> 0.5; the old rule, "cat's hat" vs "a cat hat", 1/3)
        ("The cat's hat.", "A cat hat", 0.8),
        ("twenty-five", "twenty five", 1.0),  # '-' is punctuation: two tokens
        ("An A-frame, the banana!", "frame banana", 1.0),  # articles go; "banana" keeps its "an"
        # non-ASCII punctuation stays a token: ["don’t", "–"] vs ["don’t"] -> P 1/2, R 1 -> 2/3
        ("don\u2019t \u2013", "don\u2019t", 2 / 3),
        # the 0.375 vs 0.308: 8 vs 8 words sharing "the", "total", "apples" (3/8 before);
        # without articles 6 vs 7 tokens sharing 2 -> 2 * 2 / 13 = 0.3077
        ("So what is the total of the apples", "Count all apples and tell me the total", 4 / 13),
    ],
)  # fmt: skip
def test_f1_parlai_normalisation_hand_worked(candidate, reference, f1):
    assert unigram_f1(candidate, reference) == pytest.approx(f1)
    assert unigram_f1(reference, candidate) == pytest.approx(f1)  # F1 is symmetric


def test_normalize_answer_as_parlai():
    from edueval.tutor import normalize_answer

    assert normalize_answer("  The  Answer:\tis (a) 4_5!! ") == "answer is 4 5"
    assert normalize_answer("Ana and Theo ate an apple") == "ana and theo ate apple"
    assert normalize_answer("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") == ""


def test_perplexity_is_exp_of_mean_negative_logprob():
    assert perplexity([math.log(0.5), math.log(0.25)]) == pytest.approx(
        math.exp(-(math.log(0.5) + math.log(0.25)) / 2)
    )
    assert perplexity([-0.1] * 3) == pytest.approx(math.exp(0.1))
    assert math.isnan(perplexity([]))


def test_truncation_keeps_latest_turns_and_always_the_student_turn():
    ctx = (("teacher", "one two three"), ("student", "four five"), ("teacher", "six"),
           ("student", "seven eight nine"))  # fmt: skip
    kept, dropped = truncate_context(ctx, 6)  # 3 + 1 fit, then "four five" (2) would make 6 -> fits
    assert kept == list(ctx[1:]) and dropped == 1
    kept, dropped = truncate_context(ctx, 4)
    assert kept == list(ctx[2:]) and dropped == 2
    kept, dropped = truncate_context(ctx, 2)
    assert kept == [("student", "eight nine")] and dropped == 3
    msgs = build_messages(list(ctx), "persona")
    assert [m["role"] for m in msgs] == ["system", "assistant", "user", "assistant", "user"]


def _dialogues(tmp_path: Path) -> Path:
    rows = [
        {"id": "d1", "turns": [{"speaker": "teacher", "text": "What is 2 + 2?"},
                               {"speaker": "student", "text": "It is four."},
                               {"speaker": "teacher", "text": "Yes, the answer is four. How did you get it?"},
                               {"speaker": "student", "text": "Can I do the next one?"},
                               {"speaker": "teacher", "text": "Go ahead."}]},
        {"id": "d2", "turns": [{"speaker": "student", "text": "FAIL me please"},
                               {"speaker": "teacher", "text": "No."}], "meta": {"uptake": 1.5}},
    ]  # fmt: skip
    p = tmp_path / "dialogues.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def _script(body):
    student = last_user_message(body)
    assert body["messages"][0]["role"] == "system"
    if student == "It is four.":
        return ScriptReply("Four is the answer, right?", logprobs=[("Four", math.log(0.5), {}),
                           ("is", math.log(0.25), {})])  # fmt: skip
    return "Good question."


def _opener(server, tmp_path):
    def opener(log_path):
        return get_model("openai/scripted", base_url=server.url, cache_dir=tmp_path / "cache",
                         log_path=log_path, max_attempts=2, retry_base_delay=0.001)  # fmt: skip

    return opener


def test_reply_run_scores_and_records_failures(tmp_path):
    path = _dialogues(tmp_path)
    assert len(reply_targets(read_dialogues(path))) == 3
    # the d2 request always gets HTTP 500: it must be recorded as failed, not dropped
    faults = Faults(rule=lambda body, nth: "500" if "FAIL" in last_user_message(body) else None)
    with ScriptedServer(_script, faults=faults) as server:
        res = reply_run(tmp_path / "run", path, open_model=_opener(server, tmp_path),
                        model_name="scripted", budget=50,
                        max_failures=MaxFailures(count=1))  # fmt: skip
    table = pd.read_csv(tmp_path / "run" / "replies.csv")
    assert res["n_targets"] == 3 and res["n_ok"] == 2 and res["n_failed"] == 1
    assert res["model_failures"]["failed"] == 1 and res["complete"]
    first = table.iloc[0]
    assert first["ai_reply"] == "Four is the answer, right?"
    # real "yes answer is four how did you get it" (9 tokens) vs "four is answer right" (4):
    # overlap 3 -> P = 3/4, R = 3/9, F1 = 2 * (1/4) / (13/12) = 6/13
    assert first["f1"] == pytest.approx(6 / 13)
    assert first["ai_perplexity"] == pytest.approx(math.exp(-(math.log(0.5) + math.log(0.25)) / 2))
    assert json.loads(first["context_turns"]) == [["teacher", "What is 2 + 2?"],
                                                  ["student", "It is four."]]  # fmt: skip
    failed = table[table["status"] == "failed"].iloc[0]
    assert failed["dialogue"] == "d2" and isinstance(failed["error"], str)
    assert math.isnan(failed["f1"]) and failed["meta_uptake"] == 1.5
    assert res["mean_f1"] == pytest.approx(table.loc[table.status == "ok", "f1"].mean())
    for name in ("config.json", "results.json", "report.html", "calls.jsonl"):
        assert (tmp_path / "run" / name).exists()

    study = make_study(tmp_path / "study", [tmp_path / "run" / "replies.csv"],
                       items_per_participant=2)  # fmt: skip
    # "Go ahead." neither asks nor prompts; "No." is one word (checked before its failed call)
    assert study["n_items"] == 1 and study["n_skipped"] == 2
    assert study["excluded"] == {"short_reply": 1, "not_eliciting": 1, "missing_reply": 0,
                                 "degenerate_reply": 0}  # fmt: skip
    cfg = yaml.safe_load((tmp_path / "study" / "study.yaml").read_text())
    assert cfg["kind"] == "comparative" and cfg["items"] == "items.jsonl"
    items = [json.loads(x) for x in (tmp_path / "study" / "items.jsonl").read_text().splitlines()]
    assert items[0]["replies"] == {"teacher": "Yes, the answer is four. How did you get it?",
                                   "scripted": "Four is the answer, right?"}  # fmt: skip
    assert items[0]["context"] == [{"speaker": "teacher", "text": "What is 2 + 2?"},
                                   {"speaker": "student", "text": "It is four."}]  # fmt: skip
    results = json.loads((tmp_path / "study" / "results.json").read_text())
    assert results["excluded"] == study["excluded"] and results["status"] == "complete"
    sel = pd.read_csv(tmp_path / "study" / "selection.csv")
    assert list(sel["reason"].fillna("")) == ["", "not_eliciting", "short_reply"]
    assert list(sel["eliciting_cue"].fillna("")) == ["question", "", ""]


def test_import_ncte_real_file(tmp_path):
    import hashlib

    # github.com/ddemszky/conversational-uptake @ 67fb30cf, data/uptake_data.csv
    assert hashlib.sha256(NCTE.read_bytes()).hexdigest() == NCTE_SHA256
    res = import_ncte(NCTE, tmp_path / "d.jsonl")
    assert res["n_dialogues"] == 2246
    d = read_dialogues(tmp_path / "d.jsonl")
    assert d[0]["id"] == "4-65" and d[0]["turns"] == [
        ("student", "And then when I was doing the problems –"),
        ("teacher", "Yeah."),
    ]
    assert d[0]["meta"]["uptake"] == 0.0
    assert len(reply_targets(d)) == 2246


def test_cli_end_to_end_and_bad_input(tmp_path, cli, monkeypatch):
    monkeypatch.setenv("EDUEVAL_CACHE_DIR", str(tmp_path / "cache"))
    csv = tmp_path / "u.csv"
    csv.write_text("obs_id,exchange_idx,student_text,teacher_text,uptake\n"
                   "1,2,It is four.,\"Yes, the answer is four.\",2.0\n3,4,Is it five?,Why five?,1.0\n")  # fmt: skip
    r = cli("tutor", "import-ncte", csv, "--out", tmp_path / "d.jsonl")
    assert r.code == 0, r.err
    with ScriptedServer(_script) as server:
        r = cli("tutor", "reply", tmp_path / "d.jsonl", "--model", "openai/scripted",
                "--base-url", server.url, "--out", tmp_path / "run")  # fmt: skip
    assert r.code == 0, r.err
    assert "mean unigram F1" in r.err
    r = cli("tutor", "make-study", tmp_path / "run" / "replies.csv", "--out", tmp_path / "st")
    assert r.code == 0, r.err
    assert (tmp_path / "st" / "study.yaml").exists()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "turns": [{"speaker": "parent", "text": "hi"}]}\n')
    r = cli("tutor", "reply", bad, "--model", "openai/scripted", "--base-url", "http://127.0.0.1:9")
    assert r.code == 2 and len(r.err_lines) == 1 and "line 1" in r.err and "turns" in r.err
    r = cli("tutor", "import-ncte", tmp_path / "missing.csv")
    assert r.code == 2 and "file not found" in r.err


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("I'm so glad you're having fun with math! I'm so glad you're having fun with math!",
         "repetitive"),
        ("yes " * 12, "repetitive"),
        ("   ", "empty"),
        ("Not quite. What does 3 times 4 mean? Can you show it with groups of four?", None),
        ("Good, and now tell me: is 12 a multiple of 4, and how do you know?", None),
        ("Yes.", None),
    ],
)  # fmt: skip
def test_degenerate_replies_are_flagged(text, reason):
    from edueval.tutor.quality import degenerate_reason

    assert degenerate_reason(text) == reason


def test_make_study_leaves_degenerate_replies_out_unless_asked(tmp_path):
    from edueval.tutor import make_study

    rows = [{"dialogue": f"d{i}", "turn": 1, "model": "m", "context": "Student: hi",
             "real_reply": "Hello. What did you find out?",
             "ai_reply": "Loop loop loop loop loop loop loop loop loop",
             "status": "degenerate" if i % 2 else "ok"} for i in range(4)]  # fmt: skip
    pd.DataFrame(rows).to_csv(tmp_path / "replies.csv", index=False)
    res = make_study(tmp_path / "s", [tmp_path / "replies.csv"])
    assert res["n_items"] == 2 and res["n_degenerate"] == 2 and res["n_skipped"] == 2
    assert res["excluded"]["degenerate_reply"] == 2
    res = make_study(tmp_path / "s2", [tmp_path / "replies.csv"], keep_degenerate=True)
    assert res["n_items"] == 4
