"""The Pardos & Yudelson (2013) replication: does predicting performance well mean knowing
*when* students learn?

- :mod:`.study` -- one simulated study (:func:`~.study.simulate_study` -> ``StudyResult``:
  Tables 2 and 3, Experiment 3);
- :mod:`.replications` -- R independent replications as executor tasks and their spread.

Compute only; the run folder and the report of ``edueval kt study`` are
:func:`edueval.kt.commands.pipeline.write_study_run` and :mod:`edueval.kt.commands.study_report`.
"""
