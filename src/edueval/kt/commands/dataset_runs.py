"""``kt fit`` and ``kt predict`` on a dataset (a folder or glob of Parquet/CSV files) or on a
cluster: the run layer over :mod:`edueval.kt.scale.outofcore` and :mod:`edueval.partitioned`.

A fit writes the same ``params.csv`` and ``restarts.csv`` as the in-memory path, plus, in
``results.json``, how the work was cut (partitions, rows each) and where the time went (task
seconds reading, shuffling and fitting; wall time of each pass).
"""

from __future__ import annotations

import functools
import shutil
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...io import InputError
from ...partitioned import Dataset, is_dataset, map_blocks, open_dataset, regroup
from ...report import Report
from ...runs import RunDir
from ..bkt.model import BKT
from ..bkt.params import PARAM_NAMES, params_frame, require_skills
from ..bkt.variants import read_param_file
from ..data import Columns, RowFilter
from ..scale import outofcore as ooc
from .fit_output import fit_params, write_fit

if TYPE_CHECKING:
    from ...executor import Executor

__all__ = ["uses_dataset_path", "fit_dataset", "fit_dataset_run", "predict_dataset_run"]


def uses_dataset_path(data_path: str | Path, executor: Executor | None) -> bool:
    """A folder, glob or Parquet file, or any input with a Dask cluster to run on."""
    return is_dataset(data_path) or getattr(executor, "dask_client", None) is not None


def _client(executor: Executor | None) -> Any:
    return getattr(executor, "dask_client", None)


def _open(data_path: str | Path, columns: Columns | None, encoding: str) -> tuple[Dataset, Columns]:
    """The dataset and its columns; without an order column, the order of the rows (files in
    name order) orders each sequence, as the order of a file's rows does in memory."""
    if encoding.lower().replace("_", "-") not in ("utf-8", "utf8"):
        raise InputError("datasets are read as UTF-8; encoding= applies to single files only")
    ds = open_dataset(data_path)
    header = pd.DataFrame(columns=list(ds.columns))
    cols = (columns or Columns()).resolve(header)
    # the response file's header rules (a near miss of an absent column: 'ordr' beside no
    # 'order'), on the columns every file has (open_dataset refused files that differ)
    header.attrs["file"] = ds.files[0]
    cols.schema().check_header(header)
    if cols.order not in ds.columns:
        cols = replace(cols, order=ooc.FILE_ORDER)
    return ds, cols


def _needed(ds: Dataset, cols: Columns, rows: RowFilter, extra: tuple[str, ...] = ()) -> list[str]:
    names = [cols.student, cols.skill, cols.correct, cols.order, *extra]
    names += [c for c, _ in rows.only]
    return [c for c in dict.fromkeys(names) if c in ds.columns]


def _selection_columns(ds: Dataset, cols: Columns, rows: RowFilter, extra: tuple[str, ...]):
    """``extra`` and the columns the row selection looks at (and nothing else)."""
    names = [*extra, *(c for c, _ in rows.only)] + ([cols.skill] if rows.skip_no_skill else [])
    return [c for c in dict.fromkeys(names) if c in ds.columns]


def _count(ds: Dataset, cols: Columns, rows: RowFilter, client: Any, checked: tuple = ()):
    """Responses per skill, rows left out by each rule, rows read, and -- for data ordered by
    its rows -- the first row number of each block (else None)."""
    for column, value in rows.only:
        ds.require([column], what=f"the column of only= {column}={value}")
    # every column the in-memory reader checks, checked block by block (ooc.check_block)
    names = _needed(ds, cols, rows, (cols.known, *checked))
    text = (cols.student, cols.skill)
    blocks = map_blocks(client, ds, names, ooc.block_counts, (cols, rows), text)
    counts, dropped, n_read = ooc.merge_counts(blocks)
    offsets = None
    if cols.order == ooc.FILE_ORDER:
        offsets = np.concatenate([[0], np.cumsum([b["n_rows"] for b in blocks])[:-1]]).tolist()
    return counts, dropped, n_read, offsets


