"""``edueval turing``: the imitation game for educational AI (P5)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..defaults import N_BOOT, TURING_SE, TURING_SIMULATION_SE
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
    show,
    typer_app,
)
from .models import (
    ApiKeyEnvOption,
    BaseUrlOption,
    MaxConnectionsOption,
    MaxFailuresOption,
    ModelOption,
    NoCacheOption,
    TimeoutOption,
    open_model,
    parse_max_failures,
)
from .ranges import COUNT_MAX, check_memory, float_list, int_list, memory_bytes

app = typer_app("The imitation game: generate, assemble, analyze, power, simulate.")

EpsOption = Annotated[
    float,
    typer.Option(
        "--eps",
        min=0.0,
        max=1.0,
        help="Equivalence margin: draw needs |p_AI - p_Human| < eps; in (0, 1).",
    ),
]
DeltaOption = Annotated[
    float,
    typer.Option(
        "--delta", min=0.0, max=1.0, help="Both must beat the random distractor by delta; [0, 1)."
    ),
]
AlphaOption = Annotated[
    float, typer.Option("--alpha", min=0.0, max=1.0, help="Level of every test, in (0, 1).")
]
#: Bytes per simulated MCQ (student x question) of one block of replications (measured: ~290
#: for turing simulate's 50 replications a block; power's blocks hold ~200,000 students).
MCQ_BYTES = 250
SIMULATE_BLOCK = 50
POWER_BLOCK = 200_000
ClusterSeOption = Annotated[
    str,
    typer.Option(
        "--se",
        help="Student-clustered SE of the simulated verdicts: cr3 (default; jackknife variance, "
        "Bell-McCaffrey df, Hall's skewness correction), boot (turing analyze's default: the "
        "same with a design effect of at least 1 and a pairs cluster bootstrap-t, its fast "
        "double bootstrap and the score test (variance about the null value) beside the t "
        "table; 999 draws per simulated study), cr2 (the same with CR2's variance) or cr1 "
        "(G - 1 df; over-declares draws under skew).",
    ),
]


def _floats(text: str, name: str) -> list[float]:
    from ..io import InputError

    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"{name} must be comma-separated numbers, got {text!r}") from None


def _ints(text: str, name: str) -> list[int]:
    from ..io import InputError

    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"{name} must be comma-separated integers, got {text!r}") from None


@app.command()
def analyze(
    choices: Annotated[
        Path, typer.Argument(dir_okay=False, help="Phase-2 CSV: student, question, chosen.")
    ],
    eps: EpsOption = 0.10,
    delta: DeltaOption = 0.05,
    alpha: AlphaOption = 0.05,
    se: Annotated[
        str | None,
        typer.Option(
            "--se",
            help="The test that decides: boot (the default; CR3 with Hall's skewness "
            "correction and a design effect of at least 1, each p-value the largest of its "
            "t-table value, its pairs cluster bootstrap-t value, that value's double "
            "bootstrap (--double) and its score test's, the t table with the variance about "
            "the null value; with 5 students it claims almost nothing), cr3 (the same statistic on the t table alone: the default "
            "before; over-declares draws when students differ in how many answers they get "
            "wrong), cr2 (CR2's variance), cr1 (Liang-Zeger, G - 1 df) or naive; 'clustered' "
            "means the default. All are reported.",
        ),
    ] = TURING_SE,
    n_boot: Annotated[
        int,
        typer.Option(
            "--boot",
            min=1,
            max=1_000_000,
            help="Bootstrap draws of the students for --se boot (default 999).",
        ),
    ] = N_BOOT,
    seed: SeedOption = 0,
    double: Annotated[
        str,
        typer.Option(
            "--double",
            help="The double bootstrap of --se boot's bootstrap-t p-values: fast (the default; "
            "Davidson-MacKinnon: one second-level resample of each first-level one), full "
            "(199 second-level resamples of each: seconds for one class, the more accurate at "
            "small classes) or none (the t table and the bootstrap-t only).",
        ),
    ] = "fast",
    phase1: Annotated[
        Path | None,
        typer.Option(
            "--phase1",
            dir_okay=False,
            help="Phase-1 file: check every student made an error there.",
        ),
    ] = None,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    json_out: JsonOption = False,
) -> None:
    """Selection rates, McNemar, TOST, superiority over random and the verdict."""
    from ..turing.pipeline import analyze_run

    path = out_dir(out, "turing analyze", overwrite, inputs=())
    res = analyze_run(
        path, choices, eps=eps, delta=delta, alpha=alpha, se=se, phase1_path=phase1,
        n_boot=n_boot, seed=seed, double=double,
    )  # fmt: skip
    show((path / "summary.txt").read_text(), json_out)
    say(f"verdict: {res['verdict']}")
    done(path, json=json_out)


# the options of turing power (and --students/--questions of turing simulate)
StudentsOption = Annotated[int, typer.Option("--students", min=2, max=COUNT_MAX, help="Students.")]
QuestionsOption = Annotated[
    int, typer.Option("--questions", min=1, max=COUNT_MAX, help="MCQs per student.")
]
PAiOption = Annotated[
    float, typer.Option("--p-ai", min=0.0, max=1.0, help="Expected AI selection rate.")
]
PHumanOption = Annotated[
    float, typer.Option("--p-human", min=0.0, max=1.0, help="Expected human rate.")
]
PRandomOption = Annotated[
    float, typer.Option("--p-random", min=0.0, max=1.0, help="Expected random rate.")
]
EpsListOption = Annotated[
    str,
    typer.Option(
        "--eps", callback=float_list(0.0, 1.0), help="Margins eps in (0, 1), comma-separated."
    ),
]
DeltaListOption = Annotated[
    str,
    typer.Option(
        "--delta",
        callback=float_list(0.0, 1.0, high_open=True),
        help="Margins delta in [0, 1), comma-separated.",
    ),
]
RhoListOption = Annotated[
    str,
    typer.Option(
        "--rho",
        callback=float_list(0.0, 1.0, high_open=True),
        help="Intra-student correlations in [0, 1), comma-separated.",
    ),
]
TargetPowerOption = Annotated[
    float, typer.Option("--power", min=0.0, max=1.0, help="Target power.")
]
PowerRepsOption = Annotated[
    int, typer.Option("--reps", min=10, max=COUNT_MAX, help="Simulated studies per cell.")
]
CoverageOption = Annotated[
    bool,
    typer.Option(
        "--coverage",
        help="Instead: students x questions to observe the top-k misconceptions with "
        "probability 1 - delta (the paper's coverage theorems), checked by simulation.",
    ),
]

# the options of turing power --coverage
CovTopK = Annotated[
    int,
    typer.Option("--top-k", min=1, max=COUNT_MAX, help="Coverage: misconceptions to see."),
]
CovPMin = Annotated[
    float | None,
    typer.Option(
        "--p-min",
        min=0.0,
        max=1.0,
        help="Coverage: each top-k misconception at least this frequent.",
    ),
]
CovZipf = Annotated[
    float | None,
    typer.Option(
        "--zipf", min=0.0, max=100.0, help="Coverage: Zipf exponent s, p_i ~ i^-s (0-100)."
    ),
]
CovMisconceptions = Annotated[
    int,
    typer.Option(
        "--misconceptions",
        min=1,
        max=COUNT_MAX,
        help="Coverage: misconceptions under --zipf.",
    ),
]
CovMass = Annotated[
    float | None,
    typer.Option(
        "--mass",
        min=0.0,
        max=1.0,
        help="Coverage, --zipf: choose k to cover 1 - mass (Theorem 1).",
    ),
]
CovConfidence = Annotated[
    float, typer.Option("--confidence", min=0.0, max=1.0, help="Coverage: 1 - delta.")
]
CovPerStudent = Annotated[
    int,
    typer.Option(
        "--per-student", min=1, max=COUNT_MAX, help="Coverage: misconceptions per student."
    ),
]
CovReveal = Annotated[
    float,
    typer.Option(
        "--reveal",
        min=0.0,
        max=1.0,
        help="Coverage: P(a question shows a held misconception).",
    ),
]


@app.command()
def power(
    p_ai: PAiOption = 0.30,
    p_human: PHumanOption = 0.30,
    p_random: PRandomOption = 0.10,
    eps: EpsListOption = "0.05,0.1",
    delta: DeltaListOption = "0.05",
    rho: RhoListOption = "0,0.05,0.2",
    students: StudentsOption = 100,
    questions: QuestionsOption = 25,
    alpha: AlphaOption = 0.05,
    target: TargetPowerOption = 0.8,
    reps: PowerRepsOption = 500,
    seed: SeedOption = 0,
    coverage: CoverageOption = False,
    top_k: CovTopK = 10,
    p_min: CovPMin = None,
    zipf: CovZipf = None,
    misconceptions: CovMisconceptions = 50,
    mass: CovMass = None,
    confidence: CovConfidence = 0.95,
    per_student: CovPerStudent = 1,
    reveal: CovReveal = 0.2,
    se: ClusterSeOption = TURING_SIMULATION_SE,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    cluster: ClusterOption = None,
    scheduler: SchedulerOption = None,
    json_out: JsonOption = False,
) -> None:
    """Closed-form sample sizes and simulated power with a student random effect; with
    --coverage, the paper's coverage bounds (students x questions to see the top-k
    misconceptions)."""
    from ..executor import open_executor
    from ..turing.pipeline import coverage_run, power_run
    from ..turing.power import Rates

    if not coverage:
        cells = max(students, min(POWER_BLOCK, reps * students)) * questions
        check_memory(cells * MCQ_BYTES, ("--students", students), ("--questions", questions))
    path = out_dir(out, "turing power", overwrite, inputs=())
    if coverage:
        res = coverage_run(
            path, k=top_k, p_min=p_min, zipf=zipf, n_misconceptions=misconceptions,
            mass_eps=mass, confidence=confidence, per_student=per_student, reveal=reveal,
            reps=reps, seed=seed, max_bytes=memory_bytes(),
        )  # fmt: skip
        show(res["summary"], json_out)
        return done(path, json=json_out)
    eps_values, delta_values = _floats(eps, "--eps"), _floats(delta, "--delta")
    rho_values = _floats(rho, "--rho")
    with open_executor(cluster, scheduler) as executor:
        res = power_run(
            path,
            rates=Rates(p_ai, p_human, p_random),
            eps_values=eps_values,
            delta_values=delta_values,
            rho_values=rho_values,
            n_students=students,
            m=questions,
            alpha=alpha,
            power=target,
            reps=reps,
            seed=seed,
            executor=executor,
            se=se,
        )
    show(res["power_table"].to_string(index=False), json_out)
    done(path, json=json_out)


@app.command()
def simulate(
    students: StudentsOption = 100,
    questions: QuestionsOption = 25,
    reps: Annotated[int, typer.Option("--reps", min=1, max=COUNT_MAX, help="Replications.")] = 1000,
    human_accuracy: Annotated[
        float,
        typer.Option(
            "--human-accuracy",
            min=0.0,
            max=1.0,
            help="P(the expert reads the student right); below 1, as any real expert.",
        ),
    ] = 0.9,
    eps: EpsOption = 0.10,
    delta: DeltaOption = 0.05,
    alpha: AlphaOption = 0.05,
    slip: Annotated[
        float,
        typer.Option("--slip", min=0.0, max=1.0, help="Share of Phase-1 errors that are slips."),
    ] = 0.10,
    p_rule: Annotated[
        float,
        typer.Option("--p-rule", min=0.0, max=1.0, help="P(a student acts on a held mal-rule)."),
    ] = 0.9,
    sizes: Annotated[
        str,
        typer.Option(
            "--sizes",
            callback=int_list(2),
            help="Student counts (>= 2) for verdict rates vs sample size, comma-separated.",
        ),
    ] = "5,10,20,40,100",
    p_rules: Annotated[
        str,
        typer.Option(
            "--p-rules",
            callback=float_list(0.0, 1.0),
            help="Other p_rule values in [0, 1] for the sample-size-by-consistency table.",
        ),
    ] = "0.2,0.4,0.6",
    frequencies: Annotated[
        Path | None,
        typer.Option(
            "--frequencies",
            dir_okay=False,
            help="CSV rule,frequency (default: the documented nine).",
        ),
    ] = None,
    main_only: Annotated[
        bool,
        typer.Option(
            "--main-only",
            help="Only the verdict rates at --students and --sizes: leave out the further "
            "studies (by the expert's accuracy, by --p-rules, type-I error, convergence).",
        ),
    ] = False,
    seed: SeedOption = 0,
    se: ClusterSeOption = TURING_SIMULATION_SE,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    cluster: ClusterOption = None,
    scheduler: SchedulerOption = None,
    json_out: JsonOption = False,
) -> None:
    """The paper's first experiment with simulated students holding known mal-rules."""
    from ..executor import open_executor
    from ..turing.pipeline import simulate_run
    from ..turing.simulate import DEFAULT_FREQUENCIES, SimConfig, read_frequencies

    freqs = dict(DEFAULT_FREQUENCIES) if frequencies is None else read_frequencies(frequencies)
    cfg = SimConfig(
        n_students=students, n_questions=questions, reps=reps, human_accuracy=human_accuracy,
        eps=eps, delta=delta, alpha=alpha, slip=slip, p_rule=p_rule, frequencies=freqs, seed=seed,
        se=se,
    )  # fmt: skip
    grid, rules = _ints(sizes, "--sizes"), _floats(p_rules, "--p-rules")
    g, option = max((students, "--students"), *((n, "--sizes") for n in grid))
    cells = min(reps, SIMULATE_BLOCK) * g * questions
    check_memory(cells * MCQ_BYTES, (option, g), ("--questions", questions))
    path = out_dir(out, "turing simulate", overwrite, inputs=())
    with open_executor(cluster, scheduler) as executor:
        res = simulate_run(
            path, cfg, n_students_grid=grid, p_rules=[] if main_only else rules, log=say,
            executor=executor, human_accuracies=[] if main_only else None,
            type1_rhos=[] if main_only else None, convergence_sizes=[] if main_only else None,
        )  # fmt: skip
    show(res["verdicts_main"].to_string(index=False), json_out)
    say(
        f"oracle draw rate {res['oracle_draw_rate']:.3f}; unconditioned told apart "
        f"{res['unconditioned_told_apart_rate']:.3f}; simulation "
        f"{res['seconds_main_simulation']:.1f} s"
    )
    done(path, json=json_out)


