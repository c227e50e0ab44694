"""The JSON-schema grammar given to xllamacpp (:mod:`edueval.models.json_grammar`).

* It accepts exactly the texts llama-cpp-python's grammar accepts, checked on each schema shape
  edueval sends: both grammars are translated to regular expressions (they are not recursive)
  and must agree on valid replies and on every one-character whitespace edit of them, and on
  replies broken in content (a string too long or too short, a value outside the enum, too few
  or too many items, a property missing, added or moved).
* It covers every schema edueval's protocols send, writes properties in the order written, and
  refuses what it does not write (the engine then uses llguidance).
* ``cached_grammar`` compiles a schema with its properties in the written order, once.
"""

from __future__ import annotations

import json
import re

import pytest

from edueval.malalgo.prompts import ANSWER_SCHEMA
from edueval.models.json_grammar import Unsupported, gbnf
from edueval.qgsms import prompts as qp
from edueval.turing.generation import AI_SCHEMA, QUESTION_SCHEMA, SOLVE_SCHEMA

ITEM = {"answer": "B", "options": ["A", "B", "C", "D"]}

# -- GBNF (non-recursive) as a Python regular expression -----------------------------------------

_TOKEN = re.compile(
    r'\s*(?:(?P<lit>"(?:\\.|[^"\\])*")|(?P<cls>\[(?:\\.|[^\]\\])*\])|(?P<name>[A-Za-z0-9-]+)'
    r"|(?P<rep>\{\d+(?:,\d*)?\})|(?P<op>[()|?*+]))"
)
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}


def _unescape(body: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES[m.group(1)], body)


def _to_regex(grammar: str) -> re.Pattern[str]:
    rules = {}
    for line in grammar.strip().splitlines():
        name, _, body = line.partition(" ::= ")
        rules[name.strip()] = body

    def expand(name: str) -> str:
        out, body = [], rules[name]
        pos = 0
        while pos < len(body.rstrip()):
            m = _TOKEN.match(body, pos)
            assert m, body[pos:]
            pos = m.end()
            if m["lit"]:
                out.append(re.escape(_unescape(m["lit"][1:-1])))
            elif m["cls"]:
                out.append(m["cls"])
            elif m["name"]:
                out.append(f"(?:{expand(m['name'])})")
            elif m["rep"]:
                out.append(m["rep"])
            else:
                out.append({"(": "(?:"}.get(m["op"], m["op"]))
        return "".join(out)

    return re.compile(expand("root"), re.DOTALL)


def _llama_cpp_python_grammar(schema: dict) -> str:
    llama_grammar = pytest.importorskip("llama_cpp.llama_grammar", reason="needs llama-cpp-python")
    return llama_grammar.json_schema_to_gbnf(json.dumps(schema))


def _edits(text: str) -> list[str]:
    """``text`` and every insertion of one space, two spaces or a newline."""
    out = [text, text + " ", text + "  "]
    for i in range(len(text) + 1):
        out += [text[:i] + w + text[i:] for w in (" ", "  ", "\n")]
    return out


def _small(schema: dict, chars: int = 6) -> dict:
    """``schema`` with every ``maxLength`` at most ``chars`` (llama-cpp-python's grammar writes
    a bound as nested groups, too deep for a regular expression at 400)."""
    if isinstance(schema, dict):
        out = {k: _small(v, chars) for k, v in schema.items()}
        if "maxLength" in out:
            out["maxLength"] = min(out["maxLength"], chars)
        return out
    if isinstance(schema, list):
        return [_small(v, chars) for v in schema]
    return schema


