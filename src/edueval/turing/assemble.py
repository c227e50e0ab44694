"""``turing assemble``: per-student Phase-2 MCQs from the AI, human-expert and random distractors.

Inputs, joined on ``(student, question)`` (``question`` = the Phase-1 question of the tuple):

* AI: ``distractors.csv`` of ``turing generate`` (``student, question, related_question,
  related_correct, ai_distractor`` and the statuses ``generator_status, key_check, ai_status``;
  an older file's ``status`` is read as ``ai_status``). Which tuples become MCQs, and what a
  missing AI distractor counts as:

  - no q′ (``generator_status`` not ``ok``): no MCQ, counted (``tuples_without_question``) - the
    same for every source, since no source wrote q′;
  - q′'s key disputed (``key_check = disagree``): no MCQ unless ``keep_disputed`` (a wrong key
    would score a right answer as a distractor); counted (``excluded_key_disputed``). To keep
    one after checking it by hand, correct ``related_correct`` and set ``key_check`` to
    ``reviewed``;
  - no usable AI distractor (``ai_status`` ``failed``, ``unparseable`` or ``invalid``): **the MCQ
    is still shown**, with the correct answer and the human and random distractors; ``ai_missing``
    says why, ``position_ai`` is empty, and ``turing analyze`` counts that MCQ as one where the
    AI's distractor was not chosen (a miss: the AI's share is taken over every MCQ, not only over
    those it answered). Dropping such tuples would drop them for both sources and inflate p_AI;
* human: a CSV from the experts (``worksheet.csv`` of ``turing generate`` filled in), ``student,
  question, human_distractor`` - one row for every MCQ (a missing one is an error naming it);
* random (optional): ``student, question, random_distractor``; without it a plausible random
  distractor is made from q′'s correct answer - a nearby number (±1, ±2, ±10 in the last decimal
  place of the answer, units kept) that differs from every other option, drawn with the seed.

Duplicates (the documented rule, also used by ``turing simulate``): options are compared by value
(:func:`~.data.same_answer`: ``0.5`` = ``1/2``, ``25 apples`` = ``25``). A distractor equal to the
correct answer is not shown and is recorded in ``dropped`` (that source did not produce a
distractor for this student). Distractors equal to each other are shown once, labelled with every
source that proposed them (``ai+human``); a student choosing it counts for each of those sources
(``turing analyze`` reads ``ai+human``). So an MCQ has 4 options, or fewer when sources coincide
or one is missing.

Order: each MCQ's options are shuffled with a generator seeded by ``seed``; ``option_1..4``,
``source_1..4`` and ``position_<source>`` (1-based, empty if not shown) are recorded. Chosen
positions map back to sources with :func:`choices_from_positions`.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import InputError, line_of, read_table
from ..tables import Col, Schema, Table, takes_tables
from .data import Number, parse_number, same_answer

__all__ = [
    "AI_SCHEMA",
    "HUMAN_SCHEMA",
    "RANDOM_SCHEMA",
    "assemble_mcqs",
    "choices_from_positions",
    "nearby_distractor",
    "read_source",
]

_ORDER = ("correct", "ai", "human", "random")


def _source_schema(what: str, *columns: Col) -> Schema:
    """A source's table: ``student`` and ``question`` ids taken exactly as written, one row per
    (student, question).  Open: the statuses and notes beside them are kept (a worksheet has
    the tuple's columns), but a near miss of a missing column is refused."""
    return Schema(what, (Col("student", "id"), Col("question", "id"), *columns),
                  key=("student", "question"))  # fmt: skip


#: ``distractors.csv`` of ``turing generate`` (statuses optional: an older file lacks them; when
#: given, every row has one -- an empty status would read as "ok" or as no AI distractor).
AI_SCHEMA = _source_schema(
    "AI distractors from turing generate",
    Col("related_question"), Col("related_correct"), Col("ai_distractor"),
    *(Col(c, "text", required=False) for c in ("generator_status", "ai_status", "status")),
    Col("key_check", required=False),
)  # fmt: skip
#: The experts' filled-in worksheet (a row may be empty where its tuple is not shown).
HUMAN_SCHEMA = _source_schema("human distractors", Col("human_distractor"))
#: Random distractors (optional input), each non-empty.
RANDOM_SCHEMA = _source_schema("random distractors", Col("random_distractor", "text"))


def _fmt(v: Fraction, n: Number) -> str:
    """``v`` written the way ``n`` was: as a fraction, with ``n``'s decimal places, or whole."""
    if v.denominator == 1:
        return str(v.numerator)
    if n.fraction:
        return f"{v.numerator}/{v.denominator}"
    return f"{float(v):.{n.places or 2}f}"


def nearby_distractor(correct: str, taken: list[str], rng: np.random.Generator) -> str | None:
    """A plausible random distractor: ``correct`` with its number moved by ±1, ±2 or ±10 units of
    its last written place (``1/den`` for a fraction), units and signs around it kept (``25
    apples`` -> ``26 apples``), equal to none of ``taken``; ``None`` for a non-numeric answer."""
    n = parse_number(correct)
    if n is None:
        return None
    if n.fraction:
        unit = Fraction(1, n.value.denominator)
    elif n.places:
        unit = Fraction(1, 10**n.places)
    else:
        unit = Fraction(1)
    start, end = n.span
    cands = []
    for s in (1, -1, 2, -2, 10, -10):
        txt = correct[:start] + _fmt(n.value + s * unit, n) + correct[end:]
        if not any(same_answer(txt, t) for t in [correct, *taken]):
            cands.append(txt)
    return cands[int(rng.integers(len(cands)))] if cands else None


def read_source(path: Path, schema: Schema) -> pd.DataFrame:
    """A source's table, checked by its schema; its columns as read (ids exactly as written)."""
    df = read_table(path, text_columns=[c.name for c in schema.columns if c.required])
    schema.validate(df)
    return df


def _filled(value) -> bool:
    """A worksheet cell the expert filled in (rows of excluded tuples may stay empty)."""
    return not pd.isna(value) and bool(str(value).strip())


def _statuses(ai: pd.DataFrame) -> tuple[pd.Series, pd.Series, pd.Series]:
    """``(generator_status, key_check, ai_status)`` of every AI row (older files lack some)."""

    def col(name: str, default: str) -> pd.Series:
        if name in ai.columns:
            return ai[name].fillna("").astype(str).str.strip()
        return pd.Series(default, index=ai.index)

    ai_status = col("ai_status", "") if "ai_status" in ai.columns else col("status", "ok")
    return col("generator_status", "ok"), col("key_check", ""), ai_status


def _options(
    correct: str, proposals: dict[str, str]
) -> tuple[list[tuple[str, list[str]]], list[str]]:
    """The MCQ's options ``(text, sources)`` (equal distractors merged) and the sources whose
    distractor equals the correct answer (not shown)."""
    options: list[tuple[str, list[str]]] = [(correct, ["correct"])]
    equal_to_correct: list[str] = []
    for src in ("ai", "human", "random"):
        if src not in proposals:
            continue
        text = proposals[src]
        if same_answer(text, correct):
            equal_to_correct.append(src)
            continue
        for opt in options[1:]:
            if same_answer(opt[0], text):
                opt[1].append(src)
                break
        else:
            options.append((text, [src]))
    return options, equal_to_correct


def _mcq_row(r, options, order) -> dict:
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
    return row


#: The gates of the three distractor tables and of the assembled MCQs (:func:`takes_tables`).
AI = Table.of(AI_SCHEMA, "AI distractors", paths=False)
HUMAN = Table.of(HUMAN_SCHEMA, "human distractors", paths=False)
RANDOM = Table.of(RANDOM_SCHEMA, "random distractors", paths=False)
MCQS = Table("mcqs", ("student", "question", "source_1", "source_2", "source_3", "source_4"),
             paths=False)  # fmt: skip
POSITIONS = Table("responses", ("student", "question", "position"), paths=False)


@takes_tables(ai=AI, human=HUMAN, random=RANDOM)
def assemble_mcqs(
    ai: pd.DataFrame,
    human: pd.DataFrame,
    random: pd.DataFrame | None,
    *,
    seed: int,
    keep_disputed: bool = False,
) -> tuple[pd.DataFrame, dict]:
    """The MCQ table and counts (see the module docstring for which tuples become MCQs and what
    a missing AI distractor counts as)."""
    rng = np.random.default_rng(seed)
    gen_status, checks, ai_status = _statuses(ai)
    has_q = gen_status == "ok"
    disputed = has_q & (checks == "disagree")
    use = has_q & (keep_disputed | ~disputed)
    if not use.any():
        raise InputError(
            "no tuple with a usable question q' (generator_status 'ok' and, unless "
            "keep_disputed=, a key the check did not dispute)",
            file=ai.attrs.get("file"),
        )
    hmap = {(r.student, r.question): r for r in human.itertuples() if _filled(r.human_distractor)}
    rmap = {(r.student, r.question): r for r in random.itertuples()} if random is not None else {}
    rows, dropped = [], []
    for i, r in enumerate(ai.itertuples()):
        if not use.iloc[i]:
            continue
        key = (r.student, r.question)
        h = hmap.get(key)
        if h is None:
            raise InputError(
                f"no human distractor for student {r.student!r}, question {r.question!r}",
                file=human.attrs.get("file"),
            )
        correct = str(r.related_correct).strip()
        proposals = {"human": str(h.human_distractor).strip()}
        missing = "" if ai_status.iloc[i] == "ok" else (ai_status.iloc[i] or "missing")
        if not missing and not _filled(r.ai_distractor):
            missing = "empty"
        if missing:
            dropped.append({"student": r.student, "question": r.question, "source": "ai",
                            "reason": f"no AI distractor ({missing}): counted as not chosen"})  # fmt: skip
        else:
            proposals["ai"] = str(r.ai_distractor).strip()
        if key in rmap:
            proposals["random"] = str(rmap[key].random_distractor).strip()
        else:
            rd = nearby_distractor(correct, list(proposals.values()), rng)
            if rd is None:
                raise InputError(
                    f"cannot make a random distractor for the non-numeric answer {correct!r} "
                    f"(student {r.student!r}, question {r.question!r}); give random= (a table of random distractors)"
                )
            proposals["random"] = rd
        options, equal = _options(correct, proposals)
        dropped += [{"student": r.student, "question": r.question, "source": src,
                     "reason": "equal to the correct answer"} for src in equal]  # fmt: skip
        row = _mcq_row(r, options, rng.permutation(len(options)))
        row["key_check"] = checks.iloc[i]
        row["ai_missing"] = missing
        rows.append(row)
    table = pd.DataFrame(rows)
    used = set(zip(table["student"], table["question"], strict=True))
    n_equal = sum(d["reason"] == "equal to the correct answer" for d in dropped)
    stats = {
        "n_mcqs": len(table),
        "n_students": int(table["student"].nunique()),
        "mcqs_without_ai": int((table["ai_missing"] != "").sum()),
        "ai_missing_by_status": {
            k: int(v)
            for k, v in table.loc[table["ai_missing"] != "", "ai_missing"].value_counts().items()
        },
        "tuples_without_question": int((~has_q).sum()),
        "excluded_key_disputed": 0 if keep_disputed else int(disputed.sum()),
        "kept_key_disputed": int(disputed.sum()) if keep_disputed else 0,
        "dropped_equal_to_correct": n_equal,
        "shared_options": int((table["n_options"] < 4).sum()),
        "human_rows_without_ai": len(set(hmap) - used),
    }
    dropped_df = pd.DataFrame(dropped, columns=["student", "question", "source", "reason"])
    return table, {"stats": stats, "dropped": dropped_df}


@takes_tables(mcqs=MCQS, responses=POSITIONS)
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
