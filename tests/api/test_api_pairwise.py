"""docs "From Python: pairwise": BradleyTerry(data).fit() in memory equals `pairwise fit`."""

from __future__ import annotations

import math

from edueval.pairwise import bundled_folder, import_teacher_test

from .conftest import assert_same, assert_same_table

N_ITEMS = 2  # of the 49 bundled AI Teacher Test items: 6 (item, attribute) models, ~15 s a fit
RUN_ONLY = {"sampling_seconds"}  # timings: not a number of the fit


def test_pairwise_snippet_equals_the_command_line(sandbox):
    cli = sandbox.cli_dir
    data = import_teacher_test(bundled_folder() / "items.jsonl")
    items = sorted(data["item"].unique())[:N_ITEMS]
    path = cli / "comparisons.csv"
    data[data["item"].isin(items)].to_csv(path, index=False)
    sandbox.cli("pairwise", "fit", path, "--out", "fit")  # seed 1, ties random: the defaults
    sandbox.give(path)

    ns = sandbox.run_snippet("pairwise")

    res = ns["res"]
    sandbox.check_summary(res)
    written = sandbox.results("fit")
    diag = {k: v for k, v in res.diagnostics().items() if k not in RUN_ONLY}
    got = {"n_groups": len(res.groups), "n_comparisons": int(res.groups["n_comparisons"].sum()),
           "n_skipped_groups": len(res.skipped), **diag, "agents": res.agent_table()}  # fmt: skip
    assert_same(got, {k: written[k] for k in got}, "pairwise fit")
    assert len(res.skipped) == 0  # so min_comparisons (3 in the command, 1 here) plays no part
    assert_same_table(res.abilities, cli / "fit/abilities.csv")
    assert_same_table(res.groups, cli / "fit/groups.csv")
    assert math.isfinite(res.max_rhat) and res.n_divergent == written["n_divergent"]
    assert len(res.to_frame()) == len(res.abilities) * 3 + len(res.groups)  # alpha, rank, prob
