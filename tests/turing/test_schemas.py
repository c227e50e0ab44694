"""The imitation game's tables under their declared schemas (issue 24, point 1): Phase-1 answers,
Phase-2 choices, the three sources of ``turing assemble`` and ``turing simulate --frequencies``.
Ids are taken exactly as written, a column named twice or a key given twice is refused -- each a
one-line refusal, exit 2."""

from __future__ import annotations

import json

import pytest

from edueval.io import InputError
from edueval.turing import read_phase1
from edueval.turing.simulate import DEFAULT_FREQUENCIES, read_frequencies

P1_HEAD = "student,question,answer,correct_answer\n"
P1_ROWS = ["s1,q1,3,5", "s1,q2,7,7", "s2,q1,4,5"]


def _refused(r, *needles: str) -> None:
    assert r.code == 2, (r.code, r.err)
    assert len(r.err_lines) == 1 and r.err_lines[0].startswith("error: "), r.err
    for needle in needles:
        assert needle in r.err, (needle, r.err)


def _generate(cli, tmp_path, path):
    return cli("turing", "generate", path, "--model", "openai/x", "--base-url",
               "http://127.0.0.1:9", "--out", tmp_path / "g", "--no-cache")  # fmt: skip


# -- turing generate: Phase-1 ids exactly as written --------------------------------------------


@pytest.mark.parametrize(
    ("student", "why"),
    [(" s1", "surrounding spaces"), ("s1 ", "surrounding spaces"),
     ("s1\x00", "control characters"), ("s\x1b1", "control characters")],
)  # fmt: skip
def test_turing_generate_refuses_a_student_id_not_as_written(cli, write, tmp_path, student, why):
    rows = [f"{student},q1,3,5", *P1_ROWS[1:]]
    path = write("p1.csv", P1_HEAD + "".join(r + "\n" for r in rows))
    _refused(_generate(cli, tmp_path, path), "p1.csv", "line 2", "column 'student'", why)


@pytest.mark.parametrize(
    ("value", "shown"),
    [(None, "non-empty"), ({"a": 1}, "JSON object"), (["s1"], "JSON list"), (False, "true/false")],
)
def test_turing_generate_refuses_a_json_value_that_is_not_an_id(cli, write, tmp_path, value, shown):
    records = [{"student": "s1", "question": "q1", "answer": "3", "correct_answer": "5"},
               {"student": "s2", "question": value, "answer": "4", "correct_answer": "5"}]  # fmt: skip
    path = write("p1.jsonl", "".join(json.dumps(r) + "\n" for r in records))
    _refused(_generate(cli, tmp_path, path), "p1.jsonl", "line 2", "column 'question'", shown)


def test_s1_with_a_nul_is_not_a_phantom_second_student(write):
    """``s1\\0`` used to read as a student of its own beside ``s1`` (two students, one person)."""
    path = write("p1.csv", P1_HEAD + "s1,q1,3,5\ns1\x00,q2,4,5\n")
    with pytest.raises(InputError, match="control character") as exc:
        read_phase1(path)
    assert exc.value.line == 3 and exc.value.column == "student"


def test_turing_analyze_refuses_a_phantom_student_in_the_phase1_file(cli, write, tmp_path):
    choices = write("c.csv", "student,question,chosen\ns1,q1,ai\ns2,q1,human\n")
    p1 = write("p1.csv", P1_HEAD + "s1,q1,3,5\ns2,q1,4,5\ns2\x00,q2,4,5\n")
    r = cli("turing", "analyze", choices, "--phase1", p1, "--out", tmp_path / "a")
    _refused(r, "p1.csv", "line 4", "column 'student'")


def test_turing_generate_refuses_a_column_named_twice(cli, write, tmp_path):
    path = write("p1.csv", "student,question,answer,correct_answer,answer\ns1,q1,3,5,5\n")
    _refused(_generate(cli, tmp_path, path), "'answer' twice")


def test_turing_analyze_refuses_a_column_named_twice(cli, write, tmp_path):
    path = write("c.csv", "student,question,chosen,chosen\ns1,q1,ai,human\ns2,q1,human,ai\n")
    _refused(cli("turing", "analyze", path, "--out", tmp_path / "a"), "'chosen' twice")


