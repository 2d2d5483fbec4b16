"""Scenes on the 3D solver (`Simulation(scene, solver="3d")`, dynamics/engine3d.py):
the planar scenes it can run agree with the planar solver, its snapshots are 3D, the
divergence guard and the state hash work on it, the ends' conditions and the hand's
commands, and what it cannot run yet is one line naming it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from slinky3d import cli
from slinky3d.dynamics.solver3d import Solver3DError
from slinky3d.errors import SlinkyError
from slinky3d.runtime import commands
from slinky3d.runtime.simulation import Simulation
from slinky3d.scene import loader

CHUNK = 25


def side_by_side(sc, seconds: float, each=None) -> float:
    """The largest distance between the two solvers' end points (x, y) over `seconds`,
    checked every CHUNK steps; the 3D one's z must stay 0."""
    planar, space = Simulation(sc), Simulation(sc, solver="3d")
    worst = 0.0
    for _ in range(round(seconds / sc.dt / CHUNK)):
        planar.step(CHUNK)
        space.step(CHUNK)
        for a, b in zip(planar.slinkies, space.slinkies, strict=True):
            E = b.ends()
            assert E.shape == (a.p.N + 1, 3) and np.abs(E[:, 2]).max() < 1e-12
            worst = max(worst, float(np.abs(E[:, :2] - a.ends()).max()))
        if each is not None:
            each(planar, space)
    assert space.rollbacks == 0 and planar.rollbacks == 0
    return worst


@pytest.mark.parametrize("name", ["1Pb", "3Pb"])
def test_the_paper_scenes_without_impacts_agree_with_the_planar_solver(name):
    # measured: 6.9e-15 m (1Pb) and 1.7e-15 m (3Pb) over the paper's 1.4 s
    assert side_by_side(loader.load(name), 1.4) < 1e-9


@pytest.mark.parametrize("name", ["1Pa", "2P", "3Pa", "side-1Pa-1Pb"])
def test_the_paper_scenes_with_impacts_agree_to_a_millimetre(name):
    # measured: 2.0e-5 m (1Pa), 2.6e-11 m (2P), 1.5e-4 m (3Pa) over 1.4 s
    assert side_by_side(loader.load(name), 1.4) < 1e-3


@pytest.mark.parametrize("name, seconds", [("resonance", 2.4), ("waves", 1.4)])
def test_a_scripted_anchor_follows_its_motion_as_the_planar_one(name, seconds):
    """The hanging Slinky's top shaken (its coils resting on each other at the bottom):
    measured 1.2e-7 m (resonance, 1.4 s of its motion) and 3.1e-6 m (waves, 0.9 s)."""
    sc = loader.load(name)
    motion = sc.slinkies[0].anchor.motion

    def on_path(planar, space):
        s = space.slinkies[0]
        pos, _, _ = motion.path(s.t)
        # put on the path at each step's start, the step follows it to third order
        assert np.abs(s.ends()[0] - pos).max() < 1e-7
    assert side_by_side(sc, seconds, on_path) < 1e-4


def dropped(release: float):
    """The plastic Slinky hanging, let go at `release` (no floor)."""
    text = loader.load("drop-plastic").raw
    slinky = dict(text["slinky"])
    slinky["anchor"] = {**slinky["anchor"], "release_time": release}
    return loader.from_dict({"slinky": slinky, "duration": 1.0})


def test_a_released_anchor_lets_go_at_its_time_inside_a_step():
    """Until the collapse front reaches the bottom coils the two solvers agree (the
    release falls inside a step: split there); then the 3D one's stack shuts whole and
    its centre of mass stays with the planar one's (within 1 mm: where the front meets
    the bottom coils, many shut at once and the two contact solvers part by ~8 mm
    at the far end; docs/solver.md, "Scenes on the 3D solver")."""
    release = 0.1013
    sc = dropped(release)
    p = sc.slinkies[0].params
    planar, space = Simulation(sc), Simulation(sc, solver="3d")
    s = space.slinkies[0]
    steps = round(0.2 / sc.dt)  # the front needs ~0.175 s to reach the bottom
    planar.step(steps)
    space.step(steps)
    assert s.free and planar.slinkies[0].free
    assert np.abs(s.ends()[:, :2] - planar.slinkies[0].ends()).max() < 1e-9

    def com(sim):
        E = sim.slinkies[0].ends()[:, :2]
        return 0.5 * (E[1:] + E[:-1]).mean(axis=0)  # the half hoops' centres

    planar.step(round(0.3 / sc.dt))
    space.step(round(0.3 / sc.dt))
    # shut, joint 1 unsprung: locked, or touching with nothing to lock (in free fall a
    # shut stack's contacts carry no force)
    assert space.rollbacks == 0 and s.n_contacts >= p.N - 3
    assert np.all(s.solver.openings()[1:] < 1e-9)
    assert np.abs(com(space) - com(planar)).max() < 1e-3


