"""Problem families, grouped by topic; :data:`ALL` lists every family in a fixed order."""

from __future__ import annotations

from ..model import Family
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

__all__ = ["ALL"]
