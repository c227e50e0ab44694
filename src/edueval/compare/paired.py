"""Paired comparison of runs on the same items: :func:`compare`.

For each metric, every arm's estimate with its 95% interval and every arm's difference from the
reference with a paired interval and test, the items being the unit:

* **one 0/1 outcome per item** (MCQ accuracy, AIA, QG-SMS's CA): the exact McNemar test (the
  two-sided exact sign test on the discordant items ``b`` -- the run right, the reference wrong
  -- and ``c``, the reverse: statsmodels' ``mcnemar(table, exact=True)``) and Tango's score
  interval of the difference of paired proportions (it excludes 0 exactly when McNemar's
  asymptotic test rejects; with few discordant items the exact p-value can stay above alpha
  while it does -- the exact test decides);
* **several rows per item** (MIA, three incorrect choices per question; QG-SMS's AA, two orders
  per pair): the mean of the per-row differences with its question-clustered (CR1) standard
  error and a t interval and test on ``G − 1`` df (statsmodels' OLS of the differences on a
  constant with cluster-robust SEs), the interval clipped to [-1, 1];
* **a continuous score per item** (tutor replies' token F1 with the real teacher's reply, per
  target turn, clustered by dialogue): each run's mean with its dialogue-clustered (CR1) t
  interval on ``G − 1`` df, and the clustered paired difference as for MIA.

Holm's adjustment runs over the comparisons with the reference within each metric (each metric
is its own leaderboard).  The default reference is, per metric, the arm with the highest
estimate (first given on a tie): the differences then say which runs are distinguishable from
the top one.  The detectable difference: the smallest difference the comparison would detect
with 80% power at ``alpha`` -- McNemar's test by Connor's (1987) normal approximation at the
observed discordance rate and number of items, or the clustered paired difference by the normal
approximation at its observed SE -- and, with ``detect``, the items (questions) needed for it.

Failed calls and unparseable answers: ``failures="wrong"`` (the default, as the protocols score
them) keeps them as wrong answers (an F1 of 0 for a failed call or an empty tutor reply), counted
per run and per comparison; ``failures="exclude"`` leaves an arm's failed units out of its estimate
and a comparison's units where either arm failed out of that comparison, and counts them as
``excluded``.  Either way they are shown.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from .. import stats
from ..io import InputError
from .outcomes import METRICS, Arm, MetricSpec, as_arms
from .results import Comparison

__all__ = ["compare", "metric_spec"]

FAILURES = ("wrong", "exclude")
_BAD = ("failed", "unparseable")


def metric_spec(key: str, clustered: bool) -> MetricSpec:
    """The known metric's spec, or a generic one."""
    return METRICS.get(key, MetricSpec(key, key, clustered))


def _auto_names(arms: list[Arm]) -> list[str]:
    """Names from the settings that differ between arms (``model``'s value alone), else
    ``run 1``, ``run 2`` ..."""
    keys = sorted({k for a in arms for k in a.labels})
    varying = [k for k in keys if len({repr(a.labels.get(k)) for a in arms}) > 1]
    if varying:
        names = [", ".join(str(a.labels.get(k)) if k in ("model", "arm", "method")
                           else f"{k}={a.labels.get(k)}" for k in varying) for a in arms]  # fmt: skip
        if len(set(names)) == len(names):
            return names
    return [f"run {i + 1}" for i in range(len(arms))]


def _collect(results: Sequence[Any], names: Sequence[str] | None) -> list[Arm]:
    if names is not None and len(names) != len(results):
        raise InputError(f"{len(names)} names for {len(results)} results")
    arms = []
    for i, r in enumerate(results):
        for a in as_arms(r, names[i] if names else ""):
            a.status = "complete" if getattr(r, "complete", True) else "failed"
            arms.append(a)
    if not names and not all(a.name for a in arms):
        for arm, name in zip(arms, _auto_names(arms), strict=True):
            arm.name = arm.name or name
    seen = [a.name for a in arms]
    dup = sorted({n for n in seen if seen.count(n) > 1})
    if dup:
        raise InputError(f"two compared runs are both named {dup[0]!r}: give names")
    if len(arms) < 2:
        raise InputError("a comparison needs at least two runs")
    return arms


