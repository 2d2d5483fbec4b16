"""Contact with the world on the 3D solver (dynamics/world_contact3d.py): the laws of
docs/model.md sections 11 and 12 on the collapsed plastic Slinky standing, falling
over, sliding and resting on the floor and on a table."""

import math

import numpy as np
import pytest
from standing import standing_text

from slinky3d.dynamics import world_contact3d
from slinky3d.model import chain3d
from slinky3d.runtime.simulation import Simulation
from slinky3d.scene.loader import loads

G = 9.81


def sim3d(text, sleep=False):
    return Simulation(loads(text), solver="3d", sleep=sleep)


def arc_points(s, per_arc=9):
    """Points along every half hoop's arc (end points included), world m."""
    x, frames, _, _ = s.solver.pose()
    R = s.p.R
    E = chain3d.end_points(x, frames, R)[:-1]
    phi = np.linspace(0.0, math.pi, per_arc)[:, None, None]
    d, b = frames[None, :, :, 0], frames[None, :, :, 1]
    return (E[None] + R * (1 - np.cos(phi)) * d + R * np.sin(phi) * b).reshape(-1, 3)


def test_a_falling_stack_lands_topples_and_rests_without_gaining_energy():
    sim = sim3d(standing_text(tilt=0.9, height=0.02))
    s = sim.slinkies[0]
    prev, deepest = s.energy(), 0.0
    for _ in range(round(0.6 / sim.h)):
        sim.step(1)
        e = s.energy()
        assert e <= prev + 1e-12  # nothing from nothing: the contacts only take
        prev = e
        deepest = max(deepest, -arc_points(s)[:, 1].min())
    assert deepest < 1e-3  # no point of any arc more than 1 mm into the floor
    assert np.abs(s.qd).max() < 1e-5  # at rest
    assert sim.rollbacks == 0 and s.solver.world.failed == 0


def test_the_planar_floor_scene_is_the_planar_solvers():
    """A planar start stays planar on the 3D solver (the ring mass model) and lands,
    topples and rests as the planar solver has it: end points within 1e-6 m."""
    text = standing_text(tilt=0.9, height=0.02)
    a, b = Simulation(loads(text), sleep=False), sim3d(text)
    worst = 0.0
    for _ in range(12):
        a.step(13)
        b.step(13)
        e3 = b.slinkies[0].ends()
        worst = max(worst, float(np.abs(a.slinkies[0].ends() - e3[:, :2]).max()))
        assert np.abs(e3[:, 2]).max() == 0.0
    assert worst < 1e-6


def test_turned_by_rotate_it_lands_the_same_turned():
    """Frame invariance through a landing: the turned run is the run turned. Not to
    round-off: each piece's coil locks are decided by comparisons, and a rounding apart
    can free or lock a coil a piece apart (steps of 650-2000 evaluations), which the
    landing then carries; measured 4e-12 m before that and 1.8e-6 m after, within 1e-5."""
    text = standing_text(tilt=0.9, height=0.02, mu=0.3)
    a, b = sim3d(text), sim3d("rotate = 37\n" + text)
    T = chain3d.turn_about_vertical(math.radians(37))
    for _ in range(6):
        a.step(25)
        b.step(25)
        assert np.abs(a.slinkies[0].ends() @ T.T - b.slinkies[0].ends()).max() < 1e-5


@pytest.mark.parametrize("heading", [0.0, 30.0, 90.0])
def test_a_slid_stack_stops_where_friction_says(heading):
    """Standing on its end and pushed along the floor at v0 (any heading: the pyramid's
    edge follows the sliding), it slides v0^2 / (2 mu g) and stops, in a line."""
    mu, v0 = 0.2, 0.3
    sim = sim3d(standing_text(mu=mu))
    s = sim.slinkies[0]
    sim.step(5)  # settled on its floor
    x0 = s.ends().mean(axis=0)
    way = np.array([math.cos(math.radians(heading)), 0.0, -math.sin(math.radians(heading))])
    s.solver.u[:3] += v0 * way
    for _ in range(round(0.4 / sim.h)):
        sim.step(1)
    moved = s.ends().mean(axis=0) - x0
    assert np.abs(s.qd).max() < 1e-5  # stopped
    assert moved @ way == pytest.approx(v0 * v0 / (2 * mu * G), rel=0.05)
    assert np.linalg.norm(moved - (moved @ way) * way) < 1e-2 * (moved @ way)


