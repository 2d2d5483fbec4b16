"""The window's frame pacing: frames asked for on a grid of FRAME_INTERVAL (when
pyglet's clock fires a delay: `clock_base`), and whether a frame has room for the
overlay's refresh (the HUD's figures redrawn: `RefreshBudget`).

The refresh (overlay/cache.py, ten times a second) adds a few milliseconds to its
frame. Added to a frame whose 3D picture was slow, it pushed that frame past its
1/60 s: those frames made the frame interval's p95. So a refresh that only the clock
asks for waits, up to overlay/cache.py's REFRESH_LATEST, for a frame with room for it.
The room is learnt from the frames themselves: how long a frame takes from its overlay
to its end, with and without a refresh (docs/app.md, "Frames on the grid").
"""

from __future__ import annotations

from typing import Any

FRAME_INTERVAL = 1 / 60  # s between frames the window asks for
RATE = 0.1  # weight of the newest frame in the running means


def clock_base(clock: Any) -> float:
    """The time (the clock's, perf_counter) from which `clock.schedule_once` counts a
    delay: pyglet counts it from its last tick, not from now, when that tick was less
    than 0.2 s ago (it groups callbacks). A frame paced from now would fire early by the
    time it took to draw, and the frame after it late."""
    nearest = getattr(clock, "_get_nearest_ts", None)
    return float(nearest()) if nearest is not None else float(clock.time())


class RefreshBudget:
    """The running means of a frame's tail (from its overlay to its end, buffer swap
    included) without a refresh, and of what a refresh adds to it."""

    def __init__(self, interval: float):
        self.interval = interval  # s: the frame's budget
        self.tail: float | None = None  # s: overlay to end, no refresh
        self.extra = 0.0  # s: what a refresh adds

    def observe(self, took: float, overlay_at: float, refreshed: bool) -> None:
        """A frame took `took` s, its overlay began `overlay_at` s into it."""
        tail = took - overlay_at
        if not refreshed:
            self.tail = tail if self.tail is None else self.tail + RATE * (tail - self.tail)
        elif self.tail is not None:
            self.extra += RATE * (tail - self.tail - self.extra)

    def room(self, overlay_at: float) -> bool:
        """Whether a refresh begun `overlay_at` s into the frame ends within its budget
        (yes until a frame without one has been seen)."""
        if self.tail is None:
            return True
        return overlay_at + self.tail + max(self.extra, 0.0) <= self.interval
