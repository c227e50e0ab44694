"""P5's `boot` on the one cell where it misses its level (issue 34; `ability_lengths`, 20 students):
what else was tried. Each part simulates `design_counts(..., "ability_lengths")` studies at
d = diff and, on the same studies, compares the current `boot` draw rate with alternatives for the
TOST's two one-sided tests (the superiority tests are `boot`'s throughout).

    python benchmarks/turing_skew.py variants 20 10000 0.1   # jackknife, eff. df, own-leverage boot-t, BCa
    python benchmarks/turing_skew.py tilt 20 2000 0.1        # null-imposed (exponentially tilted) pairs bootstrap
    python benchmarks/turing_skew.py double 20 2000 0.1      # double (calibrated) bootstrap-t, 199 x 99
    python benchmarks/turing_skew.py score 4000 ability_lengths,ability 10,20,40,80  # null-centred SE
    python benchmarks/turing_skew.py diag 20 10000 0.1       # false draws by number of preferring students
    python benchmarks/turing_skew.py unweighted 4000 ability_lengths,ability 10,20,40,80,160
    python benchmarks/turing_skew.py misc                    # BM df vs effective G; double-bootstrap time
    python benchmarks/turing_skew.py fdb 20 2000 0.1         # boot with the fast / full double bootstrap

Arguments after the part: students, studies, d (and optionally the design); for `score`: studies,
designs, sizes (it prints current / score-type draw % at d = +eps, -eps, 0).
"""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def part_variants(argv: list[str]) -> None:  # noqa: C901, PLR0915
    import numpy as np
    import scipy.stats as sps

    from edueval.turing.power import design_counts
    from edueval.turing.stats import (
        VERDICTS,
        F,
        _skew_from_moments,
        batch_tests,
        floored_cr3,
        hall,
    )

    EPS, DELTA, A = 0.10, 0.05, 0.05
    DRAW = VERDICTS.index("draw")
    G = int(argv[0])
    S = int(argv[1])
    diff = float(argv[2])
    design = argv[3] if len(argv) > 3 else "ability_lengths"
    B = 399
    rng = np.random.default_rng(12345 + G + int(diff * 100))

    def stat_parts(z, n):
        # z,n [..., G]: mean, cr3 se, skew (hall), per current code
        N = n.sum(-1)
        m = z.sum(-1) / N
        e = z - n * m[..., None]
        g = z.shape[-1]
        lev = n / N[..., None]
        se = np.sqrt((e**2 / (1 - lev) ** 2).sum(-1)) / N
        skew = _skew_from_moments((e**2).sum(-1) / g, (e**3).sum(-1) / g, g, np.ones(m.shape, bool))
        return m, se, skew, e

    res = {}

    def add(k, v):
        res.setdefault(k, []).append(v)

    t0 = time.time()
    chunk = 500
    for c0 in range(0, S, chunk):
        k = min(chunk, S - c0)
        counts = design_counts(rng, k, G, design, diff=diff)
        bt = batch_tests(
            counts,
            eps=EPS,
            delta=DELTA,
            alpha=A,
            cluster_se="boot",
            n_boot=B,
            seed=int(rng.integers(2**62)),
        )
        sup = (bt.sup["clustered"]["ai"]["p"] < A) & (bt.sup["clustered"]["human"]["p"] < A)
        low = bt.tost_p_lower["clustered"] < A

        def draw(up, sup=sup, low=low):
            return sup & low & up

        add("boot (current)", bt.verdict["clustered"] == DRAW)
        z = counts[..., F["A"]] - counts[..., F["H"]]
        n = counts[..., F["n"]]
        q = counts[..., F["A"]] + counts[..., F["H"]] - 2 * counts[..., F["AH"]]
        fl = floored_cr3(z, n, q.sum(-1))
        add("t-table half only (floored CR3+Hall)", draw(fl.p_lower(EPS) < A))
        m, se, skew, e = stat_parts(z, n)
        # effective-G df
        neff = n.sum(-1) ** 2 / (n**2).sum(-1)
        fl_eff = floored_cr3(z, n, q.sum(-1))
        fl_eff.df = neff - 1
        add("t-table, df = (Σn)²/Σn² − 1", draw(fl_eff.p_lower(EPS) < A))
        # jackknife (leave-one-student-out) of the ratio
        N = n.sum(-1)
        Z = z.sum(-1)
        theta_i = (Z[:, None] - z) / (N[:, None] - n)
        tbar = theta_i.mean(-1)
        mj = G * m - (G - 1) * tbar
        flj = floored_cr3(z, n, q.sum(-1))
        flj.mean = mj
        add("t-table on jackknife bias-corrected d", draw(flj.p_lower(EPS) < A))
        # bootstrap in 3D, resample indices
        idx = rng.integers(0, G, size=(k, B, G))
        zs = np.take_along_axis(np.broadcast_to(z[:, None, :], idx.shape), idx, -1)
        ns = np.take_along_axis(np.broadcast_to(n[:, None, :], idx.shape), idx, -1)
        ms, ses, sks, es = stat_parts(zs, ns)
        varies = np.abs(es).max(-1) > 1e-9
        # current-style data stat: hall((m-eps)/se, skew)
        T = hall((m - EPS) / se, skew)
        Ts = np.where(varies, hall((ms - m[:, None]) / ses, sks), np.nan)
        cnt = (~np.isnan(Ts)).sum(-1)
        pb = (1 + (Ts <= T[:, None]).sum(-1)) / (cnt + 1)
        add("bootstrap-t half only, own leverages", draw(pb < A))
        add("max(t-table, bootstrap-t own leverages)", draw(np.maximum(pb, fl.p_lower(EPS)) < A))
        # plain t (no hall) bootstrap-t, own leverage
        T0 = (m - EPS) / se
        Ts0 = np.where(varies, (ms - m[:, None]) / ses, np.nan)
        pb0 = (1 + (Ts0 <= T0[:, None]).sum(-1)) / (cnt + 1)
        add("bootstrap-t (no Hall) own leverages", draw(pb0 < A))
        add("max(t-table, bootstrap-t no Hall)", draw(np.maximum(pb0, fl.p_lower(EPS)) < A))
        # BCa upper 95% bound of d
        z0 = sps.norm.ppf(
            np.clip(
                (ms < m[:, None]).mean(-1) + 0.5 * (ms == m[:, None]).mean(-1),
                1 / (2 * B),
                1 - 1 / (2 * B),
            )
        )
        dd = tbar[:, None] - theta_i
        acc = (dd**3).sum(-1) / (6 * ((dd**2).sum(-1)) ** 1.5)
        acc = np.nan_to_num(acc)
        zq = sps.norm.ppf(0.95)
        aq = sps.norm.cdf(z0 + (z0 + zq) / (1 - acc * (z0 + zq)))
        msort = np.sort(ms, -1)
        qi = np.clip(np.ceil(aq * (B + 1)).astype(int) - 1, 0, B - 1)
        hi = np.take_along_axis(msort, qi[:, None], -1)[:, 0]
        add("BCa 90% interval, upper < ε", draw(hi < EPS))
        add("max(t-table, BCa)", draw((hi < EPS) & (fl.p_lower(EPS) < A)))
        # percentile
        hi_p = msort[:, int(np.ceil(0.95 * (B + 1))) - 1]
        add("percentile 90% interval", draw(hi_p < EPS))
        # t-table with df=G_eff-1 & bootstrap own lev
        add("max(t eff-df, boot-t own lev)", draw(np.maximum(pb, fl_eff.p_lower(EPS)) < A))
        add("max(t jack-mean, boot-t own lev)", draw(np.maximum(pb, flj.p_lower(EPS)) < A))
        # studentised jackknife bias-corrected bootstrap-t: jack mean in both data and resamples? skip
        print(c0, time.time() - t0, file=sys.stderr, flush=True)
    mc = np.sqrt(A * (1 - A) / S)
    print(
        f"{design} G={G} d={diff} S={S} bound {100 * (A + 2 * mc):.2f}  ({time.time() - t0:.0f}s)"
    )
    for kk, v in res.items():
        r = np.concatenate(v).mean()
        print(f"  {kk:45s} {100 * r:6.2f}")


