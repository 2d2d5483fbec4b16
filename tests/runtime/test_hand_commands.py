"""DriveBase, LetGo and TakeHold as commands: refused with a message when they cannot
apply (never raised), logged and replayed bit for bit, in and out of the thread."""

from __future__ import annotations

import math

import numpy as np
import pytest
from runs import drive

from slinky3d.dynamics.solver import warm_up
from slinky3d.runtime.commands import (
    DriveBase,
    Grab,
    LetGo,
    Move,
    Release,
    Reset,
    TakeHold,
    apply,
    replay,
)
from slinky3d.runtime.simulation import Simulation
from slinky3d.runtime.thread import SimThread
from slinky3d.scene import loader


@pytest.fixture(scope="module", autouse=True)
def _compiled():
    warm_up()


@pytest.fixture
def plastic():
    return loader.load("hanging-plastic")


def test_refused_with_a_message(plastic):
    sim = Simulation(plastic)
    n = sim.slinkies[0].p.N
    bad = [DriveBase(3, (0.0, 0.0)), DriveBase(0, (math.nan, 0.0)), DriveBase(0, "fast"),
           DriveBase(0, (30.0, 0.0)), DriveBase(True, (0, 0)), LetGo(-1), LetGo("0"),
           TakeHold(0, n // 2), TakeHold(0, n + 1), TakeHold(1, 0), TakeHold(0, 0)]
    for cmd in bad:
        sim2, msg = apply(sim, cmd)
        assert sim2 is sim and msg.startswith(type(cmd).__name__.lower() + " ignored:"), cmd
        assert "\n" not in msg
    assert "already held" in apply(sim, TakeHold(0, 0))[1]
    assert apply(sim, LetGo(0)) == (sim, "")
    assert "no end is held" in apply(sim, LetGo(0))[1]
    assert "not held" in apply(sim, DriveBase(0, (0.1, 0.0)))[1]
    assert apply(sim, TakeHold(0, 0)) == (sim, "")


def test_both_ends_held():
    sc = loader.load("1Pa", ["slinky.far.release_time=100.0"])  # both held for 100 s
    sim = Simulation(sc)
    s = sim.slinkies[0]
    far = s.ends()[-1].copy()
    assert "both ends" in apply(sim, DriveBase(0, (0.1, 0.0)))[1]
    assert "already held" in apply(sim, TakeHold(0, s.p.N))[1]
    assert apply(sim, LetGo(0)) == (sim, "")  # let go of the anchor: the far end holds it
    assert not s.free and np.abs(s.ends()[0] - far).max() < 1e-12
    sim.step(50)
    assert np.abs(s.ends()[0] - far).max() < 1e-12


SCRIPT = [(0, DriveBase(0, (0.3, 0.0))), (30, DriveBase(0, (-0.6, 0.1))),
          (60, DriveBase(0, (0.0, 0.0))), (80, Grab(0, 40)), (81, Move(0, (0.1, -0.2))),
          (90, LetGo(0)), (140, TakeHold(0, 75)), (141, Release(0)),
          (170, DriveBase(0, (0.2, 0.2))), (200, LetGo(0)), (230, TakeHold(0, 0)),
          (240, Reset()), (241, LetGo(0)), (270, TakeHold(0, 75))]
NSTEPS = 320


def test_replay_is_bit_identical_and_matches_the_thread(plastic):
    a = replay(plastic, SCRIPT, NSTEPS)
    assert a.state_hash() == replay(plastic, SCRIPT, NSTEPS).state_hash()
    # a command moved by a step after the Reset (the Reset forgets what came before)
    moved = [(s + (k == 12), c) for k, (s, c) in enumerate(SCRIPT)]
    assert replay(plastic, moved, NSTEPS).state_hash() != a.state_hash()
    th = SimThread(plastic, realtime=False)
    th.start()
    try:
        drive(th, SCRIPT, NSTEPS)
        assert th.steps == NSTEPS and th.status == ""
        assert th.sim.state_hash() == a.state_hash()
        assert replay(plastic, th.log, th.steps).state_hash() == a.state_hash()
        snap = th.latest_pair()[1].slinkies[0]
        assert snap.anchor_held and not snap.far_held
    finally:
        th.stop()


def test_hash_covers_the_hand(plastic):
    """Two runs that differ only in what the hand does next hash differently."""
    a = replay(plastic, [(0, DriveBase(0, (0.2, 0.0)))], 1)
    b = replay(plastic, [(0, DriveBase(0, (0.3, 0.0)))], 1)
    assert a.state_hash() != b.state_hash()


def test_reset_forgets_the_hand(plastic):
    sim = Simulation(plastic)
    fresh = sim.state_hash()
    for cmd in (DriveBase(0, (0.4, 0.0)), LetGo(0), TakeHold(0, 75)):
        apply(sim, cmd)
        sim.step(20)
    sim.reset()
    assert sim.state_hash() == fresh
    sim.step(20)
    assert sim.state_hash() == replay(plastic, [], 20).state_hash()
