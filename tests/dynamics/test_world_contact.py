"""Contact with the world: the laws of docs/model.md section 11, checked on a Slinky
standing, falling over, dropped, pulled and lowered onto the floor."""


import numpy as np
import pytest
from standing import standing_text

from slinky3d.dynamics.world_geometry import point_distance
from slinky3d.model import chain
from slinky3d.runtime.simulation import Simulation
from slinky3d.scene.loader import loads
from slinky3d.scene.validate import Context, Table
from slinky3d.scene.world import World, distance, read_world


def standing(**kw):
    """The collapsed plastic Slinky standing on the floor (standing.standing_text)."""
    return loads(standing_text(**kw))


def points_on_bars(s, per_bar=8):
    """Points along every bar (end points included): what must stay out of the world."""
    E = chain.end_points(s.q, s.p.R)
    f = np.linspace(0.0, 1.0, per_bar)[:, None, None]
    return (E[:-1][None] * (1 - f) + E[1:][None] * f).reshape(-1, 2)


def centre_x(s):
    return chain.centres(s.q, s.p.R)[:, 0].mean()


def run(scene, seconds, each=None):
    sim = Simulation(scene)
    for _ in range(round(seconds / sim.h)):
        sim.step(1)
        if each is not None:
            each(sim.slinkies[0])
    return sim


def test_the_compiled_distance_is_the_scene_layers():
    world = read_world(Table(Context("t"), {
        "mu": 0.4, "stairs": {"top": [0.0, 0.0], "height": 0.05, "depth": 0.1, "count": 3},
        "table": {"edge": [-0.5, 0.1]}}, "world", ("floor", "mu", "mu_static", "stairs",
                                                   "table")))
    blocks = np.array(world.blocks())
    rng = np.random.default_rng(3)
    pts = rng.uniform([-0.8, -0.3], [0.5, 0.2], size=(2000, 2))
    want = distance(world, pts)
    for p, d in zip(pts, want, strict=True):
        got, nx, ny = point_distance(p[0], p[1], world.floor, blocks)
        assert got == pytest.approx(d, abs=1e-12)
        assert nx * nx + ny * ny == pytest.approx(1.0)
        if d > 1e-4:  # outside, the normal is the distance's gradient
            e = 1e-7
            gx = (distance(world, np.array([[p[0] + e, p[1]]]))[0] - d) / e
            gy = (distance(world, np.array([[p[0], p[1] + e]]))[0] - d) / e
            assert (nx, ny) == pytest.approx((gx, gy), abs=1e-4)


def test_a_slinky_standing_on_the_floor_stays_put():
    scene = standing()
    sim = Simulation(scene)
    s = sim.slinkies[0]
    start = chain.end_points(s.q, s.p.R)
    sim.advance_to(1.0)
    moved = np.abs(chain.end_points(s.q, s.p.R) - start).max()
    assert moved < 1e-6
    assert distance(scene.world, points_on_bars(s)).min() > -1e-6
    assert s.world_work.state[1] >= 2  # it stands on contacts: both ends of its bar


@pytest.mark.parametrize("mu, slides", [(0.5, False), (0.1, True)])
def test_static_friction_holds_a_pull_below_it_and_gives_above(mu, slides):
    """The bottom end pulled sideways with ~0.3 of the Slinky's weight (the grab,
    2 mm off): friction 0.5 holds it where it is, friction 0.1 lets it slide."""
    scene = standing(mu=mu)
    sim = Simulation(scene)
    s = sim.slinkies[0]
    e0 = chain.end_points(s.q, s.p.R)[0].copy()
    k = scene.slinkies[0].params
    pull = 0.3 * k.N * k.m * k.g / s.par["grab_stiffness"]
    sim.grab(0, 0, (e0[0] + pull, e0[1]))
    sim.advance_to(0.5)
    dx = chain.end_points(s.q, s.p.R)[0, 0] - e0[0]
    if slides:
        assert dx > 0.3 * pull
    else:
        assert abs(dx) < 1e-5


