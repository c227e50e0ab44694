"""Does anything but the reasoning give the key away?  (``malalgo audit``)

A benchmark of malgorithm identification is only fair if the key cannot be told from the
malgorithms by its surface: a model that learns "the rationale in the imperative is the correct
one", "the longest rationale is the key" or "the answer is never the smallest number" scores
without following a single step.  The audit asks three kinds of reader to pick each question's key.

**Single cues** (:data:`CUES`), each a fixed rule that picks one option per question from what
can be seen without solving it (exact ties broken at random, seeded): the longest / shortest
rationale (characters, words), the rationale writing the most / fewest numbers or operation
symbols; the smallest, 2nd, 3rd and largest value, the value closest to / farthest from the
other three on an order-of-magnitude scale, a value that is / is not written in the question, the
longest / shortest choice text, a whole / non-whole number; each position A-D.  Chance is 1/4 for
each: if the key is exchangeable with the distractors in what the cue looks at, a pick is the
key with probability exactly 1/4 whatever the ties.  One cue is a set, not a pick: "the key is
one of the two middle values" (chance 1/2).  Value cues count only the questions whose four
choices are numbers.

**Combined models**: a conditional logit (McFadden 1974) over per-option features centred within
each question - the options' ranks one-hot and deviations from the question's mean (see
:mod:`.audit_features`) - scores the four options; its pick is the highest score.  Fitted by
penalised maximum likelihood (L2, standardised features) and cross-validated by question
(``folds`` folds of whole questions), separately on the choices' features (what an MCQ answerer
sees: values, texts, position), the rationales' features (lengths, numbers, symbols) and all
together.  **Words-only model**: a logistic regression on the bag of words and word pairs of each
rationale (lower-cased words of letters; numbers and symbols left out, being the content the
model must work with), cross-validated the same way; the report lists the words that weigh most.

For each cue and model: the share of questions where it picks the key, its Wilson 95% interval
(one observation per question), the chance level, the exact binomial p-value against chance,
``within_chance`` and ``flagged`` (the Holm-adjusted p-value over all cues and models is below
0.05: a cue that survives the multiplicity of looking at many).  For a single cue both
directions count - the key *never* being the shortest is as usable as its always being so -
so the test is two-sided and ``within_chance`` means the interval contains chance.  For a
cross-validated model only picking the key *more* often than chance is a cue: the test is
one-sided and ``within_chance`` means the interval does not lie above chance.  (Each fold's
model is used only if it beats a uniform guess on held-out keys within its own training folds,
as an analyst would check before relying on it; otherwise it guesses.  Without that check a
model fitted on items whose imbalances are negatively correlated - as a generator that balances
over the set makes them - learns the opposite of the test fold's residual imbalance and lands
below chance.)  For the words-only model the original figures
stay: ``accuracy, ci_low, ci_high, chance_high`` (the 97.5th percentile of Binomial(n, 1/4)
divided by n), ``p_value`` (one-sided), ``within_chance``, ``cue_detected`` (``p_value < 0.05``).

Passing the audit shows that *these* readers find no cue; it says nothing about cues they cannot
see (for example interactions between the kind of question and a feature, which a per-option
linear model does not represent; the per-family table shows the main ones).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, stats
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from statsmodels.stats.multitest import multipletests

from ..defaults import SEED
from ..misconceptions.key_cues import centrality
from ..stats import binomial_test, wilson_interval
from .audit_features import option_table, signed_log, within_question
from .audit_learned import learned_by_family, tree_hits, value_rank_by_family
from .data import LETTERS

__all__ = [
    "CUES",
    "MODEL_GROUPS",
    "AuditResult",
    "audit_key_cues",
    "fit_conditional_logit",
    "rationale_rows",
]

CHANCE = 1 / len(LETTERS)
#: words of letters, single letters included; numbers are left out: they are the problem's
#: content, and working with them is the task itself (a cue must be in the wording)
TOKENS = r"(?u)\b[^\W\d_]+\b"


def rationale_rows(questions: pd.DataFrame) -> pd.DataFrame:
    """One row per rationale: ``question_id, letter, text, is_key`` (from a frame read by
    :func:`~edueval.malalgo.data.read_questions`)."""
    parts = [
        pd.DataFrame(
            {
                "question_id": questions["id"].astype(str),
                "letter": letter,
                "text": questions[f"rationale_{letter}"].astype(str),
                "is_key": questions["answer"] == letter,
            }
        )
        for letter in LETTERS
    ]
    return pd.concat(parts).sort_values(["question_id", "letter"], kind="stable")


def _vectorizer() -> CountVectorizer:
    return CountVectorizer(lowercase=True, ngram_range=(1, 2), token_pattern=TOKENS, binary=True)


def _fit(texts: pd.Series, is_key: pd.Series) -> tuple[CountVectorizer, LogisticRegression]:
    vec = _vectorizer()
    x = vec.fit_transform(texts)
    clf = LogisticRegression(C=1.0, max_iter=2000, class_weight="balanced")
    clf.fit(x, is_key.astype(int))
    return vec, clf


def _fold_of_questions(ids: np.ndarray, folds: int, rng: np.random.Generator) -> dict[str, int]:
    shuffled = rng.permutation(ids)
    return {qid: i % folds for i, qid in enumerate(shuffled)}


def _picks(test: pd.DataFrame, scores: np.ndarray, rng: np.random.Generator) -> pd.DataFrame:
    """Per question, the letter with the highest score (exact ties broken at random)."""
    scored = test.assign(score=scores, tie=rng.random(len(test)))
    best = scored.sort_values(["question_id", "score", "tie"], ascending=[True, False, False])
    return best.groupby("question_id", sort=False).head(1)


def _cross_validated(rows: pd.DataFrame, folds: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    ids = rows["question_id"].unique()
    fold = rows["question_id"].map(_fold_of_questions(ids, folds, rng)).to_numpy()
    picked = []
    for f in range(folds):
        train, test = rows[fold != f], rows[fold == f]
        if not len(test):
            continue
        vec, clf = _fit(train["text"], train["is_key"])
        scores = clf.decision_function(vec.transform(test["text"]))
        picked.append(_picks(test, scores, rng).assign(fold=f))
    out = pd.concat(picked)
    keys = rows[rows["is_key"]].set_index("question_id")["letter"]
    out = out.rename(columns={"letter": "picked"})[["question_id", "picked", "fold"]]
    out["key"] = out["question_id"].map(keys).to_numpy()
    out["correct"] = out["picked"] == out["key"]
    return out.sort_values("question_id").reset_index(drop=True)


def _weights(rows: pd.DataFrame, top: int) -> pd.DataFrame:
    vec, clf = _fit(rows["text"], rows["is_key"])
    coef = clf.coef_[0]
    names = vec.get_feature_names_out()
    order = np.argsort(coef)
    pick = list(order[::-1][:top]) + list(order[:top])
    return pd.DataFrame(
        {
            "feature": names[pick],
            "weight": coef[pick],
            "towards": ["key"] * min(top, len(coef)) + ["malgorithm"] * min(top, len(coef)),
        }
    )


def _longest_is_key(rows: pd.DataFrame, seed: int) -> float:
    """Share of questions whose longest rationale (in characters) is the key's."""
    rng = np.random.default_rng(seed)
    picks = _picks(rows, rows["text"].str.len().to_numpy(dtype=float), rng)
    return float(picks["is_key"].mean())


