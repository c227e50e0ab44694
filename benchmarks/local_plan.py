"""The embedded model's prompt plan and generation threads (issue 22), measured.

``--tokens QUESTIONS.csv``: the prompt tokens a ``malalgo run`` sends and those llama.cpp must
evaluate when each call reuses the previous call's KV cache, in build order and in
:func:`~edueval.models.client.prefix_order` (the model's tokenizer only, no inference; the
rendered prompts' totals equal ``calls.jsonl``'s token counts)::

    python benchmarks/local_plan.py --tokens runs/q/questions.csv --prompt cot --shots 3 --seed 1

``--threads``: milliseconds per generated token of one greedy CoT reply with 1 thread and with
every core, the context created with the thread count or switched by ``llama_set_n_threads``
(as ``LocalBackend`` does), and whether the tokens are the same::

    python benchmarks/local_plan.py --threads
"""

from __future__ import annotations

import argparse
import os
import sys

_PROMPT = [{"role": "user", "content": "Explain step by step how to add the fractions 1/3 and "
            "1/4, then give the answer. Then do 2/5 + 1/7 and 3/8 + 5/9."}]  # fmt: skip


def _evaluated(toks: list[list[int]], order) -> int:
    total, prev = 0, []
    for i in order:
        t = toks[i]
        n = len(os.path.commonprefix([t, prev]))
        total += len(t) - min(n, len(t) - 1)  # llama-cpp-python evaluates at least one token
        prev = t
    return total


def tokens(path: str, prompt: str, shots: int, seed: int, scoring: str) -> None:
    import llama_cpp

    from edueval.malalgo import build_tasks
    from edueval.malalgo.data import read_questions
    from edueval.models.client import prefix_order
    from edueval.models.local import smollm2_path

    llm = llama_cpp.Llama(str(smollm2_path()), vocab_only=True, verbose=False)
    tasks = build_tasks(read_questions(path), prompt=prompt, shots=shots, scoring=scoring,
                        seed=seed)  # fmt: skip

    def render(req) -> bytes:  # SmolLM2's chat template (ChatML)
        turns = "".join(
            f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in req.messages
        )
        return (turns + "<|im_start|>assistant\n").encode()

    toks = [llm.tokenize(render(t.request), special=True) for t in tasks]
    sets = {tuple(m["content"] for m in t.request.messages[1:-1]) for t in tasks
            if t.kind == "identify"}  # fmt: skip
    print(f"prompts {len(tasks)}; distinct example sets {len(sets)}")
    print(f"prompt tokens sent {sum(map(len, toks)):,}")
    print(f"evaluated in build order {_evaluated(toks, range(len(toks))):,}")
    print(
        f"evaluated in prefix order {_evaluated(toks, prefix_order([t.request for t in tasks])):,}"
    )


def threads(max_tokens: int) -> None:
    import llama_cpp

    from edueval.models.local import _n_threads, smollm2_path

    cores = _n_threads()
    path = str(smollm2_path())
    texts = {}
    for created, switched in ((1, None), (cores, None), (1, cores), (1, None), (cores, None)):
        llm = llama_cpp.Llama(path, n_ctx=2048, n_threads=created, n_threads_batch=cores,
                              logits_all=False, verbose=False)  # fmt: skip
        if switched:
            llama_cpp.llama_set_n_threads(llm.ctx, switched, cores)
        llama_cpp.llama_perf_context_reset(llm.ctx)
        out = llm.create_chat_completion(messages=_PROMPT, max_tokens=max_tokens,
                                         temperature=0.0, seed=0)  # fmt: skip
        perf = llama_cpp.llama_perf_context(llm.ctx)
        n = out["usage"]["completion_tokens"]
        gen = switched or created
        label = f"{gen} thread(s)" + (f" (created with {created}, switched)" if switched else "")
        print(f"{label}: {perf.t_eval_ms / max(n, 1):.1f} ms per generated token ({n} tokens)")
        texts.setdefault(gen, set()).add(out["choices"][0]["message"]["content"])
        llm.close()
    same = len(set().union(*texts.values())) == 1
    print(f"# the same text with every thread count: {same}; load average {os.getloadavg()[0]:.2f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", metavar="QUESTIONS.csv")
    ap.add_argument("--prompt", default="cot")
    ap.add_argument("--shots", type=int, default=3)
    ap.add_argument("--scoring", default="logprob")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", action="store_true")
    ap.add_argument("--max-tokens", type=int, default=300)
    args = ap.parse_args(argv)
    if not (args.tokens or args.threads):
        ap.error("give --tokens QUESTIONS.csv and/or --threads")
    if args.tokens:
        tokens(args.tokens, args.prompt, args.shots, args.seed, args.scoring)
    if args.threads:
        threads(args.max_tokens)
    return 0


if __name__ == "__main__":
    sys.exit(main())
