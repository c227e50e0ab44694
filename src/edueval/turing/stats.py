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

Standard errors of a mean ``z̄ = Σ_g Z_g / N`` of per-MCQ scores ``z_i`` (proportions and paired
differences; ``Z_g`` student ``g``'s sum, ``n_g`` their MCQs, ``E_g = Z_g − n_g z̄``):

* ``naive``: rows independent, ``SE² = s²/N`` with ``s²`` the sample variance (ddof 1), ``t`` with
  ``N − 1`` df - exactly statsmodels' ``ttost_paired`` / scipy's one-sample t;
* ``cr1`` (Liang & Zeger 1986): ``SE² = G/(G−1) · Σ_g E_g² / N²``, ``t`` with ``G − 1`` df; equal to
  statsmodels ``OLS(z, 1).fit(cov_type="cluster")``. The previous default. Its one-sided tests
  are not valid when students' contributions are skewed (20% of students strongly preferring
  one source): at the margin ``|d| = ε`` it declares ``draw`` in up to 7.6% of studies (20
  students, sheets of 5-45 MCQs) where α = 5%, above α + 2 Monte-Carlo SEs in 11 of 56 cells of
  benchmarks/turing_validity.py, and still 5.5-5.8% at 160 students;
* ``cr2``: the bias-reduced linearisation of Bell & McCaffrey (2002),
  ``SE² = Σ_g E_g² / (1 − h_g) / N²`` with leverage ``h_g = n_g/N`` (for the intercept-only model
  ``(I − H_gg)^{-1/2}`` scales student ``g``'s residual sum by ``(1 − h_g)^{-1/2}``); ``t`` with
  Bell-McCaffrey degrees of freedom ``ν = (tr M)² / tr M²``, ``M = G'G`` (Imbens & Kolesár 2016,
  eq. 8, working model Ω = I), in closed form :func:`bm_df` (``G − 1`` when every student answered
  as many MCQs; smaller when sheet lengths differ); and Hall's (1992, JRSS-B 54:221) skewness
  correction of the studentised statistic, :func:`hall`. With equal sheet lengths CR2 and its df
  are exactly CR1's, so what makes the one-sided tests valid under skew is Hall's term: the
  skewness ``γ̂`` of the residual sums ``E_g`` (adjusted Fisher-Pearson) enters as
  ``T = t + a t² + a² t³/3 + a/2`` with ``a = γ̂ / (3 √G)``, a monotone map whose inverse gives the
  (asymmetric) confidence bounds. The default before CR3: ``draw`` at ``|d| = ε`` within α + 2 MC
  SEs in 55 of 56 cells of benchmarks/turing_validity.py; the exception, 20 students with sheets
  of 5-45 MCQs and a 20% preferring minority, is 5.9% (80,000 studies; CR1 7.7%);
* ``cr3`` (the default until issue 34; the t-table half of ``boot``): Bell & McCaffrey's
  (2002) CR3, ``A_g = (I − H_gg)^{-1}``, i.e.
  ``SE² = Σ_g E_g² / (1 − h_g)² / N²`` - for a mean exactly the leave-one-student-out jackknife
  ``Σ_g (z̄_(g) − z̄)²``, since ``z̄_(g) − z̄ = −E_g / (N (1 − h_g))`` - with CR2's Bell-McCaffrey
  df and Hall's term as above. With equal sheets its variance is CR2's times ``G/(G − 1)``.
  Measured (benchmarks/turing_validity.py, 5-160 students, four designs, 4,000 studies per cell):
  ``draw`` at ``|d| = ε`` within α + 2 MC SEs in all 56 cells; the hardest cell, 20 students
  with sheets of 5-45 MCQs, is 5.5% (80,000 studies; CR2 5.9%, CR1 7.7%) - still a little above
  α, from studies whose preferring students happen to hold < 10% of the answers and which look
  like a homogeneous population inside the margin. The price is power at 5-20 students: a draw
  at d = 0 among 5 / 10 / 20 alike students in 1.7 / 24.7 / 82.1% of studies (CR2 2.7 / 29.9 /
  83.8%, CR1 7.5 / 34.7 / 84.5%); from 40 students on, within a point of CR2's.

* ``boot`` (the default of ``turing analyze`` since issue 34): CR3 + Hall again, with two
  changes. (1) A design effect of at least 1: the SE is never below the rows-independent one
  (:func:`floored_cr3`), and Hall's skewness shrinks by ``(se_CR3/se)³`` where the floor binds.
  (2) Every p-value is the larger of the t-table one and a pairs cluster bootstrap-t one
  (:func:`boot_mean`: students resampled with replacement, ``B`` = :data:`N_BOOT` draws,
  seeded; the same Hall-corrected CR3 statistic recomputed on each draw). CR3 + Hall alone
  still over-declared ``draw`` where students differ in how many answers they get wrong
  (design ``ability`` of :func:`~.power.design_counts`: 6.0% at 20 students, 10,000 studies);
  the bootstrap alone errs in other cells; a claim now needs both. (3) Since issue 34's
  third round, also the fast double bootstrap of that bootstrap-t p-value (Davidson &
  MacKinnon 2000, 2007; :meth:`BootEstimate._second_p`: one second-level resample of each
  first-level one, about twice the cost of the single bootstrap), which estimates how far the
  bootstrap's own p-value is off and corrects it; each p-value is the largest of the three.
  The full double bootstrap (``double="full"``, B × ``n_inner`` resamples) is an option,
  affordable for one study. (4) Since issue 34's fourth round, also the *score* half
  (:meth:`BootEstimate._score_p`): the t-table test with the variance taken about the null
  value, ``se₀² = Σ_g a_g (Z_g − θ₀ n_g)² / N²`` (CR3's ``a_g = (1 − h_g)⁻²``; floored at the
  t-table half's SE; its Hall term and df), Rao's score test where the others are Wald's -
  the standard small-sample repair of a Wald test of a ratio (here a mean of clustered
  scores: Wilson's interval for a proportion, Fieller's for a ratio, the null-imposed
  variance of Kline & Santos 2012 for clustered scores). Where the preferring minority is
  under-represented in a class, the residuals about ``m`` understate the spread about a null
  value ``θ₀`` that lies away from ``m``; those about ``θ₀`` do not. Its null is composite
  (``d ∈ [θ₀, 1]``), so its p-value is the largest over it, which sits at an end; its
  confidence set is then an interval, the solution of a quadratic inequality in ``θ₀``
  (:meth:`BootEstimate._score_reach`), ±inf where it rejects nothing on a side. Its
  statistic is bounded: ``|m − θ₀| / se₀ ≤ 1/√A`` with ``A = Σ_g a_g h_g²``, ``√G (1 −
  1/G)`` for equal sheets - 1.79 at 5 students, below t₄'s 2.13 - so with 5 students (equal
  sheets) ``boot`` claims nothing, and at 6-10 little. Measured:
  benchmarks/RESULTS.md ("the score half"). Symmetric wild cluster
  bootstraps (Rademacher, Webb) and sign-flip tests were measured and are worse here (7.6-7.9%
  at 20-40 students): their resampled sums are symmetric and cannot see the skewness that
  makes the one-sided tests fail. The floor keeps near-degenerate classes from flipping: four
  identical students and a fifth one answer apart are judged, as five identical ones now are,
  on the answers' own variance (before: ``inconclusive`` for the five, decisive for the
  neighbour on a CR3 SE of 0.008). Measured: benchmarks/turing_bootstrap.py, README P5.

"No variation" is decided from the counts, never from a floating-point SE: the clustered SE is 0
exactly when every residual ``N·Z_g − n_g·ΣZ`` is 0 (every student has the same proportion) and
the naive one when ``N·Σz² − (Σz)² = 0`` (every MCQ has the same score) - integer arithmetic
for integer counts (:func:`no_variation`). With no variation every test keeps its null
(p = 1): five copies of one answer sheet are not infinitely precise. (Before, the SE of such data
came out as ~1e-17 from rounding, t ≈ 1e16, and identical students got verdicts.)

Tests at level ``α`` (two-sided for McNemar, one-sided otherwise):

