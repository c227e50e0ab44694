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
statsmodels style, whose :meth:`~TuringResults.summary` prints everything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..io import InputError, check_unique, line_of, read_table, require_columns, text_column
from .stats import FIELDS, VERDICTS, batch_tests

__all__ = [
    "SOURCES",
    "TuringResults",
    "analyze_choices",
    "choice_counts",
    "parse_chosen",
    "read_choices",
    "check_phase1",
]

SOURCES = ("correct", "ai", "human", "random")


def check_margins(eps: float, delta: float, alpha: float) -> None:
    """One-line errors for impossible margins (ε ≤ 0, δ < 0, α outside (0, 1))."""
    if not (eps > 0 and np.isfinite(eps)):
        raise InputError(
            f"--eps must be > 0 (the equivalence margin |p_AI - p_Human| < eps), got {eps}"
        )
    if eps >= 1:
        raise InputError(f"--eps must be < 1 (a difference of proportions), got {eps}")
    if not (0 <= delta < 1):
        raise InputError(f"--delta must be in [0, 1), got {delta}")
    if not (0 < alpha < 1):
        raise InputError(f"--alpha must be in (0, 1), got {alpha}")


def parse_chosen(value: str) -> frozenset[str] | None:
    """``"ai+human"`` -> ``{"ai", "human"}``; None when a token is not a source or ``correct`` is
    combined with another source."""
    tokens = frozenset(t.strip().lower() for t in str(value).split("+"))
    if not tokens or not tokens <= set(SOURCES) or ("correct" in tokens and len(tokens) > 1):
        return None
    return tokens


def read_choices(path: str | Path) -> pd.DataFrame:
    """Read and validate a Phase-2 choices file; adds boolean columns ``is_<source>``."""
    df = read_table(path, text_columns=["student", "question", "chosen"])
    require_columns(df, ["student", "question", "chosen"], what="Phase-2 choices")
    text_column(df, "student", identifier=True)
    text_column(df, "question", identifier=True)
    text_column(df, "chosen")
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
        out[f"is_{s}"] = [s in p for p in parsed]  # type: ignore[operator]
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


def _ratio(num: float, se: float) -> float:
    """A t statistic; ±inf (or 0) when the standard error is 0."""
    if se > 0:
        return num / se
    return float(np.sign(num) * np.inf) if num else 0.0


