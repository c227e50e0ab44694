"""BKT variants: recovery, EM = a bounded numerical maximiser, predictions = an independent
filter, the long parameter file through the CLI, and bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.optimize import minimize

from edueval.cli.main import main
from edueval.kt import BKT

# -- an independent simulator and filter (plain numpy, vectorised over students) ----------------


def simulate_grouped(n_students, T, prior, learn, forget, guess, slip, seed, n_items=3,
                     prior_class=None, pair=False):  # fmt: skip
    """One skill; ``item`` per response drawn uniformly; group parameters are arrays indexed by
    item (guess, slip; learn, forget after a response unless ``pair``: then by pair index
    prev * n_items + cur, with index n_items**2 for a sequence's first move) and by class."""
    g = np.random.default_rng(seed)
    item = g.integers(0, n_items, size=(n_students, T))
    cls = g.integers(0, len(prior), size=n_students) if prior_class is None else prior_class
    state = g.random(n_students) < np.asarray(prior)[cls]
    y = np.empty((n_students, T), dtype=int)
    for t in range(T):
        e = item[:, t]
        p = np.where(state, 1 - np.asarray(slip)[e], np.asarray(guess)[e])
        y[:, t] = g.random(n_students) < p
        j = _move_group(item, t, n_items, pair)
        u = g.random(n_students)
        state = np.where(state, u >= np.asarray(forget)[j], u < np.asarray(learn)[j])
    rows = pd.DataFrame({
        "student": np.repeat([f"s{i}" for i in range(n_students)], T),
        "skill": "k",
        "order": np.tile(np.arange(1, T + 1), n_students),
        "correct": y.ravel(),
        "item": np.char.add("q", item.ravel().astype(str)),
        "klass": np.repeat(np.char.add("c", cls.astype(str)), T),
    })  # fmt: skip
    return rows, item, cls, y


def _move_group(item, t, n_items, pair):
    if not pair:
        return item[:, t]
    if t == 0:
        return np.full(item.shape[0], n_items * n_items)
    return item[:, t - 1] * n_items + item[:, t]


def ref_filter(y, prior_s, guess_t, slip_t, learn_t, forget_t, first_prior=None):
    """P(correct) before / P(known) after each response; every argument is (n_students, T)
    except ``prior_s`` (n_students); returns also the log-likelihood.  With ``first_prior``
    (n_students), the first response is predicted and scored under it (first-response classes:
    the prior mixed over the classes), the filter still starting from ``prior_s``."""
    n, T = y.shape
    known = prior_s.astype(float)
    pc = np.empty((n, T))
    pk = np.empty((n, T))
    ll = 0.0
    for t in range(T):
        e_known = np.where(y[:, t] == 1, 1 - slip_t[:, t], slip_t[:, t])
        e_unknown = np.where(y[:, t] == 1, guess_t[:, t], 1 - guess_t[:, t])
        lik = known * e_known + (1 - known) * e_unknown  # sums of products: never negative
        seen = known if t > 0 or first_prior is None else first_prior
        pc[:, t] = seen * (1 - slip_t[:, t]) + (1 - seen) * guess_t[:, t]
        ll += np.log(seen * e_known + (1 - seen) * e_unknown).sum()
        kk = known * e_known / lik
        pk[:, t] = kk
        known = kk * (1 - forget_t[:, t]) + (1 - kk) * learn_t[:, t]
    return pc, pk, ll


def _grouped(params: pd.DataFrame, name: str) -> dict[str, float]:
    return params[params["parameter"] == name].set_index("group")["value"].to_dict()


def ref_index(params, item, cls, y, col="item", prior_by=None, pair=False):
    """For prior (per student) and guess, slip, learn, forget (per response): the row of the
    long table that applies, found by the groups' documented labels."""
    params = params.reset_index(drop=True)
    lab_item = np.char.add(f"{col}=q", item.astype(str))
    if pair:
        prev = np.concatenate([np.full((item.shape[0], 1), -1), item[:, :-1]], axis=1)
        pairs = np.char.add(
            np.char.add(f"{col}=q", prev.astype(str)), np.char.add(">q", item.astype(str))
        )
        tlab = np.where(prev < 0, f"{col}=(first)", pairs)
    else:
        tlab = lab_item
    if prior_by == "first":
        plab = np.char.add("first_response=", y[:, 0].astype(str))
    elif prior_by:
        plab = np.char.add(f"{prior_by}=c", cls.astype(str))
    else:
        plab = np.full(y.shape[0], "*")

    def look(name, labels):
        rows = params.index[params["parameter"] == name]
        d = dict(zip(params.loc[rows, "group"], rows, strict=True))
        return np.vectorize(lambda s: d[s] if s in d else d["*"])(labels)

    return (look("prior", plab), look("guess", lab_item), look("slip", lab_item),
            look("learn", tlab), look("forget", tlab))  # fmt: skip


def ref_arrays(params, *args, **kw):
    values = params["value"].to_numpy(dtype=float)
    return tuple(values[ix] for ix in ref_index(params, *args, **kw))


# -- recovery ---------------------------------------------------------------------------------

LEARN3 = [0.05, 0.15, 0.3]
GUESS3 = [0.1, 0.25, 0.35]
SLIP3 = [0.05, 0.15, 0.25]

CASES = {
    "multigs": dict(kw=dict(multigs="item"), sim=dict(prior=[0.3], learn=[0.15] * 3,
                    forget=[0.0] * 3, guess=GUESS3, slip=SLIP3)),
    "multigs+forgets": dict(kw=dict(multigs="item", forgets=True), sim=dict(prior=[0.3],
                            learn=[0.15] * 3, forget=[0.05] * 3, guess=GUESS3, slip=SLIP3)),
    "multilearn": dict(kw=dict(multilearn="item"), sim=dict(prior=[0.3], learn=LEARN3,
                       forget=[0.0] * 3, guess=[0.2] * 3, slip=[0.1] * 3)),
    "multilearn+forgets": dict(kw=dict(multilearn="item", forgets=True), sim=dict(prior=[0.3],
                               learn=LEARN3, forget=[0.02, 0.06, 0.1], guess=[0.2] * 3,
                               slip=[0.1] * 3)),
    "multiprior": dict(kw=dict(multiprior="klass"), sim=dict(prior=[0.1, 0.4, 0.7],
                       learn=[0.1] * 3, forget=[0.0] * 3, guess=[0.2] * 3, slip=[0.1] * 3)),
    "multiprior+forgets": dict(kw=dict(multiprior="klass", forgets=True), sim=dict(
        prior=[0.1, 0.4, 0.7], learn=[0.1] * 3, forget=[0.05] * 3, guess=[0.2] * 3,
        slip=[0.1] * 3)),
    "multipair": dict(kw=dict(multipair="item"), sim=dict(prior=[0.3],
                      learn=list(np.linspace(0.03, 0.3, 9)) + [0.1], forget=[0.0] * 10,
                      guess=[0.2] * 3, slip=[0.1] * 3), pair=True),
    "multipair+forgets": dict(kw=dict(multipair="item", forgets=True), sim=dict(prior=[0.3],
                              learn=list(np.linspace(0.03, 0.3, 9)) + [0.1],
                              forget=[0.04] * 10, guess=[0.2] * 3, slip=[0.1] * 3), pair=True),
}  # fmt: skip


def truth_table(sim, kw):
    """The generating values under the labels the fitted table uses."""
    pair = "multipair" in kw
    by_item = "multilearn" in kw or pair
    rows = [("prior", f"klass=c{c}" if "multiprior" in kw else "*", v)
            for c, v in enumerate(sim["prior"])]  # fmt: skip
    for name in ("guess", "slip"):
        rows += [
            (name, f"item=q{i}" if "multigs" in kw else "*", v) for i, v in enumerate(sim[name])
        ]
    for name in ("learn", "forget"):
        for j, v in enumerate(sim[name]):
            if not by_item:
                label = "*"
            elif not pair:
                label = f"item=q{j}"
            else:
                label = "item=(first)" if j == 9 else f"item=q{j // 3}>q{j % 3}"
            rows.append((name, label, v))
    return pd.DataFrame(rows, columns=["parameter", "group", "true"]).drop_duplicates(
        ["parameter", "group"]
    )


@pytest.mark.parametrize("case", list(CASES))
def test_recovers_simulated_parameters(case):
    c = CASES[case]
    df, *_ = simulate_grouped(2000, 30, **c["sim"], seed=11, pair=c.get("pair", False))
    m = BKT(n_restarts=3, seed=2, **c["kw"]).fit(df)
    got = m.params_.merge(truth_table(c["sim"], c["kw"]), on=["parameter", "group"])
    got = got[got["free"] == 1]
    assert set(got["parameter"]) >= {"prior", "learn", "guess", "slip"}
    err = (got["value"] - got["true"]).abs().groupby(got["parameter"]).median()
    assert (err <= 0.03).all(), err.to_dict()
    g = got[got["parameter"].isin(["guess", "slip"])]
    assert (g["value"] < 0.5).all()


def simulate_first_classes(n_students, T, prior, learn, guess, slip, seed):
    """The model of first-response classes with the proper likelihood (one skill): the first
    response drawn under the prior mixed over the classes by their population shares
    (w_1 = P(y1 = 1), solved from pibar = w_0 prior_0 + w_1 prior_1 and
    P(y1 = 1) = pibar (1 - slip) + (1 - pibar) guess), then P(known) = the posterior of the
    class's prior after that response, then classic BKT."""
    g = np.random.default_rng(seed)
    c = 1 - slip - guess
    p1 = (guess + prior[0] * c) / (1 - (prior[1] - prior[0]) * c)
    y = np.empty((n_students, T), dtype=int)
    y[:, 0] = g.random(n_students) < p1
    pri = np.asarray(prior)[y[:, 0]]
    k = np.where(y[:, 0] == 1, pri * (1 - slip), pri * slip)
    u = np.where(y[:, 0] == 1, (1 - pri) * guess, (1 - pri) * (1 - guess))
    state = g.random(n_students) < k / (k + u)
    for t in range(1, T):
        state = state | (g.random(n_students) < learn)
        y[:, t] = g.random(n_students) < np.where(state, 1 - slip, guess)
    return pd.DataFrame({"student": np.repeat([f"s{i}" for i in range(n_students)], T),
                         "skill": "k", "order": np.tile(np.arange(1, T + 1), n_students),
                         "correct": y.ravel()}), p1  # fmt: skip


def test_first_response_classes_recover_their_priors():
    """On data from the model the proper likelihood describes, the class priors come back
    (pyBKT's pseudo-likelihood sends them to ~0 and ~0.9 on any data); shares are the first
    answers' frequencies."""
    df, p1 = simulate_first_classes(3000, 20, [0.15, 0.6], 0.15, 0.2, 0.1, seed=5)
    m = BKT(n_restarts=3, seed=2, multiprior=True).fit(df)
    prior, share = _grouped(m.params_, "prior"), _grouped(m.params_, "share")
    assert prior["first_response=0"] == pytest.approx(0.15, abs=0.04)
    assert prior["first_response=1"] == pytest.approx(0.6, abs=0.04)
    for name, true in (("learn", 0.15), ("guess", 0.2), ("slip", 0.1)):
        assert _grouped(m.params_, name)["*"] == pytest.approx(true, abs=0.02), name
    first = df.groupby("student")["correct"].first()
    assert share["first_response=1"] == pytest.approx(first.mean(), abs=1e-12)
    assert share["first_response=1"] == pytest.approx(p1, abs=0.03)
    assert m.n_params_ == 2 + 1 + 1 + 1  # two priors, learn, guess, slip


def test_first_response_classes_on_one_prior_data():
    """Latent classes of students with priors 0.1 and 0.7 are one-prior BKT (prior 0.4): both
    class priors stay near the classic fit's, and the likelihood-ratio statistic against
    classic BKT (nested: equal class priors) is small, where the pseudo-likelihood gave
    hundreds."""
    df, *_ = simulate_grouped(2000, 30, [0.1, 0.7], [0.1] * 3, [0.0] * 3, [0.2] * 3, [0.1] * 3, 5)
    m = BKT(n_restarts=3, seed=2, multiprior=True).fit(df)
    plain = BKT(n_restarts=3, seed=2).fit(df)
    prior = _grouped(m.params_, "prior")
    for group in ("first_response=0", "first_response=1"):
        assert prior[group] == pytest.approx(plain.params_.loc["k", "prior"], abs=0.06)
    lr = 2 * (m.log_likelihood_.sum() - plain.log_likelihood_.sum())
    assert -1e-6 <= lr < stats.chi2.ppf(0.999, 1)
    assert sum(_grouped(m.params_, "share").values()) == pytest.approx(1.0)


# -- EM equals a bounded numerical maximiser ---------------------------------------------------

SMALL = {
    "multigs": (dict(multigs="item"), dict(prior=[0.4], learn=[0.2] * 2, forget=[0.0] * 2,
                guess=[0.15, 0.3], slip=[0.1, 0.2]), False, None),
    "multilearn+forgets": (dict(multilearn="item", forgets=True), dict(prior=[0.4],
                           learn=[0.1, 0.3], forget=[0.05, 0.1], guess=[0.2] * 2,
                           slip=[0.1] * 2), False, None),
    "multiprior-first": (dict(multiprior=True), dict(prior=[0.2, 0.6], learn=[0.2] * 2,
                         forget=[0.0] * 2, guess=[0.2] * 2, slip=[0.1] * 2), False, "first"),
    "multipair": (dict(multipair="item"), dict(prior=[0.4], learn=[0.1, 0.2, 0.3, 0.15, 0.2],
                  forget=[0.0] * 5, guess=[0.2] * 2, slip=[0.1] * 2), True, None),
    "fixed-guess": (dict(multigs="item", fixed=pd.DataFrame({"parameter": ["guess"],
                    "group": ["item=q0"], "value": [0.25]})), dict(prior=[0.4], learn=[0.2] * 2,
                    forget=[0.0] * 2, guess=[0.25, 0.3], slip=[0.1, 0.2]), False, None),
}  # fmt: skip


@pytest.mark.parametrize("case", list(SMALL))
def test_em_equals_numerical_maximiser(case):
    kw, sim, pair, prior_by = SMALL[case]
    df, item, cls, y = simulate_grouped(300, 8, **sim, seed=3, n_items=2, pair=pair)
    m = BKT(n_restarts=5, seed=1, tol=1e-13, max_iter=20000, **kw).fit(df)
    p = m.params_
    free = p[(p["free"] == 1) & (p["parameter"] != "share")].reset_index(drop=True)
    hi = np.where(free["parameter"].isin(["guess", "slip"]), 0.5 - 1e-9, 1 - 1e-9)
    lo = np.full(len(free), 1e-9)
    lo[free["parameter"] == "forget"] = 0.0

    index = ref_index(p, item, cls, y, prior_by=prior_by, pair=pair)
    values = p["value"].to_numpy(dtype=float).copy()
    is_free = ((p["free"] == 1) & (p["parameter"] != "share")).to_numpy()

    def negll(x):
        values[is_free] = x
        first = None
        if prior_by == "first":  # the first response under the share-mixed prior
            share = p.index[p["parameter"] == "share"]
            prior = [p.index[(p["parameter"] == "prior") & (p["group"] == p.loc[j, "group"])][0]
                     for j in share]  # fmt: skip
            first = np.full(y.shape[0], values[share] @ values[prior])
        return -ref_filter(y, *(values[ix] for ix in index), first_prior=first)[2]

    best = None
    for x0 in (np.full(len(free), 0.2), free["value"].to_numpy() * 0.7 + 0.03):
        r = minimize(negll, x0, method="L-BFGS-B", bounds=list(zip(lo, hi, strict=True)),
                     options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 5000})  # fmt: skip
        best = r if best is None or r.fun < best.fun else best
    em_ll = m.log_likelihood_.sum()
    assert em_ll == pytest.approx(-negll(free["value"].to_numpy()), rel=1e-12)
    assert em_ll >= -best.fun - 1e-6 * abs(best.fun)
    assert em_ll == pytest.approx(-best.fun, rel=1e-6)
    np.testing.assert_allclose(free["value"], best.x, atol=2e-3)


