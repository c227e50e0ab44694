"""``edueval qgsms``: judge question pairs with QG-SMS and its baselines; score the judgements."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

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
from .ranges import COUNT_MAX
from .several import ModelsOption, model_paths, run_models

app = typer_app("Question evaluation with simulated students (QG-SMS) and its baselines.")


def _line(res: dict) -> str:
    parts = []
    for m, dims in res["accuracy"].items():
        a = dims.get("all", {})
        parts.append(f"{m} AA {a.get('AA', float('nan')):.3f} CA {a.get('CA', float('nan')):.3f}")
    return "; ".join(parts)


PairsArg = Annotated[Path, typer.Argument(dir_okay=False, help="pairs.csv from `items pairs`.")]
ItemsArg = Annotated[
    Path,
    typer.Argument(
        dir_okay=False,
        help="items.jsonl (item, text, choices, answer, material, topic, material_text).",
    ),
]  # fmt: skip
MethodOption = Annotated[
    list[str] | None,
    typer.Option(
        "--method",
        help="qg-sms, vanilla, cot, metrics, reference, swap, "
        "chateval, direct (repeatable; default vanilla and qg-sms).",
    ),
]  # fmt: skip
ProfilesOption = Annotated[
    int,
    typer.Option(
        help="QG-SMS Step 1: at least this many student profiles (>= 10).", min=10, max=200
    ),
]  # fmt: skip
MaxProfilesOption = Annotated[
    int, typer.Option(help="Most profiles the model may write (all are used).", min=10, max=500)
]  # fmt: skip
ExplanationCharsOption = Annotated[
    int,
    typer.Option(
        help="QG-SMS Step 2: the most characters of one simulated answer's explanation.",
        min=20,
        max=4000,
    ),
]
TemperatureOption = Annotated[
    float,
    typer.Option(
        help="Sampling temperature of every call (1 = the paper's GPT-4o "
        "default, each call with its own recorded seed; 0 = greedy).",
        min=0.0,
        max=2.0,
    ),
]  # fmt: skip
SimulateOption = Annotated[
    str,
    typer.Option(
        help="QG-SMS Step 2: per-pair (the paper: one simulation, Step 3 "
        "in both orders on it) or per-order (again for each order)."
    ),
]  # fmt: skip
JudgeMaterialOption = Annotated[
    bool,
    typer.Option(
        "--judge-material/--no-judge-material",
        help="Show the learning material in QG-SMS Step 3 (the paper does not).",
    ),
]  # fmt: skip
ChatevalPersonasOption = Annotated[
    str,
    typer.Option(
        help="ChatEval panel: generated (the model writes it, as ChatEval) "
        "or fixed (three built-in experts)."
    ),
]  # fmt: skip
PersonasOption = Annotated[
    int, typer.Option(help="ChatEval experts (1-5; 1-3 when fixed).", min=1, max=5)
]
RoundsOption = Annotated[int, typer.Option(help="ChatEval discussion rounds.", min=1, max=10)]
RetriesOption = Annotated[
    int, typer.Option(min=0, max=100, help="Retries of a malformed step output (0-100).")
]
RepeatsOption = Annotated[
    int,
    typer.Option(min=1, max=100, help="Profile robustness: repeat steps 1-2 R times (1-100)."),
]
LimitOption = Annotated[
    int | None, typer.Option(min=1, max=COUNT_MAX, help="First N pairs per dimension.")
]
BtOption = Annotated[
    bool,
    typer.Option("--bt/--no-bt", help="Fit P2's Bradley-Terry model for the question ranking."),
]


@app.command()
def run(
    pairs: PairsArg,
    items: ItemsArg,
    method: MethodOption = None,
    model: ModelsOption = None,
    profiles: ProfilesOption = 10,
    max_profiles: MaxProfilesOption = 20,
    explanation_chars: ExplanationCharsOption = 400,
    temperature: TemperatureOption = 1.0,
    simulate: SimulateOption = "per-pair",
    judge_material: JudgeMaterialOption = False,
    chateval_personas: ChatevalPersonasOption = "generated",
    personas: PersonasOption = 3,
    rounds: RoundsOption = 2,
    retries: RetriesOption = 2,
    repeats: RepeatsOption = 1,
    limit: LimitOption = None,
    bt: BtOption = True,
    base_url: BaseUrlOption = None,
    endpoints: EndpointsOption = None,
    api_key_env: ApiKeyEnvOption = "OPENAI_API_KEY",
    max_connections: MaxConnectionsOption = 8,
    timeout: TimeoutOption = 120.0,
    no_cache: NoCacheOption = False,
    max_failures: MaxFailuresOption = "5%",
    seed: SeedOption = 0,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    json_out: JsonOption = False,
) -> None:
    """Judge every pair in both orders; AA, CA, binomial tests, accuracy vs alpha, cost, and a
    ranking of the questions (1 / 0.5 score, Bradley-Terry) against the true measure."""
    from ..qgsms import MethodConfig, run_qgsms

    cfg = MethodConfig(n_profiles=profiles, max_profiles=max_profiles, personas=personas,
                       rounds=rounds, temperature=temperature, simulate=simulate,
                       judge_material=judge_material, explanation_chars=explanation_chars,
                       chateval_personas=chateval_personas)  # fmt: skip
    limit_failures = parse_max_failures(max_failures)
    path, paths = model_paths(
        model, out, "qgsms run", overwrite, inputs=(),
        check=lambda spec: check_model(
            spec, base_url=base_url, api_key_env=api_key_env, endpoints=endpoints
        ),
    )  # fmt: skip

    def one_run(spec: str) -> None:
        def opener(log_path):
            return open_model(spec, base_url=base_url, endpoints=endpoints,
                              api_key_env=api_key_env, max_connections=max_connections,
                              timeout=timeout, no_cache=no_cache, log_path=log_path)  # fmt: skip

        res = run_qgsms(paths[spec], pairs, items, methods=method or ["vanilla", "qg-sms"],
                        open_model=opener, model_name=spec, cfg=cfg, retries=retries,
                        repeats=repeats, limit=limit, seed=seed, bradley_terry=bt,
                        max_failures=limit_failures, log=say)  # fmt: skip
        say((f"{spec}: " if len(paths) > 1 else "") + _line(res))

    done(run_models(paths, one_run, path), json=json_out)


@app.command()
def score(
    judgements: Annotated[
        list[Path],
        typer.Argument(dir_okay=False, help="judgements.csv of one or more runs."),
    ],
    bt: BtOption = True,
    seed: SeedOption = 0,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    json_out: JsonOption = False,
) -> None:
    """Recompute AA/CA, binomial tests, accuracy vs alpha and the question ranking (1 / 0.5
    score, Bradley-Terry, correlations with the true measure, ANOVA over DE) from judgements.csv."""
    from ..qgsms import score_run

    path = out_dir(out, "qgsms score", overwrite, inputs=())
    res = score_run(path, judgements, bradley_terry=bt, seed=seed)
    say(_line(res))
    done(path, json=json_out)
