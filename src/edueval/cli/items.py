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

app = typer_app(
    "Test-item analysis (difficulty, discrimination, distractors), labelled question pairs, "
    "a synthetic classroom."
)

ResponsesArg = Annotated[
    Path,
    typer.Argument(
        dir_okay=False,
        help="Responses CSV (student, item, choice | correct); or, with no ITEMS, a QG-SMS "
        "question file (JSON/JSONL with q_id, learning_mat_id, q_text, answer, learning_mat, "
        "topic, stud_perf).",
    ),
]
ItemsArg = Annotated[
    Path | None,
    typer.Argument(
        dir_okay=False, help="Items JSONL (item, text, choices, answer, material, topic)."
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
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    json_out: JsonOption = False,
) -> None:
    """Per item: DF, DC (item-total; item-rest; upper/lower 27%), distractor rates, DE."""
    from ..items.pipeline import analyze_run

    path = out_dir(out, "items analyze", overwrite, inputs=())
    res = analyze_run(path, responses, items, threshold=threshold)
    m = res["mean"]
    say(
        f"{res['n_items']} items, {res['n_students']} students: mean DF {m['DF']:.3f}, "
        f"DC {m['DC']:.3f}, DE {m['DE'] if m['DE'] is None else round(m['DE'], 2)}"
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
    )
    say(
        f"{res['n_pairs']} pairs: " + ", ".join(f"{d} {n}" for d, n in res["per_dimension"].items())
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
