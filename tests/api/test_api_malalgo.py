"""docs "From Python: malalgo": evaluate in memory equals `malalgo run` (scripted server)."""

from __future__ import annotations

from .conftest import assert_same, assert_same_table

MODEL = "openai/gpt-4o-mini"  # the snippet's model string; OPENAI_BASE_URL is the mock server


def test_malalgo_snippet_equals_the_command_line(sandbox, mock_server):
    sandbox.cli("malalgo", "generate", "--n", 6, "--seed", 2, "--out", "gen")
    cli = sandbox.cli_dir
    sandbox.cli("malalgo", "run", cli / "gen/questions.csv", "--model", MODEL, "--out", "run")
    calls = mock_server.calls
    sandbox.give(cli / "gen/questions.csv")

    ns = sandbox.run_snippet("malalgo")

    res = ns["res"]
    assert mock_server.calls > calls  # asked the server, not the command's cache
    assert (sandbox.cache / "responses.sqlite").exists()  # the cache the test named
    sandbox.check_summary(res)
    written = sandbox.results("run")
    assert_same(res.metrics(), {k: written[k] for k in res.metrics()}, "malalgo run")
    assert 0 < res.mia.correct < res.mia.n and res.complete
    assert_same_table(res.responses, cli / "run/responses.csv",
                      ["task_id", "kind", "correct", "status"])  # fmt: skip
    assert list(res.to_frame()["measure"]) == ["mcq", "aia", "mia"]
