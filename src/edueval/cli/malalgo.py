"""``edueval malalgo``: malgorithm identification (P3)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import OutOption, OverwriteOption, SeedOption, done, out_dir, say, typer_app
from .models import (
    ApiKeyEnvOption,
    BaseUrlOption,
    EndpointsOption,
    MaxConnectionsOption,
    MaxFailuresOption,
    ModelOption,
    NoCacheOption,
    TimeoutOption,
    open_model,
    parse_max_failures,
)

app = typer_app("Malgorithm identification (MalAlgoQA): generate, run, score, audit.")


@app.command()
def generate(
    n: Annotated[int, typer.Option("--n", help="Number of questions.")] = 20,
    grade: Annotated[list[int] | None, typer.Option(help="Keep these grades (repeatable).")] = None,
    content: Annotated[list[str] | None, typer.Option(help="Keep these content areas.")] = None,
    seed: SeedOption = 1,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
) -> None:
    """A MalAlgoQA-format question set built from the mal-rule library (questions.csv)."""
    from ..malalgo.pipeline import generate_run

    path = out_dir(out, "malalgo generate", overwrite)
    res = generate_run(path, n=n, seed=seed, grades=grade, contents=content)
    say(f"{res['n_questions']} questions from {res['malrules_used']} mal-rules")
    done(path)


@app.command()
def run(
    questions: Annotated[Path, typer.Argument(help="MalAlgoQA-format questions (CSV/JSONL).")],
    model: ModelOption = None,
    prompt: Annotated[
        str,
        typer.Option(
            help="simple (the JSON answer) | cot (free-text step-by-step reasoning, then the "
            "JSON answer; the paper's Table 5)"
        ),
    ] = "simple",
    shots: Annotated[
        int,
        typer.Option(
            help="Few-shot examples from other questions (with cot, each shows worked reasoning)."
        ),
    ] = 0,
    rationale_order: Annotated[
        str,
        typer.Option(
            help="shuffle (seeded; a deviation from the paper, so the key's position carries no "
            "signal) | original (the release's order, as in the paper)"
        ),
    ] = "shuffle",
    scoring: Annotated[
        str,
        typer.Option(
            help="generate (parse the JSON answer) | logprob (compare the letters' probabilities)"
        ),
    ] = "generate",
    mcq: Annotated[bool, typer.Option("--mcq/--no-mcq", help="Also ask the questions.")] = True,
    limit: Annotated[int | None, typer.Option(help="Only the first N questions.")] = None,
    base_url: BaseUrlOption = None,
    endpoints: EndpointsOption = None,
    api_key_env: ApiKeyEnvOption = "OPENAI_API_KEY",
    max_connections: MaxConnectionsOption = 8,
    timeout: TimeoutOption = 60.0,
    no_cache: NoCacheOption = False,
    max_failures: MaxFailuresOption = "5%",
    seed: SeedOption = 1,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
) -> None:
    """Ask a model to identify the rationale behind every choice; MCQ accuracy, AIA, MIA."""
    from ..io import InputError
    from ..malalgo.pipeline import run_malalgo
    from ..models import default_model_spec

    limit_failures = parse_max_failures(max_failures)
    for name, value, allowed in (
        ("--prompt", prompt, ("simple", "cot")),
        ("--scoring", scoring, ("generate", "logprob")),
        ("--rationale-order", rationale_order, ("shuffle", "original")),
    ):
        if value not in allowed:
            raise InputError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    spec = model or default_model_spec()
    path = out_dir(out, "malalgo run", overwrite)

    def opener(log_path):
        return open_model(
            spec,
            base_url=base_url,
            endpoints=endpoints,
            api_key_env=api_key_env,
            max_connections=max_connections,
            timeout=timeout,
            no_cache=no_cache,
            log_path=log_path,
        )

    res = run_malalgo(
        path,
        questions,
        open_model=opener,
        model_name=spec,
        prompt=prompt,
        shots=shots,
        rationale_order=rationale_order,
        scoring=scoring,
        mcq=mcq,
        seed=seed,
        limit=limit,
        max_failures=limit_failures,
        log=say,
    )
    say(
        f"MCQ {res['mcq']['accuracy']:.3f}  AIA {res['aia']['accuracy']:.3f}  "
        f"MIA {res['mia']['accuracy']:.3f}  unparseable {res['n_unparseable']}  "
        f"failed {res['n_failed']}"
    )
    done(path)


@app.command()
def score(
    responses: Annotated[Path, typer.Argument(help="responses.csv of a malalgo run.")],
    out: OutOption = None,
    overwrite: OverwriteOption = False,
) -> None:
    """Recompute MCQ accuracy, AIA, MIA and the breakdowns from a run's responses.csv."""
    from ..malalgo.pipeline import score_run

    path = out_dir(out, "malalgo score", overwrite)
    res = score_run(path, responses)
    say(
        f"MCQ {res['mcq']['accuracy']:.3f}  AIA {res['aia']['accuracy']:.3f}  "
        f"MIA {res['mia']['accuracy']:.3f}"
    )
    done(path)


@app.command()
def audit(
    questions: Annotated[Path, typer.Argument(help="MalAlgoQA-format questions (CSV/JSONL).")],
    folds: Annotated[int, typer.Option(help="Cross-validation folds (whole questions).")] = 5,
    seed: SeedOption = 1,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
) -> None:
    """Can a words-only classifier pick the key's rationale (chance 1 in 4)?

    A bag-of-words logistic regression sees the four rationales of each question (never the
    question or the choices), is trained on the other folds' questions, and picks the rationale
    it scores highest.  Accuracy above chance means the wording gives the key away.  Writes
    results.json (accuracy, Wilson 95% CI, chance's upper limit, p-value), picks.csv,
    weights.csv (the most telling words) and report.html."""
    from ..malalgo.pipeline import audit_run

    path = out_dir(out, "malalgo audit", overwrite)
    res = audit_run(path, questions, folds=folds, seed=seed)
    say(
        f"key picked in {res['n_correct']} of {res['n_questions']} questions: accuracy "
        f"{res['accuracy']:.3f} [{res['ci_low']:.3f}, {res['ci_high']:.3f}], chance 0.25 "
        f"(upper limit {res['chance_high']:.3f}); "
        + ("cue detected" if res["cue_detected"] else "no cue detected")
    )
    done(path)
