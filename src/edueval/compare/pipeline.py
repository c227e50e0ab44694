"""``edueval compare RUN RUN ...``: read run folders, compare them (:func:`.paired.compare`),
write the comparison folder (``config.json``, ``results.json``, ``estimates.csv``,
``differences.csv``, ``discordant.csv``, ``runs.csv``, ``report.html``).

Run folders of one protocol are read as they are written: a ``malalgo run``'s
``responses.csv`` (one arm), a ``qgsms run``'s ``judgements.csv`` (one arm per method), a
``tutor reply``'s ``replies.csv`` (one arm: token F1 per target turn, clustered by dialogue;
the same targets are required, as the same items are).  Runs
must be on the same inputs: the SHA-256 of every input file in their ``config.json`` must agree
(refused in one line otherwise, unless ``allow_subset``, which compares on the items common to
all runs).  What differs between the runs' settings (model, prompt, shots, scoring, method ...)
names the rows.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..io import InputError, read_text
from ..report import Report
from ..runs import RunDir, saved_run
from .outcomes import Arm, malalgo_units, qgsms_units, tutor_units
from .paired import compare
from .results import Comparison

__all__ = ["compare_run", "read_run", "save_comparison", "write_comparison", "COMPARABLE"]

#: the commands whose run folders can be compared, and the table each is read from
COMPARABLE = {
    "malalgo run": "responses.csv",
    "qgsms run": "judgements.csv",
    "tutor reply": "replies.csv",
}
_MALALGO_LABELS = ("model", "prompt", "shots", "rationale_order", "scoring", "ask_mcq", "limit")
_QGSMS_SKIP = {"methods", "n_pairs", "call_seeds", "bradley_terry", "limit"}
_TUTOR_LABELS = ("model", "budget", "persona", "max_tokens", "logprobs", "limit")


def _config(path: Path) -> dict[str, Any]:
    if not os.path.lexists(path / "config.json"):
        raise InputError(f"{path}: not a run folder (no config.json)")
    text = read_text(path / "config.json")  # refuses a folder or a FIFO before opening it
    try:
        config = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"{path}/config.json: cannot be read ({exc})") from None
    if not isinstance(config, dict):
        raise InputError(f"{path}/config.json: not a run's configuration")
    command = config.get("command")
    if command not in COMPARABLE:
        raise InputError(f"{path}: a '{command}' run cannot be compared (expected one of: "
                         + ", ".join(COMPARABLE) + ")")  # fmt: skip
    if config.get("status") not in ("complete", "failed"):
        raise InputError(f"{path}: the run is '{config.get('status')}', not finished")
    return config


def read_run(path: str | Path) -> tuple[list[Arm], dict[str, Any]]:
    """The arms of one run folder and its ``config.json``."""
    from ..malalgo.metrics import score_table
    from ..malalgo.responses import read_responses

    path = Path(path)
    config = _config(path)
    params = config.get("params", {})
    table = path / COMPARABLE[config["command"]]
    if not table.exists():
        raise InputError(f"{path}: {table.name} is missing")
    if config["command"] == "malalgo run":
        responses = score_table(read_responses(table, ["grade", "content", "dok"]))
        labels = {k: params.get(k) for k in _MALALGO_LABELS} | {"seed": config.get("seed")}
        return [Arm("", malalgo_units(responses), labels)], config
    if config["command"] == "tutor reply":
        from ..tutor.study import read_replies_table

        replies = read_replies_table(table)
        labels = {k: params.get(k) for k in _TUTOR_LABELS} | {"seed": config.get("seed")}
        return [Arm("", tutor_units(replies), labels)], config
    from ..qgsms.data import read_judgements

    # the schema ``qgsms score`` reads it with: pair ids as written ('1' and '01', 'NA' are
    # ids), ``correct`` 0/1 and consistent with the verdict
    judgements = read_judgements(table)
    labels = {
        k: v for k, v in params.items() if k not in _QGSMS_SKIP and not isinstance(v, (dict, list))
    }
    return [Arm(str(m), u, {**labels, "method": m, "seed": config.get("seed")})
            for m, u in qgsms_units(judgements).items()], config  # fmt: skip


def _check_same_inputs(configs: list[tuple[Path, dict]], allow_subset: bool) -> list[str]:
    """Refuse runs of different commands, or (unless ``allow_subset``) on different inputs;
    returns the notes on what differs."""
    commands = {c["command"] for _, c in configs}
    if len(commands) > 1:
        raise InputError("the runs are of different protocols: " + ", ".join(sorted(commands)))
    first_path, first = configs[0]
    notes = []
    for path, config in configs[1:]:
        for key in sorted(set(first.get("inputs", {})) | set(config.get("inputs", {}))):
            a = first.get("inputs", {}).get(key, {}).get("sha256")
            b = config.get("inputs", {}).get(key, {}).get("sha256")
            if a == b:
                continue
            line = (f"{path} was run on other {key} than {first_path} (sha256 "
                    f"{str(b)[:12]} vs {str(a)[:12]})")  # fmt: skip
            if not allow_subset:
                raise InputError(line + "; set allow_subset= to compare on the items common to "
                                 "all runs")  # fmt: skip
            notes.append(line)
    return notes


def _names(arms_per_run: list[list[Arm]], paths: list[Path]) -> list[Arm]:
    """Name single-arm runs by the settings that differ, else by their folders."""
    from .paired import _auto_names

    arms = [a for arms in arms_per_run for a in arms]
    singles = [arms_[0] for arms_ in arms_per_run if len(arms_) == 1]
    if singles and len(singles) == len(arms):
        auto = _auto_names(arms)
        if auto[0] == "run 1":
            auto = [p.name or str(p) for p in paths]
            if len(set(auto)) < len(auto):
                auto = [str(p) for p in paths]
        for a, n in zip(arms, auto, strict=True):
            a.name = n
    else:  # several methods per run: method, then the folder when two runs repeat a method
        names = [a.name for a in arms]
        for arms_, p in zip(arms_per_run, paths, strict=True):
            for a in arms_:
                a.name = a.name or p.name
                if names.count(a.name) > 1:
                    a.name = f"{p.name}:{a.name}"
    return arms


def _resolve_reference(reference: str | None, arms_per_run, paths) -> str | None:
    if reference is None:
        return None
    for arms_, p in zip(arms_per_run, paths, strict=True):
        if Path(reference) == p or (
            Path(reference).exists() and Path(reference).resolve() == p.resolve()
        ):
            if len(arms_) != 1:
                raise InputError(f"reference= {reference}: that run holds several methods; name "
                                 "one: " + ", ".join(a.name for a in arms_))  # fmt: skip
            return arms_[0].name
    return reference


def compare_run(
    out: Path,
    runs: list[Path],
    *,
    reference: str | None = None,
    detect: float | None = None,
    allow_subset: bool = False,
    failures: str = "wrong",
    alpha: float = 0.05,
) -> dict[str, Any]:
    """Compare the run folders ``runs`` and write the comparison folder ``out``."""
    paths = [Path(p) for p in runs]
    if len(set(p.resolve() for p in paths)) < len(paths):
        raise InputError("the same run folder is given twice")
    read = [read_run(p) for p in paths]
    notes = _check_same_inputs([(p, c) for p, (_, c) in zip(paths, read, strict=True)],
                               allow_subset)  # fmt: skip
    arms_per_run = [arms for arms, _ in read]
    arms = _names(arms_per_run, paths)
    if len(arms) < 2:
        raise InputError("a comparison needs at least two runs (or one run with two methods)")
    ref = _resolve_reference(reference, arms_per_run, paths)
    res: Comparison = compare(arms, reference=ref, detect=detect, alpha=alpha,
                              allow_subset=allow_subset, failures=failures)  # fmt: skip
    folder = {a.name: str(p) for arms_, p in zip(arms_per_run, paths, strict=True) for a in arms_}
    status = {a.name: c.get("status") for arms_, (_, c) in zip(arms_per_run, read, strict=True)
              for a in arms_}  # fmt: skip
    res.runs["folder"] = res.runs["run"].map(folder)
    res.runs["status"] = res.runs["run"].map(status)
    res.notes = notes
    params = {"runs": [str(p) for p in paths], "reference": reference, "detect": detect,
              "allow_subset": allow_subset, "failures": failures, "alpha": alpha,
              "protocol": read[0][1]["command"]}  # fmt: skip
    inputs = {f"run{i + 1}_{COMPARABLE[c['command']].removesuffix('.csv')}":
              p / COMPARABLE[c["command"]] for i, (p, (_, c)) in enumerate(zip(paths, read, strict=True))}  # fmt: skip
    run = RunDir(out, command="compare", params=params, inputs=inputs)
    return write_comparison(run, res)


def write_comparison(run: RunDir, res: Comparison) -> dict[str, Any]:
    """The tables, report and results.json of ``compare`` (the command and
    :meth:`Comparison.save` both write through here)."""
    from .report import comparison_report

    run.table("estimates", res.estimates)
    run.table("differences", res.differences)
    run.table("discordant", res.discordant)
    run.table("runs", res.runs)
    rep: Report = comparison_report(res, res.notes)
    results = dict(res.headline())
    run.finish(results, rep.render())
    return results


def save_comparison(res: Comparison, folder: str | Path, *, overwrite: bool = False) -> Path:
    """:meth:`Comparison.save`: the folder ``compare`` writes; its runs are named as compared
    (no run folders: ``folder`` is empty) and ``reference`` is the name given, if any."""
    reference = next(iter(res.reference.values()), None) if res.fixed_reference else None
    params = {"runs": res.names, "reference": reference, "detect": res.detect,
              "allow_subset": res.allow_subset, "failures": res.failures, "alpha": res.alpha,
              "protocol": res.protocol}  # fmt: skip
    runs = res.runs.assign(folder=None, status=res.runs["run"].map(res.statuses))
    run = saved_run(folder, "compare", params=params, overwrite=overwrite)
    write_comparison(run, replace(res, runs=runs))
    return run.path
