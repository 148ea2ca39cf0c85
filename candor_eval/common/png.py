"""matplotlib on the Agg backend with fixed settings, and PNG bytes without metadata.

For one matplotlib build the bytes are deterministic (fixed size and DPI, the bundled DejaVu
font, no ``Software`` or date metadata). Across builds they are not (font rasterisation and
antialiasing change between releases), which is why PNGs are rendered by ``candor figures``
into a git-ignored folder and never hashed into ``dvc.lock``.
"""
from __future__ import annotations

import io

PNG_DPI = 100


def pyplot():
    """matplotlib's pyplot on the Agg backend, with the fixed settings of every figure."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.family": "DejaVu Sans", "svg.hashsalt": "candor", "path.simplify": False})
    return plt


def png_bytes(plt, fig) -> bytes:
    """The figure as PNG bytes (no metadata); the figure is closed."""
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=PNG_DPI, metadata={"Software": None})
    finally:
        plt.close(fig)
    return buf.getvalue()
