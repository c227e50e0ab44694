"""What answered (issue 20, 5): the server identity in the cache key, and the model, backend and
base URLs recorded in a run's config.json."""

from __future__ import annotations

import hashlib
import json

import pytest

from edueval.io import InputError
from edueval.models import ChatResult, ResponseCache, get_model
from edueval.models.errors import ModelConfigError
from edueval.models.local import LocalBackend, smollm2_path
from edueval.models.pool import read_endpoints
from edueval.models.provenance import (
    model_provenance,
    normalise_base_url,
    servers_identity,
    weights_sha256,
)

from .test_client import make_requests

KEY_ENV = "EDUEVAL_TEST_PROVENANCE_KEY"
SECRET = "sk-test-never-written-anywhere-0123456789"


def _script(tag: str):
    return lambda body: f"{tag}: {body['messages'][-1]['content']}"


def _texts(client, requests) -> list[str]:
    results = client.complete_many(requests)
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    return [r.text for r in results]


def _endpoints_file(tmp_path, name: str, urls: list[str], cache_id: str | None = None):
    path = tmp_path / name
    lines = [f"cache_id: {cache_id}"] if cache_id else []
    lines += ["endpoints:", *(f"  - url: {u}" for u in urls)]
    path.write_text("\n".join(lines) + "\n")
    return path


# -- the cache key holds the server --------------------------------------------------------------


def test_two_servers_with_the_same_model_name_do_not_share_answers(serve, connect):
    """Both call their model ``scripted`` and share one cache folder: B gets every request and
    answers it itself; each server's answers are then replayed for that server alone."""
    a, b = serve(_script("A")), serve(_script("B"))
    requests = make_requests(6, prefix="shared")
    with connect(a) as on_a:
        first_a = _texts(on_a, requests)
    with connect(b) as on_b:
        first_b = _texts(on_b, requests)
        assert on_b.stats().cache_hits == 0
    assert a.calls == 6 and b.calls == 6, (a.calls, b.calls)
    assert all(t.startswith("A: ") for t in first_a) and all(t.startswith("B: ") for t in first_b)
    with connect(a) as again_a, connect(b) as again_b:
        assert _texts(again_a, requests) == first_a and _texts(again_b, requests) == first_b
        assert again_a.stats().cache_hits == again_b.stats().cache_hits == 6
    assert a.calls == 6 and b.calls == 6


def test_one_server_written_two_ways_is_one_identity(serve, connect):
    """Host case, a default port and a trailing slash do not make another server."""
    a = serve(_script("A"))
    requests = make_requests(4, prefix="spelling")
    with connect(a) as plain:
        _texts(plain, requests)
    spelled = a.url.replace("http://", "HTTP://") + "/"
    with connect(spelled) as other:
        _texts(other, requests)
        assert other.stats().cache_hits == 4
    assert a.calls == 4


def test_a_pools_replicas_share_one_cache_identity(serve, tmp_path):
    """An endpoints file's pool has one identity: its replicas share answers, whichever answered,
    and the same pool with its replicas listed in another order, or with a replica less under the
    same ``cache_id``, replays them; a lone server of the pool outside it does not."""
    a, b = serve(_script("R"), latency=0.02), serve(_script("R"), latency=0.02)
    requests = make_requests(16, prefix="pool")
    opts = dict(cache_dir=tmp_path / "cache", api_key_env=KEY_ENV, max_connections=2)
    with get_model(
        "openai/scripted",
        endpoints=_endpoints_file(
            tmp_path, "ab.yaml", [a.url, b.url], cache_id="scripted-replicas"
        ),
        **opts,
    ) as pool:
        first = _texts(pool, requests)
    assert a.calls > 0 and b.calls > 0 and a.calls + b.calls == 16
    calls = a.calls + b.calls
    with get_model(
        "openai/scripted",
        endpoints=_endpoints_file(tmp_path, "b.yaml", [b.url], cache_id="scripted-replicas"),
        **opts,
    ) as smaller:
        assert _texts(smaller, requests) == first and smaller.stats().cache_hits == 16
    # without a cache_id the identity is the pool's sorted URLs: the order does not matter
    with get_model(
        "openai/scripted", endpoints=_endpoints_file(tmp_path, "ab2.yaml", [a.url, b.url]), **opts
    ) as unnamed:
        _texts(unnamed, requests)
    calls += 16
    with get_model(
        "openai/scripted", endpoints=_endpoints_file(tmp_path, "ba.yaml", [b.url, a.url]), **opts
    ) as reordered:
        assert _texts(reordered, requests) == first and reordered.stats().cache_hits == 16
    with get_model("openai/scripted", base_url=[a.url, b.url], **opts) as two_urls:
        _texts(two_urls, requests)
        assert two_urls.stats().cache_hits == 16  # several --base-url: the same pool
    assert a.calls + b.calls == calls
    with get_model("openai/scripted", base_url=a.url, **opts) as alone:
        _texts(alone, requests)
        assert alone.stats().cache_hits == 0
    assert a.calls + b.calls == calls + 16


