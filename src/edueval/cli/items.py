"""``edueval items``: test-item analysis, the paper's labelled pairs, a synthetic classroom (P4)."""

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
from .ranges import COUNT_MAX, check_memory

#: chosen options scored against a key (mirt's key2binary), and a table whose rows are the students
KeyOption = Annotated[
    Path | None,
    typer.Option(
        dir_okay=False,
        help="Answer key (CSV/TSV/JSON/JSONL/Parquet: item, key): the table's cells are the "
        "options chosen, scored 1 for the key and 0 for any other (an omit code too); blank = "
        "not administered.",
    ),
]
RowIdsOption = Annotated[
    bool,
    typer.Option(
        "--row-ids",
        help="The table has no student column: each row is one student, numbered from 1 (a plain "
        "matrix, as R's mirt ships SAT12).",
    ),
]

#: a wide table of response patterns with a count per row (as mirt and ltm ship LSAT6, LSAT7)
FreqOption = Annotated[
    str | None,
    typer.Option(
        help="The column counting the students with each row's response pattern (a wide table "
        "of patterns, as R's mirt ships LSAT7: Item.1, ..., freq); no student column needed."
    ),
]

app = typer_app(
    "Test-item analysis (difficulty, discrimination, distractors), labelled question pairs, "
    "a synthetic classroom."
)

ResponsesArg = Annotated[
    Path,
    typer.Argument(
        dir_okay=False,
        help="Responses CSV (student, item, choice | correct); or, with no ITEMS, a score table "
        "(long: student, item, correct | score; or wide: student plus one column per item; a "
        "blank cell = not administered) or a QG-SMS question file (JSON/JSONL with q_id, "
        "learning_mat_id, q_text, answer, learning_mat, topic, stud_perf).",
    ),
]
ItemsArg = Annotated[
    Path | None,
    typer.Argument(
        dir_okay=False, help="Items JSONL (item, text, choices, answer, material, topic)."
    ),
]


#: the total score DC, DC_rest and DC_ul correlate with (``items analyze`` and ``items pairs``)
TotalScoreOption = Annotated[
    str,
    typer.Option(
        help="Total score the discrimination indices correlate with: proportion (share "
        "correct of the items a student answered; the authors' code) or count (number "
        "correct). They differ only with missing responses."
    ),
]


@app.command()
def analyze(
    responses: ResponsesArg,
    items: ItemsArg = None,
    threshold: Annotated[
        float,
        typer.Option(
            min=0.0, max=1.0, help="Selection rate that makes a distractor effective (0-1)."
        ),
    ] = 0.05,
    total_score: TotalScoreOption = "proportion",
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    json_out: JsonOption = False,
) -> None:
    """Per item: DF, DC (item-total; item-rest; upper/lower 27%), alpha if deleted, distractor
    rates, DE; for the test: Cronbach's alpha (KR-20), Feldt's interval, SEM, split half."""
    from ..items.pipeline import analyze_run

    path = out_dir(out, "items analyze", overwrite, inputs=())
    res = analyze_run(path, responses, items, threshold=threshold, total_score=total_score)
    m = res["mean"]
    alpha = res["reliability"]["alpha"]
    say(
        f"{res['n_items']} items, {res['n_students']} students: mean DF {m['DF']:.3f}, "
        f"DC {m['DC']:.3f}, DE {m['DE'] if m['DE'] is None else round(m['DE'], 2)}; "
        f"alpha {'n/a' if alpha is None else round(alpha, 3)}"
    )
    done(path, json=json_out)


@app.command()
def pairs(
    responses: ResponsesArg,
    items: ItemsArg = None,
    dimension: Annotated[
        list[str] | None, typer.Option("--dimension", "-d", help="TC, DF, DC, DE (repeatable).")
    ] = None,
    alpha: Annotated[
        list[str] | None,
        typer.Option(help="Threshold DIM=VALUE (default TC=1 DE=2 DF=0.15 DC=0.15), repeatable."),
    ] = None,
    max_pairs: Annotated[
        int | None,
        typer.Option(
            min=1, max=COUNT_MAX, help="At most this many pairs per dimension (seeded sample)."
        ),
    ] = None,
    dc_measure: Annotated[
        str, typer.Option(help="DC (item-total, the paper), DC_rest or DC_ul.")
    ] = "DC",
    total_score: TotalScoreOption = "proportion",
    seed: SeedOption = 0,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    json_out: JsonOption = False,
) -> None:
    """Pairs of questions on the same material whose measure differs by >= alpha, labelled."""
    from ..items.pairs import parse_alpha
    from ..items.pipeline import pairs_run

    path = out_dir(out, "items pairs", overwrite, inputs=())
    res = pairs_run(
        path,
        responses,
        items,
        dimensions=dimension,
        alpha=parse_alpha(alpha),
        seed=seed,
        max_pairs=max_pairs,
        dc_measure=dc_measure,
        total_score=total_score,
    )
    say(
        f"{res['n_pairs']} pairs: " + ", ".join(f"{d} {n}" for d, n in res["per_dimension"].items())
    )
    done(path, json=json_out)


