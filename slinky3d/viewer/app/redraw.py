"""Partial redraw: where the window's back buffer keeps the last frame after the swap,
a frame draws again only what changed since it.

On a software rasterizer every full-frame pass into the window costs about as much as
the 3D picture at half scale (a copy into the window is a textured draw there), and
the overlay laid over half the window as much again. Most of a frame does not change
from the one before: the backdrop stays while the camera does, and the overlay between
its refreshes. So when the back buffer is known to keep its pixels, a frame at a lower
scale copies the backdrop back only where the last frame's 3D boxes were, stretches the
new picture over its own boxes, and lays the overlay over just those rectangles (and
over the overlay's own rectangles when it was redrawn, after the 3D is drawn again
under them). The window's pixels are the same as when everything is drawn.

GLX does not say whether the back buffer is kept (no GLX_EXT_buffer_age on Mesa's
software rasterizer, whose swap method reads "undefined"; in fact it copies the back
buffer out and keeps it), so the window probes it once: two colours, each swapped and
read back from the back buffer. A driver that swaps buffers fails the probe, and then
every frame is drawn whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyglet

from slinky3d.viewer.rects import Rect

PROBE = ((0.2, 0.4, 0.6), (0.6, 0.2, 0.4))  # two colours, each swapped and read back


def back_buffer_kept(window: Any, screen: Any) -> bool:
    """Whether `window`'s back buffer still holds a frame's pixels after the swap
    (probed: two frames of a flat colour; the window is left showing the second)."""
    gl = pyglet.gl
    for colour in PROBE:
        screen.use()
        screen.clear(*colour, 1.0)
        window.flip()
        pixel = (gl.GLubyte * 4)()
        gl.glBindFramebuffer(gl.GL_READ_FRAMEBUFFER, 0)
        gl.glReadBuffer(gl.GL_BACK)
        gl.glPixelStorei(gl.GL_PACK_ALIGNMENT, 1)
        gl.glReadPixels(0, 0, 1, 1, gl.GL_RGBA, gl.GL_UNSIGNED_BYTE, pixel)
        if any(abs(pixel[i] - round(255 * c)) > 1 for i, c in enumerate(colour)):
            return False
    return True


class Redraw:
    """What the next frame must draw again over the last one (None: all of it)."""

    def __init__(self, kept: bool):
        self.kept = kept  # the back buffer keeps the last frame (back_buffer_kept)
        self._last: list[Rect] | None = None  # the last frame's 3D boxes; None: draw all

    def rects(self) -> list[Rect] | None:
        """Where the last frame drew its 3D over the backdrop; None: draw the whole frame."""
        return self._last if self.kept else None

    def drawn(self, composed: Sequence[Rect]) -> None:
        """A frame was drawn: at a lower scale, its 3D stretched over the boxes
        `composed` and the backdrop elsewhere; at full scale (no boxes) its objects
        drawn where no box records them, so the next is drawn whole."""
        self._last = list(composed) or None

    def invalidate(self) -> None:
        """The back buffer holds something else (a screenshot's frame, a new size, a
        new context): the next frame is drawn whole."""
        self._last = None