# --- single cues ---------------------------------------------------------------------------------


def _grid(options: pd.DataFrame, col: str) -> np.ndarray:
    return options[col].to_numpy(dtype=float).reshape(-1, len(LETTERS))


def _strict_rank(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Rank 1-4 within each question, exact ties broken at random (NaN rows stay NaN)."""
    tie = rng.random(x.shape)
    order = np.lexsort((tie, np.nan_to_num(x)), axis=1)
    rank = np.empty(x.shape)
    np.put_along_axis(rank, order, np.arange(1.0, x.shape[1] + 1.0)[None, :], axis=1)
    return np.where(np.isnan(x).any(axis=1, keepdims=True), np.nan, rank)


@dataclass(frozen=True)
class Cue:
    """A fixed rule that picks one option per question (``kind="pick"``: the option with the
    highest ``score``) or a set of options (``kind="set"``: those with a positive ``score``)."""

    name: str
    group: str  # "choices", "position" or "rationales"
    score: Callable[[dict[str, np.ndarray]], np.ndarray]
    kind: str = "pick"
    chance: float = 1 / len(LETTERS)


def _closeness(g: dict[str, np.ndarray]) -> np.ndarray:
    """Distance of each value from the mean of the other three, on an order-of-magnitude scale."""
    mag = signed_log(g["value"])
    return np.abs(mag - (mag.sum(axis=1, keepdims=True) - mag) / 3)


def _numeric(x: np.ndarray, g: dict[str, np.ndarray]) -> np.ndarray:
    """``x`` on questions whose four choices are numbers, NaN elsewhere."""
    return np.where(np.isnan(g["value"]).any(axis=1, keepdims=True), np.nan, x)


def _ranked(g: dict[str, np.ndarray], r: int) -> np.ndarray:
    """1.0 for the option whose value has rank ``r`` (1 = smallest), on numeric questions."""
    return _numeric((g["value_rank"] == r).astype(float), g)


def _at_position(i: int) -> Callable[[dict[str, np.ndarray]], np.ndarray]:
    """1.0 for the option in position ``i`` (0 = A)."""
    return lambda g: (g["position"] == i).astype(float)


#: every single cue the audit reports
CUES: tuple[Cue, ...] = (
    Cue("longest rationale (characters)", "rationales", lambda g: g["rationale_chars"]),
    Cue("shortest rationale (characters)", "rationales", lambda g: -g["rationale_chars"]),
    Cue("longest rationale (words)", "rationales", lambda g: g["rationale_words"]),
    Cue("shortest rationale (words)", "rationales", lambda g: -g["rationale_words"]),
    Cue("rationale with the most numbers", "rationales", lambda g: g["rationale_numbers"]),
    Cue("rationale with the fewest numbers", "rationales", lambda g: -g["rationale_numbers"]),
    Cue("rationale with the most symbols", "rationales", lambda g: g["rationale_symbols"]),
    Cue("rationale with the fewest symbols", "rationales", lambda g: -g["rationale_symbols"]),
    Cue("smallest value", "choices", lambda g: _ranked(g, 1)),
    Cue("2nd smallest value", "choices", lambda g: _ranked(g, 2)),
    Cue("3rd smallest value", "choices", lambda g: _ranked(g, 3)),
    Cue("largest value", "choices", lambda g: _ranked(g, 4)),
    Cue(
        "one of the two middle values",
        "choices",
        lambda g: _ranked(g, 2) + _ranked(g, 3),
        kind="set",
        chance=0.5,
    ),
    Cue("value closest to the other three", "choices", lambda g: -_closeness(g)),
    Cue("value farthest from the other three", "choices", _closeness),
    Cue("value written in the question", "choices", lambda g: g["in_question"]),
    Cue("value not written in the question", "choices", lambda g: -g["in_question"]),
    Cue("most central rationale (character similarity)", "rationales", lambda g: g["rat_sim"]),
    Cue("least central rationale (character similarity)", "rationales", lambda g: -g["rat_sim"]),
    Cue("most central value (nearest the other three)", "choices", lambda g: -g["spread"]),
    Cue("most central choice text (character similarity)", "choices", lambda g: g["choice_sim"]),
    Cue("longest choice text", "choices", lambda g: g["choice_chars"]),
    Cue("shortest choice text", "choices", lambda g: -g["choice_chars"]),
    Cue("whole number", "choices", lambda g: _numeric(g["is_whole"], g)),
    Cue("not a whole number", "choices", lambda g: _numeric(-g["is_whole"], g)),
    *(Cue(f"position {x}", "position", _at_position(i)) for i, x in enumerate(LETTERS)),
)


def _grids(
    options: pd.DataFrame, questions: pd.DataFrame, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    cols = ["value", "choice_chars", "is_whole", "in_question", "position"]
    cols += ["rationale_chars", "rationale_words", "rationale_numbers", "rationale_symbols"]
    g = {c: _grid(options, c) for c in cols}
    g["value_rank"] = _strict_rank(g["value"], rng)
    recs = questions.to_dict("records")
    g["rat_sim"] = centrality([[str(r[f"rationale_{x}"]) for x in LETTERS] for r in recs])
    g["choice_sim"] = centrality([[str(r[f"choice_{x}"]).strip() for x in LETTERS] for r in recs])
    mag = signed_log(g["value"])
    g["spread"] = np.abs(mag[:, :, None] - mag[:, None, :]).sum(axis=2) / 3  # NaN rows stay NaN
    return g


def _pick(scores: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per row, the column of the highest score, exact ties broken at random."""
    best = scores.max(axis=1, keepdims=True)
    tie = np.where(
        scores >= best - 1e-12 * np.maximum(1.0, np.abs(best)), rng.random(scores.shape), -1
    )
    return tie.argmax(axis=1)


def _cue_hits(cue: Cue, g: dict[str, np.ndarray], key: np.ndarray, rng) -> np.ndarray:
    """Per question: 1.0 if the cue picks the key (or, for a set, holds it), NaN if undefined."""
    score = np.asarray(cue.score(g), dtype=float)
    defined = ~np.isnan(score).any(axis=1)
    hits = np.full(len(key), np.nan)
    if cue.kind == "set":
        hits[defined] = score[defined, key[defined]] > 0
    elif defined.any():
        hits[defined] = _pick(score[defined], rng) == key[defined]
    return hits


# --- combined models -----------------------------------------------------------------------------

#: feature groups of the combined models: what an MCQ answerer sees, the rationales, both
MODEL_GROUPS = ("choices", "rationales", "all")


def fit_conditional_logit(x: np.ndarray, key: np.ndarray, l2: float = 1.0) -> np.ndarray:
    """Coefficients of a conditional logit, P(option j is the key) = softmax_j(x[i, j] · β).

    ``x`` is ``[questions, options, features]``, ``key`` the key's option index per question;
    maximises the log-likelihood minus ``l2/2 · |β|²`` by L-BFGS with the analytic gradient.
    With ``l2 = 0`` this is McFadden's conditional logit (statsmodels' ``ConditionalLogit``).
    """
    n, _, p = x.shape
    rows = np.arange(n)
    x_key = x[rows, key]

    def objective(beta: np.ndarray) -> tuple[float, np.ndarray]:
        s = x @ beta
        top = s.max(axis=1, keepdims=True)
        e = np.exp(s - top)
        lse = top[:, 0] + np.log(e.sum(axis=1))
        prob = e / e.sum(axis=1, keepdims=True)
        nll = float(lse.sum() - s[rows, key].sum() + 0.5 * l2 * beta @ beta)
        grad = np.einsum("nj,njp->p", prob, x) - x_key.sum(axis=0) + l2 * beta
        return nll, grad

    res = optimize.minimize(objective, np.zeros(p), jac=True, method="L-BFGS-B",
                            options={"maxiter": 500})  # fmt: skip
    return res.x


def _heldout_gain(x: np.ndarray, key: np.ndarray, rng, inner: int = 4) -> float:
    """Inner cross-validated log-likelihood of the conditional logit minus a uniform guess's
    (``x`` already scaled): positive when the model predicts keys it was not fitted on."""
    order = rng.permutation(len(key))
    part = np.empty(len(key), dtype=int)
    part[order] = np.arange(len(key)) % inner
    gain = 0.0
    for f in range(inner):
        fit, held = part != f, part == f
        beta = fit_conditional_logit(x[fit], key[fit])
        s = x[held] @ beta
        top = s.max(axis=1, keepdims=True)
        lse = top[:, 0] + np.log(np.exp(s - top).sum(axis=1))
        gain += float((s[np.arange(len(s)), key[held]] - lse).sum() + len(s) * np.log(x.shape[1]))
    return gain


def _model_hits(x: np.ndarray, key: np.ndarray, fold: np.ndarray, folds: int, rng) -> np.ndarray:
    """Cross-validated picks of the conditional logit: 1.0 where the pick is the key.

    As an analyst would, each outer fold's model is used only if, within its training folds, it
    predicts held-out keys better than a uniform guess (inner cross-validated log-likelihood);
    otherwise it guesses at random.  Without that check a model fitted on a set whose
    imbalances are negatively correlated (a generator balancing over the set) learns the
    opposite of the test fold's residual imbalance and lands *below* chance."""
    hits = np.zeros(len(key))
    for f in range(folds):
        train, test = fold != f, fold == f
        if not test.any():
            continue
        scale = x[train].reshape(-1, x.shape[2]).std(axis=0)
        scale[scale < 1e-12] = np.inf  # a constant feature carries nothing
        xs = x[train] / scale
        if train.sum() >= 8 and _heldout_gain(xs, key[train], rng) > 0:
            beta = fit_conditional_logit(xs, key[train])
        else:
            beta = np.zeros(x.shape[2])
        hits[test] = _pick(x[test] / scale @ beta, rng) == key[test]
    return hits


# --- statistics ----------------------------------------------------------------------------------


def _row(name: str, group: str, hits: np.ndarray, chance: float, one_sided: bool = False) -> dict:
    """Share of questions where a cue or model picks the key, its Wilson 95% interval and the
    exact binomial p-value against chance: two-sided for a single cue (a key that is never the
    shortest is as much a cue as one that always is), one-sided ("more often than chance") for
    a cross-validated model, whose accuracy below chance is no pick of the key (see the module
    docstring)."""
    h = hits[~np.isnan(hits)]
    n, k = len(h), int(h.sum())
    lo, hi = wilson_interval(k, n, 0.05)  # NaN when n == 0
    alternative = "greater" if one_sided else "two-sided"
    p = binomial_test(k, n, chance, alternative)  # NaN when n == 0
    within = lo <= chance if one_sided else lo <= chance <= hi
    return {
        "cue": name,
        "group": group,
        "n": n,
        "key_picked": k,
        "share": k / n if n else np.nan,
        "ci_low": float(lo),
        "ci_high": float(hi),
        "chance": chance,
        "test": alternative,
        "p_value": p,
        "within_chance": bool(n == 0 or within),
    }


def _flag(table: pd.DataFrame) -> pd.DataFrame:
    """Holm-adjusted p-values over every row of the table; ``flagged`` where below 0.05."""
    ok = table["p_value"].notna().to_numpy()
    adj = np.full(len(table), np.nan)
    if ok.any():
        adj[ok] = multipletests(table.loc[ok, "p_value"], method="holm")[1]
    out = table.assign(p_holm=adj)
    out["flagged"] = out["p_holm"] < 0.05
    out["direction"] = np.where(
        out["share"] >= out["chance"], "towards the key", "away from the key"
    )
    return out


def _by_family(options: pd.DataFrame, hits: dict[str, np.ndarray]) -> pd.DataFrame | None:
    fam = options["family"].to_numpy()[:: len(LETTERS)]
    if pd.isna(fam).all():
        return None
    names = ["smallest value", "2nd smallest value", "3rd smallest value", "largest value",
             "longest rationale (characters)", "shortest rationale (characters)",
             "value written in the question", "most central rationale (character similarity)",
             "most central value (nearest the other three)"]  # fmt: skip
    frame = pd.DataFrame({n: hits[n] for n in names}).assign(family=fam)
    table = frame.groupby("family").mean()
    return table.assign(n=frame.groupby("family").size()).reset_index()


@dataclass
class AuditResult:
    """Outcome of :func:`audit_key_cues` (see the module docstring for each figure).

    The scalar fields are the words-only model's (as before); ``cues`` and ``models`` hold one
    row per single cue and per model (``cue, group, n, key_picked, share, ci_low, ci_high,
    chance, p_value, within_chance, p_holm, flagged, direction``), the words-only model
    included; ``by_family`` (generated items only) the share of questions of each family where
    the main value and length cues pick the key; ``flagged`` names the flagged rows.
    """

    n_questions: int
    n_correct: int
    accuracy: float
    ci_low: float
    ci_high: float
    chance: float
    chance_high: float
    p_value: float
    within_chance: bool
    cue_detected: bool
    longest_is_key: float
    folds: int
    picks: pd.DataFrame
    weights: pd.DataFrame
    cues: pd.DataFrame
    models: pd.DataFrame
    by_family: pd.DataFrame | None = None
    learned: pd.DataFrame | None = None
    value_rank: pd.DataFrame | None = None

    @property
    def flagged(self) -> list[str]:
        """Names of the cues and models flagged (Holm-adjusted p < 0.05)."""
        both = pd.concat([self.cues, self.models])
        return both.loc[both["flagged"], "cue"].tolist()

    @property
    def all_within_chance(self) -> bool:
        """Every cue's and model's Wilson 95% interval contains its chance level."""
        return bool(self.cues["within_chance"].all() and self.models["within_chance"].all())

    def as_dict(self) -> dict:
        scalars = {k: v for k, v in self.__dict__.items() if not isinstance(v, pd.DataFrame)}
        scalars.pop("by_family", None)
        extra = {}
        if self.learned is not None:
            extra["learned_by_family"] = self.learned.to_dict(orient="records")
        if self.value_rank is not None:
            extra["value_rank_by_family"] = self.value_rank.to_dict(orient="records")
            fams = self.value_rank[self.value_rank["family"] != "all"]
            extra["value_rank_uniform_in_every_family"] = bool(fams["uniform"].all())
        return (
            scalars
            | extra
            | {
                "ci_method": "Wilson, one observation per question",
                "flagged": self.flagged,
                "any_cue_flagged": bool(self.flagged),
                "all_within_chance": self.all_within_chance,
                "cues": self.cues.to_dict(orient="records"),
                "models": self.models.to_dict(orient="records"),
            }
        )


def _surface_audit(
    questions: pd.DataFrame, words: pd.DataFrame, folds: int, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None, pd.DataFrame, pd.DataFrame]:
    """Single cues, the combined models, the tree ensembles and the words-only model's row,
    flagged together; the learned readers and the key's value rank by family."""
    options = option_table(questions)
    key = options["is_key"].to_numpy().reshape(-1, len(LETTERS)).argmax(axis=1)
    qids = options["question_id"].to_numpy()[:: len(LETTERS)]
    fold_of = _fold_of_questions(np.unique(qids), folds, np.random.default_rng(seed))
    fold = np.array([fold_of[q] for q in qids])
    rng = np.random.default_rng([seed, 1])
    g = _grids(options, questions, rng)
    hits = {c.name: _cue_hits(c, g, key, rng) for c in CUES}
    cue_rows = [_row(c.name, c.group, hits[c.name], c.chance) for c in CUES]
    model_rows = []
    for group in MODEL_GROUPS:
        x, _ = within_question(options, group)
        h = _model_hits(x, key, fold, folds, rng)
        model_rows.append(_row(f"combined model: {group}", group, h, CHANCE, one_sided=True))
    trees = tree_hits(questions, g["value"], key, folds, seed)
    for group, h in trees.items():
        model_rows.append(_row(f"tree ensemble: {group}", group, h, CHANCE, one_sided=True))
    model_rows.append(
        _row("words-only model", "rationales", words["correct"].to_numpy(float), CHANCE, True)
    )
    both = _flag(pd.DataFrame(cue_rows + model_rows))
    n_cues = len(cue_rows)
    cues = both.iloc[:n_cues].reset_index(drop=True)
    models = both.iloc[n_cues:].reset_index(drop=True)
    fam = options["family"].to_numpy()[:: len(LETTERS)]
    fam = np.where(pd.isna(fam), "(none)", fam).astype(str)
    readers = {
        "most central rationale (character similarity)":
            hits["most central rationale (character similarity)"],
        "most central value (nearest the other three)":
            hits["most central value (nearest the other three)"],
        **{f"tree ensemble: {k}": v for k, v in trees.items()},
    }  # fmt: skip
    rank = np.where(np.isnan(g["value"]).any(axis=1), np.nan,
                    (g["value"] < g["value"][np.arange(len(key)), key][:, None]).sum(axis=1) + 1.0)  # fmt: skip
    learned = learned_by_family(fam, readers)
    ranks = value_rank_by_family(fam, rank)
    return cues, models, _by_family(options, hits), learned, ranks


def audit_key_cues(
    questions: pd.DataFrame, *, folds: int = 5, seed: int = SEED, top: int = 15
) -> AuditResult:
    """Single surface cues, cross-validated combined models and the words-only model: how often
    does each pick the key, against chance?

    ``questions`` as read by :func:`~edueval.malalgo.data.read_questions`.  Raises
    ``ValueError`` with fewer than 2 folds or fewer questions than folds."""
    n = len(questions)
    if folds < 2:
        raise ValueError("folds= must be at least 2")
    if n < folds:
        raise ValueError(f"the audit needs at least as many questions as folds ({folds}); got {n}")
    rows = rationale_rows(questions)
    picks = _cross_validated(rows, folds, seed)
    k = int(picks["correct"].sum())
    lo, hi = wilson_interval(k, n, 0.05)
    chance_high = float(stats.binom.ppf(0.975, n, CHANCE)) / n
    p_value = binomial_test(k, n, CHANCE, "greater")
    cues, models, by_family, learned, value_rank = _surface_audit(questions, picks, folds, seed)
    return AuditResult(
        n_questions=n,
        n_correct=k,
        accuracy=k / n,
        ci_low=float(lo),
        ci_high=float(hi),
        chance=CHANCE,
        chance_high=chance_high,
        p_value=p_value,
        within_chance=bool(lo <= CHANCE <= hi and k / n <= chance_high),
        cue_detected=p_value < 0.05,
        longest_is_key=_longest_is_key(rows, seed),
        folds=folds,
        picks=picks,
        weights=_weights(rows, top),
        cues=cues,
        models=models,
        by_family=by_family,
        learned=learned,
        value_rank=value_rank,
    )
