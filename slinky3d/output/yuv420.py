"""Frames as yuv420p (I420), the pixel format of the MP4s, straight from the GL's rows.

An MP4 frame handed over as RGB costs the drawing thread a conversion to RGB in the
driver and a flip in numpy, and the encoder's thread a copy and a conversion by
libswscale (about 8 ms a 720p frame, beside x264's 14-16 ms, on a machine whose other
core the software rasterizer wants). Instead the MP4's writer takes the RGBA rows as
glReadPixels returns them (bottom row first) and one compiled pass, which lets go of
Python's lock, turns them into the I420 buffer: about 3 ms a 720p frame on one core.

The colours are libswscale's default for rgb24 -> yuv420p, which the films had before
and which decoders invert: BT.601, limited range (Y 16..235, U and V 16..240), in its
15-bit fixed point; each chroma sample is the mean of its 2x2 block of pixels.
"""

from __future__ import annotations

import numpy as np
from numba import njit

SHIFT = 15  # libswscale's RGB2YUV_SHIFT: the coefficients' fixed point
KY = (0.299, 0.587, 0.114)  # BT.601 luma
KU = (-0.168736, -0.331264, 0.5)  # and its chroma, Cb and Cr
KV = (0.5, -0.418688, -0.081312)


def _fixed(k: tuple[float, float, float], levels: int) -> tuple[int, int, int]:
    """Coefficients for 8-bit RGB to `levels` steps of limited range, in fixed point."""
    r, g, b = (round(c * levels / 255 * (1 << SHIFT)) for c in k)
    return r, g, b


RY, GY, BY = _fixed(KY, 219)
RU, GU, BU = _fixed(KU, 224)
RV, GV, BV = _fixed(KV, 224)


def i420_shape(width: int, height: int) -> tuple[int, int]:
    """The I420 buffer of a frame: (3h/2, w), the Y plane's h rows of w bytes, then
    U's and V's h/2 rows of w/2 bytes each, every plane top row first."""
    if width % 2 or height % 2:
        raise ValueError(f"yuv420p needs an even width and height, got {width}x{height}")
    return height * 3 // 2, width


def from_gl_rgba(rgba: np.ndarray) -> np.ndarray:
    """(h, w, 4) uint8 RGBA rows, bottom row first (as glReadPixels returns them), as
    a new I420 buffer (`i420_shape`); alpha is ignored."""
    h, w = rgba.shape[:2]
    out = np.empty(i420_shape(w, h), np.uint8)
    _convert(np.ascontiguousarray(rgba), out)
    return out


@njit(cache=True, nogil=True, error_model="numpy")
def _convert(rgba: np.ndarray, out: np.ndarray) -> None:
    h, w = rgba.shape[0], rgba.shape[1]
    half = 1 << (SHIFT - 1)  # rounding
    for y in range(h):
        src = rgba[h - 1 - y]
        dst = out[y]
        for x in range(w):
            r, g, b = np.int32(src[x, 0]), np.int32(src[x, 1]), np.int32(src[x, 2])
            dst[x] = (RY * r + GY * g + BY * b + (16 << SHIFT) + half) >> SHIFT
    cw, ch = w // 2, h // 2
    chroma = out[h:].reshape(-1)  # U's ch rows of cw, then V's
    four = SHIFT + 2  # the sums of 2x2 blocks are 4x a pixel
    offset = (128 << four) + (1 << (four - 1))
    for cy in range(ch):
        top, below = rgba[h - 1 - 2 * cy], rgba[h - 2 - 2 * cy]
        for cx in range(cw):
            x = 2 * cx
            r = np.int32(top[x, 0]) + top[x + 1, 0] + below[x, 0] + below[x + 1, 0]
            g = np.int32(top[x, 1]) + top[x + 1, 1] + below[x, 1] + below[x + 1, 1]
            b = np.int32(top[x, 2]) + top[x + 1, 2] + below[x, 2] + below[x + 1, 2]
            i = cy * cw + cx
            chroma[i] = (RU * r + GU * g + BU * b + offset) >> four
            chroma[ch * cw + i] = (RV * r + GV * g + BV * b + offset) >> four
