"""Every ```python block of the documentation (README.md and the docs pages, issue 38) is run by a
test or named here with the reason it is not.

* Each block compiles.
* A block under a ``From Python: <name>`` heading is run by ``tests/api/test_api_*.py`` through
  ``sandbox.run_snippet("<name>")`` (same numbers as the matching command, to 1e-12).
* The tour's block (README.md and docs/getting-started.md, the same text), the scikit-learn
  block and the online-tracking block of the P1 page run here, as written, in an empty working
  directory, on the inputs their text presumes (``data``, ``df``).
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

#: blocks no test runs, by their first line, with the reason
NOT_RUN = {
    "from edueval.export import to_inspect_log            # an inspect_ai.log.EvalLog, nothing "
    "written": "needs a P3 run folder made by a model (runs/p3) and the inspect extra",
    "from edueval.compare import compare          # edueval.compare(...) is the same function":
        "a fragment: res_a, res_b, res_c are three malalgo runs made before",
    "import pandas as pd\nfrom edueval.items import analyze_items, read_scores":
        "reads the user's own scores.csv and students.csv",
    "from edueval.items import IRT, compare_irt":
        "reads the user's own scores.csv, real.csv and simulated.csv",
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
        run_here = first in (TOUR, SKLEARN, ROSTER)
        snippet = next((n for w, n, c in blocks if c == code and n), None)
        if not (run_here or _is_not_run(code) or (snippet in api)):
            unaccounted.append(f"{where}: {first}")
    assert not unaccounted, "python blocks no test runs (run them, or add them to NOT_RUN):\n" + (
        "\n".join(unaccounted)
    )
    # every reason names a block that is still there
    for key in NOT_RUN:
        assert any(code.startswith(key) for _, _, code in blocks), key


def test_every_from_python_snippet_is_run_by_an_api_test():
    names = {n for _, n, code in _blocks() if n and not _is_not_run(code)}
    assert names == _snippets_run_by_api_tests()


def _block(first: str) -> str:
    codes = {code for _, _, code in _blocks() if _first_lines(code) == first}
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
