"""Adaptive pairing in the study app (``pairing:`` in ``study.yaml``): the policy of ``pairwise
simulate`` choosing each slot's pair from the judgements stored so far.

Checked against independent computations: the estimates each judgement records equal choix's
MAP fit of the judgements they were fitted on; each adaptive round's first pair is the most
informative one at those estimates; rounds keep every agent's exposure equal; a judge never sees
a pair twice while others are left; the same history gives the same pairs; two hosts choosing
at once never give one place of a stream twice."""

from __future__ import annotations

import json
import re
import sqlite3

import choix
import numpy as np
import pandas as pd
import pytest
import yaml
from fastapi.testclient import TestClient
from scipy.special import expit
from sqlalchemy import create_engine, select, text

from edueval.io import InputError
from edueval.pairwise.pairing import next_in_stream, next_pair, round_pairs
from edueval.study import StudyDB, load_study
from edueval.study.app import create_app
from edueval.study.db import PAIRING_COLUMNS, assignments
from edueval.study.pairing import AdaptivePairer

from .conftest import ADMIN, Participant, comparative_study
from .test_two_hosts import _at_once

K = 8  # agents (scripts) of the one item: 4 pairs a round
AGENTS = [f"s{j}" for j in range(K)]
THETA = dict(zip(AGENTS, np.linspace(-2.0, 2.0, K), strict=True))
REFIT, RIDGE, PER = 4, 0.1, 5
SCRIPT = re.compile(r"script (s\d+)")


def cj_study(folder, policy="adaptive", **pairing) -> object:
    """One item of ``K`` scripts judged on one question (a comparative-judgement study)."""
    folder.mkdir(parents=True, exist_ok=True)
    item = {"id": "essay", "context": "Write about rivers.",
            "replies": {a: f"script {a}" for a in AGENTS}}  # fmt: skip
    (folder / "items.jsonl").write_text(json.dumps(item) + "\n")
    cfg = {"title": "CJ", "kind": "comparative", "items": "items.jsonl", "seed": 11,
           "items_per_participant": PER, "consent": "Consent text.",
           "questions": [{"id": "better", "text": "Which script is better?"}],
           "pairing": {"policy": policy, "refit_every": REFIT, "ridge": RIDGE, **pairing}}  # fmt: skip
    (folder / "study.yaml").write_text(yaml.safe_dump(cfg))
    return folder / "study.yaml"


def judge(label: str, a: str, b: str) -> str:
    """A judge who sees the quality difference, with a fixed pseudo-random slip."""
    u = (sum(map(ord, label + a + b)) * 2654435761 % 2**32) / 2**32
    return "first" if u < expit(THETA[a] - THETA[b]) else "second"


def run_study(path, url, n: int) -> pd.DataFrame:
    """``n`` participants, one after another, answer every slot; the export."""
    study = load_study(path)
    app = create_app(study, url, ADMIN)
    with TestClient(app, raise_server_exceptions=False) as client:
        for row in app.state.db.invite([f"r{i:02d}" for i in range(n)]):
            p = Participant(client, f"http://t/p/{row['token']}")
            r = p.consent()
            while "/a/" in str(r.url):
                assert r.status_code == 200
                a, b = SCRIPT.findall(r.text)[:2]
                r = p.answer_current(r, {"q0": judge(row["label"], a, b)})
            assert "All your answers are saved" in r.text
        df = app.state.db.export()
    app.state.db.close()
    return df


def _choix_fit(judgements: pd.DataFrame, idx: dict[str, int]) -> np.ndarray:
    """choix's MAP estimates (centred) of ``judgements``: its ``alpha`` is the fit's ridge / 2."""
    data = [(idx[r.first], idx[r.second]) if r.outcome == "first"
            else (idx[r.second], idx[r.first]) for r in judgements.itertuples()]  # fmt: skip
    est = choix.opt_pairwise(K, data, alpha=RIDGE / 2, tol=1e-12)
    return est - est.mean()


