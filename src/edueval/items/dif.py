"""Differential item functioning (DIF) between a reference and a focal group of students.

Both methods compare students of the two groups who have the same **total score** (the sum of
their 0/1 scores over the items they answered, the studied item included, as Holland & Thayer
1988 match); for each item only the students who answered it enter.  With an incomplete design
(blank cells) totals over different item sets are compared as they are -- prefer complete data.

**Mantel-Haenszel** (Holland & Thayer 1988).  In stratum ``k`` (one total score) ``A_k, B_k`` are
the reference group's right and wrong answers, ``C_k, D_k`` the focal group's, ``N_k`` the
stratum's size.  The common odds ratio is ``alpha_MH = sum(A_k D_k / N_k) / sum(B_k C_k / N_k)``
and **MH D-DIF = -2.35 ln(alpha_MH)** (the ETS delta scale): negative when the item is harder for
the focal group than for reference students of the same total.  Its standard error is 2.35 times
the Robins-Breslow-Greenland (1986) standard error of ``ln alpha_MH`` (the Phillips-Holland 1987
estimator).  The MH chi-square, with continuity correction, is
``(|sum A_k - sum E(A_k)| - 1/2)^2 / sum Var(A_k)`` on 1 df.  Strata with one group only carry no
information and drop out of every sum.  These are the quantities of statsmodels'
``StratifiedTable`` (tables ``[[A, B], [C, D]]``), computed here for all items at once.

**ETS categories** (Dorans & Holland 1993; Zwick 2012, ETS RR-12-08), at the 5% level:

* **A** (negligible): the MH chi-square is not significant (p >= 0.05) or |D| < 1;
* **C** (large): |D| >= 1.5 and |D| significantly greater than 1, tested one-sided:
  (|D| - 1) / SE(D) > 1.645;
* **B** (moderate): every other item.

``favours`` names the group the item favours (``reference`` when D < 0).

**Logistic regression** (Swaminathan & Rogers 1990; Zumbo 1999), per item on the students who
answered it, with statsmodels' ``Logit``: M0 ``y ~ total``, M1 ``+ group``, M2 ``+ group x
total`` (``group`` 1 for the focal group).  Likelihood-ratio tests: **uniform** DIF M1 vs M0
(1 df), **non-uniform** M2 vs M1 (1 df), and **any** DIF M2 vs M0 (2 df); the effect size is the
gain in Nagelkerke R^2 from M0 to M2 (Zumbo 1999; Jodoin & Gierl 2001 call < 0.035 negligible).
A fit that does not converge (perfect separation) leaves NaN.

**Holm** (1979) adjusts each family of p-values (MH; each LR test) across the items
(``p_*_holm``); ``flag`` marks items with ETS category B or C or a Holm-adjusted LR p (2 df)
below ``level``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..io import InputError
from ..results import RunResults

__all__ = ["DIFResult", "dif", "ets_category", "logistic_dif", "mantel_haenszel", "split_groups"]

#: The MH D-DIF scale factor (ETS delta = 4/1.7 logit, rounded to 2.35 as ETS reports).
DELTA = -2.35


def split_groups(
    group: pd.Series, *, focal: object | None = None, reference: object | None = None
) -> tuple[np.ndarray, str, str]:
    """``group`` (one value per student; blank = not in either group) as codes 0 = reference,
    1 = focal, -1 = neither, with the two groups' names.  Without ``focal``, the smaller group is
    focal (ties: the later in sorted order); more than two groups need ``focal`` and
    ``reference``."""
    text = group.astype("string").str.strip()
    values = text.dropna()
    values = values[values != ""]
    names = sorted(values.unique(), key=str)
    if len(names) < 2:
        raise InputError(f"DIF needs two groups; the group column has {len(names)} value(s)")
    given = [str(v) for v in (focal, reference) if v is not None]
    for v in given:
        if v not in names:
            raise InputError(f"no student is in group {v!r}; the groups are "
                             + ", ".join(map(repr, names)))  # fmt: skip
    if len(names) > 2 and (focal is None or reference is None):
        raise InputError(
            f"the group column has {len(names)} values ({', '.join(map(repr, names[:6]))}); "
            "name the two to compare with focal= and reference="
        )
    counts = values.value_counts()
    if focal is None and reference is None:  # the smaller group; a tie: the later name
        focal = min(reversed(names), key=lambda name: counts[name])
    if focal is None:
        focal = next(name for name in names if name != str(reference))
    if reference is None:
        reference = next(name for name in names if name != str(focal))
    focal, reference = str(focal), str(reference)
    if reference == focal:
        raise InputError(f"focal= and reference= name the same group {focal!r}")
    codes = np.full(len(group), -1, dtype=np.int8)
    codes[(text == reference).fillna(False).to_numpy(dtype=bool)] = 0
    codes[(text == focal).fillna(False).to_numpy(dtype=bool)] = 1
    return codes, reference, focal


def _check_binary(scores: pd.DataFrame) -> np.ndarray:
    x = scores.to_numpy(dtype=float)
    bad = ~np.isnan(x) & ~np.isin(x, (0.0, 1.0))
    if bad.any():
        s, i = np.argwhere(bad)[0]
        raise InputError(f"DIF takes 0/1 scores; student {scores.index[s]!r} has {x[s, i]:g} "
                         f"on item {scores.columns[i]!r}")  # fmt: skip
    return x


def _counts(x: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """``[item, stratum, group, right/wrong]`` counts over total-score strata."""
    total = np.nansum(x, axis=1)
    strata, s_idx = np.unique(total, return_inverse=True)
    n, k = x.shape
    out = np.zeros((k, len(strata), 2, 2))
    rows, cols = np.nonzero(~np.isnan(x) & (codes[:, None] >= 0))
    right = (x[rows, cols] == 0).astype(int)  # 0 = right, 1 = wrong
    np.add.at(out, (cols, s_idx[rows], codes[rows], right), 1.0)
    return out


def mantel_haenszel(x: np.ndarray, codes: np.ndarray) -> pd.DataFrame:
    """MH statistics of every item (columns of the 0/1 matrix ``x``, NaN = not administered)
    for groups ``codes`` (0 reference, 1 focal, -1 neither); see the module docstring."""
    from scipy.stats import chi2, norm

    t = _counts(x, codes)
    a, b, c, d = t[..., 0, 0], t[..., 0, 1], t[..., 1, 0], t[..., 1, 1]
    n = a + b + c + d
    both = ((a + b) > 0) & ((c + d) > 0)  # strata with both groups
    nn = np.where(both, n, 1.0)
    ad, bc = np.where(both, a * d / nn, 0), np.where(both, b * c / nn, 0)
    r, s = ad.sum(axis=1), bc.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        odds = r / s
        p_, q_ = (a + d) / nn, (b + c) / nn
        var = (np.where(both, p_ * a * d / nn, 0).sum(axis=1) / r**2
               + np.where(both, p_ * b * c / nn + q_ * a * d / nn, 0).sum(axis=1) / (r * s)
               + np.where(both, q_ * b * c / nn, 0).sum(axis=1) / s**2) / 2  # fmt: skip
        expected = np.where(both, (a + b) * (a + c) / nn, 0).sum(axis=1)
        v_a = np.where(both & (n > 1), (a + b) * (c + d) * (a + c) * (b + d)
                       / (nn**2 * np.maximum(nn - 1, 1)), 0).sum(axis=1)  # fmt: skip
        a_both = np.where(both, a, 0).sum(axis=1)
        stat = (np.abs(a_both - expected) - 0.5) ** 2 / v_a
        d_dif = DELTA * np.log(odds)
        se = -DELTA * np.sqrt(var)
    p = chi2.sf(stat, 1)
    z_c = (np.abs(d_dif) - 1.0) / se
    return pd.DataFrame({
        "n_reference": t[:, :, 0, :].sum(axis=(1, 2)).astype(int),
        "n_focal": t[:, :, 1, :].sum(axis=(1, 2)).astype(int),
        "n_strata": both.sum(axis=1),
        "alpha_MH": odds, "MH_D_DIF": d_dif, "SE_D": se, "MH_chi2": stat, "p_MH": p,
        "p_C": norm.sf(z_c),
    })  # fmt: skip


def ets_category(d_dif: float, p_mh: float, se: float, level: float = 0.05) -> str:
    """The ETS category of one item (module docstring); '' when D is undefined."""
    from scipy.stats import norm

    if not np.isfinite(d_dif) or not np.isfinite(p_mh):
        return ""
    if p_mh >= level or abs(d_dif) < 1.0:
        return "A"
    if abs(d_dif) >= 1.5 and se > 0 and (abs(d_dif) - 1.0) / se > norm.isf(level):
        return "C"
    return "B"


def _nagelkerke(ll: float, ll0: float, n: int) -> float:
    return (1 - np.exp(2 * (ll0 - ll) / n)) / (1 - np.exp(2 * ll0 / n))


def _fit(y: np.ndarray, design: np.ndarray) -> float:
    """Log-likelihood of a logistic regression (NaN when it does not converge)."""
    import statsmodels.api as sm
    from statsmodels.tools.sm_exceptions import ConvergenceWarning, PerfectSeparationWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        warnings.simplefilter("error", PerfectSeparationWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            res = sm.Logit(y, design).fit(disp=0, method="newton", maxiter=100)
        except (ConvergenceWarning, PerfectSeparationWarning, np.linalg.LinAlgError, ValueError):
            return float("nan")
        except Exception as exc:  # statsmodels' PerfectSeparationError in older versions
            if type(exc).__name__ == "PerfectSeparationError":
                return float("nan")
            raise
    return float(res.llf) if res.mle_retvals.get("converged", True) else float("nan")


def logistic_dif(x: np.ndarray, codes: np.ndarray) -> pd.DataFrame:
    """Logistic-regression DIF of every item (module docstring)."""
    from scipy.stats import chi2

    total = np.nansum(x, axis=1)
    rows = []
    for j in range(x.shape[1]):
        keep = ~np.isnan(x[:, j]) & (codes >= 0)
        y, t, g = x[keep, j], total[keep], codes[keep].astype(float)
        n = int(keep.sum())
        ones = np.ones(n)
        p0 = y.mean() if n else float("nan")  # the intercept-only model, in closed form
        ll0 = n * (p0 * np.log(p0) + (1 - p0) * np.log(1 - p0)) if 0 < p0 < 1 else float("nan")
        lls = [_fit(y, np.column_stack(cols)) if np.isfinite(ll0) else float("nan")
               for cols in ((ones, t), (ones, t, g), (ones, t, g, g * t))]  # fmt: skip
        uni, non, any_ = 2 * (lls[1] - lls[0]), 2 * (lls[2] - lls[1]), 2 * (lls[2] - lls[0])
        rows.append({
            "LR_uniform": uni, "p_uniform": chi2.sf(uni, 1),
            "LR_nonuniform": non, "p_nonuniform": chi2.sf(non, 1),
            "LR_dif": any_, "p_dif": chi2.sf(any_, 2),
            "delta_R2": _nagelkerke(lls[2], ll0, n) - _nagelkerke(lls[0], ll0, n),
        })  # fmt: skip
    return pd.DataFrame(rows)


def _holm(p: pd.Series) -> np.ndarray:
    from statsmodels.stats.multitest import multipletests

    v = p.to_numpy(dtype=float)
    out = np.full(len(v), np.nan)
    ok = np.isfinite(v)
    if ok.any():
        out[ok] = multipletests(v[ok], method="holm")[1]
    return out


@dataclass
class DIFResult(RunResults):
    """Results of :func:`dif`: ``items`` (one row per item: counts, the MH statistics, the ETS
    category, the LR tests, Holm-adjusted p-values, ``flag``) and the groups compared."""

    items: pd.DataFrame
    reference: str
    focal: str
    n_reference: int
    n_focal: int
    n_excluded: int
    level: float
    methods: tuple[str, ...]

    _writer = "edueval.items.dif_pipeline:save_dif"

    def headline(self) -> dict:
        return self.as_dict()

    @property
    def flagged(self) -> list[str]:
        return [str(i) for i in self.items.loc[self.items["flag"], "item"]]

    def as_dict(self) -> dict:
        ets = self.items["ETS"].value_counts() if "ETS" in self.items else pd.Series(dtype=int)
        return {
            "reference": self.reference, "focal": self.focal,
            "n_reference": self.n_reference, "n_focal": self.n_focal,
            "n_excluded": self.n_excluded, "n_items": len(self.items), "level": self.level,
            "methods": list(self.methods),
            "ets": {c: int(ets.get(c, 0)) for c in ("A", "B", "C")} if "mh" in self.methods
            else None,
            "flagged": self.flagged,
        }  # fmt: skip

    def to_frame(self) -> pd.DataFrame:
        """Tidy rows ``item, measure, value``."""
        return self.items.melt(id_vars=["item"], var_name="measure", value_name="value")

    def summary(self) -> str:
        d = self.as_dict()
        lines = [f"DIF: focal {self.focal!r} ({self.n_focal} students) vs reference "
                 f"{self.reference!r} ({self.n_reference}); {len(self.items)} items"]  # fmt: skip
        if d["ets"] is not None:
            lines.append("ETS categories: " + ", ".join(f"{k} {v}" for k, v in d["ets"].items()))
        lines.append(f"flagged: {', '.join(self.flagged) if self.flagged else 'none'}")
        return "\n".join(lines)


def dif(
    scores: pd.DataFrame,
    group: pd.Series | Sequence[object],
    *,
    focal: object | None = None,
    reference: object | None = None,
    methods: Sequence[str] = ("mh", "lr"),
    level: float = 0.05,
) -> DIFResult:
    """DIF of every item of a wide 0/1 score frame (:func:`~.scores.read_scores`) between two
    groups of students.  ``group`` holds one value per row of ``scores``, or is a Series indexed
    by student id, aligned to ``scores`` (a student it lacks is in neither group).  See the
    module docstring."""
    methods = tuple(m.lower() for m in methods)
    unknown = [m for m in methods if m not in ("mh", "lr")]
    if unknown or not methods:
        raise ValueError(f"methods= takes 'mh' and/or 'lr', got {list(methods)!r}")
    if not 0 < level < 1:
        raise ValueError(f"level= must be between 0 and 1, got {level!r}")
    if isinstance(group, pd.Series) and scores.index.isin(group.index).any():
        series = group.reindex(scores.index)  # by student id; one absent is in no group
    else:  # positional: one value per row of scores
        series = pd.Series(list(group), dtype=object)
    if len(series) != len(scores):
        raise ValueError(f"group has {len(series)} values for {len(scores)} students")
    codes, ref, foc = split_groups(series.reset_index(drop=True), focal=focal, reference=reference)
    x = _check_binary(scores)
    table = pd.DataFrame({"item": scores.columns.to_numpy(dtype=object)})
    flag = np.zeros(len(table), dtype=bool)
    if "mh" in methods:
        mh = mantel_haenszel(x, codes)
        table = pd.concat([table, mh.drop(columns="p_C")], axis=1)
        table["p_MH_holm"] = _holm(table["p_MH"])
        table["ETS"] = [ets_category(dd, pp, ss, level) for dd, pp, ss in
                        zip(mh["MH_D_DIF"], mh["p_MH"], mh["SE_D"], strict=True)]  # fmt: skip
        table["favours"] = np.where(mh["MH_D_DIF"] < 0, "reference",
                                    np.where(mh["MH_D_DIF"] > 0, "focal", ""))  # fmt: skip
        flag |= table["ETS"].isin(["B", "C"]).to_numpy()
    if "lr" in methods:
        lr = logistic_dif(x, codes)
        for col in ("p_uniform", "p_nonuniform", "p_dif"):
            lr[col + "_holm"] = _holm(lr[col])
        table = pd.concat([table, lr], axis=1)
        flag |= (table["p_dif_holm"] < level).to_numpy()
    table["flag"] = flag
    return DIFResult(table, ref, foc, int((codes == 0).sum()), int((codes == 1).sum()),
                     int((codes < 0).sum()), level, methods)  # fmt: skip