CASES = {
    "malalgo answer": (ANSWER_SCHEMA, [{"Correct Choice": "C"}], [{"Correct Choice": "E"}, {}]),
    "verdict with reasoning": (
        _small(qp.verdict_schema(cot=True)),
        [{"reasoning": "", "better": "a"}, {"reasoning": "abcdef", "better": "b"}],
        [
            {"reasoning": "abcdefg", "better": "a"},
            {"better": "a", "reasoning": "x"},
            {"reasoning": "x", "better": "c"},
            {"reasoning": "x", "better": "a", "more": 1},
        ],
    ),  # fmt: skip
    "profiles": (
        _small(qp.profiles_schema(2, 3)),
        [
            {"students": [{"name": "A", "understanding": "u"}] * 2},
            {"students": [{"name": "Bo é", "understanding": 'says "x"\n'}] * 3},
        ],
        [
            {"students": [{"name": "A", "understanding": "u"}]},
            {"students": [{"name": "A", "understanding": "u"}] * 4},
            {"students": [{"name": "", "understanding": "u"}] * 2},
            {"students": [{"name": "A", "understanding": ""}] * 2},
        ],
    ),  # fmt: skip
    "predictions": (
        qp.predictions_schema(["Ann", "Bo"], ITEM, ITEM, explanation_chars=5),
        [
            {
                "students": {
                    n: {
                        "question_1": {"correct": True, "choice": "B", "explanation": "ok"},
                        "question_2": {"correct": False, "choice": "D", "explanation": "no"},
                    }
                    for n in ("Ann", "Bo")
                }
            }
        ],
        [
            {
                "students": {
                    n: {
                        "question_1": {"correct": True, "choice": "A", "explanation": "ok"},
                        "question_2": {"correct": False, "choice": "B", "explanation": "no"},
                    }
                    for n in ("Ann", "Bo")
                }
            },
            {
                "students": {
                    n: {
                        "question_1": {"correct": True, "choice": "B", "explanation": ""},
                        "question_2": {"correct": False, "choice": "D", "explanation": "no"},
                    }
                    for n in ("Bo", "Ann")
                }
            },
        ],
    ),  # fmt: skip
    "criteria": (
        _small(qp.CRITERIA_SCHEMA),
        [{"criteria": ["a", "b", "c"]}, {"criteria": ["a", "", "c", "d", "e"]}],
        [{"criteria": ["a", "b"]}, {"criteria": ["a"] * 6}, {"criteria": ["abcdefg", "b", "c"]}],
    ),
    "turing question": (
        QUESTION_SCHEMA,
        [{"related_question": "What is 1/2 + 1/3?", "correct_answer": "5/6"}],
        [{"correct_answer": "5/6", "related_question": "q"}, {"related_question": "q"}],
    ),
    "numbers and booleans": (
        {
            "type": "object",
            "properties": {
                "n": {"type": "integer"},
                "x": {"type": "number"},
                "b": {"type": "boolean"},
                "z": {"type": "null"},
            },
            "required": ["n", "x", "b", "z"],
        },
        [{"n": -12, "x": 0.5, "b": True, "z": None}, {"n": 0, "x": 1e-3, "b": False, "z": None}],
        [{"n": 1.5, "x": 1, "b": True, "z": None}, {"n": 1, "x": 1, "b": 1, "z": None}],
    ),  # fmt: skip
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_grammar_accepts_what_llama_cpp_pythons_accepts(case):
    schema, valid, invalid = CASES[case]
    ours, theirs = _to_regex(gbnf(schema)), _to_regex(_llama_cpp_python_grammar(schema))
    checked = 0
    for value in valid + invalid:
        for text in {json.dumps(value), json.dumps(value, separators=(",", ":"))}:
            for edit in _edits(text):
                a, b = bool(ours.fullmatch(edit)), bool(theirs.fullmatch(edit))
                assert a == b, (case, edit, a, b)
                checked += a
    for value in valid:  # the cases are what they claim to be
        assert ours.fullmatch(json.dumps(value)), value
    for value in invalid:
        assert not ours.fullmatch(json.dumps(value)), value
    assert checked > 10 * len(valid)  # spaces are allowed at many places, not only none


def test_every_schema_the_protocols_send_is_written_in_this_grammar():
    schemas = [
        ANSWER_SCHEMA, QUESTION_SCHEMA, SOLVE_SCHEMA, AI_SCHEMA, qp.verdict_schema(False),
        qp.verdict_schema(True), qp.SMS_VERDICT_SCHEMA, qp.profiles_schema(10, 10),
        qp.predictions_schema(["Ann", "Bo"], ITEM, ITEM), qp.CRITERIA_SCHEMA,
        qp.REFERENCE_SCHEMA, qp.personas_schema(3), qp.discussion_schema(),
    ]  # fmt: skip
    for schema in schemas:
        assert gbnf(schema).startswith("char ::=") or "root ::=" in gbnf(schema)


def test_properties_come_in_the_order_written():
    grammar = gbnf(qp.discussion_schema())  # the comment first, the verdict last
    root = next(line for line in grammar.splitlines() if line.startswith("root ::="))
    assert root.index('"\\"comment\\""') < root.index('"\\"better\\""')
    ours = _to_regex(grammar)
    assert ours.fullmatch('{"comment": "x", "better": "a"}')
    assert not ours.fullmatch('{"better": "a", "comment": "x"}')


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object"},  # any object (JSON mode)
        {"type": "object", "properties": {"a": {"type": "string"}}},  # optional property
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"],
         "additionalProperties": True},
        {"type": "string", "pattern": "^a+$"},
        {"type": "string", "format": "date"},
        {"type": ["string", "null"]},
        {"$ref": "#/$defs/x"},
        {"allOf": [{"type": "string"}]},
        {"type": "integer", "minimum": 0},
        {"type": "array"},
        "not a schema",
    ],
)  # fmt: skip
def test_what_it_does_not_write_is_refused(schema):
    with pytest.raises(Unsupported):
        gbnf(schema)


def test_cached_grammar_compiles_the_written_order_once_per_schema():
    from edueval.models.local_xllamacpp import cached_grammar

    seen: list[str] = []
    cache: dict = {}

    def compile_(text: str) -> int:
        seen.append(text)
        return len(seen)

    first = {"type": "object", "properties": {"z": {}, "a": {}}}
    assert cached_grammar(cache, first, compile_) == 1
    assert list(json.loads(seen[0])["properties"]) == ["z", "a"]  # as written, not sorted
    assert cached_grammar(cache, dict(first), compile_) == 1  # compiled once
    other = {"type": "object", "properties": {"a": {}, "z": {}}}
    assert cached_grammar(cache, other, compile_) == 2  # another order: another grammar
