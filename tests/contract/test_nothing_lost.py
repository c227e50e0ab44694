"""Nothing lost (issue 39, 0): no command writes over what it reads.

Every command of the Typer app runs (in process) with its output pointed at each of its inputs,
at each input's folder and, for a folder input, at a folder inside it -- with ``--overwrite``
where the command has it, which must change nothing.  Each run must be refused before anything
is written or removed: exit 2, one line (or Click's usage block for a file where a folder is
wanted), and every file under the test's folder byte for byte as before, nothing added.

:data:`CASES` has one entry per command that writes; :data:`NO_OUTPUT` and :data:`NO_INPUT`
name the others with the reason.  A new command without an entry fails
:func:`test_every_command_has_a_case`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

#: Commands that write nothing (nothing to point at an input).
NO_OUTPUT = {
    "models check": "probes a model server; writes nothing",
    "formats": "prints the input tables' declarations; writes nothing",
}
#: Commands that read nothing from the user (nothing to write over); their folder rule --
#: a folder holding files edueval did not write is refused -- is tested below.
NO_INPUT = {
    "demo": "runs on bundled and simulated data",
    "kt study": "simulated data only",
    "items simulate": "simulated data only",
    "malalgo generate": "generated questions only",
    "turing power": "numbers only",
    "pairwise simulate": "simulated data only",
}

MODEL = ("--model", "openai/m", "--base-url", "http://127.0.0.1:9/v1", "--no-cache")


@dataclass
class Case:
    """``args`` with ``{name}`` for each input (a file or ``name/`` a folder) and ``{out}``
    for the output; ``out`` is the option (or ``--db``: a SQLite URL) that names it."""

    args: tuple[str, ...]
    inputs: dict[str, str] = field(default_factory=dict)
    out: str = "--out"
    out_is_file: bool = False


CSV = "a,b\n1,2\n"
STUDY_ITEMS = (
    '{"id": "i1", "context": "c", "replies": {"a": "x", "b": "y"}}\n'
    '{"id": "i2", "context": "c", "replies": {"a": "z", "b": "w"}}\n'
)
STUDY_YAML = (
    "title: T\nkind: comparative\nitems: items.jsonl\nseed: 1\n"
    'questions: [{id: q, text: "Which?"}]\n'
)

CASES: dict[str, Case] = {
    "compare": Case(("compare", "{runA/}", "{runB/}"), {"runA/": "", "runB/": ""}),
    "kt simulate": Case(
        ("kt", "simulate", "--params", "{params}"),
        {"params": "skill,prior,learn,guess,slip\ns,0.3,0.1,0.2,0.1\n"},
    ),
    "kt predict": Case(
        ("kt", "predict", "{data}", "--params", "{params}"),
        {
            "data": "student,skill,correct\na,s,1\n",
            "params": "skill,prior,learn,guess,slip\ns,0.3,0.1,0.2,0.1\n",
        },
    ),
    "kt fit": Case(
        ("kt", "fit", "{data}", "--fixed", "{fixed}", "--init", "{init}"),
        {
            "data": "student,skill,correct\na,s,1\n",
            "fixed": "skill,parameter,group,value\n*,forget,*,0\n",
            "init": "skill,parameter,group,value\n*,learn,*,0.2\n",
        },
    ),
    "kt evaluate": Case(
        ("kt", "evaluate", "{data}", "--params", "{params}"),
        {
            "data": "student,skill,correct,p_correct\na,s,1,0.5\n",
            "params": "skill,prior,learn,guess,slip\ns,0.3,0.1,0.2,0.1\n",
        },
    ),
    "kt crossvalidate": Case(
        ("kt", "crossvalidate", "{data}"), {"data": "student,skill,correct\na,s,1\n"}
    ),
    "kt compare": Case(("kt", "compare", "{data}"), {"data": "student,skill,correct\na,s,1\n"}),
    "kt roster": Case(
        ("kt", "roster", "{params}", "--updates", "{updates}"),
        {
            "params": "skill,prior,learn,guess,slip\ns,0.3,0.1,0.2,0.1\n",
            "updates": "student,skill,correct\na,s,1\n",
        },
    ),
    "items analyze": Case(
        ("items", "analyze", "{responses}", "{items}"), {"responses": CSV, "items": CSV}
    ),
    "items dif": Case(
        ("items", "dif", "{scores}", "--group", "g", "--students", "{students}"),
        {"scores": CSV, "students": "student,g\na,x\n"},
    ),
    "items irt": Case(("items", "irt", "{scores}"), {"scores": CSV}),
    "items reliability": Case(
        ("items", "reliability", "{scores}", "--key", "{key}"),
        {"scores": "student,q1,q2\na,A,B\nb,B,B\nc,A,C\n", "key": "item,key\nq1,A\nq2,B\n"},
    ),
    "items irt-compare": Case(
        ("items", "irt-compare", "{real}", "{simulated}"), {"real": CSV, "simulated": CSV}
    ),
    "items pairs": Case(
        ("items", "pairs", "{responses}", "{items}"), {"responses": CSV, "items": CSV}
    ),
    "malalgo run": Case(
        ("malalgo", "run", "{questions}", "--endpoints", "{endpoints}", *MODEL),
        {"questions": CSV, "endpoints": "- url: http://127.0.0.1:9/v1\n"},
    ),
    "malalgo score": Case(("malalgo", "score", "{responses}"), {"responses": CSV}),
    "malalgo audit": Case(("malalgo", "audit", "{questions}"), {"questions": CSV}),
    "pairwise import-teacher-test": Case(
        ("pairwise", "import-teacher-test", "{items}"), {"items": '{"id": "x"}\n'}
    ),
    "pairwise fit": Case(
        ("pairwise", "fit", "{data}", "--exclude-raters", "{exclude}"),
        {"data": CSV, "exclude": "- r1\n"},
    ),
    "pairwise raters": Case(("pairwise", "raters", "{data}"), {"data": CSV}),
    "pairwise summarize": Case(
        ("pairwise", "summarize", "{fit/}", "--scores", "{scores}"), {"fit/": "", "scores": CSV}
    ),
    "pairwise hierarchical": Case(("pairwise", "hierarchical", "{data}"), {"data": CSV}),
    "pairwise replicate-teacher-test": Case(
        ("pairwise", "replicate-teacher-test", "{data/}"), {"data/": ""}
    ),
    "qgsms run": Case(("qgsms", "run", "{pairs}", "{items}", *MODEL), {"pairs": CSV, "items": CSV}),
    "qgsms score": Case(
        ("qgsms", "score", "{judgementsA}", "{judgementsB}"),
        {"judgementsA": CSV, "judgementsB": CSV},
    ),
    "study serve": Case(
        ("study", "serve", "{study/study.yaml}", "--admin-token-file", "{token}"),
        {"study/": "", "token": "kM3v9QzX1pL7wR2tY8uB5nC0dF6gH4jA\n"},
        out="--db",
    ),
    "study invite": Case(
        ("study", "invite", "{study/study.yaml}", "--participants", "{people}"),
        {"study/": "", "people": "p1\n"},
        out_is_file=True,
    ),
    "study export": Case(("study", "export", "{study/study.yaml}"), {"study/": ""}),
    "turing analyze": Case(
        ("turing", "analyze", "{choices}", "--phase1", "{phase1}"), {"choices": CSV, "phase1": CSV}
    ),
    "turing simulate": Case(
        ("turing", "simulate", "--frequencies", "{frequencies}"),
        {"frequencies": "rule,frequency\nforget_carry,1\n"},
    ),
    "turing generate": Case(("turing", "generate", "{phase1}", *MODEL[:2]), {"phase1": CSV}),
    "turing assemble": Case(
        ("turing", "assemble", "{ai}", "--human", "{human}", "--random", "{random}"),
        {"ai": CSV, "human": CSV, "random": CSV},
    ),
    "tutor import-ncte": Case(("tutor", "import-ncte", "{csv}"), {"csv": CSV}, out_is_file=True),
    "tutor reply": Case(("tutor", "reply", "{dialogues}", *MODEL), {"dialogues": '{"id": 1}\n'}),
    "tutor make-study": Case(
        ("tutor", "make-study", "{repliesA}", "{repliesB}"), {"repliesA": CSV, "repliesB": CSV}
    ),
    "export inspect": Case(("export", "inspect", "{run/}"), {"run/": ""}, out_is_file=True),
}


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    subs = getattr(command, "commands", None)
    if subs:
        for name, sub in subs.items():
            yield from _commands(sub, (*path, name))
    else:
        yield " ".join(path), command


def _app_commands() -> dict[str, Any]:
    import typer

    from edueval.cli.main import app

    return dict(_commands(typer.main.get_command(app)))


def test_every_command_has_a_case() -> None:
    commands = _app_commands()
    missing = sorted(set(commands) - set(CASES) - set(NO_OUTPUT) - set(NO_INPUT))
    assert not missing, f"commands without an output-over-input case: {missing}"
    stale = sorted((set(CASES) | set(NO_OUTPUT) | set(NO_INPUT)) - set(commands))
    assert not stale, f"cases for commands that are gone: {stale}"
    for name, case in CASES.items():  # the case names every path the command takes
        params = {p.name: p for p in commands[name].params}
        assert case.out.lstrip("-").replace("-", "_") in params, name


def _make_inputs(root: Path, command: str, case: Case) -> dict[str, Path]:
    """Each input in its own folder under ``root``, which holds an earlier run of the same
    command (a folder the command may otherwise replace: only the inputs rule protects it)."""
    made: dict[str, Path] = {}
    for i, (name, content) in enumerate(case.inputs.items()):
        home = root / f"in{i}"
        home.mkdir()
        (home / "config.json").write_text(json.dumps({"command": command}))
        (home / "results.json").write_text(json.dumps({"tables": {"t": f"{name}.csv"}}))
        if name.endswith("/"):
            folder = home / name.rstrip("/")
            folder.mkdir(parents=True)
            _fill_folder(folder, name)
            made[name] = folder
        else:
            made[name] = home / f"{name}.csv"
            made[name].write_text(content, encoding="utf-8")
    return made


def _fill_folder(folder: Path, name: str) -> None:
    """A folder input: a run folder (config and a table), or a study (study.yaml, its items
    and its database, made as ``study invite`` makes it)."""
    if name == "study/":
        (folder / "items.jsonl").write_text(STUDY_ITEMS)
        (folder / "study.yaml").write_text(STUDY_YAML)
        from edueval.study import StudyDB, default_db_url, load_study

        db = StudyDB(load_study(folder / "study.yaml"), default_db_url(folder / "study.yaml"))
        db.invite(["p0"])
        db.close()
        return
    (folder / "config.json").write_text(json.dumps({"command": "malalgo run",
                                                    "status": "complete"}))  # fmt: skip
    (folder / "results.json").write_text('{"tables": {"responses": "responses.csv"}}\n')
    (folder / "responses.csv").write_text(CSV)


def _fill(arg: str, made: dict[str, Path]) -> str:
    if not (arg.startswith("{") and arg.endswith("}")):
        return arg
    key = arg[1:-1]
    if key in made:
        return str(made[key])
    folder, _, rest = key.partition("/")
    return str(made[f"{folder}/"] / rest)


def _targets(made: dict[str, Path]) -> list[tuple[str, Path]]:
    """Where the output goes: each input, its folder, and inside each folder input."""
    out = []
    for name, path in made.items():
        out.append((f"at {name}", path))
        out.append((f"at {name}'s folder", path.parent))
        if path.is_dir() and name != "study/":  # a study is its files, not its folder
            out.append((f"inside {name}", path / "run"))
        if path.is_dir():
            out.extend((f"at {name}{p.name}", p) for p in sorted(path.iterdir()))
    return out


def _snapshot(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
            for p in sorted(root.rglob("*")) if ".cache" not in p.parts}  # fmt: skip


#: What our refusals say (one line); Click's own, for a file where a folder goes (or the
#: reverse), come as its usage block with one ``Error:`` line naming the option.
OURS = ("never goes over an input", "edueval did not write", "not written by this command",
        "is a directory, expected a file",
        "a file SQLite or the study app keeps beside the database")  # fmt: skip


def _assert_refused(res, out_option: str, where: str) -> None:
    assert res.code == 2, (where, res)
    assert "Traceback" not in res.err, (where, res)
    lines = [line for line in res.err.splitlines() if line.strip()]
    if lines and lines[0].startswith("Usage:"):
        errors = [line for line in lines if line.startswith("Error:")]
        assert len(errors) == 1 and f"'{out_option}'" in errors[0], (where, res)
        assert "is a file" in errors[0] or "is a directory" in errors[0], (where, res)
    else:
        assert len(lines) == 1, (where, res)
        assert any(s in lines[0] for s in OURS), (where, res)


@pytest.fixture
def no_server(monkeypatch):
    """``study serve`` must never get as far as serving."""
    import uvicorn

    def refuse(*args, **kwargs):
        raise AssertionError("study serve started its server")

    monkeypatch.setattr(uvicorn, "run", refuse)


@pytest.mark.parametrize("command", sorted(CASES))
def test_no_output_goes_over_an_input(cli, tmp_path, monkeypatch, no_server, command) -> None:
    case = CASES[command]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EDUEVAL_CACHE_DIR", str(tmp_path / ".cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.delenv("EDUEVAL_STUDY_DB", raising=False)
    made = _make_inputs(tmp_path, command, case)
    args = [_fill(a, made) for a in case.args]
    params = {p.name for p in _app_commands()[command].params}
    overwrite = ["--overwrite"] if "overwrite" in params else []
    before = _snapshot(tmp_path)
    for where, target in _targets(made):
        if case.out == "--db" and target.name == "study.db":
            continue  # the study's own database: what --db is for
        value = f"sqlite:///{target}" if case.out == "--db" else str(target)
        res = cli(*args, case.out, value, *overwrite)
        _assert_refused(res, case.out, f"{command} {case.out} {where}")
        assert _snapshot(tmp_path) == before, f"{command} {case.out} {where} changed files"


@pytest.mark.parametrize("command", ["kt simulate", "turing power", "demo"])
def test_a_folder_of_other_files_is_never_written_into(cli, tmp_path, command) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.csv").write_text("keep me\n")
    res = cli(*command.split(), "--out", folder)
    assert res.code == 2 and len(res.err_lines) == 1, res
    assert "edueval did not write (notes.csv)" in res.err, res
    assert sorted(p.name for p in folder.iterdir()) == ["notes.csv"]


def test_an_empty_folder_or_a_folder_of_runs_is_fine(tmp_path) -> None:
    from edueval.runs import check_out_dir

    (tmp_path / "empty").mkdir()
    assert check_out_dir(tmp_path / "empty", "kt fit", inputs=()) == tmp_path / "empty"
    (tmp_path / "several" / "model-a").mkdir(parents=True)  # several models' parent folder
    (tmp_path / "several" / ".DS_Store").write_text("")
    assert check_out_dir(tmp_path / "several", "malalgo run", inputs=()).name == "several"


def test_a_symbolic_link_to_an_input_is_the_input(tmp_path) -> None:
    from edueval.io import InputError
    from edueval.runs import check_out_file

    data = tmp_path / "data.csv"
    data.write_text(CSV)
    link = tmp_path / "elsewhere" / "link.csv"
    link.parent.mkdir()
    link.symlink_to(data)
    with pytest.raises(InputError, match="is the input"):
        check_out_file(link, inputs=[data])


def test_a_quoted_glob_input_is_its_files(tmp_path) -> None:
    from edueval.io import InputError
    from edueval.runs import check_out_dir

    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "r1.csv").write_text(CSV)
    with pytest.raises(InputError, match="holds the input"):
        check_out_dir(tmp_path / "logs", "kt fit", inputs=[str(tmp_path / "logs" / "r*.csv")])


def test_the_library_run_folder_refuses_its_inputs_too(tmp_path) -> None:
    from edueval.io import InputError
    from edueval.runs import RunDir

    data = tmp_path / "run" / "responses.csv"
    data.parent.mkdir()
    data.write_text(CSV)
    with pytest.raises(InputError, match="holds the input"):
        RunDir(tmp_path / "run", command="kt fit", params={}, inputs={"data": data})
    assert data.read_text() == CSV and sorted(p.name for p in data.parent.iterdir()) == [
        "responses.csv"
    ]


def test_the_issues_examples_with_real_runs(cli, tmp_path) -> None:
    """Issue 39's cases as a user meets them: each refused in one line, nothing changed."""
    sim, pr = tmp_path / "sim", tmp_path / "pr"
    small = ("--students", "20", "--skills", "1", "--opportunities", "5")
    assert cli("kt", "simulate", *small, "--out", sim).code == 0
    params = sim / "params.csv"
    pr.mkdir()  # an earlier kt predict run (the same command may replace its own run)
    (pr / "config.json").write_text(json.dumps({"command": "kt predict"}))
    (pr / "predictions.csv").write_text((sim / "responses.csv").read_text())
    before = _snapshot(tmp_path)
    refused = [
        ("kt", "fit", sim / "responses.csv", "--out", sim, "--overwrite"),
        ("kt", "simulate", *small, "--params", params, "--out", sim),
        ("kt", "predict", pr / "predictions.csv", "--params", params, "--out", pr),
        ("kt", "evaluate", sim / "responses.csv", "--params", params, "--out", tmp_path),
        ("export", "inspect", sim, "--out", sim / "config.json"),
    ]
    for args in refused:
        res = cli(*args)
        assert res.code == 2 and len(res.err_lines) == 1, (args, res)
        assert "never goes over an input" in res.err, (args, res)
        assert _snapshot(tmp_path) == before, args
