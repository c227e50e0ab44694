"""``edueval kt``: Bayesian Knowledge Tracing and moment of learning (P1)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..defaults import SEED
from ..kt.data import Columns, RowFilter
from .common import (
    ClusterOption,
    JsonOption,
    OutOption,
    OverwriteOption,
    SchedulerOption,
    SeedOption,
    done,
    out_dir,
    say,
    typer_app,
    warn,
)
from .ranges import COUNT_MAX, check_memory

app = typer_app("Knowledge tracing: simulate, predict, fit, evaluate, and the P&Y study.")

ColStudent = Annotated[str, typer.Option("--col-student", help="Student column (or user_id).")]
ColSkill = Annotated[str, typer.Option("--col-skill", help="Skill column (or skill_name).")]
ColCorrect = Annotated[str, typer.Option("--col-correct", help="0/1 correctness column.")]
ColOrder = Annotated[
    str, typer.Option("--col-order", help="Order column (or order_id); file order if absent.")
]
ColKnown = Annotated[str, typer.Option("--col-known", help="True 0/1 knowledge state column.")]
DataArg = Annotated[
    Path,
    typer.Argument(dir_okay=False, help="Response file (CSV, TSV, JSONL, JSON or Parquet)."),
]
DatasetArg = Annotated[
    Path,
    typer.Argument(
        help="Response file (CSV, TSV, JSONL, JSON, Parquet), or a dataset larger than memory: a "
        "folder or a quoted glob (* or ?; brackets are literal) of Parquet or CSV files, read "
        "in partitions."
    ),
]
EncodingOption = Annotated[
    str, typer.Option("--encoding", help="Text encoding of the file (e.g. latin-1, cp1252).")
]
OnlyOption = Annotated[
    list[str] | None,
    typer.Option(
        "--only",
        metavar="COLUMN=VALUE",
        help="Use only rows whose COLUMN equals VALUE (repeatable; e.g. original=1).",
    ),
]
SkipNoSkillOption = Annotated[
    bool,
    typer.Option(
        "--skip-no-skill", help="Leave out rows with an empty skill cell instead of refusing."
    ),
]


MultiGs = Annotated[
    str | None,
    typer.Option(
        "--multigs", metavar="COLUMN", help="Guess and slip per value of COLUMN (KT-IDEM)."
    ),
]
MultiLearn = Annotated[
    str | None,
    typer.Option(
        "--multilearn",
        metavar="COLUMN",
        help="Learn (and forget) after a response, per COLUMN value.",
    ),
]
MultiPrior = Annotated[
    bool,
    typer.Option(
        "--multiprior", help="A prior per first-response class (KT-PPS; see the docs, P1 page)."
    ),
]
MultiPriorCol = Annotated[
    str | None,
    typer.Option(
        "--multiprior-col",
        metavar="COLUMN",
        help="A prior per value of COLUMN at the sequence's first response (instead of --multiprior).",
    ),
]
MultiPair = Annotated[
    str | None,
    typer.Option(
        "--multipair",
        metavar="COLUMN",
        help="Learn (and forget) per ordered pair (previous, current) of COLUMN values.",
    ),
]
FixedFile = Annotated[
    Path | None,
    typer.Option(
        "--fixed",
        dir_okay=False,
        help="Long table (skill, parameter, group, value; * = all) of parameters held at a value.",
    ),
]
InitFile = Annotated[
    Path | None,
    typer.Option(
        "--init", dir_okay=False, help="Long table of starting values for the first restart."
    ),
]

ThresholdOption = Annotated[
    float, typer.Option(min=0.0, max=1.0, help="Mastery threshold on P(known), in (0, 1).")
]
InARowOption = Annotated[
    int, typer.Option(min=1, max=COUNT_MAX, help="n for the n-correct-in-a-row rule.")
]


def _cols(student: str, skill: str, correct: str, order: str, known: str) -> Columns:
    return Columns(student=student, skill=skill, correct=correct, order=order, known=known)


def _say_left_out(res: dict) -> None:
    left = {k: v for k, v in res.get("rows_left_out", {}).items() if v}
    if left:
        say("rows left out: " + ", ".join(f"{v} by {k}" for k, v in left.items()))


def _rows(only: list[str] | None, skip_no_skill: bool) -> RowFilter:
    from ..io import InputError

    pairs = []
    for item in only or []:
        column, sep, value = item.partition("=")
        if not sep or not column.strip():
            raise InputError(f"--only expects COLUMN=VALUE, got {item!r}")
        pairs.append((column.strip(), value))
    return RowFilter(only=tuple(pairs), skip_no_skill=skip_no_skill)


@app.command()
def simulate(
    students: Annotated[int, typer.Option(min=1, max=COUNT_MAX, help="Students per skill.")] = 1000,
    skills: Annotated[
        int,
        typer.Option(
            min=1, max=COUNT_MAX, help="Skills (parameters drawn from the paper's ranges)."
        ),
    ] = 20,
    opportunities: Annotated[
        int, typer.Option(min=1, max=COUNT_MAX, help="Opportunities per student and skill.")
    ] = 30,
    params: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False,
            help="Parameter file instead of random parameters: wide (skill, prior, learn, "
            "guess, slip[, forget]) or long, as kt simulate and kt fit write it (its items' own "
            "guess, slip, learn, forget: kt fit --multigs/--multilearn/--multipair COLUMN).",
        ),
    ] = None,
    forget_max: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Draw forget uniformly in [0, this] (0 to 1).")
    ] = 0.0,
    items_per_skill: Annotated[
        int,
        typer.Option(
            min=0,
            max=COUNT_MAX,
            help="Items per skill (named SKILL-J, an 'item' column), each with its own guess "
            "and slip drawn around the skill's (KT-IDEM); params.csv is then the long format.",
        ),
    ] = 0,
    item_spread: Annotated[
        float,
        typer.Option(
            min=0.0, max=0.5, help="Item guess/slip uniform within +-this of the skill's (0-0.5)."
        ),
    ] = 0.15,
    item_learn: Annotated[
        bool, typer.Option("--item-learn", help="Learn per item too (as --multilearn item).")
    ] = False,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            metavar="csv|parquet",
            help="csv: responses.csv; parquet: a large log as responses/part-NNNNN.parquet, "
            "written in chunks, rows in time order (skills interleaved).",
        ),
    ] = "csv",
    rows_per_file: Annotated[
        int,
        typer.Option(
            min=1,
            max=COUNT_MAX,
            help="Rows per Parquet file (whole students) with --format parquet.",
        ),
    ] = 1_000_000,
    seed: SeedOption = SEED,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    json_out: JsonOption = False,
) -> None:
    """Simulate students from the BKT generative model (writes responses.csv with 'known')."""
    from ..kt.commands.pipeline import simulate_run

    _check_simulate_size(students, skills if params is None else 1, opportunities,
                         items_per_skill, rows_per_file if fmt.strip().lower() == "parquet" else 0)  # fmt: skip
    path = out_dir(out, "kt simulate", overwrite, inputs=())
    res = simulate_run(
        path,
        n_students=students,
        n_opportunities=opportunities,
        n_skills=skills,
        params_path=params,
        seed=seed,
        forget_max=forget_max,
        items_per_skill=items_per_skill,
        item_spread=item_spread,
        item_learn=item_learn,
        fmt=fmt.strip().lower(),
        rows_per_file=rows_per_file,
    )
    say(f"{res['n_responses']} responses on {res['n_skills']} skills")
    done(path, json=json_out)


#: Bytes per simulated response row in memory (measured: about 90 with its columns).
ROW_BYTES = 100
#: Bytes per EM restart and skill (starting points, results, the restarts table).
RESTART_BYTES = 300


def _check_simulate_size(students, skills, opportunities, items, rows_per_file) -> None:
    """A response table (or, in Parquet, one file's chunk) that cannot fit is refused."""
    per_student = skills * opportunities
    rows = students * per_student
    if rows_per_file:  # Parquet: one chunk of whole students at a time, one seed per file
        chunk = max(1, rows_per_file // per_student)
        rows = min(students, chunk) * per_student + -(-students // chunk) * 5
    nbytes = rows * ROW_BYTES + skills * items * ROW_BYTES
    drivers = [("--students", students), ("--skills", skills), ("--opportunities", opportunities),
               ("--items-per-skill", items), ("--rows-per-file", rows_per_file)]  # fmt: skip
    check_memory(nbytes, *drivers)


@app.command()
def predict(
    data: DatasetArg,
    params: Annotated[
        Path,
        typer.Option(
            dir_okay=False,
            help="Parameter file: wide (one row per skill) or long (skill, parameter, group, "
            "value).",
        ),
    ],
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    col_student: ColStudent = "student",
    col_skill: ColSkill = "skill",
    col_correct: ColCorrect = "correct",
    col_order: ColOrder = "order",
    col_known: ColKnown = "known",
    encoding: EncodingOption = "utf-8",
    only: OnlyOption = None,
    skip_no_skill: SkipNoSkillOption = False,
    cluster: ClusterOption = None,
    scheduler: SchedulerOption = None,
    json_out: JsonOption = False,
) -> None:
    """Forward filtering: p_correct before and p_known after every response."""
    from ..executor import open_executor
    from ..kt.commands.pipeline import predict_run

    rows = _rows(only, skip_no_skill)
    path = out_dir(out, "kt predict", overwrite, inputs=())
    with open_executor(cluster, scheduler) as executor:
        res = predict_run(
            path,
            data,
            params,
            _cols(col_student, col_skill, col_correct, col_order, col_known),
            encoding=encoding,
            rows=rows,
            warn=warn,
            executor=executor,
        )
    _say_left_out(res)
    where = "predictions/*.parquet" if "predictions" in res else "predictions.csv"
    say(f"predicted {res['n_responses']} responses on {res['n_skills']} skills ({where})")
    done(path, json=json_out)


@app.command()
def fit(
    data: DatasetArg,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    restarts: Annotated[
        int, typer.Option(min=1, max=COUNT_MAX, help="EM runs per skill; the best is kept.")
    ] = 5,
    forgets: Annotated[
        bool, typer.Option("--forgets/--no-forgets", help="Also estimate forgetting.")
    ] = False,
    max_iter: Annotated[
        int, typer.Option(min=1, max=COUNT_MAX, help="E-steps per run at most.")
    ] = 500,
    tol: Annotated[
        float,
        typer.Option(min=0.0, max=1.0, help="Stop when the log-likelihood gain < tol*|LL| (0-1]."),
    ] = 1e-9,
    guess_max: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Upper bound of guess (0-1].")
    ] = 0.5,
    slip_max: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Upper bound of slip (0-1].")
    ] = 0.5,
    min_responses: Annotated[
        int,
        typer.Option(
            min=0, max=COUNT_MAX, help="Skills with fewer responses are skipped (with a warning)."
        ),
    ] = 10,
    seed: SeedOption = SEED,
    col_student: ColStudent = "student",
    col_skill: ColSkill = "skill",
    col_correct: ColCorrect = "correct",
    col_order: ColOrder = "order",
    col_known: ColKnown = "known",
    encoding: EncodingOption = "utf-8",
    only: OnlyOption = None,
    skip_no_skill: SkipNoSkillOption = False,
    multigs: MultiGs = None,
    multilearn: MultiLearn = None,
    multiprior: MultiPrior = False,
    multiprior_col: MultiPriorCol = None,
    multipair: MultiPair = None,
    fixed: FixedFile = None,
    init: InitFile = None,
    cluster: ClusterOption = None,
    scheduler: SchedulerOption = None,
    json_out: JsonOption = False,
) -> None:
    """Maximum-likelihood BKT parameters per skill by EM with seeded restarts (and variants)."""
    from ..executor import open_executor
    from ..io import InputError
    from ..kt.bkt.model import BKT  # scikit-learn's import: on use, not at start-up
    from ..kt.bkt.variants import read_long_table
    from ..kt.commands.pipeline import fit_run

    rows = _rows(only, skip_no_skill)
    for name, value in (("--guess-max", guess_max), ("--slip-max", slip_max)):
        if not 0 < value <= 1:
            raise InputError(f"{name} must be in (0, 1], got {value}")
    if restarts < 1 or max_iter < 1 or tol <= 0:
        raise InputError("--restarts and --max-iter must be at least 1 and --tol positive")
    check_memory(restarts * RESTART_BYTES, ("--restarts", restarts))
    model = BKT(
        forgets=forgets,
        n_restarts=restarts,
        max_iter=max_iter,
        tol=tol,
        guess_max=guess_max,
        slip_max=slip_max,
        seed=seed,
        columns=_cols(col_student, col_skill, col_correct, col_order, col_known),
        multigs=multigs,
        multilearn=multilearn,
        multiprior=multiprior_col or multiprior,
        multipair=multipair,
        fixed=read_long_table(fixed) if fixed else None,
        init=read_long_table(init) if init else None,
    )
    if multiprior and multiprior_col:
        raise InputError("give --multiprior or --multiprior-col, not both")
    path = out_dir(out, "kt fit", overwrite, inputs=())
    with open_executor(cluster, scheduler) as executor:
        res = fit_run(
            path,
            data,
            model,
            min_responses=min_responses,
            encoding=encoding,
            rows=rows,
            warn=warn,
            executor=executor,
        )
    _say_left_out(res)
    if res["n_not_converged"]:
        warn(f"{res['n_not_converged']} skill(s) stopped at --max-iter before converging")
    say(f"fitted {res['n_skills']} skills, total log-likelihood {res['total_log_likelihood']:.4f}")
    done(path, json=json_out)


@app.command()
def evaluate(
    data: Annotated[
        Path,
        typer.Argument(
            help="Predictions file (e.g. predictions.csv of kt predict) or dataset (e.g. its "
            "predictions/ folder) with p_correct, optionally p_known and known."
        ),
    ],
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    n_params: Annotated[
        int, typer.Option(min=0, max=COUNT_MAX, help="Free parameters k for AIC/AICc/BIC.")
    ] = 4,
    params: Annotated[
        Path | None,
        typer.Option(
            "--params",
            dir_okay=False,
            help="Parameter file (wide or long) giving k per skill instead of --n-params.",
        ),
    ] = None,
    threshold: ThresholdOption = 0.95,
    in_a_row: InARowOption = 3,
    col_student: ColStudent = "student",
    col_skill: ColSkill = "skill",
    col_correct: ColCorrect = "correct",
    col_order: ColOrder = "order",
    col_known: ColKnown = "known",
    encoding: EncodingOption = "utf-8",
    only: OnlyOption = None,
    skip_no_skill: SkipNoSkillOption = False,
    cluster: ClusterOption = None,
    scheduler: SchedulerOption = None,
    json_out: JsonOption = False,
) -> None:
    """Performance and knowledge metrics and moment-of-learning error."""
    from ..executor import open_executor
    from ..io import InputError
    from ..kt.commands.pipeline import evaluate_run

    rows = _rows(only, skip_no_skill)
    if not 0 < threshold < 1:
        raise InputError(f"--threshold must be in (0, 1), got {threshold}")
    if in_a_row < 1 or n_params < 0:
        raise InputError("--in-a-row must be at least 1 and --n-params non-negative")
    path = out_dir(out, "kt evaluate", overwrite, inputs=())
    with open_executor(cluster, scheduler) as executor:
        res = evaluate_run(
            path,
            data,
            columns=_cols(col_student, col_skill, col_correct, col_order, col_known),
            n_params=n_params,
            params_path=params,
            threshold=threshold,
            n_in_a_row=in_a_row,
            encoding=encoding,
            rows=rows,
            warn=warn,
            executor=executor,
        )
    _say_left_out(res)
    p = res["performance"]
    say(f"performance: AUC {p['auc']:.4f}  RMSE {p['rmse']:.4f}  accuracy {p['accuracy']:.4f}")
    if "moment_of_learning" in res:
        say(f"moment of learning MAD: {res['moment_of_learning']['mol_mad']:.4f}")
    done(path, json=json_out)


@app.command()
def study(
    students: Annotated[int, typer.Option(min=1, max=COUNT_MAX, help="Students per skill.")] = 1000,
    skills: Annotated[int, typer.Option(min=3, max=COUNT_MAX, help="Skills (at least 3).")] = 100,
    opportunities: Annotated[
        int, typer.Option(min=1, max=COUNT_MAX, help="Opportunities per student and skill.")
    ] = 30,
    random_sets: Annotated[
        int, typer.Option(min=0, max=COUNT_MAX, help="Random candidate parameter sets.")
    ] = 10,
    threshold: ThresholdOption = 0.95,
    in_a_row: InARowOption = 3,
    sensitivity: Annotated[
        bool,
        typer.Option(
            "--sensitivity/--no-sensitivity",
            help="Also run the study simulated with the paper's prose prior.",
        ),
    ] = True,
    replications: Annotated[
        int,
        typer.Option(
            "--replications",
            metavar="R",
            min=1,
            max=COUNT_MAX,
            help="Repeat the whole study R times, each from its own spawned seed, and report "
            "Tables 2 and 3 per replication and their spread.",
        ),
    ] = 1,
    seed: SeedOption = 2013,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    cluster: ClusterOption = None,
    scheduler: SchedulerOption = None,
    json_out: JsonOption = False,
) -> None:
    """The Pardos & Yudelson study (Tables 2, 3, Experiment 3) beside the published values."""
    from ..executor import open_executor
    from ..io import InputError
    from ..kt.commands.pipeline import write_study_run
    from ..kt.replication.study import StudyConfig

    cfg = StudyConfig(
        n_students=students,
        n_skills=skills,
        n_opportunities=opportunities,
        n_random_sets=random_sets,
        threshold=threshold,
        n_in_a_row=in_a_row,
        seed=seed,
    )
    try:
        cfg.validate()
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if replications < 1:
        raise InputError(f"--replications must be at least 1, got {replications}")
    rows = students * skills * opportunities
    check_memory(rows * ROW_BYTES, ("--students", students), ("--skills", skills),
                 ("--opportunities", opportunities))  # fmt: skip
    path = out_dir(out, "kt study", overwrite, inputs=())
    with open_executor(cluster, scheduler) as executor:
        res = write_study_run(
            path, cfg, sensitivity=sensitivity, replications=replications, executor=executor
        )
    say(
        f"study finished in {res['seconds']:.1f} s: true set first by log-likelihood in "
        f"{res['true_first']['loglik']}/{skills} skills"
    )
    done(path, json=json_out)


# -- model comparison and online tracking (crossvalidate, compare, roster) ----------------------
FoldsOption = Annotated[
    int,
    typer.Option("--folds", min=2, max=COUNT_MAX, help="Number of cross-validation folds (>= 2)."),
]
RestartsOption = Annotated[
    int, typer.Option("--restarts", min=1, max=COUNT_MAX, help="EM runs per skill (BKT models).")
]


@app.command()
def crossvalidate(
    data: DataArg,
    n_folds: FoldsOption = 5,
    by: Annotated[
        str, typer.Option("--by", help="Folds by 'student' (no student in two folds) or 'row'.")
    ] = "student",
    model: Annotated[
        str,
        typer.Option(
            "--model", metavar="SPEC", help="bkt[-forgets][-multigs:COLUMN]..., afm or pfa."
        ),
    ] = "bkt",
    forgets: Annotated[
        bool, typer.Option("--forgets", help="Add forgetting to a BKT model (bkt-forgets).")
    ] = False,
    restarts: RestartsOption = 5,
    seed: SeedOption = SEED,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    col_student: ColStudent = "student",
    col_skill: ColSkill = "skill",
    col_correct: ColCorrect = "correct",
    col_order: ColOrder = "order",
    encoding: EncodingOption = "utf-8",
    json_out: JsonOption = False,
) -> None:
    """Held-out RMSE, AUC, accuracy and log-likelihood per fold and skill (mean ± SD)."""
    from ..kt.commands.model_runs import crossvalidate_run

    spec = _with_forgets(model, forgets)
    check_memory(restarts * RESTART_BYTES, ("--restarts", restarts))
    path = out_dir(out, "kt crossvalidate", overwrite, inputs=())
    res = crossvalidate_run(
        path, data, spec=spec, n_folds=n_folds, by=by, seed=seed, n_restarts=restarts,
        columns=_cols(col_student, col_skill, col_correct, col_order, "known"), encoding=encoding,
    )  # fmt: skip
    say(f"{spec}: held-out AUC {res['auc_mean']:.4f} ± {res['auc_sd']:.4f}, "
        f"RMSE {res['rmse_mean']:.4f} ± {res['rmse_sd']:.4f} over {n_folds} folds")  # fmt: skip
    done(path, json=json_out)


def _with_forgets(spec: str, forgets: bool) -> str:
    from ..io import InputError

    if not forgets or "forgets" in spec.split("-"):
        return spec
    if not spec.startswith("bkt"):
        raise InputError(f"--forgets applies to BKT models, not {spec!r}")
    return spec.replace("bkt", "bkt-forgets", 1)


@app.command()
def compare(
    data: DataArg,
    models: Annotated[
        str,
        typer.Option("--models", help="Comma-separated model specs, e.g. bkt,bkt-forgets,afm,pfa."),
    ] = "bkt,bkt-forgets,afm,pfa",
    n_folds: FoldsOption = 5,
    restarts: RestartsOption = 5,
    seed: SeedOption = SEED,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    col_student: ColStudent = "student",
    col_skill: ColSkill = "skill",
    col_correct: ColCorrect = "correct",
    col_order: ColOrder = "order",
    encoding: EncodingOption = "utf-8",
    json_out: JsonOption = False,
) -> None:
    """Models on the same student folds: held-out scores with CIs, AIC/BIC, paired differences."""
    from ..kt.commands.model_runs import compare_run

    check_memory(restarts * RESTART_BYTES, ("--restarts", restarts))
    path = out_dir(out, "kt compare", overwrite, inputs=())
    res = compare_run(
        path, data, models=models, n_folds=n_folds, seed=seed, n_restarts=restarts,
        columns=_cols(col_student, col_skill, col_correct, col_order, "known"), encoding=encoding,
        progress=lambda spec, s: say(f"{spec}: {s:.1f} s"),
    )  # fmt: skip
    say(f"best by held-out log-likelihood: {res['best_by_heldout_loglik']}")
    done(path, json=json_out)


@app.command()
def roster(
    params: Annotated[
        Path,
        typer.Argument(
            help="Parameter file (one row per skill, or a variant's long table) or a saved "
            "model folder."
        ),
    ],
    updates: Annotated[
        Path, typer.Option("--updates", dir_okay=False, help="Response log to replay.")
    ],
    threshold: ThresholdOption = 0.95,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    col_student: ColStudent = "student",
    col_skill: ColSkill = "skill",
    col_correct: ColCorrect = "correct",
    col_order: ColOrder = "order",
    encoding: EncodingOption = "utf-8",
    json_out: JsonOption = False,
) -> None:
    """Replay a response log through an online roster: p_correct and p_known per update."""
    from ..kt.commands.model_runs import roster_run

    path = out_dir(out, "kt roster", overwrite, inputs=())
    res = roster_run(
        path, params, updates, threshold=threshold, encoding=encoding,
        columns=_cols(col_student, col_skill, col_correct, col_order, "known"),
    )  # fmt: skip
    say(f"{res['n_updates']} updates for {res['n_students']} students (updates.csv, state.csv)")
    done(path, json=json_out)