def _common_units(arms: list[Arm], metric: str, allow_subset: bool) -> tuple[list[str], dict]:
    """The units every arm has for ``metric`` (refused, unless ``allow_subset``, when the arms'
    units differ) and how many of each arm's were left out."""
    sets = {a.name: set(a.units.loc[a.units["metric"] == metric, "unit"]) for a in arms}
    common = set.intersection(*sets.values())
    dropped = {n: len(s - common) for n, s in sets.items()}
    if any(dropped.values()) and not allow_subset:
        worst = max(dropped, key=lambda name: dropped[name])
        raise InputError(
            f"the runs are not on the same items: {worst} has {dropped[worst]} {metric} item(s) "
            f"that another run lacks ({len(common)} in common); compare on the common items "
            "with allow_subset="
        )
    first = arms[0].units
    order = first.loc[(first["metric"] == metric) & first["unit"].isin(common), "unit"]
    return list(order), dropped


def _wide(arms: list[Arm], metric: str, units: list[str]) -> dict[str, pd.DataFrame]:
    """``correct`` and ``status``, units x arms, and each unit's cluster."""
    frames = {}
    for a in arms:
        u = a.units[a.units["metric"] == metric].set_index("unit").loc[units]
        frames[a.name] = u
    correct = pd.DataFrame({n: f["correct"].to_numpy() for n, f in frames.items()}, index=units)
    status = pd.DataFrame({n: f["status"].to_numpy() for n, f in frames.items()}, index=units)
    cluster = next(iter(frames.values()))["cluster"].to_numpy()
    return {"correct": correct, "status": status, "cluster": cluster}


def _mean_estimate(x: np.ndarray, cluster: np.ndarray, spec: MetricSpec, alpha: float) -> dict:
    """A continuous score's mean with its cluster-robust (CR1) t interval on ``G − 1`` df,
    clipped to [0, 1]; no interval with fewer than 2 clusters or a clustered SE of 0."""
    sums, sizes = stats.cluster_totals(x, cluster)
    est = stats.cr1_mean(sums, sizes)
    mean, se, g = float(est.mean) if len(x) else math.nan, float(est.se), int(est.n_clusters)
    if g >= 2 and se > 0:
        t = float(sps.t.ppf(1 - alpha / 2, g - 1))
        lo, hi = max(0.0, mean - t * se), min(1.0, mean + t * se)
        how = f"clustered by {spec.cluster[:-1]} (CR1), t({g - 1})"
    else:
        lo = hi = math.nan
        how = "none (clustered SE is 0)" if g >= 2 else f"none ({g} {spec.cluster})"
    return {"n": len(x), "correct": math.nan, "estimate": mean, "ci_low": lo, "ci_high": hi,
            "ci_method": how, "n_clusters": g}  # fmt: skip


def _estimate(x: np.ndarray, cluster: np.ndarray, spec: MetricSpec, alpha: float) -> dict:
    if spec.continuous:
        return _mean_estimate(x, cluster, spec, alpha)
    n, k = len(x), int(x.sum())
    if spec.clustered:
        sums, sizes = stats.cluster_totals(x, cluster)
        ci = stats.clustered_proportion_interval(sums, sizes, alpha)
        how = {"cr1": f"clustered by {spec.cluster[:-1]}, t({ci.n_clusters - 1})",
               "few_clusters": f"Wilson, each of {ci.n_clusters} {spec.cluster} counted once",
               "zero_se": f"Wilson, each {spec.cluster[:-1]} counted once (clustered SE is 0)",
               "empty": "none"}[ci.method]  # fmt: skip
        return {"n": n, "correct": k, "estimate": ci.estimate, "ci_low": ci.low,
                "ci_high": ci.high, "ci_method": how, "n_clusters": ci.n_clusters}  # fmt: skip
    lo, hi = stats.wilson_interval(k, n, alpha)
    return {"n": n, "correct": k, "estimate": k / n if n else math.nan, "ci_low": lo,
            "ci_high": hi, "ci_method": "Wilson", "n_clusters": n}  # fmt: skip


