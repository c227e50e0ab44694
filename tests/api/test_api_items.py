"""docs "From Python: items": analyze_items on the user's frames equals `items analyze`."""

from __future__ import annotations

from .conftest import assert_same, assert_same_table


def test_items_snippet_equals_the_command_line(sandbox):
    sandbox.cli("items", "simulate", "--students", 40, "--seed", 2, "--out", "sim")
    cli = sandbox.cli_dir
    sandbox.cli("items", "analyze", cli / "sim/responses.csv", cli / "sim/items.jsonl",
                "--out", "an")  # fmt: skip
    sandbox.give(cli / "sim/responses.csv")
    sandbox.give(cli / "sim/items.jsonl")

    ns = sandbox.run_snippet("items")

    res = ns["res"]
    sandbox.check_summary(res)
    written = sandbox.results("an")
    got = {"n_items": res.n_items, "n_students": res.n_students,
           "n_responses": res.n_responses, "has_choices": res.has_choices, "mean": res.mean,
           "n_nonfunctional": res.n_nonfunctional}  # fmt: skip
    assert_same(got, {k: written[k] for k in got}, "items analyze")
    assert_same_table(res.items, cli / "an/item_stats.csv")
    assert_same_table(res.distractors, cli / "an/distractors.csv")
    frame = res.to_frame()
    assert {"item", "measure", "value"} <= set(frame.columns) and len(frame) > 0
