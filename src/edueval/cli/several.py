"""Several models on the same inputs: ``--model`` repeated on ``malalgo run`` and ``qgsms run``.

One run per model in ``OUT/<model>/`` (one response cache, a failure budget per model), then
their paired comparison (:mod:`edueval.compare`) in ``OUT/compare/``.  A single ``--model``
writes ``OUT/`` itself, as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from ..runs import Inputs
from .common import out_dir, say

__all__ = ["ModelsOption", "model_slug", "model_paths", "run_models"]

ModelsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--model",
        "-m",
        help="'local' (embedded SmolLM2, offline; the default, or $EDUEVAL_MODEL) or "
        "'openai/<model>' (any OpenAI-compatible server). Repeat it to evaluate several models "
        "on the same inputs: one run per model in OUT/<model>/ (one cache, a failure "
        "budget per model), then their paired comparison in OUT/compare/.",
    ),
]


def model_slug(spec: str) -> str:
    """A model spec as a folder name: ``openai/gpt-4o`` -> ``openai-gpt-4o``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", spec).strip("-.") or "model"


def model_paths(
    model: list[str] | None, out: Path | None, command: str, overwrite: bool, *,
    inputs: Inputs, check: Callable[[str], object] | None = None,
) -> tuple[Path, dict[str, Path]]:  # fmt: skip
    """The output folder and each model's run folder in it: the folder itself for one model,
    ``<slug>/`` for several (and ``compare/`` made ready for their comparison).  The models
    are checked before any folder is made -- each spec with its server options by ``check``
    (e.g. :func:`~edueval.cli.models.check_model`), so that a bad second model is refused
    before the first one is called; every folder, against the inputs (:func:`out_dir`:
    ``inputs`` beyond the command line's paths)."""
    from ..io import InputError
    from ..models import default_model_spec

    specs = list(model) if model else [default_model_spec()]
    if len(set(specs)) < len(specs):
        raise InputError("--model: the same model is given twice")
    slugs = [model_slug(s) for s in specs]
    if len(specs) > 1 and (len(set(slugs)) < len(slugs) or "compare" in slugs):
        raise InputError("--model: two models give the same folder name: " + ", ".join(slugs))
    if check is not None:
        for spec in specs:
            check(spec)
    inputs = list(inputs)
    path = out_dir(out, command, overwrite, inputs=inputs)
    if len(specs) == 1:
        return path, {specs[0]: path}
    paths = {s: out_dir(path / slug, command, overwrite, inputs=inputs)
             for s, slug in zip(specs, slugs, strict=True)}  # fmt: skip
    out_dir(path / "compare", "compare", overwrite, inputs=inputs)
    return path, paths


def run_models(paths: dict[str, Path], one_run: Callable[[str], None], path: Path) -> Path:
    """``one_run(spec)`` for every model; with several, their comparison in ``path/compare``
    (a model past its failure budget is marked failed and the others still run; exit 3
    afterwards if any failed).  Returns the folder to announce."""
    from ..compare.pipeline import compare_run
    from ..runs import RunFailed

    specs = list(paths)
    if len(specs) == 1:
        one_run(specs[0])
        return path
    failed = []
    for spec in specs:
        try:
            one_run(spec)
        except RunFailed as exc:
            say(f"{spec}: {exc}")
            failed.append(spec)
    compare_path = path / "compare"
    res = compare_run(compare_path, [paths[s] for s in specs])
    for metric, ref in res["reference"].items():
        rows = [d for d in res["differences"] if d["metric"] == metric]
        say(f"{metric}: best {ref}; " + ", ".join(
            f"{d['run']} {d['difference']:+.3f} (p Holm {d['p_holm']:.3g})" for d in rows))  # fmt: skip
    if failed:
        raise RunFailed(
            f"{len(failed)} of {len(specs)} model runs failed ({', '.join(failed)}): "
            f"their metrics are incomplete; the comparison is in {compare_path}"
        )
    return compare_path
