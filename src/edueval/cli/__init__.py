"""The ``edueval`` command line (Typer): argument parsing and printing only, no domain logic."""