# -- predictions against the independent filter ------------------------------------------------


@pytest.mark.parametrize("case", ["multigs+forgets", "multilearn", "multiprior", "multipair"])
def test_predict_equals_independent_filter(case):
    c = CASES[case]
    df, item, cls, y = simulate_grouped(200, 12, **c["sim"], seed=7, pair=c.get("pair", False))
    df = df.sample(frac=1.0, random_state=1)  # rows out of order: results come back in row order
    m = BKT(n_restarts=2, seed=2, **c["kw"]).fit(df)
    out = m.predict(df).sort_values(["student", "order"], key=lambda s: s.map(_num))
    args = ref_arrays(m.params_, item, cls, y, prior_by="klass" if "prior" in case else None,
                      pair=c.get("pair", False))  # fmt: skip
    pc, pk, ll = ref_filter(y, *args)
    np.testing.assert_allclose(out["p_correct"], pc.ravel(), atol=1e-12)
    np.testing.assert_allclose(out["p_known"], pk.ravel(), atol=1e-12)
    assert m.log_likelihood(df) == pytest.approx(ll, rel=1e-12)


def _num(s):
    return int(s[1:]) if isinstance(s, str) else s


def test_predict_first_response_classes_mix_the_prior():
    """With first-response classes, the first prediction uses the share-weighted prior (it may
    not see the answer it predicts); later ones follow the class's filter."""
    sim = CASES["multiprior"]["sim"]
    df, item, cls, y = simulate_grouped(200, 10, **sim, seed=8)
    m = BKT(n_restarts=2, seed=2, multiprior=True).fit(df)
    out = m.predict(df)
    pc, pk, _ = ref_filter(y, *ref_arrays(m.params_, item, cls, y, prior_by="first"))
    np.testing.assert_allclose(out["p_known"], pk.ravel(), atol=1e-12)
    np.testing.assert_allclose(out["p_correct"].to_numpy().reshape(y.shape)[:, 1:], pc[:, 1:],
                               atol=1e-12)  # fmt: skip
    prior, share = _grouped(m.params_, "prior"), _grouped(m.params_, "share")
    g, s = _grouped(m.params_, "guess")["*"], _grouped(m.params_, "slip")["*"]
    mixed = sum(share[k] * prior[k] for k in prior)
    first = out["p_correct"].to_numpy().reshape(y.shape)[:, 0]
    np.testing.assert_allclose(first, mixed * (1 - s) + (1 - mixed) * g, atol=1e-12)