def part_tilt(argv: list[str]) -> None:  # noqa: C901, PLR0915
    import numpy as np

    from edueval.turing.power import design_counts
    from edueval.turing.stats import VERDICTS, F, _skew_from_moments, batch_tests, floored_cr3, hall

    EPS, DELTA, A = 0.10, 0.05, 0.05
    DRAW = VERDICTS.index("draw")
    G = int(argv[0])
    S = int(argv[1])
    diff = float(argv[2])
    design = argv[3] if len(argv) > 3 else "ability_lengths"
    B = 399
    rng = np.random.default_rng(999 + G + int(diff * 100))

    def stat_parts(z, n):
        N = n.sum(-1)
        m = z.sum(-1) / N
        e = z - n * m[..., None]
        g = z.shape[-1]
        lev = n / N[..., None]
        se = np.sqrt((e**2 / (1 - lev) ** 2).sum(-1)) / N
        skew = _skew_from_moments((e**2).sum(-1) / g, (e**3).sum(-1) / g, g, np.ones(m.shape, bool))
        return m, se, skew, e

    def tilt(z, n, th):
        r = z - th * n
        sc = np.sqrt((r**2).mean(-1, keepdims=True))
        sc[sc == 0] = 1
        s = r / sc
        lam = np.zeros(z.shape[0])
        for _ in range(50):
            w = np.exp(np.clip(lam[:, None] * s, -50, 50))
            f = (w * s).sum(-1)
            fp = (w * s * s).sum(-1)
            lam = np.clip(lam - f / np.maximum(fp, 1e-300), -30, 30)
        w = np.exp(np.clip(lam[:, None] * s, -50, 50))
        p = w / w.sum(-1, keepdims=True)
        ok = (s.max(-1) > 0) & (s.min(-1) < 0)
        return p, ok

    def draw_idx(p, k):
        cdf = np.cumsum(p, -1)
        cdf[:, -1] = 1.0
        u = rng.random((p.shape[0], k, p.shape[1]))
        return (u[..., None] > cdf[:, None, None, :]).sum(-1)

    res = {}

    def add(k, v):
        res.setdefault(k, []).append(v)

    t0 = time.time()
    chunk = 250
    for c0 in range(0, S, chunk):
        k = min(chunk, S - c0)
        counts = design_counts(rng, k, G, design, diff=diff)
        bt = batch_tests(
            counts,
            eps=EPS,
            delta=DELTA,
            alpha=A,
            cluster_se="boot",
            n_boot=B,
            seed=int(rng.integers(2**62)),
        )
        sup = (bt.sup["clustered"]["ai"]["p"] < A) & (bt.sup["clustered"]["human"]["p"] < A)
        z = counts[..., F["A"]] - counts[..., F["H"]]
        n = counts[..., F["n"]]
        q = counts[..., F["A"]] + counts[..., F["H"]] - 2 * counts[..., F["AH"]]
        fl = floored_cr3(z, n, q.sum(-1))
        add("boot (current)", bt.verdict["clustered"] == DRAW)
        m, se, skew, e = stat_parts(z, n)
        pu = {}
        pl = {}
        for th in (EPS, -EPS):
            p, ok = tilt(z, n, th)
            idx = draw_idx(p, B)
            zs = np.take_along_axis(np.broadcast_to(z[:, None, :], idx.shape), idx, -1)
            ns = np.take_along_axis(np.broadcast_to(n[:, None, :], idx.shape), idx, -1)
            ms, ses, sks, es = stat_parts(zs, ns)
            varies = np.abs(es).max(-1) > 1e-9
            T = hall((m - th) / se, skew)
            Ts = np.where(varies, hall((ms - th) / ses, sks), np.nan)
            cnt = (~np.isnan(Ts)).sum(-1)
            T0 = (m - th) / se
            Ts0 = np.where(varies, (ms - th) / ses, np.nan)
            if th > 0:  # H0 d >= eps; reject when small
                pl["tilt_t_hall"] = np.where(
                    ok, (1 + (Ts <= T[:, None]).sum(-1)) / (cnt + 1), 1 / (B + 1)
                )
                pl["tilt_t"] = np.where(
                    ok, (1 + (Ts0 <= T0[:, None]).sum(-1)) / (cnt + 1), 1 / (B + 1)
                )
                pl["tilt_pct"] = np.where(
                    ok, (1 + (ms <= m[:, None]).sum(-1)) / (B + 1), 1 / (B + 1)
                )
            else:
                pu["tilt_t_hall"] = np.where(
                    ok, (1 + (Ts >= T[:, None]).sum(-1)) / (cnt + 1), 1 / (B + 1)
                )
                pu["tilt_t"] = np.where(
                    ok, (1 + (Ts0 >= T0[:, None]).sum(-1)) / (cnt + 1), 1 / (B + 1)
                )
                pu["tilt_pct"] = np.where(
                    ok, (1 + (ms >= m[:, None]).sum(-1)) / (B + 1), 1 / (B + 1)
                )
        for key in pl:
            add(f"{key} only", sup & (pl[key] < A) & (pu[key] < A))
            add(
                f"max(t-table, {key})",
                sup
                & (np.maximum(pl[key], fl.p_lower(EPS)) < A)
                & (np.maximum(pu[key], fl.p_upper(-EPS)) < A),
            )
            add(
                f"max(current boot, {key})",
                sup
                & (np.maximum(pl[key], bt.tost_p_upper["clustered"]) < A)
                & (np.maximum(pu[key], bt.tost_p_lower["clustered"]) < A),
            )
        print(c0, time.time() - t0, file=sys.stderr, flush=True)
    mc = np.sqrt(A * (1 - A) / S)
    print(
        f"{design} G={G} d={diff} S={S} bound {100 * (A + 2 * mc):.2f}  ({time.time() - t0:.0f}s)"
    )
    for kk, v in res.items():
        print(f"  {kk:45s} {100 * np.concatenate(v).mean():6.2f}")


