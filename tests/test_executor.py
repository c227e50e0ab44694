"""The executor seam: in process by default, Dask on request, the same numbers either way.

One LocalCluster of 2 worker processes is shared by the cluster tests of this module; each test
runs a protocol's independent tasks in process and on the cluster and compares the results bit
for bit (``check_exact``)."""

from __future__ import annotations

import json
import logging

import numpy as np
import pandas as pd
import pytest

from edueval.executor import DaskExecutor, InProcess, open_executor, parse_cluster
from edueval.io import InputError
from edueval.seeding import task_seeds

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    with open_executor(cluster="local:2") as ex:
        assert isinstance(ex, DaskExecutor)
        assert len(ex.client.scheduler_info()["workers"]) == 2
        yield ex


def test_in_process_is_the_default_and_keeps_order(monkeypatch):
    monkeypatch.delenv("EDUEVAL_SCHEDULER", raising=False)
    with open_executor() as ex:
        assert isinstance(ex, InProcess)
        assert ex.map(divmod, [(7, 2), (9, 4), (1, 5)]) == [(3, 1), (2, 1), (0, 1)]
        assert ex.describe() == {"kind": "in-process"}


@pytest.mark.parametrize(
    "value", ["local:0", "local", "local:x", "4", "remote:2", "local:-1", "local:2:3", "local:2:GB"]
)
def test_malformed_cluster_is_bad_input(value):
    with pytest.raises(InputError, match="local:N"):
        parse_cluster(value)


@pytest.mark.parametrize(
    ("value", "parsed"),
    [("local:4", (4, None)), ("local:2:3GB", (2, "3GB")), (" local:1:512MiB ", (1, "512MiB"))],
)
def test_cluster_with_worker_memory(value, parsed):
    assert parse_cluster(value) == parsed


def test_cluster_and_scheduler_exclude_each_other():
    with pytest.raises(InputError, match="not both"), open_executor("local:1", "tcp://h:1"):
        pass


def test_task_seeds_are_spawned_children():
    seeds = task_seeds(5, 3)
    assert seeds == task_seeds(5, 3) and len(set(seeds)) == 3
    child = np.random.SeedSequence(5).spawn(3)[1]
    assert seeds[1] == int(child.generate_state(1, np.uint64)[0] >> np.uint64(1))
    assert task_seeds(5, 4)[:3] == seeds  # a task's seed does not depend on how many follow


_BEFORE_START = """
import json, logging, sys

import distributed

from edueval.executor import CLUSTER_MODULES, open_executor


class Started(Exception):
    pass


def start(*args, **kwargs):  # what the cluster or client finds when it starts
    loaded = sorted(m for m in sys.modules if m.startswith(("dask.dataframe", "pyarrow")))
    missing = [m for m in CLUSTER_MODULES if m not in sys.modules]
    levels = {n: logging.getLogger(n).getEffectiveLevel() for n in
              ("tornado.application", "asyncio", "distributed.client", "dask", "distributed")}
    print(json.dumps({"before": before, "loaded": loaded, "missing": missing, "levels": levels}))
    raise Started


before = [m for m in CLUSTER_MODULES if m in sys.modules]
distributed.LocalCluster = distributed.Client = start
try:
    with open_executor(**json.loads(sys.argv[1])):
        pass
except Started:
    pass
"""


