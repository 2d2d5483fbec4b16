"""A scripted motion's phase per axis (`Motion.phase` as (x, y) or (x, y, z), docs/
scene-format.md): validated, its law (each axis's sine from its own place, velocities
and accelerations the pose's derivatives), and both solvers following it (the planar
one dropping z: tests/runtime/test_ends3d.py)."""

import math

import numpy as np
import pytest

from slinky3d.errors import SceneError
from slinky3d.scene import loader
from slinky3d.scene.spec import Motion


def test_each_axis_starts_from_its_place_at_its_own_phase():
    m = Motion(amplitude=(0.01, 0.02, 0.03), rot_amplitude=0.1, frequency=0.5,
               frequency_rate=0.3, frequency_max=2.0, phase=(0.4, -1.0, 2.5), start=1.0)
    h = 1e-6
    for t in (1.3, 3.0, 5.99, 6.01, 9.0):
        psi = m.phase_at(t) - 0.4
        p, v, a = m.path(t)
        assert p == pytest.approx([c * (math.sin(psi + f) - math.sin(f)) for c, f in
                                   zip((0.01, 0.02, 0.03), (0.4, -1.0, 2.5), strict=True)])
        assert np.allclose((m.path(t + h)[0] - m.path(t - h)[0]) / (2 * h), v, atol=1e-7)
        assert np.allclose((m.path(t + h)[1] - m.path(t - h)[1]) / (2 * h), a, atol=1e-6)
        pose = m.at(t)[0]  # (x, y, angle): the rotation takes x's phase
        assert pose[:2] == pytest.approx(p[:2], abs=1e-15)
        assert pose[2] == pytest.approx(0.1 * (math.sin(psi + 0.4) - math.sin(0.4)))
    assert np.array_equal(m.path(0.5)[0], np.zeros(3))  # still before start
    one = Motion(amplitude=(0.01, 0.02, 0.03), phase=0.7, frequency=1.3)
    each = Motion(amplitude=(0.01, 0.02, 0.03), phase=(0.7, 0.7, 0.7), frequency=1.3)
    for t in (0.1, 0.77):  # one number is that phase on every axis, bit for bit
        for a, b in zip(one.path(t) + one.at(t), each.path(t) + each.at(t), strict=True):
            assert np.array_equal(a, b)


def test_a_conical_swing_goes_round_a_circle():
    a = 0.02
    m = Motion(amplitude=(a, 0.0, a), phase=(0.0, 0.0, 0.5 * math.pi), frequency=1.0)
    for t in np.linspace(0.01, 2.0, 37):
        x, y, z = m.path(float(t))[0]
        assert math.hypot(x, z + a) == pytest.approx(a, rel=1e-12) and y == 0.0


@pytest.mark.parametrize("value, words", [
    ("[0.1, 0.2, 0.3, 0.4]", "two numbers [x, y] or three"),
    ("'x'", "must be a number"),
    ("[0.1, 'y']", "must be a number"),
    ("[0.1, 2e9]", "between"),
])
def test_a_bad_phase_is_one_line(value, words):
    with pytest.raises(SceneError) as e:
        loader.load("resonance", [f"slinky.anchor.motion.phase={value}"])
    assert words in str(e.value) and "phase" in str(e.value) and "\n" not in str(e.value)


def test_a_z_amplitude_needs_zs_phase():
    with pytest.raises(SceneError, match="z's phase"):
        loader.load("resonance", ["slinky.anchor.motion.amplitude=[0.01, 0.0, 0.01]",
                                  "slinky.anchor.motion.phase=[0.0, 1.0]"])
    sc = loader.load("resonance", ["slinky.anchor.motion.amplitude=[0.01, 0.0, 0.01]",
                                   "slinky.anchor.motion.phase=[0.0, 1.0, 1.5]"])
    assert sc.slinkies[0].anchor.motion.phase == (0.0, 1.0, 1.5) and sc.solver == "3d"