def test_on_a_frictionless_floor_the_centre_of_mass_keeps_its_x():
    """A tilted stack falls over: without friction no horizontal force acts, so its
    centre of mass stays at the same x (with friction it moves: the check can fail)."""
    moved = {}
    for mu in (0.0, 0.5):
        scene = standing(tilt=0.3, mu=mu)
        sim = Simulation(scene)
        x0 = centre_x(sim.slinkies[0])
        sim.advance_to(1.0)
        moved[mu] = abs(centre_x(sim.slinkies[0]) - x0)
    assert moved[0.0] < 1e-6
    assert moved[0.5] > 1e-3


@pytest.mark.parametrize("tilt, height, mu", [(0.3, 0.0, 0.5), (0.3, 0.0, 0.0),
                                               (0.2, 0.1, 0.5)])
def test_energy_never_rises_at_a_contact_and_nothing_goes_in(tilt, height, mu):
    """Falling over (with and without friction) and dropped from 10 cm onto its edge:
    the mechanical energy never rises from one step to the next, and no point of any
    bar is ever more than 1 mm inside the floor."""
    scene = standing(tilt=tilt, height=height, mu=mu)
    energy = []
    deepest = [0.0]

    def each(s):
        energy.append(s.energy())
        deepest[0] = min(deepest[0], distance(scene.world, points_on_bars(s)).min())

    sim = run(scene, 1.0, each)
    rises = np.diff(energy)
    assert rises.max() <= 1e-9 * max(1.0, abs(energy[0]))
    assert energy[0] - energy[-1] > 1e-3  # it fell: there was something to lose
    assert deepest[0] > -1e-3
    assert sim.slinkies[0].world_work.state[1] > 0  # it ends on the floor


def test_a_held_slinky_lowered_onto_the_floor_rests_on_it():
    """The hanging plastic Slinky, held at its top 10 cm above the reach of its bottom,
    is lowered by the hand at 0.2 m/s: its bottom coils pile up on the floor."""
    base = loads("[slinky]\npreset = 'plastic'\nC_D = 2e-3\n").slinkies[0]
    floor = chain.end_points(base.q0, base.params.R)[:, 1].min() - 0.1
    scene = loads(f"[slinky]\npreset = 'plastic'\nC_D = 2e-3\n[world]\nfloor = {floor}\n")
    sim = Simulation(scene)
    s = sim.slinkies[0]
    sim.drive_base(0, (0.0, -0.2))
    deepest = 0.0
    for _ in range(round(1.0 / sim.h)):
        sim.step(1)
        deepest = min(deepest, distance(scene.world, points_on_bars(s)).min())
    assert deepest > -1e-3
    E = chain.end_points(s.q, s.p.R)
    assert E[-1, 1] == pytest.approx(floor, abs=1e-3)  # the bottom end rests on it
    assert np.sum(E[:, 1] < floor + 0.01) >= 8  # under a pile of collapsed coils
    assert np.isfinite(s.q).all() and s.energy() < 1.0


def test_no_world_changes_nothing():
    """A scene without [world] runs the event-driven solver as before, bit for bit."""
    a = loads("[slinky]\npreset = 'plastic'\nC_D = 2e-3\n")
    b = loads("[slinky]\npreset = 'plastic'\nC_D = 2e-3\n[world]\nfloor = -100.0\n")
    assert not a.world.solid and b.world.solid and a.world == World()
    sa, sb = Simulation(a), Simulation(b)
    sa.advance_to(0.2)
    sb.advance_to(0.2)
    assert np.array_equal(sa.slinkies[0].q, sb.slinkies[0].q)


