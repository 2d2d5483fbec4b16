"""Sleeping: a Slinky at rest on the world stops being integrated until something wakes
it (docs/solver.md, "Sleeping"), exactly, deterministically, and only then."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from runs import drive
from standing import standing_text

from slinky3d.dynamics.sleep import (
    ON_WORLD,
    SLEEP_AFTER,
    RestTest,
    rest_speed,
    steps_to_sleep,
)
from slinky3d.errors import SceneError
from slinky3d.model import chain
from slinky3d.runtime.commands import (
    Grab,
    LetGo,
    Move,
    Release,
    Reset,
    TakeHold,
    apply,
    checkpoint,
    replay,
    restore,
)
from slinky3d.runtime.simulation import Simulation
from slinky3d.runtime.snapshot import lerp
from slinky3d.runtime.thread import SimThread
from slinky3d.scene.loader import load, loads
from slinky3d.scene.world import distance

STANDING = standing_text()  # the collapsed plastic Slinky on the floor, at rest


def dropped(name: str, seconds: float, sleep: bool = True):
    """hanging-NAME let go at t = 0 and stepped one step at a time for `seconds`: the
    simulation, when it first touched the floor, when it fell asleep (None: never)."""
    scene = load(name)
    sim = Simulation(scene, sleep=sleep)
    s = sim.slinkies[0]
    sim.let_go(0)
    landed = asleep = None
    for _ in range(round(seconds / sim.h)):
        sim.step(1)
        if landed is None and distance(scene.world, s.ends()).min() <= ON_WORLD:
            landed = sim.t
        if asleep is None and s.asleep:
            asleep = sim.t
    return sim, landed, asleep


@pytest.mark.parametrize("name", ["hanging-plastic", "hanging-steel"])
def test_a_dropped_slinky_falls_asleep_after_landing_and_stays_put(name):
    sim, landed, asleep = dropped(name, 1.6)
    s = sim.slinkies[0]
    assert landed is not None and asleep is not None
    # at rest within a quarter second of the landing, asleep SLEEP_AFTER later (counted
    # from the first step at rest, which may be the landing's)
    assert landed + SLEEP_AFTER - sim.h <= asleep <= landed + SLEEP_AFTER + 0.25
    q, account, t = s.q.copy(), s.energy_account(), sim.t
    snap = sim.snapshot()
    sim.step(round(0.5 / sim.h))
    assert s.asleep and sim.t > t
    assert np.array_equal(s.q, q) and not s.qd.any()  # frozen exactly, at rest
    assert s.energy_account() == account and account[0] == 0.0  # nothing booked asleep
    assert sim.rollbacks == 0 and sim.status == ""
    assert distance(sim.scene.world, s.ends()).min() > -1e-3  # on the floor, not in it
    later = sim.snapshot()
    assert snap.slinkies[0].asleep and later.slinkies[0].asleep
    assert lerp(snap, later, 0.5 * (snap.t + later.t)).slinkies[0].asleep


def test_it_sleeps_after_exactly_its_time_at_rest_and_only_if_asked():
    """Standing at rest from the start, it sleeps after SLEEP_AFTER of steps, not one
    step sooner; with `sleep = false` (scene key or API flag) it never does."""
    scene = loads(STANDING)
    assert scene.sleep
    sim = Simulation(scene)
    s = sim.slinkies[0]
    n = steps_to_sleep(sim.h)
    sim.step(n - 1)
    assert not s.asleep and not sim.snapshot().slinkies[0].asleep
    sim.step(1)
    assert s.asleep and sim.snapshot().slinkies[0].asleep
    off = loads(STANDING, overrides=["sleep=false"])
    assert not off.sleep
    for other in (Simulation(off), Simulation(scene, sleep=False)):
        other.step(2 * n)
        assert not other.slinkies[0].asleep
    with pytest.raises(SceneError, match="sleep.*true or false"):
        loads("sleep = 1\n" + STANDING)


def test_sleep_changes_nothing_before_a_slinky_sleeps():
    """Bit for bit the same motion with and without sleeping, up to the step it sleeps:
    a drop until just before it falls asleep (at rest on the floor, counting), and the
    stairs walk (never at rest)."""
    a, _, asleep = dropped("hanging-plastic", 0.7)
    b, _, _ = dropped("hanging-plastic", 0.7, sleep=False)
    assert asleep is None and a.slinkies[0].rest.steps > 0
    stairs = [Simulation(load("stairs"), sleep=f) for f in (True, False)]
    for sim in stairs:
        sim.advance_to(1.0)
    for sa, sb in ((a, b), stairs):
        x, y = sa.slinkies[0], sb.slinkies[0]
        assert not x.asleep
        assert np.array_equal(x.q, y.q) and np.array_equal(x.qd, y.qd)


@pytest.mark.parametrize("name, nsteps", [("hanging-plastic", 400), ("hanging-steel", 450)])
def test_a_grab_wakes_it_and_it_moves_as_if_it_had_never_slept(name, nsteps):
    """Asleep on its floor, its top end is grabbed and pulled 5 cm up: it wakes at once,
    and after the grab's first 0.1 s it is where the same run without sleeping is, to
    within what the rest threshold allows (a point slower than it, over the time slept,
    at most the whole run); the runs are deterministic, and the thread's run replays to
    the same hash."""
    scene = load(name)
    h = scene.dt
    probe = replay(scene, [(0, LetGo(0))], nsteps)
    assert probe.slinkies[0].asleep
    top, n = probe.slinkies[0].ends()[-1], probe.slinkies[0].p.N
    log = [(0, LetGo(0)), (nsteps, Grab(0, n)), (nsteps, Move(0, (top[0], top[1] + 0.05)))]
    after = nsteps + round(0.1 / h)
    woken = replay(scene, log, after)
    never = replay(replace(scene, sleep=False), log, after)
    for sim in (woken, never):
        assert not sim.slinkies[0].asleep and sim.rollbacks == 0
    ends = woken.slinkies[0].ends()
    tol = rest_speed(scene.slinkies[0].params.g, h) * nsteps * h
    assert np.abs(ends - never.slinkies[0].ends()).max() < tol
    assert ends[-1, 1] - top[1] > 100 * tol  # and it did move: the grab pulled it up
    assert replay(scene, log, after).state_hash() == woken.state_hash()
    th = SimThread(scene, realtime=False)
    th.start()
    try:
        drive(th, log, after, timeout=120)
        assert th.sim.state_hash() == woken.state_hash()
        assert replay(scene, th.log, th.steps).state_hash() == woken.state_hash()
    finally:
        th.stop()


def test_commands_wake_it_refused_ones_do_not():
    scene = loads(STANDING)
    sim = Simulation(scene)
    s = sim.slinkies[0]
    sim.step(steps_to_sleep(sim.h))
    assert s.asleep
    cp = checkpoint(sim)
    n = s.p.N
    cases = [(Grab(0, n), True), (TakeHold(0, 0), True), (TakeHold(0, n), True),
             (Reset(), True), (Release(0), False), (LetGo(0), False), (Move(0, (0, 1)), False)]
    for cmd, wakes in cases:
        restore(sim, cp)
        assert s.asleep
        apply(sim, cmd)
        assert s.asleep is not wakes, cmd
    restore(sim, cp)
    sim.wake()  # a change of the world or of the parameters
    assert not s.asleep
    # woken, it is integrated again from where it slept, at rest
    q = s.q.copy()
    sim.step(1)
    assert np.abs(s.q - q).max() < 1e-6 and not s.asleep


def test_a_slinky_hanging_from_a_hand_never_sleeps():
    """Held at its top (the hand), or hanging from the grab: never asleep."""
    scene = load("hanging-plastic")
    held = Simulation(scene)
    grabbed = Simulation(scene)
    grabbed.grab(0, 0)
    grabbed.let_go(0)
    for _ in range(round(1.5 / held.h)):
        held.step(1)
        grabbed.step(1)
        assert not held.slinkies[0].asleep and not grabbed.slinkies[0].asleep
    assert grabbed.slinkies[0].free and grabbed.slinkies[0].grabbed == 0


def test_the_compiled_rest_test_is_the_chain_and_the_world_layers():
    """At rest iff every end point is slower than the rest speed (chain.end_velocities)
    and one is within ON_WORLD of the world (scene.world.distance); the pattern is the
    touching coils and the end points on the world: on the stairs' bent-over shape, at
    random rates scaled around the threshold."""
    scene = load("stairs")
    spec = scene.slinkies[0]
    p, h = spec.params, scene.dt
    test = RestTest(p, scene.world, h)
    v = rest_speed(p.g, h)
    q = np.array(spec.q0, float)
    E = chain.end_points(q, p.R)
    on = distance(scene.world, E) <= ON_WORLD
    assert on.any() and not on.all()
    rng = np.random.default_rng(3)
    for f in (0.3, 0.99, 1.01, 3.0):
        for _ in range(5):
            qd = rng.normal(size=q.size)
            qd *= f * v / np.linalg.norm(chain.end_velocities(q, qd, p.R), axis=1).max()
            got = test.contacts(q, qd, chain.BASE)
            if f > 1.0:
                assert got is None
                continue
            assert got is not None
            coils = q[chain.BASE:] <= p.theta_min + chain.TOUCHING
            assert np.array_equal(got, np.concatenate([coils, on]))
    far = q.copy()
    far[1] += 1.0  # the same shape, 1 m up: at rest, but not on the world
    assert test.contacts(far, np.zeros(q.size), chain.BASE) is None


def test_a_held_slinky_set_down_on_its_floor_sleeps_and_its_hand_wakes_it():
    """Held at its top, lowered until its bottom coils pile on the floor, the hand
    stopped: the hand is still and the Slinky rests on the floor, so it may sleep
    (docs/solver.md, "Sleeping"); moving the hand wakes it, and it follows."""
    text = "[slinky]\npreset = 'plastic'\nC_D = 2e-2\n"
    base = loads(text).slinkies[0]
    floor = chain.end_points(base.q0, base.params.R)[:, 1].min() - 0.05
    sim = Simulation(loads(text + f"[world]\nfloor = {floor}\n"))
    s = sim.slinkies[0]
    sim.drive_base(0, (0.0, -0.2))
    sim.advance_to(0.5)
    sim.drive_base(0, (0.0, 0.0))
    while not s.asleep and sim.t < 6.0:
        sim.step(1)
    assert s.asleep and not s.free and sim.rollbacks == 0
    top = s.ends()[0].copy()
    assert apply(sim, Move(0, (0.0, 1.0)))[1] == "" and s.asleep  # no grab: nothing moved
    sim.drive_base(0, (0.0, 0.2))
    assert not s.asleep
    sim.step(round(0.2 / sim.h))
    assert s.ends()[0, 1] > top[1] + 0.01 and not s.asleep


def test_each_slinky_sleeps_and_wakes_on_its_own():
    """Two Slinkies standing on one floor (they do not touch each other in this model):
    both sleep; a grab wakes the one grabbed, the other sleeps on, untouched."""
    slinky, beside = (standing_text(x=x).split("[world]")[0].replace("[slinky]", "[[slinky]]")
                      for x in (0.0, 0.5))
    sim = Simulation(loads(slinky + beside + "[world]\nfloor = 0.0\n"))
    a, b = sim.slinkies
    sim.step(steps_to_sleep(sim.h))
    assert a.asleep and b.asleep
    q, top = a.q.copy(), b.ends()[-1].copy()
    apply(sim, Grab(1, b.p.N, (top[0], top[1] + 0.05)))
    sim.step(round(0.2 / sim.h))
    assert a.asleep and np.array_equal(a.q, q)
    assert not b.asleep and b.ends()[-1, 1] > top[1] + 0.01
    assert [s.asleep for s in sim.snapshot().slinkies] == [True, False]


def test_a_session_keeps_sleeping_off():
    """A scene whose sleeping was turned off on the Scene (not in its TOML) is written
    into a session's scene text with `sleep = false`, so its replay is the same run."""
    from slinky3d.runtime.session import scene_text

    scene = loads(STANDING)
    assert loads(scene_text(scene)).sleep
    assert not loads(scene_text(replace(scene, sleep=False))).sleep
    assert not loads(scene_text(loads(STANDING, overrides=["sleep=false"]))).sleep
