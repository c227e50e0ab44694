"""docs/models.md "Comparing models": the Python block (``compare([res_a, res_b, res_c])``) on
three in-memory malalgo evaluations (scripted server) gives the numbers that ``edueval compare``
writes for the three matching ``malalgo run`` folders, to 1e-12."""

from __future__ import annotations

from typing import Any

from .conftest import DOC_FILES, ROOT, assert_same

MODEL = "openai/gpt-4o-mini"
FIRST = "from edueval.compare import compare"
#: the three runs: options of `malalgo run` and the same as keywords of `evaluate`
RUNS = {"res_a": ([], {}), "res_b": (["--prompt", "cot"], {"prompt": "cot"}),
        "res_c": (["--shots", "2"], {"shots": 2})}  # fmt: skip


def _block() -> str:
    blocks = []
    for path in DOC_FILES:
        for part in path.read_text(encoding="utf-8").split("```python\n")[1:]:
            code = part.split("```", 1)[0]
            if code.startswith(FIRST):
                blocks.append((path.relative_to(ROOT), code))
    assert len(blocks) == 1, blocks
    return blocks[0][1]


def test_the_compare_block_equals_edueval_compare(sandbox, mock_server, monkeypatch):
    from edueval.malalgo import evaluate

    sandbox.cli("malalgo", "generate", "--n", 4, "--seed", 2, "--out", "gen")
    cli = sandbox.cli_dir
    for name, (options, _) in RUNS.items():
        sandbox.cli("malalgo", "run", cli / "gen/questions.csv", "--model", MODEL, *options,
                    "--out", name)  # fmt: skip
    sandbox.cli("compare", *(cli / name for name in RUNS), "--out", "cmp")
    written = sandbox.results("cmp")

    given: dict[str, Any] = {"__name__": "__docs__"}
    with monkeypatch.context() as m:
        m.chdir(sandbox.work)
        m.setenv("HOME", str(sandbox.home))
        m.setenv("EDUEVAL_CACHE_DIR", str(sandbox.cache))
        m.setenv("OPENAI_BASE_URL", sandbox.env["OPENAI_BASE_URL"])
        for name, (_, kwargs) in RUNS.items():
            given[name] = evaluate(cli / "gen/questions.csv", MODEL, seed=1, **kwargs)
        exec(compile(_block(), "docs/models.md", "exec"), given)  # noqa: S102 - the docs' text
    cmp = given["cmp"]
    sandbox.printed = sandbox.capsys.readouterr().out
    sandbox.check_summary(cmp)
    got = cmp.as_dict()
    # the command adds each run's folder and status to its rows; the rest is the same
    written["runs"] = [{k: v for k, v in row.items() if k not in ("folder", "status")}
                       for row in written["runs"]]  # fmt: skip
    assert_same(got, {k: written[k] for k in got}, "edueval compare")
    assert len(got["differences"]) >= 2 and len(got["runs"]) == 3
