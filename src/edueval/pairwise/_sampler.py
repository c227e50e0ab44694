"""NUTS through numpyro, and the posterior summaries every pairwise model reports.

We write no sampler: :func:`run_nuts` hands a numpyro model to ``numpyro.infer.NUTS`` (Hoffman &
Gelman 2014) and returns the draws as NumPy arrays shaped ``(chain, draw, ...)``.  The highest-
density interval comes from ``numpyro.diagnostics``; R-hat and the effective sample sizes come from
ArviZ (Vehtari et al. 2021): the rank-normalised split R-hat (:func:`rhat`) and the bulk and tail
ESS (:func:`ess`, :func:`ess_tail`), with the usual thresholds -- R-hat above :data:`RHAT_MAX`
(1.01) or an ESS below :data:`ESS_MIN` (400) is reported as a warning.  ArviZ is imported on first
use (it loads xarray and matplotlib); :func:`inference_data` turns draws into its
``InferenceData``.

Chains run in parallel on separate XLA host devices when the process has enough of them; on import
of JAX through :func:`jax_modules` we ask for as many host devices as CPU cores and at least 4
(numpyro's ``set_host_device_count``; on 2 cores, 4 chains on 4 devices still ran ~1.5x faster than
4 vectorised chains), which must happen before JAX starts.  If JAX was already started by
someone else with fewer devices, chains are vectorised instead.  The chain method is recorded in
every result, because draws are reproducible bit for bit only for the same method on the same
machine.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..extras import require

__all__ = [
    "ESS_MIN",
    "RHAT_MAX",
    "Draws",
    "arviz_module",
    "diagnostic_warnings",
    "ess",
    "ess_tail",
    "hdi",
    "inference_data",
    "jax_modules",
    "rhat",
    "run_nuts",
]

#: a parameter whose rank-normalised split R-hat is above this has not converged (Vehtari et al.)
RHAT_MAX = 1.01
#: fewer effective draws (bulk or tail) than this make the summaries unreliable (Vehtari et al.)
ESS_MIN = 400

_CACHE_SET = False
_BAYES = "Bayesian Bradley-Terry fitting (edueval.pairwise)"
_MIN_DEVICES = 4  # default chains; more devices than cores still beats vectorised chains


def jax_modules():
    """Import jax and numpyro (lazily: the CLI starts fast), setting up host devices first."""
    if "jax" not in sys.modules:
        flags = os.environ.get("XLA_FLAGS", "")
        if "xla_force_host_platform_device_count" not in flags:
            n = max(_MIN_DEVICES, os.cpu_count() or 1)
            os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={n}".strip()
    jax = require("jax", "bayes", _BAYES)
    numpyro = require("numpyro", "bayes", _BAYES)
    _compilation_cache(jax)
    return jax, numpyro


def _compilation_cache(jax) -> None:
    """Keep XLA's compiled samplers on disk (JAX's persistent compilation cache).

    Compiling NUTS is most of the time of a small fit (about 1 s per model shape on a 2-core
    laptop).  The cache is keyed by the compiled program, so a later fit of the same shapes -- the
    second tie handling of a replication, the next CLI run -- loads it instead.  Results are the
    same bit for bit (the same executable runs).  Location: ``$EDUEVAL_JAX_CACHE``, else
    ``$XDG_CACHE_HOME/edueval/jax`` (``~/.cache/edueval/jax``); ``EDUEVAL_JAX_CACHE=off`` disables
    it; a cache the user configured for JAX is left alone.
    """
    global _CACHE_SET
    if _CACHE_SET:
        return
    _CACHE_SET = True
    where = os.environ.get("EDUEVAL_JAX_CACHE", "")
    if where.lower() in {"off", "0", "false", "no"}:
        return
    try:
        if jax.config.jax_compilation_cache_dir:
            return
        if not where:
            base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
                os.path.expanduser("~"), ".cache"
            )
            where = os.path.join(base, "edueval", "jax")
        os.makedirs(where, exist_ok=True)
        jax.config.update("jax_compilation_cache_dir", where)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.2)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    except (OSError, AttributeError):  # read-only home, or an older JAX: just compile
        return


@dataclass
class Draws:
    """Posterior draws of one NUTS run."""

    samples: dict[str, np.ndarray]  # site -> (chain, draw, ...)
    diverging: np.ndarray  # (chain, draw) bool
    num_steps: np.ndarray  # (chain, draw) leapfrog steps per iteration
    chains: int
    warmup: int
    draws: int
    seed: int
    chain_method: str
    seconds: float
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def n_divergent(self) -> int:
        return int(self.diverging.sum())


def chain_method_for(chains: int) -> str:
    jax, _ = jax_modules()
    if chains == 1:
        return "sequential"
    return "parallel" if jax.local_device_count() >= chains else "vectorized"


def run_nuts(
    model,
    *args: Any,
    chains: int = 4,
    warmup: int = 1000,
    draws: int = 1000,
    seed: int = 0,
    target_accept: float = 0.8,
    chain_method: str | None = None,
    progress: bool = False,
    init_strategy=None,
) -> Draws:
    """Sample ``model(*args)`` with NUTS: ``chains`` x (``warmup`` + ``draws``), seeded.

    The model's arguments are traced (``jit_model_args``), so another call with arrays of the same
    shapes reuses the compiled sampler.
    """
    jax, numpyro = jax_modules()
    from numpyro.infer import MCMC, NUTS, init_to_uniform

    if chains < 1 or warmup < 1 or draws < 1:
        raise ValueError("chains, warmup and draws must be at least 1")
    method = chain_method or chain_method_for(chains)
    kernel = NUTS(
        model,
        target_accept_prob=target_accept,
        init_strategy=init_strategy or init_to_uniform(radius=2.0),
    )
    mcmc = MCMC(
        kernel,
        num_warmup=warmup,
        num_samples=draws,
        num_chains=chains,
        chain_method=method,
        progress_bar=progress,
        jit_model_args=True,
    )
    t0 = time.perf_counter()
    mcmc.run(
        jax.random.PRNGKey(int(seed) % (2**32)), *args, extra_fields=("diverging", "num_steps")
    )
    samples = {k: np.asarray(v) for k, v in mcmc.get_samples(group_by_chain=True).items()}
    extra = mcmc.get_extra_fields(group_by_chain=True)
    seconds = time.perf_counter() - t0
    return Draws(
        samples=samples,
        diverging=np.asarray(extra["diverging"]).astype(bool),
        num_steps=np.asarray(extra["num_steps"]),
        chains=chains,
        warmup=warmup,
        draws=draws,
        seed=int(seed),
        chain_method=method,
        seconds=seconds,
    )


def arviz_module():
    """Import ArviZ (lazily: it loads xarray and matplotlib), without its import-time notice."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return require("arviz", "bayes", "computing R-hat, ESS or InferenceData (ArviZ)")


