"""``edueval formats``: every module-level ``Schema`` of edueval is listed (found here by an
independent walk that imports every module), each with all its columns, and a bad name is one
line with exit code 2."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping

import pytest

import edueval
from edueval.cli.main import main
from edueval.formats import find_schemas, find_table, table_markdown, table_text
from edueval.io import InputError
from edueval.tables import Schema


def _every_module_level_schema() -> dict[int, str]:
    """id -> Python name of every Schema bound at the top of any edueval module (or held in a
    module-level mapping of schemas), by importing every module."""
    found: dict[int, str] = {}
    for info in pkgutil.walk_packages(edueval.__path__, "edueval."):
        if info.name == "edueval.__main__":  # importing it runs the CLI
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            values = value.values() if isinstance(value, Mapping) else [value]
            for v in values:
                if isinstance(v, Schema):
                    found.setdefault(id(v), f"{info.name}.{name}")
    return found


@pytest.fixture(scope="module")
def tables():
    return find_schemas()


def test_every_module_level_schema_is_listed_once(tables):
    listed = [id(t.schema) for t in tables]
    assert len(listed) == len(set(listed))
    missing = sorted(n for i, n in _every_module_level_schema().items() if i not in set(listed))
    assert not missing, f"not listed by edueval formats: {missing}"
    assert len({t.name for t in tables}) == len(tables)
    # the protocols' data modules are among them (a walk that found nothing would pass above)
    wheres = {t.where for t in tables}
    for where in ("edueval.kt.data.RESPONSE_SCHEMA", "edueval.malalgo.data.QUESTION_SCHEMA",
                  "edueval.pairwise.comparisons.COMPARISONS_SCHEMA",
                  "edueval.qgsms.data.PAIRS_SCHEMA", "edueval.turing.data.PHASE1_SCHEMA",
                  "edueval.items.scores.LONG_SCORES_SCHEMA"):  # fmt: skip
        assert where in wheres


def test_formats_prints_every_table_with_every_column(tables, capsys):
    assert main(["formats"]) == 0
    out = capsys.readouterr().out
    for table in tables:
        block = out.split(f"{table.name}: ", 1)[1].split("\n\n", 1)[0]
        for col in table.schema.columns:
            assert any(line.split()[:2] == [col.name, col.kind] for line in block.splitlines())
        assert table.schema.what in block


def test_one_table_by_name_with_its_ranges_defaults_and_key(capsys):
    assert main(["formats", "kt.parameter-file"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("kt.parameter-file: parameter file (edueval.kt.bkt.params.WIDE_SCHEMA)")
    assert "key: skill" in out and "closed:" in out
    lines = {line.split()[0]: line.split()[1:] for line in out.splitlines()[4:]}
    assert lines["prior"] == ["number", "[0,", "1]", "required"]
    assert lines["forget"] == ["number", "[0,", "1]", "optional,", "default", "0.0"]
    # the short name when unique, the Python name, any case
    assert find_table("Pairs-File").where == "edueval.qgsms.data.PAIRS_SCHEMA"
    assert find_table("edueval.kt.data.RESPONSE_SCHEMA").name == "kt.response-file"


def test_markdown_lists_every_column(tables):
    for table in tables:
        md = table_markdown(table)
        assert md.startswith(f"## `{table.name}`")
        rows = [line for line in md.splitlines() if line.startswith("| `")]
        assert [r.split("`")[1] for r in rows] == [c.name for c in table.schema.columns]
        assert ":func:`" not in md and ":data:`" not in md
        assert table_text(table).count("\n") >= len(table.schema.columns)


@pytest.mark.parametrize(("name", "said"), [("nope", "no input table 'nope'"),
                                            ("response-file", "ambiguous")])  # fmt: skip
def test_unknown_or_ambiguous_table_is_one_line_and_exit_2(name, said, capsys):
    assert main(["formats", name]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip()
    assert "\n" not in err and err.startswith("error: ") and said in err
    with pytest.raises(InputError):
        find_table(name)