@app.command()
def generate(
    phase1: Annotated[
        Path,
        typer.Argument(
            dir_okay=False, help="Phase-1 file: student, question, answer, correct_answer."
        ),
    ],
    unconditioned: Annotated[
        bool,
        typer.Option("--unconditioned", help="Single-phase variant: one distractor per question."),
    ] = False,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, max=COUNT_MAX, help="Only the first N tuples."),
    ] = None,
    model: ModelOption = None,
    generator_model: Annotated[
        str | None,
        typer.Option(
            "--generator-model",
            help="The generator f_LLM that writes each related question q' and its key (a spec "
            "like --model's). Default: the --model itself, in separate calls that see no "
            "student's answer.",
        ),
    ] = None,
    generator_base_url: Annotated[
        list[str] | None,
        typer.Option(
            "--generator-base-url", help="Server(s) of --generator-model (default: --base-url)."
        ),
    ] = None,
    generator_api_key_env: Annotated[
        str | None,
        typer.Option(
            "--generator-api-key-env",
            help="Key variable of --generator-model (default: --api-key-env).",
        ),
    ] = None,
    base_url: BaseUrlOption = None,
    api_key_env: ApiKeyEnvOption = "OPENAI_API_KEY",
    max_connections: MaxConnectionsOption = 8,
    timeout: TimeoutOption = 60.0,
    no_cache: NoCacheOption = False,
    max_failures: MaxFailuresOption = "5%",
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    json_out: JsonOption = False,
) -> None:
    """Per Phase-1 question, the generator's related question q' and its checked key; per
    misconception tuple, the AI's distractor for that q' (and worksheet.csv for the expert)."""
    from ..models import default_model_spec
    from ..turing.generate_runs import generate_run

    path = out_dir(out, "turing generate", overwrite, inputs=())
    spec = model or default_model_spec()  # $EDUEVAL_MODEL, else local

    def opener_for(spec, urls, key_env):
        def opener(log_path):
            return open_model(
                spec, base_url=urls, api_key_env=key_env, max_connections=max_connections,
                timeout=timeout, no_cache=no_cache, log_path=log_path,
            )  # fmt: skip

        return opener

    # the same spec on the same server is the AI's own client (separate calls, no second load)
    other_model = generator_model is not None and generator_model != spec
    separate = other_model or generator_base_url or generator_api_key_env
    open_generator = None
    if separate:
        open_generator = opener_for(
            generator_model or spec, generator_base_url or base_url,
            generator_api_key_env or api_key_env,
        )  # fmt: skip
    res = generate_run(
        path, phase1, open_model=opener_for(spec, base_url, api_key_env), model_name=spec,
        open_generator=open_generator, generator_name=generator_model or spec,
        unconditioned=unconditioned, limit=limit, log=say,
        max_failures=parse_max_failures(max_failures),
    )  # fmt: skip
    say(
        f"{res['n_tuples']} tuples, {res['n_questions']} questions q' (keys disputed: "
        f"{res['key_check']['disagree']}); AI distractors: "
        + ", ".join(f"{k} {v}" for k, v in res["status"].items())
    )
    failed = res["failed_calls_by_source"]
    if any(failed.values()):
        say("failed calls: " + ", ".join(f"{k} {v}" for k, v in failed.items()))
    if res["students_without_error"]:
        say(f"{len(res['students_without_error'])} students had no Phase-1 error (not in Phase 2)")
    done(path, json=json_out)


