"""Phase-1 data: open answers, the misconception tuples they contain, and how answers compare.

Phase 1 file: ``student, question, answer, correct_answer`` (CSV/JSONL/JSON), one row per open
answer. A *misconception tuple* (the paper's ``A(s, q) ≠ C(q)``) is a row whose answer differs from
the correct answer under :func:`same_answer`. Optional columns are kept (e.g. ``family``/``params``
from :func:`edueval.turing.simulate.phase1_sample`).

How two answers compare (:func:`same_answer`; also used to drop a distractor equal to q′'s key and
to merge equal distractors in ``turing assemble``):

* When both read as **one number** (:func:`parse_number`) they are compared by value. Text around
  the number is a unit or label and is ignored (``25 apples`` = ``25`` = ``x = 25``); ``$`` and
  thousands commas are ignored (``$2,500`` = ``2500``); fractions, mixed numbers (``1 1/2``),
  decimals, percents and multiples of π are read. A percent also matches its fraction of one
  (``25%`` = ``0.25`` = ``25``). Values agree when they are equal, or when one is written as a
  decimal with ``d >= 2`` decimal places (:data:`MIN_ROUNDING_PLACES`) and the other rounds to
  it at ``d`` places (``|a - b| <= 0.5·10^-d``, in the unit written: ``33.33%`` = ``1/3``): so
  ``0.8333`` and ``0.83`` are ``5/6``, but ``0.8`` is not ``5/6`` and ``3`` is not ``3.4`` (an
  integer or a one-place decimal is never read as a rounded value). Text with two or more numbers
  (``3 and 4``, ``2,5``) is not one number.
* Otherwise as normalised text: case-folded, whitespace collapsed, a final full stop dropped.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pandas as pd

from ..io import InputError, as_table
from ..tables import Col, Schema, Table, takes_tables

__all__ = [
    "MIN_ROUNDING_PLACES",
    "PHASE1_COLUMNS",
    "PHASE1_SCHEMA",
    "Number",
    "misconception_tuples",
    "parse_number",
    "read_phase1",
    "same_answer",
    "same_number",
]

PHASE1_COLUMNS = ("student", "question", "answer", "correct_answer")

#: The Phase-1 file: ``student`` and ``question`` ids taken exactly as written (no surrounding
#: spaces, NUL or other control characters, JSON null/list/object/true/false: ``s1\0`` is not a
#: second student ``s1``), one answer per (student, question), answers non-empty.  Open: other
#: columns (``family``, ``params`` of a simulated sample) are kept, but a near miss of a missing
#: column (``correct answer``) is refused.
PHASE1_SCHEMA = Schema(
    "Phase-1 open answers",
    (Col("student", "id"), Col("question", "id"), Col("answer", "text"),
     Col("correct_answer", "text")),
    key=("student", "question"),
)  # fmt: skip

#: A decimal written with at least this many places is read as a rounded value (see module doc).
MIN_ROUNDING_PLACES = 2

_UNSIGNED = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+"
_NUMBER_RE = re.compile(
    r"(?<![\w.])(?P<sign>[-+])?\s*(?P<dollar>\$)?\s*"
    r"(?:(?:(?P<whole>\d+)\s+(?P<mnum>\d+)\s*/\s*(?P<mden>\d+)"  # mixed number: 1 1/2
    rf"|(?P<num>{_UNSIGNED})(?:\s*/\s*(?P<den>{_UNSIGNED}))?)"
    r"(?P<pct>\s*(?:%|percent\b))?"
    r"(?P<pi>\s*(?:π|pi\b))?"
    r"|(?P<lone>π|pi\b))"  # π on its own: coefficient 1
    r"(?:(?<=π|i)\s*/\s*(?P<piden>\d+))?"  # π/4, 25π/4
)


@dataclass(frozen=True)
class Number:
    """One number read from an answer.

    ``value`` is the number as written (25 for ``25%``, the coefficient 25 for ``25π``);
    ``places`` the decimal places shown (``None`` for integers and fractions); ``span`` where
    the digits sit in the text (so that a nearby number can be written in their place)."""

    value: Fraction
    places: int | None = None
    percent: bool = False
    pi: bool = False
    fraction: bool = False
    span: tuple[int, int] = (0, 0)


def _normalise(text: str) -> str:
    # same length as the input, so that match spans index the original text
    return str(text).replace("−", "-").replace("–", "-").lower()


def _to_fraction(digits: str) -> Fraction:
    return Fraction(digits.replace(",", ""))


def _from_match(m: re.Match) -> Number | None:
    sign = -1 if m.group("sign") == "-" else 1
    places = None
    fraction = False
    if m.group("lone") is not None:
        value, span = Fraction(1), (m.start("lone"), m.start("lone"))
    elif m.group("whole") is not None:
        den = int(m.group("mden"))
        if den == 0:
            return None
        value = int(m.group("whole")) + Fraction(int(m.group("mnum")), den)
        fraction, span = True, (m.start("whole"), m.end("mden"))
    else:
        value = _to_fraction(m.group("num"))
        fraction = m.group("den") is not None
        if fraction:
            divisor = _to_fraction(m.group("den"))
            if divisor == 0:
                return None
            value /= divisor
        elif "." in m.group("num"):
            places = len(m.group("num").split(".")[1])
        span = (m.start("num"), m.end("den") if fraction else m.end("num"))
    if m.group("sign"):
        span = (m.start("sign"), span[1])
    pi = m.group("pi") is not None or m.group("lone") is not None
    if m.group("piden"):
        if int(m.group("piden")) == 0:
            return None
        value /= int(m.group("piden"))
    return Number(sign * value, places, bool(m.group("pct")), pi, fraction, span)


def parse_number(text: str) -> Number | None:
    """The one number in ``text`` (see the module docstring), or ``None`` when there is none or
    more than one."""
    s = _normalise(text)
    found = list(_NUMBER_RE.finditer(s))
    if len(found) != 1:
        return None
    rest = s[: found[0].start()] + s[found[0].end() :]
    if re.search(r"\d|π|\bpi\b", rest):
        return None
    return _from_match(found[0])


def _candidates(n: Number) -> list[tuple[float | Fraction, Fraction | None]]:
    """``(value, half-width)`` pairs this number may stand for; half-width ``None`` = exact."""
    half = (
        Fraction(1, 2 * 10**n.places)
        if n.places is not None and n.places >= MIN_ROUNDING_PLACES
        else None
    )
    base: float | Fraction = float(n.value) * math.pi if n.pi else n.value
    if not n.percent:
        return [(base, half)]
    return [(base / 100, None if half is None else half / 100), (base, half)]


def _agree(
    a: float | Fraction, ha: Fraction | None, b: float | Fraction, hb: Fraction | None
) -> bool:
    """Equal, or within the half-width of the more coarsely written of the two."""
    exact = isinstance(a, Fraction) and isinstance(b, Fraction)
    if exact and a == b:
        return True
    tol = max((h for h in (ha, hb) if h is not None), default=None)
    if tol is None:  # two multiples of π written exactly: equal up to float noise
        return not exact and math.isclose(float(a), float(b), rel_tol=1e-12)
    if isinstance(a, Fraction) and isinstance(b, Fraction):  # exact
        return abs(a - b) <= tol
    return abs(float(a) - float(b)) <= float(tol) * (1 + 1e-12)


def same_number(a: Number, b: Number) -> bool:
    """Whether two numbers agree by value (module docstring: percents, rounding, π).  Past
    float's range (a 400-digit answer) only numbers written with the same value agree."""
    try:
        if a.percent and b.percent:
            pairs = [(_candidates(a)[1], _candidates(b)[1])]
        else:
            pairs = [(x, y) for x in _candidates(a) for y in _candidates(b)]
        return any(_agree(x, hx, y, hy) for (x, hx), (y, hy) in pairs)
    except OverflowError:  # a multiple of π or a comparison with a float, beyond 1e308
        return (a.value, a.pi, a.percent) == (b.value, b.pi, b.percent)


