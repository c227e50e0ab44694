"""Test support that is no part of edueval (and so not in its wheel): importable from the tests as
``support`` because pytest puts ``tests/`` on ``sys.path`` (its conftest.py has no package)."""