@app.command()
def assemble(
    ai: Annotated[
        Path, typer.Argument(dir_okay=False, help="distractors.csv from turing generate.")
    ],
    human: Annotated[
        Path,
        typer.Option(
            "--human",
            dir_okay=False,
            help="Expert CSV: student, question, human_distractor.",
        ),
    ],
    random: Annotated[
        Path | None,
        typer.Option(
            "--random",
            dir_okay=False,
            help="CSV student, question, random_distractor (else made up).",
        ),
    ] = None,
    keep_disputed: Annotated[
        bool,
        typer.Option(
            "--keep-disputed",
            help="Also show MCQs whose key the check disputed (key_check = disagree); by "
            "default they are left out and counted.",
        ),
    ] = False,
    seed: SeedOption = 0,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    json_out: JsonOption = False,
) -> None:
    """Per-student shuffled 4-option MCQs: correct + AI + human + random distractors (an MCQ
    whose AI distractor is missing is shown without it and counts as the AI not chosen)."""
    from ..turing.pipeline import assemble_run

    path = out_dir(out, "turing assemble", overwrite, inputs=())
    res = assemble_run(path, ai, human, random_path=random, seed=seed, keep_disputed=keep_disputed)
    say(
        f"{res['n_mcqs']} MCQs for {res['n_students']} students; {res['shared_options']} with a "
        f"shared distractor, {res['dropped_equal_to_correct']} distractors equal to the answer; "
        f"{res['mcqs_without_ai']} without an AI distractor (counted as not chosen); "
        f"{res['excluded_key_disputed']} left out for a disputed key, "
        f"{res['tuples_without_question']} without a question"
    )
    done(path, json=json_out)
