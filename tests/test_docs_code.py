"""Every ```python block of the documentation (README.md and the docs pages, issue 38) is run by a
test or named here with the reason it is not.

* Each block compiles.
* A block under a ``From Python: <name>`` heading is run by ``tests/api/test_api_*.py`` through
  ``sandbox.run_snippet("<name>")`` (same numbers as the matching command, to 1e-12).
* The tour's block (README.md and docs/getting-started.md, the same text), the scikit-learn
  block and the online-tracking block of the P1 page run here, as written, in an empty working
  directory, on the inputs their text presumes (``data``, ``df``); the P4 page's score-table and
  item-response-theory blocks run on small Rasch score files and equal ``items analyze`` /
  ``items irt`` on the same files.
* The Models page's inspect and compare blocks run in ``tests/api/test_api_inspect_block.py``
  and ``tests/api/test_api_compare_block.py`` (``malalgo`` against the scripted server) and
  equal ``edueval export inspect`` and ``edueval compare``.
* Any other block must be in :data:`NOT_RUN` with its reason; a new block that is in neither
  fails this test, so the unrun set cannot grow unseen.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC_FILES = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))

#: blocks run in this file, by their first line (what the page presumes is given in ``_given``)
TOUR = "from edueval.kt import BKT, simulate, random_params, moment_of_learning, metrics"
SKLEARN = "from sklearn.model_selection import GridSearchCV, GroupKFold"
ROSTER = "from edueval.kt import BKT, Roster, save_model, load_model"
SCORES = "import pandas as pd\nfrom edueval.items import analyze_items, read_scores"
IRT = "from edueval.items import IRT, compare_irt"
HERE = (TOUR, SKLEARN, ROSTER, SCORES, IRT)
#: blocks run by a test elsewhere (it needs that folder's fixtures), by their first line
ELSEWHERE = {
    "from edueval.export import to_inspect_log": "tests/api/test_api_inspect_block.py",
    "from edueval.compare import compare": "tests/api/test_api_compare_block.py",
}

#: blocks no test runs, by their first line, with the reason
NOT_RUN = {
    "from dask_jobqueue import SLURMCluster   # pip install dask-jobqueue":
        "submits jobs to a SLURM cluster",
}  # fmt: skip


def _blocks() -> list[tuple[str, str | None, str]]:
    """(file, name, code) of every ```python block: name is the ``From Python: <name>`` of the
    heading just above it (the block ``run_snippet`` takes), else None; ``#`` lines inside code
    blocks are no headings."""
    found = []
    for path in DOC_FILES:
        name, block, other = None, None, False
        for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
            if other:
                other = not line.startswith("```")
            elif block is not None:
                if line.startswith("```"):
                    found.append((str(path.relative_to(ROOT)), name, "".join(block)))
                    block, name = None, None  # the heading names its first block only
                else:
                    block.append(line)
            elif line.startswith("```python"):
                block = []
            elif line.startswith("```"):
                other = True
            elif m := re.match(r"#{1,6} (.*)", line):
                snippet = re.match(r"From Python: (.+?)(\s+\(.*)?\s*$", m.group(1))
                name = snippet.group(1) if snippet else None
    return found


