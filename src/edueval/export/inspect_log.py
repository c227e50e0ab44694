"""An inspect_ai eval log from a finished LLM run folder, so that the run opens in ``inspect view``.

The log is built with ``inspect_ai.log``'s own classes (the ``inspect`` extra: ``pip install
"edueval[inspect]"``; imported only when a log is made) and written in inspect's ``.eval`` format
(a zip of JSON, inspect's default since 0.3.46) or, for a ``.json`` file name, its JSON format:
``inspect_ai.log.read_eval_log`` reads both.

Mapping (see :mod:`.run_items` for what an item is in each protocol):

* **eval spec**: task ``edueval/<protocol>``; the model recorded in ``config.json``; created = the
  run's start; dataset = the input file's name, its path and the number of samples; the run's
  parameters as the task arguments; the package versions the run recorded; ids derived from
  ``config.json``, so exporting the same run again gives the same ids and file name.
* **samples**, one per item: ``input`` = the messages of the call the answer was read from,
  ``messages`` = every call of the item (prompt and reply), ``output`` = that call's reply under
  the name of the model that answered (with its token usage, and its error for a failed call),
  ``target`` = the correct answer (the right label; the real teacher's reply for ``tutor``),
  ``scores`` = edueval's score of the item with the parsed answer as ``answer`` and the status as
  ``explanation``, ``metadata`` = the item's row of the run's table.
* **results**: one score per headline group of ``results.json`` (``mcq``/``aia``/``mia``; each
  QG-SMS method's AA and CA overall and per dimension; ``f1``), its metrics copied, not
  recomputed; the whole ``results.json`` as the results' metadata.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from ..extras import install_command, require
from ..io import InputError
from .run_items import Item, LLMRun, read_llm_run

__all__ = ["INSPECT_INSTALL", "default_log_path", "to_inspect_log", "write_inspect_log"]

INSPECT_INSTALL = install_command("inspect")

#: finish reasons of the OpenAI protocol -> inspect's stop reasons
_STOP = {"stop": "stop", "length": "max_tokens", "content_filter": "content_filter",
         "tool_calls": "tool_calls"}  # fmt: skip


def _inspect() -> SimpleNamespace:
    """inspect_ai's modules, or one line saying how to install them."""
    what = "exporting to inspect_ai (edueval export inspect)"
    return SimpleNamespace(**{m: require(f"inspect_ai.{m}", "inspect", what)
                              for m in ("log", "model", "scorer")})  # fmt: skip


def _ident(run: LLMRun) -> str:
    text = json.dumps(run.config, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:22]


def _message(ia: SimpleNamespace, msg: dict[str, Any], model: str) -> Any:
    content = msg.get("content")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    role = msg.get("role")
    if role == "system":
        return ia.model.ChatMessageSystem(content=text)
    if role == "assistant":
        return ia.model.ChatMessageAssistant(content=text, model=model)
    return ia.model.ChatMessageUser(content=text)


def _usage(ia: SimpleNamespace, calls: list[dict[str, Any]]) -> Any:
    given = sum(int(c.get("prompt_tokens") or 0) for c in calls)
    made = sum(int(c.get("completion_tokens") or 0) for c in calls)
    return ia.model.ModelUsage(input_tokens=given, output_tokens=made, total_tokens=given + made)


def _reply(call: dict[str, Any]) -> tuple[str, str | None, str]:
    """A logged call's reply text, its error (None when it answered) and inspect's stop reason."""
    response = call.get("response") or {}
    error = None if call.get("ok", True) else str(call.get("error") or "failed")
    stop = _STOP.get(str(response.get("finish_reason")), "unknown")
    return str(response.get("text") or ""), error, stop


def _conversation(ia: SimpleNamespace, calls: list[dict[str, Any]], model: str) -> list[Any]:
    """Every call of an item, in order: its request's messages, then the reply."""
    out = []
    for call in calls:
        answered_by = str(call.get("model") or model)
        out += [
            _message(ia, m, answered_by) for m in (call.get("request") or {}).get("messages", [])
        ]
        text, _, _ = _reply(call)
        out.append(ia.model.ChatMessageAssistant(content=text, model=answered_by))
    return out


def _sample(ia: SimpleNamespace, run: LLMRun, item: Item) -> Any:
    calls = [c for tag in item.tags for c in run.calls.get(tag, [])]
    model = run.model
    if calls:
        last = calls[-1]
        answered_by = str(last.get("model") or model)
        text, error, stop = _reply(last)
        prompt: Any = [_message(ia, m, answered_by)
                       for m in (last.get("request") or {}).get("messages", [])]  # fmt: skip
        messages = _conversation(ia, calls, model)
    else:  # no model call behind this item (e.g. QG-SMS 'direct'), or no call log
        answered_by, error, stop = model, None, "unknown"
        text = item.reply if item.reply is not None else (item.answer or "")
        prompt = f"(no model call logged for {item.id})"
        messages = []
    output = ia.model.ModelOutput.from_content(answered_by, text, stop_reason=stop, error=error)
    output.usage = _usage(ia, calls[-1:])
    scores = None
    if item.score_name is not None:
        scores = {item.score_name: ia.scorer.Score(value=item.value, answer=item.answer,
                                                   explanation=item.explanation or None)}  # fmt: skip
    return ia.log.EvalSample(
        id=item.id, epoch=1, input=prompt, target=item.target, messages=messages, output=output,
        scores=scores, metadata=item.metadata,
        model_usage={answered_by: _usage(ia, calls)} if calls else {},
        total_time=sum(float(c.get("latency_s") or 0.0) for c in calls) if calls else None,
    )  # fmt: skip


