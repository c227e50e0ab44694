"""Fit one BKT variant with pyBKT, timing the fit; run by kt_variants_vs_pybkt.py in pyBKT's own
environment (see setup_pybkt.sh).

Usage: python _pybkt_variant_runner.py data.csv out_dir --variant multigs|multilearn|multiprior|
    multipair --column item --num-fits N --seed S --repeats R [--forgets]

Reads a CSV with pyBKT's column names (``order_id, user_id, skill_name, correct``, plus the item
column), fits ``--repeats`` times (seeds S, S+1, ...; only ``Model.fit`` is timed) and writes the
last fit's parameters as edueval's long table (``skill, parameter, group, value``, group labels as
edueval writes them) to ``params.csv`` and the times to ``timing.json``.

Translation of pyBKT's parameters (pyBKT 1.4, read from its source):

* multigs / multilearn: one guess/slip (learn/forget) per value, ``gs_names`` / ``resource_names``
  map values to indices; pyBKT applies ``learns[resource[t]]`` to the move after response t
  (E_step.cpp: ``alpha(t+1) = A[resources[t]] alpha(t)``), as edueval does.
* multipair: resource of response t is the pair (value at t-1, value at t), keyed
  ``"<cur> <prev>"`` from numpy reprs; a sequence's first response has resource ``Default``.
* multiprior (class = the ``correct`` column at the sequence's first response, pyBKT's default):
  pyBKT puts a phantom, unobserved step with the class's resource before each sequence, so the
  class prior is ``prior * (1 - forget_c) + (1 - prior) * learn_c``; ``correct`` is coded 1 (wrong)
  / 2 (right) inside pyBKT.
"""

import argparse
import json
import re
import time

import numpy as np
import pandas as pd
from pyBKT.models import Model

ap = argparse.ArgumentParser()
ap.add_argument("csv")
ap.add_argument("out_dir")
ap.add_argument("--variant", required=True)
ap.add_argument("--column", default="item")
ap.add_argument("--num-fits", type=int, default=5)
ap.add_argument("--seed", type=int, default=0)
ap.add_argument("--repeats", type=int, default=1)
ap.add_argument("--forgets", action="store_true")
args = ap.parse_args()

df = pd.read_csv(args.csv, dtype={"user_id": str, "skill_name": str, args.column: str})
kw = {"multiprior": True} if args.variant == "multiprior" else {args.variant: args.column}
fit_times = []
for r in range(args.repeats):
    model = Model(seed=args.seed + r, num_fits=args.num_fits, parallel=True)
    t0 = time.perf_counter()
    model.fit(data=df.copy(), forgets=args.forgets, **kw)
    fit_times.append(time.perf_counter() - t0)

col = args.column


def _values(key: str) -> list[str]:
    return [v.strip("'\"") for v in re.findall(r"\[(.*?)\]", key)]


rows = []
for skill, p in model.fit_model.items():
    learns = np.ravel(p["learns"])
    forgets = np.ravel(p["forgets"])
    guesses = np.ravel(p["guesses"])
    slips = np.ravel(p["slips"])
    res = {str(k): int(v) - 1 for k, v in p["resource_names"].items()}
    gs = p["gs_names"]
    gs0 = min(int(v) for v in gs.values())  # 0-based for multigs, 1 for the single default
    if args.variant == "multigs":
        for name, i in gs.items():
            rows += [(skill, "guess", f"{col}={name}", guesses[i - gs0]),
                     (skill, "slip", f"{col}={name}", slips[i - gs0])]  # fmt: skip
    else:
        rows += [(skill, "guess", "*", guesses[0]), (skill, "slip", "*", slips[0])]
    prior = float(p["prior"])
    if args.variant == "multiprior":
        for cls, label in (("1", "first_response=0"), ("2", "first_response=1")):
            if cls in res:
                i = res[cls]
                rows.append((skill, "prior", label,
                             prior * (1 - forgets[i]) + (1 - prior) * learns[i]))  # fmt: skip
        i = res["Default"]
        rows += [(skill, "learn", "*", learns[i]), (skill, "forget", "*", forgets[i])]
    else:
        rows.append((skill, "prior", "*", prior))
    if args.variant in ("multilearn", "multipair"):
        for name, i in res.items():
            if args.variant == "multilearn":
                label = f"{col}={name}"
            elif name in ("Default", "default"):
                label = f"{col}=(first)"
            else:
                cur, prev = _values(name)
                label = f"{col}={prev}>{cur}"
            rows += [(skill, "learn", label, learns[i]), (skill, "forget", label, forgets[i])]
    elif args.variant == "multigs":
        rows += [(skill, "learn", "*", learns[0]), (skill, "forget", "*", forgets[0])]
pd.DataFrame(rows, columns=["skill", "parameter", "group", "value"]).to_csv(
    f"{args.out_dir}/params.csv", index=False
)
with open(f"{args.out_dir}/timing.json", "w") as fh:
    json.dump({"fit": fit_times, "numpy": np.__version__, "pandas": pd.__version__}, fh)
