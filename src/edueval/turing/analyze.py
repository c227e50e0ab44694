"""``turing analyze``: selection rates, the CI of p_AI − p_Human against ±ε (TOST and the two
"beyond the margin" tests) that decides the verdict, McNemar beside it, superiority over random.

Input (Phase 2): one row per MCQ a student answered, columns ``student, question, chosen``;
``chosen`` is the *source* of the option the student picked: ``correct``, ``ai``, ``human`` or
``random`` - or, when two sources proposed the same distractor and it was shown once (see
:mod:`edueval.turing.assemble`), the sources joined by ``+`` (``ai+human``): the choice counts for
each. Optional columns: ``position`` (1-4, where the chosen option was shown: a position-bias
table is added) and timing columns (``seconds`` or any column whose name starts with ``time``:
median per chosen source).

The statistics (pairing, standard errors, tests, decision rule) are in
:mod:`edueval.turing.stats`; :func:`analyze_choices` returns a :class:`TuringResults` in the
statsmodels style, whose :meth:`~TuringResults.summary` prints everything. Every test is reported
under five kinds - ``naive``, ``boot`` (the default: CR3 + Hall with a design effect of at least
1, each p-value the larger of its t-table and its pairs cluster bootstrap-t value; issue 34),
``cr3`` (CR3, the jackknife variance, with Bell-McCaffrey df and Hall's skewness correction: the
default before), ``cr2`` (the same with CR2's variance) and ``cr1`` (the default before issue
18) - and ``se`` chooses which decides; ``"clustered"`` means the default, ``boot``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..defaults import TURING_SE
from ..io import InputError, as_table, check_unique, line_of, to_numbers
from ..results import RunResults
from ..stats import wilson_interval
from ..tables import Col, Schema, Table, takes_tables
from .stats import (
    CLUSTER_SE,
    DEFAULT_SE,
    DOUBLE_KINDS,
    FIELDS,
    N_BOOT,
    SE_KINDS,
    SE_METHODS,
    VERDICTS,
    BatchTests,
    MeanEstimate,
    batch_tests,
    explain,
)

__all__ = [
    "CHOICES_SCHEMA",
    "SOURCES",
    "TuringResults",
    "analyze_choices",
    "choice_counts",
    "parse_chosen",
    "read_choices",
    "check_phase1",
]

SOURCES = ("correct", "ai", "human", "random")

#: The Phase-2 choices file: ``student`` and ``question`` ids taken exactly as written (no
#: surrounding spaces, NUL or other control characters, JSON null/list/object/true/false),
#: ``chosen`` non-empty (its vocabulary is :func:`parse_chosen`'s); optional ``position`` and
#: timing columns.  Open: other columns are kept, a near miss of a missing one is refused.  The
#: key (one MCQ per student and question) is checked by :func:`_with_indicators`, so that a frame
#: given to :func:`analyze_choices` in Python is held to it too.
CHOICES_SCHEMA = Schema(
    "Phase-2 choices",
    (Col("student", "id"), Col("question", "id"), Col("chosen", "text"),
     Col("position", required=False)),
)  # fmt: skip


def check_margins(eps: float, delta: float, alpha: float) -> None:
    """One-line errors for impossible margins (ε ≤ 0, δ < 0, α outside (0, 1))."""
    if not (eps > 0 and np.isfinite(eps)):
        raise InputError(
            f"eps= must be > 0 (the equivalence margin |p_AI - p_Human| < eps), got {eps}"
        )
    if eps >= 1:
        raise InputError(f"eps= must be < 1 (a difference of proportions), got {eps}")
    if not (0 <= delta < 1):
        raise InputError(f"delta= must be in [0, 1), got {delta}")
    if not (0 < alpha < 1):
        raise InputError(f"alpha= must be in (0, 1), got {alpha}")


def parse_chosen(value: str) -> frozenset[str] | None:
    """``"ai+human"`` -> ``{"ai", "human"}``; None when a token is not a source or ``correct`` is
    combined with another source."""
    tokens = frozenset(t.strip().lower() for t in str(value).split("+"))
    if not tokens or not tokens <= set(SOURCES) or ("correct" in tokens and len(tokens) > 1):
        return None
    return tokens


#: The gates of a Phase-2 choices table (:func:`takes_tables`): as given (the reader checks it)
#: and as read (its ``is_<source>`` indicator columns added).
CHOICES = Table.of(CHOICES_SCHEMA, "choices", self_checked=True)
READ_CHOICES = Table("choices", ("student", "question", "chosen", "is_correct", "is_ai",
                                 "is_human", "is_random"), paths=False)  # fmt: skip


@takes_tables(data=CHOICES)
def read_choices(data: str | Path | pd.DataFrame) -> pd.DataFrame:
    """Read and validate a Phase-2 choices file, or the user's own DataFrame (validated the same
    way, errors naming "choices DataFrame"); adds boolean columns ``is_<source>``."""
    df = as_table(data, name="choices", text_columns=["student", "question", "chosen"])
    CHOICES_SCHEMA.validate(df)
    return _with_indicators(df)


def _with_indicators(df: pd.DataFrame) -> pd.DataFrame:
    parsed = [parse_chosen(v) for v in df["chosen"]]
    bad = [i for i, p in enumerate(parsed) if p is None]
    if bad:
        pos = bad[0]
        raise InputError(
            f"unknown source {df['chosen'].iloc[pos]!r}; expected one of correct, ai, human, "
            "random (or sources joined by '+' for a shared option, e.g. ai+human)"
            + (f" ({len(bad)} bad rows in all)" if len(bad) > 1 else ""),
            file=df.attrs.get("file"),
            line=line_of(df, pos),
            column="chosen",
        )
    check_unique(df, ["student", "question"], what="MCQ for the same student and question")
    out = df.copy()
    out["student"] = out["student"].astype(str)
    for s in SOURCES:
        out[f"is_{s}"] = [s in p for p in parsed]  # type: ignore[operator]  # no None: refused above
    return out


def check_phase1(choices: pd.DataFrame, phase1_path: str | Path) -> None:
    """Every Phase-2 student must have at least one Phase-1 error (answer ≠ correct answer)."""
    from .data import misconception_tuples, read_phase1

    p1 = read_phase1(phase1_path)
    with_error = set(misconception_tuples(p1)["student"])
    for pos, s in enumerate(choices["student"]):
        if s not in with_error:
            raise InputError(
                f"student {s!r} has no Phase-1 error in {phase1_path} (every answer correct or "
                "absent), so they cannot have a conditioned Phase-2 question",
                file=choices.attrs.get("file"),
                line=line_of(choices, pos),
                column="student",
            )


@takes_tables(choices=READ_CHOICES)
def choice_counts(choices: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """Per-student counts ``[G, 8]`` in :data:`~.stats.FIELDS` order, and the student ids."""
    ind = pd.DataFrame(
        {
            "n": 1,
            "C": choices["is_correct"].astype(int),
            "A": choices["is_ai"].astype(int),
            "H": choices["is_human"].astype(int),
            "R": choices["is_random"].astype(int),
        }
    )
    ind["AH"] = ind["A"] * ind["H"]
    ind["AR"] = ind["A"] * ind["R"]
    ind["HR"] = ind["H"] * ind["R"]
    g = ind.groupby(choices["student"].to_numpy(), sort=True)[list(FIELDS)].sum()
    return g.to_numpy(dtype=float), [str(s) for s in g.index]


def _se_kind(se: str) -> str:
    """``se`` as one of :data:`~.stats.SE_KINDS` (``"clustered"`` = the default clustered SE)."""
    kind = DEFAULT_SE if se == "clustered" else se
    if kind not in SE_KINDS:
        raise InputError(
            f"se= must be one of {', '.join(SE_KINDS)} (or 'clustered' = {DEFAULT_SE}), got {se!r}"
        )
    return kind


def _fmt_ci(ci: tuple[float, float]) -> str:
    """NaN: no variation; an infinite bound (a side on which no value is rejected) as ±inf."""
    if np.isnan(ci).any():
        return "undefined (no variation)"
    return f"[{ci[0]:+.4f}, {ci[1]:+.4f}]"


@dataclass
class TuringResults(RunResults):
    """Results of the imitation-game analysis (statsmodels style: estimates, tests, summary).

    ``verdicts``, ``reasons`` and ``diff_ci`` are keyed by SE kind (``naive``, ``boot``,
    ``cr3``, ``cr2``, ``cr1``, and ``clustered`` = the clustered kind that decides, or ``boot``
    when ``se`` is naive). ``n_boot``, ``seed`` and ``double``: the bootstrap draws of ``boot``
    and its double bootstrap (``fast``, ``full`` or ``none``)."""

    eps: float
    delta: float
    alpha: float
    se: str  # which kind decides the headline verdict: "boot", "cr3", "cr2", "cr1" or "naive"
    n: int
    n_students: int
    rates: pd.DataFrame  # source, p, ci (naive Wilson, clustered t), SEs
    tests: pd.DataFrame  # one row per test x SE kind
    table: pd.DataFrame  # McNemar 2x2
    verdict: str
    verdicts: dict[str, str]  # se kind -> verdict
    diff: float
    diff_ci: dict[str, tuple[float, float]]  # (1 - 2 alpha) CI of p_AI - p_Human (TOST's CI)
    reason: str = ""  # why the verdict, in one sentence (e.g. why inconclusive)
    reasons: dict[str, str] = field(default_factory=dict)
    extra: dict[str, pd.DataFrame] = field(default_factory=dict)
    n_boot: int = N_BOOT
    seed: int = 0
    double: str = DOUBLE_KINDS[0]

    _writer = "edueval.turing.pipeline:save_analysis"

    def headline(self) -> dict:
        """``turing analyze``'s results.json: :meth:`to_dict`."""
        return self.to_dict()

    def to_dict(self) -> dict:
        return {
            "verdict": self.verdict,
            "reason": self.reason,
            "verdicts": self.verdicts,
            "reasons": self.reasons,
            "se": self.se,
            "se_method": SE_METHODS[self.se],
            "n_boot": self.n_boot,
            "seed": self.seed,
            "double": self.double,
            "eps": self.eps,
            "delta": self.delta,
            "alpha": self.alpha,
            "n": self.n,
            "n_students": self.n_students,
            "p": dict(zip(self.rates["source"], self.rates["p"], strict=True)),
            "diff_ai_minus_human": self.diff,
            "diff_ci": {k: list(v) for k, v in self.diff_ci.items()},
            "tests": self.tests.to_dict(orient="records"),
            "mcnemar_table": self.table.to_dict(orient="index"),
        }

    def to_frame(self) -> pd.DataFrame:
        """Tidy rows, one per estimate or test and SE kind: ``term, se, estimate, std_err,
        ci_low, ci_high, statistic, df, p_value, reject``.  Terms: ``p_<source>`` (naive SEs with
        the Wilson interval, and the clustered ones), ``p_ai - p_human`` (per SE kind, its
        (1 - 2 alpha) interval: TOST's) and every row of ``tests``."""
        rows = []
        for r in self.rates.itertuples():
            rows.append({"term": f"p_{r.source}", "se": "naive", "estimate": r.p,
                         "std_err": r.se_naive, "ci_low": r.ci_low,
                         "ci_high": r.ci_high})  # fmt: skip
            rows.append({"term": f"p_{r.source}", "se": self.clustered_kind, "estimate": r.p,
                         "std_err": r.se_clustered, "ci_low": r.ci_low_clustered,
                         "ci_high": r.ci_high_clustered})  # fmt: skip
        for k in SE_KINDS:
            lo, hi = self.diff_ci[k]
            rows.append({"term": "p_ai - p_human", "se": k, "estimate": self.diff,
                         "ci_low": lo, "ci_high": hi})  # fmt: skip
        tests = self.tests.rename(columns={"test": "term"})
        cols = ["term", "se", "estimate", "std_err", "ci_low", "ci_high", "statistic", "df",
                "p_value", "reject"]  # fmt: skip
        return pd.concat([pd.DataFrame(rows), tests], ignore_index=True).reindex(columns=cols)

    @property
    def clustered_kind(self) -> str:
        """The clustered SE kind of ``rates``' clustered columns (``se``, or the default when
        naive decides)."""
        return self.se if self.se in CLUSTER_SE else DEFAULT_SE

    def summary(self) -> str:
        """A plain-text summary: rates, the 2x2 table, every test under every SE, the verdict."""
        lines = [
            "Imitation game: AI vs human expert distractors",
            "=" * 62,
            f"MCQs: {self.n}   students: {self.n_students}   eps = {self.eps}   "
            f"delta = {self.delta}   alpha = {self.alpha}",
            "",
            f"{'source':<9}{'p':>7}  {'95% CI (Wilson)':>17}  {'95% CI (clustered)':>19}",
        ]
        for r in self.rates.itertuples():
            lines.append(
                f"{r.source:<9}{r.p:>7.3f}  [{r.ci_low:.3f}, {r.ci_high:.3f}]   "
                f"[{r.ci_low_clustered:.3f}, {r.ci_high_clustered:.3f}]"
            )
        t = self.table
        level = f"{100 * (1 - 2 * self.alpha):.0f}%"
        lines += [
            "",
            "Paired table (per MCQ: chose an AI option x chose a human option)",
            f"               human yes  human no\n  AI yes  {int(t.iloc[0, 0]):>11d}{int(t.iloc[0, 1]):>10d}"
            f"\n  AI no   {int(t.iloc[1, 0]):>11d}{int(t.iloc[1, 1]):>10d}",
            "",
            f"p_AI - p_Human = {self.diff:+.4f}; {level} CI "
            + ", ".join(f"{k} {_fmt_ci(self.diff_ci[k])}" for k in SE_KINDS),
            "",
            f"{'test':<46}{'SE':<7}{'estimate':>9}{'std err':>9}{'stat':>9}{'df':>7}{'p':>9}",
        ]
        for r in self.tests.itertuples():
            lines.append(
                f"{r.test:<46}{r.se:<7}{r.estimate:>9.4f}{r.std_err:>9.4f}{r.statistic:>9.3f}"
                f"{r.df:>7.1f}{r.p_value:>9.4f}"
            )
        others = ", ".join(f"{k}: {self.verdicts[k]}" for k in SE_KINDS if k != self.se)
        lines += [
            "",
            "SEs: "
            + "; ".join(f"{k} = {SE_METHODS[k]}" for k in SE_KINDS)
            + f" (boot: B = {self.n_boot}, seed {self.seed}, double bootstrap {self.double}).",
            f"Decision: the {level} CI of p_AI - p_Human inside (-{self.eps}, +{self.eps}) -> draw "
            f"(if both beat random + {self.delta}); above +{self.eps} -> ai_better; below "
            f"-{self.eps} -> human_better. McNemar (d = 0) is reported, not deciding.",
            f"verdict ({self.se} SEs): {self.verdict.upper()}   [{others}]",
            f"because: {self.reason}",
        ]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def _rates_table(bt: BatchTests, alpha: float) -> pd.DataFrame:
    """Selection rates with Wilson (naive) and clustered (``bt``'s method) 1 − α intervals."""
    n = int(bt.n)
    rows = []
    for s in SOURCES:
        p = float(bt.p[s])
        count = int(round(p * n))
        lo, hi = wilson_interval(count, n, alpha)
        est = bt.est["clustered"][f"p_{s}"]
        clo, chi = (float(x) for x in est.bounds(alpha / 2))
        if not np.isfinite(clo):  # no variation between students: the point itself
            clo = chi = p
        sn, sc = float(bt.p_se["naive"][s]), float(est.se)
        rows.append(
            {
                "source": s, "count": count, "p": p, "ci_low": float(lo), "ci_high": float(hi),
                "se_naive": sn, "se_clustered": sc,
                "ci_low_clustered": max(0.0, clo), "ci_high_clustered": min(1.0, chi),
                "design_effect": (sc / sn) ** 2 if sn > 0 else np.nan,
            }
        )  # fmt: skip
    return pd.DataFrame(rows)


