"""docs "From Python: kt": BKT fit + evaluate in memory equal `kt fit` / `kt evaluate`."""

from __future__ import annotations

from .conftest import assert_same, assert_same_table

PARAMS = ["prior", "learn", "guess", "slip", "forget"]


def test_kt_snippet_equals_the_command_line(sandbox):
    sandbox.cli("kt", "simulate", "--students", 60, "--skills", 3, "--opportunities", 10,
                "--seed", 3, "--out", "sim")  # fmt: skip
    cli = sandbox.cli_dir
    sandbox.cli("kt", "fit", cli / "sim/responses.csv", "--out", "fit")
    sandbox.cli("kt", "predict", cli / "sim/responses.csv", "--params", cli / "fit/params.csv",
                "--out", "pred")  # fmt: skip
    sandbox.cli("kt", "evaluate", cli / "pred/predictions.csv", "--params",
                cli / "fit/params.csv", "--out", "ev")  # fmt: skip
    sandbox.give(cli / "sim/responses.csv")

    ns = sandbox.run_snippet("kt")

    model, ev = ns["model"], ns["ev"]
    sandbox.check_summary(model)
    sandbox.check_summary(ev)
    fit = sandbox.results("fit")
    params = model.params_.reset_index()  # skill: the index
    got = [{"skill": str(r["skill"]), **{p: r[p] for p in PARAMS},
            "log_likelihood": model.log_likelihood_[r["skill"]],
            "n_iter": model.n_iter_[r["skill"]],
            "converged": model.converged_[r["skill"]]}
           for r in params.to_dict(orient="records")]  # fmt: skip
    want = [{k: p[k] for k in got[0]} for p in fit["params"]]
    assert_same(got, want, "kt fit params")
    assert_same(float(model.log_likelihood_.sum()), fit["total_log_likelihood"], "kt fit")
    assert_same(int(model.n_params_), fit["n_params"], "kt fit n_params")
    assert_same_table(params, cli / "fit/params.csv", ["skill", *PARAMS])

    written = sandbox.results("ev")
    assert_same(ev.results(), {k: written[k] for k in ev.results()}, "kt evaluate")
    assert ev.knowledge is not None and ev.mol_mad == written["moment_of_learning"]["mol_mad"]
    assert_same_table(ev.metrics, cli / "ev/metrics.csv")
    assert len(ev.to_frame()) > 0
