"""Can the key of generated P3 items be found without mathematics? (issue 34)

For each seed: generate ``n`` items plainly and with the adversarial filter
(``generate_items(..., adversarial=True)``), time both, and audit each with ``malalgo audit``'s
in-memory layer (similarity cues, tree ensembles, per-family value-rank tests), plus one reader the
filter never trained against: a random forest on TF-IDF character 2-4-grams of each rationale
(each option's vector minus its question's mean), cross-validated by question; and one that reads
the question: a logistic regression on (question word, rationale word) pairs, numbers left out.

    PYTHONPATH=src python benchmarks/malalgo_adversarial.py --n 1000 --seeds 101 202 303

``--modes hub`` audits hub items (``generate_items(..., adversarial="hub")``,
:mod:`edueval.misconceptions.compose`); ``--by-family`` prints, for every mode, each reader's
share by family with Wilson intervals, the key's value rank by family, and the flagged cues::

    PYTHONPATH=src python benchmarks/malalgo_adversarial.py --n 3000 --seeds 404 505 606 \
        --modes plain hub --by-family

``--modes variants`` audits question-variant items (``generate_items(..., adversarial="variants")``,
:mod:`edueval.misconceptions.variants`)::

    PYTHONPATH=src python benchmarks/malalgo_adversarial.py --n 3000 --seeds 707 808 909 \
        --modes variants --by-family

``--pool N`` instead: draw N items with target ranks (no filter) and print the most-central
rationale rate, the key's value rank by family, and the filter's held-out accuracies round by
round when it runs its full :data:`~edueval.misconceptions.adversarial.ROUNDS` rounds::

    PYTHONPATH=src python benchmarks/malalgo_adversarial.py --pool 2000 --seeds 101
"""

from __future__ import annotations

import argparse
import json
import re
import time

import numpy as np
import pandas as pd

from edueval.malalgo.audit import audit_key_cues
from edueval.malalgo.data import normalise_questions
from edueval.misconceptions import generate_items
from edueval.misconceptions.adversarial import question_folds
from edueval.stats import wilson_interval

LETTERS = "ABCD"


def tfidf_forest(items: pd.DataFrame, seed: int, folds: int = 5) -> tuple[int, int]:
    """Key picked / questions by a random forest on within-question-centred TF-IDF char n-grams."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.feature_extraction.text import TfidfVectorizer

    texts = [str(items.iloc[i][f"rationale_{x}"]) for i in range(len(items)) for x in LETTERS]
    key = items["answer"].map({x: i for i, x in enumerate(LETTERS)}).to_numpy()
    tf = TfidfVectorizer(analyzer="char", ngram_range=(2, 4), min_df=2, sublinear_tf=True)
    x = TruncatedSVD(64, random_state=seed).fit_transform(tf.fit_transform(texts))
    x = x.reshape(len(items), 4, -1)
    sim = np.einsum("nip,njp->nij", x, x) / (
        np.linalg.norm(x, axis=2)[:, :, None] * np.linalg.norm(x, axis=2)[:, None, :] + 1e-12
    )
    cen = (sim.sum(axis=2) - 1) / 3
    feats = np.concatenate(
        [x - x.mean(axis=1, keepdims=True), (cen - cen.mean(1, keepdims=True))[..., None]], axis=2
    )
    rows = feats.reshape(len(items) * 4, -1)
    y = (np.arange(4)[None, :] == key[:, None]).ravel()
    fold = question_folds(len(items), folds, seed)
    hits = 0
    for f in range(folds):
        tr, te = np.repeat(fold != f, 4), fold == f
        rf = RandomForestClassifier(300, min_samples_leaf=3, random_state=seed, n_jobs=1)
        rf.fit(rows[tr], y[tr])
        p = rf.predict_proba(rows[np.repeat(te, 4)])[:, 1].reshape(-1, 4)
        hits += int((p.argmax(axis=1) == key[te]).sum())
    return hits, len(items)


def _words(text: str) -> set[str]:
    """A text's words and symbols, without its numbers."""
    return set(re.findall(r"[A-Za-z]+|[^\sA-Za-z0-9]", text))


def question_pairs(items: pd.DataFrame, seed: int, folds: int = 5) -> np.ndarray:
    """1.0 where a reader of the question finds the key without arithmetic: a logistic
    regression on the pairs (question word, rationale word or symbol) of each option, numbers
    left out, cross-validated by question; its pick is the option of highest probability."""
    from sklearn.feature_extraction.text import HashingVectorizer
    from sklearn.linear_model import LogisticRegression

    docs = []
    for r in items.to_dict("records"):
        q = _words(str(r["question"]))
        for x in LETTERS:
            docs.append(" ".join(f"{a}__{b}" for a in q for b in _words(str(r[f"rationale_{x}"]))))
    hv = HashingVectorizer(n_features=2**18, token_pattern=r"\S+", alternate_sign=False)
    x = hv.transform(docs)
    key = items["answer"].map({x: i for i, x in enumerate(LETTERS)}).to_numpy()
    y = (np.arange(4)[None, :] == key[:, None]).ravel()
    fold = question_folds(len(items), folds, seed)
    hits = np.zeros(len(items))
    for f in range(folds):
        tr, te = np.repeat(fold != f, 4), fold == f
        model = LogisticRegression(C=1.0, max_iter=2000).fit(x[tr], y[tr])
        p = model.predict_proba(x[np.repeat(te, 4)])[:, 1].reshape(-1, 4)
        hits[te] = p.argmax(axis=1) == key[te]
    return hits