def test_standing_on_a_table_it_is_held():
    text = standing_text(x=0.1, floor="", extra="[world.table]\nedge = [0.3, 0.0]\n"
                                                  "width = 1.0")
    sim = sim3d(text)
    s = sim.slinkies[0]
    sim.step(10)
    e0 = s.ends()
    sim.step(round(0.5 / sim.h))
    assert np.abs(s.ends() - e0).max() < 1e-6
    assert np.abs(s.qd).max() < 1e-6


def test_the_world_turns_with_the_scene():
    """The table and the stairs turn with `rotate`; the floor is the same."""
    from slinky3d.scene.world import Stairs, World

    w = World(floor=-1.0, stairs=Stairs((0.0, 0.0), 0.1, 0.2, 3, 0.3), table=None)
    T = chain3d.turn_about_vertical(0.7)
    p0, e0 = world_contact3d.surfaces(w, np.eye(3))
    p1, e1 = world_contact3d.surfaces(w, T)
    assert np.allclose(p1[0, :4], p0[0, :4])  # the floor
    for a, b in zip(p0[1:], p1[1:], strict=True):
        assert np.allclose(b[:3], T @ a[:3]) and b[3] == a[3]  # normals turned
    assert np.allclose(e1[:, :3], e0[:, :3] @ T.T)  # the edges' points


def test_at_rest_on_the_world_it_sleeps_and_a_grab_wakes_it():
    text = standing_text(x=0.1, floor="", extra="[world.table]\nedge = [0.3, 0.0]\n"
                                                  "width = 1.0")
    sim = sim3d(text, sleep=True)
    s = sim.slinkies[0]
    for _ in range(round(1.0 / sim.h)):
        sim.step(1)
        if s.asleep:
            break
    assert s.asleep and np.all(s.qd == 0.0)
    q, e = s.q.copy(), s.guard_figures()[0]
    sim.step(50)
    assert np.array_equal(s.q, q) and s.guard_figures()[0] == e  # nothing integrated
    top = s.ends()[-1]
    sim.grab(0, s.p.N, tuple(top + [0.0, 0.05, 0.0]))
    assert not s.asleep
    sim.step(25)
    assert s.ends()[-1][1] > top[1] + 1e-3  # pulled up


def test_a_scene_starting_inside_the_world_is_one_line_on_the_3d_solver_too():
    from slinky3d.errors import SlinkyError

    with pytest.raises(SlinkyError) as e:
        sim3d("solver = \"3d\"\n" + standing_text(height=-0.01))
    assert "inside the floor" in str(e.value) and "\n" not in str(e.value)


def test_the_stairs_scene_goes_down_on_the_3d_solver():
    """The `stairs` walk on the 3D solver: down at least two steps in 1 s, its ends
    resting on the treads in turn, nothing more than 3 mm into a step, no roll-back."""
    from slinky3d.scene.loader import load
    from slinky3d.scene.world import distance

    sc = load("stairs")
    sim = Simulation(sc, solver="3d", sleep=False)
    s = sim.slinkies[0]
    deepest, reached = 0.0, 0
    for _ in range(round(1.0 / sim.h)):
        sim.step(1)
        e = s.ends()
        deepest = max(deepest, -float(distance(sc.world, e[:, :2]).min()))
        for x, y in e[[0, -1], :2]:
            reached = max(reached, sc.world.stairs.step_at(x, y) or 0)
    assert reached >= 2 and deepest < 3e-3
    assert sim.rollbacks == 0 and s.solver.world.failed == 0