@app.command()
def dif(
    scores: Annotated[
        Path,
        typer.Argument(
            dir_okay=False,
            help="Score table: long (student, item, correct) or wide (student plus one 0/1 "
            "column per item); a blank cell = not administered.",
        ),
    ],
    group: Annotated[
        str,
        typer.Option(
            help="Column naming each student's group: in the score table (long: one value per "
            "student; wide: not read as an item) or, with --students, in that file."
        ),
    ],
    focal: Annotated[
        str | None, typer.Option(help="The focal group's value (default: the smaller group).")
    ] = None,
    reference: Annotated[
        str | None,
        typer.Option(help="The reference group's value (default: the other group)."),
    ] = None,
    students: Annotated[
        Path | None,
        typer.Option(dir_okay=False, help="Students file (student + the --group column)."),
    ] = None,
    method: Annotated[
        list[str] | None,
        typer.Option(help="mh (Mantel-Haenszel) and/or lr (logistic regression); repeatable."),
    ] = None,
    level: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Significance level (0-1).")
    ] = 0.05,
    freq: FreqOption = None,
    key: KeyOption = None,
    row_ids: RowIdsOption = False,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    json_out: JsonOption = False,
) -> None:
    """Differential item functioning: Mantel-Haenszel D-DIF with ETS A/B/C and logistic-
    regression DIF (uniform, non-uniform), Holm across items."""
    from ..io import InputError
    from ..items.dif_pipeline import dif_run

    methods = [m.lower() for m in (method or ["mh", "lr"])]
    bad = [m for m in methods if m not in ("mh", "lr")]
    if bad:
        raise InputError(f"--method takes mh or lr, got {bad[0]!r}")
    path = out_dir(out, "items dif", overwrite, inputs=())
    res = dif_run(path, scores, group=group, students=students, focal=focal,
                  reference=reference, methods=methods, level=level, freq=freq, key=key,
                  row_ids=row_ids)  # fmt: skip
    ets = res["ets"]
    say(
        f"{res['n_items']} items, focal {res['focal']!r} ({res['n_focal']}) vs reference "
        f"{res['reference']!r} ({res['n_reference']})"
        + (f"; ETS A {ets['A']}, B {ets['B']}, C {ets['C']}" if ets else "")
        + f"; flagged: {', '.join(res['flagged']) or 'none'}"
    )
    done(path, json=json_out)


@app.command()
def reliability(
    scores: Annotated[
        Path,
        typer.Argument(
            dir_okay=False,
            help="Score table: long (student, item, correct | score) or wide (student plus one "
            "column per item); a blank cell = not administered.",
        ),
    ],
    missing: Annotated[
        str,
        typer.Option(
            help="How blank cells enter: pairwise (each covariance over the students who "
            "answered both items) or complete (only students who answered every item)."
        ),
    ] = "pairwise",
    level: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Level of Feldt's interval (0-1).")
    ] = 0.95,
    freq: FreqOption = None,
    key: KeyOption = None,
    row_ids: RowIdsOption = False,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    json_out: JsonOption = False,
) -> None:
    """Reliability of a test: Cronbach's alpha (KR-20 on 0/1 items) with Feldt's interval,
    alpha if an item is deleted, SEM, odd-even split half with Spearman-Brown."""
    from ..items.reliability_pipeline import reliability_run

    path = out_dir(out, "items reliability", overwrite, inputs=())
    res = reliability_run(path, scores, missing=missing, level=level, freq=freq, key=key,
                          row_ids=row_ids)  # fmt: skip
    low, high = res["alpha_low"], res["alpha_high"]
    alpha = res["alpha"]
    say(
        f"{res['n_items']} items, {res['n_used']} of {res['n_students']} students: alpha "
        + ("undefined" if alpha is None else f"{alpha:.3f}")
        + ("" if low is None or high is None else f" [{low:.3f}, {high:.3f}]")
        + ("" if res["sem"] is None else f", SEM {res['sem']:.3f}")
    )
    done(path, json=json_out)


#: Bytes per simulated (student, question) response in memory, its table rows included.
CELL_BYTES = 400


