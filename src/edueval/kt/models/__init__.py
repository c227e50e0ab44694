"""The models users compare beside BKT, and what serves them.

- :mod:`.logistic` (+ :mod:`._logistic_kernels`) -- AFM and PFA;
- :mod:`.registry` -- model specifications (``bkt``, ``bkt-multiprior``, ``afm``, ``pfa``, ...);
- :mod:`.crossval` -- student-level cross-validation; :mod:`.compare` -- models compared on the
  same folds (AIC, BIC, held-out metrics, paired differences);
- :mod:`.roster` -- replaying a fitted model over a class roster;
  :mod:`.model_files` -- saving and loading a fitted model (no pickle).

Compute only (no run folder, no report).  Users import from :mod:`edueval.kt`.
"""
