"""The phenomena scenes: the chirp's frequency law, several Slinkies side by side as if
each ran alone, and the scenes' claims about their Slinkies."""

import math

import numpy as np
import pytest
import tomli_w

from slinky3d.output.recording import record
from slinky3d.runtime.simulation import Simulation
from slinky3d.scene import loader
from slinky3d.scene.spec import Motion

CHIRP = ["slinky.anchor.condition='scripted'", "slinky.anchor.motion.amplitude=[0, 0.004]",
         "slinky.anchor.motion.frequency=1.0", "slinky.anchor.motion.frequency_rate=0.5",
         "slinky.anchor.motion.frequency_max=3.0", "slinky.anchor.motion.start=0.2"]


def test_chirp_velocity_and_acceleration_are_the_pose_s_derivatives():
    m = Motion(amplitude=(0.01, 0.02), rot_amplitude=0.1, frequency=0.5, frequency_rate=0.3,
               frequency_max=2.0, phase=0.4, start=1.0)
    h = 1e-6
    for t in (1.3, 3.0, 5.99, 6.01, 9.0):  # rising, and on at frequency_max (from t = 6)
        p, v, a = m.at(t)
        assert np.allclose((m.at(t + h)[0] - m.at(t - h)[0]) / (2 * h), v, atol=1e-7)
        assert np.allclose((m.at(t + h)[1] - m.at(t - h)[1]) / (2 * h), a, atol=1e-6)
        # the phase advances at 2 pi f(t)
        dpsi = (m.phase_at(t + h) - m.phase_at(t - h)) / (2 * h)
        assert dpsi == pytest.approx(2 * math.pi * m.frequency_at(t), rel=1e-8)
    assert m.frequency_at(0.0) == 0.5 and m.frequency_at(6.0) == pytest.approx(2.0)
    assert m.frequency_at(100.0) == 2.0


def test_without_a_rate_the_motion_is_the_plain_sinusoid():
    m = Motion(amplitude=(0.0, 0.03), frequency=3.0, phase=0.2, start=0.5)
    for t in (0.7, 1.9):
        w, a = 2 * math.pi * 3.0, 2 * math.pi * 3.0 * (t - 0.5) + 0.2
        p, v, acc = m.at(t)
        assert p[1] == 0.03 * (math.sin(a) - math.sin(0.2))
        assert v[1] == 0.03 * w * math.cos(a)
        assert acc[1] == -0.03 * w * w * math.sin(a)


def test_solver_drives_the_anchor_with_the_chirp():
    """The compiled drive is Motion's, and its upward zero crossings fall where the
    chirp's cycle count f0 tau + r tau^2 / 2 is a whole number (tau after `start`),
    then every 1 / frequency_max once the sweep has ended."""
    sc = loader.load("hanging-plastic", CHIRP)
    m = sc.slinkies[0].anchor.motion
    d, _ = record(sc, 6.0, 1.0 / sc.dt, "realtime")
    t, y = d["t"], d["ends"][:, 0, 1]
    for k in range(0, len(t), 37):
        assert np.allclose(d["ends"][k, 0], m.at(t[k])[0][:2], atol=1e-12)
    up = np.flatnonzero((y[:-1] < 0) & (y[1:] >= 0) & (t[1:] > m.start + 0.01))
    crossings = t[up] - y[up] * (t[up + 1] - t[up]) / (y[up + 1] - y[up])
    f0, r = m.frequency, m.frequency_rate
    sweep = (m.frequency_max - f0) / r  # 4 s
    n = np.arange(1, len(crossings) + 1)
    during = (np.sqrt(f0**2 + 2 * r * n) - f0) / r  # cycles(tau_n) = n
    n_sweep = f0 * sweep + 0.5 * r * sweep**2
    after = sweep + (n - n_sweep) / m.frequency_max
    expected = m.start + np.where(n <= n_sweep, during, after)
    # linear interpolation over a 4 ms step: to a few parts in 1e4 of a period
    assert len(crossings) > 10
    assert np.abs(crossings - expected).max() < 2e-4


def test_frequency_max_below_the_start_is_refused():
    from slinky3d.errors import SceneError

    with pytest.raises(SceneError, match="frequency_max: must be >= frequency"):
        loader.load("hanging-plastic", [*CHIRP, "slinky.anchor.motion.frequency_max=0.5"])


def alone(scene, i: int):
    """Slinky i of a scene in a scene of its own (the same table, the same step)."""
    raw = dict(scene.raw)
    raw["slinky"] = [scene.raw["slinky"][i]]
    raw["dt"] = scene.dt
    return loader.loads(tomli_w.dumps(raw), "alone.toml")


@pytest.mark.parametrize("name", ["side-contact-laws", "side-1Pa-1Pb"])
def test_slinkies_side_by_side_run_as_if_alone(name):
    sc = loader.load(name)
    assert len(sc.slinkies) > 1
    together = Simulation(sc)
    together.advance_to(0.5)
    for i in range(len(sc.slinkies)):
        single = Simulation(alone(sc, i))
        single.advance_to(0.5)
        a, b = together.slinkies[i], single.slinkies[0]
        assert np.array_equal(a.q, b.q) and np.array_equal(a.qd, b.qd)
        assert a.impacts == b.impacts


def test_1Pa_1Pb_side_by_side_are_the_paper_tests():
    sc = loader.load("side-1Pa-1Pb")
    d, _ = record(sc, 0.6, 50.0, "realtime")
    for i, name in enumerate(("1Pa", "1Pb")):
        ref, _ = record(loader.load(name), 0.6, 50.0, "realtime")
        ends = d["ends" if i == 0 else f"ends_{i}"]
        shift = np.asarray(sc.slinkies[i].anchor.position)
        assert np.allclose(ends - shift, ref["ends"], atol=1e-9)


def law_error(name: str, law: list[str], duration: float) -> float:
    """Largest end-point distance (m) at `duration` between a law and the rigid one."""
    rigid, _ = record(loader.load(name), duration, 10.0, "realtime")
    other, _ = record(loader.load(name, law), duration, 10.0, "realtime")
    return float(np.linalg.norm(other["ends"][-1] - rigid["ends"][-1], axis=-1).max())


def soft(k: float) -> list[str]:
    return ["slinky.contact.law='soft'", f"slinky.contact.stiffness={k}"]


def test_stiffer_soft_contact_leaves_the_rigid_law_in_the_steel_cascade():
    """docs/model.md section 5: on 4S the soft law moves away from the rigid one as it
    stiffens (a cascade of simultaneous impacts is not a row of pairwise ones), while on
    3Pa, with few impacts at a time, it lands on it."""
    e5, e50 = law_error("4S", soft(5.0), 0.6), law_error("4S", soft(50.0), 0.6)
    assert e50 > e5 and e50 > 0.03
    assert law_error("3Pa", soft(50.0), 0.6) < 1e-4


PHENOMENA = ["levitation", "waves", "resonance", "posts-arch", "u-hands", "throw",
             "side-contact-laws", "side-1Pa-1Pb"]


@pytest.mark.parametrize("name", PHENOMENA)
def test_phenomena_run_their_whole_duration_without_a_roll_back(name):
    """The divergence guard never has to step in (a kiosk plays them all day)."""
    sc = loader.load(name)
    d, stats = record(sc, sc.duration, 10.0, "realtime")
    assert stats["rollbacks"] == 0
    assert np.all(np.isfinite(d["ends"]))