* McNemar AI vs human: naive - exact binomial (two-sided, ``min(1, 2·P(Bin(b+c, ½) ≤ min(b, c)))``)
  when ``b + c <`` :data:`EXACT_BELOW`, else χ² with continuity correction, ``(|b−c|−1)²/(b+c)``:
  statsmodels' ``mcnemar(table, exact=…, correction=True)``. Clustered - Durkalski et al. (2003,
  Stat. Med. 22:1417) ``X² = (Σ_g (b_g − c_g))² / Σ_g (b_g − c_g)²``, χ²(1).
* TOST equivalence, ``H0: |p_AI − p_Human| ≥ ε``: two one-sided tests at ``±ε``, ``p = max``.
* Superiority of source S over random by ``δ``, ``H0: p_S − p_R ≤ δ``; and the opposite
  (*failure*) test ``H0: p_S − p_R ≥ δ``, rejected when the upper ``1 − α`` bound is below ``δ``.

Verdict (:func:`verdicts`): the paper's question is whether the AI is *within ε* of the expert
(Theorem 4: ``|p_AI − p_Human| ≤ ε`` and both beat ``p_Random + δ``), so the verdict is read off
one interval: the ``1 − 2α`` confidence interval ``[L, U]`` of ``d = p_AI − p_Human`` (the one the
chosen SE gives), checked in this order, so the five outcomes are exclusive:

==============  ==============================================  ===============================
verdict         the CI of d = p_AI − p_Human                    and, for random's distractor
==============  ==============================================  ===============================
draw            inside the margin: −ε < L and U < +ε (TOST)     both beat random by δ
ai_better       beyond the margin: L > +ε (H0: d ≤ +ε)          the AI beats random by δ
human_better    beyond the margin: U < −ε (H0: d ≥ −ε)          the human beats random by δ
both_fail       (any)                                           both shown below random + δ
inconclusive    anything else: the CI straddles ±ε, a source    (or fewer than MIN_STUDENTS
                ahead does not beat random, no variation ...    students: always)
==============  ==============================================  ===============================

Each "beyond" claim is a one-sided test at level α against the margin, as the draw is a TOST at
level α, so no verdict is reached more than α of the time when ``|d| = ε`` exactly: at the margin
neither "within" nor "beyond" can be claimed. As the number of students grows the CI shrinks to
the point ``d``: a true ``|d| < ε`` ends in ``draw``, a true ``|d| > ε`` in the better one's
verdict (given the random-distractor conditions). McNemar's test of the point null ``d = 0`` is
computed and reported beside the verdict (a difference may be real and still within ε), but it
does not decide: with a point null "better" and an ε-margin "draw" the regions overlap, and one
fixed truth with ``0 < |d| < ε`` would move from "better" at moderate n to "draw" at large n.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as sps

from ..defaults import N_BOOT as _N_BOOT
from ..defaults import TURING_SE, TURING_SIMULATION_SE
from ..stats import cr1_mean, sign_test

__all__ = [
    "ANALYTIC_SE",
    "BootBlock",
    "DOUBLE_KINDS",
    "N_BOOT_INNER",
    "BootEstimate",
    "CLUSTER_SE",
    "DEFAULT_SE",
    "N_BOOT",
    "SIMULATION_SE",
    "EXACT_BELOW",
    "MIN_STUDENTS",
    "FIELDS",
    "SE_KINDS",
    "SE_METHODS",
    "VERDICTS",
    "BatchTests",
    "MeanEstimate",
    "batch_tests",
    "bm_df",
    "boot_mean",
    "boot_weights",
    "clustered_mean",
    "explain",
    "hall",
    "inner_draws",
    "hall_inverse",
    "mcnemar_clustered",
    "mcnemar_naive",
    "naive_mean",
    "no_variation",
    "verdicts",
]

FIELDS = ("n", "C", "A", "H", "R", "AH", "AR", "HR")
F = {name: i for i, name in enumerate(FIELDS)}
VERDICTS = ("draw", "ai_better", "human_better", "both_fail", "inconclusive")
#: student-clustered standard errors with t-table p-values
ANALYTIC_SE = ("cr3", "cr2", "cr1")
#: every student-clustered kind; the first, ``boot``, decides ``turing analyze``'s verdict by
#: default (CR3 + Hall with a design effect of at least 1, p-values also from the pairs cluster
#: bootstrap-t and its fast double bootstrap: :func:`boot_mean`)
CLUSTER_SE = ("boot", *ANALYTIC_SE)
#: the kind that decides ``turing analyze``'s verdict unless ``se`` says otherwise
DEFAULT_SE = TURING_SE
#: the kind behind the simulated verdicts of ``turing power`` / ``turing simulate`` by default
#: (thousands of studies each: the analytic CR3, not B bootstrap draws per study)
SIMULATION_SE = TURING_SIMULATION_SE
#: bootstrap draws of ``boot`` (α(B + 1) is an integer for α = 0.05, 0.01, 0.1)
N_BOOT = _N_BOOT
#: every kind of standard error ``turing analyze`` reports
SE_KINDS = ("naive", *CLUSTER_SE)
#: what each kind is, in words (for reports and results.json)
SE_METHODS = {
    "boot": "student-clustered CR3 with Hall's (1992) skewness-corrected t and a design effect of "
    "at least 1 (the SE never below the rows-independent one); each p-value the largest of its "
    "t-table value (Bell-McCaffrey df), its pairs cluster bootstrap-t value, that value's "
    "fast double bootstrap (Davidson-MacKinnon 2007) and the score test's (the same t table "
    "with the variance taken about the null value)",
    "naive": "rows independent: SE^2 = s^2/N, t on N - 1 df",
    "cr1": "student-clustered CR1 (Liang-Zeger, G/(G-1) factor), t on G - 1 df",
    "cr2": "student-clustered CR2 (Bell-McCaffrey bias-reduced linearisation), Bell-McCaffrey "
    "df, Hall (1992) skewness-corrected t",
    "cr3": "student-clustered CR3 (Bell-McCaffrey jackknife: leave-one-student-out variance), "
    "Bell-McCaffrey df, Hall (1992) skewness-corrected t",
}
#: McNemar is exact (binomial) when the discordant count b + c is below this.
EXACT_BELOW = 25
#: Fewest students for any verdict but ``inconclusive``: with fewer, a student-clustered
#: standard error rests on one to three clusters and says nothing about students in general.
MIN_STUDENTS = 5
_INT_SAFE = 2.0**31  # products of two such integers are exact in int64


def _sum(counts: np.ndarray, name: str) -> np.ndarray:
    return counts[..., F[name]]


def _as_int(*arrays: np.ndarray) -> list[np.ndarray] | None:
    """The arrays as int64 when all hold integers small enough for exact products, else None."""
    out = []
    for a in arrays:
        a = np.asarray(a, dtype=float)
        if not (
            np.isfinite(a).all() and (np.abs(a) < _INT_SAFE).all() and (a == np.round(a)).all()
        ):
            return None
        out.append(a.astype(np.int64))
    return out