@pytest.fixture(scope="module")
def sqlite_export(tmp_path_factory) -> pd.DataFrame:
    tmp = tmp_path_factory.mktemp("cj")
    return run_study(cj_study(tmp / "s"), f"sqlite:///{tmp / 'cj.db'}", 16)


# -- the policy, pure -------------------------------------------------------------------------
def test_next_pair_takes_the_most_informative_unmet_partner():
    rng = np.random.default_rng(0)
    for _ in range(300):
        k = int(rng.integers(3, 12))
        est, order = rng.normal(0, 1.5, k), rng.permutation(k)
        free = rng.random(k) < 0.8
        met = np.triu(rng.random((k, k)) < 0.3, 1)
        met = met | met.T
        pair = next_pair(order, free, est, met)
        if free.sum() < 2:
            assert pair is None
            continue
        a, b = pair
        assert a == next(x for x in order if free[x])  # the anchor: first free in the order
        others = [x for x in np.flatnonzero(free) if x != a]
        unmet = [x for x in others if not met[a, x]] or others
        info = {x: expit(est[a] - est[x]) * (1 - expit(est[a] - est[x])) for x in unmet}
        assert info[b] == max(info.values())  # Fisher information p(1 - p), not met before


def test_next_pair_avoids_a_pair_the_judge_has_seen_while_another_is_free():
    est = np.array([0.0, 0.1, 2.0, 2.1])
    order, free = np.array([0, 1, 2, 3]), np.ones(4, dtype=bool)
    assert next_pair(order, free, est) == (0, 1)
    avoid = np.zeros((4, 4), dtype=bool)
    avoid[0, 1] = avoid[1, 0] = True
    assert next_pair(order, free, est, avoid=avoid) == (0, 2)  # the next closest
    avoid[:] = True  # every pair seen: the most informative one again
    assert next_pair(order, free, est, avoid=avoid) == (0, 1)


def test_a_round_closes_early_rather_than_repeat_a_pair_for_a_judge():
    k, order = 4, (lambda r: np.arange(4))  # noqa: E731
    est = np.zeros(4)
    # round 0 holds (0, 1); the next pair of it can only be (2, 3)
    assert next_in_stream(k, [(0, 1)], [0], order, est) == ((2, 3), 0)
    avoid = np.zeros((4, 4), dtype=bool)
    avoid[2, 3] = avoid[3, 2] = True  # ... which this judge has judged: a new round instead
    assert next_in_stream(k, [(0, 1)], [0], order, est, avoid=avoid) == ((0, 1), 1)
    assert next_in_stream(k, [(0, 1), (2, 3)], [0, 0], order, est) == ((0, 1), 1)  # complete
    avoid[:] = True  # every pair judged: the round goes on
    assert next_in_stream(k, [(0, 1)], [0], order, est, avoid=avoid) == ((2, 3), 0)


@pytest.mark.parametrize("k", [6, 7])
def test_rounds_pair_every_object_once(k):
    rng = np.random.default_rng(3)
    for est in (None, rng.normal(size=k)):
        for r in range(2 * k):
            sit_out = r % k if k % 2 else None
            pairs = round_pairs(k, rng, sit_out, est, np.zeros((k, k)))
            seen = sorted(x for p in pairs for x in p)
            assert seen == sorted(set(range(k)) - {sit_out})


# -- settings -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("pairing", "message"),
    [
        ("adaptiv", "unknown pairing policy 'adaptiv'; did you mean 'adaptive'?"),
        ({"policy": "adaptive", "refit_evry": 3}, "unknown pairing setting 'refit_evry'; did you"),
        ({"policy": "adaptive", "question": "nope"}, "pairing question 'nope' is not a question"),
        ({"policy": "adaptive", "ridge": 0}, "pairing ridge must be a number > 0"),
        ({"policy": "adaptive", "refit_every": 0}, "refit_every must be between 1"),
        (["adaptive"], "expected a policy (random, adaptive, adaptive-shared)"),
    ],
)
def test_bad_pairing_settings_are_refused(tmp_path, pairing, message):
    path = comparative_study(tmp_path / "s", pairing=pairing)
    with pytest.raises(InputError, match=re.escape(message)):
        load_study(path)


