"""One source of defaults for the library and the command line (issue 39, 4).

A notebook user and the command line must get the same numbers when neither sets an option, so
each default that both sides have is written here once: the library's signatures and the
command line's options both read it (``tests/test_defaults.py`` holds every protocol to it).

Seeds: every random choice is seeded by default, in Python as on the command line, with
:data:`SEED` (``--seed 1``).  No library default is ``None`` (fresh entropy): scikit-learn's
convention (``random_state=None``) is not needed by anything edueval offers -- its estimators
take a seed that can be set, which is all its checks ask -- and an unseeded default would give a
notebook different numbers on every run and different from ``edueval ... --seed 1``.  Where a
function takes ``seed=None``, it means edueval's fixed :data:`edueval.seeding.DEFAULT_SEED`
(never the clock), not the default :data:`SEED`.
"""

from __future__ import annotations

__all__ = [
    "MIN_COMPARISONS",
    "N_BOOT",
    "RATER_TIES",
    "SEED",
    "TURING_SE",
    "TURING_SIMULATION_SE",
]

#: Seed of every random choice (EM restarts, simulations, MCMC chains, prompt shuffles).
SEED = 1
#: Bradley-Terry: items (agents) with fewer comparisons than this are left out of the fit.
MIN_COMPARISONS = 3
#: Rater models: ties are dropped (a rater's agreement is defined on decided pairs).
RATER_TIES = "drop"
#: The imitation game: the test that decides ``turing analyze``'s verdict (``boot``: CR3 + Hall
#: with a design effect of at least 1, p-values also from the pairs cluster bootstrap-t and its
#: fast double bootstrap).
TURING_SE = "boot"
#: ... and its bootstrap draws of the students.
N_BOOT = 999
#: The imitation game's simulated verdicts (``turing power`` / ``simulate``: thousands of studies
#: each, so the analytic CR3 rather than a bootstrap per study).
TURING_SIMULATION_SE = "cr3"
