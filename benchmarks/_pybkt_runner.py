"""Fit and predict with pyBKT, timing both; run by kt_vs_pybkt.py in pyBKT's own environment.

Usage: python _pybkt_runner.py data.csv out_dir --num-fits N --seed S --repeats R [--forgets]

Reads a CSV with pyBKT's column names (``order_id, user_id, skill_name, correct``), fits
(``--num-fits`` EM restarts per skill, ``forgets`` as asked) and predicts ``--repeats`` times, and
writes ``params.csv``, ``predictions.npz`` (rows in the CSV's order) and ``timing.json`` into
``out_dir``.  Only the fit and predict calls are timed (not reading the CSV nor starting Python).
"""

import argparse
import importlib.util
import json
import time

import numpy as np
import pandas as pd
from pyBKT.models import Model

ap = argparse.ArgumentParser()
ap.add_argument("csv")
ap.add_argument("out_dir")
ap.add_argument("--num-fits", type=int, default=5)
ap.add_argument("--seed", type=int, default=0)
ap.add_argument("--repeats", type=int, default=1)
ap.add_argument("--forgets", action="store_true")
args = ap.parse_args()

df = pd.read_csv(args.csv, dtype={"user_id": str, "skill_name": str})
fit_times, predict_times = [], []
for r in range(args.repeats):
    model = Model(seed=args.seed + r, num_fits=args.num_fits, parallel=True)
    t0 = time.perf_counter()
    model.fit(data=df.copy(), forgets=args.forgets)
    fit_times.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    pred = model.predict(data=df.copy())
    predict_times.append(time.perf_counter() - t0)
rows = []
for skill, p in model.fit_model.items():
    rows.append(
        {
            "skill": skill,
            "prior": float(p["prior"]),
            "learn": float(np.ravel(p["learns"])[0]),
            "guess": float(np.ravel(p["guesses"])[0]),
            "slip": float(np.ravel(p["slips"])[0]),
            "forget": float(np.ravel(p["forgets"])[0]),
        }
    )
pd.DataFrame(rows).to_csv(f"{args.out_dir}/params.csv", index=False)
pred = pred.sort_index()  # predict() returns the rows re-sorted; its index is the CSV row
np.savez(
    f"{args.out_dir}/predictions.npz",
    correct_predictions=pred["correct_predictions"].to_numpy(),
    state_predictions=pred["state_predictions"].to_numpy(),
)
spec = importlib.util.find_spec("pyBKT.fit.E_step")
with open(f"{args.out_dir}/timing.json", "w") as fh:
    json.dump(
        {
            "fit": fit_times,
            "predict": predict_times,
            "pybkt_e_step": spec.origin if spec else None,
            "numpy": np.__version__,
            "pandas": pd.__version__,
        },
        fh,
    )