@pytest.mark.parametrize("kw", [dict(), dict(multigs="item", forgets=True)])
def test_multiprior_loglik_is_the_mixture_first_step_likelihood(kw):
    """The log-likelihood reported for first-response classes (fit, score, and so kt fit,
    kt compare's AIC/BIC) is an independent forward pass whose first response is scored under
    the prior mixed by the training shares, and the rest under the class's prior; it is the
    log-likelihood of the predictions (kt evaluate, held-out scores), not KT-PPS's
    pseudo-likelihood (the first response under the prior it selects)."""
    sim = dict(CASES["multiprior"]["sim"], guess=GUESS3, slip=SLIP3, forget=[0.03] * 3)
    df, item, cls, y = simulate_grouped(300, 12, **sim, seed=12)
    m = BKT(n_restarts=2, seed=2, multiprior=True, **kw).fit(df)
    args = ref_arrays(m.params_, item, cls, y, prior_by="first")
    prior, share = _grouped(m.params_, "prior"), _grouped(m.params_, "share")
    mixed = np.full(y.shape[0], sum(share[k] * prior[k] for k in share))
    pc, _, ll = ref_filter(y, *args, first_prior=mixed)
    assert m.log_likelihood_.sum() == pytest.approx(ll, rel=1e-12)
    assert m.log_likelihood(df) == pytest.approx(ll, rel=1e-12)
    out = m.predict(df).sort_values(["student", "order"], key=lambda s: s.map(_num))
    np.testing.assert_allclose(out["p_correct"], pc.ravel(), atol=1e-12)
    assert np.sum(np.log(np.where(y.ravel() == 1, pc.ravel(), 1 - pc.ravel()))) == (
        pytest.approx(ll, rel=1e-10))  # fmt: skip
    pseudo = ref_filter(y, *args)[2]
    assert abs(pseudo - ll) > 1.0  # the two likelihoods differ on this data