def _estimates(w: dict, spec: MetricSpec, failures: str, alpha: float) -> list[dict]:
    rows = []
    for name in w["correct"].columns:
        x = w["correct"][name].to_numpy()
        st = w["status"][name].to_numpy()
        keep = ~np.isin(st, _BAD) if failures == "exclude" else np.ones(len(x), bool)
        rows.append({"metric": spec.key, "run": name,
                     **_estimate(x[keep], w["cluster"][keep], spec, alpha),
                     "failed": int((st == "failed").sum()),
                     "unparseable": int((st == "unparseable").sum()),
                     "ties": int((st == "tie").sum()), "excluded": int((~keep).sum())})  # fmt: skip
    return rows


def _binary_difference(x, y, alpha, power, detect) -> dict:
    n = len(x)
    b, c = int(((x == 1) & (y == 0)).sum()), int(((x == 0) & (y == 1)).sum())
    n11, n00 = int(((x == 1) & (y == 1)).sum()), int(((x == 0) & (y == 0)).sum())
    lo, hi = stats.paired_proportion_interval(n11, b, c, n00, alpha)
    psi = (b + c) / n if n else math.nan
    return {
        "difference": (b - c) / n if n else math.nan, "ci_low": lo, "ci_high": hi,
        "ci_method": "Tango score (paired)", "test": "exact McNemar",
        "p": stats.sign_test(b, c, "two-sided") if n else math.nan, "se": math.nan, "df": math.nan,
        "discordance": psi,
        "detectable": stats.mcnemar_detectable_difference(psi, n, alpha, power) if n else math.nan,
        "needed": (stats.mcnemar_items_needed(detect, psi, alpha, power)
                   if detect and n and psi == psi else None),
        "power_method": "McNemar, normal approximation (Connor 1987)",
        "run_only": b, "reference_only": c, "both_right": n11, "both_wrong": n00,
    }  # fmt: skip


def _clustered_difference(x, y, cluster, spec, alpha, power, detect) -> dict:
    d = x.astype(float) - y.astype(float)
    sums, sizes = stats.cluster_totals(d, cluster)
    r = stats.clustered_paired_difference(sums, sizes, alpha)
    za, zb = float(sps.norm.isf(alpha / 2)), float(sps.norm.ppf(power))
    detectable = (za + zb) * r.se if r.se > 0 else math.nan
    needed = (int(math.ceil(r.n_clusters * ((za + zb) * r.se / detect) ** 2))
              if detect and r.se > 0 else None)  # fmt: skip
    b, c = int((d > 0).sum()), int((d < 0).sum())
    # the outcomes lie in [0, 1], so a difference lies in [-1, 1]: with few clusters the t
    # interval can reach past that, and clipping to the possible values changes no coverage
    lo, hi = (float(np.clip(v, -1.0, 1.0)) for v in (r.low, r.high))
    # for a continuous score: ``run_only`` / ``reference_only`` are the rows where the run
    # scores higher / lower; ``both_right`` / ``both_wrong`` those where both score 1 / 0
    return {
        "difference": r.mean, "ci_low": lo, "ci_high": hi,
        "ci_method": (f"clustered by {spec.cluster[:-1]} (CR1), t({r.n_clusters - 1})"
                      if r.method == "cr1" else r.method),
        "test": ("paired t, clustered by " + spec.cluster[:-1]) if r.method == "cr1"
        else f"exact sign test on the {spec.cluster}",
        "p": r.p, "se": r.se, "df": r.df, "discordance": (b + c) / len(d) if len(d) else math.nan,
        "detectable": detectable, "needed": needed,
        "power_method": f"paired normal approximation at the clustered SE ({spec.cluster})",
        "run_only": b, "reference_only": c, "both_right": int(((x == 1) & (y == 1)).sum()),
        "both_wrong": int(((x == 0) & (y == 0)).sum()),
    }  # fmt: skip


