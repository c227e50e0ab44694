"""The imitation game's statistics, batched: from per-student counts to tests and a verdict.

Everything here works on *per-student counts* of Phase-2 choices, with a leading batch axis, so
that one call analyses one real study (batch of 1) or a thousand simulated replications at once.

Counts (last axis, :data:`FIELDS`) for student ``g``::

    n   MCQs the student answered
    C   chose the correct answer          A   chose an option the AI proposed
    H   chose an option the human expert proposed
    R   chose the random distractor
    AH, AR, HR   chose an option proposed by both sources (duplicates shown once; see
                 :mod:`edueval.turing.assemble`)

Pairing (McNemar, TOST). Every Phase-2 MCQ is one matched pair: for student ``s`` and question
``q′``, ``x = [chose an option the AI proposed]`` and ``y = [chose an option the human proposed]``,
observed on the same MCQ by the same student. The 2×2 table counts the MCQs by ``(x, y)``: ``a``
both (only possible for a shared option), ``b`` AI only, ``c`` human only, ``d`` neither. The
paired difference ``d_i = x_i − y_i`` has mean ``p̂_AI − p̂_Human``.

Standard errors of a mean of per-MCQ scores ``z_i`` (proportions and paired differences):

* *naive*: rows independent, ``SE² = s²/N`` with ``s²`` the sample variance (ddof 1), ``t`` with
  ``N − 1`` df - exactly statsmodels' ``ttost_paired`` / scipy's one-sample t;
* *clustered* by student (CR1, Liang & Zeger 1986): ``SE² = G/(G−1) · Σ_g (Z_g − n_g z̄)² / N²``
  with ``Z_g`` the student's sum, ``t`` with ``G − 1`` df. Equal to statsmodels
  ``OLS(z, 1).fit(cov_type="cluster")`` (whose small-sample factor is ``G/(G−1)·(N−1)/(N−K)`` =
  ``G/(G−1)`` for ``K = 1``). Students answer ~25 MCQs each, so their answers are not
  independent; the naive SE is then too small by about ``√(1 + (m−1)ρ)``.

Tests at level ``α`` (two-sided for McNemar, one-sided otherwise):

* McNemar AI vs human: naive - exact binomial (two-sided, ``min(1, 2·P(Bin(b+c, ½) ≤ min(b, c)))``)
  when ``b + c <`` :data:`EXACT_BELOW`, else χ² with continuity correction, ``(|b−c|−1)²/(b+c)``:
  statsmodels' ``mcnemar(table, exact=…, correction=True)``. Clustered - Durkalski et al. (2003,
  Stat. Med. 22:1417) ``X² = (Σ_g (b_g − c_g))² / Σ_g (b_g − c_g)²``, χ²(1).
* TOST equivalence, ``H0: |p_AI − p_Human| ≥ ε``: two one-sided t tests at ``±ε``, ``p = max``.
* Superiority of source S over random by ``δ``, ``H0: p_S − p_R ≤ δ``; and the opposite
  (*failure*) test ``H0: p_S − p_R ≥ δ``, rejected when the upper ``1 − α`` bound is below ``δ``.

Verdict (:func:`verdicts`): the paper's question is whether the AI is *within ε* of the expert
(Theorem 4: ``|p_AI − p_Human| ≤ ε`` and both beat ``p_Random + δ``), so the verdict is read off
one interval: the ``1 − 2α`` confidence interval ``[L, U]`` of ``d = p_AI − p_Human`` (t with the
SE's df: ``G − 1`` clustered), checked in this order, so the five outcomes are exclusive:

==============  ==============================================  ===============================
verdict         the CI of d = p_AI − p_Human                    and, for random's distractor
==============  ==============================================  ===============================
draw            inside the margin: −ε < L and U < +ε (TOST)     both beat random by δ
ai_better       beyond the margin: L > +ε (H0: d ≤ +ε)          the AI beats random by δ
human_better    beyond the margin: U < −ε (H0: d ≥ −ε)          the human beats random by δ
both_fail       (any)                                           both shown below random + δ
inconclusive    anything else: the CI straddles ±ε, a source    (or fewer than MIN_STUDENTS
                ahead does not beat random, a zero SE, ...       students: always)
==============  ==============================================  ===============================

Each "beyond" claim is a one-sided t test at level α against the margin, as the draw is a TOST at
level α, so no verdict is reached more than α of the time when ``|d| = ε`` exactly: at the margin
neither "within" nor "beyond" can be claimed. As the number of students grows the CI shrinks to
the point ``d``: a true ``|d| < ε`` ends in ``draw``, a true ``|d| > ε`` in the better one's
verdict (given the random-distractor conditions). McNemar's test of the point null ``d = 0`` is
computed and reported beside the verdict (a difference may be real and still within ε), but it
does not decide: with a point null "better" and an ε-margin "draw" the regions overlap, and one
fixed truth with ``0 < |d| < ε`` would move from "better" at moderate n to "draw" at large n.

No verdict without evidence: a standard error of exactly 0 -- two students with identical counts,
say -- is not infinite precision; every test computed on it keeps its null hypothesis (p = 1).
Correct type-I error needs the right standard error, which is what the clustered version is for.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

__all__ = [
    "EXACT_BELOW",
    "MIN_STUDENTS",
    "FIELDS",
    "VERDICTS",
    "BatchTests",
    "batch_tests",
    "mcnemar_clustered",
    "mcnemar_naive",
    "mean_se",
    "verdicts",
]

FIELDS = ("n", "C", "A", "H", "R", "AH", "AR", "HR")
F = {name: i for i, name in enumerate(FIELDS)}
VERDICTS = ("draw", "ai_better", "human_better", "both_fail", "inconclusive")
#: McNemar is exact (binomial) when the discordant count b + c is below this.
EXACT_BELOW = 25
#: Fewest students for any verdict but ``inconclusive``: with fewer, a student-clustered
#: standard error rests on one to three clusters and says nothing about students in general.
MIN_STUDENTS = 5


def _sum(counts: np.ndarray, name: str) -> np.ndarray:
    return counts[..., F[name]]


def mean_se(
    cluster_sums: np.ndarray, sum_sq: np.ndarray, sizes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Mean of per-row scores with naive and student-clustered SEs, batched.

    ``cluster_sums[..., g]`` = Σ of the scores of student ``g``; ``sum_sq[...]`` = Σ over all rows
    of score²; ``sizes[..., g]`` = rows of student ``g`` (0 = padding, ignored).
    Returns ``mean, se_naive, se_clustered, df_naive, df_clustered``.
    """
    sizes = np.asarray(sizes, dtype=float)
    cluster_sums = np.asarray(cluster_sums, dtype=float)
    n = sizes.sum(axis=-1)
    g = (sizes > 0).sum(axis=-1).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = cluster_sums.sum(axis=-1) / n
        var_row = np.maximum(sum_sq - n * mean**2, 0.0) / (n - 1)
        se_naive = np.sqrt(var_row / n)
        resid = cluster_sums - sizes * mean[..., None]
        se_cl = np.sqrt(g / (g - 1) * (resid**2).sum(axis=-1)) / n
    return mean, se_naive, se_cl, n - 1, g - 1


