"""``turing simulate``: the paper's proposed first experiment, with students whose misconceptions
are known.

Population (:data:`DEFAULT_FREQUENCIES`, ``--frequencies`` to change it). Nine mal-rules from the
library, three per problem family (fraction addition, order of operations, whole-number
subtraction), with long-tailed population frequencies - one common misconception per family and
rarer ones (the paper's "misconception concentration"). Each student holds each rule
independently with its frequency; students holding none are redrawn (everyone in the study made
at least one Phase-1 error, which is what admits them to Phase 2), so the frequencies are those
*before* this conditioning. Ability ``θ ~ N(0, 1)``.

Phase 1 (a misconception tuple per Phase-2 MCQ; ``m`` per student). Each of a student's tuples is,
with probability ``slip`` (default 0.10), a careless slip (a nearby wrong number no rule makes:
:func:`~edueval.misconceptions.slip_answer`) and otherwise the answer of one of the student's
rules, chosen uniformly, on a question ``q`` drawn with
``sample_problem(family=…, rule=r)``. Phase 2: the related question ``q′`` is a new problem of the
same family on which the same rule errs (``sample_problem(family=q.family, rule=r)``). Problems come
from a seeded bank of ``pool`` (q, q′) pairs per rule, computed once with the library.

Distractor writers on ``q′``:

* ``oracle`` AI: ``diagnose(q, answer)`` - the rules whose answer on ``q`` equals the student's;
  takes the most frequent of them and writes that rule's answer on ``q′`` (if the diagnosed rule
  does not err on ``q′``, or the answer was a slip, it falls back to the most common misconception);
* ``unconditioned`` AI: the answer on ``q′`` of the most frequent population rule that errs on it
  (the paper's single-phase optimum m* = argmax P(m));
* ``random`` AI: the answer of a uniformly chosen library rule that errs on ``q′`` (plausible, not
  personalised);
* ``human`` expert with accuracy ``a``: with probability ``a`` the oracle's distractor, otherwise a
  uniformly chosen *other* rule's answer on ``q′`` (a wrong reading of the student).

The MCQ shows the correct answer, the AI's and the human's distractors and a random plausible
distractor (a slip on ``q′``). Duplicates: a distractor proposed by both AI and human is shown once
(3 options) and a choice of it counts for both (the McNemar pair is then concordant) - the rule of
:mod:`edueval.turing.assemble`. The student chooses by the library's response model
(:mod:`edueval.misconceptions.students`), generalised to ``k`` shown options: with probability
``p_rule`` a shown distractor that one of their rules produces on ``q′`` (uniformly among such),
otherwise correct with ``σ(a(θ − b))``, otherwise a uniform guess among the ``k − 1`` distractors.

Vectorised: the bank is built once; every replication's students, tuples and choices are numpy
arrays ``[replication, student, question]``; per-student counts go through the batched tests of
:mod:`edueval.turing.stats` (``SimConfig.se`` picks the student-clustered SE: ``cr3``, the
default, ``cr2`` or ``cr1``). All AIs are evaluated on the same students and tuples (common random
numbers), each against the same human.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..misconceptions import (
    RULES,
    ResponseModel,
    applicable_rules,
    correct_answer,
    diagnose,
    rule_answer,
    sample_problem,
    slip_answer,
)
from ..results import RunResults
from ..tables import Col, Schema
from .stats import CLUSTER_SE, FIELDS, SIMULATION_SE, VERDICTS, batch_tests

__all__ = [
    "AIS",
    "DEFAULT_FREQUENCIES",
    "FREQUENCY_SCHEMA",
    "Bank",
    "SimConfig",
    "SimulatedStudy",
    "build_bank",
    "option_probabilities",
    "read_frequencies",
    "simulate_study",
]

AIS = ("oracle", "unconditioned", "random")

#: family -> rule -> population frequency (one common misconception per family, rarer others)
DEFAULT_FREQUENCIES: dict[str, float] = {
    "add_across": 0.30,
    "common_denominator_no_scale": 0.10,
    "multiply_across": 0.05,
    "left_to_right": 0.25,
    "add_before_multiply": 0.08,
    "add_before_subtract": 0.04,
    "smaller_from_larger": 0.20,
    "borrow_no_decrement": 0.07,
    "zero_instead_of_borrow": 0.03,
}
_FAMILY_OF = {
    "add_across": "fraction_addition",
    "common_denominator_no_scale": "fraction_addition",
    "multiply_across": "fraction_addition",
    "left_to_right": "order_of_operations",
    "add_before_multiply": "order_of_operations",
    "add_before_subtract": "order_of_operations",
    "smaller_from_larger": "whole_subtraction",
    "borrow_no_decrement": "whole_subtraction",
    "zero_instead_of_borrow": "whole_subtraction",
}

#: ``turing simulate --frequencies``: one row per mal-rule (a rule given twice is refused, not
#: "the last wins"), ``rule`` a mal-rule of the library taken exactly as written (an unknown one
#: is refused with the nearest known name), ``frequency`` in [0, 1].  Closed: any other column
#: is refused with the nearest known name.
FREQUENCY_SCHEMA = Schema(
    "mal-rule frequencies",
    (Col("rule", "id"), Col("frequency", "number", low=0.0, high=1.0)),
    key=("rule",),
    closed=True,
)


def read_frequencies(path: str | Path) -> dict[str, float]:
    """The population frequency of each mal-rule named in ``path`` (:data:`FREQUENCY_SCHEMA`)."""
    from ..io import InputError, line_of, read_table
    from ..tables import near_miss

    table = read_table(path, text_columns=["rule"])
    df = FREQUENCY_SCHEMA.validate(table)
    for pos, rule in enumerate(df["rule"]):
        if rule not in RULES:
            hint = near_miss(rule, list(RULES))
            raise InputError(
                f"unknown mal-rule {rule!r}" + (f" (did you mean {hint!r}?)" if hint else "")
                + "; the rules are those of edueval.misconceptions.RULES",
                file=path, line=line_of(table, pos), column="rule",
            )  # fmt: skip
    return dict(zip(df["rule"].tolist(), df["frequency"].tolist(), strict=True))


@dataclass
class SimConfig:
    """Parameters of the simulation study (see the module docstring)."""

    n_students: int = 100
    n_questions: int = 25
    reps: int = 1000
    #: an imperfect expert by default: at 1.0 the expert writes exactly the oracle's distractor,
    #: so 'oracle vs human' would compare a source with itself (difference and SE both 0)
    human_accuracy: float = 0.9
    eps: float = 0.10
    delta: float = 0.05
    alpha: float = 0.05
    slip: float = 0.10
    p_rule: float = 0.9
    discrimination: float = 1.0
    pool: int = 40
    frequencies: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_FREQUENCIES))
    seed: int = 0
    chunk: int = 50
    #: the student-clustered SE of the "clustered" verdicts (:data:`~.stats.CLUSTER_SE`)
    se: str = SIMULATION_SE

    def check(self) -> None:
        from ..io import InputError
        from .analyze import check_margins

        check_margins(self.eps, self.delta, self.alpha)
        if self.n_students < 2 or self.n_questions < 1 or self.reps < 1:
            raise InputError("need at least 2 students, 1 question each and 1 replication")
        for name in ("human_accuracy", "slip", "p_rule"):
            v = getattr(self, name)
            if not 0 <= v <= 1:
                raise InputError(f"{name}= must be in [0, 1], got {v}")
        for r, f in self.frequencies.items():
            if r not in RULES:
                raise InputError(f"unknown mal-rule {r!r} in the frequencies")
            if not 0 <= f <= 1:
                raise InputError(f"frequency of {r!r} must be in [0, 1], got {f}")
        if not any(f > 0 for f in self.frequencies.values()):
            raise InputError("at least one mal-rule needs a positive frequency")
        if self.se not in CLUSTER_SE:
            raise InputError(f"se= must be one of {', '.join(CLUSTER_SE)}, got {self.se!r}")


@dataclass
class Bank:
    """The precomputed (q, q′) pairs: ``[rule, pool]`` arrays of value ids on q′ (0 = correct,
    1 = the random slip, 2.. = distinct rule answers; −1 = none)."""

    rules: list[str]
    freq: np.ndarray  # [K]
    rule_val: np.ndarray  # [K, P, K] value id of population rule k on q′ (−1: does not err)
    oracle: np.ndarray  # [K, P] value id the oracle writes when the tuple came from rule r
    mcm: np.ndarray  # [K, P] most common misconception's value id on q′
    app: np.ndarray  # [K, P, V] value ids of all library rules erring on q′ (−1 padded)
    n_app: np.ndarray  # [K, P]
    difficulty: np.ndarray  # [K, P]
    examples: list[dict]  # one record per (rule, pool) for the example tables
    n_values: int


def _family_for(rule: str, rng: np.random.Generator) -> str:
    fam = _FAMILY_OF.get(rule)
    if fam is not None:
        return fam
    # a rule that only question variants use draws its problems from them
    fams = list(RULES[rule].families or RULES[rule].variants)
    return fams[int(rng.integers(len(fams)))]


def build_bank(frequencies: dict[str, float], pool: int, rng: np.random.Generator) -> Bank:
    """``pool`` (q, q′) pairs per rule with everything the simulation needs, from the library."""
    rules = [r for r in RULES if frequencies.get(r, 0) > 0]
    freq = np.array([frequencies[r] for r in rules], dtype=float)
    by_freq = sorted(RULES, key=lambda r: (-frequencies.get(r, 0.0), list(RULES).index(r)))
    k = len(rules)
    rule_val = np.full((k, pool, k), -1, dtype=np.int16)
    oracle = np.zeros((k, pool), dtype=np.int16)
    mcm = np.zeros((k, pool), dtype=np.int16)
    app = np.full((k, pool, 8), -1, dtype=np.int16)
    n_app = np.zeros((k, pool), dtype=np.int16)
    diff = np.zeros((k, pool))
    examples = []
    n_values = 2
    for i, r in enumerate(rules):
        for j in range(pool):
            fam = _family_for(r, rng)
            q = sample_problem(rng, family=fam, rule=r)
            q2 = sample_problem(rng, family=fam, rule=r)
            answer1 = rule_answer(q, r)
            diag = diagnose(q, answer1 or "")
            errs = applicable_rules(q2)
            # answer -> option index (None: a rule that gives no answer here)
            values: dict[str | None, int] = {correct_answer(q2): 0}
            slip = slip_answer(q2, rng)
            values.setdefault(slip, 1)
            ans = {}
            for rr in errs:
                a = rule_answer(q2, rr)
                ans[rr] = a
                if a not in values:
                    values[a] = len(values)
            n_values = max(n_values, len(values))
            for kk, rr in enumerate(rules):
                if rr in ans:
                    rule_val[i, j, kk] = values[ans[rr]]
            app_ids = sorted({values[a] for a in ans.values()})
            app[i, j, : len(app_ids)] = app_ids
            n_app[i, j] = len(app_ids)
            top = next(rr for rr in by_freq if rr in ans)  # most common misconception on q′
            mcm[i, j] = values[ans[top]]
            guess = min(diag, key=by_freq.index) if diag else None
            oracle[i, j] = values[ans[guess]] if guess in ans else mcm[i, j]
            diff[i, j] = q2.difficulty
            inv = {v: a for a, v in values.items()}
            examples.append(
                {
                    "rule": r,
                    "question": q.question,
                    "answer": answer1,
                    "correct_answer": correct_answer(q),
                    "diagnosed": "+".join(diag),
                    "related_question": q2.question,
                    "related_correct": correct_answer(q2),
                    "oracle": inv[int(oracle[i, j])],
                    "unconditioned": inv[int(mcm[i, j])],
                    "random_distractor": slip,
                    "family": fam,
                }
            )
    return Bank(rules, freq, rule_val, oracle, mcm, app, n_app, diff, examples, n_values)


def _pick(values: np.ndarray, n: np.ndarray, u: np.ndarray) -> np.ndarray:
    """values[..., floor(u·n)] (n ≥ 1 where used)."""
    idx = np.minimum((u * np.maximum(n, 1)).astype(int), np.maximum(n - 1, 0))
    return np.take_along_axis(values, idx[..., None], axis=-1)[..., 0]


def option_probabilities(
    held_ai: np.ndarray,
    held_human: np.ndarray,
    shared: np.ndarray,
    p_solve: np.ndarray,
    p_rule: float,
) -> np.ndarray:
    """P(correct, AI option, human option, random option) under the library's response model
    (:mod:`edueval.misconceptions.students`) with the options actually shown: a shared AI/human
    option is one option (its probability is in the AI slot, the human slot is 0), so the guess
    is spread over 2 distractors instead of 3. ``held_*``: the student's own rules produce that
    option on q′ (the random slip never is)."""
    held_ai = np.asarray(held_ai, dtype=bool)
    held_h = np.asarray(held_human, dtype=bool) & ~np.asarray(shared, dtype=bool)
    n_held = held_ai.astype(float) + held_h
    act = p_rule * (n_held > 0)
    rest = 1.0 - act
    n_dis = np.where(shared, 2.0, 3.0)
    guess = rest * (1.0 - p_solve) / n_dis
    denom = np.maximum(n_held, 1.0)
    p_ai = act * held_ai / denom + guess
    p_h = np.where(shared, 0.0, act * held_h / denom + guess)
    return np.stack([rest * p_solve, p_ai, p_h, guess], axis=-1)


def _draw_students(rng: np.random.Generator, shape: tuple[int, int], freq: np.ndarray):
    holds = rng.random((*shape, len(freq))) < freq
    none = ~holds.any(axis=-1)
    while none.any():
        holds[none] = rng.random((int(none.sum()), len(freq))) < freq
        none = ~holds.any(axis=-1)
    return holds


def _chunk(rng: np.random.Generator, bank: Bank, cfg: SimConfig, reps: int, g: int):
    """One chunk of replications: per-student counts for every AI, and the tuple-level arrays."""
    m = cfg.n_questions
    k, pool = bank.oracle.shape
    holds = _draw_students(rng, (reps, g), bank.freq)  # [R, G, K]
    ability = rng.normal(size=(reps, g))
    shape = (reps, g, m)
    # Phase 1: source rule of each tuple (uniform among held), or a slip
    n_held = holds.sum(-1)
    kth = np.minimum((rng.random(shape) * n_held[..., None]).astype(int), n_held[..., None] - 1)
    cum = np.cumsum(holds, axis=-1)  # [R, G, K]
    src = (cum[:, :, None, :] > kth[..., None]).argmax(-1)  # [R, G, m]
    is_slip = rng.random(shape) < cfg.slip
    src = np.where(is_slip, rng.integers(k, size=shape), src)
    j = rng.integers(pool, size=shape)
    oracle = np.where(is_slip, bank.mcm[src, j], bank.oracle[src, j])
    mcm = bank.mcm[src, j]
    app = bank.app[src, j]  # [R, G, m, V]
    n_app = bank.n_app[src, j]
    # human: oracle w.p. accuracy, else another rule's answer on q′
    others = np.where(app == oracle[..., None], -1, app)
    others = -np.sort(-others, axis=-1)  # valid ids first
    n_oth = (others >= 0).sum(-1)
    wrong = _pick(others, n_oth, rng.random(shape))
    wrong = np.where(n_oth > 0, wrong, mcm)
    human = np.where(rng.random(shape) < cfg.human_accuracy, oracle, wrong)
    ais = {
        "oracle": oracle,
        "unconditioned": mcm,
        "random": _pick(app, n_app, rng.random(shape)),
    }
    # which values on q′ the student's own rules produce
    rv = bank.rule_val[src, j]  # [R, G, m, K]
    hk = holds[:, :, None, :] & (rv >= 0)  # [R, G, m, K]: held rules that err on q′

    def held(value: np.ndarray) -> np.ndarray:
        """Whether one of the student's own rules produces ``value`` on q′."""
        return (hk & (rv == value[..., None])).any(-1)

    held_h = held(human)
    sig = 1.0 / (1.0 + np.exp(-cfg.discrimination * (ability[..., None] - bank.difficulty[src, j])))
    u = rng.random(shape)  # one uniform per MCQ, shared by the AIs (common random numbers)
    out = {}
    for name, ai in ais.items():
        shared = ai == human
        probs = option_probabilities(held(ai), held_h, shared, sig, cfg.p_rule)
        # options: 0 correct, 1 AI, 2 human (probability 0 when shared), 3 random
        choice = (u[..., None] >= np.cumsum(probs, axis=-1)[..., :3]).sum(-1)
        a_ch = choice == 1
        h_ch = (choice == 2) | (a_ch & shared)
        counts = np.zeros((reps, g, len(FIELDS)))
        counts[..., 0] = m
        counts[..., 1] = (choice == 0).sum(-1)
        counts[..., 2] = a_ch.sum(-1)
        counts[..., 3] = h_ch.sum(-1)
        counts[..., 4] = (choice == 3).sum(-1)
        counts[..., 5] = (a_ch & shared).sum(-1)
        out[name] = {"counts": counts, "choice": choice, "shared": shared}
    return out, {"src": src, "j": j, "is_slip": is_slip, "holds": holds}