QPAIRS = "question × rationale word pairs, logit (reads the question)"


def _share(hits: np.ndarray) -> str:
    k, n = int(hits.sum()), len(hits)
    lo, hi = wilson_interval(k, n, 0.05)
    return f"{k / n:.3f} [{lo:.3f}, {hi:.3f}]"


def summarise(res, items: pd.DataFrame, seed: int, qhits: np.ndarray) -> dict:
    rows = pd.concat([res.cues, res.models]).set_index("cue")
    out = {}
    for name in ("most central rationale (character similarity)",
                 "most central value (nearest the other three)",
                 "tree ensemble: all", "tree ensemble: choices",
                 "combined model: all", "words-only model"):  # fmt: skip
        r = rows.loc[name]
        out[name] = f"{r['share']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
    k, n = tfidf_forest(items, seed)
    lo, hi = wilson_interval(k, n, 0.05)
    out["random forest, TF-IDF char n-grams (not in the filter)"] = (
        f"{k / n:.3f} [{lo:.3f}, {hi:.3f}]"
    )
    out[QPAIRS] = _share(qhits)
    vr = res.value_rank[res.value_rank["family"] != "all"]
    out["families with a non-uniform key value rank (Holm)"] = int((~vr["uniform"]).sum())
    out["families"] = len(vr)
    return out


MODES = {"plain": False, "adversarial": True, "hub": "hub", "variants": "variants"}


def by_family(res, seed: int, mode: str, family: np.ndarray, qhits: np.ndarray) -> None:
    """One JSON line per family: each reader's share [Wilson 95%], the key's value rank counts
    and Holm-adjusted p-value; then the audit's flagged cues and models."""
    learned = res.learned
    for fam in learned["family"].unique():
        rec: dict = {"seed": seed, "mode": mode, "family": fam}
        for r in learned[learned["family"] == fam].to_dict("records"):
            rec["n"] = r["n"]
            rec[r["reader"]] = f"{r['share']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
        rec[QPAIRS] = _share(qhits if fam == "all" else qhits[family == fam])
        vr = res.value_rank[res.value_rank["family"] == fam].iloc[0]
        rec["value rank 1-4"] = [int(vr[f"rank {k}"]) for k in range(1, 5)]
        rec["value rank p (Holm)"] = round(float(vr["p_holm"]), 4)
        print(json.dumps(rec), flush=True)
    both = pd.concat([res.cues, res.models])
    flagged = both[both["flagged"]]
    print(json.dumps({"seed": seed, "mode": mode, "audit flags": [
        f"{r['cue']} {r['share']:.3f} ({r['direction']})" for r in flagged.to_dict("records")
    ]}), flush=True)  # fmt: skip


def pool_history(size: int, seed: int) -> None:
    from edueval.misconceptions import adversarial, items
    from edueval.misconceptions.key_cues import within_rank

    t = time.perf_counter()
    pool = items._generate(size, seed, None, None, targeted=True)
    print(f"pool of {size} drawn at target ranks: {time.perf_counter() - t:.1f} s", flush=True)
    feats, groups, key, fam = adversarial.item_arrays(pool)
    rank = within_rank(feats["rationale similarity"])[np.arange(len(key)), key]
    k = int((rank == 4).sum())
    lo, hi = wilson_interval(k, len(key), 0.05)
    print(f"most central rationale (difflib) is the key: {k / len(key):.3f} [{lo:.3f}, {hi:.3f}]")
    print(pd.crosstab(pool["family"], adversarial.key_value_rank(pool)).to_string())
    t = time.perf_counter()
    res = adversarial.aflite(feats, groups, key, fam, seed=seed)
    print(f"filter: {time.perf_counter() - t:.1f} s", flush=True)
    print(res.history.to_string(index=False))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[101, 202, 303])
    ap.add_argument("--modes", nargs="+", default=["plain", "adversarial"])
    ap.add_argument("--pool", type=int, default=0)
    ap.add_argument("--by-family", action="store_true")
    args = ap.parse_args()
    if args.pool:
        for seed in args.seeds:
            pool_history(args.pool, seed)
        return
    for seed in args.seeds:
        for mode in args.modes:
            t = time.perf_counter()
            items = generate_items(args.n, seed=seed, adversarial=MODES[mode])
            gen_s = time.perf_counter() - t
            t = time.perf_counter()
            res = audit_key_cues(normalise_questions(items), folds=5, seed=1)
            audit_s = time.perf_counter() - t
            qhits = question_pairs(items, seed)
            rec = {"seed": seed, "mode": mode, "n": len(items), "generate_s": round(gen_s, 1),
                   "audit_s": round(audit_s, 1), **summarise(res, items, seed, qhits)}  # fmt: skip
            print(json.dumps(rec), flush=True)
            if args.by_family:
                by_family(res, seed, mode, items["family"].to_numpy(), qhits)
            elif mode == "adversarial":
                print(res.learned[res.learned["reader"] == "tree ensemble: all"]
                      .to_string(index=False), flush=True)  # fmt: skip
                print(res.value_rank.to_string(index=False), flush=True)


if __name__ == "__main__":
    main()
