"""A generated corpus of damaged inputs, for every reader and every command that takes it (issue 24).

Each case is one command (a :class:`Target`) with one of its input files replaced by a mutation of
a small valid seed (``corpus.py``).  The contract, whatever the damage:

* a mutation harmless by design (a byte-order mark, CRLF line ends, another column order, integer
  orders above 2**53) gives exit 0 and results identical to the unmutated run;
* a mutation that changes what the file says is refused: exit 2 and exactly one ``error:`` line,
  no traceback (and, after a quoted field spanning lines, the error names the right line);
* ``either`` mutations (an unknown extra column, a JSON object of columns, another format's
  content) are refused or read to identical results;
* never exit 1, never exit 0 with different results.

The unmutated run of each target is made once and shared.  Commands that ask a model talk to one
scripted server on loopback.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pytest

from edueval.cli.main import main
from support.scripted_server import ScriptedServer

from . import corpus as C

# over 800 cases: spread over the xdist workers (the scripted server and the baselines are cheap to
# make once per worker; tests/conftest.py)
pytestmark = [pytest.mark.slow, pytest.mark.spread]

SEEDS = Path(__file__).resolve().parent / "corpus_seeds"


# --------------------------------------------------------------------------------------------
# targets


@dataclass(frozen=True)
class Target:
    """One command; ``slot`` is the input the mutations replace, ``files`` every input."""

    name: str
    files: dict[str, C.Table]
    slot: str
    argv: Callable[[dict[str, Path], Path, str], list[str]]
    results: tuple[str, ...] = ()  # files of the run directory compared (default: *.csv, results)
    drop_columns: tuple[str, ...] = ()
    uses_model: bool = False
    out_is_file: bool = False
    extra: dict[str, str] = field(default_factory=dict)  # other files, written as they are

    def table(self) -> C.Table:
        return self.files[self.slot]


def _p(t: C.Table, name: str) -> str:
    return f"{name}.{t.ext}"


KT_FIT = ["--min-responses", "2", "--restarts", "1", "--max-iter", "40"]
MODEL = ["--model", "openai/scripted", "--max-failures", "0"]


def _targets() -> list[Target]:
    q_text = (SEEDS / "malalgo_questions.csv").read_text(encoding="utf-8")
    r_text = (SEEDS / "malalgo_responses.csv").read_text(encoding="utf-8")
    out: list[Target] = []
    for fmt in ("csv", "tsv", "jsonl", "json"):
        out.append(Target(f"kt-fit.responses.{fmt}", {"data": C.kt_responses(fmt)}, "data",
                          lambda f, o, u: ["kt", "fit", f["data"], *KT_FIT, "--out", o]))  # fmt: skip
    # a folder dataset (read out of core, block by block): the mutated file beside a valid one
    out.append(Target("kt-fit.dataset-file", {"ds/part-b": C.kt_responses("csv")}, "ds/part-b",
                      lambda f, o, u: ["kt", "fit", f["ds/part-b"].parent, *KT_FIT, "--out", o],
                      extra={"ds/part-a.csv": "KT_PART"}))  # fmt: skip
    out += [
        Target(
            "kt-fit.fixed",
            {"data": C.kt_responses("csv"), "fixed": C.kt_fixed()},
            "fixed",
            lambda f, o, u: ["kt", "fit", f["data"], *KT_FIT, "--fixed", f["fixed"], "--out", o],
        ),  # fmt: skip
        Target(
            "kt-predict.responses",
            {"data": C.kt_responses("jsonl"), "params": C.kt_params_wide()},
            "data",
            lambda f, o, u: ["kt", "predict", f["data"], "--params", f["params"], "--out", o],
        ),
        Target(
            "kt-predict.params-wide",
            {"data": C.kt_responses("csv"), "params": C.kt_params_wide()},
            "params",
            lambda f, o, u: ["kt", "predict", f["data"], "--params", f["params"], "--out", o],
        ),
        Target(
            "kt-predict.params-long",
            {"data": C.kt_responses("csv"), "params": C.kt_params_long()},
            "params",
            lambda f, o, u: ["kt", "predict", f["data"], "--params", f["params"], "--out", o],
        ),
        Target(
            "kt-evaluate.predictions",
            {"data": C.kt_predictions()},
            "data",
            lambda f, o, u: ["kt", "evaluate", f["data"], "--out", o],
        ),
        Target(
            "kt-evaluate.params",
            {"data": C.kt_predictions(), "params": C.kt_params_wide()},
            "params",
            lambda f, o, u: ["kt", "evaluate", f["data"], "--params", f["params"], "--out", o],
        ),
        Target(
            "kt-roster.updates",
            {"data": C.kt_responses("csv"), "params": C.kt_params_wide()},
            "data",
            lambda f, o, u: ["kt", "roster", f["params"], "--updates", f["data"], "--out", o],
        ),
        Target(
            "kt-roster.params",
            {"data": C.kt_responses("csv"), "params": C.kt_params_long()},
            "params",
            lambda f, o, u: ["kt", "roster", f["params"], "--updates", f["data"], "--out", o],
        ),
        Target(
            "items-analyze.responses",
            {"r": C.items_responses(), "items": C.items_jsonl()},
            "r",
            lambda f, o, u: ["items", "analyze", f["r"], f["items"], "--out", o],
        ),
        Target(
            "items-analyze.items",
            {"r": C.items_responses(), "items": C.items_jsonl()},
            "items",
            lambda f, o, u: ["items", "analyze", f["r"], f["items"], "--out", o],
        ),
        Target(
            "items-analyze.scores",
            {"s": C.score_table()},
            "s",
            lambda f, o, u: ["items", "analyze", f["s"], "--out", o],
        ),
        Target(
            "items-dif.scores",
            {"s": C.score_table("jsonl", group=True)},
            "s",
            lambda f, o, u: ["items", "dif", f["s"], "--group", "grp", "--out", o],
        ),
        Target(
            "items-reliability.scores",
            {"s": C.score_table("jsonl")},
            "s",
            lambda f, o, u: ["items", "reliability", f["s"], "--out", o],
        ),
        Target(
            "items-pairs.responses",
            {"r": C.items_responses(), "items": C.items_jsonl()},
            "r",
            lambda f, o, u: ["items", "pairs", f["r"], f["items"], "--out", o],
        ),
        Target(
            "pairwise-fit.comparisons",
            {"data": C.comparisons()},
            "data",
            lambda f, o, u: [
                "pairwise",
                "fit",
                f["data"],
                "--chains",
                "1",
                "--warmup",
                "10",
                "--draws",
                "10",
                "--out",
                o,
            ],  # fmt: skip
            drop_columns=("sampling_seconds",),
        ),
        Target(
            "pairwise-summarize.abilities",
            {"data": C.abilities()},
            "data",
            lambda f, o, u: ["pairwise", "summarize", f["data"], "--out", o],
        ),
        Target(
            "malalgo-score.responses",
            {"r": C.malalgo_responses(r_text)},
            "r",
            lambda f, o, u: ["malalgo", "score", f["r"], "--out", o],
        ),
        Target(
            "malalgo-audit.questions",
            {"q": C.malalgo_questions(q_text)},
            "q",
            lambda f, o, u: ["malalgo", "audit", f["q"], "--folds", "2", "--out", o],
        ),
        Target(
            "malalgo-run.questions",
            {"q": C.malalgo_questions(q_text)},
            "q",
            lambda f, o, u: [
                "malalgo",
                "run",
                f["q"],
                *MODEL,
                "--base-url",
                u,
                "--no-mcq",
                "--out",
                o,
            ],  # fmt: skip
            uses_model=True,
        ),
        Target(
            "turing-analyze.choices",
            {"c": C.choices()},
            "c",
            lambda f, o, u: ["turing", "analyze", f["c"], "--out", o],
        ),
        Target(
            "turing-analyze.phase1",
            {"c": C.choices(), "p": C.phase1()},
            "p",
            lambda f, o, u: ["turing", "analyze", f["c"], "--phase1", f["p"], "--out", o],
        ),
        Target(
            "turing-assemble.distractors",
            {"ai": C.distractors(), "h": C.human()},
            "ai",
            lambda f, o, u: ["turing", "assemble", f["ai"], "--human", f["h"], "--out", o],
        ),
        Target(
            "turing-assemble.human",
            {"ai": C.distractors(), "h": C.human()},
            "h",
            lambda f, o, u: ["turing", "assemble", f["ai"], "--human", f["h"], "--out", o],
        ),
        Target(
            "turing-generate.phase1",
            {"p": C.phase1_texts()},
            "p",
            lambda f, o, u: [
                "turing",
                "generate",
                f["p"],
                *MODEL,
                "--base-url",
                u,
                "--out",
                o,
            ],  # fmt: skip
            uses_model=True,
        ),
        Target(
            "qgsms-score.judgements",
            {"j": C.judgements()},
            "j",
            lambda f, o, u: ["qgsms", "score", f["j"], "--no-bt", "--out", o],
        ),
        Target(
            "tutor-import-ncte.csv",
            {"n": C.ncte()},
            "n",
            lambda f, o, u: ["tutor", "import-ncte", f["n"], "--out", o / "d.jsonl"],
            results=("d.jsonl",),
            out_is_file=True,
        ),
        Target(
            "tutor-reply.dialogues",
            {"d": C.dialogues()},
            "d",
            lambda f, o, u: ["tutor", "reply", f["d"], *MODEL, "--base-url", u, "--out", o],
            uses_model=True,
            drop_columns=("latency_s", "cached", "seconds"),
        ),
        Target(
            "tutor-make-study.replies",
            {"r": C.replies()},
            "r",
            lambda f, o, u: ["tutor", "make-study", f["r"], "--select", "all", "--out", o],
        ),
        Target(
            "study-invite.participants",
            {"p": C.participants()},
            "p",
            lambda f, o, u: [
                "study",
                "invite",
                o.parent / "study" / "study.yaml",
                "--participants",
                f["p"],
                "--out",
                o / "links.csv",
            ],  # fmt: skip
            results=("links.csv:participant",),
            out_is_file=True,
            extra={"study/study.yaml": "STUDY", "study/items.jsonl": "ITEMS"},
        ),
        Target(
            "study-invite.items",
            {"i": C.study_items()},
            "i",
            lambda f, o, u: [
                "study",
                "invite",
                o.parent / "study" / "study.yaml",
                "--n",
                "3",
                "--out",
                o / "links.csv",
            ],  # fmt: skip
            results=("links.csv:participant",),
            out_is_file=True,
            extra={"study/study.yaml": "STUDY_SLOT"},
        ),
    ]
    return out


STUDY_YAML = """title: Corpus study
kind: comparative
items: {items}
items_per_participant: 2
seed: 3
consent: Consent text.
questions:
  - id: helpful
    text: Which helps more?
