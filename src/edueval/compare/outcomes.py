"""What a comparison reads: each compared run ("arm") as a table of per-unit outcomes.

An :class:`Arm` is one model / method / prompting style on a set of items: its ``name``, the
settings that describe it (``labels``: model, prompt, shots, scoring, method ...) and ``units``,
one row per scored unit and metric with the columns of :data:`UNIT_COLUMNS`:

* ``metric``: which score the row counts in (``mcq``, ``aia``, ``mia``; ``CA``, ``AA`` ...);
* ``unit``: the item's identity, equal across arms for the same item (a question id; a question
  and choice for MIA; a pair and presentation order for QG-SMS's AA);
* ``cluster``: the independent unit it belongs to (the question; the pair) -- equal to ``unit``
  for metrics with one row per independent item;
* ``correct``: 0/1, as the protocol scores it (a failed call or an unparseable answer is 0);
  for a *continuous* metric (tutor's ``f1``), the score in [0, 1] (a failed call or an empty
  reply is 0);
* ``status``: ``ok``, ``failed``, ``unparseable`` or ``tie`` (counted and shown, never dropped).

The adapter protocol: :func:`as_arms` accepts an :class:`Arm`; an object with a
``comparison_units()`` method returning such a DataFrame (optionally with an ``arm`` column when
the object holds several methods, and a ``comparison_labels()`` method returning the settings:
a dict, or a dict of dicts per arm) -- the way a protocol's results object plugs in without
importing this package; a :class:`~edueval.malalgo.MalAlgoEvaluation` (read through its
``responses`` table); a QG-SMS results object with a ``judgements`` table (one arm per method,
:func:`qgsms_units`); a :class:`~edueval.tutor.TutorReplies` (read through its ``replies``
table, :func:`tutor_units`); or a DataFrame with the unit columns.  Nothing here imports a
protocol package: the built-in adapters read the tables' columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..io import InputError, to_numbers
from ..tables import Table, takes_tables

__all__ = [
    "METRICS",
    "UNIT_COLUMNS",
    "Arm",
    "MetricSpec",
    "as_arms",
    "malalgo_units",
    "qgsms_units",
    "tutor_units",
]

UNIT_COLUMNS = ["metric", "unit", "cluster", "correct", "status"]
STATUSES = ("ok", "failed", "unparseable", "tie")


@dataclass(frozen=True)
class MetricSpec:
    """How a metric is compared: ``clustered`` when several units share a cluster (MIA's three
    incorrect choices of a question; QG-SMS's AA, two orders per pair), so its interval and its
    paired difference are clustered; ``unit`` and ``cluster`` name them in reports.
    ``continuous``: the rows' scores are in [0, 1] rather than 0/1 (tutor's token F1): the
    estimate is a mean with a clustered t interval, the difference clustered."""

    key: str
    label: str
    clustered: bool
    unit: str = "items"
    cluster: str = "items"
    continuous: bool = False


#: the metrics the built-in adapters produce, in the order reports list them
METRICS: dict[str, MetricSpec] = {
    "mcq": MetricSpec("mcq", "MCQ accuracy", False, "questions", "questions"),
    "aia": MetricSpec("aia", "AIA (correct choices)", False, "questions", "questions"),
    "mia": MetricSpec("mia", "MIA (incorrect choices)", True, "prompts", "questions"),
    "CA": MetricSpec("CA", "Consistent Accuracy", False, "pairs", "pairs"),
    "AA": MetricSpec("AA", "Average Accuracy", True, "judgements", "pairs"),
    "f1": MetricSpec("f1", "Token F1 (teacher replies)", True, "turns", "dialogues", True),
}


@dataclass
class Arm:
    """One compared run: its name, the settings that describe it and its per-unit outcomes."""

    name: str
    units: pd.DataFrame = field(repr=False)
    labels: dict[str, Any] = field(default_factory=dict)
    #: the run's status: ``complete``, or ``failed`` when past its failure budget
    status: str = "complete"

    def __post_init__(self) -> None:
        missing = [c for c in UNIT_COLUMNS if c not in self.units.columns]
        if missing:
            raise InputError(f"{self.name}: the outcome table lacks {', '.join(missing)}")
        u = self.units[UNIT_COLUMNS].copy()
        for col in ("metric", "unit", "cluster", "status"):
            u[col] = u[col].astype(str)
        u["correct"] = to_numbers(u["correct"])
        continuous = u["metric"].map(lambda m: m in METRICS and METRICS[m].continuous)
        valid = u["correct"].between(0, 1) & (continuous | u["correct"].isin([0, 1]))
        if u["correct"].isna().any() or not valid.all():
            raise InputError(f"{self.name}: 'correct' must be 0 or 1 on every row (a score in "
                             "[0, 1] for " + ", ".join(k for k, m in METRICS.items()
                                                      if m.continuous) + ")")  # fmt: skip
        bad = sorted(set(u["status"]) - set(STATUSES))
        if bad:
            raise InputError(f"{self.name}: unknown status {bad[0]!r} (expected {STATUSES})")
        dup = u.duplicated(["metric", "unit"])
        if dup.any():
            first = u.loc[dup].iloc[0]
            raise InputError(f"{self.name}: unit {first['unit']!r} appears twice in "
                             f"{first['metric']}")  # fmt: skip
        if not continuous.any():
            u["correct"] = u["correct"].astype(int)
        self.units = u.reset_index(drop=True)

    @property
    def metrics(self) -> list[str]:
        return list(dict.fromkeys(self.units["metric"]))


_OK = ("json", "logprob", "json (no logprobs)")


@takes_tables(
    responses=Table(
        "malalgo responses",
        ("question_id", "kind", "choice", "is_correct_choice", "status", "correct"),
        paths=False,
    )
)
def malalgo_units(responses: pd.DataFrame) -> pd.DataFrame:
    """MalAlgoQA responses (``MalAlgoEvaluation.responses`` or a run's ``responses.csv``) as
    unit rows: ``mcq`` and ``aia`` one per question, ``mia`` one per question and incorrect
    choice, clustered by question.  ``correct`` is the protocol's (failed and unparseable are
    wrong); ``status`` keeps which were failed or unparseable."""
    r = responses
    qid = r["question_id"].astype(str)
    choice = r["choice"].fillna("").astype(str)
    is_key = r["is_correct_choice"].astype(str).str.lower().isin(["true", "1"])
    metric = np.where(r["kind"] == "mcq", "mcq", np.where(is_key, "aia", "mia"))
    unit = np.where(metric == "mia", qid + ":" + choice, qid)
    status = r["status"].astype(str)
    status = status.where(status.isin(["failed", "unparseable"]), "ok")
    correct = r["correct"].astype(str).str.lower().isin(["true", "1", "1.0"]).astype(int)
    return pd.DataFrame({"metric": metric, "unit": unit, "cluster": qid.to_numpy(),
                         "correct": correct.to_numpy(), "status": status.to_numpy()})  # fmt: skip


@takes_tables(
    judgements=Table(
        "qgsms judgements",
        ("method", "dimension", "pair_id", "order", "correct", "status"),
        paths=False,
    )
)
def qgsms_units(judgements: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """QG-SMS judgements (a ``qgsms run``'s ``judgements.csv``: ``method, dimension, pair_id,
    order, correct, status``) as unit rows per method: ``CA`` one per pair (right in both
    orders), ``AA`` one per pair and order, clustered by pair.  A judgement the method cannot
    make by design (status ``n/a``) has no unit; a failed judgement or a tie is wrong and
    counted."""
    j = judgements[judgements["status"].astype(str) != "n/a"].copy()
    j["pair"] = j["dimension"].astype(str) + ":" + j["pair_id"].astype(str)
    j["right"] = j["correct"].astype(str).str.lower().isin(["true", "1", "1.0"]).astype(int)
    raw = j["status"].astype(str)
    j["state"] = np.where(raw == "failed", "failed", np.where(raw == "tie", "tie", "ok"))
    out = {}
    for method, g in j.groupby("method", sort=False):
        aa = pd.DataFrame(
            {
                "metric": "AA",
                "unit": g["pair"] + ":" + g["order"].astype(str),
                "cluster": g["pair"],
                "correct": g["right"],
                "status": g["state"],
            }
        )
        per = g.groupby("pair", sort=False).agg(
            right=("right", "sum"), n=("right", "size"), failed=("state", lambda s: (s == "failed").any()),
            tie=("state", lambda s: (s == "tie").any()))  # fmt: skip
        ca = pd.DataFrame({"metric": "CA", "unit": per.index, "cluster": per.index,
                           "correct": ((per["right"] == 2) & (per["n"] == 2)).astype(int),
                           "status": np.where(per["failed"], "failed",
                                              np.where(per["tie"], "tie", "ok"))})  # fmt: skip
        out[str(method)] = pd.concat([ca, aa], ignore_index=True)
    return out


@takes_tables(replies=Table("tutor replies", ("dialogue", "turn", "status", "f1"), paths=False))
def tutor_units(replies: pd.DataFrame) -> pd.DataFrame:
    """AI teacher replies (``TutorReplies.replies`` or a ``tutor reply`` run's ``replies.csv``:
    ``dialogue, turn, status, f1``) as ``f1`` unit rows, one per target turn
    (``dialogue:turn``), clustered by dialogue.  A failed call (status ``failed``) or an empty
    reply (``empty``, kept as ``unparseable``: the one reply that cannot be read as a teacher's
    turn) has no F1 and scores 0, counted; a looping reply (``degenerate``) is a real reply and
    keeps its F1, as ``tutor reply``'s means do."""
    dialogue = replies["dialogue"].astype(str)
    turn = to_numbers(replies["turn"])
    turn_s = turn.map(lambda t: str(int(t)) if t == t and float(t).is_integer() else str(t))
    raw = replies["status"].astype(str)
    real = raw.isin(["ok", "degenerate"])
    f1 = to_numbers(replies["f1"])
    if (real & f1.isna()).any():
        raise InputError("tutor replies: a reply read as 'ok' has no f1")
    status = np.where(real, "ok", np.where(raw == "empty", "unparseable", "failed"))
    return pd.DataFrame({"metric": "f1", "unit": (dialogue + ":" + turn_s).to_numpy(),
                         "cluster": dialogue.to_numpy(),
                         "correct": f1.where(real, 0.0).to_numpy(dtype=float),
                         "status": status})  # fmt: skip


