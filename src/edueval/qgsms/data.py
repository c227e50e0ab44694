"""The QG-SMS inputs, read and checked: a pairs table against the items, and judgements tables.

Each reader takes a path, the user's own DataFrame or a list of records (one dict per row) and
checks it as ``qgsms run`` / ``qgsms score`` check their files (:mod:`edueval.tables` schemas;
one-line :class:`~edueval.io.InputError`, naming the file and line, or ``"pairs DataFrame"``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..io import InputError, as_table, line_of, shown, to_numbers
from ..items.pairs import DIMENSIONS
from ..tables import Col, Schema, Table, takes_tables

__all__ = ["JUDGEMENTS_SCHEMA", "PAIRS_SCHEMA", "as_source", "read_judgements", "read_pairs"]

_PAIR_NUMBERS = ("measure_q1", "measure_q2", "diff", "alpha")
_PAIR_TEXT = ["pair_id", "q1", "q2", "better", "target_topic"]
_JUDGEMENT_TEXT = ["method", "pair_id", "a", "b", "better", "chosen", "verdict"]

#: A pairs file, as ``items pairs`` writes it: closed (a misspelt ``measure_q1`` is refused, not
#: read as "no measure"); one row per ``pair_id``; ``better`` or ``label`` says which question
#: is better; the numbers may be empty but never text.
PAIRS_SCHEMA = Schema(
    "pairs file",
    (Col("pair_id", "id"), Col("dimension", "text"), Col("material", "raw", required=False),
     Col("q1", "id"), Col("q2", "id"), Col("label", "raw", required=False),
     Col("better", "raw", required=False), Col("target_topic", "raw", required=False),
     *(Col(c, "raw", required=False) for c in _PAIR_NUMBERS)),
    key=("pair_id",),
    closed=True,
)  # fmt: skip

#: ``judgements.csv`` of ``qgsms run``, read back by ``qgsms score``: open (``sim_*`` columns
#: vary with the method); one row per method, pair and order; ``correct`` 0/1 and, like
#: ``chosen``, consistent with ``verdict``, ``a``, ``b`` and ``better`` (checked by
#: :func:`_check_judgements`).
JUDGEMENTS_SCHEMA = Schema(
    "judgements file",
    (Col("method", "id"), Col("pair_id", "id"), Col("dimension", "text"),
     Col("order", "integer", low=1, high=2), Col("a", "id"), Col("b", "id"), Col("better", "id"),
     Col("verdict", "raw"), Col("chosen", "raw"), Col("correct", "binary"),
     Col("status", "text"), Col("diff", "raw")),
    key=("method", "pair_id", "order"),
)  # fmt: skip


#: The gates of the pairs and judgements tables (:func:`takes_tables`): the readers check them
#: through their schemas; JUDGEMENTS checks the header of a judgements frame the scoring takes.
PAIRS = Table.of(PAIRS_SCHEMA, "pairs", self_checked=True)
JUDGEMENTS_READ = Table.of(JUDGEMENTS_SCHEMA, "judgements", self_checked=True, also=(list, tuple))
JUDGEMENTS = Table.of(JUDGEMENTS_SCHEMA, "judgements", paths=False)
#: the items as :func:`edueval.items.read_items` returns them
READ_ITEMS = Table("items", ("item", "material", "answer"), paths=False)


def _is_records(data: Any) -> bool:
    return (isinstance(data, Sequence) and not isinstance(data, (str, bytes)) and len(data) > 0
            and all(isinstance(r, Mapping) for r in data))  # fmt: skip


def as_source(data: Any) -> str | Path | pd.DataFrame:
    """A path or a DataFrame as the readers take it: a list of records becomes a DataFrame."""
    return pd.DataFrame.from_records(list(data)) if _is_records(data) else data


def _optional_numbers(df: pd.DataFrame, columns: tuple[str, ...]) -> None:
    """Refuse a cell of ``columns`` that is neither empty nor a finite number."""
    for c in columns:
        if c not in df.columns:
            continue
        values = to_numbers(df[c]).to_numpy(dtype=float)
        bad = ~np.isfinite(values) & df[c].notna().to_numpy()
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            raise InputError(f"expected a finite number or an empty cell, got {shown(df[c].iloc[pos])}",
                             file=df.attrs.get("file"), line=line_of(df, pos),
                             column=c)  # fmt: skip


def _text(value: Any) -> str:
    """A cell as text ('' when empty)."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    return value if isinstance(value, str) else str(value)