def test_snapshots_are_three_dimensional():
    sim = Simulation(loader.load("3Pa"), solver="3d")
    sim.step(50)
    (sl,) = sim.snapshot().slinkies
    N = sim.slinkies[0].p.N
    assert sl.ends.shape == (N + 1, 3) and sl.bulge is not None and sl.bulge.shape == (N, 3)
    assert np.allclose(np.linalg.norm(sl.bulge, axis=1), 1.0)
    assert sl.anchor_held and sl.energy is not None and not sl.asleep
    assert sim.snapshot().t == sim.t


def test_the_guard_rolls_back_a_nan():
    sim = Simulation(loader.load("3Pa"), solver="3d")
    sim.step(20)
    good = sim.slinkies[0].ends()
    sim.slinkies[0].qd[7] = math.nan
    sim.step(1)
    s = sim.slinkies[0]
    assert sim.rollbacks == 1 and "rolled back" in sim.status
    assert s.k == 21 and np.all(np.isfinite(s.q)) and np.all(s.qd == 0.0)
    assert np.array_equal(s.ends(), good)  # the last good state, at rest
    sim.step(10)
    assert np.all(np.isfinite(s.ends())) and sim.rollbacks == 1


def test_runs_are_deterministic_however_batched():
    sc = loader.load("3Pa")
    a, b = Simulation(sc, solver="3d"), Simulation(sc, solver="3d")
    a.step(120)
    for n in (1, 7, 40, 72):
        b.step(n)
    assert a.state_hash() == b.state_hash()
    assert a.state_hash() != Simulation(sc).state_hash()
    a.reset()
    assert a.state_hash() == Simulation(sc, solver="3d").state_hash()


def test_commands_on_the_3d_solver():
    """A hand moves the held end along z (planar: z is dropped), lets go of it, takes
    hold of it again (tests/runtime/test_ends3d.py)."""
    sc = loader.load("resonance")
    sim = Simulation(sc, solver="3d")
    assert sim.drive_base(0, (0.0, 0.0, 0.2)) == ""
    sim.step(50)
    assert sim.drive_base(0, (0.0, 0.0)) == ""
    sim.step(50)
    s = sim.slinkies[0]
    E1 = s.ends()[0]
    assert E1[2] > 0.03 and abs(E1[0]) < 1e-12 and np.abs(s.qd[:3]).max() < 1e-12
    assert sim.take_hold(0, 0) == "the anchored end is already held"
    assert sim.let_go(0) == "" and s.free
    sim.step(25)
    assert s.ends()[0][1] < -1e-3  # falling
    assert sim.let_go(0) == "no end is held"
    assert sim.take_hold(0, 0) == "" and not s.free and np.all(s.qd[:3] == 0.0)
    planar = Simulation(sc)
    assert planar.drive_base(0, (0.0, 0.0, 0.2)) == ""  # z dropped: it stays in the plane
    assert np.array_equal(planar.slinkies[0].drive_wanted, [0.0, 0.0])


@pytest.mark.parametrize("scene, override, words", [
    ("side-contact-laws", [], "'paper' contact law"),
])
def test_what_it_cannot_run_is_one_line(scene, override, words):
    with pytest.raises(Solver3DError) as e:
        Simulation(loader.load(scene, override), solver="3d")
    text = str(e.value)
    assert words in text and "--solver planar" in text and "\n" not in text


