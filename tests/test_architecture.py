"""The package's architecture, checked: the import-linter contracts of pyproject.toml hold, no
module takes part in an import cycle, every protocol module is classified as compute or run, and
importing a protocol loads none of the heavy run-layer libraries."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
PROTOCOLS = ("kt", "items", "pairwise", "qgsms", "malalgo", "turing", "tutor", "misconceptions")
#: loaded only by the run/report layer, the web app or the cluster path (arviz and xarray: on first
#: use, by a Bayesian fit's diagnostics)
HEAVY = (
    "jinja2",
    "matplotlib",
    "fastapi",
    "sqlalchemy",
    "uvicorn",
    "dask",
    "distributed",
    "numpyro",
    "jax",
    "arviz",
    "xarray",
)


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("edueval", cache_dir=None)


def _contract(contract_id: str) -> dict:
    config = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]
    (found,) = [c for c in config["contracts"] if c.get("id") == contract_id]
    return found


def test_import_contracts_are_kept():
    """``lint-imports`` with pyproject.toml's contracts (in a fresh process, no cache written)."""
    code = (
        "import sys\n"
        "from importlinter import cli\n"
        f"sys.exit(cli.lint_imports(config_filename={str(PYPROJECT)!r}, no_cache=True, "
        "no_logo=True))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_module_takes_part_in_an_import_cycle(graph):
    """Function-level imports count: a module importing, even lazily, one that imports it back."""
    cycles = []
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            chain = graph.find_shortest_chain(importer=imported, imported=importer)
            if chain:
                cycles.append(" -> ".join((importer, *chain)))
    assert not cycles, "\n".join(cycles)


def test_every_protocol_module_is_compute_or_run(graph):
    """A new module in a protocol package must be put in the compute list (never imports the
    run/report layer) or the run list of pyproject.toml's contracts."""
    compute = _contract("compute")["source_modules"]
    run = set(_contract("run-layer")["source_modules"])
    listed = {m for m in compute if not m.endswith(".**")}
    wildcards = [m.removesuffix(".**") + "." for m in compute if m.endswith(".**")]
    assert not listed & run, "listed as both compute and run"
    unlisted = [
        m
        for m in sorted(graph.modules)
        if m.split(".")[1:2] and m.split(".")[1] in PROTOCOLS
        if m not in listed | run and not any(m.startswith(w) for w in wildcards)
    ]
    assert not unlisted, f"not in the compute or the run list of pyproject.toml: {unlisted}"


def test_package_inits_import_no_run_or_report_module(graph):
    """A protocol package's ``__init__`` (sub-packages included) imports, even lazily, no run
    module, nor ``runs``, ``report`` or the CLI (run-layer names it offers are imported by name
    on first use, PEP 562)."""
    run = set(_contract("run-layer")["source_modules"])
    upper = ("edueval.cli", "edueval.demo", "edueval.model_runs", "edueval.report", "edueval.runs")
    found = []
    for package in sorted(graph.modules):
        if package.split(".")[1:2] and package.split(".")[1] in PROTOCOLS:
            if not (ROOT / "src" / package.replace(".", "/") / "__init__.py").is_file():
                continue
            imported = graph.find_modules_directly_imported_by(package)
            bad = [m for m in imported if m in run or m.startswith(upper)]
            found += [f"{package} imports {m}" for m in sorted(bad)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_importing_a_protocol_loads_no_heavy_module(protocol):
    code = (
        f"import sys, edueval.{protocol}\n"
        f"heavy = {HEAVY!r}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & set(heavy)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]", f"import edueval.{protocol} loaded {out.strip()}"


@pytest.mark.parametrize("protocol", ["qgsms", "tutor", "turing"])
def test_run_layer_names_stay_importable_from_the_package(protocol):
    """The run-layer names a package exports are imported on first use (PEP 562)."""
    module = __import__(f"edueval.{protocol}", fromlist=["__all__"])
    for name in module.__all__:
        assert getattr(module, name) is not None
