"""The HUD's sweep plot (viewer/overlay/response.py): the lock-in amplitude, and the resonance
it shows in the `resonance` scene."""

import math

import numpy as np
import pytest

from slinky3d.output.recording import record
from slinky3d.scene import loader
from slinky3d.scene.spec import Motion
from slinky3d.viewer.overlay.response import Response, driven

HUD_RATE = 10.0  # Hz: the HUD samples the snapshot this often (overlay/cache.py REFRESH)


def test_lock_in_measures_the_amplitude_at_the_drive_frequency_from_slow_samples():
    """A 3 Hz response sampled at 10 Hz, with a free oscillation at another frequency
    and an offset on top: the amplitude at the drive's phase comes out."""
    m = Motion(amplitude=(0.0, 0.003), frequency=2.0, frequency_rate=0.05, start=0.0)
    r = Response(m)
    for t in np.arange(0.0, 30.0, 1 / HUD_RATE):
        y = (-0.4 + 0.02 * math.sin(m.phase_at(t) - 1.0)
             + 0.004 * math.sin(2 * math.pi * 0.77 * t))
        r.add(float(t), y)
    assert len(r.amp) > 200
    assert np.allclose(r.amp[-100:], 0.02, rtol=0.05)
    assert r.freq[-1] == pytest.approx(m.frequency_at(30.0 - 1 / HUD_RATE))


def test_time_going_back_starts_the_curve_again():
    m = Motion(amplitude=(0.0, 0.003), frequency=1.0, frequency_rate=0.1)
    r = Response(m)
    for t in np.arange(0.0, 5.0, 0.1):
        r.add(float(t), math.sin(m.phase_at(t)))
    assert r.amp
    r.add(0.0, 0.0)
    assert not r.amp and not r.freq


def test_resonance_scene_peaks_at_the_lowest_natural_frequency():
    """The `resonance` scene's claim: the bottom end's response grows eightfold near
    0.8 Hz, the hanging plastic Slinky's lowest natural frequency (0.76 Hz from its
    linearised equations, docs/model.md section 8), and dies down past it."""
    sc = loader.load("resonance", ["slinky.anchor.motion.frequency_max=1.4"])
    (i, m), = driven(sc)
    d, _ = record(sc, m.start + m.sweep_time(), HUD_RATE, "realtime")
    r = Response(m)
    for t, y in zip(d["t"], d["ends"][:, -1, 1], strict=True):
        r.add(float(t), float(y))
    f, a = np.array(r.freq), np.array(r.amp)
    peak = f[np.argmax(a)]
    assert 0.7 < peak < 1.0
    assert a.max() > 8 * a[f < 0.4].max()
    assert a[f > 1.3].max() < 0.3 * a.max()
