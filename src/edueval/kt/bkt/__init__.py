"""Bayesian Knowledge Tracing: the model and its variants.

- :mod:`.model` -- :class:`BKT` (fit by EM, predict, simulate, the forward filter);
- :mod:`.params` -- parameter sets (:class:`BKTParams`, random draws, parameter files);
- :mod:`.variants`, :mod:`.variant_design`, :mod:`.first_response` -- the BKT variants
  (multi-prior, multi-guess/slip, multi-learn, ...): fitting, prediction and parameter files;
- :mod:`.simulate_items` -- simulation with item-level guess, slip and learn;
- :mod:`._kernels`, :mod:`._variant_kernels` -- the compiled (numba) forward filter and EM.

Compute only (no run folder, no report).  Users import from :mod:`edueval.kt`.
"""
