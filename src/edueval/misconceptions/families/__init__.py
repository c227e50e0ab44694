"""Problem families, grouped by topic; :data:`ALL` lists every family plain generation draws, in a
fixed order, and :data:`VARIANT_FAMILIES` the families of question variants."""

from __future__ import annotations

from ..model import Family, Steps, Variants
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

#: families written as question variants over the same numbers (:mod:`..variants`); plain
#: generation does not draw them, so they are not in :data:`ALL`
VARIANT_FAMILIES: tuple[Family, ...] = (
    *percents.VARIANT_FAMILIES,
    *expressions.VARIANT_FAMILIES,
    *geometry.VARIANT_FAMILIES,
)
VARIANTS: tuple[Variants, ...] = (
    *percents.VARIANTS,
    *expressions.VARIANTS,
    *geometry.VARIANTS,
)

__all__ = ["ALL", "STEPS", "VARIANTS", "VARIANT_FAMILIES"]
