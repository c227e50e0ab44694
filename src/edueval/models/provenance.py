"""What answered: the server identity in the cache key, and the model recorded in ``config.json``.

**Cache identity.**  The response cache key (:meth:`~edueval.models.ChatRequest.cache_key`) is a
hash of the backend's ``model_id``, the messages and the generation parameters (a schema's
property order included when it is not sorted).  ``model_id``
names the model *and where it runs*, so two servers that both call their model ``llama3`` never
answer for each other:

* one OpenAI-compatible server: ``openai/<model>@<normalised base URL>``
  (:func:`normalise_base_url`: scheme and host lowercased, the default port (80, 443) dropped,
  trailing slashes removed; user name, password, query and fragment left out, so no credential
  is ever written into the cache);
* a pool of replicas (several ``--base-url``, or an ``--endpoints`` file): one identity for the
  whole pool, since its replicas serve one model -- ``openai/<model>@pool:<cache_id>`` when the
  endpoints file names a ``cache_id``, else ``openai/<model>@<the sorted normalised URLs>``
  (adding or removing a replica then starts a new cache: write a ``cache_id`` to keep it);
* the embedded model: ``local/sha256:<SHA-256 of the weights file>/ctx<n>/llama-cpp-<version>/<grammar>``
  (llama-cpp-python) or ``.../xllamacpp-<version>/<settings>-<grammar>`` (``SETTINGS_TAG``: prompt
  step size, no host-memory prompt cache; ``GRAMMAR_TAG``: how a JSON schema becomes a grammar).

Entries written before the key held the server simply miss (they stay in the SQLite file, unused,
until the cache is cleared).

**Provenance.**  :func:`model_provenance` describes a client (or backend) as recorded in a run's
``config.json`` (``model``; ``models`` lists every client of the run): the resolved model spec,
the backend (``local`` or ``openai-compatible``), every base URL (never an API key) and for the
embedded model its weights' file name, size and SHA-256.  A
:class:`~edueval.models.ModelClient` opened with a call log notes its backend under the log's
path (:func:`backends_logging_to`), so the run layer (:mod:`edueval.model_runs`) finds the
clients of a run from its ``calls.jsonl`` without the protocols passing them around.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "backends_logging_to",
    "model_provenance",
    "normalise_base_url",
    "note_logging_backend",
    "servers_identity",
    "weights_sha256",
]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalise_base_url(url: str) -> str:
    """``scheme://host[:port]/path``: scheme and host lowercased, a default port dropped, trailing
    slashes removed; credentials, query and fragment left out.

    >>> normalise_base_url("HTTP://GPU1.Example:80/v1/")
    'http://gpu1.example/v1'
    """
    text = str(url).strip()
    parts = urlsplit(text if "://" in text else f"http://{text}")
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:  # a port that is not a number: keep the text as written
        port = None
        host = parts.netloc.rpartition("@")[2].lower()
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    path = parts.path.rstrip("/")
    return f"{scheme}://{netloc}{path}"


def servers_identity(urls: list[str] | tuple[str, ...], cache_id: str | None = None) -> str:
    """The server part of a cache identity: ``pool:<cache_id>`` when given, else the sorted,
    de-duplicated normalised URLs separated by spaces (one URL: just that URL)."""
    if cache_id:
        return f"pool:{cache_id}"
    return " ".join(sorted({normalise_base_url(u) for u in urls}))


# -- weights of the embedded model ------------------------------------------------------------

_SHA_LOCK = threading.Lock()
_SHA: dict[tuple[str, int, int], str] = {}


def weights_sha256(path: str | Path) -> str:
    """SHA-256 of a weights file, computed once per process (and again only if the file's size
    or modification time change).  About 0.1-0.4 s for the 98 MB SmolLM2 file."""
    p = Path(path).resolve()
    st = p.stat()
    key = (str(p), st.st_size, st.st_mtime_ns)
    with _SHA_LOCK:
        digest = _SHA.get(key)
        if digest is None:
            h = hashlib.sha256()
            with open(p, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
            digest = _SHA[key] = h.hexdigest()
    return digest


# -- provenance ---------------------------------------------------------------------------------


def model_provenance(model: Any) -> dict[str, Any]:
    """What answered, for ``config.json``: a :class:`~edueval.models.ModelClient` or a backend.

    Keys: ``spec`` (the resolved model spec, e.g. ``openai/llama3`` or ``local``), ``backend``
    (``local`` or ``openai-compatible``), ``model`` (the model's name at the server, or the
    weights file's name), ``base_urls`` (every server, normalised; ``[]`` for the embedded
    model), ``cache_identity`` (the backend's ``model_id``: the identity hashed into every cache
    key), and per backend: ``pool``
    (``cache_id`` or ``null``, and each endpoint's URL and model name) for a pool, ``weights``
    (``file``, ``path``, ``bytes``, ``sha256``), ``runtime`` and ``n_ctx`` for the embedded
    model.  Never an API key (only the name of the variable that holds it)."""
    backend = getattr(model, "backend", model)
    describe = getattr(backend, "provenance", None)
    if callable(describe):
        return dict(describe())
    return {  # a backend of its own (tests, plug-ins): what the protocol says it has
        "spec": getattr(backend, "name", None),
        "backend": type(backend).__name__,
        "model": getattr(backend, "name", None),
        "base_urls": [],
        "cache_identity": getattr(backend, "model_id", None),
    }


# -- the clients of one call log ----------------------------------------------------------------

_LOG_LOCK = threading.Lock()
_BY_LOG: OrderedDict[str, list[Any]] = OrderedDict()
_MAX_LOGS = 256


def _log_key(path: str | Path) -> str:
    return str(Path(path).resolve())


def note_logging_backend(log_path: str | Path, backend: Any, *, fresh: bool) -> None:
    """Note that ``backend`` writes to the call log at ``log_path``; ``fresh``: the log file was
    created by this client (a new run), so backends noted for an earlier file there are
    forgotten."""
    key = _log_key(log_path)
    with _LOG_LOCK:
        if fresh or key not in _BY_LOG:
            _BY_LOG[key] = []
        _BY_LOG[key].append(backend)
        _BY_LOG.move_to_end(key)
        while len(_BY_LOG) > _MAX_LOGS:
            _BY_LOG.popitem(last=False)


def backends_logging_to(log_path: str | Path) -> list[Any]:
    """The backends of the clients that wrote to the call log at ``log_path`` since the file was
    created, in the order the clients were opened (this process only)."""
    with _LOG_LOCK:
        return list(_BY_LOG.get(_log_key(log_path), []))
