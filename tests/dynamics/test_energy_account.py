"""The energy account: with no hand, kinetic + gravity + spring + what the dampers
dissipated + what the impacts took stays constant; impacts take exactly the kinetic
energy their impulses remove."""

from __future__ import annotations

import numpy as np
import pytest

from slinky3d.dynamics.contacts import impact
from slinky3d.dynamics.solver import warm_up
from slinky3d.model import chain
from slinky3d.runtime.simulation import Simulation
from slinky3d.scene import loader


@pytest.fixture(scope="module", autouse=True)
def _compiled():
    warm_up()


def totals(name: str, duration: float) -> tuple[np.ndarray, np.ndarray, Simulation]:
    sim = Simulation(loader.load(name))
    s = sim.slinkies[0]
    t, rows = [sim.t], [s.energy_account()]
    while sim.t < duration - 1e-9:
        sim.step(1)
        t.append(sim.t)
        rows.append(s.energy_account())
    return np.array(t), np.array(rows), sim


def test_1Pa_total_is_constant():
    t, e, sim = totals("1Pa", 1.4)
    total = e.sum(axis=1)
    lost = e[-1, 3] + e[-1, 4]
    assert e[-1, 3] > 0.01 and e[-1, 4] > 0.0  # the dampers and the impacts took energy
    assert sim.slinkies[0].impacts > 0
    assert np.ptp(total) < 1e-3 * lost  # measured 3.5e-4
    assert np.all(np.diff(e[:, 3]) >= -1e-15) and np.all(np.diff(e[:, 4]) >= 0.0)


def test_drop_total_is_constant_but_for_the_holders_spring():
    """The drop (anchor let go at 0.2 s): the holder takes its joint spring's energy
    1/2 k theta_1^2 with it; otherwise the total is constant through the impacts."""
    t, e, sim = totals("drop-plastic", 0.6)
    s = sim.slinkies[0]
    total = e.sum(axis=1)
    before, after = total[t < 0.2 - 1e-9], total[t > 0.2 + 1e-9]
    assert np.ptp(before) < 1e-12  # held at rest
    theta1 = s.q[chain.BASE]  # frozen since the release
    jump = after[0] - before[-1]
    assert jump == pytest.approx(-0.5 * s.p.k_coil * theta1**2, rel=0.1)
    assert np.ptp(after) < 1e-3 * (e[-1, 3] + e[-1, 4])  # measured 1.9e-4
    assert e[-1, 4] > 0.0 and s.impacts > 100


def test_impact_loss_is_the_kinetic_energy_removed():
    sim = Simulation(loader.load("drop-plastic"))
    sim.advance_to(0.25)
    s = sim.slinkies[0]
    j = chain.BASE + 1 + int(np.argmin(s.q[chain.BASE + 1:]))  # close to contact: make it hit
    s.q[j] = s.p.theta_min
    s.qd[j] = -0.5
    s.locked[j] = False
    T0 = chain.kinetic_energy(s.p, s.q, s.qd)
    loss0 = float(s.work.small["impact_loss"][0])
    impact(s.q, s.qd, s.locked, s.par, s.modes, s.work, s.cnt, 0.25)
    T1 = chain.kinetic_energy(s.p, s.q, s.qd)
    loss = float(s.work.small["impact_loss"][0]) - loss0
    assert loss > 0.0
    assert loss == pytest.approx(T0 - T1, rel=1e-9)
    assert s.work.impact_time[j] == 0.25


def test_snapshots_carry_the_account_and_impact_ages():
    sim = Simulation(loader.load("drop-plastic"))
    sim.advance_to(0.4)
    snap = sim.snapshot().slinkies[0]
    assert snap.energy is not None and snap.impact_age is not None
    assert snap.energy.total == pytest.approx(sum(sim.slinkies[0].energy_account()))
    ages = snap.impact_age
    assert ages.shape == (snap.N,) and np.isinf(ages).any() and (ages < 0.2).any()
    assert np.all(ages[np.isfinite(ages)] >= 0.0)
    sim.reset()
    assert np.isinf(sim.snapshot().slinkies[0].impact_age).all()
    assert sim.snapshot().slinkies[0].energy.damping == 0.0