def test_unseen_group_uses_the_skill_mean():
    df, *_ = simulate_grouped(300, 10, [0.3], [0.15] * 3, [0.0] * 3, GUESS3, SLIP3, seed=4)
    m = BKT(n_restarts=2, seed=1, multigs="item").fit(df)
    new = df.copy()
    new["item"] = "q_new"
    p = m.params_
    mean = _grouped(p, "guess")
    twin = p[p["parameter"] != "guess"].copy()
    twin = pd.concat([twin, pd.DataFrame({"skill": ["k"], "parameter": ["guess"], "group": ["*"],
                      "value": [np.mean(list(mean.values()))], "free": [1]})])  # fmt: skip
    twin.loc[twin["parameter"] == "slip", ["group", "value"]] = [
        "*", np.mean(list(_grouped(p, "slip").values()))]  # fmt: skip
    twin = twin.drop_duplicates(["parameter", "group"])
    a = m.predict(new)
    b = BKT().__class__()
    b.params_ = twin
    np.testing.assert_allclose(a["p_correct"], b.predict(new)["p_correct"], atol=1e-12)


def test_init_sets_the_first_restart():
    """With one E-step allowed, the fit stays at the starting values it was given."""
    df, *_ = simulate_grouped(300, 10, [0.3], LEARN3, [0.0] * 3, GUESS3, SLIP3, seed=4)
    start = BKT(n_restarts=2, seed=1, multigs="item").fit(df).params_
    start = start.assign(value=(start["value"] * 0.9).where(start["parameter"] != "forget", 0.0))
    m = BKT(n_restarts=1, max_iter=1, multigs="item", init=start).fit(df)
    merged = m.params_.merge(start, on=["skill", "parameter", "group"])
    np.testing.assert_allclose(merged["value_x"], merged["value_y"], atol=1e-12)
    assert m.log_likelihood_.sum() == pytest.approx(m.log_likelihood(df), rel=1e-12)


