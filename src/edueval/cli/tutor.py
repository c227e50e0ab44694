"""``edueval tutor``: AI teacher replies for comparative judgement (P2's generation side)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import (
    JsonOption,
    OutOption,
    OverwriteOption,
    SeedOption,
    bundled_or_given,
    done,
    emit_results,
    out_dir,
    out_file,
    say,
    typer_app,
)
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
from .ranges import COUNT_MAX

app = typer_app("AI teacher replies: import-ncte, reply, make-study.")


@app.command("import-ncte")
def import_ncte_cmd(
    csv: Annotated[
        Path | None,
        typer.Argument(dir_okay=False, help="NCTE uptake_data.csv (Demszky et al. 2021)."),
    ] = None,
    bundled: Annotated[
        bool, typer.Option("--bundled", help="Use the copy that ships with edueval.")
    ] = False,
    out: Annotated[
        Path, typer.Option("--out", "-o", dir_okay=False, help="Dialogues JSONL to write.")
    ] = Path("ncte-dialogues.jsonl"),
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, max=COUNT_MAX, help="Only the first N rows.")
    ] = None,
) -> None:
    """Convert the NCTE uptake CSV into dialogues JSONL (student utterance -> real teacher reply)."""
    from ..tutor import import_ncte

    copy = (
        Path(__file__).resolve().parents[1] / "tutor" / "data" / "ncte-uptake" / "uptake_data.csv"
    )
    csv = bundled_or_given(csv, bundled, copy, "the NCTE uptake CSV")
    res = import_ncte(csv, out_file(out, inputs=[csv], own=b'{"id": '), limit=limit)
    say(f"{res['n_dialogues']} dialogues from {res['n_observations']} observations -> {out}")


@app.command()
def reply(
    dialogues: Annotated[
        Path,
        typer.Argument(dir_okay=False, help="Dialogues JSONL (see edueval.tutor.dialogues)."),
    ],
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    endpoints: EndpointsOption = None,
    api_key_env: ApiKeyEnvOption = "OPENAI_API_KEY",
    max_connections: MaxConnectionsOption = 8,
    timeout: TimeoutOption = 60.0,
    no_cache: NoCacheOption = False,
    max_failures: MaxFailuresOption = "5%",
    budget: Annotated[
        int,
        typer.Option(
            "--budget",
            min=1,
            max=COUNT_MAX,
            help="Context budget in words (approximate tokens: ~1.3 model tokens per word).",
        ),
    ] = 200,
    persona: Annotated[
        str | None,
        typer.Option(
            "--persona",
            help="Teacher persona (system message): 'paper' (default: the AI Teacher Test's "
            "polite, helpful, professional, on-topic, factually correct teacher), 'uptake' "
            "(build on what the student said), or your own instruction text.",
        ),
    ] = None,
    max_tokens: Annotated[
        int,
        typer.Option("--max-tokens", min=1, max=1_000_000, help="Most tokens of one reply."),
    ] = 80,
    logprobs: Annotated[
        bool, typer.Option("--logprobs/--no-logprobs", help="Ask for token log-probabilities.")
    ] = True,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, max=COUNT_MAX, help="Only the first N targets."),
    ] = None,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    seed: SeedOption = 0,
    json_out: JsonOption = False,
) -> None:
    """Reply as the teacher to each student turn; unigram F1 vs the real reply, AI perplexity."""
    from ..models import default_model_spec
    from ..tutor import reply_run

    path = out_dir(out, "tutor reply", overwrite, inputs=())
    name = model or default_model_spec()
    res = reply_run(
        path,
        dialogues,
        open_model=lambda log_path: open_model(
            model,
            base_url=base_url,
            endpoints=endpoints,
            api_key_env=api_key_env,
            max_connections=max_connections,
            timeout=timeout,
            no_cache=no_cache,
            log_path=log_path,
        ),  # fmt: skip
        model_name=name,
        budget=budget,
        persona=persona,
        max_tokens=max_tokens,
        logprobs=logprobs,
        limit=limit,
        seed=seed,
        max_failures=parse_max_failures(max_failures),
        log=say,
    )
    f1 = res["mean_f1"]
    say(
        f"{res['n_ok']}/{res['n_targets']} replies ({res['n_failed']} failed, {res['n_empty']} "
        f"empty, {res['n_degenerate']} degenerate); mean unigram F1 {f1:.3f}"
        if f1 is not None
        else "no usable reply"
    )
    done(path, json=json_out)


@app.command("make-study")
def make_study_cmd(
    replies: Annotated[
        list[Path],
        typer.Argument(dir_okay=False, help="replies.csv of one or more tutor runs."),
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", file_okay=False, help="Study folder to write.")
    ] = Path("study"),
    items_per_participant: Annotated[
        int, typer.Option("--items-per-participant", min=1, max=COUNT_MAX)
    ] = 10,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, max=COUNT_MAX, help="At most N items.")
    ] = None,
    title: Annotated[str, typer.Option("--title")] = "Which reply is better?",
    keep_degenerate: Annotated[
        bool,
        typer.Option("--keep-degenerate", help="Also use replies flagged degenerate (looping)."),
    ] = False,
    select: Annotated[
        str,
        typer.Option(
            "--select",
            help="Which teacher turns become items: 'eliciting' (default: the real reply asks "
            "or prompts the student, see edueval.tutor.selection) or 'all'.",
        ),
    ] = "eliciting",
    select_column: Annotated[
        str | None,
        typer.Option(
            "--select-column",
            help="Your own selection instead of the heuristic: a column of the replies tables "
            "(or a dialogue meta key) holding 1/0, true/false or yes/no.",
        ),
    ] = None,
    min_words: Annotated[
        int,
        typer.Option(
            "--min-words",
            min=1,
            max=COUNT_MAX,
            help="Leave out real teacher replies with fewer words (after ParlAI's normalisation).",
        ),
    ] = 2,
    context_tokens: Annotated[
        int,
        typer.Option(
            "--context-tokens",
            min=1,
            max=COUNT_MAX,
            help="Raters see the most recent whole turns within this many tokens (the paper: 100).",
        ),
    ] = 100,
    seed: SeedOption = 0,
    json_out: JsonOption = False,
) -> None:
    """A comparative-judgement study (study.yaml + items.jsonl) from real + AI replies."""
    from ..tutor import make_study

    path = out_dir(out, "tutor make-study", inputs=())
    res = make_study(path, replies, items_per_participant=items_per_participant,
                     limit=limit, seed=seed, title=title, keep_degenerate=keep_degenerate,
                     select=select, select_column=select_column, min_words=min_words,
                     context_tokens=context_tokens)  # fmt: skip
    excluded = ", ".join(f"{n} {reason}" for reason, n in res["excluded"].items() if n)
    say(f"{res['n_turns']} teacher turns: {res['n_selected']} selected"
        + (f", left out: {excluded}" if excluded else ""))  # fmt: skip
    if res["excluded"]["degenerate_reply"]:
        say("degenerate (looping) replies left out; --keep-degenerate keeps them")
    say(f"{res['n_items']} items, agents {', '.join(res['agents'])}"
        f" -> {out / 'study.yaml'} (run: edueval study serve {out / 'study.yaml'})")  # fmt: skip
    emit_results(out, json_out)
