"""``python -m edueval`` runs the command line."""

from .cli.main import run

run()
