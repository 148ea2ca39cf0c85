"""candor_eval.common.png: matplotlib on the Agg backend with the fixed settings of every figure, and a
figure's PNG bytes: the size its inches times :data:`PNG_DPI` say, no text chunk (no ``Software`` or
date), the same bytes for the same figure, and the figure closed afterwards, even when saving fails."""
from __future__ import annotations

import struct

import pytest

from candor_eval.common.png import PNG_DPI, png_bytes, pyplot

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def chunks(png: bytes) -> list[tuple[bytes, bytes]]:
    """The (type, data) of every chunk after the signature."""
    out, i = [], len(SIGNATURE)
    while i < len(png):
        (n,) = struct.unpack(">I", png[i:i + 4])
        out.append((png[i + 4:i + 8], png[i + 8:i + 8 + n]))
        i += 12 + n
    return out


def figure(plt):
    fig, ax = plt.subplots(figsize=(2, 1))
    ax.plot([0, 1, 2], [1, 0, 1])
    ax.set_title("deer")
    return fig


def test_pyplot_is_agg_with_the_fixed_settings():
    import matplotlib

    plt = pyplot()
    assert matplotlib.get_backend().lower() == "agg"
    assert plt.rcParams["font.family"] == ["DejaVu Sans"]
    assert plt.rcParams["svg.hashsalt"] == "candor" and plt.rcParams["path.simplify"] is False


def test_png_bytes_size_and_no_metadata():
    plt = pyplot()
    png = png_bytes(plt, figure(plt))
    assert png.startswith(SIGNATURE)
    kinds = [kind for kind, _ in chunks(png)]
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND"
    assert struct.unpack(">II", chunks(png)[0][1][:8]) == (2 * PNG_DPI, 1 * PNG_DPI)   # 2 x 1 inches
    assert not {b"tEXt", b"iTXt", b"zTXt", b"tIME"} & set(kinds)


def test_the_same_figure_gives_the_same_bytes_and_is_closed():
    plt = pyplot()
    first, second = figure(plt), figure(plt)
    assert png_bytes(plt, first) == png_bytes(plt, second)
    assert not plt.fignum_exists(first.number) and not plt.fignum_exists(second.number)


def test_a_figure_is_closed_when_saving_fails(monkeypatch):
    plt = pyplot()
    fig = figure(plt)

    def broken(*args, **kwargs):
        raise OSError("disk full")
    monkeypatch.setattr(fig, "savefig", broken)
    with pytest.raises(OSError, match="disk full"):
        png_bytes(plt, fig)
    assert not plt.fignum_exists(fig.number)
