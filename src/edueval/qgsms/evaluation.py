"""QG-SMS in memory: question pairs, items and a model in, a results object out.

::

    from edueval.qgsms import evaluate

    res = evaluate("pairs.csv", "items.jsonl", model="local",      # or "openai/<model>", an
                   methods=["vanilla", "qg-sms"], bradley_terry=False)  # opener, a client
    print(res.summary())                      # AA / CA per method and dimension, sign tests
    res.accuracy["qg-sms"]["DF"].CA           # PairAccuracy(pairs, AA, CA, consistent, failed, ties)
    res.sign_tests["qg-sms", "CA", "all"].p_value    # exact sign test against vanilla
    res.ranking["qg-sms"]["DE"]["score"].spearman    # ranking score vs the true measure
    res.judgements, res.cost, res.to_frame(), res.n_failed, res.complete

``pairs`` and ``items`` may be paths, DataFrames or lists of records (checked as ``qgsms run``
checks its files).  No output folder, no file written, nothing printed (the model's response
cache, if the backend keeps one, is the backend's).  The numbers are those of ``qgsms run`` on
the same inputs and options (its ``results.json``): both judge with :func:`.judging.judge_pairs`
-- whose model calls go through :func:`edueval.models.evaluate.evaluate_requests` -- and score
with :func:`score_judgements`.  :func:`score` recomputes the scores from judgements tables, as
``qgsms score`` does.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from ..io import InputError
from ..items.data import ITEMS, read_items
from ..items.pairs import DEFAULT_ALPHA
from ..models.budget import (
    DEFAULT_MAX_FAILURES,
    BudgetDecision,
    FailureBudgetExceeded,
    MaxFailures,
    as_max_failures,
    decide,
)
from ..models.evaluate import is_client, model_label, open_client
from ..models.types import ModelStats
from ..results import RunResults
from ..tables import takes_tables
from .data import JUDGEMENTS, JUDGEMENTS_READ, PAIRS, as_source, read_judgements, read_pairs
from .judging import SEED_RULE, check_config, judge_pairs
from .methods import MethodConfig
from .ranking import anova, bt_abilities, rank_correlations, ranking_scores, true_measures
from .scoring import accuracy_table, alpha_curve, binomial_tests, pair_table

__all__ = [
    "Anova",
    "PairAccuracy",
    "QGSMSEvaluation",
    "QGSMSScores",
    "QGSMSSetup",
    "RankCorrelation",
    "SignTest",
    "evaluate",
    "prepare",
    "score",
    "score_judgements",
]

#: the score tables of :func:`score_judgements`, in the order the run folder writes them
TABLES = ("pairs", "accuracy", "binomial", "alpha_curve", "failures", "ranking",
          "rank_correlations", "anova")  # fmt: skip


@takes_tables(judgements=JUDGEMENTS)
def score_judgements(
    judgements: pd.DataFrame,
    alpha: dict[str, float] | None = None,
    *,
    bradley_terry: bool = True,
    seed: int = 0,
) -> dict:
    """All score tables from a judgements table, with the ranking extension (ranking scores,
    correlations with the true measure, ANOVA over DE groups; the Bradley-Terry fit unless
    ``bradley_terry`` is False)."""
    pairs = pair_table(judgements)
    acc = accuracy_table(pairs)
    tests = binomial_tests(pairs) if "vanilla" in set(acc["method"]) else pd.DataFrame()
    curve = alpha_curve(pairs, {**DEFAULT_ALPHA, **(alpha or {})})
    fails = (
        judgements[judgements["status"] == "failed"]
        .groupby(["method", "step"])
        .size()
        .rename("failed_judgements")
        .reset_index()
    )
    scores = ranking_scores(judgements, true_measures(judgements))
    bt = bt_abilities(judgements, seed=seed) if bradley_terry else None
    if bt is not None and len(bt):
        scores = scores.merge(bt, on=["method", "dimension", "item"], how="left")
    return {"pairs": pairs, "accuracy": acc, "binomial": tests, "alpha_curve": curve,
            "failures": fails, "ranking": scores, "rank_correlations":
            rank_correlations(scores), "anova": anova(scores)}  # fmt: skip


@dataclass(frozen=True)
class PairAccuracy:
    """A method's accuracy on one dimension (or ``all``): ``pairs`` judged in both orders; AA =
    share of correct judgements, CA = share of pairs right in both orders (``consistent``);
    ``failed`` judgements and ``ties`` are counted as wrong."""

    pairs: int
    AA: float
    CA: float
    consistent: int
    failed: int
    ties: int

    def as_dict(self) -> dict[str, Any]:
        """As ``results.json`` holds it."""
        return {k: getattr(self, k) for k in ("AA", "CA", "pairs", "failed", "ties")}


@dataclass(frozen=True)
class SignTest:
    """The exact one-sided sign test (exact McNemar) of a method against vanilla on the units both
    judged: ``b`` units right only for the method, ``c`` only for vanilla; p = P(X >= b),
    X ~ Binomial(b + c, 1/2)."""

    units: int
    b: int
    c: int
    accuracy: float
    accuracy_baseline: float
    p_value: float

    def as_dict(self) -> dict[str, Any]:
        return {"b": self.b, "c": self.c, "p_value": self.p_value}


@dataclass(frozen=True)
class RankCorrelation:
    """A ranking of the questions (``score`` or ``bradley_terry``) against the true measure
    (NaN with fewer than 3 questions or a constant side)."""

    questions: int
    spearman: float
    spearman_p: float
    kendall: float
    kendall_p: float
    pearson: float
    pearson_p: float

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("questions", "spearman", "kendall", "pearson")}


@dataclass(frozen=True)
class Anova:
    """One-way ANOVA of the ranking score over the groups of questions with the same true DE."""

    groups: int
    questions: int
    F: float
    p_value: float
    group_means: str

    def as_dict(self) -> dict[str, Any]:
        return {"F": self.F, "p_value": self.p_value}


def _f(x: Any) -> float:
    return float(x) if x is not None else math.nan


def _typed(tables: dict[str, pd.DataFrame]) -> dict[str, Any]:
    """The typed measures of the score tables."""
    accuracy: dict[str, dict[str, PairAccuracy]] = {}
    for r in tables["accuracy"].to_dict("records"):
        accuracy.setdefault(r["method"], {})[r["dimension"]] = PairAccuracy(
            pairs=int(r["pairs"]), AA=_f(r["AA"]), CA=_f(r["CA"]),
            consistent=int(r["consistent"]), failed=int(r["failed"]), ties=int(r["ties"]))  # fmt: skip
    tests = {
        (r["method"], r["measure"], r["dimension"]): SignTest(
            units=int(r["units"]), b=int(r["b"]), c=int(r["c"]), accuracy=_f(r["accuracy"]),
            accuracy_baseline=_f(r["accuracy_vanilla"]), p_value=_f(r["p_value"]))
        for r in tables["binomial"].to_dict("records")
    }  # fmt: skip
    ranking: dict[str, dict[str, dict[str, RankCorrelation]]] = {}
    for r in tables["rank_correlations"].to_dict("records"):
        ranking.setdefault(r["method"], {}).setdefault(r["dimension"], {})[r["ranking"]] = (
            RankCorrelation(questions=int(r["questions"]), **{
                k: _f(r[k]) for k in ("spearman", "spearman_p", "kendall", "kendall_p",
                                      "pearson", "pearson_p")}))  # fmt: skip
    anovas = {r["method"]: Anova(groups=int(r["groups"]), questions=int(r["questions"]),
                                 F=_f(r["F"]), p_value=_f(r["p_value"]),
                                 group_means=str(r["group_means"]))
              for r in tables["anova"].to_dict("records")}  # fmt: skip
    return {"accuracy": accuracy, "sign_tests": tests, "ranking": ranking, "anova_DE": anovas}


def _num(x: float) -> str:
    return f"{x:.3f}" if math.isfinite(x) else "-"


@dataclass(kw_only=True)
class QGSMSScores(RunResults):
    """Scores of pairwise question judgements (:func:`score`; :class:`QGSMSEvaluation` adds the
    model run).

    ``accuracy[method][dimension]``: :class:`PairAccuracy` (``dimension`` TC, DF, DC, DE or
    ``all``).  ``sign_tests[method, measure, dimension]``: :class:`SignTest` against vanilla
    (``measure`` CA or AA; only when vanilla was run).  ``ranking[method][dimension][ranking]``:
    :class:`RankCorrelation` (``ranking`` ``score`` or ``bradley_terry``).  ``anova_DE[method]``:
    :class:`Anova`.  ``judgements``: one row per method, pair and order.  ``tables``: the score
    tables (``pairs``, ``accuracy``, ``binomial``, ``alpha_curve``, ``failures``, ``ranking``,
    ``rank_correlations``, ``anova``).  ``cost``: one row per method (``None`` when scored from
    judgements)."""

    accuracy: dict[str, dict[str, PairAccuracy]]
    sign_tests: dict[tuple[str, str, str], SignTest]
    ranking: dict[str, dict[str, dict[str, RankCorrelation]]]
    anova_DE: dict[str, Anova]
    judgements: pd.DataFrame = field(repr=False)
    tables: dict[str, pd.DataFrame] = field(repr=False)
    cost: pd.DataFrame | None = field(default=None, repr=False)
    #: the options used, as the command's config.json records them
    params: dict[str, Any] = field(default_factory=dict)

    _writer = "edueval.qgsms.pipeline:save_score"

    @classmethod
    def from_tables(cls, judgements: pd.DataFrame, tables: dict[str, pd.DataFrame],
                    **extra: Any) -> Any:  # fmt: skip
        """The results object of :func:`score_judgements`' tables."""
        return cls(**_typed(tables), judgements=judgements, tables=tables, **extra)

    @property
    def binomial_p(self) -> dict[tuple[str, str], float]:
        """The CA sign tests' p-values, ``{(method, dimension): p}``."""
        return {(m, d): t.p_value for (m, measure, d), t in self.sign_tests.items()
                if measure == "CA"}  # fmt: skip

    def metrics(self) -> dict[str, Any]:
        """The metrics as ``results.json`` holds them (``accuracy``, ``binomial_p``,
        ``sign_tests``, ``ranking``, ``anova_DE``, ``cost``; the last five when there is one)."""
        out: dict[str, Any] = {"accuracy": {m: {d: a.as_dict() for d, a in dims.items()}
                                            for m, dims in self.accuracy.items()}}  # fmt: skip
        if self.sign_tests:
            out["binomial_p"] = {f"{m}/{d}": p for (m, d), p in self.binomial_p.items()}
            out["sign_tests"] = {"/".join(k): t.as_dict() for k, t in self.sign_tests.items()}
        for m, dims in self.ranking.items():
            out.setdefault("ranking", {})[m] = {d: {name: rc.as_dict() for name, rc in r.items()}
                                                for d, r in dims.items()}  # fmt: skip
        if self.anova_DE:
            out["anova_DE"] = {m: a.as_dict() for m, a in self.anova_DE.items()}
        if self.cost is not None and len(self.cost):
            out["cost"] = {r["method"]: {"calls_per_pair": r["calls_per_pair"],
                                         "tokens_per_pair": r["tokens_per_pair"]}
                           for r in self.cost.to_dict("records")}  # fmt: skip
        return out

    def headline(self) -> dict[str, Any]:
        """``qgsms score``'s results.json: :meth:`metrics`."""
        return self.metrics()

    def to_frame(self) -> pd.DataFrame:
        """Tidy rows ``method, dimension, measure, value``: AA, CA, pairs, consistent, failed,
        ties; ``sign_test_<CA|AA>_<b|c|p_value>``; ``<spearman|kendall|pearson>_<ranking>``;
        ``anova_F``, ``anova_p_value``."""
        rows = []
        for m, dims in self.accuracy.items():
            for d, a in dims.items():
                rows += [(m, d, k, float(v)) for k, v in a.__dict__.items()]
        for (m, measure, d), t in self.sign_tests.items():
            rows += [(m, d, f"sign_test_{measure}_{k}", float(getattr(t, k)))
                     for k in ("b", "c", "p_value")]  # fmt: skip
        for m, ranked in self.ranking.items():
            for d, r in ranked.items():
                for name, rc in r.items():
                    rows += [(m, d, f"{k}_{name}", float(getattr(rc, k)))
                             for k in ("spearman", "kendall", "pearson")]  # fmt: skip
        for m, test in self.anova_DE.items():
            rows += [(m, "DE", "anova_F", test.F), (m, "DE", "anova_p_value", test.p_value)]
        return pd.DataFrame(rows, columns=["method", "dimension", "measure", "value"])

    def _table(self, order: list[str] | None = None) -> str:
        rows = []
        methods = [m for m in (order or []) if m in self.accuracy]
        for m in methods + [m for m in self.accuracy if m not in methods]:
            for d, a in self.accuracy[m].items():
                t = self.sign_tests.get((m, "CA", d))
                rows.append({"method": m, "dimension": d, "pairs": a.pairs, "AA": _num(a.AA),
                             "CA": _num(a.CA), "failed": a.failed, "ties": a.ties,
                             "p (CA > vanilla)": "" if t is None else f"{t.p_value:.4f}"})  # fmt: skip
        return pd.DataFrame(rows).to_string(index=False) if rows else "(no judgements)"

    def _ranking_lines(self) -> list[str]:
        rows = [{"method": m, "dimension": d, **{name: _num(rc.spearman) for name, rc in r.items()}}
                for m, dims in self.ranking.items() for d, r in dims.items()]  # fmt: skip
        if not rows:
            return []
        table = pd.DataFrame(rows).fillna("").to_string(index=False)
        return ["Ranking of the questions vs their true measure (Spearman):", table]

    def summary(self) -> str:
        """A printable table: AA and CA per method and dimension, with the CA sign test against
        vanilla, then the ranking correlations."""
        head = f"QG-SMS scores: {self.judgements['pair_id'].nunique()} pairs, methods " \
            f"{', '.join(self.accuracy)}"  # fmt: skip
        return "\n".join([head, self._table(), *self._ranking_lines()])