def test_entries_cached_before_the_server_was_in_the_key_miss_without_error(serve, connect,
                                                                             tmp_path):  # fmt: skip
    a = serve(_script("A"))
    requests = make_requests(3, prefix="old")
    old = ResponseCache(tmp_path / "cache")
    for r in requests:  # as written by earlier versions: the key held only the model's name
        old.put(
            r.cache_key("openai/scripted"), "openai/scripted", ChatResult(text="stale", ok=True)
        )
    old.close()
    with connect(a) as client:
        assert all(t.startswith("A: ") for t in _texts(client, requests))
    assert a.calls == 3


@pytest.mark.parametrize(
    ("url", "normal"),
    [("HTTP://GPU1.Example:80/v1/", "http://gpu1.example/v1"),
     ("https://user:pw@Api.OpenAI.com:443/v1?key=abc#frag", "https://api.openai.com/v1"),
     ("http://127.0.0.1:8000/v1//", "http://127.0.0.1:8000/v1"),
     ("https://host:8443/V1", "https://host:8443/V1"),
     ("http://[::1]:8080/v1/", "http://[::1]:8080/v1")],
)  # fmt: skip
def test_base_urls_are_normalised_and_never_keep_credentials(url, normal):
    assert normalise_base_url(url) == normal


def test_servers_identity_is_sorted_and_a_cache_id_wins():
    assert servers_identity(["http://b/v1", "http://A:80/v1/"]) == "http://a/v1 http://b/v1"
    assert servers_identity(["http://b/v1"], cache_id="gpus") == "pool:gpus"


def test_an_endpoints_file_names_its_cache_id(tmp_path):
    path = _endpoints_file(tmp_path, "e.yaml", ["http://a/v1", "http://b/v1"], cache_id="llama3")
    endpoints, cache_id = read_endpoints(path)
    assert [e.url for e in endpoints] == ["http://a/v1", "http://b/v1"] and cache_id == "llama3"
    bad = tmp_path / "bad.yaml"
    bad.write_text("cache_id: ''\nendpoints:\n  - url: http://a/v1\n")
    with pytest.raises(InputError, match="cache_id must be a non-empty string"):
        read_endpoints(bad)
    bad.write_text("name: x\nendpoints:\n  - url: http://a/v1\n")
    with pytest.raises(InputError, match="unknown key 'name'"):
        read_endpoints(bad)


# -- what a run records ---------------------------------------------------------------------------


def test_provenance_of_a_server_and_of_a_pool_names_every_url_and_no_key(monkeypatch, tmp_path):
    monkeypatch.setenv(KEY_ENV, SECRET)
    with get_model("openai/llama3", base_url="http://GPU1:80/v1/", api_key_env=KEY_ENV,
                   no_cache=True) as one:  # fmt: skip
        p = one.provenance()
    assert p == {"spec": "openai/llama3", "backend": "openai-compatible", "model": "llama3",
                 "base_urls": ["http://gpu1/v1"], "api_key_env": KEY_ENV,
                 "cache_identity": "openai/llama3@http://gpu1/v1"}  # fmt: skip
    path = _endpoints_file(tmp_path, "e.yaml", ["http://gpu1/v1", "http://gpu2/v1"], "l3")
    with get_model("openai/llama3", endpoints=path, api_key_env=KEY_ENV, no_cache=True) as pool:
        p = model_provenance(pool)
    assert p["base_urls"] == ["http://gpu1/v1", "http://gpu2/v1"]
    assert p["pool"]["cache_id"] == "l3" and p["cache_identity"] == "openai/llama3@pool:l3"
    assert SECRET not in json.dumps(p)


def _questions(tmp_path):
    from edueval.misconceptions import generate_items

    path = tmp_path / "questions.csv"
    generate_items(2, seed=4).to_csv(path, index=False)
    return path