def _test_rows(bt: BatchTests, key: str, label: str) -> list[dict]:
    """The rows of the tests table for SE kind ``key`` of ``bt``, labelled ``label``."""
    eps, delta, alpha = bt.eps, bt.delta, bt.alpha
    d = bt.est[key]["diff"]

    def row(
        test: str,
        est: MeanEstimate,
        theta0: float,
        p: float | np.ndarray,
        stat: float | None = None,
    ) -> dict:
        return {
            "test": test, "se": label, "estimate": float(est.mean), "std_err": float(est.se),
            "statistic": float(est.statistic(theta0)) if stat is None else stat,
            "df": float(est.df), "p_value": float(p), "reject": bool(p < alpha),
        }  # fmt: skip

    mc = "McNemar p_AI = p_Human" + (", exact" if key == "naive" and bool(bt.mcnemar_exact) else "")
    mc += "" if key == "naive" else ", Durkalski"
    mc_key = "naive" if key == "naive" else "clustered"
    rows = [
        {**row(mc + " (reported)", d, 0.0, bt.mcnemar_p[mc_key], float(bt.mcnemar_stat[mc_key])),
         "df": 1.0 if key != "naive" or not bool(bt.mcnemar_exact) else np.nan},
        # the binding one-sided test (the side with the larger p-value)
        row(f"TOST |p_AI - p_Human| < {eps}", d,
            -eps if bt.tost_p_lower[key] >= bt.tost_p_upper[key] else eps, bt.tost_p[key]),
        row(f"p_AI - p_Human > +{eps} (ai_better)", d, eps, bt.beyond_p_ai[key]),
        row(f"p_AI - p_Human < -{eps} (human_better)", d, -eps, bt.beyond_p_human[key]),
    ]  # fmt: skip
    for src, name in (("ai", "AI"), ("human", "human")):
        s, sup = bt.est[key][src], bt.sup[key][src]
        rows.append(row(f"{name} > random + {delta}", s, delta, sup["p"]))
        rows.append(row(f"{name} <= random + {delta} (fail)", s, delta, sup["p_fail"]))
    return rows


