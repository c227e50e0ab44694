"""The results object of :func:`edueval.compare.compare`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..results import RunResults
from .outcomes import Arm, MetricSpec

__all__ = ["Comparison"]

_EST_COLS = ["metric", "run", "n", "correct", "estimate", "ci_low", "ci_high", "ci_method",
             "n_clusters", "failed", "unparseable", "ties", "excluded"]  # fmt: skip
_DIFF_COLS = ["metric", "run", "reference", "n", "n_clusters", "difference", "ci_low", "ci_high",
              "ci_method", "test", "p", "p_holm", "significant", "se", "df", "run_only",
              "reference_only", "both_right", "both_wrong", "discordance", "failed_either",
              "excluded", "detectable", "needed", "power_method"]  # fmt: skip
_DISC_COLS = ["metric", "run", "reference", "n", "both_right", "run_only", "reference_only",
              "both_wrong", "discordance"]  # fmt: skip


def _f(x: Any, digits: int = 3, signed: bool = False) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


@dataclass
class Comparison(RunResults):
    """Runs compared on the same items (:func:`~edueval.compare.compare`).

    ``estimates``: one row per metric and run (estimate, 95% interval and how it was computed,
    failed / unparseable / tied units, units excluded).  ``differences``: one row per metric and
    non-reference run: the paired difference from ``reference[metric]`` with its interval, the
    test and its p-value, Holm's adjusted p-value over the metric's comparisons, the discordant
    counts (``run_only``: units the run gets right and the reference wrong; ``reference_only``,
    the reverse), the smallest difference detectable with ``power`` at ``alpha``
    (``detectable``) and, with ``detect``, the items (questions, for clustered metrics) needed
    to detect it (``needed``).  ``runs``: the runs and the settings that differ between them.
    ``dropped``: per metric, units of each run left out with ``allow_subset``."""

    estimates: pd.DataFrame
    differences: pd.DataFrame
    runs: pd.DataFrame
    reference: dict[str, str]
    metrics: dict[str, MetricSpec]
    alpha: float
    power: float
    detect: float | None
    failures: str
    allow_subset: bool
    fixed_reference: bool
    dropped: dict[str, dict[str, int]] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    #: remarks on the runs compared (e.g. inputs that differ, with ``allow_subset``)
    notes: list[str] = field(default_factory=list)
    #: the command whose runs are compared (``malalgo run`` ...), when the results tell
    protocol: str | None = None
    #: each run's status, ``complete`` or ``failed`` (past its failure budget)
    statuses: dict[str, str] = field(default_factory=dict)

    _writer = "edueval.compare.pipeline:save_comparison"

    def headline(self) -> dict[str, Any]:
        """``compare``'s results.json: :meth:`as_dict`, ``notes`` and ``detectable``."""
        return {**self.as_dict(), "notes": self.notes, "detectable": self.detectable_lines()}

    @classmethod
    def build(cls, *, arms: list[Arm], estimates: list[dict], differences: list[dict],
              specs: dict[str, MetricSpec], **kw: Any) -> Comparison:  # fmt: skip
        keys = sorted({k for a in arms for k in a.labels})
        varying = [k for k in keys if len({repr(a.labels.get(k)) for a in arms}) > 1]
        runs = pd.DataFrame([{"run": a.name, **{k: a.labels.get(k) for k in varying}}
                             for a in arms])  # fmt: skip
        return cls(estimates=pd.DataFrame(estimates, columns=_EST_COLS),
                   differences=pd.DataFrame(differences, columns=_DIFF_COLS), runs=runs,
                   metrics=specs, **kw)  # fmt: skip

    @property
    def names(self) -> list[str]:
        return list(self.runs["run"])

    @property
    def discordant(self) -> pd.DataFrame:
        """The 2x2 table of each comparison: both right, only the run, only the reference,
        both wrong (for clustered metrics, over their rows)."""
        return self.differences[_DISC_COLS].copy()

    def leaderboard(self, metric: str) -> pd.DataFrame:
        """One metric's runs, best first, with their differences from the reference."""
        est = self.estimates[self.estimates["metric"] == metric]
        diff = self.differences[self.differences["metric"] == metric]
        cols = ["run", "difference", "ci_low", "ci_high", "p", "p_holm", "run_only",
                "reference_only", "detectable", "needed"]  # fmt: skip
        out = est.merge(diff[cols].rename(columns={"ci_low": "diff_low", "ci_high": "diff_high"}),
                        on="run", how="left")  # fmt: skip
        return out.sort_values("estimate", ascending=False, kind="stable").reset_index(drop=True)

    def to_frame(self) -> pd.DataFrame:
        """Tidy rows, one per metric and run: the estimate and interval, then the difference
        from the reference (empty on the reference's own row) and its test."""
        diff = self.differences.drop(columns=["n", "n_clusters"]).rename(
            columns={"ci_low": "diff_ci_low", "ci_high": "diff_ci_high",
                     "ci_method": "diff_ci_method", "excluded": "excluded_pairwise"})  # fmt: skip
        out = self.estimates.merge(diff, on=["metric", "run"], how="left")
        out["reference"] = out["metric"].map(self.reference)
        return out

    def as_dict(self) -> dict[str, Any]:
        """The numbers as ``results.json`` holds them."""
        return {
            "runs": self.runs.to_dict("records"),
            "reference": self.reference,
            "reference_rule": "given" if self.fixed_reference else "best per metric",
            "alpha": self.alpha, "power": self.power, "detect": self.detect,
            "failures": self.failures, "allow_subset": self.allow_subset,
            "dropped": self.dropped, "skipped_metrics": self.skipped,
            "metrics": {k: {"label": s.label, "clustered": s.clustered, "unit": s.unit,
                            "cluster": s.cluster} for k, s in self.metrics.items()},
            "estimates": self.estimates.to_dict("records"),
            "differences": self.differences.to_dict("records"),
        }  # fmt: skip

    def failure_note(self) -> str:
        """How failed calls and unparseable answers were treated."""
        if self.failures == "exclude":
            return (
                "Failed calls and unparseable answers are left out: of a run's estimate "
                "(its own), of a comparison (where either run failed); counted as 'excluded'."
            )
        f1 = any(s.continuous for s in self.metrics.values())
        return ("Failed calls and unparseable answers count as wrong answers (as the protocol "
                "scores them" + ("; a failed call or an empty reply scores F1 0" if f1 else "")
                + ") and are counted per run ('failed', 'unparseable'"
                + (": an empty reply" if f1 else "") + ") and per comparison "
                "('failed_either').")  # fmt: skip

    def detectable_lines(self) -> list[str]:
        """One line per comparison: the smallest difference detectable with ``power``."""
        lines = []
        for r in self.differences.to_dict("records"):
            spec = self.metrics[r["metric"]]
            unit = spec.cluster if spec.clustered else spec.unit
            det = r["detectable"]
            what = (
                f"a difference of {_f(det)} is detected"
                if det == det and det is not None
                else "no difference within the observed discordance is detected"
            )
            line = (f"{r['metric']} {r['run']} vs {r['reference']}: with {r['n_clusters']} "
                    f"{unit}, {what} with {self.power:.0%} power at alpha {self.alpha} "
                    f"({r['power_method']}; discordance {_f(r['discordance'])})")  # fmt: skip
            if self.detect and r["needed"] is not None and r["needed"] == r["needed"]:
                line += f"; {self.detect} needs {int(r['needed'])} {unit}"
            lines.append(line)
        return lines

    def summary(self) -> str:
        """A printable leaderboard per metric, then how failures were treated."""
        parts = [f"Paired comparison of {len(self.runs)} runs (the items as the unit; "
                 f"alpha {self.alpha}, Holm over each metric's comparisons)"]  # fmt: skip
        if len(self.runs.columns) > 1:
            parts.append(self.runs.to_string(index=False))
        for m, spec in self.metrics.items():
            board = self.leaderboard(m)
            rows = [{"run": r["run"] + (" (ref)" if r["run"] == self.reference[m] else ""),
                     "n": r["n"], "estimate": _f(r["estimate"]),
                     "95% CI": f"[{_f(r['ci_low'])}, {_f(r['ci_high'])}]",
                     "diff": _f(r["difference"], signed=True),
                     "diff 95% CI": ("" if r["run"] == self.reference[m] else
                                     f"[{_f(r['diff_low'], signed=True)}, "
                                     f"{_f(r['diff_high'], signed=True)}]"),
                     "b/c": ("" if r["run"] == self.reference[m] else
                             f"{int(r['run_only'])}/{int(r['reference_only'])}"),
                     "p (Holm)": _f(r["p_holm"], 4),
                     "failed": int(r["failed"]), "unparseable": int(r["unparseable"])}
                    for r in board.to_dict("records")]  # fmt: skip
            parts.append(f"\n{spec.label} [{m}] (reference {self.reference[m]}):")
            parts.append(pd.DataFrame(rows).to_string(index=False))
        parts.append("\n" + self.failure_note())
        if self.skipped:
            parts.append(f"Not compared (not in every run): {', '.join(self.skipped)}.")
        if any(any(v.values()) for v in self.dropped.values()):
            parts.append(f"Items left out (allow_subset): {self.dropped}.")
        return "\n".join(parts)
