"""The view from above: a small second picture in a corner of the window, for motion
out of the paper's plane (a conical swing's circle, a Slinky swung towards you).

It is the same renderer drawing the same snapshot from a camera straight above the
Slinkies, orthographic, turned with the main camera's heading (up in the corner is
away from the viewer), without the holders (a post's clamp would hide the coils under
it), and laid into the window's bottom-right corner with a thin frame. Its framing
widens at once and narrows slowly, so the corner does not pump as the Slinky swings.
On a software rasterizer its picture costs about as much as the main one, so the app
draws it afresh every other frame (`EVERY`) and lays the last one into the corner in
between, a copy of its few pixels (docs/app.md, "The view from above").
"""

from __future__ import annotations

import math
from dataclasses import replace

import moderngl
import numpy as np

from slinky3d.runtime.snapshot import Snapshot
from slinky3d.scene.look import Look
from slinky3d.viewer.camera import OrbitCamera, corners
from slinky3d.viewer.gl.renderer import Renderer
from slinky3d.viewer.helix import bounds
from slinky3d.viewer.stage import Stage

SHARE = 0.3  # the corner's height, of the window's
ASPECT = 4 / 3  # its width over its height
MARGIN_PX = 12  # from the window's edges
FRAME_PX = 2  # the frame's width
FRAME_COLOUR = (0.85, 0.87, 0.9, 1.0)
PITCH = math.radians(89.0)  # straight down, short of the look-at's degenerate pole
SHRINK = 0.98  # per frame: how fast the framing narrows again
LEAST_HALF = 0.15  # m: the least half-height shown (a Slinky seen end-on is small)
MARGIN = 1.15  # room around the Slinkies' box
# Orthographic, so the angle only sets how far above the eye is: narrow, to be above
# the holders and the stand too.
FOV_DEG = 10.0
EVERY = 2  # the app's frames per picture of the view from above (30 a second at 60)


def corner_rect(size: tuple[int, int]) -> tuple[int, int, int, int]:
    """(x, y, w, h), y up from the bottom: the corner the view is laid into."""
    h = max(int(round(SHARE * size[1])), 16)
    w = max(int(round(ASPECT * h)), 16)
    return (size[0] - w - MARGIN_PX, MARGIN_PX, w, h)


class TopView:
    """A renderer of its own at the corner's size (made on first use) and its camera."""

    def __init__(self, ctx: moderngl.Context, quality: str):
        self.ctx, self.quality = ctx, quality
        self.renderer: Renderer | None = None
        self.camera: OrbitCamera | None = None
        self._half = 0.0  # m: the half-height shown last frame

    def fit(self, snap: Snapshot, heading: float, aspect: float) -> OrbitCamera:
        """The camera above the Slinkies' box, its up the main camera's forward."""
        lo, hi = bounds(snap, pad=0.02)
        cam = OrbitCamera(target=0.5 * (lo + hi), distance=1.0, yaw=heading, pitch=PITCH,
                          fov_deg=FOV_DEG, ortho=True)
        right, up, _ = cam.basis()
        c = corners(lo, hi) - cam.target
        need = MARGIN * max(np.max(np.abs(c @ up)), np.max(np.abs(c @ right)) / aspect)
        half = max(need, SHRINK * self._half, LEAST_HALF)
        self._half = half
        cam.distance = half / math.tan(math.radians(FOV_DEG) / 2)
        self.camera = cam
        return cam

    def draw(self, snap: Snapshot, look: Look, stage: Stage | None, heading: float,
             screen: moderngl.Framebuffer, size: tuple[int, int],
             fresh: bool = True) -> tuple[int, int, int, int]:
        """Draw the view into `screen` (of `size`) at its corner; returns the corner's
        rectangle (x, y, w, h), y up, frame included. fresh=False lays the last picture
        again (drawn afresh anyway when there is none at this size)."""
        x, y, w, h = corner_rect(size)
        if self.renderer is None or self.renderer.size != (w, h):
            fresh = True
            if self.renderer is None:
                self.renderer = Renderer(self.ctx, (w, h), quality=self.quality)
            else:
                self.renderer.resize((w, h))
        r = self.renderer
        if fresh:
            # No holders from above: a post's clamp lies over the top coils, and over
            # the whole Slinky while it hangs straight down.
            r.render(snap, replace(look, anchor="none"), self.fit(snap, heading, w / h),
                     stage)
        f = FRAME_PX
        framed = (x - f, y - f, w + 2 * f, h + 2 * f)
        screen.clear(*FRAME_COLOUR, viewport=framed)
        r.lay_into(screen, (x, y))
        return framed


def reserved(size: tuple[int, int]) -> tuple[int, int, int, int]:
    """The corner and its frame as (x0, y0, x1, y1) pixels, y down from the top: what
    the director keeps the Slinkies out of, as it does the HUD's box."""
    x, y, w, h = corner_rect(size)
    f = FRAME_PX
    return (x - f, size[1] - (y + h + f), x + w + f, size[1] - (y - f))
