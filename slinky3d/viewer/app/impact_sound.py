"""An optional click on coil impacts (off by default), through pyglet.media.

The click is synthesized here: a few milliseconds of a decaying 2.5 kHz tone with a
little noise, like a steel coil ticking on the next. A frame in which coils hit plays
one click, louder the more joints hit, at most MAX_RATE clicks a second (a collapsing
steel Slinky has hundreds of impacts a second: a buzz would say less than a ticking).

Sound must never break the app: without an audio device (pyglet falls back to its
silent driver, or has none, or its import fails) the option stays off and says why;
an error while playing turns it off the same way.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from slinky3d.runtime.snapshot import Snapshot

RATE = 44100  # samples per second
CLICK_S = 0.012  # the click's length, s
TONE_HZ = 2500.0
MAX_RATE = 25.0  # clicks per wall second at most
UNAVAILABLE = "no audio device"


def click_samples() -> np.ndarray:
    """The click: int16 mono samples at RATE."""
    t = np.arange(int(RATE * CLICK_S)) / RATE
    decay = np.exp(-t / (0.18 * CLICK_S))
    noise = np.random.default_rng(0).uniform(-1.0, 1.0, t.size)
    wave = decay * (0.8 * np.sin(2 * np.pi * TONE_HZ * t) + 0.2 * noise)
    return np.round(0.9 * 32767 * wave).astype("<i2")


def new_impacts(snap: Snapshot, since: float) -> int:
    """Joints of all Slinkies whose last coil impact came after simulated time `since`."""
    dt = snap.t - since
    if dt <= 0.0:
        return 0
    return sum(int(np.count_nonzero(np.asarray(sl.impact_age) < dt))
               for sl in snap.slinkies if sl.impact_age is not None)


def volume(impacts: int) -> float:
    """A click's volume for the joints that hit in one frame."""
    return min(1.0, 0.35 + 0.08 * impacts)


class ImpactSound:
    """The click, off until `enable` finds an audio device."""

    def __init__(self) -> None:
        self.on = False
        self.unavailable = ""  # why there is no sound ("" while none was asked for or it works)
        self._source: Any = None  # the click, a pyglet StaticMemorySource
        self._last_t: float | None = None
        self._last_click = -np.inf  # wall s
        self.clicks = 0  # played since enabled (tests, the benchmark)

    def enable(self, on: bool) -> bool:
        """Turn the click on or off; True if it is on now. Turning it on opens the audio
        device the first time; without one it stays off and `unavailable` says why."""
        if not on or self.unavailable:
            self.on = False
            return False
        if self._source is None:
            self._source = self._open()
        self.on = self._source is not None
        return self.on

    def _open(self):
        try:  # imported here: a failing audio import must leave the click off, not the app
            import pyglet.media
            from pyglet.media.codecs.base import AudioFormat, StaticMemorySource

            driver = pyglet.media.get_audio_driver()
            if driver is None or "silent" in type(driver).__name__.lower():
                self.unavailable = UNAVAILABLE
                return None
            fmt = AudioFormat(channels=1, sample_size=16, sample_rate=RATE)
            return StaticMemorySource(click_samples().tobytes(), fmt)
        except Exception as e:  # noqa: BLE001 - any failure: no sound, said in one line
            self.unavailable = f"{UNAVAILABLE} ({type(e).__name__})"
            return None

    def frame(self, snap: Snapshot, wall: float) -> int:
        """A frame shows `snap` at wall time `wall`: click if coils hit since the last
        frame. Returns the joints that hit (0 when time stood still or went back)."""
        last, self._last_t = self._last_t, snap.t
        if last is None or not self.on:
            return 0
        n = new_impacts(snap, last)
        if n and wall - self._last_click >= 1.0 / MAX_RATE:
            self._last_click = wall
            self._play(volume(n))
        return n

    def _play(self, gain: float) -> None:
        try:
            player = self._source.play()
            player.volume = gain
            self.clicks += 1
        except Exception as e:  # noqa: BLE001 - a lost device: off, said in one line
            self.on, self.unavailable = False, f"audio failed ({type(e).__name__})"
