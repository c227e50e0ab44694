"""Every numeric and path option declares its range; out of range is exit 2 (issue 24, 2).

The walker below enforces the rule on the whole command tree, whatever Typer/Click release
builds it: **every int or float parameter (list-valued ones included) declares both a minimum
and a maximum**, and **every text option whose default is a comma-separated list of numbers
checks each element in a callback**.  An open-ended count declares
:data:`edueval.cli.ranges.COUNT_MAX` (numpy's int64), and a count that drives an allocation is
checked against this machine's memory before the work starts.  **Every path parameter says
whether it is a file or a folder** (``dir_okay=False`` or ``file_okay=False``), unless
:data:`PATH_EXEMPT` gives the reason it may be either.

The regression tests run the examples of the issue through the console script.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path, PurePath
from typing import Any, get_args, get_origin

import pytest

from edueval.cli.ranges import COUNT_MAX, SEED_MAX

from .conftest import assert_refused

BIG = "1000000000000"  # 10**12


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    subs = getattr(command, "commands", None)
    if subs:
        for name, sub in subs.items():
            yield from _commands(sub, (*path, name))
    else:
        yield " ".join(path), command


def _tree() -> list[tuple[str, Any]]:
    import typer

    from edueval.cli.main import app

    return list(_commands(typer.main.get_command(app)))


def _numeric_kind(param: Any) -> str | None:
    """'int' or 'float' for a numeric parameter (or a list of numbers), else None."""
    descriptor = getattr(param, "type_descriptor", None)  # Typer >= 0.29 (its own Click copy)
    if descriptor is not None:
        annotation = descriptor.annotation
        if get_origin(annotation) in (list, tuple):
            args = set(get_args(annotation))
            annotation = args.pop() if len(args) == 1 else None
        return {int: "int", float: "float"}.get(annotation)
    import click

    kind = param.type
    if isinstance(kind, click.types.BoolParamType):
        return None
    if isinstance(kind, click.types.IntParamType):
        return "int"
    if isinstance(kind, click.types.FloatParamType):
        return "float"
    return None


def _bounds(param: Any) -> tuple[Any, Any]:
    if hasattr(param, "type_descriptor"):
        return param.min, param.max
    return getattr(param.type, "min", None), getattr(param.type, "max", None)


def _numbers_as_text(default: Any) -> bool:
    if not isinstance(default, str) or "," not in default:
        return False
    try:
        [float(x) for x in default.split(",") if x.strip()]
    except ValueError:
        return False
    return True


def test_the_walker_sees_the_whole_tree() -> None:
    tree = dict(_tree())
    assert {"kt simulate", "turing power", "study serve", "demo"} <= set(tree)
    numeric = [p.opts[0] for p in tree["kt simulate"].params if _numeric_kind(p)]
    assert {"--students", "--seed", "--forget-max"} <= set(numeric)


def test_every_numeric_parameter_declares_both_bounds() -> None:
    missing = []
    for name, command in _tree():
        for param in command.params:
            if _numeric_kind(param) is None:
                continue
            low, high = _bounds(param)
            if low is None or high is None:
                missing.append(f"{name} {param.opts[0]} (min={low}, max={high})")
    assert not missing, "numeric options without both bounds:\n" + "\n".join(missing)


def test_every_seed_is_0_to_2_63_minus_1() -> None:
    seeds = [(n, p) for n, c in _tree() for p in c.params if p.name == "seed"]
    assert len(seeds) > 20
    for name, param in seeds:
        assert _bounds(param) == (0, SEED_MAX), name


def test_every_numeric_list_written_as_text_checks_its_elements() -> None:
    unchecked = [
        f"{name} {p.opts[0]}"
        for name, c in _tree()
        for p in c.params
        if _numbers_as_text(p.default) and p.callback is None
    ]
    assert not unchecked, unchecked


def test_limits_and_probabilities() -> None:
    for name, command in _tree():
        for param in command.params:
            if param.name == "limit":
                assert _bounds(param) == (1, COUNT_MAX), name
            if param.name in ("p_rule", "forget_max", "p_ai", "p_human", "p_random", "reveal"):
                assert _bounds(param) == (0, 1), (name, param.name)


# --- the examples: exit 2, one line naming the option, no traceback ----------------------

OUT_OF_RANGE = [
    *[
        ((*cmd, "--seed", "-1"), "--seed")
        for cmd in (
            ("kt", "simulate"),
            ("kt", "fit", "x.csv"),
            ("kt", "study"),
            ("items", "simulate"),
            ("items", "pairs", "r.csv"),
            ("malalgo", "generate"),
            ("pairwise", "fit", "c.csv"),
            ("turing", "simulate"),
            ("turing", "power"),
            ("tutor", "make-study", "r.csv"),
            ("demo", "--quick"),
        )
    ],
    (("kt", "simulate", "--seed", str(SEED_MAX + 1)), "--seed"),
    (("malalgo", "run", "q.csv", "--limit", "-1"), "--limit"),
    (("malalgo", "run", "q.csv", "--limit", "0"), "--limit"),
    (("qgsms", "run", "p.csv", "i.jsonl", "--limit", "-1"), "--limit"),
    (("qgsms", "run", "p.csv", "i.jsonl", "--limit", "0"), "--limit"),
    (("tutor", "make-study", "r.csv", "--limit", "-1"), "--limit"),
    (("tutor", "make-study", "r.csv", "--limit", "0"), "--limit"),
    (("kt", "simulate", "--forget-max", "2"), "--forget-max"),
    (("kt", "simulate", "--forget-max", "nan"), "--forget-max"),
    (("turing", "power", "--rho", "1.5"), "--rho"),
    (("turing", "power", "--rho", "0,1"), "--rho"),
    (("turing", "power", "--rho", "nan"), "--rho"),
    (("turing", "simulate", "--p-rule", "2"), "--p-rule"),
    (("items", "simulate", "--p-rule", "2"), "--p-rule"),
    (("turing", "simulate", "--p-rules", "0.2,1.5"), "--p-rules"),
    (("items", "pairs", "r.csv", "--max-pairs", "-1"), "--max-pairs"),
    (("turing", "simulate", "--sizes", "-5"), "--sizes"),
    (("turing", "simulate", "--sizes", "5,x"), "--sizes"),
    (("study", "serve", "s.yaml", "--port", "70000"), "--port"),
    (("study", "serve", "s.yaml", "--port", "0"), "--port"),
    (("kt", "fit", "x.csv", "--restarts", "0"), "--restarts"),
    (("pairwise", "fit", "c.csv", "--draws", "-1"), "--draws"),
    (("turing", "power", "--power", "1.5"), "--power"),
    (("turing", "power", "--coverage", "--confidence", "1.5"), "--confidence"),
    (("turing", "analyze", "c.csv", "--eps", "-0.1"), "--eps"),
    (("pairwise", "fit", "c.csv", "--chains", "0"), "--chains"),
    (("pairwise", "fit", "c.csv", "--min-comparisons", "0"), "--min-comparisons"),
    (("kt", "evaluate", "p.csv", "--in-a-row", "0"), "--in-a-row"),
]


@pytest.mark.parametrize(
    ("args", "option"), OUT_OF_RANGE, ids=[" ".join(a) for a, _ in OUT_OF_RANGE]
)
def test_out_of_range_is_a_usage_error_naming_the_option(edueval, tmp_path, args, option) -> None:
    run = edueval(*args, "--out", tmp_path / "run") if args[0] != "study" else edueval(*args)
    assert_refused(run, code=2, contains=option, out=tmp_path / "run")
    assert run.err_lines[-1].startswith("Error: Invalid value for"), run
    assert f"'{option}'" in run.err_lines[-1], run
    assert not (tmp_path / "run").exists(), run


TOO_LARGE = [
    (("kt", "simulate", "--students", BIG), "--students"),
    (("kt", "simulate", "--opportunities", BIG), "--opportunities"),
    (("kt", "study", "--students", BIG), "--students"),
    (("kt", "fit", "x.csv", "--restarts", "1000000000"), "--restarts"),
    (("kt", "crossvalidate", "x.csv", "--restarts", "1000000000"), "--restarts"),
    (("pairwise", "fit", "c.csv", "--draws", BIG), "--draws"),
    (("pairwise", "hierarchical", "c.csv", "--draws", BIG), "--draws"),
    (("turing", "simulate", "--students", BIG), "--students"),
    (("turing", "simulate", "--sizes", f"5,{BIG}"), "--sizes"),
    (("turing", "power", "--students", BIG), "--students"),
    (("items", "simulate", "--students", BIG), "--students"),
    (("malalgo", "generate", "--n", BIG), "--n"),
]


@pytest.mark.parametrize(("args", "option"), TOO_LARGE, ids=[" ".join(a) for a, _ in TOO_LARGE])
def test_work_that_cannot_fit_is_refused_before_it_starts(edueval, tmp_path, args, option) -> None:
    run = edueval(*args, "--out", tmp_path / "run", timeout=120)
    assert_refused(run, code=2, out=tmp_path / "run")
    line = run.err_lines[-1]
    assert line.startswith(f"error: {option} "), run
    assert re.search(r"GB of memory; (this machine has|this process's \S+ allows) ", line), run
    assert not (tmp_path / "run").exists(), run


@pytest.mark.parametrize(
    "args",
    [
        ("kt", "simulate", "--seed", str(SEED_MAX), "--forget-max", "1"),
        ("kt", "simulate", "--seed", "0", "--forget-max", "0"),
    ],
    ids=["largest seed, forget-max 1", "seed 0"],
)
def test_the_ends_of_a_range_are_accepted(edueval, tmp_path, args) -> None:
    run = edueval(*args, "--students", "3", "--skills", "1", "--opportunities", "4",
                  "--out", tmp_path / "run")  # fmt: skip
    assert run.code == 0, run
    assert (Path(tmp_path) / "run" / "responses.csv").exists(), run


def test_memory_check_and_list_callbacks() -> None:
    import typer

    from edueval.cli.ranges import check_memory, float_list, int_list, memory_bytes
    from edueval.io import InputError

    assert memory_bytes() is None or memory_bytes() > 0
    check_memory(1000, ("--students", 10))  # fits
    with pytest.raises(InputError, match=r"^--students 10 needs about .* GB of memory"):
        check_memory(1e30, ("--skills", 3), ("--students", 10))
    assert int_list(2)("5, 10,") == "5, 10,"
    assert float_list(0, 1, high_open=True)("0,0.5") == "0,0.5"
    for callback, text in ((int_list(2), "1"), (float_list(0, 1, high_open=True), "1"),
                           (float_list(0, 1), "-0.1"), (int_list(2), "2.5")):  # fmt: skip
        with pytest.raises(typer.BadParameter):
            callback(text)


def test_the_memory_limit_is_the_cgroups_when_it_is_smaller(tmp_path) -> None:
    """A container or batch job with 12 GB on a 256 GB machine: the guard reads the process's
    cgroup (v2 and v1, and every cgroup above it), not the machine's physical memory."""
    from edueval.cli import ranges

    root = tmp_path / "sys"
    proc = tmp_path / "cgroup"
    # cgroup v2: the job's own cgroup says "max", its parent 12 GB
    (root / "jobs" / "job1").mkdir(parents=True)
    (root / "jobs" / "job1" / "memory.max").write_text("max\n")
    (root / "jobs" / "memory.max").write_text("12000000000\n")
    proc.write_text("0::/jobs/job1\n")
    limit = ranges.memory_limit(proc, root)
    physical = ranges._physical_memory()
    assert limit is not None
    if physical is None or physical > 12e9:
        assert limit[0] == 12_000_000_000 and limit[1] == "this process's cgroup allows"
    # cgroup v1: the memory controller's hierarchy; "unlimited" is a huge number
    (root / "memory" / "docker" / "c1").mkdir(parents=True)
    (root / "memory" / "docker" / "c1" / "memory.limit_in_bytes").write_text("3000000000\n")
    (root / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    proc.write_text("5:cpu,cpuacct:/docker/c1\n4:memory:/docker/c1\n")
    assert ranges._cgroup_limits(proc, root) == [3_000_000_000, 9223372036854771712]
    # no cgroup file, none readable: only what the system says
    assert ranges._cgroup_limits(tmp_path / "absent", root) == []


def test_the_memory_limit_is_the_rlimit_when_it_is_smaller(monkeypatch) -> None:
    import resource

    from edueval.cli import ranges
    from edueval.io import InputError

    real = resource.getrlimit
    monkeypatch.setattr(
        resource,
        "getrlimit",
        lambda which: (
            (2_000_000_000, resource.RLIM_INFINITY) if which == resource.RLIMIT_AS else real(which)
        ),
    )
    assert ranges.memory_limit(Path("/nonexistent"))[0] <= 2_000_000_000
    with pytest.raises(
        InputError,
        match=r"^--n 9 needs about 3 GB of memory; this process's RLIMIT_AS allows 2 GB$",
    ):
        ranges.check_memory(3e9, ("--n", 9))
    ranges.check_memory(1e9, ("--n", 9))  # fits


# --- path parameters: a file or a folder, said once in the declaration ---------------------------

_DATASET = "a file, or a dataset larger than memory: a folder or a quoted glob of files"

#: path parameters that may be either a file or a folder, and why
PATH_EXEMPT: dict[tuple[str, str], str] = {
    ("kt fit", "data"): _DATASET,
    ("kt predict", "data"): _DATASET,
    ("kt evaluate", "data"): "a predictions file, or a dataset (e.g. predictions/ of kt predict)",
    ("kt roster", "params"): "a parameter file, or a model folder written by save_model",
    ("pairwise summarize", "abilities"): "abilities.csv, or the run directory of 'pairwise fit'",
    ("study serve", "admin_token_file"): "a folder is refused by the token reader in one line "
    "('expected a file'), which tests/study/test_study_inputs.py checks; Click's usage block "
    "would replace that line",
}


def _path_kinds(param: Any) -> tuple[bool, bool] | None:
    """(file_okay, dir_okay) of a path parameter (or a list of paths), else None."""
    descriptor = getattr(param, "type_descriptor", None)  # Typer >= 0.29 (its own Click copy)
    if descriptor is not None:
        annotation = descriptor.annotation
        if get_origin(annotation) in (list, tuple):
            args = set(get_args(annotation))
            annotation = args.pop() if len(args) == 1 else None
        if not (isinstance(annotation, type) and issubclass(annotation, PurePath)):
            return None
        info = descriptor.parameter_info
        return bool(info.file_okay), bool(info.dir_okay)
    import click

    if isinstance(param.type, click.Path):
        return bool(param.type.file_okay), bool(param.type.dir_okay)
    return None


def _path_params() -> dict[tuple[str, str], tuple[bool, bool]]:
    return {
        (name, p.name): kinds
        for name, command in _tree()
        for p in command.params
        if (kinds := _path_kinds(p)) is not None
    }


def test_the_walker_sees_the_path_parameters() -> None:
    paths = _path_params()
    assert len(paths) > 60
    assert paths[("items analyze", "responses")] == (True, False)
    assert paths[("kt fit", "out")] == (False, True)
    assert paths[("tutor import-ncte", "out")] == (True, False)
    assert paths[("qgsms score", "judgements")] == (True, False)  # a list of files


def test_every_path_parameter_is_a_file_or_a_folder() -> None:
    paths = _path_params()
    either = sorted(
        f"{name} {param}"
        for (name, param), (file_okay, dir_okay) in paths.items()
        if file_okay and dir_okay and (name, param) not in PATH_EXEMPT
    )
    assert not either, (
        "path parameters that declare neither dir_okay=False nor file_okay=False (add one, or "
        "an entry with its reason to PATH_EXEMPT):\n" + "\n".join(either)
    )
    stale = sorted(f"{n} {p}" for n, p in PATH_EXEMPT if paths.get((n, p)) != (True, True))
    assert not stale, f"PATH_EXEMPT entries that are gone or now declare a kind: {stale}"


@pytest.mark.parametrize(
    "args",
    [("items", "analyze", "{dir}"), ("pairwise", "fit", "{dir}"), ("turing", "analyze", "{dir}")],
    ids=lambda a: " ".join(a[:2]),
)
def test_a_folder_where_a_file_is_expected_is_a_usage_error(edueval, tmp_path, args) -> None:
    folder = tmp_path / "data.csv"
    folder.mkdir()
    run = edueval(*[str(folder) if a == "{dir}" else a for a in args], "--out", tmp_path / "run")
    assert_refused(run, code=2, contains="is a directory", out=tmp_path / "run")
    assert str(folder) in run.err_lines[-1], run
    assert not (tmp_path / "run").exists(), run


def test_a_file_given_as_out_is_a_usage_error(edueval, tmp_path) -> None:
    a_file = tmp_path / "a-file.txt"
    a_file.write_text("keep me\n")
    run = edueval("kt", "simulate", "--students", "3", "--out", a_file)
    assert_refused(run, code=2, contains="is a file")
    assert "'--out'" in run.err_lines[-1] and str(a_file) in run.err_lines[-1], run
    assert a_file.read_text() == "keep me\n"


def test_a_missing_input_file_is_still_the_readers_one_line(edueval, tmp_path) -> None:
    """No exists=True: a missing file stays the reader's ``error: FILE: file not found``."""
    missing = tmp_path / "no-such.csv"
    run = edueval("items", "analyze", missing, "--out", tmp_path / "run")
    assert_refused(run, code=2, contains="file not found", out=tmp_path / "run")
    assert run.err_lines == [f"error: {missing}: file not found"], run
