"""``edueval pairwise``: comparative judgement with Bayesian Bradley-Terry (P2)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..defaults import MIN_COMPARISONS, RATER_TIES, SEED
from .common import (
    ClusterOption,
    JsonOption,
    OutOption,
    OverwriteOption,
    SchedulerOption,
    SeedOption,
    bundled_or_given,
    done,
    out_dir,
    say,
    typer_app,
    warn,
)
from .ranges import COUNT_MAX, check_memory

app = typer_app(
    "Comparative judgement: Bayesian Bradley-Terry fits, rater checks, across-item "
    "analysis, and the AI Teacher Test replication."
)

DataArg = Annotated[
    Path,
    typer.Argument(
        dir_okay=False,
        help="Comparisons file (CSV, TSV, JSONL or JSON): item, attribute, rater, first, second, "
        "outcome (first|second|tie).",
    ),
]
Ties = Annotated[
    str,
    typer.Option(
        "--ties",
        help="random: a seeded coin flip per tie (the paper); drop; half: half a win each "
        "(weighted likelihood).",
    ),
]
#: Most NUTS chains: each is a vectorised copy of the model on this machine's cores.
CHAINS_MAX = 1024
Chains = Annotated[int, typer.Option(min=1, max=CHAINS_MAX, help="NUTS chains (1-1024).")]
Warmup = Annotated[int, typer.Option(min=1, max=COUNT_MAX, help="Warm-up iterations per chain.")]
Draws = Annotated[int, typer.Option(min=1, max=COUNT_MAX, help="Draws kept per chain.")]
#: Bytes per kept draw of one parameter (float64) and the fewest parameters of a fit (an item's
#: ability, its opponent's and the order effect); a fit holds chains x draws x parameters.
DRAW_BYTES = 8
MIN_PARAMETERS = 3


def _check_draws(chains: int, draws: int) -> None:
    nbytes = chains * draws * DRAW_BYTES * MIN_PARAMETERS
    check_memory(nbytes, ("--draws", draws), ("--chains", chains))


Exclude = Annotated[
    Path | None,
    typer.Option(
        "--exclude-raters",
        dir_okay=False,
        help="Raters to leave out: YAML list or mapping (like outliers.yaml), or one id per line.",
    ),
]
AgentOrder = Annotated[
    str | None,
    typer.Option(
        "--agent-order",
        help="Comma-separated agents, to order pairwise differences (e.g. 'Teacher,blender_9B').",
    ),
]


def _order(value: str | None) -> list[str] | None:
    return [a.strip() for a in value.split(",") if a.strip()] if value else None


@app.command("import-teacher-test")
def import_teacher_test(
    items: Annotated[
        Path | None,
        typer.Argument(dir_okay=False, help="items.jsonl of the AI Teacher Test data."),
    ] = None,
    bundled: Annotated[
        bool, typer.Option("--bundled", help="Use the copy that ships with edueval.")
    ] = False,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    json_out: JsonOption = False,
) -> None:
    """Convert the public AI Teacher Test items.jsonl into comparisons.csv."""
    from ..pairwise.pipeline import import_run
    from ..pairwise.teacher_test import bundled_folder

    items = bundled_or_given(items, bundled, bundled_folder() / "items.jsonl", "items.jsonl")
    path = out_dir(out, "pairwise import-teacher-test", overwrite, inputs=[items])
    res = import_run(path, items)
    if bundled:  # the authors' excluded raters, beside the comparisons, for --exclude-raters
        from ..runs import atomic_write

        atomic_write(path / "outliers.yaml", (bundled_folder() / "outliers.yaml").read_bytes())
        say(f"the authors' excluded raters: {path / 'outliers.yaml'}")
    say(
        f"{res['n_comparisons']} comparisons ({res['n_ties']} ties), {res['n_items']} items, "
        f"{res['n_raters']} raters -> {path / 'comparisons.csv'}"
    )
    done(path, json=json_out)


@app.command()
def fit(
    data: DataArg,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    ties: Ties = "random",
    exclude_raters: Exclude = None,
    chains: Chains = 4,
    warmup: Warmup = 1000,
    draws: Draws = 1000,
    min_comparisons: Annotated[
        int,
        typer.Option(
            min=1,
            max=COUNT_MAX,
            help="Item x attribute groups with fewer comparisons (after tie handling) are not "
            "fitted, with a warning.",
        ),
    ] = MIN_COMPARISONS,
    seed: SeedOption = SEED,
    groups_per_task: Annotated[
        int,
        typer.Option(
            "--groups-per-task",
            min=0,
            max=COUNT_MAX,
            help="Sample the item x attribute groups in blocks of this many (each block its own "
            "NUTS run and task, seeded from --seed; 0: all groups in one run).",
        ),
    ] = 0,
    cluster: ClusterOption = None,
    scheduler: SchedulerOption = None,
    save_draws: Annotated[
        bool,
        typer.Option(
            "--save-draws",
            help="Also write the posterior draws (alpha, alpha0, sample stats) as posterior.nc "
            "(ArviZ InferenceData, NetCDF) in the run folder.",
        ),
    ] = False,
    method: Annotated[
        str,
        typer.Option(
            "--method",
            help="nuts: Bayesian, sampled (default); ml: maximum likelihood by Newton-Raphson "
            "with standard errors, in seconds (sum-to-zero abilities per group).",
        ),
    ] = "nuts",
    ridge: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=1e6,
            help="--method ml: penalty ridge/2 * sum of squares (MAP under N(0, 1/ridge)); 0 = "
            "plain ML; 1 = the posterior mode of the Bayesian model; choix's alpha = ridge/2.",
        ),
    ] = 0.0,
    order_effect: Annotated[
        bool,
        typer.Option(
            "--order-effect/--no-order-effect",
            help="--method ml: estimate the order effect alpha0 (on), or fix it at 0 (as choix).",
        ),
    ] = True,
    split_half_repeats: Annotated[
        int,
        typer.Option(
            "--split-half-repeats",
            min=1,
            max=10_000,
            help="Random splits of the raters into halves for the split-half reliability.",
        ),
    ] = 20,
    json_out: JsonOption = False,
) -> None:
    """Bradley-Terry with order effect per (item, attribute): Bayesian (NUTS, all groups sampled
    together) or maximum likelihood (--method ml); with reliability (SSR, split-half across
    raters) and infit/outfit per rater and per agent."""
    from ..executor import open_executor
    from ..pairwise.pipeline import POSTERIOR_FILE, fit_run

    _check_draws(chains, draws)
    draws_file = [POSTERIOR_FILE] if save_draws else []
    path = out_dir(out, "pairwise fit", overwrite, inputs=(), files=draws_file)
    with open_executor(cluster, scheduler) as executor:
        res = fit_run(
            path,
            data,
            ties=ties,
            exclude_path=exclude_raters,
            chains=chains,
            warmup=warmup,
            draws=draws,
            seed=seed,
            min_comparisons=min_comparisons,
            warn=warn,
            groups_per_task=groups_per_task,
            executor=executor,
            save_draws=save_draws,
            method=method,
            ridge=ridge,
            order_effect=order_effect,
            split_half_repeats=split_half_repeats,
        )
    rel = _reliability_line(res)
    if res["method"] == "ml":
        say(
            f"{res['n_groups']} item x attribute models from {res['n_comparisons']} comparisons "
            f"by {res['method'].upper()} in {res['fit_seconds']:.2f} s; {rel}"
        )
    else:
        say(
            f"{res['n_groups']} item x attribute models from {res['n_comparisons']} comparisons "
            f"in {res['sampling_seconds']:.1f} s; max R-hat {res['max_rhat']:.4f}, min ESS bulk "
            f"{res['min_ess_bulk']:.0f}, tail {res['min_ess_tail']:.0f}; {rel}"
            + (f"; draws in {path / res['posterior']}" if res.get("posterior") else "")
        )
    done(path, json=json_out)


def _reliability_line(res: dict) -> str:
    def fmt(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.3f}"

    return (
        f"median SSR {fmt(res['ssr_median'])}, split-half {fmt(res['split_half_median'])}; "
        f"{res['n_raters_misfit']} of {res['n_raters']} raters misfitting (infit t > 2)"
    )


@app.command()
def raters(
    data: DataArg,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    per: Annotated[
        str,
        typer.Option(help="attribute: one model per rater x attribute; rater: one per rater."),
    ] = "attribute",
    ties: Annotated[
        str,
        typer.Option(
            "--ties",
            help="Tie handling (default drop: a tie says nothing about a position preference).",
        ),
    ] = RATER_TIES,
    compare: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False, help="A reference list of raters (e.g. the authors' outliers.yaml)."
        ),
    ] = None,
    chains: Chains = 4,
    warmup: Warmup = 1000,
    draws: Draws = 1000,
    seed: SeedOption = SEED,
    json_out: JsonOption = False,
) -> None:
    """Per-rater order effect alpha0; flag raters whose 95% HDI excludes 0."""
    from ..pairwise.pipeline import raters_run

    _check_draws(chains, draws)
    path = out_dir(out, "pairwise raters", overwrite, inputs=())
    res = raters_run(
        path,
        data,
        per=per,
        ties=ties,
        compare_path=compare,
        chains=chains,
        warmup=warmup,
        draws=draws,
        seed=seed,
        warn=warn,
    )
    msg = (
        f"{res['n_flagged']} of {res['n_raters']} raters flagged for an order effect; "
        f"{res['n_misfit']} misfitting (infit t > 2)"
    )
    if "overlap" in res:
        ov = res["overlap"]
        msg += f"; {ov['n_both']} of the {ov['n_reference']} reference raters among them"
    say(msg)
    done(path, json=json_out)


@app.command()
def summarize(
    abilities: Annotated[
        Path, typer.Argument(help="abilities.csv of 'pairwise fit' (or its run directory).")
    ],
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    scores: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False,
            help="Per-reply scores to correlate with alpha: item, agent[, attribute], and the "
            "--score-column.",
        ),
    ] = None,
    score_column: Annotated[str, typer.Option(help="Column of --scores to use.")] = "score",
    agent_order: AgentOrder = None,
    json_out: JsonOption = False,
) -> None:
    """Per attribute: ANOVA and Tukey HSD across agents, Table 3, optional correlation."""
    from ..pairwise.pipeline import summarize_run

    path = out_dir(out, "pairwise summarize", overwrite, inputs=())
    res = summarize_run(
        path,
        abilities,
        scores_path=scores,
        score_column=score_column,
        agent_order=_order(agent_order),
    )
    for _, r in res["anova"].iterrows():
        say(
            f"{r['attribute']}: F({int(r['df_between'])}, {int(r['df_within'])}) = "
            f"{r['F']:.2f}, p = {r['p']:.3g}"
        )
    done(path, json=json_out)


@app.command()
def hierarchical(
    data: DataArg,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    ties: Ties = "random",
    exclude_raters: Exclude = None,
    agent_order: AgentOrder = None,
    chains: Chains = 4,
    warmup: Warmup = 1000,
    draws: Draws = 1000,
    seed: SeedOption = SEED,
    json_out: JsonOption = False,
) -> None:
    """Pooled model (agent means + item deviations): agent differences with credible intervals."""
    from ..pairwise.pipeline import hierarchical_run

    _check_draws(chains, draws)
    path = out_dir(out, "pairwise hierarchical", overwrite, inputs=())
    res = hierarchical_run(
        path,
        data,
        ties=ties,
        exclude_path=exclude_raters,
        agent_order=_order(agent_order),
        chains=chains,
        warmup=warmup,
        draws=draws,
        seed=seed,
        warn=warn,
    )
    for _, r in res["differences"].iterrows():
        say(
            f"{r['attribute']}: {r['agent_a']} - {r['agent_b']} = {r['diff_mean']:+.3f} "
            f"[{r['diff_hdi_low']:+.3f}, {r['diff_hdi_high']:+.3f}]"
        )
    done(path, json=json_out)


@app.command()
def simulate(
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    pairing: Annotated[
        list[str] | None,
        typer.Option(
            "--pairing",
            help="random, adaptive (two panels of judges, each pairing from its own estimates) "
            "or adaptive-shared (one adaptive stream, as adaptive CJ services run it); repeat to "
            "compare (default: random and adaptive).",
        ),
    ] = None,
    objects: Annotated[int, typer.Option(min=3, max=100_000, help="Objects (scripts).")] = 30,
    judges: Annotated[int, typer.Option(min=2, max=100_000, help="Judges.")] = 20,
    judgements: Annotated[
        int, typer.Option(min=1, max=10_000_000, help="Judgements in all (the last budget).")
    ] = 1200,
    budgets: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated budgets of judgements to report (rounded up to whole rounds "
            "of objects/2 judgements; default: 8 steps up to --judgements)."
        ),
    ] = None,
    spread: Annotated[
        float,
        typer.Option(
            min=0.0, max=20.0, help="S.d. of the true qualities in logits (0: coin flips)."
        ),
    ] = 1.5,
    misfitting: Annotated[
        int, typer.Option(min=0, max=100_000, help="Judges answering at random.")
    ] = 0,
    replications: Annotated[
        int, typer.Option(min=1, max=100_000, help="Simulated studies per policy.")
    ] = 20,
    random_rounds: Annotated[
        int,
        typer.Option(
            min=0, max=10_000, help="Adaptive: random rounds before pairing from estimates."
        ),
    ] = 2,
    ridge: Annotated[
        float,
        typer.Option(min=1e-9, max=1e6, help="Penalty of the ML fits (MAP under N(0, 1/ridge))."),
    ] = 0.1,
    split_half_repeats: Annotated[int, typer.Option("--split-half-repeats", min=1, max=10_000)] = 5,
    target: Annotated[
        float, typer.Option(min=0.01, max=0.99, help="True reliability to reach.")
    ] = 0.8,
    seed: SeedOption = 1,
    cluster: ClusterOption = None,
    scheduler: SchedulerOption = None,
    json_out: JsonOption = False,
) -> None:
    """Simulate comparative-judgement studies: true reliability, SSR and split-half per budget
    and pairing policy, and the judgements each policy needs to reach a true reliability."""
    from ..executor import open_executor
    from ..io import InputError
    from ..pairwise.pipeline import simulate_run
    from ..pairwise.simulation import SimulationConfig

    try:
        budget_list = tuple(int(b) for b in budgets.split(",") if b.strip()) if budgets else ()
    except ValueError:
        raise InputError(
            f"--budgets: expected comma-separated whole numbers; got {budgets!r}"
        ) from None
    cfg = SimulationConfig(
        n_objects=objects,
        n_judges=judges,
        judgements=judgements,
        spread=spread,
        n_misfitting=misfitting,
        pairings=tuple(pairing) if pairing else ("random", "adaptive"),
        budgets=budget_list,
        replications=replications,
        random_rounds=random_rounds,
        ridge=ridge,
        split_half_repeats=split_half_repeats,
        target=target,
        seed=seed,
    )
    path = out_dir(out, "pairwise simulate", overwrite, inputs=())
    with open_executor(cluster, scheduler) as executor:
        res = simulate_run(path, cfg, executor=executor)
    for p, v in res["judgements_to_target"].items():
        say(f"{p}: " + ("does not reach" if v is None else f"{v:.0f} judgements to") +
            f" a true reliability of {target}")  # fmt: skip
    if res["adaptive_saving"] is not None:
        say(f"adaptive pairing saves {100 * res['adaptive_saving']:.1f}% of the judgements")
    done(path, json=json_out)


@app.command("replicate-teacher-test")
def replicate_teacher_test(
    folder: Annotated[
        Path | None,
        typer.Argument(
            file_okay=False,
            help="Folder with items.jsonl and outliers.yaml (default: the copy bundled with "
            "edueval).",
        ),
    ] = None,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    chains: Chains = 4,
    warmup: Warmup = 1000,
    draws: Draws = 1000,
    seed: SeedOption = SEED,
    json_out: JsonOption = False,
) -> None:
    """Replicate Tack & Piech (EDM 2022) on the public data, beside the published numbers."""
    from ..pairwise.replication import ReplicationConfig, replicate_run

    _check_draws(chains, draws)
    path = out_dir(out, "pairwise replicate-teacher-test", overwrite, inputs=())
    cfg = ReplicationConfig(chains=chains, warmup=warmup, draws=draws, seed=seed)
    res = replicate_run(path, folder, cfg, log=say)
    for mode, d in res["differences"].items():
        tb = " / ".join(f"{v:.2f}" for v in d["Teacher - Blender"].values())
        tg = " / ".join(f"{v:.2f}" for v in d["Teacher - GPT-3"].values())
        say(
            f"ties {mode}: Teacher - Blender {tb} (paper 0.60 / 0.55 / 0.75); "
            f"Teacher - GPT-3 {tg} (paper 0.67 / 0.67 / 0.93)"
        )
    if res["max_rhat"] > 1.01:
        warn(f"max R-hat {res['max_rhat']:.3f} > 1.01; run more draws")
    done(path, json=json_out)