def part_double(argv: list[str]) -> None:  # noqa: C901, PLR0915
    import numpy as np

    from edueval.turing.power import design_counts
    from edueval.turing.stats import (
        VERDICTS,
        F,
        MeanEstimate,
        _skew_from_moments,
        batch_tests,
        floored_cr3,
        hall,
    )

    EPS, DELTA, A = 0.10, 0.05, 0.05
    DRAW = VERDICTS.index("draw")
    G = int(argv[0])
    S = int(argv[1])
    diff = float(argv[2])
    design = argv[3] if len(argv) > 3 else "ability_lengths"
    BO, BI = 199, 99
    rng = np.random.default_rng(4242 + G + int(diff * 100))

    def stat_parts(z, n):
        N = n.sum(-1)
        m = z.sum(-1) / N
        e = z - n * m[..., None]
        g = z.shape[-1]
        lev = n / N[..., None]
        se = np.sqrt((e**2 / (1 - lev) ** 2).sum(-1)) / N
        skew = _skew_from_moments((e**2).sum(-1) / g, (e**3).sum(-1) / g, g, np.ones(m.shape, bool))
        return m, se, skew, e

    def tstat(z, n, center):
        m, se, sk, e = stat_parts(z, n)
        varies = np.abs(e).max(-1) > 1e-9
        return np.where(varies, hall((m - center) / se, sk), np.nan), m

    def gather(x, idx):
        return np.take_along_axis(np.broadcast_to(x[..., None, :], idx.shape), idx, -1)

    res = {}

    def add(k, v):
        res.setdefault(k, []).append(v)

    t0 = time.time()
    chunk = 40
    for c0 in range(0, S, chunk):
        k = min(chunk, S - c0)
        counts = design_counts(rng, k, G, design, diff=diff)
        bt = batch_tests(
            counts,
            eps=EPS,
            delta=DELTA,
            alpha=A,
            cluster_se="boot",
            n_boot=399,
            seed=int(rng.integers(2**62)),
        )
        sup = (bt.sup["clustered"]["ai"]["p"] < A) & (bt.sup["clustered"]["human"]["p"] < A)
        z = counts[..., F["A"]] - counts[..., F["H"]]
        n = counts[..., F["n"]]
        q = counts[..., F["A"]] + counts[..., F["H"]] - 2 * counts[..., F["AH"]]
        fl = floored_cr3(z, n, q.sum(-1))
        add("boot (current)", bt.verdict["clustered"] == DRAW)
        idx = rng.integers(0, G, size=(k, BO, G))
        zs, ns = gather(z, idx), gather(n, idx)
        idx2 = rng.integers(0, G, size=(k, BO, BI, G))
        zss, nss = gather(zs, idx2), gather(ns, idx2)
        m = z.sum(-1) / n.sum(-1)
        Tst, ms = tstat(zs, ns, m[:, None])  # outer T*
        Tss, _ = tstat(zss, nss, ms[..., None])  # inner T**
        cin = (~np.isnan(Tss)).sum(-1)
        cout = (~np.isnan(Tst)).sum(-1)
        p = {}
        for th, side in ((EPS, "lo"), (-EPS, "hi")):
            T, _ = tstat(z, n, th)
            if side == "lo":
                p1 = (1 + (Tst <= T[:, None]).sum(-1)) / (cout + 1)
                pst = (1 + (Tss <= Tst[..., None]).sum(-1)) / (cin + 1)  # p* of each outer resample
            else:
                p1 = (1 + (Tst >= T[:, None]).sum(-1)) / (cout + 1)
                pst = (1 + (Tss >= Tst[..., None]).sum(-1)) / (cin + 1)
            pst = np.where(np.isnan(Tst), np.nan, pst)
            p2 = (1 + (pst <= p1[:, None]).sum(-1)) / (cout + 1)
            p[side] = (p1, p2)
        add("single bootstrap-t (B=199)", sup & (p["lo"][0] < A) & (p["hi"][0] < A))
        add("double bootstrap-t (199x99)", sup & (p["lo"][1] < A) & (p["hi"][1] < A))
        add(
            "max(t-table, double)",
            sup
            & (np.maximum(p["lo"][1], fl.p_lower(EPS)) < A)
            & (np.maximum(p["hi"][1], fl.p_upper(-EPS)) < A),
        )
        add(
            "max(current boot, double)",
            sup
            & (np.maximum(p["lo"][1], bt.tost_p_upper["clustered"]) < A)
            & (np.maximum(p["hi"][1], bt.tost_p_lower["clustered"]) < A),
        )
        # unweighted student means, t + hall, G-1 df
        dg = z / n
        mu = dg.mean(-1)
        r = dg - mu[:, None]
        seu = r.std(-1, ddof=1) / np.sqrt(G)
        sku = _skew_from_moments((r**2).mean(-1), (r**3).mean(-1), G, np.ones(k, bool))
        eu = MeanEstimate(mu, seu, np.full(k, G - 1.0), sku, seu == 0)
        add(
            "unweighted student means, t+Hall", sup & (eu.p_lower(EPS) < A) & (eu.p_upper(-EPS) < A)
        )
        # score-type: residuals about the null value
        for th, side in ((EPS, "lo"), (-EPS, "hi")):
            N = n.sum(-1)
            rr = z - th * n
            lev = n / N[:, None]
            ses = np.sqrt((rr**2 / (1 - lev) ** 2).sum(-1)) / N
            es = MeanEstimate(m, np.maximum(ses, fl.se), fl.df, fl.skew, fl.flat)
            p[side + "s"] = es.p_lower(th) if side == "lo" else es.p_upper(th)
        add("score-type SE (null-centred), t-table", sup & (p["los"] < A) & (p["his"] < A))
        add(
            "max(current boot, score t-table)",
            sup
            & (np.maximum(p["los"], bt.tost_p_upper["clustered"]) < A)
            & (np.maximum(p["his"], bt.tost_p_lower["clustered"]) < A),
        )
        if c0 % 400 == 0:
            print(c0, time.time() - t0, file=sys.stderr, flush=True)
    mc = np.sqrt(A * (1 - A) / S)
    print(
        f"{design} G={G} d={diff} S={S} bound {100 * (A + 2 * mc):.2f}  ({time.time() - t0:.0f}s)"
    )
    for kk, v in res.items():
        print(f"  {kk:45s} {100 * np.concatenate(v).mean():6.2f}")


