"""Figures with matplotlib's Agg backend (no display needed).

matplotlib is imported on first use (``plt``, :func:`new_figure`), so commands whose report has
no figure do not pay for importing it.
"""

from __future__ import annotations

import io
from typing import Any

__all__ = ["png_bytes", "new_figure"]  # and `plt`, imported on first use


def _pyplot() -> Any:
    import matplotlib

    if matplotlib.get_backend().lower() != "agg":
        matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as pyplot

    return pyplot


def __getattr__(name: str) -> Any:
    if name == "plt":
        return _pyplot()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def new_figure(width: float = 6.4, height: float = 4.0):
    """A new (figure, axes) pair with the report's default size."""
    fig, ax = _pyplot().subplots(figsize=(width, height), layout="constrained")
    return fig, ax


def png_bytes(fig, dpi: int = 110) -> bytes:
    """The figure rendered as PNG bytes (the figure is closed afterwards)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    _pyplot().close(fig)
    return buf.getvalue()
