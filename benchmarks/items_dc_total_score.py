"""P4: what the total score in DC does with missing responses (issue 34, point 4).

DC is the Pearson correlation of an item's 0/1 score with the students' total score. The
authors' code (QG-SMS repository, ``datasets/preprocess.py``) takes the total as the share
correct of the items a student answered; edueval took the count correct until issue 34. With
every item answered the two give the same DC. Here ``--classes`` synthetic classrooms
(``edueval items simulate``'s model, default sizes: 60 students, 2 materials x 8 questions, seeds
0..classes-1) each lose a share ``--missing`` of their responses, and DC is computed both ways.

Reported: how far DC moves per item (|DC_share - DC_count|: mean, 95th percentile, max), and,
of the DC pairs at alpha (the paper's 0.15) under either total, the share that the other total
drops, adds or labels the other way (pairs keyed by their two questions). Missingness:
``mcar`` (every response missing with the same probability) and ``ability`` (a weaker student
skips more: P(missing) proportional to exp(-theta), scaled to the same overall share).

    python benchmarks/items_dc_total_score.py --classes 200 --missing 0.25
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from edueval.items import (
    ClassroomConfig,
    ItemData,
    analyze_items,
    make_pairs,
    simulate_classroom,
)


def _drop(room, share: float, how: str, rng: np.random.Generator) -> ItemData:
    data = room.to_item_data()
    resp = data.responses
    if how == "mcar":
        p = np.full(len(resp), share)
    else:
        theta = room.students.set_index("student")["ability"]
        w = np.exp(-resp["student"].map(theta).to_numpy(dtype=float))
        p = np.clip(share * w / w.mean(), 0, 0.95)
    return ItemData(data.items, resp[rng.random(len(resp)) >= p].reset_index(drop=True))


def _pairs(stats: pd.DataFrame, alpha: float) -> dict[frozenset, str]:
    p = make_pairs(stats, dimensions=["DC"], alpha={"DC": alpha}, seed=0)
    return {frozenset((r.q1, r.q2)): r.better for r in p.itertuples()}


def run(classes: int, missing: float, how: str, alpha: float) -> dict:
    moves, changed, union, n_share, n_count = [], 0, 0, 0, 0
    for c in range(classes):
        room = simulate_classroom(ClassroomConfig(seed=c))
        rng = np.random.default_rng([c, 34])
        data = _drop(room, missing, how, rng)
        share = analyze_items(data).items
        count = analyze_items(data, total_score="count").items
        d = (share["DC"] - count["DC"]).abs().dropna()
        moves += d.tolist()
        ps, pc = _pairs(share, alpha), _pairs(count, alpha)
        keys = set(ps) | set(pc)
        union += len(keys)
        changed += sum(ps.get(k) != pc.get(k) for k in keys)
        n_share += len(ps)
        n_count += len(pc)
    m = np.array(moves)
    return {"missing": how, "items": m.size, "mean |dDC|": m.mean(),
            "p95 |dDC|": np.quantile(m, 0.95), "max |dDC|": m.max(),
            "pairs (share)": n_share, "pairs (count)": n_count, "pairs (either)": union,
            "changed": changed, "changed share": changed / union}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--classes", type=int, default=200)
    ap.add_argument("--missing", type=float, default=0.25)
    ap.add_argument("--alpha", type=float, default=0.15)
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows = [run(args.classes, args.missing, how, args.alpha) for how in ("mcar", "ability")]
    complete = run(min(args.classes, 20), 0.0, "mcar", args.alpha)
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"no missing responses ({min(args.classes, 20)} classes): max |dDC| "
          f"{complete['max |dDC|']:.2e}, changed pairs {complete['changed']}")  # fmt: skip
    print(f"{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