@dataclass(kw_only=True)
class QGSMSEvaluation(QGSMSScores):
    """Results of :func:`evaluate`: the scores (:class:`QGSMSScores`) of the model's judgements,
    and the run.  ``cost``: calls and tokens per method (its share of the shared steps
    included); ``robustness``: each question's simulated DF per repeat (``repeats`` > 1);
    ``logs``: the shared steps' outputs (``profiles``, ``simulations``, ``personas``);
    ``budget``: the failure budget's decision; ``stats``: the model calls; ``params``: the
    options used (as the run's ``config.json``)."""

    methods: list[str]
    n_pairs: int
    profile_sets_failed: int
    simulations_failed: int
    robustness: pd.DataFrame = field(repr=False)
    logs: dict[str, list] = field(repr=False)
    budget: BudgetDecision
    stats: ModelStats = field(repr=False)
    seconds: float

    _writer = "edueval.qgsms.pipeline:save_run"
    #: the command whose run this is (what ``compare`` records as the protocol)
    command = "qgsms run"

    @property
    def complete(self) -> bool:
        """Whether failed calls + unparseable answers are within ``max_failures``."""
        return self.budget.complete

    @property
    def n_failed(self) -> int:
        """Model calls that failed after their retries."""
        return self.budget.failed

    @property
    def n_unparseable(self) -> int:
        """Answers still malformed after the step's retries (counted against the budget)."""
        return self.budget.unparseable

    @property
    def failed_judgements(self) -> int:
        """Judgements (a method, a pair, an order) that failed: scored as wrong."""
        return int((self.judgements["status"] == "failed").sum()) if len(self.judgements) else 0

    def headline(self) -> dict[str, Any]:
        """``qgsms run``'s results.json: the metrics, ``seconds``, ``model_calls``, the counts,
        ``model_failures`` and ``complete``."""
        return {**self.metrics(), "seconds": self.seconds, "model_calls": self.stats.as_dict(),
                "n_pairs": self.n_pairs, "profile_sets_failed": self.profile_sets_failed,
                "simulations_failed": self.simulations_failed,
                "model_failures": self.budget.as_dict(), "complete": self.complete}  # fmt: skip

    def summary(self) -> str:
        """A printable table: AA and CA per method and dimension with the CA sign test against
        vanilla, the ranking correlations, and the failed calls against the budget."""
        model = self.params.get("model")
        b = self.budget
        lines = [
            f"QG-SMS: {self.n_pairs} pairs, methods {', '.join(self.methods)}"
            + (f", model {model}" if model else ""),
            self._table(self.methods),
            *self._ranking_lines(),
            f"{b.failed} failed calls and {b.unparseable} unparseable answers, "
            f"{self.failed_judgements} failed judgements scored as wrong ({b.allowed} allowed "
            f"by max_failures {b.max_failures}): {b.status}",
        ]
        return "\n".join(lines)