def _pair_row(r: dict, checked: dict, by_id: pd.DataFrame, file: str | None,
              line: int | None) -> dict:  # fmt: skip
    """One checked pair (``r`` as given, ``checked`` its identifiers as text)."""
    pid, q1, q2 = checked["pair_id"], checked["q1"], checked["q2"]
    d = str(checked["dimension"]).strip().upper()
    if d not in DIMENSIONS:
        raise InputError(f"dimension must be TC, DF, DC or DE, got {shown(r['dimension'])}",
                         file=file, line=line, column="dimension")  # fmt: skip
    for c, q in (("q1", q1), ("q2", q2)):
        if q not in by_id.index:
            raise InputError(f"question {q!r} is not in the items file", file=file, line=line,
                             column=c)  # fmt: skip
    if q1 == q2:
        raise InputError("a pair needs two different questions", file=file, line=line)
    m1, m2 = by_id.at[q1, "material"], by_id.at[q2, "material"]
    if m1 != m2:
        raise InputError(
            f"pair {pid!r}: questions {q1!r} (material {m1!r}) and {q2!r} (material {m2!r}) "
            "come from different learning materials; a pair must share one",
            file=file,
            line=line,
        )
    given = _text(r.get("better"))
    better: str | None = given
    if not given.strip():
        lab = str(r.get("label", "")).strip()
        better = {"1": q1, "2": q2, "1.0": q1, "2.0": q2}.get(lab)
    if better not in (q1, q2):
        raise InputError(f"pair {pid!r}: the better question must be q1 or q2 (label 1 or 2)",
                         file=file, line=line)  # fmt: skip
    topic = _text(r.get("target_topic"))
    topic = topic if topic.strip() else ""
    if d == "TC" and not topic:
        raise InputError(f"pair {pid!r}: a TC pair needs a target_topic", file=file, line=line,
                         column="target_topic")  # fmt: skip
    diff = r.get("diff")
    diff = float(diff) if diff is not None and np.isfinite(to_numbers(diff)) \
        else np.nan  # fmt: skip
    mq = [to_numbers(r.get(f"measure_{q}")) for q in ("q1", "q2")]
    return {"pair_id": pid, "dimension": d, "material": m1, "q1": q1, "q2": q2,
            "better": better, "target_topic": topic, "diff": diff,
            "measure_q1": float(mq[0]), "measure_q2": float(mq[1])}  # fmt: skip


@takes_tables(pairs=PAIRS, items=READ_ITEMS)
def read_pairs(pairs: str | Path | pd.DataFrame | Sequence[Mapping], items: pd.DataFrame
               ) -> pd.DataFrame:  # fmt: skip
    """Read and check pairs (a file, a DataFrame or records) against the items, as
    :func:`edueval.items.read_items` returns them: same material, known questions, labels."""
    df = as_table(as_source(pairs), name="pairs", text_columns=_PAIR_TEXT)
    file = df.attrs.get("file")
    PAIRS_SCHEMA.check_header(df)
    if "better" not in df.columns and "label" not in df.columns:
        raise InputError("expected a 'better' or a 'label' column (which question is better)",
                         file=file)  # fmt: skip
    checked = PAIRS_SCHEMA.validate(df)
    _optional_numbers(df, _PAIR_NUMBERS)
    by_id = items.set_index("item")
    ids = checked[["pair_id", "dimension", "q1", "q2"]].to_dict("records")
    rows = [_pair_row(r, ids[pos], by_id, file, line_of(df, pos))
            for pos, r in enumerate(df.to_dict("records"))]  # fmt: skip
    return pd.DataFrame(rows)


def _check_judgements(df: pd.DataFrame, checked: pd.DataFrame) -> None:
    """Refuse a judgement whose ``chosen`` or ``correct`` is not what its ``verdict`` says:
    ``chosen`` is ``a`` for verdict a, ``b`` for verdict b and empty otherwise, and ``correct``
    is 1 exactly when ``chosen`` is the better question (``qgsms score`` counts ``correct``)."""
    verdict = checked["verdict"].astype(object).where(checked["verdict"].notna(), "")
    chosen = checked["chosen"].astype(object).where(checked["chosen"].notna(), "")
    verdict, chosen = verdict.astype(str).to_numpy(), chosen.astype(str).to_numpy()
    a, b, better = (checked[c].to_numpy() for c in ("a", "b", "better"))
    problems = [
        ("verdict", ~np.isin(verdict, ["a", "b", ""]), lambda k: "expected a, b or an empty "
         f"cell, got {shown(verdict[k])}"),
        ("chosen", chosen != np.where(verdict == "a", a, np.where(verdict == "b", b, "")),
         lambda k: f"chosen {chosen[k]!r} contradicts verdict {verdict[k]!r} (a = {a[k]!r}, "
         f"b = {b[k]!r})"),
        ("correct", checked["correct"].to_numpy() != ((chosen != "") & (chosen == better)),
         lambda k: f"correct={int(checked['correct'].iloc[k])} contradicts chosen {chosen[k]!r} "
         f"and better {better[k]!r}"),
    ]  # fmt: skip
    for column, bad, message in problems:
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise InputError(message(k) + (f" ({int(bad.sum())} such rows in all)"
                                           if bad.sum() > 1 else ""),
                             file=df.attrs.get("file"), line=line_of(df, k),
                             column=column)  # fmt: skip


@takes_tables(sources=JUDGEMENTS_READ)
def read_judgements(
    sources: str | Path | pd.DataFrame | Sequence[Mapping] | Iterable[str | Path | pd.DataFrame],
) -> pd.DataFrame:
    """One judgements table from one or more ``judgements.csv`` (paths, DataFrames, or one list
    of records), each checked as ``qgsms score`` checks it; a method judging the same pair in the
    same order twice across them is refused."""
    if isinstance(sources, (str, Path, pd.DataFrame)) or _is_records(sources):
        batch = [sources]  # one table
    else:
        batch = list(sources)
    frames = []
    for source in batch:
        df = as_table(as_source(source), name="judgements", text_columns=_JUDGEMENT_TEXT)
        _check_judgements(df, JUDGEMENTS_SCHEMA.validate(df))
        frames.append(df)
    if not frames:
        raise InputError("no judgements given")
    j = pd.concat(frames, ignore_index=True)
    for col in ("step", "error"):
        if col not in j.columns:
            j[col] = ""
    j["step"] = j["step"].astype(object).where(j["step"].notna(), "")
    dup = j.duplicated(["method", "pair_id", "order"])
    if dup.any():
        r = j[dup].iloc[0]
        raise InputError(f"method {r['method']!r} judged pair {r['pair_id']!r} (order "
                         f"{r['order']}) twice across the files")  # fmt: skip
    return j
