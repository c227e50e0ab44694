"""Problem families, grouped by topic; :data:`ALL` lists every family in a fixed order."""

from __future__ import annotations

from ..model import Family, Steps
from . import data, decimals, expressions, fraction_ops, geometry, percents, whole_numbers

ALL: tuple[Family, ...] = (
    *whole_numbers.FAMILIES,
    *fraction_ops.FAMILIES,
    *decimals.FAMILIES,
    *percents.FAMILIES,
    *expressions.FAMILIES,
    *geometry.FAMILIES,
    *data.FAMILIES,
)

#: the families whose procedure is written as steps, so that mal-rules compose (:mod:`..compose`)
STEPS: tuple[Steps, ...] = (*whole_numbers.STEPS, *expressions.STEPS, *geometry.STEPS)

__all__ = ["ALL", "STEPS"]