def no_variation(cluster_sums: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """True where every student has the same mean score: ``N·Z_g − n_g·ΣZ = 0`` for every ``g``.

    Decided in exact integer arithmetic for integer counts (the residuals are integers), else
    with a tolerance relative to the scale of the counts - never from a computed SE, whose
    rounding residue (~1e-17) is not information. One student (or none) is no variation."""
    ints = _as_int(cluster_sums, sizes)
    if ints is not None:
        z, n = ints
        resid = z * n.sum(axis=-1, keepdims=True) - n * z.sum(axis=-1, keepdims=True)
        return ~(resid != 0).any(axis=-1)
    z = np.asarray(cluster_sums, dtype=float)
    n = np.asarray(sizes, dtype=float)
    tot, big_n = z.sum(axis=-1, keepdims=True), n.sum(axis=-1, keepdims=True)
    resid = z * big_n - n * tot
    zmax, nmax = np.abs(z).max(axis=-1, keepdims=True), n.max(axis=-1, keepdims=True)
    scale = zmax * big_n + nmax * np.abs(tot)
    return (np.abs(resid) <= 1e-9 * scale).all(axis=-1)


def _rows_alike(total: np.ndarray, sum_sq: np.ndarray, n: np.ndarray) -> np.ndarray:
    """True where every row has the same score: ``N·Σz² − (Σz)² = 0``, exact for integers."""
    ints = _as_int(total, sum_sq, n)
    if ints is not None:
        t, s, m = ints
        return m * s - t * t == 0
    t, s, m = (np.asarray(x, dtype=float) for x in (total, sum_sq, n))
    return np.abs(m * s - t * t) <= 1e-9 * (m * np.abs(s) + t * t)


def hall(t: np.ndarray, skew: np.ndarray) -> np.ndarray:
    """Hall's (1992) skewness-corrected statistic ``t + a t² + a² t³/3 + a/2``, ``a = skew/3``.

    ``skew`` is the estimated skewness of the mean (``γ̂/√G``). The Edgeworth expansion of a
    studentised mean, ``P(T ≤ x) = Φ(x) + skew·(2x² + 1)φ(x)/6 + O(1/G)``, loses its skewness
    term under this map; its derivative ``(1 + a t)²`` is never negative, so it is monotone and
    a test on it is a test on ``t`` with shifted, asymmetric critical values."""
    a = np.asarray(skew, dtype=float) / 3.0
    with np.errstate(invalid="ignore", over="ignore"):  # NaN/inf t (no statistic) stay so
        u = a * t  # Horner's form: t (1 + u (1 + u/3)) + a/2, no powers (the bootstrap's hot path)
        return t * (1.0 + u * (1.0 + u / 3.0)) + a / 2.0


def hall_inverse(y: np.ndarray, skew: np.ndarray) -> np.ndarray:
    """The ``t`` with ``hall(t, skew) = y``: ``((1 + 3a(y − a/2))^{1/3} − 1)/a`` (``y`` at a = 0)."""
    a = np.asarray(skew, dtype=float) / 3.0
    y = np.asarray(y, dtype=float)
    x = 3.0 * a * (y - a / 2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        # cube root of 1 + x minus 1, accurate for small x
        root = np.where(
            x > -1.0, np.expm1(np.log1p(np.maximum(x, -1.0 + 1e-300)) / 3.0), np.cbrt(1.0 + x) - 1.0
        )
        return np.where(a != 0, root / np.where(a != 0, a, 1.0), y - a / 2.0)


def bm_df(sizes: np.ndarray) -> np.ndarray:
    """Bell-McCaffrey degrees of freedom of the CR2 SE of an intercept-only model, batched.

    ``ν = (tr M)² / tr M²`` with ``M = G'G`` and ``G``'s column ``g`` equal to
    ``(I − H)_g' A_g X_g (X'X)^{-1}`` (Imbens & Kolesár 2016, eq. 8; Ω = I). For ``X = 1`` this
    is ``M_gk = c_g c_k (δ_gk n_g − n_g n_k / N)``, ``c_g = 1 / (N √(1 − h_g))``, so
    ``ν = N² / (Σ n_g² + ((Σ ω_g)² − Σ ω_g²) / N²)`` with ``ω_g = n_g² / (1 − h_g)``:
    ``G − 1`` for equal sizes, fewer when they differ. Zero-size students are padding."""
    n = np.asarray(sizes, dtype=float)
    big_n = n.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        omega = np.where(n > 0, n**2 / (1.0 - n / big_n), 0.0)
        den = (n**2).sum(axis=-1) + (omega.sum(axis=-1) ** 2 - (omega**2).sum(axis=-1)) / big_n[
            ..., 0
        ] ** 2
        nu = big_n[..., 0] ** 2 / den
    g = (n > 0).sum(axis=-1)
    return np.where(g >= 2, nu, 0.0)


@dataclass
class MeanEstimate:
    """A mean of per-MCQ scores with what its tests need; arrays of the batch shape.

    ``skew`` is Hall's skewness of the mean (0: a plain t test); ``flat`` marks no variation
    (:func:`no_variation`), where the SE is 0, every statistic NaN and every p-value 1."""

    mean: np.ndarray
    se: np.ndarray
    df: np.ndarray
    skew: np.ndarray
    flat: np.ndarray

    def statistic(self, theta0: float) -> np.ndarray:
        """The (skewness-corrected) t statistic of ``H0: mean = theta0``; NaN with no variation."""
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(self.flat, 0.0, (self.mean - theta0) / self.se)
        return np.where(self.flat, np.nan, hall(t, self.skew))

    def p_upper(self, theta0: float) -> np.ndarray:
        """p-value of ``H0: mean ≤ theta0`` (rejected: the mean is above ``theta0``)."""
        with np.errstate(invalid="ignore"):
            p = sps.t.sf(self.statistic(theta0), self.df)
        return np.where(self.flat, 1.0, p)

    def p_lower(self, theta0: float) -> np.ndarray:
        """p-value of ``H0: mean ≥ theta0`` (rejected: the mean is below ``theta0``)."""
        with np.errstate(invalid="ignore"):
            p = sps.t.cdf(self.statistic(theta0), self.df)
        return np.where(self.flat, 1.0, p)

    def bounds(self, alpha: float) -> tuple[np.ndarray, np.ndarray]:
        """One-sided ``1 − alpha`` lower and upper bounds (together a ``1 − 2·alpha`` interval),
        the inversions of :meth:`p_upper` and :meth:`p_lower`; NaN with no variation."""
        with np.errstate(invalid="ignore"):
            q = sps.t.ppf(1.0 - alpha, self.df)
        lo = self.mean - self.se * hall_inverse(q, self.skew)
        hi = self.mean - self.se * hall_inverse(-q, self.skew)
        return np.where(self.flat, np.nan, lo), np.where(self.flat, np.nan, hi)


def naive_mean(cluster_sums: np.ndarray, sum_sq: np.ndarray, sizes: np.ndarray) -> MeanEstimate:
    """Mean with the rows-independent SE (``s²/N``, ``N − 1`` df), batched: ``cluster_sums[..., g]``
    = Σ of student ``g``'s scores, ``sum_sq[...]`` = Σ over all rows of score²."""
    sizes = np.asarray(sizes, dtype=float)
    total = np.asarray(cluster_sums, dtype=float).sum(axis=-1)
    n = sizes.sum(axis=-1)
    flat = _rows_alike(total, sum_sq, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = total / n
        var_row = np.maximum(sum_sq - n * mean**2, 0.0) / (n - 1)
        se = np.sqrt(var_row / n)
    return MeanEstimate(mean, np.where(flat, 0.0, se), n - 1, np.zeros_like(mean), flat)


def clustered_mean(
    cluster_sums: np.ndarray, sizes: np.ndarray, method: str, sum_sq: np.ndarray | None = None
) -> MeanEstimate:
    """Mean with a student-clustered SE (``method`` one of :data:`CLUSTER_SE`; module
    docstring), batched over leading axes; students of size 0 are padding.

    ``cr3`` and ``cr2`` differ only in the power of the leverage adjustment,
    ``Σ_g E_g² / (1 − h_g)^k / N²`` with ``k = 2`` (jackknife) and ``k = 1``; both take
    Bell-McCaffrey df (:func:`bm_df`, the CR2 working-model df) and Hall's skewness term.
    ``boot`` here is its t-table half (:func:`floored_cr3`, which needs ``sum_sq``, the Σ of
    squared scores over all rows); its bootstrap half is :func:`boot_mean`."""
    if method not in CLUSTER_SE:
        raise ValueError(f"clustered SE must be one of {CLUSTER_SE}, got {method!r}")
    if method == "boot":
        if sum_sq is None:
            raise ValueError("the boot method needs sum_sq (its SE is never below the naive one)")
        return floored_cr3(cluster_sums, sizes, sum_sq)
    sizes = np.asarray(sizes, dtype=float)
    z = np.asarray(cluster_sums, dtype=float)
    n = sizes.sum(axis=-1)
    g = (sizes > 0).sum(axis=-1).astype(float)
    flat = no_variation(z, sizes) | (g < 2)
    if method == "cr1":  # the shared CR1 (edueval.stats), t on G - 1 df
        est = cr1_mean(z, sizes)
        mean, se, df, skew = est.mean, est.se, est.df, np.zeros_like(est.mean)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = z.sum(axis=-1) / n
            resid = z - sizes * mean[..., None]
            power = 2.0 if method == "cr3" else 1.0
            lev = sizes / n[..., None]
            var = np.where(sizes > 0, resid**2 / (1.0 - lev) ** power, 0.0).sum(axis=-1) / n**2
            df, skew = bm_df(sizes), _skewness_of_mean(resid, g)
            se = np.sqrt(var)
    skew = np.where(flat, 0.0, skew)
    return MeanEstimate(mean, np.where(flat, 0.0, se), df, skew, flat)


def floored_cr3(cluster_sums: np.ndarray, sizes: np.ndarray, sum_sq: np.ndarray) -> MeanEstimate:
    """CR3 + Bell-McCaffrey df + Hall's term with the SE never below the rows-independent one.

    A design effect of at least 1: students' answers are not taken to be more precise than
    independent answers. Between-student variation estimated from a handful of students can
    come out near 0 by chance (four identical answer sheets and a fifth one answer apart), and a
    CR3 SE of 0.008 where 125 independent answers give 0.078 is noise, not precision; the floor
    makes identical students and their one-answer neighbours alike (both are judged on the
    answers' own variance), instead of the one ``inconclusive`` and the other decisive. Only
    every row having the same score (the naive SE exactly 0) or fewer than 2 students is "no
    variation" here.

    Hall's skewness is the third cumulant over the variance^1.5; where the floor binds the
    variance is the floored one, so the skewness shrinks by ``(se_CR3 / se)³``: the residuals of
    four identical students and a fifth one answer apart are as skewed as residuals can be, but
    carry almost none of the variance, and must not tilt the test either."""
    sizes = np.asarray(sizes, dtype=float)
    cr3 = clustered_mean(cluster_sums, sizes, "cr3")
    naive = naive_mean(cluster_sums, sum_sq, sizes)
    flat = naive.flat | ((sizes > 0).sum(axis=-1) < 2)
    se = np.where(flat, 0.0, np.maximum(cr3.se, naive.se))
    with np.errstate(divide="ignore", invalid="ignore"):
        shrink = np.where(se > 0, (cr3.se / se) ** 3, 0.0)
    return MeanEstimate(cr3.mean, se, cr3.df, np.where(flat, 0.0, cr3.skew * shrink), flat)


@dataclass
class BootEstimate(MeanEstimate):
    """:func:`floored_cr3` (the fields of :class:`MeanEstimate`: the t-table half) with its pairs
    cluster bootstrap-t half and its double bootstrap half: ``tstar[..., b]`` the sorted
    bootstrap statistics (NaN last: a draw of students who all have the same mean, which has
    no statistic), ``se_b`` / ``skew_b`` the CR3 SE and skewness the data's bootstrap statistic
    is studentised with, ``skip`` where the students do not vary at all (nothing to resample:
    the t-table half decides alone). The double bootstrap (:meth:`_second_p`) is either the
    full one, ``pst_lower`` / ``pst_upper[..., b]`` the sorted bootstrap p-values of each
    first-level statistic against its own second-level resamples, or the fast one,
    ``tss[..., b]`` the sorted second-level statistics (one resample of each first-level
    resample); all three empty: none. Every p-value is the largest of the halves'
    (``(1 + #{T* ≤ T})/(B + 1)`` for the bootstrap, never 0) and every bound the widest, so a
    claim needs all of them."""

    se_b: np.ndarray = field(default_factory=lambda: np.zeros(()))
    skew_b: np.ndarray = field(default_factory=lambda: np.zeros(()))
    tstar: np.ndarray = field(default_factory=lambda: np.zeros((0,)))
    skip: np.ndarray = field(default_factory=lambda: np.zeros((), dtype=bool))
    tss: np.ndarray = field(default_factory=lambda: np.zeros((0,)))
    pst_lower: np.ndarray = field(default_factory=lambda: np.zeros((0,)))
    pst_upper: np.ndarray = field(default_factory=lambda: np.zeros((0,)))
    score: np.ndarray | None = None  # [..., 3]: A, B, C of :meth:`_score_se2`; None: no half
    lim: float = 1.0  # the scores lie in [-lim, lim], so the mean does

    def _score_se2(self, theta0: np.ndarray | float) -> np.ndarray:
        """The null-centred ("score") CR3 variance at ``theta0``: ``Σ_g a_g (z_g − θ₀n_g)² / N²``
        with ``a_g = (1 − n_g/N)⁻²``, as ``A x² − 2 B x + C`` in ``x = θ₀ − m`` (``A = Σ a n²``,
        ``B = Σ a E n``, ``C = Σ a E²`` over ``N²``; ``E_g = z_g − m n_g``; ``C`` is CR3's)."""
        assert self.score is not None
        x = np.asarray(theta0, dtype=float) - self.mean
        sa, sb, sc = self.score[..., 0], self.score[..., 1], self.score[..., 2]
        return np.maximum(sa * x * x - 2.0 * sb * x + sc, 0.0)

    def _score_t(self, theta0: np.ndarray | float) -> np.ndarray:
        """``(m − θ₀)/se₀`` with ``se₀`` the score SE floored at the t-table half's SE."""
        se0 = np.maximum(np.sqrt(self._score_se2(theta0)), self.se)
        with np.errstate(divide="ignore", invalid="ignore"):
            return (self.mean - theta0) / se0

    def _score_p(self, theta0: np.ndarray | float, upper: bool) -> np.ndarray:
        """The score half's p-value of ``H0: mean ≤ θ₀`` (``upper``) or ``H0: mean ≥ θ₀``.

        The null is composite (``mean ∈ [−lim, θ₀]`` or ``[θ₀, lim]``) and its p-value the
        largest over it; the statistic is quasi-monotone on the null (for ``θ₀`` on the far
        side of ``m``: decreasing, then increasing towards its limit ``∓1/√A``), so the
        largest sits at an end: ``θ₀`` or ``∓lim``. That makes the set of ``θ₀`` not rejected
        an interval (:meth:`_score_reach`). A ``θ₀`` beyond ``±lim`` is tested as ``±lim``
        (no mean lies there). Hall's term and the df are the t-table half's."""
        theta0 = np.clip(theta0, -self.lim, self.lim)  # beyond: as at the end
        t0, t1 = self._score_t(theta0), self._score_t(-self.lim if upper else self.lim)
        t = np.minimum(t0, t1) if upper else np.maximum(t0, t1)
        with np.errstate(invalid="ignore"):
            h = hall(t, self.skew)
            return sps.t.sf(h, self.df) if upper else sps.t.cdf(h, self.df)

    def _score_reach(self, alpha: float, upper: bool) -> np.ndarray:
        """How far from ``m`` the score half's one-sided ``1 − α`` bound lies: the largest
        ``x ∈ [0, X]`` (``X`` the distance to ``±lim``) with ``x ≤ k·max(s(x), se)``, where
        ``k = ∓hall_inverse(∓q, skew)`` and ``s(x)² = A x² ∓ 2 B x + C`` (``θ₀ = m ± x``). With
        ``x ≥ 0`` that is ``(1 − k²A) x² ± 2k²B x − k²C ≤ 0`` (Fieller-like): if ``X`` itself
        satisfies it, ``inf`` (the data reject no value of the mean on that side, as a
        bootstrap half that never rejects); else the smallest non-negative root, or ``k·se``
        where the floor
        reaches further. ``k ≤ 0`` (only for α above 0.4) makes the half's set lie inside the
        t-table half's: −inf, so the hull ignores it."""
        assert self.score is not None
        with np.errstate(invalid="ignore"):
            q = sps.t.ppf(1.0 - alpha, self.df)
        k = hall_inverse(q, self.skew) if upper else -hall_inverse(-q, self.skew)
        sign = -1.0 if upper else 1.0  # the lower bound: theta0 = m - x
        big_x = self.lim - sign * self.mean
        sa, sb, sc = self.score[..., 0], sign * self.score[..., 1], self.score[..., 2]
        s_x = np.sqrt(np.maximum(sa * big_x**2 - 2.0 * sb * big_x + sc, 0.0))
        kk = k * k
        a2, b2 = 1.0 - kk * sa, 2.0 * kk * sb
        root_d = np.sqrt(np.maximum(b2 * b2 + 4.0 * a2 * kk * sc, 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            # the smallest non-negative root, in the form that does not cancel
            root = np.where(b2 > 0, 2.0 * kk * sc / (b2 + root_d), (root_d - b2) / (2.0 * a2))
        whole = big_x <= k * np.maximum(s_x, self.se)
        reach = np.where(whole, np.inf, np.fmax(k * self.se, root))
        return np.where(k > 0, reach, -np.inf)

    def _stat_b(self, theta0: float) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (self.mean - theta0) / self.se_b
        return hall(t, self.skew_b)

    def _count(self) -> np.ndarray:
        return (~np.isnan(self.tstar)).sum(axis=-1)

    @property
    def double(self) -> str:
        """``"full"``, ``"fast"`` or ``""``: which double bootstrap this estimate carries."""
        return "full" if self.pst_lower.shape[-1] else "fast" if self.tss.shape[-1] else ""

    def _second_p(self, k: np.ndarray, upper: bool) -> np.ndarray:
        """The double bootstrap p-value of a one-sided test whose single bootstrap p-value
        ``p₁ = (1 + k)/(B + 1)`` counts ``k`` first-level statistics at least as extreme as
        the data's. Full (Beran 1987; Hall 1992 §3.11): ``(1 + #{p*_b ≤ p₁})/(B + 1)``, the
        share of bootstrap worlds whose own bootstrap p-value is as small. Fast (Davidson &
        MacKinnon 2007, CSDA 51:3259): ``p* = k/B``, ``Q**`` the second-level statistic with
        a share ``p*`` of the ``τ**`` beyond it (the ``1 − p*`` quantile; ``p*`` for a
        lower-tail test), and ``(1 + #{τ* beyond Q**})/(B + 1)``, "beyond" strictly, as in
        their definition (it matters only for the atoms of a near-degenerate class, whose
        ``τ*`` take a few values: counting ties would keep such a test from ever rejecting).
        Both are monotone in ``k``; 1 where no draw has a statistic."""
        b1 = self._count()
        if self.double == "full":
            pst = self.pst_upper if upper else self.pst_lower
            p1 = ((1.0 + k) / (b1 + 1.0))[..., None]
            return (1.0 + (pst <= p1 * (1 + 1e-12)).sum(axis=-1)) / (b1 + 1.0)
        b2 = (~np.isnan(self.tss)).sum(axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.ceil(np.where(b1 > 0, k * b2 / b1, 0.0) - 1e-9).astype(int)
        last = self.tss.shape[-1] - 1
        idx = b2 - r - 1 if upper else r
        ok = (idx >= 0) & (idx < b2)
        q = np.take_along_axis(self.tss, np.clip(idx, 0, last)[..., None], axis=-1)[..., 0]
        q = np.where(ok, q, -np.inf if upper else np.inf)[..., None]
        beyond = (self.tstar > q) if upper else (self.tstar < q)
        return (1.0 + beyond.sum(axis=-1)) / (b1 + 1.0)

    def _p(self, theta0: float, upper: bool) -> np.ndarray:
        t0 = self._stat_b(theta0)[..., None]
        k = ((self.tstar >= t0) if upper else (self.tstar <= t0)).sum(axis=-1)
        p_t = super().p_upper(theta0) if upper else super().p_lower(theta0)
        parts = [p_t, np.where(self.skip, 0.0, (1.0 + k) / (self._count() + 1.0))]
        if self.double:
            parts.append(np.where(self.skip, 0.0, self._second_p(k, upper)))
        if self.score is not None:
            parts.append(self._score_p(theta0, upper))
        return np.where(self.flat, 1.0, np.maximum.reduce(parts))

    def p_upper(self, theta0: float) -> np.ndarray:
        return self._p(theta0, True)

    def p_lower(self, theta0: float) -> np.ndarray:
        return self._p(theta0, False)

    def _k_crit(self, alpha: float, upper: bool, second: bool) -> np.ndarray:
        """The largest count ``k`` (:meth:`_second_p`) whose p-value is below ``alpha``, −1
        if none: the single bootstrap's in closed form, the double's by bisection (its
        p-value is monotone in ``k``; ``k = B`` gives 1)."""
        b1 = self._count()
        if not second:
            return np.ceil(alpha * (b1 + 1.0) - 1.0 - 1e-9).astype(int) - 1
        lo, hi = np.full(b1.shape, -1), b1.copy()
        while (active := hi - lo > 1).any():
            mid = (lo + hi) // 2
            rej = active & (self._second_p(np.where(active, mid, 0), upper) < alpha)
            lo, hi = np.where(rej, mid, lo), np.where(active & ~rej, mid, hi)
        return lo

    def _bound_b(self, alpha: float, upper: bool, second: bool) -> np.ndarray:
        """A bootstrap half's one-sided bound: the lower one (``upper``: where
        :meth:`p_upper` crosses α) or the upper one; ±inf where it never rejects."""
        b1 = self._count()
        kc = self._k_crit(alpha, upper, second)
        idx = np.clip(b1 - 1 - kc if upper else kc, 0, self.tstar.shape[-1] - 1)
        q = np.take_along_axis(self.tstar, idx[..., None], axis=-1)[..., 0]
        with np.errstate(invalid="ignore"):
            b = self.mean - self.se_b * hall_inverse(q, self.skew_b)
        b = np.where(kc >= 0, b, -np.inf if upper else np.inf)
        return np.where(self.skip, np.inf if upper else -np.inf, b)

    def bounds(self, alpha: float) -> tuple[np.ndarray, np.ndarray]:
        """The hull of the halves' one-sided ``1 − α`` bounds: ``L`` and ``U`` are exactly
        where :meth:`p_upper` and :meth:`p_lower` cross α (± a tie)."""
        lo, hi = super().bounds(alpha)
        for second in (False, True) if self.double else (False,):
            lo = np.fmin(lo, self._bound_b(alpha, True, second))
            hi = np.fmax(hi, self._bound_b(alpha, False, second))
        if self.score is not None:
            lo = np.fmin(lo, self.mean - self._score_reach(alpha, True))
            hi = np.fmax(hi, self.mean + self._score_reach(alpha, False))
        return np.where(self.flat, np.nan, lo), np.where(self.flat, np.nan, hi)


#: studies per bootstrap weight matrix: each block of studies gets its own resamples, so that
#: simulated studies' p-values are independent, while one matrix product serves the block
BOOT_BLOCK = 64
#: second-level resamples of each first-level one in the full double bootstrap
N_BOOT_INNER = 199
#: the double bootstraps of ``boot`` (:func:`boot_weights`); the first is the default
DOUBLE_KINDS = ("fast", "full", "none")


@dataclass(frozen=True)
class BootBlock:
    """The draws of one block of studies: ``w [B, G]`` how often each student is drawn in each
    first-level resample; ``w2 [B, G]`` the fast double bootstrap's second level (row ``b``
    drawn from resample ``b``) or None; ``inner`` the seed of the full double bootstrap's
    second level (``n_inner`` resamples of each first-level one, drawn when used) or None."""

    rows: slice
    w: np.ndarray
    w2: np.ndarray | None = None
    inner: int | None = None
    n_inner: int = 0


def boot_weights(
    rng: np.random.Generator,
    n_studies: int,
    n_students: int,
    n_boot: int = N_BOOT,
    double: str = DOUBLE_KINDS[0],
    n_inner: int = N_BOOT_INNER,
) -> list[BootBlock]:
    """Pairs cluster bootstrap draws: for each block of :data:`BOOT_BLOCK` studies a fresh
    ``[B, G]`` matrix of how often each student is drawn (``Multinomial(G, 1/G)`` per draw)
    and the double bootstrap's second level (``G`` students drawn from a first-level
    resample: ``Multinomial(G, w_b/G)`` in the original students' counts): ``"full"``
    ``n_inner`` of each, ``"fast"`` (the default) one of each, ``"none"``."""
    if n_boot < 1 or n_inner < 1:
        raise ValueError(f"n_boot and n_inner must be >= 1, got {n_boot}, {n_inner}")
    if double not in DOUBLE_KINDS:
        raise ValueError(f"double must be one of {DOUBLE_KINDS}, got {double!r}")
    p = np.full(n_students, 1.0 / n_students)
    starts = range(0, n_studies, BOOT_BLOCK)
    # every first level first: the same seed gives the same first level whatever ``double`` is
    ws = [rng.multinomial(n_students, p, size=n_boot) for _ in starts]
    out = []
    for i, w in zip(starts, ws, strict=True):
        w2 = rng.multinomial(n_students, w / n_students).astype(float) if double == "fast" else None
        inner = int(rng.integers(2**63)) if double == "full" else None
        rows = slice(i, min(i + BOOT_BLOCK, n_studies))
        out.append(BootBlock(rows, w.astype(float), w2, inner, n_inner if inner else 0))
    return out


def _skew_from_moments(m2: np.ndarray, m3: np.ndarray, g: float, ok: np.ndarray) -> np.ndarray:
    """Hall's ``γ̂/√G`` from the mean second and third moments of residual sums (as
    :func:`_skewness_of_mean`); 0 where not ``ok`` or with fewer than 3 students."""
    with np.errstate(divide="ignore", invalid="ignore"):
        g1 = m3 / m2**1.5
        skew = g1 * np.sqrt(g * (g - 1)) / (g - 2) / np.sqrt(g)
    return np.where(ok & (g >= 3) & (m2 > 0), skew, 0.0)


def _resampled(terms: np.ndarray, w: np.ndarray, g: int) -> tuple[np.ndarray, ...]:
    """The per-student ``terms [12, S, G]`` of :func:`_boot_block` summed over each draw of
    ``w [..., G]``, and from them each draw's ``m* − m``, CR3 SE, Hall skewness and whether
    its students vary at all (``[S, ...]``)."""
    s_n = terms.shape[1]
    prods = (terms.reshape(-1, g) @ w.reshape(-1, g).T).reshape(12, s_n, *w.shape[:-1])
    ns, e1, e2s, en, n2, e3s, e2n, en2, n3, ae2, aen, an2 = prods
    dl = e1 / ns  # m* - m
    s2 = e2s - 2 * dl * en + dl**2 * n2
    s3 = e3s - 3 * dl * e2n + 3 * dl**2 * en2 - dl**3 * n3
    # a draw of students who all have the same mean has no statistic (its SE is 0 but for
    # rounding; as the data themselves would be "no variation"): NaN, left out of the count
    varies = s2 > 1e-10 * (e2s + dl**2 * n2)
    with np.errstate(divide="ignore", invalid="ignore"):
        ses = np.sqrt(np.maximum(ae2 - 2 * dl * aen + dl**2 * an2, 0.0)) / ns
    return dl, ses, _skew_from_moments(s2 / g, s3 / g, g, varies), varies


def _statistic(dl: np.ndarray, centre: np.ndarray | float, ses: np.ndarray, sk: np.ndarray,
               varies: np.ndarray) -> np.ndarray:  # fmt: skip
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return hall(np.where(varies, (dl - centre) / ses, np.nan), sk)


def inner_draws(blk: BootBlock) -> Iterator[tuple[slice, np.ndarray]]:
    """The full double bootstrap's second level of a block, a few first-level resamples at a
    time: ``(rows, w2)`` with ``w2[c, i, :]`` the counts of second-level resample ``i`` of
    first-level resample ``rows.start + c`` (``G`` students drawn from it:
    ``Multinomial(G, w_b/G)``), from the block's ``inner`` seed."""
    g = blk.w.shape[-1]
    rng = np.random.default_rng(blk.inner)
    step = max(1, 4096 // max(blk.n_inner, 1))
    for j in range(0, blk.w.shape[0], step):
        rows = slice(j, min(j + step, blk.w.shape[0]))
        w2 = rng.multinomial(g, blk.w[rows] / g, size=(blk.n_inner, rows.stop - rows.start))
        yield rows, np.swapaxes(w2, 0, 1).astype(float)


def _full_double(
    terms: np.ndarray, dl: np.ndarray, tstar: np.ndarray, blk: BootBlock
) -> tuple[np.ndarray, np.ndarray]:
    """The full double bootstrap's p-values ``[S, B]`` of each first-level statistic
    ``tstar`` against its ``n_inner`` second-level statistics ``hall((m** − m*)/se**,
    skew**)`` (:func:`inner_draws`): lower- and upper-tail, ``(1 + #{T** ≤ T*})/(B₂ + 1)``
    over the second-level draws that have a statistic; NaN where ``T*`` is."""
    g = blk.w.shape[-1]
    p_lo, p_hi = np.full(tstar.shape, np.nan), np.full(tstar.shape, np.nan)
    for rows, w2 in inner_draws(blk):
        dl2, ses2, sk2, varies2 = _resampled(terms, w2, g)
        tss = _statistic(dl2, dl[:, rows, None], ses2, sk2, varies2)  # [S, c, B2]
        cnt = (~np.isnan(tss)).sum(-1) + 1.0
        t = tstar[:, rows, None]
        ok = ~np.isnan(tstar[:, rows])
        p_lo[:, rows] = np.where(ok, (1.0 + (tss <= t).sum(-1)) / cnt, np.nan)
        p_hi[:, rows] = np.where(ok, (1.0 + (tss >= t).sum(-1)) / cnt, np.nan)
    return p_lo, p_hi


def _boot_block(z: np.ndarray, n: np.ndarray, blk: BootBlock) -> tuple[np.ndarray, ...]:
    """One block of studies ``[S, G]`` (sums, sizes) and its draws: the CR3 SE and Hall
    skewness of each study and its bootstrap statistics ``[S, B]``,
    ``T* = hall((m* − m)/se*, skew*)``, every resampled copy of a student a cluster. ``se*``
    takes CR3's jackknife factors ``(1 − n_g/N)^-2`` at the sample's leverages (a draw's own
    total N* differs from N by a few percent; on the data, exactly CR3): the sums over the
    drawn students are then one matrix product of per-student terms with ``w``. Then the
    double bootstrap's: the fast one's ``T** = hall((m** − m*)/se**, skew**)`` ``[S, B]``
    (the same statistic one level down: its null value is the first-level resample's mean),
    the full one's p-values (:func:`_full_double`); empty arrays for those not drawn."""
    s_n, g = z.shape
    big_n, tot = n.sum(-1), z.sum(-1)
    e = (big_n[:, None] * z - n * tot[:, None]) / big_n[:, None]  # exact zeros for alike students
    a = 1.0 / (1.0 - n / big_n[:, None]) ** 2  # CR3's jackknife factor, leverage n_g / N
    e2, e3 = (e**2).sum(-1), (e**3).sum(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt((a * e**2).sum(-1)) / big_n
    skew = _skew_from_moments(e2 / g, e3 / g, g, np.ones_like(e2, dtype=bool))
    terms = np.stack([n, e, e**2, e * n, n**2, e**3, e**2 * n, e * n**2, n**3,
                      a * e**2, a * e * n, a * n**2])  # fmt: skip
    dl, ses, sk, varies = _resampled(terms, blk.w, g)
    tstar = _statistic(dl, 0.0, ses, sk, varies)
    none = np.zeros((s_n, 0))
    tss, p_lo, p_hi = none, none, none
    if blk.w2 is not None:
        dl2, ses2, sk2, varies2 = _resampled(terms, blk.w2, g)
        tss = _statistic(dl2, dl, ses2, sk2, varies2)
    if blk.inner is not None:
        p_lo, p_hi = _full_double(terms, dl, tstar, blk)
    return se, skew, tstar, tss, p_lo, p_hi


def boot_mean(
    cluster_sums: np.ndarray,
    sizes: np.ndarray,
    sq_sums: np.ndarray,
    weights: list[BootBlock],
    *,
    score: bool = True,
    lim: float = 1.0,
) -> BootEstimate:
    """The ``boot`` estimate of a mean, batched: :func:`floored_cr3` and, over the same
    studies, the pairs cluster bootstrap-t (Hall 1992, ch. 3; Cameron, Gelbach & Miller 2008)
    of the Hall-corrected CR3 statistic ``hall((m − θ)/se, skew)``, its null distribution the
    resampled ``hall((m* − m)/se*, skew*)`` (:func:`_boot_block`; not floored: the floor is
    the t-table half's, and a floored bootstrap statistic loses the resamples' spread), and
    the double bootstrap that ``weights`` carry (:meth:`BootEstimate._second_p`).

    ``cluster_sums``, ``sizes`` and ``sq_sums`` (each student's Σ of scores and of squared
    scores) are ``[..., G]``; ``weights`` from :func:`boot_weights` for the flattened batch.
    Every student must have answered at least one MCQ. ``score``: also the score half, the
    t-table test with the variance taken about the null value (:meth:`BootEstimate._score_p`),
    for scores in ``[−lim, lim]`` (the composite null's far end); False is the ``boot`` of
    issue 34's third round, for comparisons."""
    z = np.asarray(cluster_sums, dtype=float)
    n = np.asarray(sizes, dtype=float)
    q = np.asarray(sq_sums, dtype=float)
    shape, g = z.shape[:-1], z.shape[-1]
    if (n <= 0).any():
        raise ValueError("the boot method needs every student to have answered an MCQ")
    t_part = floored_cr3(z, n, q.sum(axis=-1))
    zf, nf = z.reshape(-1, g), n.reshape(-1, g)
    b = weights[0].w.shape[0]
    widths = (b, b if weights[0].w2 is not None else 0, b if weights[0].inner is not None else 0)
    out = [np.empty(zf.shape[0]), np.empty(zf.shape[0])]
    out += [np.empty((zf.shape[0], k)) for k in (widths[0], widths[1], widths[2], widths[2])]
    for blk in weights:
        for arr, part in zip(out, _boot_block(zf[blk.rows], nf[blk.rows], blk), strict=True):
            arr[blk.rows] = part
    se_b, skew_b, *sorted_parts = out
    tstar, tss, p_lo, p_hi = (x.reshape(*shape, x.shape[-1]) for x in sorted_parts)
    for x in (tstar, tss, p_lo, p_hi):
        x.sort(axis=-1)  # NaN last
    return BootEstimate(
        t_part.mean, t_part.se, t_part.df, t_part.skew, t_part.flat,
        se_b=se_b.reshape(shape), skew_b=skew_b.reshape(shape), tstar=tstar,
        skip=no_variation(z, n), tss=tss, pst_lower=p_lo, pst_upper=p_hi,
        score=_score_terms(z, n) if score else None, lim=lim,
    )  # fmt: skip


def _score_terms(z: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``[..., 3]``: ``A = Σ a n²``, ``B = Σ a E n``, ``C = Σ a E²`` over ``N²``, with CR3's
    ``a_g = (1 − n_g/N)⁻²`` and ``E_g = z_g − m n_g`` (exact zeros for alike students), so
    that the null-centred variance at ``θ₀ = m + x`` is ``A x² − 2 B x + C``."""
    big_n = n.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = (big_n * z - n * z.sum(axis=-1, keepdims=True)) / big_n
        a = 1.0 / (1.0 - n / big_n) ** 2
        terms = [(a * x).sum(axis=-1) for x in (n * n, e * n, e * e)]
    return np.stack(terms, axis=-1) / big_n**2


def _skewness_of_mean(resid: np.ndarray, g: np.ndarray) -> np.ndarray:
    """``γ̂/√G``: adjusted Fisher-Pearson skewness ``g₁·√(G(G−1))/(G−2)`` of the residual sums
    ``E_g`` (which sum to 0), over √G; 0 with fewer than 3 students."""
    with np.errstate(divide="ignore", invalid="ignore"):
        m2 = (resid**2).sum(axis=-1) / g
        m3 = (resid**3).sum(axis=-1) / g
        g1 = m3 / m2**1.5
        skew = g1 * np.sqrt(g * (g - 1)) / (g - 2) / np.sqrt(g)
    return np.where((g >= 3) & (m2 > 0), skew, 0.0)


def _mean(
    kind: str, cluster_sums: np.ndarray, sum_sq: np.ndarray, sizes: np.ndarray
) -> MeanEstimate:
    if kind == "naive":
        return naive_mean(cluster_sums, sum_sq, sizes)
    return clustered_mean(cluster_sums, sizes, kind, sum_sq)


def _pair(
    counts: np.ndarray,
    kind: str,
    x: str,
    y: str,
    xy: str,
    weights: list[BootBlock] | None = None,
    score: bool = True,
) -> MeanEstimate:
    """Paired difference ``[chose x] − [chose y]`` per MCQ (``d² = x + y − 2xy`` for 0/1);
    with ``weights`` (kind ``boot``) the bootstrap estimate of :func:`boot_mean`."""
    cs = _sum(counts, x) - _sum(counts, y)
    sq_g = _sum(counts, x) + _sum(counts, y) - 2 * _sum(counts, xy)
    if kind == "boot" and weights is not None:
        return boot_mean(cs, _sum(counts, "n"), sq_g, weights, score=score)
    return _mean(kind, cs, sq_g.sum(axis=-1), _sum(counts, "n"))


def mcnemar_naive(b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """McNemar's test of ``b`` vs ``c`` discordant pairs, as statsmodels ``mcnemar`` computes it:
    exact two-sided binomial when ``b + c <`` :data:`EXACT_BELOW`, else χ² with continuity
    correction. Returns ``statistic, p-value, exact?``."""
    b = np.asarray(b, dtype=float)
    c = np.asarray(c, dtype=float)
    nd = b + c
    exact = nd < EXACT_BELOW
    k = np.minimum(b, c)
    p_exact = sign_test(b, c, "two-sided")  # min(1, 2 P(Bin(b + c, 1/2) <= k))
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

    Dictionaries are keyed by SE kind: ``"naive"`` and ``"clustered"`` (the method
    ``cluster_se``, CR3 by default). ``est[kind]`` holds the :class:`MeanEstimate` of ``"diff"``
    (p_AI − p_Human), ``"ai"`` (p_AI − p_R), ``"human"`` (p_Human − p_R) and of each source's
    rate (``"p_correct"``, ``"p_ai"``, ``"p_human"``, ``"p_random"``)."""

    eps: float
    delta: float
    alpha: float
    cluster_se: str
    n: np.ndarray
    n_students: np.ndarray
    p: dict[str, np.ndarray]  # source -> p̂ (correct, ai, human, random)
    p_se: dict[str, dict[str, np.ndarray]]  # se kind -> source -> SE
    diff: np.ndarray  # p̂_AI − p̂_Human
    diff_se: dict[str, np.ndarray]
    diff_ci: dict[str, tuple[np.ndarray, np.ndarray]]  # the 1 − 2α interval that decides
    table: np.ndarray  # [..., 4]: a (both), b (AI only), c (human only), d (neither)
    mcnemar_stat: dict[str, np.ndarray]
    mcnemar_p: dict[str, np.ndarray]
    mcnemar_exact: np.ndarray
    tost_p: dict[str, np.ndarray]
    tost_p_lower: dict[str, np.ndarray]  # H0: diff ≤ −ε
    tost_p_upper: dict[str, np.ndarray]  # H0: diff ≥ +ε
    beyond_p_ai: dict[str, np.ndarray]  # H0: diff ≤ +ε (rejected: the AI ahead by more than ε)
    beyond_p_human: dict[str, np.ndarray]  # H0: diff ≥ −ε (rejected: the human ahead by > ε)
    # se kind -> "ai"/"human" -> {diff, se, p, p_fail}
    sup: dict[str, dict[str, dict[str, np.ndarray]]]
    df: dict[str, np.ndarray]
    est: dict[str, dict[str, MeanEstimate]]
    verdict: dict[str, np.ndarray]  # se kind -> index into VERDICTS


def _check(counts: np.ndarray, eps: float, alpha: float, cluster_se: str) -> None:
    if counts.shape[-1] != len(FIELDS):
        raise ValueError(f"counts must end in {len(FIELDS)} fields {FIELDS}")
    if not eps > 0:
        raise ValueError("the equivalence margin eps must be > 0")
    if not 0 < alpha < 1:
        raise ValueError("alpha must be in (0, 1)")
    if cluster_se not in CLUSTER_SE:
        raise ValueError(f"cluster_se must be one of {CLUSTER_SE}, got {cluster_se!r}")


def batch_tests(
    counts: np.ndarray,
    *,
    eps: float,
    delta: float,
    alpha: float,
    cluster_se: str = DEFAULT_SE,
    n_boot: int = N_BOOT,
    seed: int | np.random.Generator | None = 0,
    double: str = DOUBLE_KINDS[0],
    n_inner: int = N_BOOT_INNER,
    score: bool = True,
) -> BatchTests:
    """All estimates, naive and student-clustered (``cluster_se``: ``"boot"``, the default,
    ``"cr3"``, ``"cr2"`` or ``"cr1"``) SEs, all tests and the verdicts for counts
    ``[..., G, 8]``. ``boot`` draws ``n_boot`` resamples of the students from ``seed`` (the same
    resamples for the three paired differences; a fresh matrix per block of studies), so the
    same counts and seed give the same p-values; the selection rates' intervals use its
    t-table half. ``double`` (:func:`boot_weights`): ``boot``'s double bootstrap, by default
    the fast one; ``"full"`` draws ``n_inner`` second-level resamples of each first-level
    one; ``"none"`` is the ``boot`` before issue 34's third round (for comparisons).
    ``score``: ``boot``'s score half (:func:`boot_mean`); False is the ``boot`` before issue
    34's fourth round (for comparisons)."""
    counts = np.asarray(counts, dtype=float)
    _check(counts, eps, alpha, cluster_se)
    sizes = _sum(counts, "n")
    kinds = {"naive": "naive", "clustered": cluster_se}
    weights = None
    if cluster_se == "boot":
        n_studies = int(np.prod(counts.shape[:-2], dtype=int))
        weights = boot_weights(
            np.random.default_rng(seed),
            n_studies,
            counts.shape[-2],
            n_boot,
            double=double,
            n_inner=n_inner,
        )
    est: dict[str, dict[str, MeanEstimate]] = {}
    for key, kind in kinds.items():
        w = weights if key == "clustered" else None
        est[key] = {
            "diff": _pair(counts, kind, "A", "H", "AH", w, score),
            "ai": _pair(counts, kind, "A", "R", "AR", w, score),
            "human": _pair(counts, kind, "H", "R", "HR", w, score),
        }
        for name, f in (("correct", "C"), ("ai", "A"), ("human", "H"), ("random", "R")):
            sums = _sum(counts, f)  # 0/1 scores: Σz² = Σz
            est[key][f"p_{name}"] = _mean(kind, sums, sums.sum(axis=-1), sizes)
    tot = counts.sum(axis=-2)
    a = tot[..., F["AH"]]
    b = tot[..., F["A"]] - a
    c = tot[..., F["H"]] - a
    stat_n, p_n, exact = mcnemar_naive(b, c)
    stat_c, p_c = mcnemar_clustered(_sum(counts, "A") - _sum(counts, "H"))
    out = BatchTests(
        eps=eps, delta=delta, alpha=alpha, cluster_se=cluster_se, n=tot[..., F["n"]],
        n_students=(sizes > 0).sum(axis=-1),
        p={s: est["naive"][f"p_{s}"].mean for s in ("correct", "ai", "human", "random")},
        p_se={k: {s: e[f"p_{s}"].se for s in ("correct", "ai", "human", "random")}
              for k, e in est.items()},
        diff=est["naive"]["diff"].mean, diff_se={k: e["diff"].se for k, e in est.items()},
        diff_ci={k: e["diff"].bounds(alpha) for k, e in est.items()},
        table=np.stack([a, b, c, tot[..., F["n"]] - a - b - c], axis=-1),
        mcnemar_stat={"naive": stat_n, "clustered": stat_c},
        mcnemar_p={"naive": p_n, "clustered": p_c}, mcnemar_exact=exact,
        tost_p={}, tost_p_lower={}, tost_p_upper={}, beyond_p_ai={}, beyond_p_human={}, sup={},
        df={k: e["diff"].df for k, e in est.items()}, est=est, verdict={},
    )  # fmt: skip
    for key in kinds:
        _decide(out, key)
    return out


def _decide(out: BatchTests, key: str) -> None:
    """Fill the tests and the verdict of SE kind ``key`` (no variation: every p-value is 1)."""
    eps, delta, alpha = out.eps, out.delta, out.alpha
    d = out.est[key]["diff"]
    out.tost_p_lower[key] = d.p_upper(-eps)  # H0: diff <= -eps
    out.tost_p_upper[key] = d.p_lower(eps)  # H0: diff >= +eps
    out.tost_p[key] = np.maximum(out.tost_p_lower[key], out.tost_p_upper[key])
    # beyond the margin: the CI's lower bound above +eps / upper bound below -eps
    out.beyond_p_ai[key] = d.p_upper(eps)
    out.beyond_p_human[key] = d.p_lower(-eps)
    out.sup[key] = {}
    for src in ("ai", "human"):
        s = out.est[key][src]
        out.sup[key][src] = {
            "diff": s.mean, "se": s.se, "p": s.p_upper(delta), "p_fail": s.p_lower(delta),
        }  # fmt: skip
    out.verdict[key] = verdicts(
        tost_p=out.tost_p[key],
        beyond_ai_p=out.beyond_p_ai[key],
        beyond_human_p=out.beyond_p_human[key],
        sup_ai_p=out.sup[key]["ai"]["p"],
        sup_human_p=out.sup[key]["human"]["p"],
        fail_ai_p=out.sup[key]["ai"]["p_fail"],
        fail_human_p=out.sup[key]["human"]["p_fail"],
        alpha=alpha,
        n_students=out.n_students,
    )


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


def _flat_reason(kind: str, what: str) -> str:
    if kind == "naive":
        return f"every MCQ has the same score for {what}, so its standard error is 0"
    return (
        f"no variation between students in {what}: every student's share is the same "
        "(N*Z_g - n_g*sum(Z) = 0 for every student g), so the clustered standard error is 0 - "
        "which is no evidence of precision, and no test on it can reject"
    )


def _at(x: np.ndarray, index: tuple | int) -> float | bool | int:
    """Element ``index`` of a batch array (``()`` for a single study, also of shape ``(1,)``)."""
    return np.asarray(x)[index].item()


def explain(bt: BatchTests, key: str = "clustered", index: tuple | int = ()) -> str:
    """Why study ``index`` of ``bt`` got its verdict under SE kind ``key``, in one sentence."""
    alpha, eps, delta = bt.alpha, bt.eps, bt.delta
    v = VERDICTS[int(_at(bt.verdict[key], index))]
    g = int(_at(bt.n_students, index))
    kind = "naive" if key == "naive" else bt.cluster_se
    if g < MIN_STUDENTS:
        return f"{g} students, fewer than {MIN_STUDENTS}: too few for a student-clustered SE"
    if bool(_at(bt.est[key]["diff"].flat, index)):
        return _flat_reason(kind, "p_AI - p_Human")
    lo, hi = (float(_at(x, index)) for x in bt.diff_ci[key])
    ci = f"the {100 * (1 - 2 * alpha):.0f}% CI [{lo:+.4f}, {hi:+.4f}] of p_AI - p_Human"
    beats = {s: float(_at(bt.sup[key][s]["p"], index)) < alpha for s in ("ai", "human")}
    flat = {s: bool(_at(bt.est[key][s].flat, index)) for s in ("ai", "human")}
    names = {"ai": "the AI", "human": "the human"}

    def not_beating(srcs: tuple[str, ...]) -> str:
        parts = [
            _flat_reason(kind, f"p_{s} - p_random") if flat[s]
            else f"{names[s]} is not shown above random + {delta}"
            for s in srcs if not beats[s]
        ]  # fmt: skip
        return "; ".join(parts)

    if v == "draw":
        return f"{ci} lies inside (-{eps}, +{eps}) and both beat random + {delta}"
    if v in ("ai_better", "human_better"):
        side = f"above +{eps}" if v == "ai_better" else f"below -{eps}"
        return f"{ci} lies {side} and {names[v.split('_')[0]]} beats random + {delta}"
    if v == "both_fail":
        return f"both are shown below random + {delta}"
    if lo > -eps and hi < eps:
        return f"{ci} lies inside (-{eps}, +{eps}), but " + not_beating(("ai", "human"))
    if lo > eps:
        return f"{ci} lies above +{eps}, but " + not_beating(("ai",))
    if hi < -eps:
        return f"{ci} lies below -{eps}, but " + not_beating(("human",))
    return f"{ci} straddles the margin +-{eps}"