@app.command()
def simulate(
    students: Annotated[
        int, typer.Option(min=2, max=COUNT_MAX, help="Students in the class (>= 2).")
    ] = 60,
    materials: Annotated[
        int, typer.Option(min=1, max=4, help="Learning materials (lessons), 1-4.")
    ] = 2,
    questions: Annotated[
        int, typer.Option(min=2, max=COUNT_MAX, help="Questions per learning material (>= 2).")
    ] = 8,
    ability_mean: Annotated[
        float, typer.Option(min=-50.0, max=50.0, help="Mean ability (logits, -50 to 50).")
    ] = 1.0,
    p_rule: Annotated[
        float,
        typer.Option(
            min=0.0, max=1.0, help="P(acting on a held mal-rule that bears on the question)."
        ),
    ] = 0.9,
    seed: SeedOption = 0,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    json_out: JsonOption = False,
) -> None:
    """A synthetic classroom: items.jsonl + responses.csv with known ground truth, and pairs."""
    from ..io import InputError
    from ..items.pipeline import simulate_run
    from ..items.simulate import ClassroomConfig

    cells = students * materials * questions
    check_memory(cells * CELL_BYTES, ("--students", students), ("--questions", questions))
    try:
        cfg = ClassroomConfig(
            n_students=students,
            n_materials=materials,
            questions_per_material=questions,
            ability_mean=ability_mean,
            p_rule=p_rule,
            seed=seed,
        )
    except ValueError as exc:
        raise InputError(str(exc)) from None
    path = out_dir(out, "items simulate", overwrite, inputs=())
    res = simulate_run(path, cfg)
    say(
        f"{res['n_items']} questions x {res['n_students']} students; pairs "
        + ", ".join(f"{d} {n}" for d, n in res["pairs"].items())
    )
    done(path, json=json_out)


ScoresArg = Annotated[
    Path,
    typer.Argument(
        dir_okay=False,
        help="Score table: long (student, item, correct) or wide (student + one 0/1 column per "
        "item); a blank cell is 'not administered'. CSV/TSV/JSON/JSONL/Parquet.",
    ),
]
ModelOption = Annotated[str, typer.Option(help="rasch, 2pl or 3pl.")]


@app.command()
def irt(
    scores: ScoresArg,
    model: ModelOption = "2pl",
    rasch_scale: Annotated[
        str,
        typer.Option(help="Rasch scale: variance (slopes 1, latent variance free) or slope."),
    ] = "variance",
    se: Annotated[str, typer.Option(help="Standard errors: observed, crossprod or none.")] = (
        "observed"
    ),
    g_prior: Annotated[
        tuple[float, float] | None,
        typer.Option(
            min=-20.0,
            max=20.0,
            help="3PL: normal prior MEAN SD on logit(g), each in [-20, 20], SD > 0 (default none, "
            "as mirt).",
        ),
    ] = None,
    freq: FreqOption = None,
    key: KeyOption = None,
    row_ids: RowIdsOption = False,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    json_out: JsonOption = False,
) -> None:
    """IRT (Rasch, 2PL, 3PL) by marginal maximum likelihood: parameters with SEs, M2, S-X2,
    EAP/MAP scores, information; report with ICCs, test information and a Wright map."""
    from ..items.irt_pipeline import irt_run

    path = out_dir(out, "items irt", overwrite, inputs=())
    res = irt_run(path, scores, model=model, rasch_scale=rasch_scale, se=se, g_prior=g_prior,
                  freq=freq, key=key, row_ids=row_ids)  # fmt: skip
    m2 = res["M2"]
    say(
        f"{res['model'].upper()}: {res['n_items']} items, {res['n_persons']} persons; "
        f"log-likelihood {res['loglik']:.3f}, BIC {res['BIC']:.1f}"
        + (f"; M2 {m2['M2']:.2f} (df {m2['df']}), RMSEA {m2['RMSEA']:.3f}" if m2 else "")
    )
    done(path, json=json_out)


@app.command("irt-compare")
def irt_compare(
    real: Annotated[Path, typer.Argument(dir_okay=False, help="Real students' score table.")],
    simulated: Annotated[
        Path, typer.Argument(dir_okay=False, help="Simulated students' score table.")
    ],
    model: ModelOption = "2pl",
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    json_out: JsonOption = False,
) -> None:
    """Item parameters of real and simulated students side by side, with intervals and the
    correlations across items (does the simulation reproduce ordering and discrimination?)."""
    from ..items.irt_pipeline import irt_compare_run

    path = out_dir(out, "items irt-compare", overwrite, inputs=())
    res = irt_compare_run(path, real, simulated, model=model)
    b = next(c for c in res["correlations"] if c["parameter"] == "b" and c["method"] == "pearson")
    say(f"{res['n_items']} common items: r(b) = {b['r']:.3f} [{b['low']:.3f}, {b['high']:.3f}]")
    done(path, json=json_out)
