"""What handing the key to QG-SMS's Step 2 did (issue 34, point 3).

Until issue 34 the Step-2 schema was, per student and question, ``anyOf[{correct: true, choice:
const KEY}, {correct: false, choice: enum distractors}]``: with structured output (a grammar on
the embedded model, ``response_format`` on a server) the model was told which option is right.
Now the schema lists every option alike and edueval scores the choice against the key.

This runs both schemas on the same pairs, the same Step-1 profiles (one shared cache, so Step 1
is asked once) and the same per-call seeds, with ``qg-sms`` and ``direct``, and reports per
schema: the simulated DF/DC/DE of the questions (mean over the pairs' questions, and the mean
absolute difference from the classroom's true DF/DC/DE), the share of simulated answers that are the key,
and AA/CA of both methods. The old schema (and its prompt, which asked for ``"correct":
true|false``) is rebuilt here only; edueval no longer sends it.

    nice -n 10 python benchmarks/qgsms_step2_key.py --model local --pairs-per-dim 2
    nice -n 10 python benchmarks/qgsms_step2_key.py --model local --methods direct  # no Step 3

``--model local`` is the embedded SmolLM2-135M (xllamacpp); with its 2048-token context Step 2
needs ``max_profiles=10`` and 120-character explanations (as ``qgsms run`` documents).
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from edueval.items import ClassroomConfig, analyze_items, make_pairs, simulate_classroom
from edueval.models import get_model
from edueval.qgsms import evaluate
from edueval.qgsms import prompts as P


def old_option_schema(item: dict, explanation_chars: int) -> dict:
    """The Step-2 answer schema before issue 34 (the key as a ``const`` of the correct branch)."""
    key = item["answer"]
    wrong = [o for o in item["options"] if o != key]
    why = {"type": "string", "minLength": 1, "maxLength": explanation_chars}
    branch = [({"const": True}, {"const": key}), ({"const": False}, {"enum": wrong})]
    return {"anyOf": [{"type": "object",
                       "properties": {"correct": c, "choice": ch, "explanation": why},
                       "required": ["correct", "choice", "explanation"]} for c, ch in branch]}  # fmt: skip


def old_predictions_prompt(material: str, profiles: list[dict], first: dict, second: dict) -> str:
    """The Step-2 prompt before issue 34 (its JSON example had a ``correct`` field)."""
    return (
        f"# Learning material\n{material}\n\n"
        f"# The students and what they understood\n{P.profile_lines(profiles)}\n\n"
        f"# Question 1\n{P.format_question(first)}\n\n# Question 2\n"
        f"{P.format_question(second)}\n\n"
        "For every student, predict whether they answer Question 1 and Question 2 correctly. "
        "Weigh what the student understood, how hard the question is, and the chance of a "
        "lucky guess. When you predict a wrong answer, name the distractor that would mislead "
        "this student; in every case say briefly why in 'explanation'. Answer in JSON, one entry "
        'per student keyed by their name: {"students": {"<name>": {"question_1": {"correct": '
        'true|false, "choice": "<letter>", "explanation": "..."}, "question_2": {...}}}}.'
    )


@contextlib.contextmanager
def old_schema():
    saved = P._option_schema, P.predictions_prompt
    P._option_schema, P.predictions_prompt = old_option_schema, old_predictions_prompt
    try:
        yield
    finally:
        P._option_schema, P.predictions_prompt = saved


def sim_table(res, stats: pd.DataFrame) -> pd.DataFrame:
    """One row per (pair, question): simulated DF/DC/DE (``direct``'s order 1) and the truth."""
    j = res.judgements
    j = j[(j["method"] == "direct") & (j["order"] == 1) & j["sim_DF_a"].notna()]
    rows = []
    for r in j.to_dict("records"):
        for side in ("a", "b"):
            q = r[side]
            rows.append({"pair_id": r["pair_id"], "item": q,
                         **{f"sim_{m}": r[f"sim_{m}_{side}"] for m in ("DF", "DC", "DE")},
                         **{m: stats.at[q, m] for m in ("DF", "DC", "DE")}})  # fmt: skip
    return pd.DataFrame(rows)


def key_share(res, items: pd.DataFrame) -> float:
    key = dict(zip(items["item"], items["answer"], strict=True))
    got = [a["choice"] == key[q] for s in res.logs["simulations"] for p in s["predictions"]
           for q, a in p["answers"].items()]  # fmt: skip
    return float(np.mean(got)) if got else float("nan")


def summarise(name: str, res, stats, items) -> dict:
    t = sim_table(res, stats)
    out = {"schema": name, "pairs simulated": t["pair_id"].nunique(),
           "key chosen": key_share(res, items)}  # fmt: skip
    for m in ("DF", "DC", "DE"):
        out[f"sim {m}"] = t[f"sim_{m}"].mean()
        out[f"|sim - true| {m}"] = (t[f"sim_{m}"] - t[m]).abs().mean()
    for method in res.methods:
        acc = res.accuracy[method]["all"]
        out[f"{method} AA"], out[f"{method} CA"] = acc.AA, acc.CA
    out["failed judgements"] = int((res.judgements["status"] == "failed").sum())
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="local")
    ap.add_argument("--pairs-per-dim", type=int, default=2)
    ap.add_argument("--questions", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--methods", default="qg-sms,direct", help="direct alone skips Step 3")
    args = ap.parse_args()
    room = simulate_classroom(ClassroomConfig(n_students=60, n_materials=1,
                                              questions_per_material=args.questions, seed=5))  # fmt: skip
    stats = analyze_items(room.to_item_data()).items
    pairs = make_pairs(stats, dimensions=["DF", "DC", "DE"], seed=args.seed)
    pairs = pairs.groupby("dimension").head(args.pairs_per_dim).reset_index(drop=True)
    items = room.items[["item", "text", "choices", "answer", "material", "topic",
                        "material_text"]]  # fmt: skip
    cache = args.cache or Path(tempfile.mkdtemp()) / "cache"

    def opener(log_path):
        return get_model(args.model, cache_dir=cache, log_path=log_path)

    kw = dict(methods=args.methods.split(","), max_profiles=10, explanation_chars=120,
              temperature=args.temperature, bradley_terry=False, seed=args.seed,
              max_failures="100%")  # fmt: skip
    rows = []
    for name in ("old: key in schema", "new: options alike"):
        t0 = time.perf_counter()
        with old_schema() if name.startswith("old") else contextlib.nullcontext():
            res = evaluate(pairs, items, opener, **kw)
        rows.append({**summarise(name, res, stats.set_index("item"), items),
                     "seconds": time.perf_counter() - t0})  # fmt: skip
    print(f"{len(pairs)} pairs ({', '.join(sorted(set(pairs['dimension'])))}), model "
          f"{args.model}, temperature {args.temperature}, seed {args.seed}")  # fmt: skip
    true = stats.set_index("item").loc[sorted(set(pairs["q1"]) | set(pairs["q2"]))]
    print(f"true DF/DC/DE of these questions (mean): {true['DF'].mean():.3f} / "
          f"{true['DC'].mean():.3f} / {true['DE'].mean():.2f}")  # fmt: skip
    print(pd.DataFrame(rows).T.to_string(header=False, float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