def _diff(counts: np.ndarray, x: str, y: str, xy: str):
    """Paired difference ``[chose x] − [chose y]`` per MCQ: mean, SEs, dfs (see :func:`mean_se`).
    ``d² = x + y − 2xy`` for 0/1 indicators."""
    cs = _sum(counts, x) - _sum(counts, y)
    sq = (_sum(counts, x) + _sum(counts, y) - 2 * _sum(counts, xy)).sum(axis=-1)
    return mean_se(cs, sq, _sum(counts, "n"))


def _upper_p(t: np.ndarray, df: np.ndarray) -> np.ndarray:
    """P(T ≥ t) with t = ±inf (zero SE) handled."""
    return sps.t.sf(t, df)


def _t(num: np.ndarray, se: np.ndarray) -> np.ndarray:
    """num/se with the zero-SE limits: +inf, −inf, or 0 when num is 0 too."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = num / se
    limit = np.where(num > 0, np.inf, np.where(num < 0, -np.inf, 0.0))
    return np.where(se > 0, t, limit)


def mcnemar_naive(b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """McNemar's test of ``b`` vs ``c`` discordant pairs, as statsmodels ``mcnemar`` computes it:
    exact two-sided binomial when ``b + c <`` :data:`EXACT_BELOW`, else χ² with continuity
    correction. Returns ``statistic, p-value, exact?``."""
    b = np.asarray(b, dtype=float)
    c = np.asarray(c, dtype=float)
    nd = b + c
    exact = nd < EXACT_BELOW
    k = np.minimum(b, c)
    p_exact = np.minimum(1.0, 2.0 * sps.binom.cdf(k, nd, 0.5))
    with np.errstate(divide="ignore", invalid="ignore"):
        chi = np.where(nd > 0, (np.abs(b - c) - 1.0) ** 2 / nd, 0.0)
    p_chi = np.where(nd > 0, sps.chi2.sf(chi, 1), 1.0)
    return np.where(exact, k, chi), np.where(exact, p_exact, p_chi), exact


def mcnemar_clustered(diff_sums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Durkalski et al. (2003) clustered McNemar: ``diff_sums[..., g] = b_g − c_g``.
    Returns ``X², p`` (χ² with 1 df; p = 1 when there is no discordance)."""
    d = np.asarray(diff_sums, dtype=float)
    num = d.sum(axis=-1) ** 2
    den = (d**2).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        x2 = np.where(den > 0, num / den, 0.0)
    return x2, np.where(den > 0, sps.chi2.sf(x2, 1), 1.0)