def _chunks(reps: int, chunk: int) -> list[int]:
    """Replications per chunk: ``chunk`` each, the last one the rest."""
    return [min(chunk, reps - done) for done in range(0, reps, max(chunk, 1))]


def _chunk_task(bank: Bank, cfg: SimConfig, seed: int, reps: int, g: int, example: bool) -> dict:
    """One task: ``reps`` replications at ``g`` students from their own ``seed``; verdict tallies
    and summed selection rates per AI (and replication 0's rows when ``example``)."""
    res, tup = _chunk(np.random.default_rng(seed), bank, cfg, reps, g)
    tallies, psum = {}, {}
    for a in AIS:
        bt = batch_tests(
            res[a]["counts"], eps=cfg.eps, delta=cfg.delta, alpha=cfg.alpha, cluster_se=cfg.se
        )
        tallies[a] = {
            kind: np.bincount(bt.verdict[kind], minlength=len(VERDICTS))
            for kind in ("clustered", "naive")
        }
        psum[a] = np.array([bt.p[s].sum() for s in ("correct", "ai", "human", "random")])
    rows = _example_rows(res["oracle"], tup, bank) if example else None
    return {"tallies": tallies, "psum": psum, "example": rows}


def _size_rows(cfg: SimConfig, g: int, parts: list[dict]) -> tuple[list[dict], list[dict]]:
    """Verdict-rate and mean-rate rows at ``g`` students, summed over chunks in task order."""
    rows, means = [], []
    for a in AIS:
        for kind in ("clustered", "naive"):
            tally = sum(p["tallies"][a][kind] for p in parts)
            for v, c in zip(VERDICTS, tally, strict=True):
                rows.append(
                    {"ai": a, "n_students": g, "se": kind, "verdict": v, "rate": c / cfg.reps}
                )
        pm = sum(p["psum"][a] for p in parts) / cfg.reps
        means.append(
            {"ai": a, "n_students": g, "p_correct": pm[0], "p_ai": pm[1], "p_human": pm[2],
             "p_random": pm[3]}
        )  # fmt: skip
    return rows, means


