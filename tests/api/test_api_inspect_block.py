"""docs/models.md "Opening a model run in inspect_ai's viewer": the Python block
(``to_inspect_log("runs/p3")``) on a P3 run folder made by ``malalgo run`` (scripted server)
gives the log that ``edueval export inspect`` writes for the same folder, and writes nothing."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from .conftest import DOC_FILES, ROOT, listing

MODEL = "openai/gpt-4o-mini"
FIRST = "from edueval.export import to_inspect_log"


def _block() -> str:
    blocks = []
    for path in DOC_FILES:
        text = path.read_text(encoding="utf-8")
        for part in text.split("```python\n")[1:]:
            code = part.split("```", 1)[0]
            if code.startswith(FIRST):
                blocks.append((path.relative_to(ROOT), code))
    assert len(blocks) == 1, blocks
    return blocks[0][1]


def test_the_inspect_block_equals_export_inspect(sandbox, mock_server, monkeypatch):
    inspect_log = pytest.importorskip("inspect_ai.log")
    sandbox.cli("malalgo", "generate", "--n", 3, "--seed", 2, "--out", "gen")
    cli = sandbox.cli_dir
    sandbox.cli("malalgo", "run", cli / "gen/questions.csv", "--model", MODEL, "--out", "p3")
    sandbox.cli("export", "inspect", cli / "p3", "--out", cli / "p3.json")
    shutil.copytree(cli / "p3", sandbox.work / "runs" / "p3")

    before = listing(sandbox.root)
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    with monkeypatch.context() as m:
        m.chdir(sandbox.work)
        exec(compile(_block(), "docs/models.md", "exec"), namespace)  # noqa: S102 - the docs' text
    assert listing(sandbox.root) == before  # nothing written

    log, written = namespace["log"], inspect_log.read_eval_log(str(cli / "p3.json"))
    assert log.eval.task == written.eval.task == "edueval/malalgo"
    assert log.eval.model == written.eval.model
    assert len(log.samples) == len(written.samples) > 0
    assert [s.id for s in log.samples] == [s.id for s in written.samples]
    assert [s.scores for s in log.samples] == [s.scores for s in written.samples]