def part_score(argv: list[str]) -> None:  # noqa: C901, PLR0915
    import numpy as np

    from edueval.turing.power import design_counts
    from edueval.turing.stats import VERDICTS, F, MeanEstimate, batch_tests, floored_cr3

    EPS, DELTA, A = 0.10, 0.05, 0.05
    DRAW = VERDICTS.index("draw")
    S = int(argv[0])
    designs = argv[1].split(",")
    sizes = [int(x) for x in argv[2].split(",")]

    def score_p(z, n, q, th, side, fl):
        N = n.sum(-1)
        rr = z - th * n
        lev = n / N[..., None]
        ses = np.sqrt((rr**2 / (1 - lev) ** 2).sum(-1)) / N
        es = MeanEstimate(
            z.sum(-1) / N, np.where(fl.flat, 0, np.maximum(ses, fl.se)), fl.df, fl.skew, fl.flat
        )
        return es.p_lower(th) if side == "lo" else es.p_upper(th)

    print(f"S={S} bound {100 * (A + 2 * np.sqrt(A * (1 - A) / S)):.2f}")
    for design in designs:
        for G in sizes:
            out = []
            for diff in (EPS, -EPS, 0.0):
                rng = np.random.default_rng([G, int(1000 * diff) + 500, 17])
                cur = sc = 0
                for c0 in range(0, S, 2000):
                    k = min(2000, S - c0)
                    counts = design_counts(rng, k, G, design, diff=diff)
                    bt = batch_tests(
                        counts,
                        eps=EPS,
                        delta=DELTA,
                        alpha=A,
                        cluster_se="boot",
                        n_boot=399,
                        seed=int(rng.integers(2**62)),
                    )
                    sup = (bt.sup["clustered"]["ai"]["p"] < A) & (
                        bt.sup["clustered"]["human"]["p"] < A
                    )
                    z = counts[..., F["A"]] - counts[..., F["H"]]
                    n = counts[..., F["n"]]
                    q = counts[..., F["A"]] + counts[..., F["H"]] - 2 * counts[..., F["AH"]]
                    fl = floored_cr3(z, n, q.sum(-1))
                    plo = np.maximum(score_p(z, n, q, EPS, "lo", fl), bt.tost_p_upper["clustered"])
                    phi = np.maximum(score_p(z, n, q, -EPS, "hi", fl), bt.tost_p_lower["clustered"])
                    cur += (bt.verdict["clustered"] == DRAW).sum()
                    sc += (sup & (plo < A) & (phi < A) & (bt.n_students >= 5)).sum()
                out.append(f"{100 * cur / S:.2f} / {100 * sc / S:.2f}")
            print(f"| {design} | {G} | " + " | ".join(out) + " |", flush=True)