def _diagnostic(x: np.ndarray, kind: str) -> np.ndarray:
    """ArviZ's ``rhat`` (rank method) or ``ess`` (``bulk``/``tail``) of draws shaped ``(chain,
    draw, ...)``, one value per trailing element; NaN with fewer than 4 draws per chain."""
    xr = require("xarray", "bayes", "computing R-hat, ESS or InferenceData (ArviZ)")
    x = np.asarray(x, dtype=np.float64)
    if x.ndim < 2:
        raise ValueError("draws must be shaped (chain, draw, ...)")
    if x.shape[1] < 4 or x.shape[0] * x.shape[1] == 0:
        return np.full(x.shape[2:], np.nan)
    az = arviz_module()
    dims = ["chain", "draw", *(f"dim_{k}" for k in range(x.ndim - 2))]
    data = xr.Dataset({"x": (dims, x)})
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = az.rhat(data, method="rank") if kind == "rhat" else az.ess(data, method=kind)
    return np.asarray(out["x"].values, dtype=np.float64).reshape(x.shape[2:])


def rhat(x: np.ndarray) -> np.ndarray:
    """ArviZ's rank-normalised split R-hat of draws shaped ``(chain, draw, ...)`` (NaN with fewer
    than 4 draws per chain)."""
    return _diagnostic(x, "rhat")