@dataclass
class TuringResults:
    """Results of the imitation-game analysis (statsmodels style: estimates, tests, summary)."""

    eps: float
    delta: float
    alpha: float
    se: str  # which standard errors decide the headline verdict ("clustered" or "naive")
    n: int
    n_students: int
    rates: pd.DataFrame  # source, p, ci (naive Wilson, clustered t), SEs
    tests: pd.DataFrame  # one row per test x SE kind
    table: pd.DataFrame  # McNemar 2x2
    verdict: str
    verdicts: dict[str, str]  # se kind -> verdict
    diff: float
    diff_ci: dict[str, tuple[float, float]]  # (1 - 2 alpha) CI of p_AI - p_Human (TOST's CI)
    extra: dict[str, pd.DataFrame] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "verdict": self.verdict,
            "verdicts": self.verdicts,
            "se": self.se,
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

    def summary(self) -> str:
        """A plain-text summary: rates, the 2x2 table, every test under both SEs, the verdict."""
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
        lines += [
            "",
            "Paired table (per MCQ: chose an AI option x chose a human option)",
            f"               human yes  human no\n  AI yes  {int(t.iloc[0, 0]):>11d}{int(t.iloc[0, 1]):>10d}"
            f"\n  AI no   {int(t.iloc[1, 0]):>11d}{int(t.iloc[1, 1]):>10d}",
            "",
            f"p_AI - p_Human = {self.diff:+.4f}; {100 * (1 - 2 * self.alpha):.0f}% CI naive "
            f"[{self.diff_ci['naive'][0]:+.4f}, {self.diff_ci['naive'][1]:+.4f}], clustered "
            f"[{self.diff_ci['clustered'][0]:+.4f}, {self.diff_ci['clustered'][1]:+.4f}]",
            "",
            f"{'test':<46}{'SE':<10}{'estimate':>9}{'std err':>9}{'stat':>9}{'p':>9}",
        ]
        for r in self.tests.itertuples():
            lines.append(
                f"{r.test:<46}{r.se:<10}{r.estimate:>9.4f}{r.std_err:>9.4f}{r.statistic:>9.3f}"
                f"{r.p_value:>9.4f}"
            )
        lines += [
            "",
            f"Decision: the {100 * (1 - 2 * self.alpha):.0f}% CI of p_AI - p_Human inside "
            f"(-{self.eps}, +{self.eps}) -> draw (if both beat random + {self.delta}); above "
            f"+{self.eps} -> ai_better; below -{self.eps} -> human_better. McNemar (d = 0) is "
            "reported, not deciding.",
            f"verdict ({self.se} SEs): {self.verdict.upper()}"
            + "   [naive SEs: "
            + self.verdicts["naive"]
            + "]",
        ]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def analyze_choices(
    choices: pd.DataFrame,
    *,
    eps: float = 0.10,
    delta: float = 0.05,
    alpha: float = 0.05,
    se: str = "clustered",
) -> TuringResults:
    """Analyse Phase-2 choices (a frame as :func:`read_choices` returns, or any frame with
    ``student, question, chosen``)."""
    check_margins(eps, delta, alpha)
    if se not in ("clustered", "naive"):
        raise InputError(f"--se must be 'clustered' or 'naive', got {se!r}")
    if not any(c.startswith("is_") for c in choices.columns):
        choices = _with_indicators(choices)
    counts, _ = choice_counts(choices)
    bt = batch_tests(counts, eps=eps, delta=delta, alpha=alpha)
    from statsmodels.stats.proportion import proportion_confint

    n = int(bt.n)
    g = int(bt.n_students)
    rows = []
    tq = sps.t.ppf(1 - alpha / 2, max(g - 1, 1))
    for s in SOURCES:
        p = float(bt.p[s])
        lo, hi = proportion_confint(int(round(p * n)), n, alpha=alpha, method="wilson")
        sc = float(bt.p_se["clustered"][s])
        rows.append(
            {
                "source": s,
                "count": int(round(p * n)),
                "p": p,
                "ci_low": float(lo),
                "ci_high": float(hi),
                "se_naive": float(bt.p_se["naive"][s]),
                "se_clustered": sc,
                "ci_low_clustered": max(0.0, p - tq * sc),
                "ci_high_clustered": min(1.0, p + tq * sc),
                "design_effect": (sc / float(bt.p_se["naive"][s])) ** 2
                if bt.p_se["naive"][s] > 0
                else np.nan,
            }
        )
    rates = pd.DataFrame(rows)
    tests = []
    diff_ci = {}
    for kind in ("naive", "clustered"):
        df_k = float(bt.df[kind])
        se_k = float(bt.diff_se[kind])
        t1 = sps.t.ppf(1 - alpha, df_k) if df_k > 0 else np.inf
        diff_ci[kind] = (float(bt.diff) - t1 * se_k, float(bt.diff) + t1 * se_k)
        tests.append(
            {
                "test": "McNemar p_AI = p_Human"
                + (", exact" if kind == "naive" and bool(bt.mcnemar_exact) else "")
                + (", Durkalski" if kind == "clustered" else "")
                + " (reported)",
                "se": kind,
                "estimate": float(bt.diff),
                "std_err": se_k,
                "statistic": float(bt.mcnemar_stat[kind]),
                "p_value": float(bt.mcnemar_p[kind]),
                "reject": bool(bt.mcnemar_p[kind] < alpha),
            }
        )
        tests.append(
            {
                "test": f"TOST |p_AI - p_Human| < {eps}",
                "se": kind,
                "estimate": float(bt.diff),
                "std_err": se_k,
                # the binding one-sided t (the side with the larger p-value)
                "statistic": _ratio(float(bt.diff) + eps, se_k)
                if bt.tost_p_lower[kind] >= bt.tost_p_upper[kind]
                else _ratio(float(bt.diff) - eps, se_k),
                "p_value": float(bt.tost_p[kind]),
                "reject": bool(bt.tost_p[kind] < alpha),
            }
        )
        for name, sign, p_beyond in (
            (f"p_AI - p_Human > +{eps} (ai_better)", -1.0, bt.beyond_p_ai[kind]),
            (f"p_AI - p_Human < -{eps} (human_better)", 1.0, bt.beyond_p_human[kind]),
        ):
            tests.append(
                {
                    "test": name,
                    "se": kind,
                    "estimate": float(bt.diff),
                    "std_err": se_k,
                    "statistic": _ratio(float(bt.diff) + sign * eps, se_k),
                    "p_value": float(p_beyond),
                    "reject": bool(p_beyond < alpha),
                }
            )
        for src in ("ai", "human"):
            sup = bt.sup[kind][src]
            tests.append(
                {
                    "test": f"{'AI' if src == 'ai' else 'human'} > random + {delta}",
                    "se": kind,
                    "estimate": float(sup["diff"]),
                    "std_err": float(sup["se"]),
                    "statistic": _ratio(float(sup["diff"]) - delta, float(sup["se"])),
                    "p_value": float(sup["p"]),
                    "reject": bool(sup["p"] < alpha),
                }
            )
            tests.append(
                {
                    "test": f"{'AI' if src == 'ai' else 'human'} <= random + {delta} (fail)",
                    "se": kind,
                    "estimate": float(sup["diff"]),
                    "std_err": float(sup["se"]),
                    "statistic": _ratio(float(sup["diff"]) - delta, float(sup["se"])),
                    "p_value": float(sup["p_fail"]),
                    "reject": bool(sup["p_fail"] < alpha),
                }
            )
    tests_df = pd.DataFrame(tests)
    a, b, c, d = (float(x) for x in bt.table)
    table = pd.DataFrame(
        [[a, b], [c, d]], index=["ai_yes", "ai_no"], columns=["human_yes", "human_no"]
    )
    verdict_map = {k: VERDICTS[int(v)] for k, v in bt.verdict.items()}
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
        vals = pd.to_numeric(choices[col], errors="coerce")
        med = {s: float(vals[choices[f"is_{s}"]].median()) for s in SOURCES}
        extra[f"median_{col}"] = pd.DataFrame([{"source": k, "median": v} for k, v in med.items()])
    return TuringResults(
        eps=eps,
        delta=delta,
        alpha=alpha,
        se=se,
        n=n,
        n_students=g,
        rates=rates,
        tests=tests_df,
        table=table,
        verdict=verdict_map[se],
        verdicts=verdict_map,
        diff=float(bt.diff),
        diff_ci=diff_ci,
        extra=extra,
    )