def test_a_slinky_picked_up_by_the_grab_and_set_on_the_top_step_stays_there():
    """What the app's mouse does: grab the top of a Slinky standing on the floor below
    the stairs, carry it up over the top step (the landing), set it down, let go."""
    stairs = """[world.stairs]
top = [0.0, 0.0]
height = 0.05
depth = 0.12
count = 2
landing = 0.3
"""
    scene = standing(x=0.4, height=-0.15, floor="", extra=stairs)
    assert scene.world.floor == pytest.approx(-0.15)
    sim = Simulation(scene)
    s = sim.slinkies[0]
    top = s.ends()[-1].copy()
    sim.grab(0, s.p.N, tuple(top))
    # up past its hanging length (0.55 m), over the landing, wait for the swing to
    # settle, down until its top is just above the landing
    path = [(0.4, 0.65), (-0.12, 0.65), None, (-0.12, 0.08)]
    at = top
    for goal in path:
        if goal is None:
            sim.advance_to(sim.t + 1.5)
            continue
        n = int(np.linalg.norm(np.asarray(goal) - at) / (0.3 * sim.h)) + 1  # 0.3 m/s
        for f in np.linspace(0.0, 1.0, n + 1)[1:]:
            sim.move_grab(0, tuple(at + f * (np.asarray(goal) - at)))
            sim.step(1)
        at = np.asarray(goal)
    sim.advance_to(sim.t + 1.0)  # let it settle while held
    sim.release(0)
    sim.advance_to(sim.t + 1.0)
    ends = s.ends()
    assert scene.world.stairs.step_at(*ends[0], 0.01) == 0  # its bottom on the landing
    assert ends[:, 0].max() < 0.0 + 0.01  # all of it on the landing's side of the edge
    assert not sim.rollbacks


def test_a_grab_target_inside_the_world_is_lifted_onto_its_surface():
    """A hand cannot go into the floor or a step: a target below the surface at its x
    is lifted onto it (the app's cursor dragged below the floor); one above it, or
    beside a riser, is left as it is."""
    stairs = """[world.stairs]
top = [0.0, 0.0]
height = 0.05
depth = 0.12
count = 2
landing = 0.3
"""
    scene = standing(x=0.4, height=-0.15, floor="", extra=stairs)
    w = scene.world
    assert w.surface(0.4) == pytest.approx(-0.15)  # the floor beyond the stairs
    assert w.surface(-0.1) == pytest.approx(0.0)  # the landing
    assert w.surface(0.18) == pytest.approx(-0.10)  # the second step
    assert World().surface(0.0) == -np.inf
    sim = Simulation(scene)
    s = sim.slinkies[0]
    sim.grab(0, s.p.N, (0.4, -0.2))
    assert tuple(s.grab_target()) == pytest.approx((0.4, -0.15))
    for target, lifted in (((-0.1, -0.3), (-0.1, 0.0)), ((0.05, -0.06), (0.05, -0.05)),
                           ((0.3, 0.2), (0.3, 0.2))):
        sim.move_grab(0, target)
        assert tuple(s.grab_target()) == pytest.approx(lifted)
    assert distance(w, s.grab_target()[None])[0] >= -1e-12


def test_a_world_never_touched_leaves_the_trajectory_as_without_one():
    """Let go of and falling, collapsing coil on coil, far above a floor and beside a
    staircase it never reaches: only the event-driven step runs, as in a scene without
    a world (the world's scheme changes nothing it does not touch)."""
    base = "[slinky]\npreset = 'plastic'\nC_D = 2e-3\n"
    far = base + """[world]
floor = -50.0
[world.stairs]
top = [3.0, 0.0]
height = 0.1
depth = 0.2
count = 3
"""
    sims = [Simulation(loads(text)) for text in (base, far)]
    assert sims[1].scene.world.solid and not sims[0].scene.world.solid
    for sim in sims:
        sim.let_go(0)
        sim.advance_to(0.5)
    a, b = (chain.end_points(sim.slinkies[0].q, sim.slinkies[0].p.R) for sim in sims)
    assert sims[0].slinkies[0].impacts > 0  # it collapsed on the way
    assert np.abs(a - b).max() < 1e-9