@dataclass
class QGSMSSetup:
    """Checked inputs and options of one evaluation (:func:`prepare`); :meth:`run` judges and
    scores on an open client."""

    items: pd.DataFrame
    pairs: pd.DataFrame
    methods: list[str]
    cfg: MethodConfig
    retries: int
    repeats: int
    bradley_terry: bool
    seed: int
    params: dict[str, Any]

    def run(self, client: Any, *, max_failures: MaxFailures = DEFAULT_MAX_FAILURES,
            log: Callable[[str], None] | None = None) -> QGSMSEvaluation:  # fmt: skip
        """Judge every pair with each method on ``client`` and score; never raises for the
        budget (``complete`` says)."""
        t0 = time.perf_counter()
        judged = judge_pairs(client, self.pairs, self.items, methods=self.methods, cfg=self.cfg,
                             retries=self.retries, repeats=self.repeats, log=log)  # fmt: skip
        stats = client.stats()
        seconds = time.perf_counter() - t0
        tables = score_judgements(judged.judgements, bradley_terry=self.bradley_terry,
                                  seed=self.seed)  # fmt: skip
        return QGSMSEvaluation.from_tables(
            judged.judgements, tables, cost=judged.cost, methods=list(self.methods),
            n_pairs=len(self.pairs), profile_sets_failed=judged.profile_sets_failed,
            simulations_failed=judged.simulations_failed, robustness=judged.robustness,
            logs=judged.logs, budget=decide(stats, max_failures), stats=stats, seconds=seconds,
            params=self.params)  # fmt: skip