def test_unknown_policy_is_one_line_and_exit_2(tmp_path, cli):
    path = comparative_study(tmp_path / "s", pairing="adaptiv")
    r = cli("study", "invite", path, "--n", "2", "--out", tmp_path / "links.csv")
    assert r.code == 2 and r.err.count("\n") == 1, r.err
    line = next(n for n, t in enumerate(path.read_text().splitlines(), 1) if "pairing" in t)
    assert f"study.yaml, line {line}, column 'pairing'" in r.err
    assert "(known: random, adaptive, adaptive-shared)" in r.err
    assert not (tmp_path / "links.csv").exists()


def test_adaptive_pairing_is_for_comparative_studies(tmp_path):
    path = comparative_study(tmp_path / "s")
    cfg = yaml.safe_load(path.read_text())
    cfg.update(kind="open", pairing="adaptive", practice=None)
    (tmp_path / "s" / "open.jsonl").write_text(
        '{"id": "q1", "question": "?", "correct_answer": "1"}\n'
    )
    cfg["items"] = "open.jsonl"
    path.write_text(yaml.safe_dump(cfg))
    with pytest.raises(InputError, match="pairing 'adaptive' is for comparative studies"):
        load_study(path)


def test_default_is_random_and_recorded(tmp_path):
    study = load_study(comparative_study(tmp_path / "s"))
    assert study.pairing.policy == "random" and not study.pairing.adaptive


# -- the app --------------------------------------------------------------------------------------
def test_each_judgement_records_policy_panel_and_estimates(sqlite_export):
    df = sqlite_export
    assert len(df) == 16 * PER and (df["pairing"] == "adaptive").all()
    assert (df["panel"] == df["rater"].str[1:].astype(int) % 2).all()  # two panels by invite no.
    for panel, stream in df.groupby("panel"):
        stream = stream.sort_values("pair_seq")
        assert list(stream["pair_seq"]) == list(range(len(stream)))
        assert stream["pairing_round"].is_monotonic_increasing
        assert (stream["fitted_on"] % REFIT == 0).all() and stream[
            "fitted_on"
        ].is_monotonic_increasing
        # participants answered one after another: stored order = export order, so the panel's
        # first m rows are the judgements each fit used; choix's MAP of them, independently
        done = df[df["panel"] == panel]
        idx = {a: n for n, a in enumerate(AGENTS)}
        for row in stream[stream["fitted_on"] > 0].itertuples():
            ref = _choix_fit(done.iloc[: row.fitted_on], idx)
            assert row.est_first == pytest.approx(ref[idx[row.first]], abs=1e-5)
            assert row.est_second == pytest.approx(ref[idx[row.second]], abs=1e-5)
            assert row.se_first > 0 and row.se_second > 0
        first = stream[stream["fitted_on"] == 0]  # before any fit: estimates 0, no SE
        assert (first["est_first"] == 0).all() and first["se_first"].isna().all()


