"""A JSON schema as a GBNF grammar that allows one optional space at each separator.

The embedded model's two runtimes constrain a JSON-schema reply with different grammars unless
they are given the same one: llama-cpp-python turns a schema into GBNF (llama.cpp's grammar
format) where one optional space may follow each ``{``, ``[``, ``,``, ``:``, key, string,
number, object and array -- ``{ "better" : "a"}`` is a valid reply -- while xllamacpp's default
(llguidance) allows either no whitespace at all or newlines and indentation too.  SmolLM2-135M
writes long looping strings when it is given no whitespace to end on (the QG-SMS profiles and
simulations ran to their token caps) and loops on whitespace when it may write newlines.

:func:`gbnf` writes, for the schemas edueval's protocols send, a grammar that accepts exactly the
texts llama-cpp-python's grammar accepts, so both engines choose among the same tokens at every
step and their greedy replies are the same.  The language, rule by rule:

* ``space ::= " "?``; a string is ``"\\"" char{min,max} "\\"" space`` with
  ``char ::= [^"\\\\] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4})``;
* ``boolean``, ``integer``, ``number`` and ``null`` are followed by ``space``; an ``enum`` or
  ``const`` value is its JSON text (``json.dumps``, so non-ASCII as ``\\uXXXX``) with *no* space
  after it;
* an object lists every property of ``properties`` in order, all required, no others:
  ``"{" space "\\"key\\"" space ":" space value ("," space ...)* "}" space``;
* an array is ``"[" space item ("," space item){min-1,max-1} "]" space`` (the items optional
  when ``minItems`` is 0);
* ``anyOf`` / ``oneOf`` are alternatives.

Anything else (an object without ``properties``, optional or additional properties, ``pattern``,
``format``, ``$ref``, ``allOf``, a list of types, a number's bounds) raises :class:`Unsupported`,
and the caller uses the runtime's own grammar.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["GRAMMAR_TAG", "Unsupported", "gbnf"]

GRAMMAR_TAG = "gbnf1"
"""How a schema becomes a grammar (properties in the order written; this module's language), in
the embedded model's cache identity: replies cached under another grammar are not reused."""

_SPACE = 'space ::= " "?'
_CHAR = r'char ::= [^"\\] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})'
_PRIMITIVES = {
    "boolean": '("true" | "false") space',
    "null": '"null" space',
    "integer": '("-"? ([0-9] | [1-9] [0-9]*)) space',
    "number": '("-"? ([0-9] | [1-9] [0-9]*)) ("." [0-9]+)? ([eE] [-+]? [0-9]+)? space',
}
# keys that describe a schema without constraining its text
_ANNOTATIONS = {"title", "description", "$schema", "$id", "examples", "default", "$comment"}


class Unsupported(ValueError):
    """The schema uses a feature :func:`gbnf` does not write."""


def gbnf(schema: dict[str, Any]) -> str:
    """The GBNF grammar of ``schema`` (see the module's description); :class:`Unsupported` for a
    feature outside it."""
    writer = _Writer()
    root = writer.value(schema, "root")
    writer.rules["root"] = root
    return "\n".join(f"{name} ::= {body}" for name, body in sorted(writer.rules.items())) + "\n"


def _literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") + '"'


def _json_literal(value: Any) -> str:
    return _literal(json.dumps(value))


def _repeat(item: str, low: int, high: int | None) -> str:
    """``item`` repeated ``low`` to ``high`` times (``None``: unbounded)."""
    if high is None:
        return f"({item}){'*' if low == 0 else '+' if low == 1 else f'{{{low},}}'}"
    if high == low:
        return f"({item}){{{low}}}"
    return f"({item}){{{low},{high}}}"


class _Writer:
    def __init__(self) -> None:
        self.rules: dict[str, str] = {"space": _SPACE[len("space ::= ") :]}

    def _rule(self, name: str, body: str) -> str:
        """A named rule for ``body`` (its name unique, from the path in the schema)."""
        base = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-") or "r"
        key, i = base, 0
        while key in self.rules and self.rules[key] != body:
            i += 1
            key = f"{base}{i}"
        self.rules[key] = body
        return key

    def value(self, schema: Any, name: str) -> str:
        """The grammar expression of one value."""
        if not isinstance(schema, dict):
            raise Unsupported(f"{name}: a schema must be an object, not {schema!r}")
        keys = set(schema) - _ANNOTATIONS
        if "const" in schema:
            _only(schema, keys, {"const"}, name)
            return _json_literal(schema["const"])
        if "enum" in schema:
            _only(schema, keys, {"enum", "type"}, name)
            values = schema["enum"]
            if not isinstance(values, list) or not values:
                raise Unsupported(f"{name}: enum must be a non-empty list")
            return "(" + " | ".join(_json_literal(v) for v in values) + ")"
        for word in ("anyOf", "oneOf"):
            if word in schema:
                _only(schema, keys, {word}, name)
                alts = [
                    self._rule(f"{name}-{i}", self.value(s, f"{name}-{i}"))
                    for i, s in enumerate(schema[word])
                ]
                return "(" + " | ".join(alts) + ")"
        kind = schema.get("type")
        if kind == "object":
            return self._object(schema, keys, name)
        if kind == "array":
            return self._array(schema, keys, name)
        if kind == "string":
            return self._string(schema, keys, name)
        if isinstance(kind, str) and kind in _PRIMITIVES:
            _only(schema, keys, {"type"}, name)
            return _PRIMITIVES[kind]
        raise Unsupported(f"{name}: type {kind!r}")

    def _string(self, schema: dict[str, Any], keys: set[str], name: str) -> str:
        _only(schema, keys, {"type", "minLength", "maxLength"}, name)
        self.rules["char"] = _CHAR[len("char ::= ") :]
        low = int(schema.get("minLength", 0))
        high = schema.get("maxLength")
        return f'"\\"" {_repeat("char", low, None if high is None else int(high))} "\\"" space'

    def _object(self, schema: dict[str, Any], keys: set[str], name: str) -> str:
        _only(schema, keys, {"type", "properties", "required", "additionalProperties"}, name)
        props = schema.get("properties")
        if not isinstance(props, dict) or not props:
            raise Unsupported(f"{name}: an object without properties (any object)")
        if set(schema.get("required") or []) != set(props):
            raise Unsupported(f"{name}: every property must be required")
        if schema.get("additionalProperties", False) is not False:
            raise Unsupported(f"{name}: additional properties")
        pairs = []
        for key, sub in props.items():
            value = self._rule(f"{name}-{key}", self.value(sub, f"{name}-{key}"))
            pairs.append(f'{_json_literal(key)} space ":" space {value}')
        return '"{" space ' + ' "," space '.join(pairs) + ' "}" space'

    def _array(self, schema: dict[str, Any], keys: set[str], name: str) -> str:
        _only(schema, keys, {"type", "items", "minItems", "maxItems"}, name)
        if not isinstance(schema.get("items"), dict):
            raise Unsupported(f"{name}: an array needs one 'items' schema")
        item = self._rule(f"{name}-item", self.value(schema["items"], f"{name}-item"))
        low = int(schema.get("minItems", 0))
        high = schema.get("maxItems")
        if high is not None and int(high) == 0:
            return '"[" space "]" space'
        rest_high = None if high is None else int(high) - 1
        more = '"," space ' + item
        items = f"{item} {_repeat(more, max(low - 1, 0), rest_high)}"
        if low == 0:
            items = f"({items})?"
        return f'"[" space {items} "]" space'


def _only(schema: dict[str, Any], keys: set[str], allowed: set[str], name: str) -> None:
    extra = keys - allowed
    if extra:
        raise Unsupported(f"{name}: {', '.join(sorted(extra))}")
    if "type" in keys and "type" in allowed and not isinstance(schema["type"], str):
        raise Unsupported(f"{name}: a list of types")
