"""Knowledge tracing out of core: data sets larger than memory, partition by partition.

- :mod:`.outofcore` -- fit, predict and evaluate per Parquet partition (metric sums that pool
  exactly);
- :mod:`.simulate_log` -- a simulated response log written in row groups, never held whole.

Compute only; the run layer over them is :mod:`edueval.kt.commands.dataset_runs`.
"""