def test_classic_fast_path_is_unchanged():
    df, *_ = simulate_grouped(300, 10, [0.3], [0.15] * 3, [0.0] * 3, [0.2] * 3, [0.1] * 3, seed=4)
    classic = BKT(n_restarts=3, seed=1).fit(df)
    assert "parameter" not in classic.params_.columns  # the wide table of classic BKT
    held = BKT(n_restarts=3, seed=1, fixed=pd.DataFrame({"parameter": ["forget"], "value": [0.0]}))
    held.fit(df)  # goes through the variant machinery, same model
    assert held.log_likelihood_.sum() == pytest.approx(classic.log_likelihood_.sum(), rel=1e-8)
    assert classic.n_params_ == held.n_params_ == 4


# -- files and the CLI -------------------------------------------------------------------------


class _Result:
    def __init__(self, code, output):
        self.exit_code = code
        self.output = output


@pytest.fixture
def run(capsys):
    def go(args):
        code = main([str(a) for a in args])
        out = capsys.readouterr()
        return _Result(code, out.out + out.err)

    return go


@pytest.fixture(scope="module")
def data_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("variants")
    df, *_ = simulate_grouped(150, 10, [0.1, 0.6], LEARN3, [0.0] * 3, GUESS3, SLIP3, seed=9)
    df2, *_ = simulate_grouped(150, 10, [0.3], LEARN3, [0.0] * 3, GUESS3, SLIP3, seed=10)
    df2["skill"] = "k2"
    path = d / "responses.csv"
    pd.concat([df, df2]).to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    "options",
    [["--multigs", "item", "--forgets"], ["--multilearn", "item"], ["--multiprior"],
     ["--multipair", "item", "--forgets"], ["--multiprior-col", "klass", "--multigs", "item"]],
)  # fmt: skip
def test_long_params_round_trip_through_cli(tmp_path, data_file, options, run):
    fixed = tmp_path / "fixed.csv"
    pd.DataFrame({"skill": ["*"], "parameter": ["slip"], "group": ["*"], "value": [0.1]}).to_csv(
        fixed, index=False
    )
    r = run(["kt", "fit", str(data_file), "--out", str(tmp_path / "fit"), "--restarts", "2",
              "--fixed", str(fixed), *options])  # fmt: skip
    assert r.exit_code == 0, r.output
    params = pd.read_csv(tmp_path / "fit" / "params.csv")
    assert list(params.columns[:4]) == ["skill", "parameter", "group", "value"]
    assert (params.loc[params["parameter"] == "slip", "value"] == 0.1).all()
    r = run(["kt", "predict", str(data_file), "--params", str(tmp_path / "fit" / "params.csv"),
              "--out", str(tmp_path / "pred")])  # fmt: skip
    assert r.exit_code == 0, r.output
    pred = pd.read_csv(tmp_path / "pred" / "predictions.csv")
    data = pd.read_csv(data_file)
    model = BKT(n_restarts=2, seed=1, fixed=pd.read_csv(fixed),
                **_kwargs(options))  # fmt: skip
    again = model.fit(data).predict(data)
    np.testing.assert_allclose(pred["p_correct"], again["p_correct"], atol=1e-9)
    np.testing.assert_allclose(pred["p_known"], again["p_known"], atol=1e-9)
    r = run(["kt", "evaluate", str(tmp_path / "pred" / "predictions.csv"), "--params",
              str(tmp_path / "fit" / "params.csv"), "--out", str(tmp_path / "ev")])  # fmt: skip
    assert r.exit_code == 0, r.output
    metrics = pd.read_csv(tmp_path / "ev" / "metrics.csv")
    assert metrics.loc[metrics["scope"] == "all", "k"].iloc[0] == model.n_params_


