"""The run layer of the ``edueval kt`` commands: read the inputs, call the compute modules, write
the run folder (config, tables, ``results.json``, report).  Every function here writes files; the
computing is done in the other sub-packages of :mod:`edueval.kt`.

- :mod:`.pipeline` -- ``kt simulate / predict / fit / evaluate / study``
  (``*_run`` and :func:`~.pipeline.write_study_run`);
- :mod:`.dataset_runs` -- the same over partitioned data sets (out of core, Dask);
- :mod:`.fit_output` -- the tables and report of a fit;
- :mod:`.model_runs` -- ``kt crossvalidate / compare / roster``;
- :mod:`.study_report` -- the report of the Pardos & Yudelson replication.

Only the command line (and the demo) imports these modules; this ``__init__`` imports none of them.
(Named ``commands``, not ``runs``: ``.gitignore`` ignores every ``runs/`` folder.)
"""
