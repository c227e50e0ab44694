"""Mean, median and range of a small data set given in unsorted order.

The data are listed unsorted on purpose: a student who does not sort takes the middle *listed*
value as the median and the first and last *listed* values as the extremes. The generator makes
sure those differ from the sorted ones.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..model import Family, Params, RuleImpl
from ._util import pick

_CONTEXTS = (
    "A team scored these points in its last {n} games: {data}.",
    "The numbers of books read by {n} students last month were {data}.",
    "The daily high temperatures, in °C, over {n} days were {data}.",
    "{n} plants grew these heights, in centimeters: {data}.",
)


def _data(rng: np.random.Generator, n: int) -> list[int]:
    """``n`` distinct values whose listed middle, first and last are not the sorted ones."""
    while True:
        values = [int(v) for v in rng.choice(np.arange(2, 41), size=n, replace=False)]
        s = sorted(values)
        ends_ok = abs(values[-1] - values[0]) != s[-1] - s[0]
        if values[n // 2] != s[n // 2] and ends_ok:
            return values


def _data_text(p: Params) -> str:
    return _CONTEXTS[p["context"]].format(n=len(p["data"]), data=", ".join(map(str, p["data"])))


def _sorted_text(p: Params) -> str:
    return ", ".join(map(str, sorted(p["data"])))


def _median(p: Params) -> Fraction:
    s = sorted(p["data"])
    return Fraction(s[len(s) // 2])


def _mean(p: Params) -> Fraction:
    return Fraction(sum(p["data"]), len(p["data"]))


def _midrange(p: Params) -> Fraction:
    return Fraction(min(p["data"]) + max(p["data"]), 2)


# --- mean or median -------------------------------------------------------------------------------


def _center_sample(rng: np.random.Generator, grade: int) -> Params:
    n = int(pick(rng, (5, 7)))
    stat = "median" if rng.random() < 0.5 else "mean"
    while True:
        p = {"data": _data(rng, n), "stat": stat, "context": int(rng.integers(len(_CONTEXTS)))}
        if (_mean(p) * 10).denominator == 1:  # the mean has at most one decimal place
            return p


def _center_question(p: Params) -> str:
    return _data_text(p) + f" What is the {p['stat']} of the data?"


def _data_steps(values: list[int], expr: str) -> str:
    """The words every data rationale shares; only the numbers differ."""
    return f"Take the values in the order {', '.join(map(str, values))} and compute {expr}."


def _mean_steps(p: Params) -> str:
    d = p["data"]
    return _data_steps(d, f"{sum(d)} ÷ {len(d)}")


def _median_steps(p: Params, values: list[int]) -> str:
    return _data_steps(values, f"the value in position {len(values) // 2 + 1}")


def _center_explain(p: Params) -> str:
    if p["stat"] == "median":
        return _median_steps(p, sorted(p["data"]))
    return _mean_steps(p)


def _no_sort(p: Params) -> Fraction | None:
    return Fraction(p["data"][len(p["data"]) // 2]) if p["stat"] == "median" else None


def _no_sort_explain(p: Params) -> str:
    return _median_steps(p, p["data"])


def _swap_explain(p: Params) -> str:
    return _mean_steps(p) if p["stat"] == "median" else _median_steps(p, sorted(p["data"]))


def _midrange_explain(p: Params) -> str:
    lo, hi = min(p["data"]), max(p["data"])
    return _data_steps(sorted(p["data"]), f"({lo} + {hi}) ÷ 2")


def _mean_n_minus_one(p: Params) -> Fraction | None:
    if p["stat"] != "mean":
        return None
    v = Fraction(sum(p["data"]), len(p["data"]) - 1)
    return v if (v * 10**6).denominator == 1 else None  # a value we can write exactly


def _sum_explain(p: Params) -> str:
    d = p["data"]
    return _data_steps(d, " + ".join(map(str, d)))


def _position_explain(p: Params) -> str:
    d = sorted(p["data"])
    return _data_steps(d, f"({len(d)} + 1) ÷ 2")


def _minus_one_explain(p: Params) -> str:
    d = p["data"]
    return _data_steps(d, f"{sum(d)} ÷ {len(d) - 1}")


CENTER = Family(
    id="data_center",
    name="Mean or median of a data set",
    content="Data Analysis",
    grades=(6,),
    dok=2,
    kind="decimal",
    sample=_center_sample,
    question=_center_question,
    solve=lambda p: _median(p) if p["stat"] == "median" else _mean(p),
    explain=_center_explain,
    rules={
        "no_sorting": RuleImpl(_no_sort, _no_sort_explain),
        "mean_median_confusion": RuleImpl(
            lambda p: _mean(p) if p["stat"] == "median" else _median(p), _swap_explain
        ),
        "midrange_as_center": RuleImpl(_midrange, _midrange_explain),
        "sum_without_dividing": RuleImpl(
            lambda p: sum(p["data"]) if p["stat"] == "mean" else None, _sum_explain
        ),
        "median_position_as_value": RuleImpl(
            lambda p: Fraction(len(p["data"]) + 1, 2) if p["stat"] == "median" else None,
            _position_explain,
        ),
        "divide_by_one_less": RuleImpl(_mean_n_minus_one, _minus_one_explain),
    },
    difficulty=0.1,
)

# --- range ----------------------------------------------------------------------------------------


def _range_sample(rng: np.random.Generator, grade: int) -> Params:
    n = int(pick(rng, (5, 6, 7)))
    return {"data": _data(rng, n), "context": int(rng.integers(len(_CONTEXTS)))}


def _range_explain(p: Params) -> str:
    return _data_steps(p["data"], f"{max(p['data'])} − {min(p['data'])}")


def _range_no_sort_explain(p: Params) -> str:
    d = p["data"]
    return _data_steps(d, f"{max(d[0], d[-1])} − {min(d[0], d[-1])}")


def _largest_explain(p: Params) -> str:
    return _data_steps(p["data"], f"{max(p['data'])} − 0")


def _fencepost_explain(p: Params) -> str:
    return _data_steps(p["data"], f"{max(p['data'])} − {min(p['data'])} + 1")


def _count_explain(p: Params) -> str:
    d = p["data"]
    return _data_steps(d, " + ".join("1" for _ in d))


def _extremes_sum_explain(p: Params) -> str:
    return _data_steps(p["data"], f"{max(p['data'])} + {min(p['data'])}")


def _exclusive_explain(p: Params) -> str:
    return _data_steps(p["data"], f"{max(p['data'])} − {min(p['data'])} − 1")


RANGE = Family(
    id="data_range",
    name="Range of a data set",
    content="Data Analysis",
    grades=(6,),
    dok=1,
    kind="int",
    sample=_range_sample,
    question=lambda p: _data_text(p) + " What is the range of the data?",
    solve=lambda p: max(p["data"]) - min(p["data"]),
    explain=_range_explain,
    rules={
        "no_sorting": RuleImpl(lambda p: abs(p["data"][-1] - p["data"][0]), _range_no_sort_explain),
        "range_as_largest": RuleImpl(lambda p: max(p["data"]), _largest_explain),
        "fencepost_range": RuleImpl(
            lambda p: max(p["data"]) - min(p["data"]) + 1, _fencepost_explain
        ),
        "count_as_range": RuleImpl(lambda p: len(p["data"]), _count_explain),
        "add_the_extremes": RuleImpl(
            lambda p: max(p["data"]) + min(p["data"]), _extremes_sum_explain
        ),
        "range_between_exclusive": RuleImpl(
            lambda p: max(p["data"]) - min(p["data"]) - 1, _exclusive_explain
        ),
    },
    difficulty=-0.3,
)

FAMILIES = (CENTER, RANGE)

__all__ = ["FAMILIES"]
