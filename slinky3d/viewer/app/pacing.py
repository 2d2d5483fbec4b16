"""The window's frame rate: as fast as the display asks, unless the physics needs the CPU.

On a machine with few cores (a software rasterizer, a laptop) the window's frames and
the solver thread share the CPU. The physics comes first, as in a game's fixed-step
loop: a Slinky that falls behind real time looks wrong in every frame, a frame rate
lowered from 60 to 30 does not. The solver thread measures its duty (the share of
wall time it spends stepping, runtime/thread.py); when it nears its limit the window
waits longer between frames, and it comes back to the display's rate once the solver
has room again. The 3D picture's own cost is dynamic resolution's business
(viewer/gl/dynamic_resolution.py); this only spaces the frames.
"""

from __future__ import annotations

FRAME_INTERVAL = 1 / 60  # s between frames the window asks for when the solver has room
MAX_INTERVAL = 1 / 24  # the slowest it goes for the solver: motion still reads as motion
DUTY_HIGH = 0.95  # solver duty above which frames are spaced out: about to fall behind
DUTY_LOW = 0.85  # ... and below which they come back
SLOWER, FASTER = 1.08, 1.02  # per frame: give way quickly, come back gently


class FramePacer:
    """The interval between two frames, moved once a frame by the solver's duty."""

    def __init__(self, interval: float = FRAME_INTERVAL, slowest: float = MAX_INTERVAL):
        if not 0.0 < interval <= slowest:
            raise ValueError(f"frame intervals must be 0 < {interval!r} <= {slowest!r}")
        self.fastest, self.slowest = interval, slowest
        self.interval = interval

    def update(self, duty: float) -> float:
        """The solver's duty as last published (0 to 1; 0 when paused or not real time);
        returns the interval to the next frame, s."""
        if duty > DUTY_HIGH:
            self.interval = min(self.interval * SLOWER, self.slowest)
        elif duty < DUTY_LOW:
            self.interval = max(self.interval / FASTER, self.fastest)
        return self.interval

    @property
    def giving_way(self) -> bool:
        """Whether frames are spaced out for the solver now."""
        return self.interval > self.fastest * 1.001