def _malalgo(tmp_path, questions, out, **model_options):
    from edueval.malalgo.pipeline import run_malalgo

    def opener(log_path):
        return get_model("openai/scripted", cache_dir=tmp_path / "cache", log_path=log_path,
                         api_key_env=KEY_ENV, retry_base_delay=0.001,
                         **model_options)  # fmt: skip

    run_malalgo(out, questions, open_model=opener, model_name="openai/scripted")
    text = (out / "config.json").read_text()
    return json.loads(text), text


def test_a_malalgo_run_records_model_backend_and_base_urls_never_the_key(serve, tmp_path,
                                                                         monkeypatch):  # fmt: skip
    monkeypatch.setenv(KEY_ENV, SECRET)
    a, b = (
        serve(lambda body: '{"Correct Choice": "A"}'),
        serve(lambda body: '{"Correct Choice": "A"}'),
    )
    questions, out = _questions(tmp_path), tmp_path / "run"
    config, text = _malalgo(tmp_path, questions, out, base_url=a.url)
    model = config["model"]
    assert model["spec"] == "openai/scripted" and model["backend"] == "openai-compatible"
    assert model["model"] == "scripted" and model["base_urls"] == [normalise_base_url(a.url)]
    assert config["models"] == [model] and a.calls > 0
    assert SECRET not in text and SECRET not in (out / "calls.jsonl").read_text()
    # the same folder again, against a pool: only this run's clients are recorded
    path = _endpoints_file(tmp_path, "e.yaml", [a.url, b.url], cache_id="ab")
    config, text = _malalgo(tmp_path, questions, out, endpoints=path)
    assert config["model"]["base_urls"] == [normalise_base_url(u) for u in (a.url, b.url)]
    assert config["model"]["pool"]["cache_id"] == "ab" and len(config["models"]) == 1
    assert SECRET not in text


def test_every_client_of_a_run_is_recorded(serve, tmp_path):
    """Two clients writing one run's calls.jsonl (turing generate's AI and generator) are both
    in ``models``; ``model`` is the first opened."""
    from edueval.model_runs import finish_model_run
    from edueval.models import ModelStats
    from edueval.report import Report
    from edueval.runs import RunDir

    a, b = serve(_script("A")), serve(_script("B"))
    run = RunDir(tmp_path / "run", command="test two clients", params={})
    log = run.path / "calls.jsonl"
    with get_model("openai/ai", base_url=a.url, no_cache=True, log_path=log), \
         get_model("openai/generator", base_url=b.url, no_cache=True, log_path=log):  # fmt: skip
        pass
    finish_model_run(run, {}, Report("t"), ModelStats())
    config = json.loads((run.path / "config.json").read_text())
    assert [m["spec"] for m in config["models"]] == ["openai/ai", "openai/generator"]
    assert config["model"]["base_urls"] == [normalise_base_url(a.url)]


# -- the embedded model: identified by its weights -------------------------------------------------


def _smollm2():
    try:
        return smollm2_path()
    except ModelConfigError as exc:
        pytest.skip(str(exc))


def test_local_provenance_names_the_weights_file_and_its_sha256():
    """No model is loaded: the provenance reads the weights file only."""
    path = _smollm2()
    with open(path, "rb") as fh:
        expected = hashlib.file_digest(fh, "sha256").hexdigest()
    backend = LocalBackend()
    p = model_provenance(backend)
    assert p["backend"] == "local" and p["spec"] == "local" and p["base_urls"] == []
    assert p["weights"]["file"] == path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert p["weights"]["sha256"] == expected and p["weights"]["bytes"] == path.stat().st_size
    assert backend.model_id.startswith(f"local/sha256:{expected}/")


def test_local_cache_identity_is_the_weights_content_not_the_file_name(tmp_path):
    one, same, other = tmp_path / "one.gguf", tmp_path / "renamed.gguf", tmp_path / "other.gguf"
    one.write_bytes(b"weights" * 1000)
    same.write_bytes(b"weights" * 1000)
    other.write_bytes(b"weights" * 999 + b"changed")
    ids = [LocalBackend(model_path=p).model_id for p in (one, same, other)]
    assert ids[0] == ids[1] != ids[2]
    assert weights_sha256(one) == hashlib.sha256(one.read_bytes()).hexdigest()
    p = LocalBackend(model_path=same).provenance()
    assert p["spec"] == f"local:{same.resolve()}" and p["weights"]["file"] == "renamed.gguf"
