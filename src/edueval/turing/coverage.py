"""``turing power --coverage``: students and questions needed to *observe* the common misconceptions.

The paper (Sonkar et al. 2025, "statistical sampling" section) sizes a study not by the power of
its final test but by coverage: Phase 1 must surface the misconceptions that matter before Phase 2
can test whether an AI reads them. It chains three results, implemented here in their standard
union-bound form (the form the paper's argument takes; see "Reading of the paper" below):

* **Theorem 1, misconception concentration.** Rank a topic's misconceptions by frequency
  ``p_1 ≥ p_2 ≥ …`` (share of misconception occurrences). A few cover most of the mass: the top
  ``k`` with ``Σ_{i≤k} p_i ≥ 1 − ε`` (:func:`concentration_k`; for a Zipf law ``p_i ∝ i^−s`` with
  ``s > 1`` the tail beyond ``k`` is at most ``k^(1−s)/((s−1)·ζ(s))``, so ``k`` does not grow with
  the number of rare misconceptions). The rarest of the top ``k`` has frequency ``p_min = p_k``.
* **Theorem 2, sample complexity.** If each student shows a misconception drawn from that
  distribution (``r`` per student, independently), misconception ``i`` is missed by all ``n``
  students with probability ``(1 − π_i)^n ≤ exp(−n π_i)``, ``π_i = 1 − (1 − p_i)^r``; a union
  bound over the top ``k`` gives ``P(some top-k misconception unseen) ≤ k·exp(−n π_k) ≤ δ`` for
  ``n ≥ ln(k/δ) / π_k`` (``= ln(k/δ)/p_min`` for one misconception per student).
* **Theorem 3, question coverage.** A held misconception shows in a Phase-1 answer only when a
  question calls on it and the student errs by it: probability ``q`` per question (``reveal``).
  With ``Q`` questions it stays hidden with probability ``(1 − q)^Q ≤ exp(−qQ) ≤ δ_Q`` for
  ``Q ≥ ln(1/δ_Q) / q``. Theorem 2 then runs with ``π_k·(1 − δ_Q)`` in place of ``π_k``, so the
  whole plan (``n`` students × ``Q`` questions) still sees every top-k misconception with
  probability ≥ ``1 − δ``.

Both bounds use ``1 − x ≤ e^−x`` and a union bound, so they are conservative; how much is
measured by :func:`simulate_coverage` (which plays the frequency model out student by student,
question by question) and :func:`smallest_sufficient_students` (the fewest students whose
simulated coverage reaches ``1 − δ``).

Reading of the paper: the copy of the paper in this workplace is a summary that names the three
theorems, their parameters (``k``, ``p_min``, ``δ``) and the result (about 100 students × 25
questions), not their full statements or constants. At ``k = 10``, ``p_min = 0.05``,
``δ = 0.05`` and one misconception per student the sample-complexity bound gives
``ln(200)/0.05 = 106`` students; 25 questions per student correspond, by Theorem 3 at
``δ_Q = 0.05``, to a held misconception showing in ``q = ln(20)/25 ≈ 0.12`` of the questions.
Both are what the bounds give for those inputs, not numbers chosen to return 100 × 25.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..io import InputError
from ..results import RunResults

__all__ = [
    "CoverageResults",
    "concentration_k",
    "coverage_plan",
    "questions_needed",
    "simulate_coverage",
    "smallest_sufficient_students",
    "students_needed",
    "top_k_frequencies",
    "zipf_frequencies",
]


def zipf_frequencies(n_misconceptions: int, exponent: float) -> np.ndarray:
    """``p_i ∝ i^−s`` for ``i = 1..M``, normalised (the frequency model of Theorem 1)."""
    if n_misconceptions < 1:
        raise InputError(f"n_misconceptions= must be >= 1, got {n_misconceptions}")
    if not exponent >= 0:
        raise InputError(f"exponent= must be >= 0, got {exponent}")
    w = np.arange(1, n_misconceptions + 1, dtype=float) ** -exponent
    return w / w.sum()


def concentration_k(frequencies: np.ndarray, mass_eps: float) -> int:
    """Theorem 1: the fewest most-frequent misconceptions whose frequencies sum to ≥ 1 − ε."""
    p = np.sort(np.asarray(frequencies, dtype=float))[::-1]
    p = p / p.sum()
    # a tolerance for rounding in the cumulative sum
    return int(np.searchsorted(np.cumsum(p), 1.0 - mass_eps - 1e-12) + 1)


def top_k_frequencies(
    k: int, *, p_min: float | None = None, frequencies: np.ndarray | None = None
) -> np.ndarray:
    """The ``k`` largest frequencies: from a full distribution, or ``k`` at exactly ``p_min``
    (the least favourable case the bound allows: every top-k misconception as rare as the k-th)."""
    if k < 1:
        raise InputError(f"k= must be >= 1, got {k}")
    if frequencies is not None:
        p = np.sort(np.asarray(frequencies, dtype=float))[::-1]
        if k > len(p):
            raise InputError(f"k= {k} exceeds the {len(p)} misconceptions of the model")
        return p[:k] / p.sum()
    if p_min is None or not 0 < p_min <= 1 / k:
        raise InputError(f"p_min= must be in (0, 1/k] = (0, {1 / k:.4g}] for k= {k}, got {p_min}")
    return np.full(k, float(p_min))


def students_needed(k: int, p_min: float, delta: float, *, per_student: int = 1,
                    detect: float = 1.0) -> int:  # fmt: skip
    """Theorem 2: ``n ≥ ln(k/δ) / (detect · (1 − (1 − p_min)^r))`` students."""
    # 1 - (1 - p)^r through log1p/expm1: exact for a tiny p, where (1 - p) rounds to 1
    pi = detect * -math.expm1(per_student * math.log1p(-p_min))
    return math.ceil(math.log(k / delta) / pi)


def questions_needed(reveal: float, delta_q: float) -> int:
    """Theorem 3: ``Q ≥ ln(1/δ_Q) / q`` questions per student."""
    return math.ceil(math.log(1.0 / delta_q) / reveal)


#: Bytes per simulated (student, misconception) cell in :func:`simulate_coverage`'s arrays
#: (draws and binomial counts as int64, the comparison, held and shown masks as bool).
_CELL_BYTES = 19


def _check_simulation_size(n: int, width: int, *, p_min: float, max_bytes: float | None) -> None:
    """Refuse a simulation check of the bound's ``n`` students (up to 4n while searching for
    the smallest sufficient n) that cannot be allocated."""
    cells = 4 * n * width
    too_big = cells >= np.iinfo(np.intp).max or (
        max_bytes is not None and cells * _CELL_BYTES > max_bytes
    )
    if too_big:
        raise InputError(
            f"p_min= {p_min:g} needs {n:.3g} students, too many to check by simulation "
            f"(about {cells * _CELL_BYTES / 1e9:.3g} GB of memory): give a larger p_min="
        )


def simulate_coverage(
    top: np.ndarray,
    *,
    n_students: int,
    n_questions: int,
    reveal: float,
    per_student: int = 1,
    reps: int = 2000,
    seed: int = 0,
) -> float:
    """Share of simulated studies in which every one of the ``top`` misconceptions is observed.

    Each student draws ``per_student`` misconceptions from the categorical distribution (the
    ``top`` frequencies plus the rest of the mass as one bucket of rarer ones, which no top-k
    count depends on); each distinct held top-k misconception shows in each of the student's
    ``n_questions`` questions with probability ``reveal``, independently."""
    rng = np.random.default_rng(seed)
    k = len(top)
    probs = np.append(top, max(0.0, 1.0 - float(top.sum())))
    probs = probs / probs.sum()
    hits = 0
    chunk = max(1, 2_000_000 // max(1, n_students * max(k, per_student)))
    done = 0
    while done < reps:
        b = min(chunk, reps - done)
        draws = rng.choice(k + 1, size=(b, n_students, per_student), p=probs)
        held = (draws[..., None] == np.arange(k)).any(axis=-2)  # [b, n, k]
        shown = rng.binomial(n_questions, reveal, size=held.shape) > 0
        hits += int((held & shown).any(axis=1).all(axis=-1).sum())
        done += b
    return hits / reps


def smallest_sufficient_students(
    top: np.ndarray, *, target: float, n_questions: int, reveal: float, per_student: int = 1,
    upper: int, reps: int = 2000, seed: int = 0,
) -> int:  # fmt: skip
    """The fewest students (bisection up to ``upper``) whose simulated coverage is ≥ ``target``,
    with the same seed at every size (common random numbers)."""
    lo, hi = 1, upper
    while lo < hi:
        mid = (lo + hi) // 2
        cov = simulate_coverage(top, n_students=mid, n_questions=n_questions, reveal=reveal,
                                per_student=per_student, reps=reps, seed=seed)  # fmt: skip
        if cov >= target:
            hi = mid
        else:
            lo = mid + 1
    return lo


@dataclass
class CoverageResults(RunResults):
    """A coverage plan (Theorems 1-3) and, optionally, its check by simulation."""

    k: int
    p_min: float
    top_mass: float  # share of all misconception occurrences the top k account for
    delta: float
    delta_q: float
    per_student: int
    reveal: float
    students: int
    questions: int
    model: str
    top: list[float]  # the top-k frequencies the plan is for (most frequent first)
    simulated_coverage: float | None = None
    simulated_min_students: int | None = None
    reps: int = 0
    #: the call's arguments, as ``turing power --coverage`` records them (``seed`` among them)
    params: dict[str, Any] = field(default_factory=dict, repr=False)
    curve: pd.DataFrame | None = field(default=None, repr=False)

    _writer = "edueval.turing.pipeline:save_coverage"

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("params", "curve")}

    def coverage_curve(self) -> pd.DataFrame:
        """Simulated coverage at fractions (0.25 ... 1.25) of the bound's students, against
        the target (``reps`` studies each, seeded with ``seed + 1``); computed once."""
        if self.curve is None:
            self.curve = coverage_curve(self, self.reps, int(self.params.get("seed", 0)) + 1)
        return self.curve

    def headline(self) -> dict[str, Any]:
        """``turing power --coverage``'s results.json: the plan, the curve, the summary."""
        return {**self.to_dict(), "coverage_curve": self.coverage_curve(),
                "summary": self.summary()}  # fmt: skip

    def to_frame(self) -> pd.DataFrame:
        """Tidy rows, one per top-k misconception (``rank``, ``frequency``, most frequent first)
        with the plan beside each: ``students``, ``questions``, ``delta``, ``delta_q``,
        ``per_student``, ``reveal``, ``simulated_coverage`` (NaN without a simulation)."""
        plan = {k: getattr(self, k) for k in
                ("students", "questions", "delta", "delta_q", "per_student", "reveal")}  # fmt: skip
        cov = np.nan if self.simulated_coverage is None else self.simulated_coverage
        return pd.DataFrame(
            [{"rank": i + 1, "frequency": p, **plan, "simulated_coverage": cov}
             for i, p in enumerate(self.top)]
        )  # fmt: skip

    def summary(self) -> str:
        d = self.delta
        lines = [
            "Coverage: students x questions to observe the top-k misconceptions",
            "=" * 66,
            f"frequency model: {self.model}",
            f"top k = {self.k} misconceptions, rarest p_min = {self.p_min:.4g}, "
            f"together {100 * self.top_mass:.1f}% of misconception occurrences (Theorem 1)",
            f"confidence 1 - delta = {1 - d:g}; {self.per_student} misconception(s) per student; "
            f"a held one shows in a question with probability {self.reveal:g}",
            "",
            f"questions per student (Theorem 3): Q = ceil(ln(1/{self.delta_q:g}) / "
            f"{self.reveal:g}) = {self.questions}",
            f"students (Theorem 2): n = ceil(ln({self.k}/{d:g}) / ((1 - {self.delta_q:g}) * "
            f"(1 - (1 - {self.p_min:.4g})^{self.per_student}))) = {self.students}",
            f"plan: {self.students} students x {self.questions} questions",
        ]
        if self.simulated_coverage is not None:
            lines += [
                "",
                f"simulation ({self.reps} studies): every top-k misconception observed in "
                f"{100 * self.simulated_coverage:.1f}% at the plan (target {100 * (1 - d):g}%)",
            ]
        if self.simulated_min_students is not None:
            lines.append(
                f"fewest students reaching {100 * (1 - d):g}% in simulation: "
                f"{self.simulated_min_students} (the bound asks "
                f"{self.students / self.simulated_min_students:.2f}x that)"
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def coverage_curve(res: CoverageResults, reps: int, seed: int) -> pd.DataFrame:
    """Simulated coverage at fractions of the bound's students, against the target."""
    top = np.asarray(res.top)
    rows = []
    for f in (0.25, 0.5, 0.75, 1.0, 1.25):
        n = max(1, round(f * res.students))
        cov = simulate_coverage(top, n_students=n, n_questions=res.questions, reveal=res.reveal,
                                per_student=res.per_student, reps=reps, seed=seed)  # fmt: skip
        rows.append({"students": n, "fraction_of_bound": f, "simulated_coverage": cov,
                     "target": 1 - res.delta})  # fmt: skip
    return pd.DataFrame(rows)


def coverage_plan(
    *,
    k: int = 10,
    confidence: float = 0.95,
    mass_eps: float | None = None,
    p_min: float | None = None,
    zipf: float | None = None,
    n_misconceptions: int = 50,
    per_student: int = 1,
    reveal: float = 0.2,
    question_confidence: float | None = None,
    reps: int = 0,
    seed: int = 0,
    max_bytes: float | None = None,
) -> CoverageResults:
    """Theorems 1-3 for the top ``k`` misconceptions; ``reps > 0`` adds the simulation check.

    The frequency model is either ``p_min`` (the top ``k`` each at least this frequent; checked
    at exactly ``p_min``) or a Zipf law with exponent ``zipf`` over ``n_misconceptions``; with a
    Zipf law, ``mass_eps`` chooses ``k`` by Theorem 1 (the fewest covering ``1 − mass_eps``).
    The simulation check is refused, before it starts, when its arrays would pass ``max_bytes``
    (or numpy's largest index)."""
    if not 0 < confidence < 1:
        raise InputError(f"confidence= must be in (0, 1), got {confidence}")
    qc = confidence if question_confidence is None else question_confidence
    if not 0 < qc < 1:
        raise InputError(f"question_confidence= must be in (0, 1), got {qc}")
    if not 0 < reveal <= 1:
        raise InputError(f"reveal= must be in (0, 1], got {reveal}")
    if per_student < 1:
        raise InputError(f"per_student= must be >= 1, got {per_student}")
    if (p_min is None) == (zipf is None):
        raise InputError("give the frequency model as exactly one of p_min= or zipf=")
    if zipf is not None:
        if not zipf >= 0:
            raise InputError(f"zipf= must be >= 0, got {zipf}")
        freqs = zipf_frequencies(n_misconceptions, zipf)
        if mass_eps is not None:
            if not 0 < mass_eps < 1:
                raise InputError(f"mass_eps= must be in (0, 1), got {mass_eps}")
            k = concentration_k(freqs, mass_eps)
        top = top_k_frequencies(k, frequencies=freqs)
        model = f"Zipf p_i ~ i^-{zipf:g} over {n_misconceptions} misconceptions"
        mass = float(top.sum())
    else:
        if mass_eps is not None:
            raise InputError("mass_eps= (Theorem 1) needs a frequency model: give zipf=")
        top = top_k_frequencies(k, p_min=p_min)
        model = f"top {k} each with frequency >= p_min = {p_min:g}"
        mass = float(top.sum())
    delta, delta_q = 1.0 - confidence, 1.0 - qc
    q = questions_needed(reveal, delta_q)
    n = students_needed(k, float(top[-1]), delta, per_student=per_student, detect=1.0 - delta_q)
    res = CoverageResults(
        k=k, p_min=float(top[-1]), top_mass=mass, delta=delta, delta_q=delta_q,
        per_student=per_student, reveal=reveal, students=n, questions=q, model=model,
        top=[float(x) for x in top], reps=reps,
        params={"k": k, "p_min": p_min, "zipf": zipf, "misconceptions": n_misconceptions,
                "mass": mass_eps, "confidence": confidence, "per_student": per_student,
                "reveal": reveal, "reps": reps, "seed": seed},
    )  # fmt: skip
    if reps > 0:
        _check_simulation_size(n, max(k, per_student), p_min=float(top[-1]), max_bytes=max_bytes)
        kw: dict[str, Any] = dict(
            n_questions=q, reveal=reveal, per_student=per_student, reps=reps, seed=seed
        )
        res.simulated_coverage = simulate_coverage(top, n_students=n, **kw)
        covered = res.simulated_coverage >= confidence
        res.simulated_min_students = smallest_sufficient_students(
            top, target=confidence, upper=n if covered else 4 * n, **kw
        )
    return res