practice:
  context: practice context
  replies:
    x: good
    y: bad
"""

TARGETS = _targets()


def _cases() -> Iterator[object]:
    for t in TARGETS:
        table = t.table()
        for m in C.MUTATIONS:
            if m.apply(table) is None:
                continue
            yield pytest.param(t, m, id=f"{t.name}-{m.name}")


CASES = list(_cases())


# --------------------------------------------------------------------------------------------
# running


def _script(body: dict) -> str:
    """One answer for every role: MalAlgoQA's choice, the generator's question and key, the
    turing AI's distractor, a tutor reply."""
    return json.dumps({"Correct Choice": "B", "related_question": "What is 4 + 4?",
                       "correct_answer": "8", "answer": "8", "distractor": "9"})  # fmt: skip


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer(_script) as s:
        yield s


@pytest.fixture(scope="module", autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    old = os.environ.get("EDUEVAL_CACHE_DIR")
    os.environ["EDUEVAL_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if old is None:
        os.environ.pop("EDUEVAL_CACHE_DIR", None)
    else:
        os.environ["EDUEVAL_CACHE_DIR"] = old


@pytest.fixture(scope="module", autouse=True)
def _command_tree_built_once() -> Iterator[None]:
    """``main`` builds Typer's Click tree on every call (0.9 s); the tree does not change, so
    build it once for the module's 1,000-odd calls."""
    import typer.main

    built: dict[int, object] = {}
    original = typer.main.get_command

    def get_command(app: object) -> object:
        if id(app) not in built:
            built[id(app)] = original(app)  # type: ignore[arg-type]
        return built[id(app)]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(typer.main, "get_command", get_command)
        yield


@dataclass
class Outcome:
    code: int
    out: str
    err: str
    run_dir: Path

    @property
    def errors(self) -> list[str]:
        return [line for line in (self.out + "\n" + self.err).splitlines()
                if line.startswith("error:")]  # fmt: skip

    def last_line(self) -> str:
        lines = [line for line in (self.out + "\n" + self.err).splitlines() if line.strip()]
        return lines[-1][:300] if lines else ""


def _write_inputs(t: Target, folder: Path, slot_bytes: bytes | None) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    for slot, table in t.files.items():
        path = folder / _p(table, slot)
        path.parent.mkdir(parents=True, exist_ok=True)  # a slot may sit in a dataset's folder
        path.write_bytes(slot_bytes if slot == t.slot and slot_bytes is not None
                         else C.render(table))  # fmt: skip
        paths[slot] = path
    for rel, what in t.extra.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if what == "ITEMS":
            path.write_bytes(C.render(C.study_items()))
        elif what == "KT_PART":  # another file of the same dataset, other students
            path.write_bytes(C.render(C.kt_responses_part()))
        elif what == "STUDY":
            path.write_text(STUDY_YAML.format(items="items.jsonl"))
        elif what == "STUDY_SLOT":
            # the mutated items file is the slot; the study names it
            slot_path = paths[t.slot]
            path.write_text(STUDY_YAML.format(items=os.path.relpath(slot_path, path.parent)))
    return paths


def _run(t: Target, folder: Path, url: str, capsys: pytest.CaptureFixture[str],
         slot_bytes: bytes | None = None) -> Outcome:  # fmt: skip
    paths = _write_inputs(t, folder, slot_bytes)
    run_dir = folder / "run"
    if t.out_is_file:
        run_dir.mkdir(parents=True, exist_ok=True)
    argv = [str(a) for a in t.argv(paths, run_dir, url)]
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as exc:  # pragma: no cover - main returns its code
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:  # noqa: BLE001 - a crash is a finding, not a test error
        captured = capsys.readouterr()
        return Outcome(-1, captured.out, captured.err + f"\nCRASH {type(exc).__name__}: {exc}",
                       run_dir)  # fmt: skip
    captured = capsys.readouterr()
    return Outcome(int(code or 0), captured.out, captured.err, run_dir)


VOLATILE = ("seconds", "latency", "elapsed", "started", "finished", "time", "cache", "path",
            "file", "input", "version", "cost", "calls", "attempts", "timing")  # fmt: skip


def _clean(obj: object) -> object:
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()
                if not any(w in str(k).lower() for w in VOLATILE)}  # fmt: skip
    if isinstance(obj, list):
        return [_clean(v) for v in obj]
    if isinstance(obj, float) and math.isnan(obj):
        return "nan"
    return obj


def _results(t: Target, run_dir: Path) -> dict[str, object]:
    """What the run says: every CSV table and results.json, less timings and paths."""
    got: dict[str, object] = {}
    names = list(t.results)
    if not names:
        names = sorted(p.name for p in run_dir.glob("*.csv")) + ["results.json"]
    for name in names:
        fname, _, column = name.partition(":")
        path = run_dir / fname
        if not path.exists():
            got[name] = None
        elif fname.endswith(".csv"):
            df = pd.read_csv(path, dtype=str, keep_default_na=False)
            if column:
                df = df[[column]]
            drop = [c for c in df.columns
                    if c in t.drop_columns or any(w in c.lower() for w in VOLATILE)]  # fmt: skip
            got[name] = {"csv": df.drop(columns=drop).to_dict("list")}
        elif fname.endswith(".json"):
            got[name] = _clean(json.loads(path.read_text(encoding="utf-8")))
        else:
            got[name] = [_clean(json.loads(x)) for x in path.read_text().splitlines() if x]
    return got


_BASELINES: dict[str, tuple[Outcome, dict[str, object]]] = {}


def _baseline(t: Target, tmp_path_factory: pytest.TempPathFactory, url: str,
              capsys: pytest.CaptureFixture[str]) -> tuple[Outcome, dict[str, object]]:  # fmt: skip
    if t.name not in _BASELINES:
        folder = tmp_path_factory.mktemp(f"base-{t.name}")
        res = _run(t, folder, url, capsys)
        _BASELINES[t.name] = (res, _results(t, res.run_dir) if res.code == 0 else {})
    return _BASELINES[t.name]


def _diff(a: dict[str, object], b: dict[str, object], ignore: tuple[str, ...] = ()) -> str:
    """Where ``b`` says something else than the baseline ``a``: tables are compared column by
    column in any order, on the baseline's columns (a command may carry an input's extra columns
    through), less ``ignore``."""
    for k in sorted(set(a) | set(b)):
        x, y = a.get(k), b.get(k)
        if isinstance(x, dict) and "csv" in x and isinstance(y, dict) and "csv" in y:
            xc, yc = x["csv"], y["csv"]
            bad = [c for c in xc if c not in ignore and xc[c] != yc.get(c)]
            if bad:
                return f"{k} differs in columns {bad[:3]}"
            continue
        if x == y:
            continue
        if isinstance(x, dict) and isinstance(y, dict):
            inner = [j for j in sorted(set(x) | set(y), key=str) if x.get(j) != y.get(j)]
            return f"{k} differs in {inner[:3]}"
        return f"{k} differs"
    return ""


@pytest.mark.parametrize(("target", "mutation"), CASES)
def test_mutated_input(target: Target, mutation: C.Mutation, tmp_path: Path,
                       tmp_path_factory: pytest.TempPathFactory, server: ScriptedServer,
                       capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    base, base_results = _baseline(target, tmp_path_factory, server.url, capsys)
    assert base.code == 0, f"the unmutated input fails: exit {base.code}: {base.last_line()}"
    data = mutation.apply(target.table())
    assert data is not None
    got = _run(target, tmp_path, server.url, capsys, data)
    said = f"exit {got.code}: {got.last_line()!r}"
    assert "Traceback" not in got.out + got.err, f"traceback; {said}"
    refused = got.code == 2 and len(got.errors) == 1
    if got.code == 0:
        diff = _diff(base_results, _results(target, got.run_dir), mutation.ignore_columns)
    if mutation.expect == C.REFUSE:
        assert got.code != 0, f"silently wrong: exit 0 where a refusal is due; {said}"
        assert refused, f"not a one-line refusal; {said}"
        if mutation.line_of_error is not None:
            line = mutation.line_of_error(target.table())
            assert f"line {line}" in got.errors[0], f"wrong line (want {line}); {said}"
    elif mutation.expect == C.HARMLESS:
        assert got.code == 0, f"a harmless change is not read; {said}"
        assert not diff, f"a harmless change alters the results ({diff}); {said}"
    elif mutation.expect == C.EITHER:
        assert refused or got.code == 0, f"neither refused in one line nor read; {said}"
        if got.code == 0:
            assert not diff, f"silently different results ({diff}); {said}"
    else:  # "read": text with raw separators must be read, not refused or split
        assert got.code == 0, f"text with U+2028/U+0085 not read; {said}"


def test_the_corpus_is_large_enough() -> None:
    assert len(CASES) >= 600, len(CASES)