def _text(s: str) -> str:
    return " ".join(str(s).split()).casefold().rstrip(".").strip()


def same_answer(a: str, b: str) -> bool:
    """Whether two answers agree: by value when both read as one number, else as normalised text
    (the rules in the module docstring)."""
    if _text(a) == _text(b):
        return True
    na, nb = parse_number(a), parse_number(b)
    return na is not None and nb is not None and same_number(na, nb)


#: The gates of a Phase-1 table (:func:`takes_tables`): as given (the reader checks it) and as
#: read (for the functions that take it read).
PHASE1 = Table.of(PHASE1_SCHEMA, "phase1", self_checked=True)
READ_PHASE1 = Table.of(PHASE1_SCHEMA, "phase1", paths=False)


@takes_tables(data=PHASE1)
def read_phase1(data: str | Path | pd.DataFrame | list[dict]) -> pd.DataFrame:
    """Read and validate a Phase-1 file (student and question ids kept as text), or the user's
    own DataFrame or records (validated the same way, errors naming "phase1 DataFrame"; the
    frame itself is not modified)."""
    df = as_table(data, name="phase1", text_columns=list(PHASE1_COLUMNS))
    PHASE1_SCHEMA.validate(df)
    return df


@takes_tables(phase1=READ_PHASE1)
def misconception_tuples(phase1: pd.DataFrame) -> pd.DataFrame:
    """The rows whose answer is wrong under :func:`same_answer` (the paper's (student, question,
    incorrect answer) tuples, ``A(s, q) ≠ C(q)``): ``25 apples`` for ``25`` or ``0.8333`` for
    ``5/6`` is not one."""
    wrong = [
        not same_answer(a, c)
        for a, c in zip(phase1["answer"], phase1["correct_answer"], strict=True)
    ]
    out = phase1[wrong].copy()
    if out.empty:
        raise InputError(
            "no misconception tuples: every Phase-1 answer equals its correct answer",
            file=phase1.attrs.get("file"),
        )
    return out
