"""``edueval malalgo``: malgorithm identification (P3)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..defaults import SEED
from .common import (
    JsonOption,
    OutOption,
    OverwriteOption,
    SeedOption,
    done,
    out_dir,
    say,
    typer_app,
)
from .models import (
    ApiKeyEnvOption,
    BaseUrlOption,
    EndpointsOption,
    MaxConnectionsOption,
    MaxFailuresOption,
    NoCacheOption,
    TimeoutOption,
    check_model,
    open_model,
    parse_max_failures,
)
from .ranges import COUNT_MAX, check_memory
from .several import ModelsOption, model_paths, run_models

app = typer_app("Malgorithm identification (MalAlgoQA): generate, run, score, audit.")

QuestionsArg = Annotated[
    Path, typer.Argument(dir_okay=False, help="MalAlgoQA-format questions (CSV/JSONL).")
]


#: Bytes per generated question in memory (its text, choices, rationales and table row).
QUESTION_BYTES = 4000


@app.command()
def generate(
    n: Annotated[int, typer.Option("--n", min=1, max=COUNT_MAX, help="Number of questions.")] = 20,
    grade: Annotated[
        list[int] | None,
        typer.Option(min=0, max=12, help="Keep these grades, 0-12 (repeatable)."),
    ] = None,
    content: Annotated[list[str] | None, typer.Option(help="Keep these content areas.")] = None,
    adversarial: Annotated[
        bool,
        typer.Option(
            "--adversarial/--plain",
            help="Draw the key at target value/similarity ranks and filter the items that "
            "cross-validated models solve from per-choice features (AFLite); slower.",
        ),
    ] = False,
    hub: Annotated[
        bool,
        typer.Option(
            "--hub",
            help="Build each item around a hub drawn among its four options (one- and two-flaw "
            "malgorithms), so the key is the option the others resemble a quarter of the time; "
            "only the families whose procedures are written as steps.",
        ),
    ] = False,
    variants: Annotated[
        bool,
        typer.Option(
            "--variants",
            help="Make each item's four options the answers of four question variants over the "
            "same numbers, each correct for one variant and a classic error for the others, so "
            "only the question decides the key; only the families written as variants.",
        ),
    ] = False,
    seed: SeedOption = SEED,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    json_out: JsonOption = False,
) -> None:
    """A MalAlgoQA-format question set built from the mal-rule library (questions.csv)."""
    from ..io import InputError
    from ..malalgo.pipeline import generate_run

    if hub + adversarial + variants > 1:
        raise InputError("--hub, --adversarial and --variants are ways of drawing items; give one")
    check_memory(n * QUESTION_BYTES, ("--n", n))
    path = out_dir(out, "malalgo generate", overwrite, inputs=())
    res = generate_run(
        path, n=n, seed=seed, grades=grade, contents=content,
        adversarial="hub" if hub else "variants" if variants else adversarial,
    )  # fmt: skip
    say(f"{res['n_questions']} questions from {res['malrules_used']} mal-rules")
    if not variants:
        say("note: a classifier trained on per-option features finds the key of most of these "
            "items without the mathematics (edueval malalgo audit measures it); --variants draws "
            "items it cannot")  # fmt: skip
    done(path, json=json_out)


@app.command()
def run(
    questions: QuestionsArg,
    model: ModelsOption = None,
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
            min=0,
            max=COUNT_MAX,
            help="Few-shot examples from other questions, never of the same template family "
            "(with cot, each shows worked reasoning).",
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
    limit: Annotated[
        int | None, typer.Option(min=1, max=COUNT_MAX, help="Only the first N questions.")
    ] = None,
    base_url: BaseUrlOption = None,
    endpoints: EndpointsOption = None,
    api_key_env: ApiKeyEnvOption = "OPENAI_API_KEY",
    max_connections: MaxConnectionsOption = 8,
    timeout: TimeoutOption = 60.0,
    no_cache: NoCacheOption = False,
    max_failures: MaxFailuresOption = "5%",
    seed: SeedOption = SEED,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    json_out: JsonOption = False,
) -> None:
    """Ask a model to identify the rationale behind every choice; MCQ accuracy, AIA, MIA."""
    from ..io import InputError
    from ..malalgo.pipeline import run_malalgo

    limit_failures = parse_max_failures(max_failures)
    for name, value, allowed in (
        ("--prompt", prompt, ("simple", "cot")),
        ("--scoring", scoring, ("generate", "logprob")),
        ("--rationale-order", rationale_order, ("shuffle", "original")),
    ):
        if value not in allowed:
            raise InputError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    path, paths = model_paths(
        model, out, "malalgo run", overwrite, inputs=(),
        check=lambda spec: check_model(
            spec, base_url=base_url, api_key_env=api_key_env, endpoints=endpoints
        ),
    )  # fmt: skip
    several = len(paths) > 1

    def one_run(spec: str) -> None:
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
            paths[spec],
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
            (f"{spec}: " if several else "")
            + f"MCQ {res['mcq']['accuracy']:.3f}  AIA {res['aia']['accuracy']:.3f}  "
            f"MIA {res['mia']['accuracy']:.3f}  unparseable {res['n_unparseable']}  "
            f"failed {res['n_failed']}"
        )

    done(run_models(paths, one_run, path), json=json_out)


@app.command()
def score(
    responses: Annotated[
        Path, typer.Argument(dir_okay=False, help="responses.csv of a malalgo run.")
    ],
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    json_out: JsonOption = False,
) -> None:
    """Recompute MCQ accuracy, AIA, MIA and the breakdowns from a run's responses.csv."""
    from ..malalgo.pipeline import score_run

    path = out_dir(out, "malalgo score", overwrite, inputs=())
    res = score_run(path, responses)
    say(
        f"MCQ {res['mcq']['accuracy']:.3f}  AIA {res['aia']['accuracy']:.3f}  "
        f"MIA {res['mia']['accuracy']:.3f}"
    )
    done(path, json=json_out)


@app.command()
def audit(
    questions: QuestionsArg,
    folds: Annotated[
        int,
        typer.Option(min=2, max=COUNT_MAX, help="Cross-validation folds (whole questions, >= 2)."),
    ] = 5,
    seed: SeedOption = SEED,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    json_out: JsonOption = False,
) -> None:
    """Can a surface cue pick the key (chance 1 in 4)?

    Single cues (the longest/shortest rationale, the smallest/middle/largest value, a value
    written in the question, the longest choice text, each position, ...), cross-validated
    conditional-logit models on the choices' features, the rationales' features and both, and a
    words-only classifier on the rationales: the share of questions where each picks the key,
    with a Wilson 95% interval against chance; flagged when it differs from chance after Holm's
    correction.  Writes results.json, cues.csv, models.csv, by_family.csv (generated items),
    picks.csv, weights.csv (the most telling words) and report.html."""
    from ..malalgo.pipeline import audit_run

    path = out_dir(out, "malalgo audit", overwrite, inputs=())
    res = audit_run(path, questions, folds=folds, seed=seed)
    flagged = res["flagged"]
    say(
        f"{res['n_questions']} questions, {len(res['cues'])} single cues and "
        f"{len(res['models'])} models: "
        + (f"cue(s) found: {', '.join(flagged)}" if flagged else "no cue found")
        + f"; words-only classifier {res['accuracy']:.3f} "
        f"[{res['ci_low']:.3f}, {res['ci_high']:.3f}], chance 0.25"
    )
    done(path, json=json_out)