def part_diag(argv: list[str]) -> None:  # noqa: C901, PLR0915
    import numpy as np

    from edueval.turing.power import design_counts
    from edueval.turing.stats import VERDICTS, F, batch_tests

    G = int(argv[0])
    S = int(argv[1])
    diff = float(argv[2])
    rng = np.random.default_rng(7)
    ks = []
    dr = []
    sh = []
    dh = []
    for c in range(0, S, 2500):
        counts, dg = design_counts(rng, 2500, G, "ability_lengths", diff=diff, return_diffs=True)
        bt = batch_tests(
            counts, eps=0.1, delta=0.05, alpha=0.05, cluster_se="boot", n_boot=399, seed=c
        )
        pref = dg > diff
        n = counts[..., F["n"]]
        ks.append(pref.sum(-1))
        dr.append(bt.verdict["clustered"] == VERDICTS.index("draw"))
        sh.append((n * pref).sum(-1) / n.sum(-1))
        dh.append(bt.diff)
    k = np.concatenate(ks)
    d = np.concatenate(dr)
    s = np.concatenate(sh)
    print("overall", d.mean())
    for K in range(0, 9):
        m = k == K
        if m.sum():
            print(
                K,
                f"P(K)={m.mean():.4f} P(draw|K)={d[m].mean():.3f} contrib={100 * (d & m).mean():.2f}%  mean share={s[m].mean():.3f}",
            )
    # by share relative to K/G
    r = s - k / G
    for lo, hi in [(-1, -0.1), (-0.1, -0.05), (-0.05, 0), (0, 0.05), (0.05, 1)]:
        m = (r >= lo) & (r < hi)
        print(
            f"share-K/G in [{lo},{hi}) P={m.mean():.3f} P(draw|.)={d[m].mean():.3f} contrib={100 * (d & m).mean():.2f}%"
        )