def prepare(
    pairs: Any,
    items: Any,
    *,
    methods: list[str],
    cfg: MethodConfig = MethodConfig(),
    retries: int = 2,
    repeats: int = 1,
    limit: int | None = None,
    seed: int = 0,
    bradley_terry: bool = True,
    model_name: str | None = None,
) -> QGSMSSetup:
    """The options checked, then the items and pairs read and checked (the first ``limit`` pairs
    of each dimension); ``cfg.seed`` is set to ``seed``.  Raises
    :class:`~edueval.io.InputError`."""
    cfg = replace(cfg, seed=seed)
    methods = list(methods)
    check_config(methods, cfg, repeats, retries)
    if limit is not None and limit < 1:
        raise InputError("limit= must be at least 1")
    items_df = read_items(as_source(items))
    pairs_df = read_pairs(pairs, items_df)
    if limit is not None:  # the first `limit` pairs of each dimension
        pairs_df = pairs_df.groupby("dimension", sort=False).head(limit).reset_index(drop=True)
    params = {"methods": methods, "model": model_name, "retries": retries, "repeats": repeats,
              "limit": limit, "n_pairs": len(pairs_df), "bradley_terry": bradley_terry,
              **cfg.__dict__, "call_seeds": SEED_RULE}  # fmt: skip
    return QGSMSSetup(items=items_df, pairs=pairs_df, methods=methods, cfg=cfg, retries=retries,
                      repeats=repeats, bradley_terry=bradley_terry, seed=seed,
                      params=params)  # fmt: skip


