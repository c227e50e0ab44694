"""The embedded model's two engines through edueval: xllamacpp (prebuilt) vs llama-cpp-python.

The same MalAlgoQA prompts as ``benchmarks/local_model.py`` (generated items, six kinds: simple /
CoT / CoT + 3 shots, generate and logprob scoring, in the order ``malalgo run`` sends them), each
sent to ``LocalBackend(engine="xllamacpp")`` and ``LocalBackend(engine="llama-cpp-python")`` in
turn, both with the same fixed thread counts.  Per kind: calls, how many replies have the same
text, how many give the same answer (the JSON's ``Correct Choice`` for simple prompts, the text
otherwise), and the median ratio of xllamacpp's wall time per call to llama-cpp-python's.

    python benchmarks/local_engines.py --questions 1 --threads 1
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from local_model import build_requests  # noqa: E402


def _answer(text: str) -> str:
    try:
        return str(json.loads(text).get("Correct Choice"))
    except (ValueError, AttributeError):
        return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=1)
    ap.add_argument("--per-question", type=int, default=5)
    ap.add_argument("--cot-max-tokens", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    from edueval.models.local import LocalBackend

    engines = {
        e: LocalBackend(engine=e, n_threads=args.threads, n_threads_batch=args.threads)
        for e in ("xllamacpp", "llama-cpp-python")
    }
    kinds = build_requests(args.questions, args.per_question, args.cot_max_tokens, args.seed)
    print(f"{'kind':22s} calls same-text same-answer  xl/lc wall (median, max)")
    for kind, reqs in kinds.items():
        same_text = same_answer = 0
        ratios = []
        for task, req in reqs:
            out = {}
            for name, backend in engines.items():
                t0 = time.perf_counter()
                reply = backend._generate_sync(req)
                out[name] = (reply.text, time.perf_counter() - t0)
            (a, ta), (b, tb) = out["xllamacpp"], out["llama-cpp-python"]
            same_text += a == b
            if a != b and not req.json_schema:
                at = next(
                    (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                    min(len(a), len(b)),
                )
                print(f"  {kind} {task}: texts part at character {at}: "
                      f"xllamacpp {a[max(0, at - 12) : at + 12]!r}, "
                      f"llama-cpp-python {b[max(0, at - 12) : at + 12]!r}")  # fmt: skip
            same_answer += _answer(a) == _answer(b)
            ratios.append(ta / tb)
        print(f"{kind:22s} {len(reqs):5d} {same_text:9d} {same_answer:11d}  "
              f"{statistics.median(ratios):.2f}, {max(ratios):.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