@dataclass
class BatchTests:
    """Every estimate and test of :func:`batch_tests`; arrays of the batch shape.

    ``se`` and test results are dictionaries keyed by ``"naive"`` and ``"clustered"``.
    """

    n: np.ndarray
    n_students: np.ndarray
    p: dict[str, np.ndarray]  # source -> p̂ (correct, ai, human, random)
    p_se: dict[str, dict[str, np.ndarray]]  # se kind -> source -> SE
    diff: np.ndarray  # p̂_AI − p̂_Human
    diff_se: dict[str, np.ndarray]
    table: np.ndarray  # [..., 4]: a (both), b (AI only), c (human only), d (neither)
    mcnemar_stat: dict[str, np.ndarray]
    mcnemar_p: dict[str, np.ndarray]
    mcnemar_exact: np.ndarray
    tost_p: dict[str, np.ndarray]
    tost_p_lower: dict[str, np.ndarray]  # H0: diff ≤ −ε
    tost_p_upper: dict[str, np.ndarray]  # H0: diff ≥ +ε
    beyond_p_ai: dict[str, np.ndarray]  # H0: diff ≤ +ε (rejected: the AI ahead by more than ε)
    beyond_p_human: dict[str, np.ndarray]  # H0: diff ≥ −ε (rejected: the human ahead by > ε)
    sup: dict[str, dict[str, np.ndarray]]  # se kind -> "ai"/"human" -> {diff, se, p, p_fail}
    df: dict[str, np.ndarray]
    verdict: dict[str, np.ndarray]  # se kind -> index into VERDICTS


