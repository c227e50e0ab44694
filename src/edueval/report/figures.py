"""Figures with matplotlib's Agg backend (no display needed)."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg", force=True)
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["plt", "png_bytes", "new_figure"]


def new_figure(width: float = 6.4, height: float = 4.0):
    """A new (figure, axes) pair with the report's default size."""
    fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    return fig, ax


def png_bytes(fig, dpi: int = 110) -> bytes:
    """The figure rendered as PNG bytes (the figure is closed afterwards)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    return buf.getvalue()