def _generate_config(ia: SimpleNamespace, run: LLMRun) -> Any:
    """The generation settings of the run's first logged call (temperature, tokens, seed)."""
    first = min((c for calls in run.calls.values() for c in calls),
                key=lambda c: c.get("seq", 0), default={})  # fmt: skip
    request = first.get("request") or {}
    keys = ("temperature", "max_tokens", "seed")
    return ia.model.GenerateConfig(**{k: request[k] for k in keys if request.get(k) is not None})


def _spec(ia: SimpleNamespace, run: LLMRun, servers: list[str]) -> Any:
    config = run.config
    ident = _ident(run)
    dataset = ia.log.EvalDataset(
        name=run.dataset.stem if run.dataset else run.protocol,
        location=str(run.dataset) if run.dataset else None,
        samples=len(run.items), sample_ids=[i.id for i in run.items],
    )  # fmt: skip
    versions = {k: str(v) for k, v in (config.get("versions") or {}).items()}
    return ia.log.EvalSpec(
        eval_id=ident, run_id=ident, task_id=ident, created=config["started"],
        task=f"edueval/{run.protocol}", task_display_name=f"edueval {run.command}",
        task_args=config.get("params") or {}, solver=f"edueval {run.command}",
        dataset=dataset, model=run.model, model_generate_config=_generate_config(ia, run),
        model_base_url=servers[0] if len(servers) == 1 else None, config=ia.log.EvalConfig(),
        packages=versions,
        metadata={"edueval_command": run.command, "run_dir": str(run.path),
                  "seed": config.get("seed"), "inputs": config.get("inputs") or {},
                  "servers": servers, "model": config.get("model"),
                  "models": config.get("models")},
    )  # fmt: skip


def _results(ia: SimpleNamespace, run: LLMRun) -> Any:
    scored: dict[str, int] = defaultdict(int)
    for item in run.items:
        if item.score_name is not None:
            scored[item.score_name] += 1
    n = len(run.items)
    scores = [
        ia.log.EvalScore(name=m.name, scorer=f"edueval/{run.protocol}",
                         scored_samples=scored[m.name], unscored_samples=n - scored[m.name],
                         metrics={k: ia.log.EvalMetric(name=k, value=v)
                                  for k, v in m.metrics.items()})
        for m in run.measures
    ]  # fmt: skip
    return ia.log.EvalResults(total_samples=n, completed_samples=n, scores=scores,
                              metadata=run.results)  # fmt: skip


def to_inspect_log(run_dir: str | Path) -> Any:
    """The inspect_ai ``EvalLog`` of a finished LLM run folder (``malalgo run``, ``qgsms run``,
    ``tutor reply``): one sample per item with its prompt, reply, parsed answer, score and model.

    The folder is only read.  Raises :class:`~edueval.io.InputError` (one line) for a folder that
    is not a finished LLM run, and when inspect_ai is not installed (``INSPECT_INSTALL``)."""
    ia = _inspect()
    run = read_llm_run(run_dir)
    servers = run.base_urls
    usage: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for calls in run.calls.values():
        for c in calls:
            usage[str(c.get("model") or run.model)].append(c)
    stats = ia.log.EvalStats(started_at=run.config["started"],
                             completed_at=run.config.get("finished") or "",
                             model_usage={m: _usage(ia, c) for m, c in usage.items()})  # fmt: skip
    plan = ia.log.EvalPlan(name="edueval", steps=[ia.log.EvalPlanStep(
        solver=f"edueval {run.command}", params=run.config.get("params") or {})])  # fmt: skip
    return ia.log.EvalLog(
        status="success", eval=_spec(ia, run, servers), plan=plan, results=_results(ia, run),
        stats=stats, samples=[_sample(ia, run, item) for item in run.items],
    )  # fmt: skip


def default_log_path(log: Any, run_dir: str | Path) -> Path:
    """``RUN_DIR/inspect/<created>_edueval-<protocol>_<id>.eval``: inspect's own file naming, so
    ``inspect view --log-dir RUN_DIR/inspect`` lists it."""
    stamp = str(log.eval.created).replace(":", "-")
    task = log.eval.task.replace("/", "-")
    return Path(run_dir) / "inspect" / f"{stamp}_{task}_{log.eval.eval_id}.eval"


def write_inspect_log(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Write the run's inspect_ai log to ``out`` (``.eval``, inspect's default format, or
    ``.json``), by default :func:`default_log_path`; returns the path written.  Nothing else in
    the run folder is touched."""
    log = to_inspect_log(run_dir)
    path = Path(out) if out is not None else default_log_path(log, run_dir)
    if path.suffix not in (".eval", ".json"):
        raise InputError(f"out= must name a .eval or .json file (inspect_ai's formats), not "
                         f"'{path.name}'")  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    ia = _inspect()
    ia.log.write_eval_log(log, str(path), format=path.suffix[1:])
    return path
