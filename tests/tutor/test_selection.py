"""The AI Teacher Test's item selection in ``tutor make-study``: one-word and non-eliciting teacher
replies are no items, the raters' context is cut to whole turns within a token budget, a line
break inside a turn stays inside it, and the default persona is the paper's teacher."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import edueval.tutor
from edueval.io import InputError
from edueval.models import get_model
from edueval.tutor import (
    DEFAULT_PERSONA,
    UPTAKE_PERSONA,
    build_messages,
    eliciting_cue,
    make_study,
    rater_context,
    read_dialogues,
    reply_run,
)
from edueval.tutor.selection import count_tokens, parse_transcript, too_short
from support.scripted_server import ScriptedServer, last_user_message

NCTE = Path(edueval.tutor.__file__).parent / "data" / "ncte-uptake" / "uptake_data.csv"


@pytest.mark.parametrize(
    ("reply", "cue"),
    [
        ("So what's 4 times 6?", "question"),
        ("Vanilla and what?", "question"),
        ("Good. Who can tell me why you should not do that to the hundreds place.", "question-form"),
        ("Is there always just one strategy that works.", "question-form"),
        ("Think about that.", "prompt"),
        ("Okay, Student D, help me out with this one.", "prompt"),
        ("Let's count them together.", "prompt"),
        ("I want you to draw the design.", "prompt"),
        ("Right?", None),  # a check-in tag, not a question
        ("Okay?  Good job.", None),
        ("Student T?", None),  # a bare nomination
        ("That would be a diameter.", None),
        ("Very good.  Very good logic too.", None),
        ("Sit down, Student A.  Look in your desk.", None),  # classroom management
        ("Don't just dump.", None),  # a negative imperative, not a question
        ("When we divide by 2, we get 3.", None),  # subordinate "when" is no question
        ("", None),
    ],
)  # fmt: skip
def test_eliciting_cue(reply, cue):
    assert eliciting_cue(reply) == cue


def test_too_short_counts_normalised_words():
    assert too_short("Yeah.") and too_short("Okay!") and too_short("The end.")  # "end"
    assert too_short("  ") and not too_short("By what?")
    assert too_short("By what?", min_words=3) and not too_short("Yeah.", min_words=1)


def test_count_tokens_as_parlai_re_tokenizer():
    # What ' s 3 + 4 ? -> 7; "a_b" is one word token; white space is no token
    assert count_tokens("What's 3+4?") == 7
    assert count_tokens("a_b  \n c") == 2
    assert count_tokens("") == 0


def test_context_truncation_keeps_whole_recent_turns_within_the_budget():
    turns = [("teacher", "one two three four"), ("student", "five six"),
             ("teacher", "seven eight nine"), ("student", "ten eleven")]  # fmt: skip
    # 2 + 3 = 5 fit in 6; the next turn back (2) would make 7: it and everything before go
    assert rater_context(turns, 6) == (turns[2:], 2)
    assert rater_context(turns, 7) == (turns[1:], 1)
    assert rater_context(turns, 11) == (turns, 0)
    # contiguous: a later turn that does not fit ends the context even if an older one would
    gap = [("teacher", "a"), ("student", "b c d e f"), ("teacher", "g"), ("student", "h")]
    assert rater_context(gap, 4) == (gap[2:], 2)
    # the student turn being answered is always shown whole, even over the budget
    long = [("teacher", "hi"), ("student", "w " * 150)]
    assert rater_context(long, 100) == ([long[1]], 1)
    with pytest.raises(InputError):
        rater_context(turns, 0)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["teacher", "student"]),
                       st.text(alphabet="ab ,.?\n", max_size=40)), min_size=1, max_size=12),
    st.integers(1, 60),
)  # fmt: skip
def test_context_truncation_property(turns, budget):
    kept, dropped = rater_context(turns, budget)
    assert kept == turns[len(turns) - len(kept) :] and dropped == len(turns) - len(kept)
    assert len(kept) >= 1  # whole turns, a suffix, never empty
    used = sum(count_tokens(t) for _, t in kept)
    assert used <= budget or len(kept) == 1
    if dropped:  # the next turn back did not fit
        assert used + count_tokens(turns[dropped - 1][1]) > budget


def test_transcript_lines_without_a_speaker_stay_in_their_turn():
    text = "Teacher: Look at this:\n3 + 4 = ?\nStudent: 7\n\nI think"
    assert parse_transcript(text) == [("teacher", "Look at this:\n3 + 4 = ?"),
                                      ("student", "7\n\nI think")]  # fmt: skip


def _items(folder: Path) -> list[dict]:
    return [json.loads(x) for x in (folder / "items.jsonl").read_text().splitlines()]


def _write_dialogues(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _opener(server, tmp_path):
    def opener(log_path):
        return get_model("openai/scripted", base_url=server.url, cache_dir=tmp_path / "cache",
                         log_path=log_path, max_attempts=1)  # fmt: skip

    return opener


def _reply(tmp_path: Path, dialogues: Path, **kw) -> tuple[dict, list[dict]]:
    with ScriptedServer(lambda body: "What makes you say that?") as server:
        res = reply_run(tmp_path / "run", dialogues, open_model=_opener(server, tmp_path),
                        model_name="scripted", **kw)  # fmt: skip
        bodies = list(server.bodies)
    return res, bodies


def test_one_word_teacher_reply_yields_no_study_item(tmp_path):
    path = _write_dialogues(tmp_path / "d.jsonl", [
        {"id": "d1", "turns": [
            {"speaker": "student", "text": "And then when I was doing the problems"},
            {"speaker": "teacher", "text": "Yeah."},
            {"speaker": "student", "text": "I got twelve."},
            {"speaker": "teacher", "text": "How did you get twelve?"}]},
    ])  # fmt: skip
    _reply(tmp_path, path)
    replies = tmp_path / "run" / "replies.csv"
    for select in ("eliciting", "all"):  # the one-word rule holds whatever the selection
        res = make_study(tmp_path / select, [replies], select=select)
        items = _items(tmp_path / select)
        assert [i["id"] for i in items] == ["d1:3"]
        assert res["excluded"]["short_reply"] == 1 and res["n_items"] == 1
        assert all(i["replies"]["teacher"] != "Yeah." for i in items)
    sel = pd.read_csv(tmp_path / "all" / "selection.csv")
    assert sel.set_index("item").loc["d1:1", "reason"] == "short_reply"
    # --min-words 1 lets it through (it asks nothing, so only with --select all)
    res = make_study(tmp_path / "m1", [replies], select="all", min_words=1)
    assert res["n_items"] == 2
    res = make_study(tmp_path / "m1e", [replies], min_words=1)
    assert res["n_items"] == 1 and res["excluded"]["not_eliciting"] == 1


def test_newline_inside_a_turn_stays_one_turn(tmp_path):
    tricky = "Look at this one:\n3 + 4 = ?\nStudent: that line is part of the teacher's turn"
    path = _write_dialogues(tmp_path / "d.jsonl", [
        {"id": "d1", "turns": [
            {"speaker": "teacher", "text": tricky},
            {"speaker": "student", "text": "Seven.\nOr eight?"},
            {"speaker": "teacher", "text": "Which one?\nCheck it with counters."}]},
    ])  # fmt: skip
    assert [len(d["turns"]) for d in read_dialogues(path)] == [3]
    _, bodies = _reply(tmp_path, path)
    # one message per turn: the model sees two turns, not four
    assert [m["role"] for m in bodies[0]["messages"]] == ["system", "assistant", "user"]
    assert bodies[0]["messages"][1]["content"] == tricky
    res = make_study(tmp_path / "st", [tmp_path / "run" / "replies.csv"])
    item = json.loads((tmp_path / "st" / "items.jsonl").read_text())
    assert res["n_items"] == 1
    assert item["context"] == [{"speaker": "teacher", "text": tricky},
                               {"speaker": "student", "text": "Seven.\nOr eight?"}]  # fmt: skip
    assert item["replies"]["teacher"] == "Which one?\nCheck it with counters."
    # a replies table written before context_turns existed: the transcript is read by speaker
    old = pd.read_csv(tmp_path / "run" / "replies.csv").drop(columns="context_turns")
    old["context"] = "Teacher: Look at this one:\n3 + 4 = ?\nStudent: Seven.\nOr eight?"
    old.to_csv(tmp_path / "old.csv", index=False)
    make_study(tmp_path / "st-old", [tmp_path / "old.csv"])
    item = json.loads((tmp_path / "st-old" / "items.jsonl").read_text())
    assert item["context"] == [{"speaker": "teacher", "text": "Look at this one:\n3 + 4 = ?"},
                               {"speaker": "student", "text": "Seven.\nOr eight?"}]  # fmt: skip


def test_study_context_is_cut_to_the_token_budget(tmp_path):
    question = "What " + "word " * 48 + "?"  # 50 tokens
    turns = [{"speaker": "teacher", "text": "word " * 60}, {"speaker": "student", "text": "a b c"},
             {"speaker": "teacher", "text": question}, {"speaker": "student", "text": "Is it 9?"},
             {"speaker": "teacher", "text": "Why do you think so?"}]  # fmt: skip
    path = _write_dialogues(tmp_path / "d.jsonl", [{"id": "d", "turns": turns}])
    _reply(tmp_path, path, budget=500)
    replies = tmp_path / "run" / "replies.csv"
    make_study(tmp_path / "st", [replies])
    items = _items(tmp_path / "st")
    # d:2: 3 + 60 tokens fit in 100; d:4: 4 + 50 + 3 = 57 fit, the 60-token turn would make 117
    assert [len(i["context"]) for i in items] == [2, 3]
    assert [t["text"] for t in items[1]["context"]] == ["a b c", question, "Is it 9?"]
    sel = pd.read_csv(tmp_path / "st" / "selection.csv")
    assert list(sel["context_turns_dropped"]) == [0, 1]
    make_study(tmp_path / "st2", [replies], context_tokens=200)
    items = _items(tmp_path / "st2")
    assert [len(i["context"]) for i in items] == [2, 4]
    make_study(tmp_path / "st3", [replies], context_tokens=1)  # the student turn, whole
    items = _items(tmp_path / "st3")
    assert [i["context"] for i in items] == [[turns[1]], [turns[3]]]


def test_select_column_replaces_the_heuristic(tmp_path):
    rows = [{"id": f"d{i}", "turns": [{"speaker": "student", "text": "I got 12."},
                                      {"speaker": "teacher", "text": "That is right, well done."}],
             "meta": {"scaffolding": ["yes", "no", "TRUE", "0"][i]}} for i in range(4)]  # fmt: skip
    path = _write_dialogues(tmp_path / "d.jsonl", rows)
    _reply(tmp_path, path)
    replies = tmp_path / "run" / "replies.csv"
    with pytest.raises(InputError, match="no turn passes"):  # the heuristic finds no question
        make_study(tmp_path / "h", [replies])
    res = make_study(tmp_path / "c", [replies], select_column="scaffolding")  # meta_scaffolding
    assert res["n_items"] == 2 and res["select"] == "column"
    assert res["select_column"] == "meta_scaffolding" and res["excluded"]["not_eliciting"] == 2
    with pytest.raises(InputError, match="no such column"):
        make_study(tmp_path / "x", [replies], select_column="missing")
    bad = pd.read_csv(replies)
    bad["meta_scaffolding"] = ["yes", "maybe", "no", "no"]
    bad.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(InputError, match="maybe") as err:
        make_study(tmp_path / "b", [tmp_path / "bad.csv"], select_column="scaffolding")
    assert err.value.column == "meta_scaffolding" and err.value.line == 3


def test_default_persona_is_the_papers_teacher(tmp_path, cli, monkeypatch):
    for quality in ("polite", "helpful", "professional", "on topic", "factually correct"):
        assert quality in DEFAULT_PERSONA
    assert "build on what the student said" in UPTAKE_PERSONA
    path = _write_dialogues(tmp_path / "d.jsonl", [{"id": "d", "turns": [
        {"speaker": "student", "text": "I got 12."}, {"speaker": "teacher", "text": "How?"}]}])  # fmt: skip
    _, bodies = _reply(tmp_path, path)
    assert bodies[0]["messages"][0] == {"role": "system", "content": DEFAULT_PERSONA}
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["params"]["persona"] == "paper"
    # the CLI: --persona uptake selects the old persona, any other text is the instruction
    monkeypatch.setenv("EDUEVAL_CACHE_DIR", str(tmp_path / "cache"))
    seen: list[str] = []

    def script(body):
        seen.append(body["messages"][0]["content"])
        return f"You said {last_user_message(body)}?"

    with ScriptedServer(script) as server:
        for i, persona in enumerate(("uptake", "Be brief.")):
            r = cli("tutor", "reply", path, "--model", "openai/scripted", "--base-url", server.url,
                    "--persona", persona, "--out", tmp_path / f"cli{i}", "--no-cache")  # fmt: skip
            assert r.code == 0, r.err
    assert seen == [UPTAKE_PERSONA, "Be brief."]
    config = json.loads((tmp_path / "cli0" / "config.json").read_text())
    assert config["params"]["persona"] == "uptake"


def test_make_study_cli_reports_the_selection(tmp_path, cli):
    rows = [{"dialogue": f"d{i}", "turn": 1, "model": "m", "context": "Student: I got 12.",
             "real_reply": reply, "ai_reply": "How do you know?", "status": "ok"}
            for i, reply in enumerate(["Yeah.", "Okay, good.", "How do you know it is 12?"])]  # fmt: skip
    pd.DataFrame(rows).to_csv(tmp_path / "replies.csv", index=False)
    r = cli("tutor", "make-study", tmp_path / "replies.csv", "--out", tmp_path / "st")
    assert r.code == 0, r.err
    assert "3 teacher turns: 1 selected, left out: 1 short_reply, 1 not_eliciting" in r.err
    r = cli("tutor", "make-study", tmp_path / "replies.csv", "--out", tmp_path / "st2",
            "--select", "all", "--min-words", "3", "--context-tokens", "5")  # fmt: skip
    assert r.code == 0, r.err
    assert json.loads((tmp_path / "st2" / "results.json").read_text())["n_items"] == 1
    r = cli("tutor", "make-study", tmp_path / "replies.csv", "--out", tmp_path / "st3",
            "--select", "some")  # fmt: skip
    assert r.code == 2 and len(r.err_lines) == 1 and "--select" in r.err


def test_selection_on_the_ncte_data():
    """The heuristic on the 2,246 real NCTE teacher replies (a measurement, recorded in the
    README): 91 have fewer than 2 normalised words; of the rest, 1,596 elicit or scaffold."""
    df = pd.read_csv(NCTE)
    short = df["teacher_text"].map(too_short)
    cue = df["teacher_text"].map(eliciting_cue)
    assert df["teacher_text"].iloc[0] == "Yeah." and short.iloc[0]
    assert int(short.sum()) == 91
    assert int((~short & cue.notna()).sum()) == 1596
    # the kept turns took up more of the student's idea, by the NCTE raters' uptake z-scores
    kept = ~short & cue.notna()
    assert df.loc[kept, "uptake_zscore"].mean() > df.loc[~kept, "uptake_zscore"].mean()


def test_build_messages_keeps_a_multiline_turn_in_one_message():
    msgs = build_messages([("student", "a\nStudent: b"), ("teacher", "c")], "p")
    assert msgs[1:] == [{"role": "user", "content": "a\nStudent: b"},
                        {"role": "assistant", "content": "c"}]  # fmt: skip
