"""Cost of one adaptive pairing choice in the study app, in process (no HTTP), against storing
one answer (the anchor, measured in the same loop).

A comparative study like ``study_load.py``'s under ``pairing: adaptive`` on a SQLite file;
200 participants invited; every slot, in invite order, gets its pair
(:meth:`edueval.study.pairing.AdaptivePairer.choose`) and then its answer
(:meth:`edueval.study.db.StudyDB.save`).  Prints ms per choice and per save; ``--profile``
adds the top of a cProfile of the choices.

    PYTHONPATH=src python benchmarks/study_pairing_cost.py                      # 20 items x 3 agents
    PYTHONPATH=src python benchmarks/study_pairing_cost.py --items 1 --agents 30
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import tempfile
import time
from pathlib import Path

from study_load import comparative_study

from edueval.study import StudyDB, load_study
from edueval.study.pairing import AdaptivePairer


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--items", type=int, default=20)
    ap.add_argument("--agents", type=int, default=3)
    ap.add_argument("--per", type=int, default=10)
    ap.add_argument("--participants", type=int, default=200)
    ap.add_argument("--refit-every", type=int, default=10)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="pairing-cost-"))
    path = comparative_study(tmp / "s", args.items, args.per, args.agents, "adaptive",
                             args.refit_every)  # fmt: skip
    study = load_study(path)
    db = StudyDB(study, f"sqlite:///{tmp / 's.db'}")
    db.invite([f"p{i:03d}" for i in range(args.participants)])
    pairer = AdaptivePairer(study, db)
    slots = [a for pid in range(1, args.participants + 1) for a in db.assignments_of(pid)]
    prof = cProfile.Profile()
    t_choose = t_save = 0.0
    for a in slots:
        t = time.perf_counter()
        if args.profile:
            prof.enable()
        a = pairer.choose(a)
        if args.profile:
            prof.disable()
        t_choose += time.perf_counter() - t
        t = time.perf_counter()
        db.save(a["id"], {"teacher-like": "first", "helpful": "second"},
                {"first_click_s": 1.0, "last_click_s": 2.0, "submit_s": 3.0})  # fmt: skip
        t_save += time.perf_counter() - t
    db.close()
    n = len(slots)
    print(f"{n} slots, {args.items} item(s) x {args.agents} agents: choose "
          f"{1000 * t_choose / n:.2f} ms, save {1000 * t_save / n:.2f} ms "
          f"(choose / save {t_choose / t_save:.2f})")  # fmt: skip
    if args.profile:
        pstats.Stats(prof).sort_stats("cumulative").print_stats(15)


if __name__ == "__main__":
    main()