def batch_tests(counts: np.ndarray, *, eps: float, delta: float, alpha: float) -> BatchTests:
    """All estimates, both SE kinds, all tests and the verdicts for counts ``[..., G, 8]``."""
    counts = np.asarray(counts, dtype=float)
    if counts.shape[-1] != len(FIELDS):
        raise ValueError(f"counts must end in {len(FIELDS)} fields {FIELDS}")
    if not eps > 0:
        raise ValueError("the equivalence margin eps must be > 0")
    if not 0 < alpha < 1:
        raise ValueError("alpha must be in (0, 1)")
    sizes = _sum(counts, "n")
    p: dict[str, np.ndarray] = {}
    p_se: dict[str, dict[str, np.ndarray]] = {"naive": {}, "clustered": {}}
    for name, f in (("correct", "C"), ("ai", "A"), ("human", "H"), ("random", "R")):
        sums = _sum(counts, f)
        m, sn, sc, _, _ = mean_se(sums, sums.sum(axis=-1), sizes)
        p[name] = m
        p_se["naive"][name] = sn
        p_se["clustered"][name] = sc
    diff, se_n, se_c, df_n, df_c = _diff(counts, "A", "H", "AH")
    ses = {"naive": se_n, "clustered": se_c}
    dfs = {"naive": df_n, "clustered": df_c}
    tot = counts.sum(axis=-2)
    a = tot[..., F["AH"]]
    b = tot[..., F["A"]] - a
    c = tot[..., F["H"]] - a
    d = tot[..., F["n"]] - a - b - c
    table = np.stack([a, b, c, d], axis=-1)
    stat_n, p_n, exact = mcnemar_naive(b, c)
    stat_c, p_c = mcnemar_clustered(_sum(counts, "A") - _sum(counts, "H"))
    sup_diffs = {
        "ai": _diff(counts, "A", "R", "AR"),
        "human": _diff(counts, "H", "R", "HR"),
    }
    out = BatchTests(
        n=tot[..., F["n"]],
        n_students=(sizes > 0).sum(axis=-1),
        p=p,
        p_se=p_se,
        diff=diff,
        diff_se=ses,
        table=table,
        mcnemar_stat={"naive": stat_n, "clustered": stat_c},
        mcnemar_p={"naive": p_n, "clustered": p_c},
        mcnemar_exact=exact,
        tost_p={},
        tost_p_lower={},
        tost_p_upper={},
        beyond_p_ai={},
        beyond_p_human={},
        sup={},
        df=dfs,
        verdict={},
    )
    for kind in ("naive", "clustered"):
        se, df = ses[kind], dfs[kind]
        # a standard error of exactly 0 (e.g. students with identical counts) is no evidence of
        # precision: every test on it keeps its null (p = 1)
        p_lo = _no_evidence(se, _upper_p(_t(diff + eps, se), df))  # H0: diff <= -eps
        p_hi = _no_evidence(se, sps.t.cdf(_t(diff - eps, se), df))  # H0: diff >= +eps
        out.tost_p_lower[kind] = p_lo
        out.tost_p_upper[kind] = p_hi
        out.tost_p[kind] = np.maximum(p_lo, p_hi)
        # beyond the margin: the CI's lower bound above +eps / upper bound below -eps
        out.beyond_p_ai[kind] = _no_evidence(se, _upper_p(_t(diff - eps, se), df))
        out.beyond_p_human[kind] = _no_evidence(se, sps.t.cdf(_t(diff + eps, se), df))
        out.sup[kind] = {}
        for src, (m, sn, sc, dn, dc) in sup_diffs.items():
            s = sn if kind == "naive" else sc
            dfk = dn if kind == "naive" else dc
            t = _t(m - delta, s)
            out.sup[kind][src] = {
                "diff": m,
                "se": s,
                "p": _no_evidence(s, _upper_p(t, dfk)),
                "p_fail": _no_evidence(s, sps.t.cdf(t, dfk)),
            }
        out.verdict[kind] = verdicts(
            tost_p=out.tost_p[kind],
            beyond_ai_p=out.beyond_p_ai[kind],
            beyond_human_p=out.beyond_p_human[kind],
            sup_ai_p=out.sup[kind]["ai"]["p"],
            sup_human_p=out.sup[kind]["human"]["p"],
            fail_ai_p=out.sup[kind]["ai"]["p_fail"],
            fail_human_p=out.sup[kind]["human"]["p_fail"],
            alpha=alpha,
            n_students=out.n_students,
        )
    return out


def _no_evidence(se: np.ndarray, p: np.ndarray) -> np.ndarray:
    return np.where(np.asarray(se) > 0, p, 1.0)


def verdicts(
    *,
    tost_p: np.ndarray,
    beyond_ai_p: np.ndarray,
    beyond_human_p: np.ndarray,
    sup_ai_p: np.ndarray,
    sup_human_p: np.ndarray,
    fail_ai_p: np.ndarray,
    fail_human_p: np.ndarray,
    alpha: float,
    n_students: np.ndarray | int | None = None,
) -> np.ndarray:
    """The decision rule of the module docstring's table; returns indices into :data:`VERDICTS`.

    ``tost_p`` < α: the ``1 − 2α`` CI of ``p_AI − p_Human`` lies inside ``(−ε, ε)``;
    ``beyond_ai_p`` < α: it lies above ``+ε``; ``beyond_human_p`` < α: below ``−ε``.
    Fewer than :data:`MIN_STUDENTS` students: ``inconclusive`` whatever the tests say."""
    sup_ai = np.asarray(sup_ai_p) < alpha
    sup_h = np.asarray(sup_human_p) < alpha
    shape = np.broadcast(tost_p, beyond_ai_p, beyond_human_p, sup_ai, sup_h).shape
    out = np.full(shape, VERDICTS.index("inconclusive"))
    both_fail = (np.asarray(fail_ai_p) < alpha) & (np.asarray(fail_human_p) < alpha)
    out = np.where(both_fail, VERDICTS.index("both_fail"), out)
    out = np.where(
        (np.asarray(beyond_human_p) < alpha) & sup_h, VERDICTS.index("human_better"), out
    )
    out = np.where((np.asarray(beyond_ai_p) < alpha) & sup_ai, VERDICTS.index("ai_better"), out)
    draw = (np.asarray(tost_p) < alpha) & sup_ai & sup_h
    out = np.where(draw, VERDICTS.index("draw"), out)
    if n_students is not None:
        out = np.where(np.asarray(n_students) < MIN_STUDENTS, VERDICTS.index("inconclusive"), out)
    return out.astype(np.int8)
