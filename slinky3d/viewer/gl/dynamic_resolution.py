"""Dynamic resolution: the scale at which the 3D picture is drawn, moved from measured
frame times toward the display's frame budget (pure Python: no GL, testable alone).

When the 3D picture cannot fit the frame (a software rasterizer, a 4K screen), games
draw it at a lower internal resolution and upscale it, and keep the 2D layer sharp.
The renderer does the drawing (`Renderer.render(..., scale=)`); this module decides
the scale, frame by frame:

* A frame's 3D time at scale s is taken to grow with its area, s^2: each measurement
  becomes a cost at full scale, `render_s / s^2`, smoothed over frames. Fixed costs
  (the shadow pass, Python) make that estimate rise as s falls, so the scale only
  goes lower than it would have to; it never overshoots upward.
* The 3D picture may take what the frame budget leaves after the rest of the frame
  (the 2D layer, Python, the swap), also smoothed, times HEADROOM, less SPREAD times
  the frames' smoothed deviation from their mean: the slow frames, not the average one,
  must fit (where other work shares the cores a frame's time varies by a few ms, and
  aimed at the mean a twentieth of the frames ran 4-5 ms over the budget).
* Over that, the scale falls toward the scale that fits, at most DOWN_STEP a frame;
  well under it (BAND), it rises toward the scale that fits BAND of it, at most
  UP_STEP a frame, slower than it falls (a dropped frame shows, a sharper one hardly).
  Between the two it holds: a steady load settles on one scale, no oscillation.
* Always within [MIN_SCALE, MAX_SCALE]; a move smaller than MIN_MOVE is not made (each
  new size costs the renderer a redraw of its cached backdrop).
"""

from __future__ import annotations

import math

MIN_SCALE = 0.5  # below this the picture blurs more than a slow frame annoys
MAX_SCALE = 1.0
SMOOTHING = 0.15  # weight of a new measurement in the running estimates
HEADROOM = 0.9  # share of the frame budget the whole frame aims at (timer jitter, swap)
SPREAD = 2.0  # mean deviations kept free under the budget (about p95 for a normal spread)
BAND = 0.75  # rise only when the 3D time is under this share of what it may take
DOWN_STEP = 0.04  # most the scale falls in one frame (1 to 0.5 in 13 frames)
UP_STEP = 0.01  # most it rises in one frame (0.5 to 1 in 50 frames)
MIN_MOVE = 0.005


class ResolutionController:
    """The 3D picture's internal scale, updated once a frame from measured times."""

    def __init__(self, budget_s: float, scale: float = MAX_SCALE):
        if not budget_s > 0.0:
            raise ValueError(f"frame budget must be positive, got {budget_s!r}")
        self.budget_s = budget_s  # the display's frame time, s
        self.scale = min(max(scale, MIN_SCALE), MAX_SCALE)
        self._unit: float | None = None  # smoothed 3D time at full scale, s
        self._rest: float | None = None  # smoothed time of the rest of the frame, s
        self._dev = 0.0  # smoothed |a frame's time - what the estimates predicted|, s

    def allowed_s(self) -> float:
        """What the 3D picture may take per frame now, s."""
        rest = self._rest or 0.0
        return max(HEADROOM * self.budget_s - rest - SPREAD * self._dev, 0.0)

    def update(self, render_s: float, frame_s: float) -> float:
        """One frame measured: its 3D picture took `render_s` at the current scale, the
        whole frame's work `frame_s` (3D included); returns the scale for the next."""
        s = self.scale
        unit = max(render_s, 0.0) / (s * s)
        rest = max(frame_s - render_s, 0.0)
        if self._unit is not None and self._rest is not None:
            # a frame's stray from what the estimates predicted at its own scale (a
            # change of scale is no stray)
            stray = abs(max(frame_s, 0.0) - (self._unit * s * s + self._rest))
            self._dev = _blend(self._dev, stray)
        self._unit = unit if self._unit is None else _blend(self._unit, unit)
        self._rest = rest if self._rest is None else _blend(self._rest, rest)
        allowed = self.allowed_s()
        predicted = self._unit * s * s  # the 3D time at this scale, smoothed
        if predicted > allowed:
            fit = math.sqrt(allowed / self._unit) if allowed > 0.0 else 0.0
            new = max(fit, s - DOWN_STEP)
        elif predicted < BAND * allowed:
            fit = math.sqrt(BAND * allowed / self._unit) if self._unit > 0.0 else MAX_SCALE
            new = min(fit, s + UP_STEP)
        else:
            new = s
        new = min(max(new, MIN_SCALE), MAX_SCALE)
        if abs(new - s) >= MIN_MOVE or new in (MIN_SCALE, MAX_SCALE):
            self.scale = new
        return self.scale


def _blend(old: float, new: float) -> float:
    return old + SMOOTHING * (new - old)