def part_unweighted(argv: list[str]) -> None:
    """Unweighted mean of the students' d_g (t + Hall, G - 1 df) against `boot`, by cell:
    `unweighted STUDIES DESIGNS SIZES`; draw % boot / unweighted at d = +eps, -eps, 0."""
    import numpy as np

    from edueval.turing.power import design_counts
    from edueval.turing.stats import (
        VERDICTS,
        F,
        MeanEstimate,
        _skew_from_moments,
        batch_tests,
    )

    eps, delta, alpha = 0.10, 0.05, 0.05
    draw = VERDICTS.index("draw")
    studies, designs = int(argv[0]), argv[1].split(",")
    sizes = [int(x) for x in argv[2].split(",")]
    print(f"S={studies} bound {100 * (alpha + 2 * np.sqrt(alpha * (1 - alpha) / studies)):.2f}")
    for design in designs:
        for g in sizes:
            out = []
            for diff in (eps, -eps, 0.0):
                rng = np.random.default_rng([g, int(1000 * diff) + 500, 23])
                cur = unw = 0
                for c0 in range(0, studies, 2000):
                    k = min(2000, studies - c0)
                    counts = design_counts(rng, k, g, design, diff=diff)
                    bt = batch_tests(
                        counts, eps=eps, delta=delta, alpha=alpha, cluster_se="boot",
                        n_boot=399, seed=int(rng.integers(2**62)),
                    )  # fmt: skip
                    sup = (bt.sup["clustered"]["ai"]["p"] < alpha) & (
                        bt.sup["clustered"]["human"]["p"] < alpha
                    )
                    dg = (counts[..., F["A"]] - counts[..., F["H"]]) / counts[..., F["n"]]
                    mu = dg.mean(-1)
                    r = dg - mu[:, None]
                    se = r.std(-1, ddof=1) / np.sqrt(g)
                    sk = _skew_from_moments((r**2).mean(-1), (r**3).mean(-1), g, np.ones(k, bool))
                    eu = MeanEstimate(mu, se, np.full(k, g - 1.0), sk, se == 0)
                    ok = (eu.p_lower(eps) < alpha) & (eu.p_upper(-eps) < alpha)
                    cur += (bt.verdict["clustered"] == draw).sum()
                    unw += (sup & ok & (bt.n_students >= 5)).sum()
                out.append(f"{100 * cur / studies:.2f} / {100 * unw / studies:.2f}")
            print(f"| {design} | {g} | " + " | ".join(out) + " |", flush=True)


