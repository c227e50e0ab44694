"""``python -m edueval`` runs the command line."""

from .cli import run

run()