def test_the_command_line_runs_a_scene_on_the_3d_solver(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc = cli.main(["simulate", "3Pa", "--solver", "3d", "--duration", "0.1"])
    out, err = capsys.readouterr()
    assert rc == 0 and "(3d" in out
    with np.load("3Pa.npz") as z:
        assert z["ends"].shape == (11, 76, 3) and '"solver": "3d"' in str(z["meta"])
    assert cli.main(["simulate", "side-contact-laws", "--solver", "3d"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "contact law" in err and "--solver planar" in err
    args = cli.build_parser().parse_args(["run", "3Pa", "--solver", "3d"])
    cli.engine_overrides(args)
    assert loader.load(args.scene, args.set).solver == "3d"
    with pytest.raises(SlinkyError):
        cli.build_parser().parse_args(["run", "3Pa", "--solver", "reference"])


def test_the_guards_compiled_energy_is_chain3ds():
    """engine3d.guard_figures (one compiled pass) against the solver's chain3d energy,
    held and let go, turned; a NaN anywhere reads as inf."""
    sim = Simulation(loader.load("3Pa", ["rotate=37"]))
    sim.step(60)
    s = sim.slinkies[0]
    for _ in range(2):
        e, fastest = s.guard_figures()
        scale = s.p.mass * s.p.g * 2 * s.p.R * s.p.N
        assert abs(e - s.energy() - s.losses()[1]) < 1e-12 * scale
        assert fastest == np.abs(s.qd).max() > 0.1
        assert s.let_go() == "" or s.free
        sim.step(30)
    s.qd[4] = math.inf
    assert s.guard_figures() == (math.inf, math.inf)


def test_a_session_on_the_3d_solver_replays_bit_for_bit():
    """The solver and the turn travel with the scene's text (a session's), and a logged
    run of hand commands (3D velocities among them) replays to the same bits."""
    from slinky3d.runtime.session import Session, session_from_json, session_json

    sc = loader.load("resonance", ["solver='3d'", "rotate=37"])
    log = [(10, commands.DriveBase(0, (0.1, 0.0, 0.3))), (60, commands.DriveBase(0, (0, 0))),
           (90, commands.Grab(0, 20)), (120, commands.LetGo(0))]
    first = commands.replay(sc, log, 200)
    assert first.solver == "3d" and first.slinkies[0].free
    assert abs(first.slinkies[0].ends()[0][2]) > 1e-3  # the hand moved it along z
    back = session_from_json(session_json(Session(scene=sc, log=log, nsteps=200)), "test")
    assert back.scene.solver == "3d" and back.scene.rotate == 37.0
    again = commands.replay(back.scene, back.log, back.nsteps)
    assert again.state_hash() == first.state_hash()


def test_a_grab_in_the_plane_is_the_planar_grab_as_the_step_shrinks():
    """3Pb's far end grabbed at 0.1 s and pulled to a point in the plane: over the next
    0.2 s the two solvers' end points meet as the step shrinks (the grab's sudden force
    costs each its own step error: measured 1.6 mm planar and 2.1 mm 3D at 4 ms (the
    3D grab implicit), from their own 0.25 ms runs, which are 0.08 mm apart; the two
    at 4 ms 0.62 mm)."""
    sc = loader.load("3Pb")
    out = {}
    for h in (4e-3, 2.5e-4):
        ends = []
        for solver in ("planar", "3d"):
            sim = Simulation(sc, h=h, solver=solver)
            sim.step(round(0.1 / h))
            sim.grab(0, 75, (-0.05, -0.25))
            sim.step(round(0.2 / h))
            assert sim.rollbacks == 0
            ends.append(sim.slinkies[0].ends()[:, :2])
        out[h] = float(np.abs(ends[0] - ends[1]).max())
    assert out[2.5e-4] < 2e-4 and out[4e-3] < 5e-3


def test_a_grab_pulls_out_of_the_plane_and_lets_go():
    """The hanging Slinky's bottom end pulled 10 cm towards the viewer: it goes there and
    hangs from the grab, sagging by less than the grab's 5 mm under the whole weight;
    the snapshot shows the grab; a roll-back lets go of it; released, it swings back."""
    sc = loader.load("resonance")
    sim = Simulation(sc, solver="3d")
    s = sim.slinkies[0]
    N = s.p.N
    bottom = s.ends()[N].copy()
    target = bottom + np.array([0.0, 0.05, 0.1])
    sim, why = commands.apply(sim, commands.Grab(0, N, tuple(target)))
    assert why == "" and s.grabbed == N
    sim.step(round(1.5 / sc.dt))
    E = s.ends()[N]
    assert sim.rollbacks == 0 and np.abs(E - target).max() < 5e-3
    snap = sim.snapshot().slinkies[0]
    assert np.array_equal(snap.grab, target) and np.array_equal(snap.grab_point, E)
    state = s.state()
    sim.move_grab(0, (0.0, -0.3))  # (x, y): z = 0
    sim.step(5)
    assert s.grab_target()[2] == 0.0
    s.restore(state)
    assert np.array_equal(s.grab_target(), target)
    sim.release(0)
    assert s.grabbed is None and sim.snapshot().slinkies[0].grab is None
    sim.step(50)
    assert s.ends()[N][2] < E[2] - 0.01  # swinging back
    sim.grab(0, N)
    s.qd[9] = math.nan
    sim.step(1)
    assert sim.rollbacks == 1 and s.grabbed is None  # the roll-back let go


def test_a_scene_that_names_3d_still_runs_planar_when_asked():
    """`solver = "3d"` is the scene's choice, not a need: the planar solver and the
    planar reference integrator still run it; a turned scene they refuse."""
    sc = loader.load("3Pb", ["solver='3d'"])
    assert Simulation(sc).solver == "3d" and not sc.needs_3d
    planar = Simulation(sc, solver="planar")
    planar.step(10)
    assert planar.slinkies[0].ends().shape == (76, 2)
    turned = loader.load("3Pb", ["rotate=10"])
    assert turned.needs_3d
    with pytest.raises(SlinkyError, match="planar solver cannot run"):
        Simulation(turned, solver="planar")
    from slinky3d.output.recording import record
    with pytest.raises(SlinkyError, match="reference integrator is planar"):
        record(turned, 0.0, solver="reference")
    data, stats = record(sc, 0.0, solver="reference")
    assert stats["solver"] == "reference" and data["ends"].shape[-1] in (2, 3)


@pytest.mark.parametrize("ready", [True, False])
def test_warming_the_3d_kernels_says_so_only_when_they_compile(monkeypatch, ready):
    from slinky3d.dynamics import engine3d
    from slinky3d.dynamics.solver import COMPILING

    said: list[str] = []
    monkeypatch.setattr(engine3d, "kernels_ready", lambda: ready)
    engine3d.warm_up(said.append)
    assert said == ([] if ready else [COMPILING])


def flight_momentum_error(h: float) -> tuple[float, bool]:
    """The throw below at step h: the largest departure of the momentum in 0.2 s of
    flight from P0 - M g t, relative to |P0|, and whether coils touched in flight."""
    from slinky3d.dynamics.engine3d import MASS
    from slinky3d.model import chain3d

    sc = loader.load("resonance", ["slinky.C_D=0"])
    sim = Simulation(sc, h=h, solver="3d")
    s = sim.slinkies[0]
    top = s.ends()[0].copy()
    sim.grab(0, 0)
    assert sim.let_go(0) == ""
    sim.advance_to(0.3)
    for k in range(1, 25):  # 1 m/s towards the viewer, 0.5 m/s along x, over 0.6 s
        sim.move_grab(0, tuple(top + np.array([0.0125, 0.0, 0.025]) * k))
        sim.advance_to(0.3 + 0.025 * k)
    sim.release(0)

    def momentum():
        x, frames, v, omega = s.solver.pose()
        return chain3d.linear_momentum(s.p, frames, v, omega, MASS)

    P0, t0 = momentum(), sim.t
    assert P0[2] > 0.2 * s.p.mass * 1.0 and P0[0] > 0.0  # thrown out of the plane
    worst, touching = 0.0, 0
    for k in range(1, 11):
        sim.advance_to(t0 + 0.02 * k)
        touching = max(touching, s.n_contacts)
        expect = P0 - s.p.mass * s.p.g * (sim.t - t0) * chain3d.UP
        worst = max(worst, float(np.abs(momentum() - expect).max()))
    assert sim.rollbacks == 0 and s.grabbed is None
    return worst / float(np.linalg.norm(P0)), touching > 0


def test_a_throw_keeps_its_3d_velocity():
    """The app's throw on the 3D solver: the top taken by the hand, the scene's hold let
    go, the hand flicked towards the viewer and along x, let go. In flight, coils
    shutting on each other, the Slinky's momentum keeps its horizontal part, out of the
    plane as in it, and gains -M g t in the vertical: the joints' forces and the coil
    impacts are internal. In the chain's relative coordinates the step keeps it to its
    order (and the impacts' placing inside a step): within 1e-5 (h / 1 ms)^2 of it
    (measured 2.7e-5 at 2 ms, 1.3e-6 at 1 ms; the departure depends on how the hand's
    flick left the Slinky, and moved 2.5e-6 -> 2.7e-5 at 2 ms when the grab's step
    changed). Without impacts or dampers, the 3D solver's tests show round-off."""
    for h in (2e-3, 1e-3):
        departure, touched = flight_momentum_error(h)
        assert touched and departure < 1e-5 * (h / 1e-3) ** 2
