"""Start JAX the way edueval does (host devices for parallel chains) before any test imports it."""

from edueval.pairwise._sampler import jax_modules

jax_modules()