def ess(x: np.ndarray) -> np.ndarray:
    """ArviZ's bulk effective sample size of draws shaped ``(chain, draw, ...)`` (never negative;
    NaN with fewer than 4 draws per chain)."""
    return _diagnostic(x, "bulk")


def ess_tail(x: np.ndarray) -> np.ndarray:
    """ArviZ's tail effective sample size (of the 5% and 95% quantiles) of draws shaped
    ``(chain, draw, ...)``."""
    return _diagnostic(x, "tail")


def diagnostic_warnings(
    max_rhat: float, n_rhat_above: int, min_ess_bulk: float, min_ess_tail: float, n_ess_below: int
) -> list[str]:
    """The warning lines for R-hat above :data:`RHAT_MAX` and ESS below :data:`ESS_MIN`."""
    out = []
    if n_rhat_above:
        out.append(
            f"{n_rhat_above} quantity(ies) with R-hat > {RHAT_MAX} (max {max_rhat:.3f}); the "
            "chains disagree: run more draws (draws=/warmup=) before trusting them"
        )
    if n_ess_below:
        out.append(
            f"{n_ess_below} quantity(ies) with ESS < {ESS_MIN} (min bulk {min_ess_bulk:.0f}, "
            f"tail {min_ess_tail:.0f}); means and intervals are imprecise: run more draws"
        )
    return out


def inference_data(
    posterior: dict[str, np.ndarray],
    dims: dict[str, list[str]],
    coords: dict[str, Any],
    draws: Draws | None = None,
    group_coords: Any = None,
    attrs: dict[str, Any] | None = None,
):
    """An ArviZ ``InferenceData`` with ``posterior`` (name -> ``(chain, draw, ...)``, float64) and,
    from ``draws``, the sample stats ``diverging`` and ``n_steps`` (leapfrog steps per iteration;
    with a ``block`` dimension when the groups were sampled in blocks).  ``group_coords`` (a
    DataFrame, one row per entry of the ``group`` dimension) adds its columns as coordinates along
    ``group`` (``group_<column>`` where the column's name is already a dimension)."""
    az = arviz_module()
    stats = None
    if draws is not None:
        stats = {"diverging": np.asarray(draws.diverging, dtype=bool),
                 "n_steps": np.asarray(draws.num_steps, dtype=np.int64)}  # fmt: skip
        if stats["diverging"].ndim == 3:
            dims = {**dims, "diverging": ["block"], "n_steps": ["block"]}
    posterior = {k: np.asarray(v, dtype=np.float64) for k, v in posterior.items()}
    attrs = {"inference_library": "numpyro", **(attrs or {})}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "more chains than draws": short fits
        if int(az.__version__.split(".")[0]) >= 1:  # ArviZ 1.x: a DataTree, groups in one dict
            groups = {"posterior": posterior, **({"sample_stats": stats} if stats else {})}
            idata = az.from_dict(groups, coords=coords, dims=dims, attrs=attrs)
        else:
            idata = az.from_dict(
                posterior=posterior, sample_stats=stats, coords=coords, dims=dims, attrs=attrs
            )
    if group_coords is not None:
        post = idata["posterior"]
        post = post.to_dataset() if hasattr(post, "to_dataset") else post
        taken = set(post.dims)
        extra = {(f"group_{c}" if c in taken else str(c)):
                 ("group", np.array([str(v) for v in group_coords[c]], dtype=str))
                 for c in group_coords}  # fmt: skip
        if int(az.__version__.split(".")[0]) >= 1:
            idata["posterior"] = post.assign_coords(extra)
        else:  # ArviZ 0.x's __setitem__ appends the name to the group list: posterior twice
            idata.posterior = post.assign_coords(extra)
    return idata


def hdi(x: np.ndarray, prob: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Highest-density interval over axis 0 of ``x`` (draws first): ``(low, high)``."""
    hpdi = require("numpyro.diagnostics", "bayes", _BAYES).hpdi
    out = np.asarray(hpdi(np.asarray(x), prob=prob, axis=0))
    return out[0], out[1]
