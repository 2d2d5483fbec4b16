"""A driven Slinky's response against the driving frequency, for the HUD's live plot.

The amplitude is measured as a lock-in amplifier does: over the last WINDOW seconds
of simulated time, the bottom end's height is fitted by c + a sin(psi) + b cos(psi),
with psi(t) the drive's own phase (scene/spec.py Motion.phase_at); sqrt(a^2 + b^2) is
the amplitude of the motion at the driving frequency. Knowing the phase, the fit needs
no sample rate above the drive's (the HUD samples at 10 Hz, slower than a 3 Hz drive
needs for a peak-to-peak measure), and it leaves out the free swinging at the Slinky's
own frequencies.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

WINDOW = 2.0  # s of simulated time in a fit: the sweep moves the frequency little in it
MIN_SAMPLES = 8  # a fit needs this many samples ...
MIN_SPAN = 0.5  # ... over at least this part of the window
MAX_POINTS = 4000  # of the plotted curve (a two-minute sweep at 10 Hz is 1200)


def lock_in(y: np.ndarray, psi: np.ndarray) -> float:
    """Amplitude of the component of y at phase psi: least squares of
    y = c + a sin(psi) + b cos(psi) (nan when the samples cannot fix a and b)."""
    A = np.column_stack([np.ones_like(psi), np.sin(psi), np.cos(psi)])
    coef, _, rank, _ = np.linalg.lstsq(A, y, rcond=None)
    return float(math.hypot(coef[1], coef[2])) if rank == 3 else math.nan


def driven(scene: Any) -> list[tuple[int, Any]]:
    """(index, Motion) of each Slinky of the scene whose anchored end sweeps its
    frequency (a chirp): those the HUD plots a response for."""
    out = []
    for i, s in enumerate(getattr(scene, "slinkies", ())):
        m = s.anchor.motion
        if s.anchor.condition == "scripted" and m is not None and m.frequency_rate > 0:
            out.append((i, m))
    return out


class Response:
    """The (frequency, amplitude) curve of one driven Slinky, gathered as it runs."""

    def __init__(self, motion: Any):
        self.motion = motion
        self._t: list[float] = []  # the samples of the last WINDOW s
        self._y: list[float] = []
        self.freq: list[float] = []  # Hz, the drive's
        self.amp: list[float] = []  # m, the bottom end's at that frequency

    def clear(self) -> None:
        self._t.clear()
        self._y.clear()
        self.freq.clear()
        self.amp.clear()

    def add(self, t: float, bottom_y: float) -> None:
        """A sample of the bottom end's height (m) at simulated time t (s); a time that
        goes back (a reset, a replay) starts the curve again."""
        if self._t and t < self._t[-1]:
            self.clear()
        if self._t and t == self._t[-1]:
            return  # paused
        self._t.append(t)
        self._y.append(bottom_y)
        while self._t[0] < t - WINDOW:
            del self._t[0], self._y[0]
        if t <= self.motion.start or len(self._t) < MIN_SAMPLES:
            return
        if t - self._t[0] < MIN_SPAN * WINDOW:
            return
        psi = np.array([self.motion.phase_at(s) for s in self._t])
        a = lock_in(np.asarray(self._y), psi)
        if math.isfinite(a):
            self.freq.append(self.motion.frequency_at(t))
            self.amp.append(a)
            if len(self.freq) > MAX_POINTS:
                del self.freq[0], self.amp[0]

    def frequency_range(self) -> tuple[float, float]:
        """The plot's x range (Hz): the sweep's, or the curve's when it has no end."""
        m = self.motion
        hi = m.frequency_max if math.isfinite(m.frequency_max) else max(
            [m.frequency + 1.0, *self.freq])
        return m.frequency, hi
