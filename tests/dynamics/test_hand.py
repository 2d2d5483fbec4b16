"""A hand on the ends at the solver level: re-rooting keeps the chain, a clamp holds,
the drive is smooth and bounded, and the grab's defaults hold the Slinky up."""

from __future__ import annotations

import math

import numpy as np
import pytest

from slinky3d.dynamics.couplings import GRAB_SAG, grab_defaults
from slinky3d.dynamics.hand import DRIVE_ACCELERATION, DRIVE_REACH
from slinky3d.dynamics.solver import warm_up
from slinky3d.model import chain
from slinky3d.runtime.simulation import Simulation
from slinky3d.scene import loader


@pytest.fixture(scope="module", autouse=True)
def _compiled():
    warm_up()


def _energies(s):
    p = s.p
    return chain.kinetic_energy(p, s.q, s.qd), chain.potential_energy(p, s.q, s.free)


def _end_velocities(s):
    """World velocities of E_1 and E_{N+1} by finite differences of the positions."""
    eps = 1e-7
    q1 = s.q + eps * s.qd
    E0 = chain.end_points(s.q, s.p.R)
    E1 = chain.end_points(q1, s.p.R)
    v = (E1 - E0) / eps
    if s.mirror:
        v[:, 0] *= -1
    return v[[0, -1]]


@pytest.mark.parametrize("overrides", [[], ["slinky.n_coils=37"]])  # N odd, N even
def test_rerooting_keeps_places_rates_and_energy(overrides):
    sim = Simulation(loader.load("drop-plastic", overrides))
    sim.advance_to(0.3)  # falling, coils colliding
    s = sim.slinkies[0]
    assert s.free and np.abs(s.qd).max() > 0.1
    n = s.p.N
    ends, (T, V) = s.ends(), _energies(s)
    v_first, v_last = _end_velocities(s)
    s._reroot()
    assert s.mirror == (n % 2 == 0)
    assert np.abs(s.ends() - ends[::-1]).max() < 1e-12
    T2, V2 = _energies(s)
    assert T2 == pytest.approx(T, rel=1e-12) and V2 == pytest.approx(V, rel=1e-12)
    w_first, w_last = _end_velocities(s)
    assert np.allclose(w_first, v_last, atol=1e-6) and np.allclose(w_last, v_first, atol=1e-6)
    th = s.q[chain.BASE + 1:]
    assert np.all(th >= s.p.theta_min - 1e-12)  # the contacts still hold: no mirror flips
    s._reroot()  # and back
    assert not s.mirror and np.abs(s.ends() - ends).max() < 1e-12


@pytest.mark.parametrize("overrides", [[], ["slinky.n_coils=37"]])
def test_holding_the_far_end_holds_it(overrides):
    sim = Simulation(loader.load("hanging-plastic", overrides))
    s = sim.slinkies[0]
    bottom, top = s.ends()[-1].copy(), s.ends()[0].copy()
    assert sim.take_hold(0, s.p.N) == ""
    assert not s.free and s.hand and not s.far_held(s.t)
    assert np.abs(s.ends()[0] - bottom).max() < 1e-12  # it is the anchored end now
    assert s.energy_account()[0] == pytest.approx(0.0, abs=1e-15)  # caught at rest: at rest
    for _ in range(50):
        sim.step(1)
        assert np.abs(s.ends()[0] - bottom).max() < 1e-12  # stays put
    assert s.ends()[-1][1] < top[1] - 0.01  # the old top, let go of, falls


def test_catching_a_falling_slinky_stops_the_held_end():
    sim = Simulation(loader.load("drop-plastic"))
    sim.advance_to(0.3)
    s = sim.slinkies[0]
    T0 = _energies(s)[0]
    assert sim.take_hold(0, 0) == ""
    assert not s.free
    assert np.all(s.qd[:chain.BASE] == 0.0)
    assert _energies(s)[0] < T0  # the hand took kinetic energy
    held = s.ends()[0].copy()
    sim.step(100)
    assert np.abs(s.ends()[0] - held).max() < 1e-12
    assert np.all(np.isfinite(s.q))


def test_drive_is_smooth_limited_and_stops():
    sim = Simulation(loader.load("hanging-plastic"))
    s = sim.slinkies[0]
    h = sim.h
    assert sim.drive_base(0, (0.5, 0.2)) == ""
    xs = [s.q[:2].copy()]
    vs = [s.qd[:2].copy()]
    for k in range(200):
        if k == 100:
            sim.drive_base(0, (0.0, 0.0))
        sim.step(1)
        xs.append(s.q[:2].copy())
        vs.append(s.qd[:2].copy())
    x, v = np.array(xs), np.array(vs)
    a = np.diff(v, axis=0) / h
    assert np.linalg.norm(a, axis=1).max() <= DRIVE_ACCELERATION * (1 + 1e-9)
    assert np.allclose(v[60:100], (0.5, 0.2))  # reached in |v| / a = 67 ms
    # positions and velocities agree (constant acceleration inside each step)
    assert np.allclose(np.diff(x, axis=0), 0.5 * h * (v[1:] + v[:-1]), atol=1e-15)
    assert np.allclose(v[-1], 0.0) and np.allclose(x[-1], x[-2])  # stopped, and stays
    assert s.ends()[-1][0] > 0.01  # the chain followed


def test_drive_keeps_the_base_in_reach():
    sim = Simulation(loader.load("hanging-plastic", ["slinky.n_coils=4"]))
    s = sim.slinkies[0]
    sim.drive_base(0, (20.0, 0.0))
    xmax = 0.0
    for _ in range(round(9.0 / sim.h)):
        sim.step(1)
        xmax = max(xmax, abs(s.q[0]))
    assert xmax <= DRIVE_REACH
    assert abs(s.qd[0]) < 1e-9 and xmax > 0.95 * DRIVE_REACH  # braked to a stop near it


@pytest.mark.parametrize("name", ["hanging-plastic", "hanging-steel"])
def test_default_grab_holds_the_whole_slinky(name):
    """Grabbed at its top and let go of by the holder, the Slinky hangs from the grab:
    the grabbed point sags under its weight by GRAB_SAG (< 1 cm) and barely overshoots."""
    sc = loader.load(name)
    k, _, d, cap = grab_defaults(sc.slinkies[0])
    p = sc.slinkies[0].params
    assert k * 0.01 > p.mass * p.g and cap > 2 * p.mass * p.g
    assert d == pytest.approx(2 * math.sqrt(k * p.mass))  # critical for its mass
    sim = Simulation(sc)
    s = sim.slinkies[0]
    top = s.ends()[0].copy()
    sim.grab(0, 0)
    assert sim.let_go(0) == ""
    sags = []
    for _ in range(round(1.5 / sim.h)):
        sim.step(1)
        sags.append(top[1] - s.ends()[0][1])
    sags = np.array(sags)
    assert sags[-1] == pytest.approx(GRAB_SAG, rel=0.05)  # static: the weight on k
    assert sags.max() < 0.01
    assert sags.max() <= 1.1 * sags[-1]  # overshoot <= 10 %: damping ratio >= 0.6 (2 %)
    assert np.all(np.isfinite(s.q))