@pytest.mark.parametrize("how", [{"cluster": "local:1"}, {"scheduler": "tcp://127.0.0.1:9"}])
def test_the_cluster_path_is_imported_before_a_cluster_or_client_starts(how):
    """In a fresh process (nothing imported yet), the executor imports dask.dataframe (with
    dask_expr), pyarrow and distributed's shuffle in the calling thread and silences third-party
    loggers before the cluster or the client exists: their threads then find every module
    whole instead of importing it at the same time as this one (the "partially initialized
    module 'dask.dataframe.dask_expr'" of a flaky run)."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", _BEFORE_START, json.dumps(how)],
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    # nothing of the cluster path was there before (else the test could not fail) ...
    assert not {"dask.dataframe", "dask.dataframe.dask_expr"} & set(seen["before"]), seen
    # ... and all of it, dask_expr's and the parquet readers' submodules included, was after
    assert seen["missing"] == [], seen
    assert {"dask.dataframe.dask_expr._expr", "dask.dataframe.dask_expr._collection",
            "dask.dataframe.io.parquet.core", "pyarrow.lib"} <= set(seen["loaded"]), seen  # fmt: skip
    assert all(level > logging.CRITICAL for level in seen["levels"].values()), seen


def _worker_state(modules: list[str]) -> dict:
    """On a worker: which of ``modules`` it has imported, and its third-party log levels."""
    import sys

    return {
        "missing": [m for m in modules if m not in sys.modules],
        "levels": {
            n: logging.getLogger(n).getEffectiveLevel()
            for n in ("tornado.application", "asyncio", "distributed", "dask")
        },
    }


def test_workers_import_before_their_first_task_also_after_a_restart():
    """A fresh local cluster's workers have imported the cluster path in their main thread (and
    silenced their loggers) before any task is submitted, and so does a worker started later
    (a restart starts new processes); :func:`prepare_workers` imports the modules of the task
    functions the same way before the tasks are sent."""
    from edueval.executor import CLUSTER_MODULES, prepare_workers
    from edueval.kt.bkt.model import simulate

    wanted = [*CLUSTER_MODULES, "edueval.kt.bkt.model"]
    silent = {n: logging.CRITICAL + 10 for n in ("tornado.application", "asyncio", "distributed", "dask")}  # fmt: skip
    with open_executor(cluster="local:1") as ex:
        (started,) = ex.client.run(_worker_state, wanted).values()
        assert started == {"missing": ["edueval.kt.bkt.model"], "levels": silent}
        prepare_workers(ex.client, simulate)  # the module of a task function: edueval.kt.bkt.model
        (prepared,) = ex.client.run(_worker_state, wanted).values()
        assert prepared == {"missing": [], "levels": silent}
        ex.client.restart()  # new worker processes, set up as they join
        (restarted,) = ex.client.run(_worker_state, wanted).values()
        assert restarted == {"missing": [], "levels": silent}


def test_workers_that_cannot_be_prepared_are_one_line(monkeypatch):
    """A scheduler whose workers cannot unpickle the set-up plugin (edueval not installed where
    they run) is refused in one line, and the client is closed."""
    import edueval.executor as executor

    closed = []

    class Client:
        def __init__(self, address, timeout):
            self.address = address

        def close(self):
            closed.append(self.address)

    def cannot(client, local):
        raise ModuleNotFoundError("No module named 'edueval'")

    monkeypatch.setattr(distributed, "Client", Client)
    monkeypatch.setattr(executor, "_start_workers", cannot)
    with pytest.raises(InputError) as err, open_executor(scheduler="tcp://h:1"):
        pass
    assert str(err.value) == (
        "the workers of the Dask scheduler 'tcp://h:1' could not be prepared for the run (is "
        "edueval installed where they run?): ModuleNotFoundError: No module named 'edueval'"
    )
    assert closed == ["tcp://h:1"]


def test_cluster_map_keeps_task_order(cluster):
    assert cluster.map(pow, [(i, 2) for i in range(10)]) == [i * i for i in range(10)]
    assert cluster.describe() == {"kind": "dask", "cluster": "local:2"}


def _frames_equal(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_kt_study_replications_identical_on_the_cluster(cluster):
    from edueval.kt.replication.replications import replicate_study, replication_seeds
    from edueval.kt.replication.study import StudyConfig

    cfg = StudyConfig(n_students=40, n_skills=4, n_opportunities=8, n_random_sets=3, seed=11)
    here = replicate_study(cfg, 2, executor=InProcess())
    there = replicate_study(cfg, 2, executor=cluster)
    assert here.seeds == there.seeds == task_seeds(11, 2)
    for name in ("table3", "table2", "table3_spread", "table2_spread"):
        _frames_equal(getattr(here, name), getattr(there, name))
    _frames_equal(here.variant.table3, there.variant.table3)
    # the replications differ from each other, and the spread is their SD
    t3 = here.table3.query("metric == 'mol_mad'")
    assert not here.studies[0].scores.equals(here.studies[1].scores)
    sd = here.table3_spread.set_index("metric").loc["mol_mad", "mean_rank_true_sd"]
    assert sd == pytest.approx(t3["mean_rank_true"].std(ddof=1))
    assert replication_seeds(11, 1) == [11]  # one replication is today's single run


def test_turing_simulate_identical_on_the_cluster(cluster):
    from edueval.turing.simulate import SimConfig, simulate_study

    cfg = SimConfig(n_students=8, n_questions=5, reps=30, chunk=7, pool=5, seed=3)
    here = simulate_study(cfg, n_students_grid=[5, 12])
    there = simulate_study(cfg, n_students_grid=[5, 12], executor=cluster)
    for name in ("rates", "means", "example"):
        _frames_equal(here[name], there[name])
    # chunks are seeded independently: another chunk size gives other (valid) numbers
    other = simulate_study(SimConfig(**{**cfg.__dict__, "chunk": 30}), n_students_grid=[5, 12])
    assert not other["means"].equals(here["means"])


def test_turing_power_cells_identical_on_the_cluster(cluster):
    from edueval.turing.power import Rates, power_table

    kw = dict(eps_values=[0.1], delta_values=[0.05], rho_values=[0.0, 0.2],
              rates=Rates(0.3, 0.3, 0.1), n_students=20, m=5, reps=50, seed=2)  # fmt: skip
    _frames_equal(power_table(**kw), power_table(**kw, executor=cluster))


def test_pairwise_fit_in_blocks_identical_on_the_cluster(cluster):
    from tests.pairwise.reference import simulate

    from edueval.pairwise.bradley_terry import BradleyTerry

    df, _ = simulate(2, 16, seed=5)
    df["attribute"] = ["a1", "a2"] * (len(df) // 2) + ["a1"] * (len(df) % 2)
    model = BradleyTerry(df, ties="drop", seed=4)
    assert model.design.n_groups == 4
    kw = dict(chains=1, warmup=40, draws=40, groups_per_task=2)
    here = model.fit(**kw)
    there = model.fit(**kw, executor=cluster)
    _frames_equal(here.abilities, there.abilities)
    _frames_equal(here.groups, there.groups)
    assert here.draws.info["blocks"] == 2
    # a block is its own NUTS run: its draws depend on the grouping, never on the workers
    assert not here.abilities.equals(model.fit(**{**kw, "groups_per_task": 0}).abilities)


def test_kt_fit_predict_evaluate_identical_on_the_cluster(cluster, tmp_path):
    """The same file in process (in memory) and on the cluster (read in partitions, skills
    shuffled to the workers): the same parameters and restarts, the same predictions, metrics to
    the last bits of a sum."""
    from edueval.kt.bkt.model import BKT, simulate
    from edueval.kt.bkt.params import random_params
    from edueval.kt.commands.pipeline import evaluate_run, fit_run, predict_run
    from edueval.seeding import rng

    data = tmp_path / "r.csv"
    simulate(random_params(6, rng(2)), 80, 12, seed=4).to_csv(data, index=False)
    for where, ex in (("here", None), ("there", cluster)):
        fit_run(tmp_path / f"fit-{where}", data, BKT(seed=7, forgets=True), executor=ex)
    # equal to 1e-12, not bit for bit: in this long-lived test process (after hundreds of other
    # tests) one restart's log-likelihood once came out one unit in the last place away from the
    # fresh workers'; between fresh processes the files are byte-identical (tests/contract)
    for name in ("params.csv", "restarts.csv"):
        pd.testing.assert_frame_equal(
            pd.read_csv(tmp_path / "fit-here" / name),
            pd.read_csv(tmp_path / "fit-there" / name),
            check_exact=False, rtol=1e-12, atol=0,
        )  # fmt: skip
    res = json.loads((tmp_path / "fit-there" / "results.json").read_text())
    assert res["partitions"]["n"] >= 2  # two workers: at least two partitions of skills
    params = tmp_path / "fit-here" / "params.csv"
    predict_run(tmp_path / "p-here", data, params)
    predict_run(tmp_path / "p-there", data, params, executor=cluster)
    here = pd.read_csv(tmp_path / "p-here" / "predictions.csv", dtype={"student": str})
    there = pd.read_parquet(tmp_path / "p-there" / "predictions")
    both = here.merge(there, on=["student", "skill", "order"], suffixes=("", "_c"))
    assert len(both) == len(here) == len(there)
    for col in ("p_correct", "p_known"):
        np.testing.assert_allclose(both[col], both[f"{col}_c"], rtol=1e-12, atol=0)
    evaluate_run(tmp_path / "e-here", tmp_path / "p-here" / "predictions.csv")
    evaluate_run(tmp_path / "e-there", tmp_path / "p-there" / "predictions", executor=cluster)
    a = pd.read_csv(tmp_path / "e-here" / "metrics.csv")
    b = pd.read_csv(tmp_path / "e-there" / "metrics.csv")
    pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-12, atol=1e-12)


def _every_row_to_part_0(block):
    return np.zeros(len(block), dtype=np.int64)


def _die(part, number):
    import os

    os._exit(1)  # what the kernel's out-of-memory killer does to a worker


def test_a_task_whose_workers_keep_dying_is_one_clear_error(cluster, tmp_path):
    """Last in this module: it kills workers (the nannies start new ones)."""
    from edueval.partitioned import open_dataset, regroup
    from edueval.runs import RunFailed

    pd.DataFrame({"skill": ["a", "b"] * 50}).to_parquet(tmp_path / "d.parquet")
    ds = open_dataset(str(tmp_path / "*.parquet"))
    with pytest.raises(RunFailed, match="a Dask worker died .* most often out of memory"):
        regroup(cluster.dask_client, ds, ["skill"], _every_row_to_part_0, (), 1, _die)