def _extra_tables(choices: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Position-bias table (``position`` column) and median times per chosen source."""
    extra = {}
    if "position" in choices.columns:
        extra["by_position"] = (
            choices.groupby("position")[[f"is_{s}" for s in SOURCES]]
            .mean()
            .rename(columns=lambda c: c[3:])
            .reset_index()
        )
    time_cols = [c for c in choices.columns if c == "seconds" or str(c).lower().startswith("time")]
    for col in time_cols:
        vals = to_numbers(choices[col])
        med = {s: float(vals[choices[f"is_{s}"]].median()) for s in SOURCES}
        extra[f"median_{col}"] = pd.DataFrame([{"source": k, "median": v} for k, v in med.items()])
    return extra


def _is_read(choices: object) -> bool:
    """A frame as :func:`read_choices` returns it (its indicator columns added)."""
    return isinstance(choices, pd.DataFrame) and {"student", "question", "chosen", *(
        f"is_{s}" for s in SOURCES)} <= set(map(str, choices.columns))  # fmt: skip


@takes_tables(choices=CHOICES)
def analyze_choices(
    choices: str | Path | pd.DataFrame,
    *,
    eps: float = 0.10,
    delta: float = 0.05,
    alpha: float = 0.05,
    se: str = TURING_SE,
    n_boot: int = N_BOOT,
    seed: int = 0,
    double: str = DOUBLE_KINDS[0],
) -> TuringResults:
    """Analyse Phase-2 choices (a file, a frame as :func:`read_choices` returns, or any frame
    with ``student, question, chosen``: validated as the file is). ``se`` chooses the test that decides the verdict:
    ``"boot"`` (= ``"clustered"``, the default), ``"cr3"``, ``"cr2"``, ``"cr1"`` or ``"naive"``;
    all are reported. ``n_boot`` bootstrap draws of the students, from ``seed``: the same data
    and seed give the same p-values; ``double`` the double bootstrap of ``boot``'s bootstrap-t
    p-values: ``"fast"`` (the default; Davidson & MacKinnon 2007), ``"full"`` (999 × 199
    resamples at the default B: seconds for one class) or ``"none"``."""
    check_margins(eps, delta, alpha)
    if not 1 <= n_boot <= 1_000_000:
        raise InputError(f"n_boot= must be in [1, 1000000], got {n_boot}")
    if double not in DOUBLE_KINDS:
        raise InputError(f"double= must be one of {', '.join(DOUBLE_KINDS)}, got {double!r}")
    kind = _se_kind(se)
    if not _is_read(choices):
        choices = read_choices(choices)  # checked as a file is: errors name the choices DataFrame
    counts, _ = choice_counts(choices)
    bts = {
        m: batch_tests(
            counts,
            eps=eps,
            delta=delta,
            alpha=alpha,
            cluster_se=m,
            n_boot=n_boot,
            seed=seed,
            double=double,
        )  # fmt: skip
        for m in CLUSTER_SE
    }
    # (batch, key) behind each SE kind; the naive results are the same in every batch
    where = {
        "naive": (bts[DEFAULT_SE], "naive"),
        **{m: (bts[m], "clustered") for m in CLUSTER_SE},
    }
    where["clustered"] = where[kind if kind in CLUSTER_SE else DEFAULT_SE]
    deciding = where["clustered"][0]
    verdict_map = {k: VERDICTS[int(bt.verdict[key])] for k, (bt, key) in where.items()}
    reasons = {k: explain(bt, key) for k, (bt, key) in where.items()}
    diff_ci: dict[str, tuple[float, float]] = {}
    for k, (bt, key) in where.items():
        lo, hi = bt.diff_ci[key]
        diff_ci[k] = (float(lo), float(hi))
    tests = [r for k in SE_KINDS for r in _test_rows(*where[k], k)]
    a, b, c, d = (float(x) for x in deciding.table)
    table = pd.DataFrame(
        [[a, b], [c, d]], index=["ai_yes", "ai_no"], columns=["human_yes", "human_no"]
    )
    return TuringResults(
        eps=eps, delta=delta, alpha=alpha, se=kind, n=int(deciding.n),
        n_students=int(deciding.n_students), rates=_rates_table(deciding, alpha),
        tests=pd.DataFrame(tests), table=table, verdict=verdict_map[kind], verdicts=verdict_map,
        diff=float(deciding.diff), diff_ci=diff_ci, reason=reasons[kind], reasons=reasons,
        extra=_extra_tables(choices), n_boot=n_boot, seed=seed, double=double,
    )  # fmt: skip
