"""``turing assemble``: per-student Phase-2 MCQs from the AI, human-expert and random distractors.

Inputs, joined on ``(student, question)`` (``question`` = the Phase-1 question of the tuple):

* AI: ``distractors.csv`` of ``turing generate`` (``student, question, related_question,
  related_correct, ai_distractor, status``); rows whose status is not ``ok`` are left out and
  counted;
* human: a CSV from the experts, ``student, question, human_distractor`` - one row for every AI
  tuple (a missing one is an error naming the tuple);
* random (optional): ``student, question, random_distractor``; without it a plausible random
  distractor is made from q′'s correct answer - a nearby number (±1, ±2, ±10 in the last decimal
  place of the answer) that differs from every other option, drawn with the run's seed.

Duplicates (the documented rule, also used by ``turing simulate``): options are compared by value
(``0.5`` = ``1/2``). A distractor equal to the correct answer is not shown and is recorded in
``dropped`` (that source did not produce a distractor for this student). Distractors equal to
each other are shown once, labelled with every source that proposed them (``ai+human``); a
student choosing it counts for each of those sources (``turing analyze`` reads ``ai+human``).
So an MCQ has 4 options, or fewer when sources coincide.

Order: each MCQ's options are shuffled with a generator seeded by ``seed``; ``option_1..4``,
``source_1..4`` and ``position_<source>`` (1-based, empty if not shown) are recorded. Chosen
positions map back to sources with :func:`choices_from_positions`.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import InputError, line_of, read_table, require_columns, text_column
from ..report import Report
from ..runs import RunDir
from .data import _value, same_answer

__all__ = ["assemble_mcqs", "assemble_run", "choices_from_positions", "nearby_distractor"]

_ORDER = ("correct", "ai", "human", "random")


def _fmt(v: Fraction, like: str) -> str:
    if v.denominator == 1:
        return str(v.numerator)
    if "/" in like:
        return f"{v.numerator}/{v.denominator}"
    return f"{float(v):.{max(1, len(like.split('.')[-1]) if '.' in like else 2)}f}"


def nearby_distractor(correct: str, taken: list[str], rng: np.random.Generator) -> str | None:
    """A plausible random distractor: a number near ``correct`` equal to none of ``taken``."""
    v = _value(correct)
    if v is None:
        return None
    text = correct.strip().lstrip("$").rstrip("%")
    if "/" in text:
        unit = Fraction(1, v.denominator)
    elif "." in text:
        unit = Fraction(1, 10 ** len(text.split(".")[-1]))
    else:
        unit = Fraction(1)
    prefix = "$" if correct.strip().startswith("$") else ""
    suffix = "%" if correct.strip().endswith("%") else ""
    cands = []
    for s in (1, -1, 2, -2, 10, -10):
        txt = prefix + _fmt(v + s * unit, text) + suffix
        if not any(same_answer(txt, t) for t in [correct, *taken]):
            cands.append(txt)
    return cands[int(rng.integers(len(cands)))] if cands else None


def _read(path: Path, cols: list[str], what: str) -> pd.DataFrame:
    df = read_table(path, text_columns=cols)
    require_columns(df, cols, what=what)
    for c in cols:
        if c in ("student", "question"):
            text_column(df, c, identifier=True)
    if df.duplicated(["student", "question"]).any():
        pos = int(np.flatnonzero(df.duplicated(["student", "question"]).to_numpy())[0])
        raise InputError(
            "duplicate row for the same student and question",
            file=path, line=line_of(df, pos),
        )  # fmt: skip
    return df


def assemble_mcqs(
    ai: pd.DataFrame,
    human: pd.DataFrame,
    random: pd.DataFrame | None,
    *,
    seed: int,
) -> tuple[pd.DataFrame, dict]:
    """The MCQ table and counts (see the module docstring). ``ai`` rows with a non-``ok`` status
    are skipped."""
    rng = np.random.default_rng(seed)
    if "status" in ai.columns:
        ok = ai["status"].astype(str) == "ok"
        skipped = int((~ok).sum())
        ai = ai[ok]
    else:
        skipped = 0
    if ai.empty:
        raise InputError(
            "no usable AI distractors (no row with status 'ok')", file=ai.attrs.get("file")
        )
    hmap = {(r.student, r.question): r for r in human.itertuples()}
    rmap = {(r.student, r.question): r for r in random.itertuples()} if random is not None else {}
    rows = []
    dropped = []
    for r in ai.itertuples():
        key = (r.student, r.question)
        h = hmap.get(key)
        if h is None:
            raise InputError(
                f"no human distractor for student {r.student!r}, question {r.question!r}",
                file=human.attrs.get("file"),
            )
        correct = str(r.related_correct).strip()
        proposals = {"ai": str(r.ai_distractor).strip(), "human": str(h.human_distractor).strip()}
        if key in rmap:
            proposals["random"] = str(rmap[key].random_distractor).strip()
        else:
            rd = nearby_distractor(correct, list(proposals.values()), rng)
            if rd is None:
                raise InputError(
                    f"cannot make a random distractor for the non-numeric answer {correct!r} "
                    f"(student {r.student!r}, question {r.question!r}); pass --random FILE"
                )
            proposals["random"] = rd
        options: list[tuple[str, list[str]]] = [(correct, ["correct"])]
        for src in ("ai", "human", "random"):
            text = proposals[src]
            if same_answer(text, correct):
                dropped.append({"student": r.student, "question": r.question, "source": src})
                continue
            for opt in options[1:]:
                if same_answer(opt[0], text):
                    opt[1].append(src)
                    break
            else:
                options.append((text, [src]))
        order = rng.permutation(len(options))
        row = {"student": r.student, "question": r.question, "related_question": r.related_question}
        pos_of = dict.fromkeys(_ORDER, None)
        for i in range(4):
            if i < len(order):
                text, srcs = options[order[i]]
                row[f"option_{i + 1}"] = text
                row[f"source_{i + 1}"] = "+".join(srcs)
                for s in srcs:
                    pos_of[s] = i + 1
            else:
                row[f"option_{i + 1}"] = ""
                row[f"source_{i + 1}"] = ""
        for s in _ORDER:
            row[f"position_{s}"] = pos_of[s]
        row["n_options"] = len(options)
        rows.append(row)
    extra = set(hmap) - set(zip(ai["student"], ai["question"], strict=True))
    table = pd.DataFrame(rows)
    stats = {
        "n_mcqs": len(table),
        "n_students": int(table["student"].nunique()),
        "ai_rows_skipped": skipped,
        "dropped_equal_to_correct": len(dropped),
        "shared_options": int((table["n_options"] < 4).sum()),
        "human_rows_without_ai": len(extra),
    }
    return table, {"stats": stats, "dropped": pd.DataFrame(dropped)}


def choices_from_positions(mcqs: pd.DataFrame, responses: pd.DataFrame) -> pd.DataFrame:
    """Phase-2 rows ``student, question, chosen, position`` for ``turing analyze`` from responses
    ``student, question, position`` (the 1-based option the student picked)."""
    src = mcqs.set_index(["student", "question"])
    out = []
    for pos, r in enumerate(responses.itertuples()):
        key = (r.student, r.question)
        if key not in src.index:
            raise InputError(
                f"no MCQ for student {r.student!r}, question {r.question!r}",
                file=responses.attrs.get("file"), line=line_of(responses, pos),
            )  # fmt: skip
        chosen = src.loc[key, f"source_{int(r.position)}"]
        if not chosen:
            raise InputError(
                f"position {r.position} was not shown to student {r.student!r}",
                file=responses.attrs.get("file"), line=line_of(responses, pos), column="position",
            )  # fmt: skip
        out.append({"student": r.student, "question": r.question, "chosen": chosen,
                    "position": int(r.position)})  # fmt: skip
    return pd.DataFrame(out)


def assemble_run(
    out: Path,
    ai_path: Path,
    human_path: Path,
    *,
    random_path: Path | None = None,
    seed: int = 0,
) -> dict:
    ai = _read(ai_path, ["student", "question", "related_question", "related_correct",
                         "ai_distractor"], "AI distractors from turing generate")  # fmt: skip
    human = _read(human_path, ["student", "question", "human_distractor"], "human distractors")
    text_column(human, "human_distractor")
    rnd = None
    if random_path is not None:
        rnd = _read(random_path, ["student", "question", "random_distractor"], "random distractors")
        text_column(rnd, "random_distractor")
    inputs = {"ai": ai_path, "human": human_path}
    if random_path is not None:
        inputs["random"] = random_path
    run = RunDir(out, command="turing assemble", params={}, seed=seed, inputs=inputs)
    table, info = assemble_mcqs(ai, human, rnd, seed=seed)
    run.table("mcqs", table)
    if len(info["dropped"]):
        run.table("dropped", info["dropped"])
    rep = Report("Imitation game: Phase-2 MCQs", f"{len(table)} MCQs, seed {seed}")
    rep.section("Counts").table(pd.DataFrame([info["stats"]])).text(
        "Duplicated distractors are shown once and credited to every source that proposed them; "
        "a distractor equal to the correct answer is not shown."
    )
    pos = table[[f"position_{s}" for s in _ORDER]].apply(lambda c: c.value_counts()).fillna(0)
    rep.section("Positions (balance check)").table(pos.reset_index(names="position"))
    rep.section("First MCQs").table(table.head(10))
    run.finish(info["stats"], rep.render())
    return info["stats"]