def _fenced_python(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def _snippets_run_by_api_tests() -> set[str]:
    names = set()
    for test in (ROOT / "tests" / "api").glob("test_api_*.py"):
        names |= set(re.findall(r'run_snippet\("([^"]+)"\)', test.read_text(encoding="utf-8")))
    return names


def _first_lines(code: str, n: int = 1) -> str:
    return "\n".join(code.splitlines()[:n])


def _is_not_run(code: str) -> bool:
    return any(code.startswith(key) for key in NOT_RUN)


def test_every_python_block_compiles_and_is_run_or_named():
    blocks = _blocks()
    # the block scanner sees every fenced python block there is
    assert len(blocks) == sum(len(_fenced_python(p)) for p in DOC_FILES)
    assert len(blocks) >= 17
    api = _snippets_run_by_api_tests()
    unaccounted = []
    for where, _, code in blocks:
        compile(code, where, "exec")
        first = _first_lines(code)
        run_here = code.startswith((*HERE, *ELSEWHERE))
        snippet = next((n for w, n, c in blocks if c == code and n), None)
        if not (run_here or _is_not_run(code) or (snippet in api)):
            unaccounted.append(f"{where}: {first}")
    assert not unaccounted, "python blocks no test runs (run them, or add them to NOT_RUN):\n" + (
        "\n".join(unaccounted)
    )
    for key, test in ELSEWHERE.items():
        assert key in (ROOT / test).read_text(encoding="utf-8"), test
    # every reason names a block that is still there
    for key in NOT_RUN:
        assert any(code.startswith(key) for _, _, code in blocks), key


def test_every_from_python_snippet_is_run_by_an_api_test():
    names = {n for _, n, code in _blocks()
             if n and not _is_not_run(code) and not code.startswith(HERE)}  # fmt: skip
    assert names == _snippets_run_by_api_tests()


def _block(first: str) -> str:
    codes = {code for _, _, code in _blocks() if code.startswith(first + "\n")}
    assert len(codes) == 1, f"{len(codes)} different blocks start with {first!r}"
    return codes.pop()


def _run(code: str, work: Path, monkeypatch, **given) -> dict:
    monkeypatch.chdir(work)
    namespace = {"__name__": "__docs__", **given}
    exec(compile(code, "docs", "exec"), namespace)  # noqa: S102 - the documentation's own text
    return namespace


def test_the_tour_block_runs(tmp_path, monkeypatch):
    ns = _run(_block(TOUR), tmp_path, monkeypatch)
    params, truth = ns["model"].params_, ns["truth"]
    assert len(params) == 20
    for col in ("prior", "learn", "guess", "slip"):
        assert params[col].between(0, 1).all(), col
    # 1,000 students x 30 opportunities: EM recovers the simulated guess and slip closely
    assert {"p_correct", "p_known"} <= set(ns["pred"].columns)
    assert math.isfinite(ns["summary"]["mol_mad"])
    assert np.allclose(params["guess"].to_numpy(), truth["guess"].to_numpy(), atol=0.15)
    assert list(tmp_path.iterdir()) == []


def _small_log(skills: int = 2, seed: int = 5):
    from edueval.kt import random_params, simulate
    from edueval.seeding import rng

    return simulate(random_params(skills, rng(seed)), n_students=40, n_opportunities=8, seed=seed)


def test_the_scikit_learn_block_runs(tmp_path, monkeypatch):
    data = _small_log()
    ns = _run(_block(SKLEARN), tmp_path, monkeypatch, data=data)
    assert ns["search"].best_params_["forgets"] in (False, True)
    assert math.isfinite(ns["search"].best_score_)
    assert len(ns["search"].best_estimator_.params_) == 2


def test_the_online_tracking_block_runs(tmp_path, monkeypatch):
    df = _small_log(skills=1).assign(skill="fractions")
    df["item"] = np.where(df.index % 2 == 0, "fractions-1", "fractions-2")
    ns = _run(_block(ROSTER), tmp_path, monkeypatch, df=df)
    state = ns["roster"].state()
    assert len(state) == 1
    assert (tmp_path / "model" / "params.csv").exists() and (
        tmp_path / "idem" / "model.json"
    ).exists()


@pytest.mark.parametrize("first", [TOUR])
def test_readme_and_getting_started_show_the_same_tour(first):
    readme = [c for w, _, c in _blocks() if w == "README.md" and _first_lines(c) == first]
    page = [
        c for w, _, c in _blocks() if w == "docs/getting-started.md" and _first_lines(c) == first
    ]
    assert readme and readme == page


def _score_table(seed: int, n: int = 150):
    """A wide 0/1 score table: n students x 6 Rasch items."""
    import pandas as pd

    r = np.random.default_rng(seed)
    theta, b = r.normal(size=n), np.linspace(-1.5, 1.5, 6)
    x = (r.random((n, 6)) < 1 / (1 + np.exp(-(theta[:, None] - b)))).astype(int)
    table = pd.DataFrame(x, columns=[f"i{k}" for k in range(6)])
    table.insert(0, "student", [f"s{k}" for k in range(n)])
    return table


@pytest.fixture
def score_files(tmp_path):
    """The files the P4 score-table blocks name, and a folder for the commands' runs."""
    import pandas as pd

    work, runs = tmp_path / "work", tmp_path / "runs"
    work.mkdir()
    for name, seed in (("scores.csv", 1), ("real.csv", 2), ("simulated.csv", 3)):
        _score_table(seed).to_csv(work / name, index=False)
    students = [f"s{k}" for k in range(150)]
    sex = ["F" if k % 2 else "M" for k in range(150)]
    pd.DataFrame({"student": students, "sex": sex}).to_csv(work / "students.csv", index=False)
    return work, runs


def _command(cli, runs: Path, *args) -> dict:
    import json

    out = runs / args[1]
    result = cli(*args[:1], *args[2:], "--out", out)
    assert result.code == 0, result.err
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_the_score_table_block_equals_the_commands(score_files, monkeypatch, cli):
    work, runs = score_files
    ns = _run(_block(SCORES), work, monkeypatch)
    scores = work / "scores.csv"
    analyze = _command(cli, runs, "items", "analyze", "analyze", scores)
    rel = analyze["reliability"]
    assert ns["rel"].alpha == pytest.approx(rel["alpha"], abs=1e-12)
    assert ns["rel"].kr20 == pytest.approx(rel["kr20"], abs=1e-12)
    dif_run = _command(cli, runs, "items", "dif", "dif", scores, "--group", "sex", "--students",
                       work / "students.csv", "--focal", "F")  # fmt: skip
    assert dif_run["focal"] == "F" and dif_run["n_items"] == len(ns["res"].items) == 6


def test_the_irt_block_equals_the_command(score_files, monkeypatch, cli):
    work, runs = score_files
    ns = _run(_block(IRT), work, monkeypatch)
    irt = _command(cli, runs, "items", "irt", "irt", work / "scores.csv", "--model", "2pl")
    m = ns["m"]
    assert m.loglik_ == pytest.approx(irt["loglik"], abs=1e-9)
    assert m.aic_ == pytest.approx(irt["AIC"], abs=1e-9)
    assert m.bic_ == pytest.approx(irt["BIC"], abs=1e-9)
    assert sorted(p.name for p in work.iterdir()) == [
        "real.csv", "scores.csv", "simulated.csv", "students.csv"
    ]  # fmt: skip