@dataclass
class SimulatedStudy(RunResults):
    """Results of :func:`simulate_study`: ``rates`` (tidy: ``ai, n_students, se, verdict,
    rate``), ``means`` (mean selection rates per AI and size), the item ``bank``, ``example``
    (replication 0 as Phase-2 choices), the ``config``, the other ``sizes`` simulated and the
    ``seconds`` it took.  ``res["rates"]`` works too (the mapping it used to be).

    ``results()`` and ``save(folder)`` are those of ``turing simulate --main-only`` (the
    verdict rates by size without the command's further studies: by the expert's accuracy, by
    how consistently students act on a misconception, type-I error and convergence)."""

    _writer = "edueval.turing.pipeline:save_simulated_study"

    rates: pd.DataFrame = field(repr=False)
    means: pd.DataFrame = field(repr=False)
    bank: Bank = field(repr=False)
    example: pd.DataFrame = field(repr=False)
    config: SimConfig
    sizes: list[int] = field(default_factory=list)
    seconds: float = 0.0

    def __getitem__(self, key: str):
        if key not in ("rates", "means", "bank", "example"):
            raise KeyError(key)
        return getattr(self, key)

    def verdicts_main(self) -> pd.DataFrame:
        """Clustered verdict rates per AI at the main size (AI x verdict)."""
        r = self.rates
        main_cl = r[(r["se"] == "clustered") & (r["n_students"] == self.config.n_students)]
        return main_cl.pivot(index="ai", columns="verdict", values="rate").reindex(list(AIS))

    def first_size(self, ai: str, verdicts: list[str]) -> int | None:
        """Fewest simulated students at which ``verdicts`` reach 80% for ``ai``."""
        r = self.rates
        r = r[(r["se"] == "clustered") & (r["ai"] == ai) & r["verdict"].isin(verdicts)]
        s = r.groupby("n_students")["rate"].sum()
        ok = s[s >= 0.8]
        return int(ok.index.min()) if len(ok) else None

    def headline(self) -> dict:
        """The results.json numbers of the verdict rates (the further studies' entries empty)."""
        piv = self.verdicts_main()
        return {
            "oracle_draw_rate": float(piv.loc["oracle", "draw"]),
            # told apart = a decisive verdict that one of the two is better
            "unconditioned_told_apart_rate": float(
                piv.loc["unconditioned", "human_better"] + piv.loc["unconditioned", "ai_better"]
            ),
            "unconditioned_human_better_rate": float(piv.loc["unconditioned", "human_better"]),
            "oracle_80pct_draw_students": self.first_size("oracle", ["draw"]),
            "unconditioned_80pct_apart_students": self.first_size(
                "unconditioned", ["human_better", "ai_better"]
            ),
            "verdicts_main": piv.reset_index(),
            "students_needed_by_consistency": pd.DataFrame(),
            "type1": pd.DataFrame(),
            "verdict_convergence": pd.DataFrame(),
            "seconds_main_simulation": self.seconds,
            "seconds": self.seconds,
        }

    def verdict_table(self, n_students: int | None = None, se: str = "clustered") -> pd.DataFrame:
        """Share of replications ending in each verdict (columns) per AI (rows), at
        ``n_students`` (default: the configuration's) with ``se`` (``clustered``/``naive``)."""
        g = self.config.n_students if n_students is None else n_students
        sel = self.rates[(self.rates["n_students"] == g) & (self.rates["se"] == se)]
        table = sel.pivot(index="ai", columns="verdict", values="rate")
        return table.reindex(index=list(AIS), columns=list(VERDICTS))

    def to_frame(self) -> pd.DataFrame:
        """Tidy rows, one per (ai, n_students, se, verdict): the verdict ``rate``."""
        return self.rates.copy()

    def summary(self) -> str:
        """A printable table: verdict rates per AI at the configured size, clustered SEs."""
        c = self.config
        return "\n".join([
            f"Simulated imitation game: {c.reps} replications of {c.n_students} students x "
            f"{c.n_questions} questions (eps {c.eps}, delta {c.delta}, alpha {c.alpha}, "
            f"{c.se} SEs)",
            self.verdict_table().round(3).to_string(),
        ])  # fmt: skip

    def __str__(self) -> str:
        return self.summary()