def _differences(w, spec, ref, failures, alpha, power, detect) -> list[dict]:
    rows = []
    for name in w["correct"].columns:
        if name == ref:
            continue
        st = w["status"][[name, ref]].to_numpy()
        bad = np.isin(st, _BAD)
        keep = ~bad.any(axis=1) if failures == "exclude" else np.ones(len(st), bool)
        x = w["correct"][name].to_numpy()[keep]
        y = w["correct"][ref].to_numpy()[keep]
        if spec.clustered:
            got = _clustered_difference(x, y, w["cluster"][keep], spec, alpha, power, detect)
        else:
            got = _binary_difference(x, y, alpha, power, detect)
        rows.append({"metric": spec.key, "run": name, "reference": ref, "n": int(keep.sum()),
                     "n_clusters": len(set(w["cluster"][keep])), **got,
                     "failed_either": int(bad.any(axis=1).sum()),
                     "excluded": int((~keep).sum())})  # fmt: skip
    return rows


def _reference(est: list[dict], reference: str | None, names: list[str]) -> str:
    if reference is not None:
        if reference not in names:
            raise InputError(f"reference {reference!r} is not one of the runs: {', '.join(names)}")
        return reference
    best = max(range(len(est)), key=lambda i: (np.nan_to_num(est[i]["estimate"], nan=-1), -i))
    return est[best]["run"]


def _check_options(failures: str, alpha: float, power: float, detect: float | None) -> None:
    if failures not in FAILURES:
        raise InputError(f"failures= must be one of {', '.join(FAILURES)}, got {failures!r}")
    for name, value in (("alpha", alpha), ("power", power)):
        if not 0 < value < 1:
            raise InputError(f"{name}= must be between 0 and 1 (exclusive), got {value}")
    if detect is not None and not 0 < detect <= 1:
        raise InputError(f"detect= must be a difference in (0, 1], got {detect}")


def compare(
    results: Sequence[Any],
    reference: str | None = None,
    names: Sequence[str] | None = None,
    detect: float | None = None,
    alpha: float = 0.05,
    *,
    power: float = 0.8,
    allow_subset: bool = False,
    failures: str = "wrong",
) -> Comparison:
    """Compare runs on the same items, the items as the unit (see the module docstring).

    ``results``: results objects (``MalAlgoEvaluation``, anything with ``comparison_units()``),
    :class:`~.outcomes.Arm` or unit DataFrames; ``names`` name them (default: from the settings
    that differ between them, e.g. the model).  ``reference``: the name to compare every run
    with (default: per metric, the best).  ``detect``: a difference whose needed number of
    items to report.  Runs whose items differ are refused (:class:`~edueval.io.InputError`)
    unless ``allow_subset``: then every metric is compared on the items common to all runs.
    Nothing is written or printed."""
    _check_options(failures, alpha, power, detect)
    arms = _collect(results, names)
    commands = {getattr(r, "command", None) for r in results}
    names_ = [a.name for a in arms]
    all_metrics = list(dict.fromkeys(m for a in arms for m in a.metrics))
    shared = [m for m in all_metrics if all(m in a.metrics for a in arms)]
    order = [m for m in METRICS if m in shared] + [m for m in shared if m not in METRICS]
    if not order:
        raise InputError("the runs share no metric: " + ", ".join(all_metrics))
    est_rows, diff_rows, refs, dropped, specs = [], [], {}, {}, {}
    for m in order:
        units, dropped[m] = _common_units(arms, m, allow_subset)
        w = _wide(arms, m, units)
        spec = metric_spec(m, clustered=len(set(w["cluster"])) < len(units))
        specs[m] = spec
        est = _estimates(w, spec, failures, alpha)
        refs[m] = _reference(est, reference, names_)
        diffs = _differences(w, spec, refs[m], failures, alpha, power, detect)
        holm: np.ndarray | list[float] = stats.holm([d["p"] for d in diffs]) if diffs else []
        for d, ph in zip(diffs, holm, strict=True):
            d["p_holm"] = float(ph)
            d["significant"] = bool(ph < alpha)
        est_rows += est
        diff_rows += diffs
    return Comparison.build(
        arms=arms, estimates=est_rows, differences=diff_rows, reference=refs, specs=specs,
        dropped=dropped, skipped=[m for m in all_metrics if m not in shared], alpha=alpha,
        power=power, detect=detect, failures=failures, allow_subset=allow_subset,
        fixed_reference=reference is not None,
        protocol=commands.pop() if len(commands) == 1 else None,
        statuses={a.name: a.status for a in arms},
    )  # fmt: skip