def test_adaptive_rounds_choose_informative_pairs(sqlite_export):
    """The first pair of each adaptive round (every agent free) is the anchor and its closest
    unmet partner at choix's estimates; and adaptive rounds pair closer estimates than random
    ones."""
    df = sqlite_export
    idx = {a: n for n, a in enumerate(AGENTS)}
    checked = 0
    for panel, stream in df.groupby("panel"):
        stream = stream.sort_values("pair_seq").reset_index(drop=True)
        done = df[df["panel"] == panel]
        for row in stream[
            (stream["pair_seq"] % (K // 2) == 0) & (stream["pairing_round"] >= 2)
        ].itertuples():
            est = _choix_fit(done.iloc[: row.fitted_on], idx)
            met = {frozenset((r.first, r.second)) for r in stream.iloc[: row.pair_seq].itertuples()}
            a, b = idx[row.first], idx[row.second]
            ok = []
            for x, y in ((a, b), (b, a)):  # either may have been the anchor
                unmet = [
                    z for z in range(K) if z != x and frozenset((AGENTS[x], AGENTS[z])) not in met
                ]
                unmet = unmet or [z for z in range(K) if z != x]
                ok.append(abs(est[x] - est[y]) <= min(abs(est[x] - est[z]) for z in unmet) + 1e-6)
            assert any(ok), (panel, row.pair_seq)
            checked += 1
    assert checked >= 4
    # the first adaptive round (close partners still unmet): the chosen pairs' estimates are
    # much closer than those of pairs drawn at random from the same estimates (later rounds
    # prefer partners not met before, and with 8 scripts those are soon the far ones)
    ratios = []
    for panel, stream in df.groupby("panel"):
        done = df[df["panel"] == panel]
        for row in stream[stream["pairing_round"] == 2].itertuples():
            est = _choix_fit(done.iloc[: row.fitted_on], idx)
            spread = np.abs(est[:, None] - est[None, :])[np.triu_indices(K, 1)].mean()
            ratios.append(abs(est[idx[row.first]] - est[idx[row.second]]) / spread)
    assert len(ratios) == 2 * K // 2 and np.mean(ratios) < 0.7


def test_exposure_stays_balanced_and_no_judge_sees_a_pair_twice(sqlite_export):
    """Each round pairs every agent once; a round ends short only when the judge of the next
    place had judged every pair its free agents could still make."""
    df = sqlite_export
    pairs = df.apply(lambda r: frozenset((r["first"], r["second"])), axis=1)
    assert not pd.DataFrame({"rater": df["rater"], "pair": pairs}).duplicated().any()
    short = 0
    for _, stream in df.groupby("panel"):
        stream = stream.sort_values("pair_seq")
        rounds = [g for _, g in stream.groupby("pairing_round")]
        for this, after in zip(rounds, rounds[1:], strict=False):
            shown = pd.concat([this["first"], this["second"]])
            assert not shown.duplicated().any()  # no agent twice in a round
            if len(this) < K // 2:  # closed early: its judge had judged every remaining pair
                short += 1
                left = sorted(set(AGENTS) - set(shown))
                judge = after.iloc[0]["rater"]
                seen = set(pairs[df["rater"] == judge])
                assert all(frozenset((x, y)) in seen for x in left for y in left if x < y)
    assert short <= 2
    counts = (
        pd.concat([df["first"], df["second"]])
        .groupby(df["panel"].repeat(1).tolist() * 2)
        .value_counts()
    )
    for panel in (0, 1):
        assert counts[panel].max() - counts[panel].min() <= 1 + short  # exposure balanced


def test_same_history_gives_the_same_pairs(tmp_path, sqlite_export):
    again = run_study(cj_study(tmp_path / "s"), f"sqlite:///{tmp_path / 'again.db'}", 16)
    cols = ["rater", "first", "second", "pair_seq", "est_first", "se_second"]
    pd.testing.assert_frame_equal(again[cols], sqlite_export[cols])


def test_export_round_trip_through_pairwise_fit(tmp_path, sqlite_export, cli):
    csv = tmp_path / "comparisons.csv"
    sqlite_export.to_csv(csv, index=False)
    r = cli("pairwise", "fit", csv, "--method", "ml", "--out", tmp_path / "fit")
    assert r.code == 0, r.err
    ab = pd.read_csv(tmp_path / "fit" / "abilities.csv")
    assert sorted(ab["agent"]) == AGENTS
    top = ab.sort_values("alpha_mean")["agent"].tolist()
    assert top[-1] in ("s6", "s7") and top[0] in ("s0", "s1")  # the judges' quality order


def test_adaptive_shared_pairs_in_one_stream(tmp_path):
    df = run_study(cj_study(tmp_path / "s", "adaptive-shared"), f"sqlite:///{tmp_path / 'x.db'}", 4)
    assert (df["pairing"] == "adaptive-shared").all() and (df["panel"] == 0).all()
    assert sorted(df["pair_seq"]) == list(range(4 * PER))


def test_a_slot_is_answered_only_after_its_pair_is_shown(tmp_path, db_url):
    study = load_study(cj_study(tmp_path / "s"))
    app = create_app(study, db_url, ADMIN)
    with TestClient(app, raise_server_exceptions=False) as client:
        row = app.state.db.invite(["ann"])[0]
        p = Participant(client, f"http://t/p/{row['token']}")
        r = p.consent()
        aid = app.state.db.assignments_of(app.state.db.participant(row["token"])["id"])[1]["id"]
        sent = client.post(f"{p.path}/a/{aid}", data={"csrf": re.search(
            r'name="csrf" value="([^"]+)"', r.text)[1], "q0": "first"}, follow_redirects=False)  # fmt: skip
        assert sent.status_code == 303 and sent.headers["location"].endswith(f"/a/{aid}")
        assert app.state.db.status()["responses"] == 0
    app.state.db.close()


@pytest.mark.parametrize("hosts", [2])
def test_two_hosts_choosing_at_once_give_each_place_once(tmp_path, db_url, hosts):
    """Eight threads on two hosts (their own engines and caches) open 40 slots of one item at
    once, each slot twice: every slot gets one pair, every place of a stream is taken once."""
    study = load_study(cj_study(tmp_path / "s"))
    dbs = [StudyDB(study, db_url) for _ in range(hosts)]
    try:
        dbs[0].invite([f"r{i}" for i in range(8)])
        pairers = [AdaptivePairer(study, db) for db in dbs]
        with dbs[0].engine.connect() as c:
            slots = [dict(r) for r in c.execute(select(assignments)).mappings()]

        def work(t: int) -> list:
            return [pairers[t % hosts].choose(s)["pair_seq"] for s in slots[t % 4 :: 4]]

        results = _at_once(8, work)
        assert all(isinstance(x, list) for x in results), results
        with dbs[0].engine.connect() as c:
            stored = pd.DataFrame(c.execute(select(assignments)).mappings().all())
    finally:
        for db in dbs:
            db.close()
    assert stored["first"].notna().all()
    for _, stream in stored.groupby("panel"):
        assert sorted(stream["pair_seq"]) == list(range(len(stream)))
    # a slot opened twice shows the same pair both times
    seq = {
        s["id"]: q
        for t, res in enumerate(results)
        for s, q in zip(slots[t % 4 :: 4], res, strict=True)
    }
    assert all(stored.set_index("id").loc[i, "pair_seq"] == q for i, q in seq.items())


def test_slots_invited_adaptive_keep_their_policy_after_the_study_changes_it(tmp_path):
    path = cj_study(tmp_path / "s")
    url = f"sqlite:///{tmp_path / 'x.db'}"
    db = StudyDB(load_study(path), url)
    token = db.invite(["ann"])[0]["token"]
    db.close()
    cfg = yaml.safe_load(path.read_text())
    cfg["pairing"] = "random"  # the researcher switches back; ann's slots have no pair yet
    path.write_text(yaml.safe_dump(cfg))
    df = _answer_all(load_study(path), url, token)
    assert len(df) == PER and (df["pairing"] == "adaptive").all()
    assert sorted(df["pair_seq"]) == list(range(PER))


def _answer_all(study, db_url, token) -> pd.DataFrame:
    app = create_app(study, db_url, ADMIN)
    with TestClient(app, raise_server_exceptions=False) as client:
        p = Participant(client, f"http://t/p/{token}")
        r = p.consent() if "Consent" in p.get().text else p.get()
        if "Practice item" in r.text:
            r = p.answer_current(r, {"q0": "second", "q1": "second"})
        while "/a/" in str(r.url):
            assert r.status_code == 200, r.text[:300]
            r = p.answer_current(r, {"q0": "first", "q1": "tie"})
        df = app.state.db.export()
    app.state.db.close()
    return df


def test_an_older_database_gets_the_pairing_columns(tmp_path, db_url, cli):
    """A database made before adaptive pairing (no pairing columns): `study export` reads it as
    it is; a host that opens it adds the columns (its pairs read as random)."""
    path = comparative_study(tmp_path / "s")
    study = load_study(path)
    db = StudyDB(study, db_url)
    ann, bob = (r["token"] for r in db.invite(["ann", "bob"]))
    db.close()
    _answer_all(study, db_url, ann)
    engine = create_engine(db_url)
    with engine.begin() as c:  # back to the tables of before
        c.execute(text("DROP INDEX uq_assignment_pair"))
        for col in PAIRING_COLUMNS:
            c.execute(text(f'ALTER TABLE assignments DROP COLUMN "{col.name}"'))
    engine.dispose()
    r = cli("study", "export", path, "--db", db_url, "--out", tmp_path / "before")
    assert r.code == 0, r.err
    before = pd.read_csv(tmp_path / "before" / "comparisons.csv")
    assert len(before) == 3 * 2 and (before["pairing"] == "random").all()
    assert before["est_first"].isna().all()
    df = _answer_all(study, db_url, bob)  # a host opens it: the columns come back
    assert len(df) == 2 * 3 * 2 and (df["pairing"] == "random").all()
    if db_url.startswith("sqlite"):
        cols = {r[1] for r in sqlite3.connect(db_url.removeprefix("sqlite:///")).execute(
            "PRAGMA table_info(assignments)")}  # fmt: skip
        assert {c.name for c in PAIRING_COLUMNS} <= cols


def test_a_host_counts_its_own_answers_and_another_hosts_within_a_second(tmp_path, monkeypatch):
    """The judgements a stream's estimates are fitted on: a host adds its own answers as it
    stores them and counts the database again at most every COUNT_TTL_S seconds, so another
    host's answers reach it that much later; a fit records the judgements it used."""
    from edueval.study import pairing as pairing_module

    clock = [1000.0]
    monkeypatch.setattr(pairing_module.time, "monotonic", lambda: clock[0])
    study = load_study(cj_study(tmp_path / "s", refit_every=1))
    db = StudyDB(study, f"sqlite:///{tmp_path / 'x.db'}")
    try:
        db.invite(["ann", "bob"])
        here, there = AdaptivePairer(study, db), AdaptivePairer(study, db)
        with db.engine.connect() as c:
            slots = [dict(r) for r in c.execute(select(assignments)).mappings()]
        panel = slots[0]["panel"]
        mine = [s for s in slots if s["panel"] == panel][:3]
        assert here._judged("essay", panel) == 0
        for s in mine[:2]:  # answered through the other host
            db.save(there.choose(s)["id"], {"better": "first"}, {})
        assert here._judged("essay", panel) == 0  # not counted again yet
        clock[0] += pairing_module.COUNT_TTL_S
        assert here._judged("essay", panel) == 2
        db.save(here.choose(mine[2])["id"], {"better": "second"}, {})
        here.answered("essay", panel)  # the app tells its pairer of its own answers
        assert here._judged("essay", panel) == 2 + 1
        fit = here.estimates("essay", panel)
        assert fit.m == 3 and np.isfinite(fit.est).all()
        here.answered("essay", panel)  # an answer counted that is not stored: the fit says so
        assert here.estimates("essay", panel).m == 3
    finally:
        db.close()
