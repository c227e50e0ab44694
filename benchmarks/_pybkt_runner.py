"""Fit and predict with pyBKT, timing both; run by kt_vs_pybkt.py in pyBKT's own environment.

Usage: python _pybkt_runner.py data.csv out_dir num_fits seed repeats

Reads a CSV with pyBKT's column names, fits (``num_fits`` restarts) and predicts ``repeats``
times, and writes ``params.csv``, ``predictions.npz`` and ``timing.json`` into ``out_dir``.
Only the fit and predict calls are timed (not reading the CSV nor starting Python).
"""

import json
import sys
import time

import numpy as np
import pandas as pd
from pyBKT.models import Model

path, out_dir, num_fits, seed, repeats = sys.argv[1:6]
df = pd.read_csv(path)
fit_times, predict_times = [], []
for r in range(int(repeats)):
    model = Model(seed=int(seed) + r, num_fits=int(num_fits), parallel=True)
    t0 = time.perf_counter()
    model.fit(data=df.copy())
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
pd.DataFrame(rows).to_csv(f"{out_dir}/params.csv", index=False)
pred = pred.sort_index()
np.savez(
    f"{out_dir}/predictions.npz",
    correct_predictions=pred["correct_predictions"].to_numpy(),
    state_predictions=pred["state_predictions"].to_numpy(),
)
with open(f"{out_dir}/timing.json", "w") as fh:
    json.dump({"fit": fit_times, "predict": predict_times}, fh)