def part_misc(argv: list[str]) -> None:
    """`misc`: Bell-McCaffrey df against (sum n)^2 / sum n^2 - 1 over 2,000 classes of 20, and
    the time of the double bootstrap's resampling for one class of 160 (199 x 99, 999 x 199)."""
    import numpy as np

    from edueval.turing.power import design_counts
    from edueval.turing.stats import F, _skew_from_moments, bm_df, hall

    c = design_counts(np.random.default_rng(1), 2000, 20, "ability_lengths", diff=0.1)
    n = c[..., F["n"]]
    bm, ne = bm_df(n), n.sum(-1) ** 2 / (n**2).sum(-1) - 1
    print("df medians", np.median(bm), np.median(ne), "max |diff|", np.abs(bm - ne).max())
    rng = np.random.default_rng(0)
    g = 160
    c = design_counts(rng, 1, g, "ability_lengths", diff=0.0)
    z, n = c[..., F["A"]] - c[..., F["H"]], c[..., F["n"]]

    def stat(z, n):
        big_n = n.sum(-1)
        m = z.sum(-1) / big_n
        e = z - n * m[..., None]
        se = np.sqrt((e**2 / (1 - n / big_n[..., None]) ** 2).sum(-1)) / big_n
        ones = np.ones(m.shape, bool)
        sk = _skew_from_moments((e**2).sum(-1) / g, (e**3).sum(-1) / g, g, ones)
        return hall(m / se, sk)

    def gather(x, idx):
        return np.take_along_axis(np.broadcast_to(x[..., None, :], idx.shape), idx, -1)

    for b1, b2 in ((199, 99), (999, 199)):
        t = time.perf_counter()
        idx = rng.integers(0, g, (1, b1, g))
        zs, ns = gather(z, idx), gather(n, idx)
        idx2 = rng.integers(0, g, (1, b1, b2, g))
        stat(gather(zs, idx2), gather(ns, idx2))
        print(f"double bootstrap {b1} x {b2}, {g} students: {time.perf_counter() - t:.2f} s")