def _labels_for(labels: Any, arm: str | None) -> dict[str, Any]:
    if not isinstance(labels, Mapping):
        return {}
    if arm is not None and isinstance(labels.get(arm), Mapping):
        return dict(labels[arm])
    return {k: v for k, v in labels.items() if not isinstance(v, Mapping)}


def _from_protocol(obj: Any, name: str) -> list[Arm]:
    units = obj.comparison_units()
    labels = obj.comparison_labels() if hasattr(obj, "comparison_labels") else {}
    if "arm" in units.columns:
        return [Arm(f"{name}:{a}" if name else str(a), g.drop(columns="arm"),
                    {**_labels_for(labels, str(a)), "arm": str(a)})
                for a, g in units.groupby("arm", sort=False)]  # fmt: skip
    return [Arm(name, units, _labels_for(labels, None))]


def as_arms(obj: Any, name: str) -> list[Arm]:
    """The arms of one compared object (see the module docstring for what is accepted)."""
    if isinstance(obj, Arm):
        return [obj if not name or name == obj.name else Arm(name, obj.units, obj.labels)]
    if hasattr(obj, "comparison_units"):
        return _from_protocol(obj, name)
    judgements = getattr(obj, "judgements", None)
    if isinstance(judgements, pd.DataFrame) and {"method", "pair_id", "order"} <= set(judgements):
        params = dict(getattr(obj, "params", {}) or {})
        params = {k: v for k, v in params.items() if not isinstance(v, (dict, list))}
        return [Arm(f"{name}:{m}" if name else m, u, {**params, "method": m})
                for m, u in qgsms_units(judgements).items()]  # fmt: skip
    responses = getattr(obj, "responses", None)
    if isinstance(responses, pd.DataFrame) and "kind" in responses.columns:
        params = dict(getattr(obj, "params", {}) or {})
        return [Arm(name, malalgo_units(responses), params)]
    replies = getattr(obj, "replies", None)
    if isinstance(replies, pd.DataFrame) and {"dialogue", "turn", "f1"} <= set(replies.columns):
        params = dict(getattr(obj, "params", {}) or {})
        params = {k: v for k, v in params.items() if not isinstance(v, (dict, list))}
        return [Arm(name, tutor_units(replies), params)]
    if isinstance(obj, pd.DataFrame):
        return [Arm(name, obj)]
    raise InputError(f"cannot compare a {type(obj).__name__}: expected a results object with "
                     "per-item outcomes (MalAlgoEvaluation, TutorReplies, or one with "
                     "comparison_units()), an Arm or a DataFrame with columns "
                     + ", ".join(UNIT_COLUMNS))  # fmt: skip