def simulate_study(
    cfg: SimConfig,
    *,
    n_students_grid: list[int] | None = None,
    bank: Bank | None = None,
    log=None,
    executor=None,
) -> SimulatedStudy:
    """Verdict rates of every AI against the human over ``cfg.reps`` replications, at
    ``cfg.n_students`` and at each size of ``n_students_grid``. Returns
    :class:`SimulatedStudy`: ``rates`` (long DataFrame: ai, n_students, se, verdict, rate),
    ``means`` (mean p̂ per AI), the ``bank``, and ``example`` (replication 0 at
    ``cfg.n_students`` as Phase-2 rows for ``turing analyze``).

    Every (size, chunk of ``cfg.chunk`` replications) is an independent task on ``executor``
    (default: in process) with its own seed from ``SeedSequence(cfg.seed).spawn``, so the numbers
    do not depend on where the tasks run; the bank is built from ``cfg.seed`` itself."""
    from ..executor import InProcess
    from ..seeding import task_seeds

    t0 = time.perf_counter()
    cfg.check()
    if bank is None:
        bank = build_bank(cfg.frequencies, cfg.pool, np.random.default_rng(cfg.seed))
    sizes = sorted(set([cfg.n_students] + list(n_students_grid or [])))
    chunks = _chunks(cfg.reps, cfg.chunk)
    tasks = []
    for g, size_seed in zip(sizes, task_seeds(cfg.seed, len(sizes)), strict=True):
        for c, (b, seed) in enumerate(zip(chunks, task_seeds(size_seed, len(chunks)), strict=True)):
            tasks.append((bank, cfg, seed, b, g, c == 0 and g == cfg.n_students))
    parts = (executor or InProcess()).map(_chunk_task, tasks)
    rows, means = [], []
    for i, g in enumerate(sizes):
        r, m = _size_rows(cfg, g, parts[i * len(chunks) : (i + 1) * len(chunks)])
        rows += r
        means += m
        if log:
            log(f"  {g} students x {cfg.n_questions} questions: {cfg.reps} replications done")
    example = next(p["example"] for p in parts if p["example"] is not None)
    return SimulatedStudy(
        rates=pd.DataFrame(rows), means=pd.DataFrame(means), bank=bank, example=example, config=cfg,
        sizes=[int(g) for g in n_students_grid or []], seconds=time.perf_counter() - t0,
    )  # fmt: skip


def _example_rows(res: dict, tup: dict, bank: Bank) -> pd.DataFrame:
    """Replication 0 as Phase-2 rows ``student, question, chosen, rule`` (chosen as analyze reads
    it: ``ai+human`` for a shared option)."""
    choice = res["choice"][0]
    shared = res["shared"][0]
    g, m = choice.shape
    names = np.array(["correct", "ai", "human", "random"], dtype=object)
    chosen = names[choice]
    chosen = np.where((choice == 1) & shared, "ai+human", chosen)
    src = tup["src"][0]
    rule = np.array(bank.rules, dtype=object)[src]
    rule = np.where(tup["is_slip"][0], "(slip)", rule)
    width = len(str(g - 1))
    return pd.DataFrame(
        {
            "student": np.repeat([f"s{i:0{width}d}" for i in range(g)], m),
            "question": np.tile([f"q{t + 1:02d}" for t in range(m)], g),
            "chosen": chosen.ravel(),
            "phase1_source": rule.ravel(),
        }
    )


def response_model(cfg: SimConfig) -> ResponseModel:
    """The library response model with this configuration's parameters."""
    return ResponseModel(p_rule=cfg.p_rule, discrimination=cfg.discrimination)
