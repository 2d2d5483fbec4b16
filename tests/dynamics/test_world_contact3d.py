"""Contact with the world on the 3D solver (dynamics/world_contact3d.py): the laws of
docs/model.md sections 11 and 12 on the collapsed plastic Slinky standing, falling
over, sliding and resting on the floor and on a table."""

import math

import numpy as np
import pytest
from standing import standing_text

from slinky3d.dynamics import world_geometry3d
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


def planar_departure(text: str, b: Simulation) -> float:
    """Run the scene `text` on the planar solver beside `b` (its 3D run) for 0.62 s: the
    largest distance between their end points; b's stay in the plane exactly."""
    a = Simulation(loads(text), sleep=False)
    worst = 0.0
    for _ in range(12):
        a.step(13)
        b.step(13)
        e3 = b.slinkies[0].ends()
        worst = max(worst, float(np.abs(a.slinkies[0].ends() - e3[:, :2]).max()))
        assert np.abs(e3[:, 2]).max() == 0.0
    return worst


def test_the_planar_floor_scene_is_the_planar_solvers():
    """A planar start stays planar on the 3D solver (the ring mass model) and lands,
    topples and rests as the planar solver has it: end points within 1e-6 m."""
    text = standing_text(tilt=0.9, height=0.02)
    b = sim3d(text)
    assert planar_departure(text, b) < 1e-6


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
    p0, e0 = world_geometry3d.surfaces(w, np.eye(3))
    p1, e1 = world_geometry3d.surfaces(w, T)
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
    assert sim.snapshot().slinkies[0].asleep  # what the picture and the HUD are told
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


def _gap_from_surfaces(planes, edges, p):
    """The distance of outside points p (M, 3) to the solid the surfaces describe: the
    nearest face whose region holds the point's projection, or the nearest edge."""
    d = np.full(len(p), np.inf)
    for P in planes:
        gap = p @ P[:3] - P[3]
        a, b = p @ P[10:13], p @ P[15:18]
        inside = (P[13] <= a) & (a <= P[14]) & (P[18] <= b) & (b <= P[19]) & (gap >= 0)
        d = np.where(inside, np.minimum(d, gap), d)
    for E in edges:
        r = p - E[:3]
        out = (r @ E[6:9] > 0) & (r @ E[9:12] > 0)
        r = r - np.outer(r @ E[3:6], E[3:6])
        d = np.where(out, np.minimum(d, np.linalg.norm(r, axis=1)), d)
    return d


@pytest.mark.parametrize("block", ["stairs", "table"])
def test_a_turned_blocks_surfaces_are_its_solid(block):
    """surfaces() of a block turned by its own `rotate` about its pivot, in a scene
    turned by another: every point outside is as far from its planes and edges as
    world.distance (independent: the point taken back into the block's frame) says."""
    from slinky3d.scene.world import distance

    world = {"stairs": "[world.stairs]\ntop = [0.3, -0.5]\nheight = 0.05\ndepth = 0.12\n"
                       "count = 3\nlanding = 0.2\nrotate = 30\n",
             "table": "[world.table]\nedge = [0.3, -0.5]\nwidth = 0.4\nrotate = -70\n"}[block]
    sc = loads(standing_text(floor="floor = -1.0", extra=world, height=0.5))
    T = chain3d.turn_about_vertical(math.radians(41.0))
    planes, edges = world_geometry3d.surfaces(sc.world, T)
    rng = np.random.default_rng(5)
    p = rng.uniform([-0.3, -0.8, -0.5], [1.0, 0.0, 0.5], (3000, 3))  # scene frame
    exact = distance(sc.world, p)
    out = exact > 1e-6
    assert out.sum() > 1000 and (~out).sum() > 100
    got = _gap_from_surfaces(planes, edges, p[out] @ T.T)  # in the world's frame
    assert np.abs(got - exact[out]).max() < 1e-12


def test_a_stack_toppling_over_a_turned_tables_edge_lands_as_on_the_unturned_turned():
    """Frame invariance of a block's own turn: the stack topples over the edge of a table
    turned by 150 degrees about its edge's point (the table reaching toward +x, its edge
    30 degrees off the stack's plane) and slides off it; turned by 30 degrees with the
    scene (`rotate`), the table is at 180 (and moved: its pivot is off the origin) and
    the stack turned: the same run, turned. To round-off while it lands on the top
    (0.2 s, measured 4e-16), then as far as the coil locks' decisions carry it (above):
    1e-7 as it tips over the edge, 7e-5 after it slid off (within 5e-4)."""
    table = "[world.table]\nedge = [-0.03, 0.0]\nwidth = 1.0\nrotate = 150\n"
    text = standing_text(tilt=0.9, height=0.01, mu=0.3, floor="", extra=table)
    a, b = sim3d(text), sim3d("rotate = 30\n" + text)
    T = chain3d.turn_about_vertical(math.radians(30))
    world = a.slinkies[0].solver.world
    over, on_edge, top_only = 0.0, False, 0
    for i in range(100):
        a.step(1)
        b.step(1)
        e = a.slinkies[0].ends()
        worst = np.abs(e @ T.T - b.slinkies[0].ends()).max()
        surfaces = world.cont[:world.last_contacts, 14]
        on_edge |= bool((surfaces >= world_geometry3d.EDGE).any())
        if i < 50:
            assert worst < 1e-12 and not on_edge
            top_only += bool(len(surfaces))
        assert worst < 5e-4
        over = max(over, -0.03 - float(e[:, 0].min()))  # past the edge's pivot, along -x
    assert top_only >= 20 and on_edge and over > 0.05  # landed, tipped over the edge
    assert a.rollbacks == b.rollbacks == 0 and world.failed == 0


def test_unturned_blocks_are_the_planar_solvers_and_a_whole_turn_changes_nothing():
    """rotate = 0 on a table's block: the 3D solver's stack landing and toppling on the
    table is the planar solver's (end points within 1e-6 m, z 0; measured 2.3e-7, as on
    the floor); rotate = 360 gives the same surfaces and stays planar."""
    table = "[world.table]\nedge = [0.93, 0.0]\nwidth = 1.0\n"
    text = standing_text(tilt=0.9, height=0.02, floor="", extra=table)
    whole = loads(text.replace("width = 1.0", "width = 1.0\nrotate = 360"))
    assert whole.solver == "planar"
    for x, y in zip(world_geometry3d.surfaces(loads(text).world, np.eye(3)),
                    world_geometry3d.surfaces(whole.world, np.eye(3)), strict=True):
        assert np.array_equal(x, y)
    b = sim3d(text)
    assert planar_departure(text, b) < 1e-6
    assert b.slinkies[0].solver.world.last_contacts > 0  # on the table