def _n_workers(client: Any) -> int:
    if client is None:
        return 1
    return max(1, len(client.scheduler_info().get("workers", {})))


#: bytes of a worker's memory limit per row of a partition: peak worker memory measured at
#: ~350-450 bytes per row (packing, EM, shuffle buffers; benchmarks/RESULTS.md), with headroom
_BYTES_PER_ROW = 700


def _target_rows(client: Any) -> int:
    """Rows per partition: :data:`~edueval.kt.scale.outofcore.TARGET_ROWS`, fewer on small workers."""
    if client is None:
        return ooc.TARGET_ROWS
    limits = [
        w.get("memory_limit") or 0 for w in client.scheduler_info().get("workers", {}).values()
    ]
    smallest = min((m for m in limits if m > 0), default=0)
    if not smallest:
        return ooc.TARGET_ROWS
    return int(min(ooc.TARGET_ROWS, max(100_000, smallest // _BYTES_PER_ROW)))


def fit_dataset(
    data_path: str | Path,
    model: BKT,
    *,
    executor: Executor | None = None,
    min_responses: int = 10,
    encoding: str = "utf-8",
    rows: RowFilter | None = None,
    target_rows: int | None = None,
) -> dict:
    """Fit classic BKT (with or without forgetting) per skill of a dataset, skills in parallel.

    Returns ``table`` (one row per skill, as ``params.csv``), ``restarts``, ``skipped`` skills,
    ``dropped`` row counts, ``dataset``/``columns`` and ``timing``/``partitions``.
    """
    if model.variant_spec() is not None:
        raise InputError(
            "the BKT variants (multigs=, multilearn=, multiprior=, multipair=, fixed=, "
            "init=) are fitted in memory: give one file and no cluster=/scheduler="
        )
    rows = rows or RowFilter()
    client = _client(executor)
    ds, cols = _open(data_path, model.columns, encoding)
    t0 = time.perf_counter()
    counts, dropped, n_read, offsets = _count(ds, cols, rows, client)
    t_count = time.perf_counter() - t0
    if counts.empty:
        raise InputError("no rows left after the row selection", file=ds.source)
    small = [str(s) for s, c in counts.items() if c < min_responses]
    fitted = counts[counts >= min_responses]
    if fitted.empty:
        raise InputError(
            f"every skill has fewer than {min_responses} responses (min_responses=); "
            "nothing to fit",
            file=ds.source,
        )
    target = target_rows or _target_rows(client)
    mapping, loads = ooc.plan_parts(fitted, target_rows=target, min_parts=2 * _n_workers(client))
    text = (cols.student, cols.skill)
    parts, timing = regroup(client, ds, _needed(ds, cols, rows), ooc.part_of,
                            (mapping, cols, rows), len(loads), ooc.fit_part, (model, cols),
                            text, offsets)  # fmt: skip
    done = [p for p in parts if p is not None]
    table = pd.concat([p["params"] for p in done]).sort_index()
    restarts = pd.concat([p["restarts"] for p in done])
    restarts = restarts.sort_values(["skill", "restart"], kind="stable").reset_index(drop=True)
    seconds = {k: float(sum(p["seconds"][k] for p in done)) for k in ("pack", "em")}
    return {
        "table": table,
        "restarts": restarts,
        "skipped": small,
        "dropped": dropped,
        "n_rows_read": n_read,
        "dataset": ds,
        "columns": cols,
        "timing": {
            "count_pass_wall": round(t_count, 3),
            **timing.as_dict(),
            **{f"{k}_task": round(v, 3) for k, v in seconds.items()},
        },  # fmt: skip
        "partitions": {
            "n": int(len(loads)),
            "max_rows": int(loads.max()),
            "min_rows": int(loads.min()),
            "largest_skill": int(fitted.max()),
        },  # fmt: skip
    }


def fit_dataset_run(
    out: Path,
    data_path: str | Path,
    model: BKT,
    *,
    executor: Executor | None = None,
    min_responses: int = 10,
    encoding: str = "utf-8",
    rows: RowFilter | None = None,
    warn=None,
) -> dict:
    """``kt fit`` on a dataset or a cluster: same tables as in memory, with the time split."""
    from ...executor import InProcess

    executor = executor or InProcess()
    rows = rows or RowFilter()
    ds, cols = _open(data_path, model.columns, encoding)
    params = {**fit_params(model, min_responses, cols, rows), "dataset": ds.describe(),
              "executor": executor.describe()}  # fmt: skip
    run = RunDir(out, command="kt fit", params=params, seed=model.seed)
    fit = fit_dataset(data_path, model, executor=executor, min_responses=min_responses,
                      encoding=encoding, rows=rows)  # fmt: skip
    if fit["skipped"] and warn:
        small = fit["skipped"]
        warn(f"{len(small)} skill(s) with fewer than {min_responses} responses not fitted: "
             + ", ".join(small[:5]) + (" ..." if len(small) > 5 else ""))  # fmt: skip
    extra = {"timing": fit["timing"], "partitions": fit["partitions"],
             "n_rows_read": fit["n_rows_read"]}  # fmt: skip
    return write_fit(run, str(data_path), model, fit["table"], fit["restarts"],
                     skipped=fit["skipped"], dropped=fit["dropped"], extra=extra)  # fmt: skip


def predict_dataset_run(
    out: Path,
    data_path: str | Path,
    params_path: Path,
    columns: Columns | None = None,
    *,
    executor: Executor | None = None,
    encoding: str = "utf-8",
    rows: RowFilter | None = None,
    warn=None,
) -> dict:
    """``kt predict`` on a dataset or a cluster: predictions as partitioned Parquet
    (``predictions/part-NNNNN.parquet``, rows by skill, student and order)."""
    from ...executor import InProcess

    executor = executor or InProcess()
    rows = rows or RowFilter()
    client = _client(executor)
    ds, cols = _open(data_path, columns, encoding)
    table = read_param_file(params_path)
    if "parameter" in table.columns:
        raise InputError(
            "predictions with a variant's long parameter file are made in memory: give one "
            "file and no cluster=/scheduler=",
            file=str(params_path),
        )
    params = params_frame(table)
    run = RunDir(
        out,
        command="kt predict",
        params={
            "columns": asdict(cols),
            "dataset": ds.describe(),
            "executor": executor.describe(),
            "only": [f"{c}={v}" for c, v in rows.only],
            "skip_no_skill": rows.skip_no_skill,
        },  # fmt: skip
        inputs={"params": params_path},
    )
    counts, dropped, _, offsets = _count(ds, cols, rows, client)
    if counts.empty:
        raise InputError("no rows left after the row selection", file=ds.source)
    require_skills(params, counts.index, source=str(params_path))
    P = params.loc[list(counts.index), list(PARAM_NAMES)]
    mapping, loads = ooc.plan_parts(
        counts, target_rows=_target_rows(client), min_parts=2 * _n_workers(client)
    )
    folder = (run.path / "predictions").resolve()  # workers write here, from any directory
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir()
    extra = tuple(c for c in (cols.known,) if c in ds.columns)
    parts, timing = regroup(client, ds, _needed(ds, cols, rows, extra), ooc.part_of,
                            (mapping, cols, rows), len(loads), ooc.predict_part,
                            (P, cols, str(folder)), (cols.student, cols.skill),
                            offsets)  # fmt: skip
    done = [p for p in parts if p is not None]
    per_skill = pd.concat([p["per_skill"] for p in done]).sort_values("skill", kind="stable")
    per_skill = per_skill.reset_index(drop=True)
    run.table("per_skill", per_skill)
    n = sum(p["n_rows"] for p in done)
    impossible = sum(p["n_impossible"] for p in done)
    if impossible and warn:
        warn(f"{impossible} responses have probability 0 under the given parameters; the "
             "predictions after them in the same sequence are not meaningful")  # fmt: skip
    rep = Report("BKT predictions", f"{data_path} with parameters {params_path}")
    rep.section("Per skill").table(per_skill)
    rep.section("Predictions").text(
        f"{n} responses in {len(done)} Parquet files under predictions/ (rows by skill, "
        "student and order)."
    )
    results = {
        "n_responses": int(n),
        "rows_left_out": dropped,
        "n_skills": int(len(per_skill)),
        "mean_p_correct": float(sum(p["sum_p_correct"] for p in done) / n),
        "mean_p_known": float(sum(p["sum_p_known"] for p in done) / n),
        "n_impossible_responses": int(impossible),
        "predictions": {"folder": "predictions", "n_files": len(done)},
        "timing": timing.as_dict(),
        "partitions": {"n": int(len(loads)), "max_rows": int(loads.max())},
    }
    run.finish(results, rep.render())
    return results


def evaluate_dataset(
    data_path: str | Path,
    *,
    executor: Executor | None = None,
    columns: Columns | None = None,
    k_of: dict[str, int] | None = None,
    n_params: int = 4,
    threshold: float = 0.95,
    n_in_a_row: int = 3,
    rows: RowFilter | None = None,
    encoding: str = "utf-8",
) -> dict:
    """Metrics of a predictions dataset: per skill in the skill's partition, pooled from exact
    sums, the pooled AUC from value ranges of the predictions (a second shuffle per target), and
    each sequence's moment of learning when the true state is there."""
    rows = rows or RowFilter()
    client = _client(executor)
    ds, cols = _open(data_path, columns, encoding)
    ds.require(["p_correct"], what="predicted probability of a correct answer")
    knowledge = cols.known in ds.columns and "p_known" in ds.columns
    counts, dropped, _, offsets = _count(ds, cols, rows, client, ooc.PROBABILITIES)
    if counts.empty:
        raise InputError("no rows left after the row selection", file=ds.source)
    skills = [str(s) for s in counts.index]
    k_of = k_of or dict.fromkeys(skills, n_params)
    unknown = [s for s in skills if s not in k_of]
    if unknown:
        raise InputError(f"no parameters for skill {unknown[0]!r}")
    mapping, loads = ooc.plan_parts(
        counts, target_rows=_target_rows(client), min_parts=2 * _n_workers(client)
    )
    targets = {"performance": ("p_correct", cols.correct)}
    if knowledge:
        targets["knowledge"] = ("p_known", cols.known)
    extra = tuple(c for pair in targets.values() for c in pair)
    text = (cols.student, cols.skill)
    parts, timing = regroup(client, ds, _needed(ds, cols, rows, extra), ooc.part_of,
                            (mapping, cols, rows), len(loads), ooc.evaluate_part,
                            (cols, k_of, knowledge, threshold, n_in_a_row), text,
                            offsets)  # fmt: skip
    done = [p for p in parts if p is not None]
    per_skill = pd.DataFrame([r for p in done for r in p["rows"]])
    per_skill = per_skill.sort_values("scope", kind="stable")  # performance, then knowledge
    pooled = []
    k_all = sum(k_of[s] for s in skills)
    for target, (value, label) in targets.items():
        sums = ooc.add_sums([p["sums"][target] for p in done])
        cuts = ooc.value_cuts(sums["hist"])
        reduce = functools.partial(ooc.value_counts_block, value=value, label=label)
        ranges, _ = regroup(client, ds, _selection_columns(ds, cols, rows, (value, label)),
                            ooc.value_part_of, (value, cuts, cols, rows), len(cuts) + 1,
                            ooc.auc_part, (), text, reduce=reduce)  # fmt: skip
        auc = ooc.pooled_auc(ranges)
        pooled.append({"scope": "all", "target": target, "n": int(sums["n"]), "k": k_all,
                       **ooc.metrics_from_sums(sums, k_all, auc)})  # fmt: skip
    metrics = pd.concat([pd.DataFrame(pooled), per_skill], ignore_index=True)
    mol = None
    if knowledge:  # in the in-memory order: by skill, then student
        mol = pd.concat([p["mol"] for p in done], ignore_index=True)
        mol = mol.sort_values(["skill", "student"], kind="stable", ignore_index=True)
    return {"metrics": metrics, "mol": mol, "dropped": dropped, "dataset": ds, "columns": cols,
            "timing": timing.as_dict(), "knowledge": knowledge}  # fmt: skip