def test_turing_analyze_refuses_a_misspelt_column(cli, write, tmp_path):
    path = write("c.csv", "student,question,chosen,positon\ns1,q1,ai,1\ns2,q1,human,2\n")
    _refused(cli("turing", "analyze", path, "--out", tmp_path / "a"),
             "unknown column 'positon'", "did you mean 'position'")  # fmt: skip


def test_a_phase1_answer_given_twice_is_refused(write):
    path = write("p1.csv", P1_HEAD + "s1,q1,3,5\ns1,q1,4,5\n")
    with pytest.raises(InputError, match="duplicate student and question") as exc:
        read_phase1(path)
    assert exc.value.line == 3


# -- turing assemble: the sources' ids ------------------------------------------------------------

AI_HEAD = "student,question,related_question,related_correct,ai_distractor,ai_status\n"


@pytest.mark.parametrize("student", [" s1", "s1\x00"])
def test_turing_assemble_refuses_a_worksheet_id_not_as_written(cli, write, tmp_path, student):
    ai = write("ai.csv", AI_HEAD + "s1,q1,Q'1,7,12,ok\n")
    human = write("h.csv", f"student,question,human_distractor\n{student},q1,15\n")
    r = cli("turing", "assemble", ai, "--human", human, "--out", tmp_path / "a")
    _refused(r, "h.csv", "line 2", "column 'student'")


def test_turing_assemble_refuses_a_tuple_given_twice(cli, write, tmp_path):
    ai = write("ai.csv", AI_HEAD + "s1,q1,Q'1,7,12,ok\ns1,q1,Q'1,7,13,ok\n")
    human = write("h.csv", "student,question,human_distractor\ns1,q1,15\n")
    r = cli("turing", "assemble", ai, "--human", human, "--out", tmp_path / "a")
    _refused(r, "ai.csv", "line 3", "duplicate")


def test_turing_assemble_refuses_an_empty_ai_status(cli, write, tmp_path):
    """An empty ``ai_status`` used to read as "no AI distractor"."""
    ai = write("ai.csv", AI_HEAD + "s1,q1,Q'1,7,12,ok\ns2,q1,Q'1,7,11,\n")
    human = write("h.csv", "student,question,human_distractor\ns1,q1,15\ns2,q1,16\n")
    r = cli("turing", "assemble", ai, "--human", human, "--out", tmp_path / "a")
    _refused(r, "ai.csv", "line 3", "column 'ai_status'", "non-empty")


# -- turing simulate --frequencies ---------------------------------------------------------------


def _simulate(cli, tmp_path, path):
    return cli("turing", "simulate", "--students", 4, "--questions", 2, "--reps", 1,
               "--frequencies", path, "--out", tmp_path / "s")  # fmt: skip


def test_a_rule_given_twice_in_frequencies_is_refused_not_the_last_wins(cli, write, tmp_path):
    path = write("f.csv", "rule,frequency\nadd_across,0.3\nleft_to_right,0.2\nadd_across,0.9\n")
    _refused(_simulate(cli, tmp_path, path), "f.csv", "line 4", "duplicate rule",
             "add_across")  # fmt: skip
    assert not (tmp_path / "s" / "results.json").exists()


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        ("rule,frequency\nadd_acros,0.3\n", ("line 2", "did you mean 'add_across'")),
        ("rule,frequncy\nadd_across,0.3\n", ("unknown column 'frequncy'", "'frequency'")),
        ("rule,frequency,note\nadd_across,0.3,x\n", ("unknown column 'note'",)),
        ("rule,frequency\nadd_across \t,0.3\n", ("line 2", "column 'rule'")),
        ("rule,frequency,frequency\nadd_across,0.3,0.5\n", ("'frequency' twice",)),
        ("rule,frequency\nadd_across,1.5\n", ("column 'frequency'", "[0.0, 1.0]")),
    ],
)
def test_a_bad_frequencies_file_is_one_line(cli, write, tmp_path, text, needles):
    _refused(_simulate(cli, tmp_path, write("f.csv", text)), "f.csv", *needles)


def test_a_valid_frequencies_file_reads_as_written(write):
    text = "rule,frequency\n" + "".join(f"{r},{f}\n" for r, f in DEFAULT_FREQUENCIES.items())
    assert read_frequencies(write("f.csv", text)) == DEFAULT_FREQUENCIES
