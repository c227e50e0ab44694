"""``edueval models``: check a model backend; shared ``--model`` options for other command groups.

Other command groups that call a model reuse the option types below and :func:`open_model`::

    from .models import ApiKeyEnvOption, BaseUrlOption, MaxConnectionsOption, ModelOption, \
        NoCacheOption, TimeoutOption, open_model

    def run(..., model: ModelOption = None, base_url: BaseUrlOption = None,
            api_key_env: ApiKeyEnvOption = "OPENAI_API_KEY",
            max_connections: MaxConnectionsOption = 8, timeout: TimeoutOption = 60.0,
            no_cache: NoCacheOption = False, out: OutOption = None):
        with open_model(model, base_url=base_url, api_key_env=api_key_env,
                        max_connections=max_connections, timeout=timeout, no_cache=no_cache,
                        log_path=path / "calls.jsonl") as client:
            ...
            say(client.stats().summary())

A :class:`~edueval.models.ModelError` (wrong key, unreachable server, unknown model) propagates to
``edueval.cli.main``, which prints it as one line and exits with code 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import typer_app
from .ranges import CONNECTIONS_MAX, TIMEOUT_MAX

app = typer_app("Model backends: check that one answers.")

ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        help="'local' (embedded SmolLM2, offline; the default, or $EDUEVAL_MODEL) or "
        "'openai/<model>' (any OpenAI-compatible server).",
    ),
]
BaseUrlOption = Annotated[
    list[str] | None,
    typer.Option(
        "--base-url",
        help="Server base URL for openai/<model>, e.g. http://localhost:8000/v1. Repeat it (or "
        "separate with commas) to spread calls over several replicas, --max-connections each.",
    ),
]
EndpointsOption = Annotated[
    Path | None,
    typer.Option(
        "--endpoints",
        metavar="FILE",
        dir_okay=False,
        help="YAML list of servers for openai/MODEL (or a mapping with cache_id and endpoints), each with url and "
        "optionally model, key_env and max_connections; calls go to the one with the most free connections, one that keeps failing is "
        "set aside. Pooled with any --base-url.",
    ),
]
ApiKeyEnvOption = Annotated[
    str, typer.Option("--api-key-env", help="Environment variable holding the API key.")
]
MaxConnectionsOption = Annotated[
    int,
    typer.Option(
        "--max-connections",
        min=1,
        max=CONNECTIONS_MAX,
        help="Model calls in flight at once (per server when several).",
    ),
]
TimeoutOption = Annotated[
    float,
    typer.Option(
        "--timeout",
        min=0.001,
        max=TIMEOUT_MAX,
        help="Seconds allowed per model call attempt (at most a day).",
    ),
]
MaxFailuresOption = Annotated[
    str,
    typer.Option(
        "--max-failures",
        metavar="N|P%",
        help="Failed model calls (after retries) plus unparseable answers allowed before the run "
        "is marked failed and exits 3: a count (3) or a share of the run's calls (5%).",
    ),
]


def parse_max_failures(text: str):
    """The --max-failures value (imported on use: the command line starts faster)."""
    from ..models.budget import MaxFailures

    return MaxFailures.parse(text)


NoCacheOption = Annotated[
    bool, typer.Option("--no-cache", help="Neither read nor write the model response cache.")
]
CacheDirOption = Annotated[
    Path | None,
    typer.Option("--cache-dir", file_okay=False, help="Response cache folder (default "
                 "$EDUEVAL_CACHE_DIR or ~/.cache/edueval)."),
]  # fmt: skip


def open_model(
    model: str | None,
    *,
    base_url: list[str] | str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    max_connections: int = 8,
    timeout: float = 60.0,
    no_cache: bool = False,
    cache_dir: Path | None = None,
    log_path: Path | None = None,
    max_attempts: int = 6,
    endpoints: Path | None = None,
):  # -> ModelClient (import kept lazy so that `edueval --help` stays fast)
    """:func:`edueval.models.get_model` from the shared command-line options."""
    from ..models import get_model

    return get_model(
        model,
        base_url=base_url or None,
        api_key_env=api_key_env,
        max_connections=max_connections,
        timeout=timeout,
        no_cache=no_cache,
        cache_dir=cache_dir,
        log_path=log_path,
        max_attempts=max_attempts,
        endpoints=endpoints,
    )


def check_model(
    model: str,
    *,
    base_url: list[str] | str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    endpoints: Path | None = None,
) -> None:
    """Refuse (one line, exit 2) a model spec or server option that cannot work -- an unknown
    spec, a missing model file or package, no API key, a bad endpoints file -- before any folder
    is made or any model is called: builds the backend (no request, no weights loaded) and
    drops it."""
    from ..models.registry import make_backend

    make_backend(model, base_url=base_url or None, api_key_env=api_key_env, endpoints=endpoints)


@app.command()
def check(
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    endpoints: EndpointsOption = None,
    api_key_env: ApiKeyEnvOption = "OPENAI_API_KEY",
    timeout: TimeoutOption = 30.0,
    attempts: Annotated[
        int, typer.Option("--attempts", min=1, max=100, help="Attempts before giving up.")
    ] = 2,
) -> None:
    """Say in one line whether a backend answers (exit 0) or why not (exit 2)."""
    with open_model(
        model,
        base_url=base_url,
        endpoints=endpoints,
        api_key_env=api_key_env,
        timeout=timeout,
        no_cache=True,
        max_attempts=attempts,
    ) as client:
        typer.echo(client.check())