def _kwargs(options):
    kw, i = {}, 0
    while i < len(options):
        name = options[i].lstrip("-").replace("-", "_")
        if name in ("forgets", "multiprior"):
            kw[name] = True
            i += 1
        else:
            kw["multiprior" if name == "multiprior_col" else name] = options[i + 1]
            i += 2
    return kw


def test_wide_params_still_read(tmp_path, data_file, run):
    wide = tmp_path / "wide.csv"
    pd.DataFrame({"skill": ["k", "k2"], "prior": [0.3, 0.3], "learn": [0.1, 0.1],
                  "guess": [0.2, 0.2], "slip": [0.1, 0.1]}).to_csv(wide, index=False)  # fmt: skip
    r = run(["kt", "predict", str(data_file), "--params", str(wide), "--out", str(tmp_path / "p")])
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize(
    "rows, options, message",
    [
        (None, ["--multigs", "nope"], "unknown column 'nope'"),
        (None, ["--multilearn", "item", "--multipair", "item"], "use one"),
        ([("*", "guesss", "*", 0.2)], ["--fixed"], "unknown parameter 'guesss'"),
        ([("*", "guess", "item=zz", 0.2)], ["--multigs", "item", "--fixed"], "unknown group"),
        ([("*", "guess", "*", 1.5)], ["--fixed"], "in [0.0, 1.0], got 1.5"),
        (None, ["--multiprior-col", "item"], "must be constant"),
        ([("nope", "guess", "*", 0.2)], ["--init"], "unknown skill 'nope'"),
    ],
)
def test_bad_input_exits_2(tmp_path, data_file, rows, options, message, run):
    args = ["kt", "fit", str(data_file), "--out", str(tmp_path / "f"), "--restarts", "1"]
    if rows is not None:
        path = tmp_path / "t.csv"
        pd.DataFrame(rows, columns=["skill", "parameter", "group", "value"]).to_csv(
            path, index=False
        )
        options = [*options, str(path)]
    r = run([*args, *options])
    assert r.exit_code == 2, r.output
    assert message in r.output


@pytest.mark.parametrize(
    "row, message",
    [
        (("k", "learnn", "*", 0.2), "unknown parameter"),
        (("k", "guess", "zz", 0.2), "unknown group"),
    ],
)
def test_bad_long_params_file_exits_2(tmp_path, data_file, row, message, run):
    rows = [("k", p, "*", 0.2) for p in ("prior", "learn", "guess", "slip")] + [row]
    rows += [("k2", p, "*", 0.2) for p in ("prior", "learn", "guess", "slip")]
    path = tmp_path / "long.csv"
    pd.DataFrame(rows, columns=["skill", "parameter", "group", "value"]).to_csv(path, index=False)
    r = run(["kt", "predict", str(data_file), "--params", str(path), "--out", str(tmp_path / "p")])
    assert r.exit_code == 2, r.output
    assert message in r.output
