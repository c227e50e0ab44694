"""What simulating once per pair (the paper) instead of once per order does to AA and CA.

A scripted OpenAI-compatible server plays the model. Step 2 is a noisy classroom simulator:
student i (ability t_i = (i + 0.5) / n) answers a question correctly with probability
sigmoid(logit(DF_true) + 3 (t_i - 0.5) + bias * [the question is shown first]), a wrong answer
picks a distractor with the question's true distractor shares; the draws come from a numpy
Generator seeded by the request's seed, so each simulation is reproducible and two simulations
differ. Step 3 ("qg-sms") is a judge that reads the performance shown to it and compares the
measure the requirement names (share correct for DF, item-total correlation for DC, distractors
chosen by >= 5% for DE; ties go to Output (a)). ``direct`` computes the same from Step 2.

Usage: python benchmarks/qgsms_simulate_per_pair.py [OUT_CSV]
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from edueval.items.data import read_items
from edueval.items.pairs import REQUIREMENTS
from edueval.items.pipeline import simulate_run
from edueval.items.simulate import ClassroomConfig
from edueval.models import get_model
from edueval.qgsms import MethodConfig, run_qgsms

# the scripted server is test support, not part of edueval: tests/support/scripted_server.py
TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))
from support.scripted_server import ScriptedServer, last_user_message  # noqa: E402

SEEDS = 4
work = Path(tempfile.mkdtemp())
simulate_run(work / "room", ClassroomConfig(n_students=200, n_materials=4, questions_per_material=8,
                                            seed=11))  # fmt: skip
items = {r["item"]: r for r in read_items(work / "room/items.jsonl").to_dict("records")}
stats = pd.read_csv(work / "room/item_stats.csv").set_index("item")
pairs = pd.read_csv(work / "room/pairs.csv", dtype=str)
pairs = pairs[pairs["dimension"].isin(["DF", "DC", "DE"])]
pairs.to_csv(work / "pairs.csv", index=False)
by_text = {v["text"]: k for k, v in items.items()}
dims = {REQUIREMENTS[d]: d for d in ("DF", "DC", "DE")}
resp = pd.read_csv(work / "room/responses.csv", dtype=str)
counts = resp.groupby(["item", "choice"]).size()


def shares(q):
    """The question's distractors and how often real (simulated-classroom) students chose each."""
    it = items[q]
    wrong = [o for o in it["options"] if o != it["answer"]]
    w = np.array([counts.get((q, o), 0) for o in wrong], float) + 1e-3
    return wrong, w / w.sum()


def make_script(bias):
    def script(body):
        schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema", {})
        title = schema.get("title")
        prompt = last_user_message(body)
        if title == "profiles":
            n = schema["properties"]["students"]["minItems"]
            return json.dumps(
                {"students": [{"name": f"S{i}", "understanding": f"level {i}"} for i in range(n)]}
            )
        if title == "predictions":
            rng = np.random.default_rng(body["seed"])
            names = schema["properties"]["students"]["required"]
            qs = [
                by_text[re.search(rf"# Question {k}\n(.*?)\n[A-Z]\) ", prompt, re.S).group(1)]
                for k in (1, 2)
            ]
            out = {}
            for i, name in enumerate(names):
                t = (i + 0.5) / len(names)
                row = {}
                for k, q in enumerate(qs):
                    df = float(np.clip(stats.at[q, "DF"], 0.02, 0.98))
                    z = np.log(df / (1 - df)) + 3 * (t - 0.5) + (bias if k == 0 else 0.0)
                    ok = bool(rng.random() < 1 / (1 + np.exp(-z)))
                    wrong, w = shares(q)
                    choice = items[q]["answer"] if ok else str(rng.choice(wrong, p=w))
                    row[f"question_{k + 1}"] = {"correct": ok, "choice": choice, "explanation": "x"}
                out[name] = row
            return json.dumps({"students": out})
        if title == "sms_verdict":
            d = dims[re.search(r"requirement: (.*?)\.\n", prompt).group(1)]
            perf = prompt.split("# The simulated students' performance\n", 1)[1]
            res = {
                s: re.findall(
                    rf"On Output \({s}\): (correct|incorrect, chose distractor ([A-Z]))", perf
                )
                for s in "ab"
            }
            x = {s: np.array([r[0] == "correct" for r in res[s]], float) for s in "ab"}
            tot = x["a"] + x["b"]

            def m(s):
                if d == "DF":
                    return x[s].mean()
                if d == "DC":
                    return (
                        np.corrcoef(x[s], tot)[0, 1]
                        if x[s].std() > 0 and tot.std() > 0
                        else -np.inf
                    )
                ch = [r[1] for r in res[s] if r[1]]
                return sum(ch.count(o) * 100 >= 5 * len(x[s]) for o in set(ch))

            return json.dumps({"better": "a" if m("a") >= m("b") else "b"})
        raise ValueError(title)

    return script


rows = []
for bias, mode, seed in [
    (b, m, s) for b in (0.0, 1.0) for m in ("per-pair", "per-order") for s in range(SEEDS)
]:
    if True:
        with ScriptedServer(make_script(bias)) as server:
            out = work / f"run_{bias}_{mode}_{seed}"
            res = run_qgsms(out, work / "pairs.csv", work / "room/items.jsonl", methods=["qg-sms", "direct"],
                            open_model=lambda log: get_model("openai/scripted", base_url=server.url,
                                                             cache_dir=work / f"c_{bias}_{mode}_{seed}", log_path=log),  # noqa: B023 (called within the iteration)
                            model_name="scripted", cfg=MethodConfig(simulate=mode), seed=seed,
                            bradley_terry=False)  # fmt: skip
        j = pd.read_csv(out / "judgements.csv")
        for method, g in j.groupby("method"):
            both = g.dropna(subset=["chosen"]).groupby("pair_id")["chosen"]
            agree = (both.nunique()[both.size() == 2] == 1).mean()  # pairs judged in both orders
            for d, s in res["accuracy"][method].items():
                rows.append(
                    {
                        "bias": bias,
                        "simulate": mode,
                        "seed": seed,
                        "method": method,
                        "dimension": d,
                        "pairs": s["pairs"],
                        "AA": s["AA"],
                        "CA": s["CA"],
                        "orders_agree": agree if d == "all" else np.nan,
                    }
                )
table = pd.DataFrame(rows)
pd.set_option("display.width", 160)
summary = (
    table.groupby(["bias", "simulate", "method", "dimension"], sort=False)
    .agg(
        pairs=("pairs", "first"),
        AA=("AA", "mean"),
        AA_sd=("AA", "std"),
        CA=("CA", "mean"),
        CA_sd=("CA", "std"),
        orders_agree=("orders_agree", "mean"),
    )
    .reset_index()
)
print(f"{SEEDS} run seeds; mean and sd over them")
print(summary.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
if len(sys.argv) > 1:
    table.to_csv(sys.argv[1], index=False)
