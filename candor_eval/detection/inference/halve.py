"""Halving: Pillow's ``BILINEAR`` downscale by exactly 2, bit for bit, on planar uint8 arrays.

Definition (Pillow's 8-bit resampler, ``src/libImaging/Resample.c``): each axis is
resampled separately, the horizontal pass first, each pass rounding to uint8. For
``n`` input samples and ``n / 2`` outputs the bilinear filter is stretched to a
support of 2 input pixels around ``center = 2 * i + 1``; its weights, normalised to
sum 1 and stored as 22-bit fixed point (``int(0.5 + w * 2**22)``), are

- interior outputs ``0 < i < n/2 - 1``: ``[1, 3, 3, 1] / 8`` on ``p[2i-1] .. p[2i+2]``,
  so ``out = (p[2i-1] + 3 p[2i] + 3 p[2i+1] + p[2i+2] + 4) >> 3`` exactly (the
  weights are multiples of ``2**19``);
- the first output: ``(3, 3, 1) / 7`` on ``p[0], p[1], p[2]``; the last:
  ``(1, 3, 3) / 7`` on ``p[n-3], p[n-2], p[n-1]`` (the filter is cut at the image
  edge and renormalised), i.e. ``(sum k_j p_j + 2**21) >> 22`` with
  ``k = (1797559, 1797559, 599186)``.

Pass order: Pillow up to 12 always resizes horizontally first; Pillow 13 resizes
*vertically* first when the height shrinks "significantly more" than the width, which
for a halving of both axes happens for frames taller than twice their width (measured:
``H > 2 W``). The two orders round differently, so :func:`fits` admits only
``H <= 2 W``, where every supported Pillow version agrees; other frames keep Pillow.

:class:`Halver` computes this with a few whole-array numpy operations on planar
``(C, H, W)`` data (the pixel pairs of a row are one little-endian uint16 each), into
buffers it allocates once: on this machine a fresh 1 MB numpy array costs more in page
faults than the arithmetic. Equivalence with Pillow is tested on random images.
"""
from __future__ import annotations

import numpy as np

PRECISION_BITS = 22
_ROUND = 1 << (PRECISION_BITS - 1)
# the edge outputs' weights: bilinear taps 0.75, 0.75, 0.25 normalised (Pillow's precompute_coeffs)
EDGE_NEAR, EDGE_FAR = (int(0.5 + w / 1.75 * (1 << PRECISION_BITS)) for w in (0.75, 0.25))


def fits(width: int, height: int) -> bool:
    """Whether a ``width x height`` frame has an exact halving here (see the module docstring)."""
    return width % 2 == 0 and height % 2 == 0 and width >= 4 and height >= 4 and height <= 2 * width


class Halver:
    """Halve planar uint8 images of one shape ``(C, H, W)`` to ``(C, H/2, W/2)`` like Pillow.

    The result is a uint16 array (values 0..255) owned by the halver and overwritten
    by the next call; one halver per thread.

    >>> a = np.arange(4 * 4, dtype=np.uint8).reshape(1, 4, 4) * 10
    >>> Halver((1, 4, 4))(a).tolist()
    [[[36, 52], [98, 114]]]
    """

    def __init__(self, shape: tuple[int, int, int]) -> None:
        c, h, w = shape
        if not fits(w, h):
            raise ValueError(f"no exact halving for a {w}x{h} frame (need even sides >= 4, H <= 2 W)")
        self.shape = (c, h, w)
        self._even = np.empty((c, h, w // 2), np.uint16)
        self._odd = np.empty((c, h, w // 2), np.uint16)
        self._rows = np.empty((c, h, w // 2), np.uint16)
        self._out = np.empty((c, h // 2, w // 2), np.uint16)

    def __call__(self, planar: np.ndarray) -> np.ndarray:
        """``planar``: C-contiguous uint8 ``(C, H, W)``. Returns uint16 ``(C, H/2, W/2)``."""
        if planar.shape != self.shape or planar.dtype != np.uint8 or not planar.flags.c_contiguous:
            raise ValueError(f"expected a C-contiguous uint8 array of shape {self.shape}, "
                             f"got {planar.dtype} {planar.shape}")
        pairs = planar.view("<u2")                     # [..., i] = p[2i] + 256 * p[2i+1]
        even, odd, rows = self._even, self._odd, self._rows
        np.bitwise_and(pairs, 0xFF, out=even)
        np.right_shift(pairs, 8, out=odd)
        self._interior(rows, even, odd, flat=True)
        self._edges(rows[..., 0], rows[..., -1], planar[..., :3], planar[..., -3:])
        out = self._out
        self._interior(out, rows[:, 0::2], rows[:, 1::2], flat=False)
        self._edges(out[:, 0], out[:, -1], rows[:, :3].swapaxes(1, 2), rows[:, -3:].swapaxes(1, 2))
        return out

    @staticmethod
    def _interior(out: np.ndarray, even: np.ndarray, odd: np.ndarray, *, flat: bool) -> None:
        """``out = (odd[i-1] + 3 even[i] + 3 odd[i] + even[i+1] + 4) >> 3`` along the last axis
        (``flat``) or axis 1; the first and last outputs are left for :meth:`_edges`."""
        np.add(even, odd, out=out)
        out *= 3
        if flat:   # one long run: the terms that cross a row boundary land on the edge outputs
            o, e, d = odd.reshape(-1), even.reshape(-1), out.reshape(-1)
            d[1:] += o[:-1]
            d[:-1] += e[1:]
        else:
            out[:, 1:] += odd[:, :-1]
            out[:, :-1] += even[:, 1:]
        out += 4
        out >>= 3

    @staticmethod
    def _edges(first: np.ndarray, last: np.ndarray, head: np.ndarray, tail: np.ndarray) -> None:
        """The first and last outputs from the first and last 3 inputs (last axis of ``head``/``tail``)."""
        h = head.astype(np.int64)
        first[...] = ((h[..., 0] + h[..., 1]) * EDGE_NEAR + h[..., 2] * EDGE_FAR + _ROUND) >> PRECISION_BITS
        t = tail.astype(np.int64)
        last[...] = ((t[..., 1] + t[..., 2]) * EDGE_NEAR + t[..., 0] * EDGE_FAR + _ROUND) >> PRECISION_BITS