def part_fdb(argv: list[str]) -> None:
    """`fdb STUDENTS STUDIES D [DESIGN] [B] [B2]`: draw % of `boot` with each double bootstrap
    (`none`: the `boot` of before, max(t-table, bootstrap-t); `fast`: max with the fast double
    bootstrap; `full`: max with the full one, B x B2) on the same studies, and the seconds of
    each `batch_tests` call."""
    import numpy as np

    from edueval.turing.power import design_counts
    from edueval.turing.stats import VERDICTS, batch_tests

    eps, delta, alpha = 0.10, 0.05, 0.05
    g, studies, diff = int(argv[0]), int(argv[1]), float(argv[2])
    design = argv[3] if len(argv) > 3 else "ability_lengths"
    b = int(argv[4]) if len(argv) > 4 else 399
    b2 = int(argv[5]) if len(argv) > 5 else 99
    kinds = ("none", "fast", "full")
    rng = np.random.default_rng([g, int(1000 * diff) + 500, 31])
    hits, secs = dict.fromkeys(kinds, 0), dict.fromkeys(kinds, 0.0)
    for c0 in range(0, studies, 1000):
        k = min(1000, studies - c0)
        counts = design_counts(rng, k, g, design, diff=diff)
        seed = int(rng.integers(2**62))
        for kind in kinds:
            t0 = time.perf_counter()
            bt = batch_tests(counts, eps=eps, delta=delta, alpha=alpha, n_boot=b, seed=seed,
                             double=kind, n_inner=b2)  # fmt: skip
            secs[kind] += time.perf_counter() - t0
            hits[kind] += int((bt.verdict["clustered"] == VERDICTS.index("draw")).sum())
        done = c0 + k
        print(f"  after {done} studies: " + ", ".join(
            f"{kind} {100 * hits[kind] / done:.2f}% ({secs[kind]:.0f} s)" for kind in kinds
        ), flush=True)  # fmt: skip
    mc = np.sqrt(alpha * (1 - alpha) / studies)
    print(f"{design} G={g} d={diff} S={studies} B={b} B2={b2} bound {100 * (alpha + 2 * mc):.2f}")
    for kind in kinds:
        print(f"  {kind:5s} draw {100 * hits[kind] / studies:6.2f}%  {secs[kind]:7.1f} s "
              f"({secs[kind] / secs['none']:.1f} x none)")  # fmt: skip


if __name__ == "__main__":
    globals()[f"part_{sys.argv[1]}"](sys.argv[2:])