# lists of records go to the body as they are: it checks the options before any table
@takes_tables(pairs=replace(PAIRS, also=(list, tuple)), items=replace(ITEMS, also=(list, tuple)))
def evaluate(
    pairs: str | Path | pd.DataFrame | list[dict],
    items: str | Path | pd.DataFrame | list[dict],
    model: Any,
    *,
    methods: list[str] | tuple[str, ...] = ("vanilla", "qg-sms"),
    profiles: int = 10,
    max_profiles: int = 20,
    explanation_chars: int = 400,
    temperature: float = 1.0,
    simulate: str = "per-pair",
    judge_material: bool = False,
    chateval_personas: str = "generated",
    personas: int = 3,
    rounds: int = 2,
    retries: int = 2,
    repeats: int = 1,
    limit: int | None = None,
    bradley_terry: bool = True,
    seed: int = 0,
    max_failures: MaxFailures | str | int | float = DEFAULT_MAX_FAILURES,
) -> QGSMSEvaluation:
    """Judge every pair in both orders with each method and score the judgements: AA and CA,
    exact sign tests against vanilla, accuracy vs alpha, cost, and the ranking of the questions
    against their true measure.

    ``pairs``: ``items pairs``' ``pairs.csv`` (``pair_id, dimension, q1, q2, better`` or
    ``label``, optional ``diff``, ``alpha``, ``target_topic``, ``measure_q1/2``); ``items``: the
    items (``item, text, choices, answer, material, topic``, optional ``material_text``): each a
    path, a DataFrame or a list of records, checked as ``qgsms run`` checks its files
    (:class:`~edueval.io.InputError`).  ``model``: a model spec (``"local"``,
    ``"openai/<model>"``), an opener ``open(log_path)`` returning a client context manager, or an
    open :class:`~edueval.models.ModelClient` (then its counters, and so the budget, cover
    everything it was asked).  ``methods``: any of :data:`~edueval.qgsms.METHODS`.  The other
    options are those of ``qgsms run`` (``profiles`` = ``--profiles``, ``bradley_terry`` =
    ``--bt``: the NUTS fit of the ranking; ``False`` skips it).  ``max_failures``: a count
    (``3``), a share (``"5%"``, ``0.05``) or a :class:`~edueval.models.MaxFailures`.

    Failed judgements are scored as wrong and counted.  When failed calls and unparseable
    answers together are past ``max_failures``, raises
    :class:`~edueval.models.FailureBudgetExceeded` (its ``.result`` is this evaluation,
    ``complete`` False) -- as ``qgsms run`` marks its run failed.  Nothing is written or
    printed."""
    limit_ = as_max_failures(max_failures)
    cfg = MethodConfig(n_profiles=profiles, max_profiles=max_profiles, personas=personas,
                       rounds=rounds, temperature=temperature, simulate=simulate,
                       judge_material=judge_material, explanation_chars=explanation_chars,
                       chateval_personas=chateval_personas)  # fmt: skip
    setup = prepare(pairs, items, methods=list(methods), cfg=cfg, retries=retries,
                    repeats=repeats, limit=limit, seed=seed, bradley_terry=bradley_terry,
                    model_name=model_label(model))  # fmt: skip
    opened = contextlib.nullcontext(model) if is_client(model) else open_client(model)
    with opened as client:
        result = setup.run(client, max_failures=limit_)
    result.params["max_failures"] = str(limit_)
    if not result.complete:
        raise FailureBudgetExceeded(result.budget, result)
    return result


@takes_tables(judgements=JUDGEMENTS_READ)
def score(judgements: Any, *, bradley_terry: bool = True, seed: int = 0) -> QGSMSScores:
    """Recompute every score from one or more ``judgements.csv`` tables (paths, DataFrames or
    one list of records; checked as ``qgsms score`` checks them), as ``qgsms score`` does."""
    j = read_judgements(judgements)
    tables = score_judgements(j, bradley_terry=bradley_terry, seed=seed)
    return QGSMSScores.from_tables(j, tables, params={"bradley_terry": bradley_terry, "seed": seed})
