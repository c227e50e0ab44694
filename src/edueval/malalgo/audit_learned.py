"""The audit's learned readers and its per-family tables (issue 34).

* **Tree ensemble** (``tree ensemble: choices`` / ``tree ensemble: all``): a gradient-boosted
  classifier (scikit-learn's ``HistGradientBoostingClassifier``) on the per-choice structural
  features of :func:`edueval.misconceptions.key_cues.feature_grids` - value ranks, distances and
  arithmetic relations, choice-text similarity, rationale similarity to the other three (character
  and 3-gram), shared numbers, lengths - plus the family when the file has one, cross-validated
  in folds of whole questions; its pick is the option with the highest held-out probability.
  Unlike the conditional logit it represents interactions (family × feature), which is where
  per-family cues hide.  The same readers filter ``malalgo generate``'s items
  (:mod:`edueval.misconceptions.adversarial`), so an audit of one's own bank asks the generator's
  question of it.
* **By family**: for the similarity cues and the tree ensembles, the share of each family's
  questions where they pick the key, with Wilson 95% intervals; and the **key's value rank**:
  per family the counts of the key being the smallest, 2nd, 3rd, largest value, Pearson's
  chi-square test of uniformity (3 df) and Holm-adjusted p-values over the families.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

from ..misconceptions.adversarial import oof_key_probabilities
from ..misconceptions.key_cues import CHOICE_GROUP, feature_grids
from ..stats import wilson_interval
from .data import LETTERS

__all__ = ["TREE_GROUPS", "learned_by_family", "tree_hits", "value_rank_by_family"]

#: feature sets of the tree ensemble: the choices alone, and everything
TREE_GROUPS = (CHOICE_GROUP, "all")


def _features(questions: pd.DataFrame, values: np.ndarray) -> tuple[dict, dict]:
    recs = questions.to_dict("records")
    choices = [[str(r[f"choice_{x}"]).strip() for x in LETTERS] for r in recs]
    rationales = [[str(r[f"rationale_{x}"]) for x in LETTERS] for r in recs]
    text = questions["question"].astype(str).tolist()
    return feature_grids(values, choices, rationales, text)


def tree_hits(
    questions: pd.DataFrame, values: np.ndarray, key: np.ndarray, folds: int, seed: int
) -> dict[str, np.ndarray]:
    """Per feature set, 1.0 where the cross-validated tree ensemble picks the question's key."""
    feats, groups = _features(questions, values)
    fam = questions.get("family", None)
    codes = None
    if fam is not None and fam.notna().any():
        codes = pd.factorize(fam.fillna("").astype(str), sort=True)[0]
    sets = {CHOICE_GROUP: groups[CHOICE_GROUP], "all": [k for g in groups.values() for k in g]}
    out = {}
    for name in TREE_GROUPS:
        x = np.stack([feats[k] for k in sets[name]], axis=-1)
        folds_used = min(folds, len(key))
        prob = oof_key_probabilities(x, key, "trees", family=codes, folds=folds_used, seed=seed)
        out[name] = (prob.argmax(axis=1) == key).astype(float)
    return out


def learned_by_family(family: np.ndarray, hits: dict[str, np.ndarray]) -> pd.DataFrame:
    """One row per (reader, family) and per reader pooled (``family = "all"``): ``reader,
    family, n, key_picked, share, ci_low, ci_high`` (Wilson 95%; chance 0.25)."""
    rows = []
    for reader, h in hits.items():
        for fam in ["all", *sorted(pd.unique(family))]:
            sel = ~np.isnan(h) if fam == "all" else (family == fam) & ~np.isnan(h)
            n, k = int(sel.sum()), int(np.nansum(h[sel]))
            lo, hi = wilson_interval(k, n, 0.05)
            rows.append({"reader": reader, "family": fam, "n": n, "key_picked": k,
                         "share": k / n if n else np.nan, "ci_low": float(lo),
                         "ci_high": float(hi), "chance": 0.25})  # fmt: skip
    return pd.DataFrame(rows)


def value_rank_by_family(family: np.ndarray, rank: np.ndarray) -> pd.DataFrame:
    """Per family (and ``"all"``), how often the key is the smallest ... largest value, the
    chi-square test of a uniform rank (3 df), and Holm-adjusted p-values over the families.
    ``rank`` is 1-4 per question (NaN where the choices are not all numbers)."""
    rows = []
    ok = ~np.isnan(rank)
    for fam in ["all", *sorted(pd.unique(family[ok]))]:
        sel = ok if fam == "all" else ok & (family == fam)
        counts = np.array([int((rank[sel] == r).sum()) for r in (1, 2, 3, 4)])
        n = int(counts.sum())
        p = float(stats.chisquare(counts).pvalue) if n else np.nan
        rows.append({"family": fam, "n": n, **{f"rank {r}": int(c) for r, c in
                     zip((1, 2, 3, 4), counts, strict=True)}, "p_value": p})  # fmt: skip
    table = pd.DataFrame(rows)
    fam_rows = (table["family"] != "all").to_numpy() & table["p_value"].notna().to_numpy()
    adj = np.full(len(table), np.nan)
    if fam_rows.any():
        adj[fam_rows] = multipletests(table.loc[fam_rows, "p_value"], method="holm")[1]
    adj[0] = table["p_value"].iloc[0]
    table["p_holm"] = adj
    table["uniform"] = ~(table["p_holm"] < 0.05)
    return table
