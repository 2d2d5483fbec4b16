"""The ends on the 3D solver (dynamics/engine3d.py, docs/solver.md "Scenes on the 3D
solver"): a far end held (for ever, or until its release), a hand letting go with both
ends held and taking hold of an end (the catch, re-rooting), checked against the planar
solver on planar scenes, by the catch's conservation law, and turned by `rotate`."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_simulation3d import side_by_side

from slinky3d.errors import SlinkyError
from slinky3d.model import chain3d
from slinky3d.runtime.simulation import Simulation
from slinky3d.scene import loader


def with_far(name: str, far: dict, over=(), contact: bool = True):
    """Scene `name` with its [slinky.far] table changed to `far` (e.g. held for ever,
    which `--set` cannot say: release_time only goes with 'released')."""
    raw = loader.load(name).raw
    slinky = dict(raw["slinky"])
    slinky["far"] = {k: v for k, v in {**slinky["far"], **far}.items() if v is not None}
    if not contact:
        slinky["contact"] = {"enabled": False}
    return loader.from_dict({**raw, "slinky": slinky}, overrides=list(over))


def dropped(release: float, contact: bool = True, over=()):
    """The plastic Slinky hanging, let go at `release` (no floor)."""
    slinky = dict(loader.load("drop-plastic").raw["slinky"])
    slinky["anchor"] = {**slinky["anchor"], "release_time": release}
    if not contact:
        slinky["contact"] = {"enabled": False}
    return loader.from_dict({"slinky": slinky, "duration": 1.0}, overrides=list(over))


def side_by_side_with(sc, script, steps: int) -> float:
    """The largest distance between the two solvers' end points (x, y), every step, each
    given `script`'s commands (step, f(sim) -> '') at the same steps."""
    sims = [Simulation(sc), Simulation(sc, solver="3d")]
    worst = 0.0
    for k in range(steps):
        for sim in sims:
            for at, command in script:
                if at == k:
                    assert command(sim) == ""
            sim.step(1)
        a, b = sims[0].slinkies[0].ends(), sims[1].slinkies[0].ends()
        assert np.abs(b[:, 2]).max() < 1e-12
        worst = max(worst, float(np.abs(b[:, :2] - a).max()))
    assert [s.rollbacks for s in sims] == [0, 0]
    return worst


# -- a far end held ------------------------------------------------------------------
def test_a_far_end_held_until_its_release_agrees_with_the_planar_solver():
    """1Pa let go at 0.5 s instead of 0 (measured 2.0e-5 m over 1.4 s, coil impacts
    on); the U and the arch, let go at 0.3 s, without contact (measured 3.8e-15 and
    1.3e-14 m over 1 s)."""
    assert side_by_side(loader.load("1Pa", ["slinky.far.release_time=0.5"]), 1.4) < 1e-3
    for name in ("u-hands", "posts-arch"):
        sc = with_far(name, {"release_time": 0.3}, contact=False)
        assert side_by_side(sc, 1.0) < 1e-9


def test_both_ends_held_the_slinky_rests_and_the_snapshot_says_so():
    sc = with_far("u-hands", {"condition": "held", "release_time": None})
    sim = Simulation(sc, solver="3d")
    s = sim.slinkies[0]
    start = s.ends().copy()
    sim.step(100)
    assert np.array_equal(s.ends(), start) and s.t == pytest.approx(100 * sc.dt)
    assert sim.snapshot().slinkies[0].far_held
    assert s.drive((0.1, 0.0)) == "both ends are held: let go of one first"
    assert s.take_hold(s.p.N) == "the far end is already held"
    assert s.take_hold(0) == "the anchored end is already held"
    assert s.take_hold(3) == f"point 3 is not an end (0 or {s.p.N})"


@pytest.mark.parametrize("contact", [False, True])
def test_letting_go_with_both_ends_held_hangs_it_from_the_far_end(contact):
    """The U held for ever by both hands; the anchored hand lets go at 0.2 s: the
    Slinky is re-rooted and hangs from the far hand, as the planar solver's (measured
    7.4e-15 m over 1 s without contact; 3.3 mm with the steel Slinky's coil impacts,
    the two contact solvers' cascade: docs/solver.md, "Scenes on the 3D solver")."""
    sc = with_far("u-hands", {"condition": "held", "release_time": None}, contact=contact)
    worst = side_by_side_with(sc, [(50, lambda sim: sim.let_go(0))], 250)
    assert worst < (5e-3 if contact else 1e-9)


# -- taking hold ---------------------------------------------------------------------
def test_taking_hold_of_a_falling_top_is_the_planar_catch():
    """The dropped Slinky's top caught again 0.05 s after the drop (coil impacts on):
    measured 7.3e-8 m from the planar solver over the next 0.55 s."""
    sc = dropped(0.1)
    at = round(0.15 / sc.dt)
    assert side_by_side_with(sc, [(at, lambda sim: sim.take_hold(0, 0))], round(0.6 / sc.dt)) \
        < 1e-6


def test_taking_hold_of_the_bottom_re_roots_it():
    """The dropped Slinky's bottom caught (without contact): it hangs from there, as the
    planar solver's (measured 3.0e-14 m)."""
    sc = dropped(0.0, contact=False)
    n = sc.slinkies[0].params.N
    at = round(0.05 / sc.dt)
    assert side_by_side_with(sc, [(at, lambda sim: sim.take_hold(0, n))], round(0.4 / sc.dt)) \
        < 1e-9


def momenta(s):
    """(kinetic energy, angular momentum about E_1) of a 3D Slinky now."""
    sv = s.solver
    x, frames, v, omega = sv.pose()
    T = chain3d.kinetic_energy(s.p, frames, v, omega, sv.mass)
    return T, chain3d.angular_momentum(s.p, x, frames, v, omega, x, sv.mass)


@pytest.mark.parametrize("point", ["top", "bottom"])
def test_a_catch_keeps_the_angular_momentum_about_the_hand(point):
    """The catch's only outside impulse acts at the caught end: the angular momentum
    about it is kept (to round-off), and the kinetic energy can only fall. A Slinky
    thrown spinning (turned out of its plane), coils locked in its stack."""
    sc = dropped(0.0, over=["rotate=37"])
    sim = Simulation(sc, solver="3d")
    s = sim.slinkies[0]
    s.solver.u[3:] += 0.4 * np.sin(np.arange(3 * s.p.N))  # out of the plane too
    sim.step(round(0.12 / sc.dt))
    assert s.free and s.n_contacts > 0
    if point == "bottom":
        s.solver.reverse()  # the caught end is E_1 (the re-rooting moves nothing)
    T0, L0 = momenta(s)
    s.solver.catch()
    T1, L1 = momenta(s)
    assert np.abs(L1 - L0).max() < 1e-12 * np.abs(L0).max()
    assert T1 < T0
    assert np.abs(s.solver.u[:3]).max() == 0.0
    assert s.solver.openings()[0] > -1e-12  # joint 1 sprung at least to the bound


def test_the_re_rooting_moves_nothing():
    sc = dropped(0.0, over=["rotate=37"])
    sim = Simulation(sc, solver="3d")
    s = sim.slinkies[0]
    s.solver.u[3:] += 0.3 * np.cos(np.arange(3 * s.p.N))
    sim.step(20)
    E, T0 = s.ends(), s.energy()
    s.solver.reverse()
    assert np.abs(s.ends()[::-1] - E).max() < 1e-13
    assert abs(s.energy() - T0) < 1e-12 * abs(T0)
    s.solver.reverse()
    assert np.abs(s.ends() - E).max() < 1e-13


def test_taking_hold_turned_gives_the_same_motion_turned():
    """Frame invariance through `rotate`: the bottom caught, then the U let go with both
    ends held, each turned by 37 degrees (to 1e-9 m)."""
    T = chain3d.turn_about_vertical(math.radians(37.0))
    cases = [(dropped(0.0, contact=False), dropped(0.0, False, ["rotate=37"]),
              lambda s: s.take_hold(s.p.N)),
             (with_far("u-hands", {"condition": "held", "release_time": None}),
              with_far("u-hands", {"condition": "held", "release_time": None},
                       ["rotate=37"]), lambda s: s.let_go())]
    for plain, turned, command in cases:
        a, b = Simulation(plain, solver="3d"), Simulation(turned, solver="3d")
        for sim in (a, b):
            sim.step(10)
            assert command(sim.slinkies[0]) == ""
            sim.step(round(0.3 / plain.dt))
        assert np.abs(a.slinkies[0].ends() @ T.T - b.slinkies[0].ends()).max() < 1e-9


# -- a scripted end ------------------------------------------------------------------
PHASED = ["slinky.anchor.motion.amplitude=[0.006, 0.004]",
          "slinky.anchor.motion.phase=[0.3, 1.9]", "slinky.anchor.motion.frequency_rate=0.0",
          "slinky.anchor.motion.frequency=2.0"]


def test_both_solvers_follow_a_motions_phases():
    """The hanging Slinky's top shaken along x and y at their own phases: the 3D solver
    agrees with the planar one (measured 1.7e-15 m over 1 s), and each keeps the end
    on the path; the planar solver drops z's phase."""
    sc = loader.load("resonance", PHASED)
    motion = sc.slinkies[0].anchor.motion

    def on_path(planar, space):
        for sim in (planar, space):
            s = sim.slinkies[0]
            assert np.abs(s.ends()[0][:2] - motion.path(s.t)[0][:2]).max() < 1e-7
    assert side_by_side(sc, 1.0, on_path) < 1e-4
    with_z = loader.load("resonance", [*PHASED[:1], "slinky.anchor.motion.phase=[0.3, 1.9, 2.2]",
                                       *PHASED[2:]])
    a, b = Simulation(sc), Simulation(with_z)
    a.step(100)
    b.step(100)
    assert a.state_hash() == b.state_hash()


# -- a held end turned: a scripted rotation, a hand's twist --------------------------
ROTATED = ["slinky.anchor.motion.rot_amplitude=0.1"]


def test_a_scripted_rotation_agrees_with_the_planar_solver():
    """`resonance` with its top also turned (0.1 rad, the chirp; coil impacts on): the
    holder is turned step by step (at each step's middle, its spin given to joint 1's
    damper), measured 1.7e-5 m from the planar solver over 2.4 s (6.3, 3.1 and 1.6 um
    at 4, 2 and 1 ms without contact: the planar solver's first-order error, below)."""
    assert side_by_side(loader.load("resonance", ROTATED), 2.4) < 1e-4


def test_a_turned_scene_turns_its_rotation_too():
    """Frame invariance: a rotation about the plane's normal and one about the
    vertical, each in the scene turned by 37 degrees, give the same end points turned
    (to 1e-9 m over 1.5 s)."""
    T = chain3d.turn_about_vertical(math.radians(37.0))
    for axis in ("[0, 0, 1]", "[0, 1, 0]"):
        over = [*ROTATED, f"slinky.anchor.motion.rot_axis={axis}", "solver='3d'"]
        a = Simulation(loader.load("resonance", over))
        b = Simulation(loader.load("resonance", [*over, "rotate=37"]))
        for sim in (a, b):
            sim.step(round(1.5 / sim.h))
        assert np.abs(a.slinkies[0].ends() @ T.T - b.slinkies[0].ends()).max() < 1e-9


def test_a_rotation_axis_is_validated_and_out_of_the_plane_needs_3d():
    sc = loader.load("resonance", [*ROTATED, "slinky.anchor.motion.rot_axis=[0, 2, 0]"])
    assert sc.solver == "3d" and np.array_equal(sc.slinkies[0].anchor.motion.axis(), [0, 1, 0])
    assert loader.load("resonance", [*ROTATED, "slinky.anchor.motion.rot_axis=[0, 0, 3]"]
                       ).solver == "planar"
    for value, words in [("[0, 0, 0]", "must not be [0, 0, 0]"), ("[1, 0]", "3"),
                         ("[0, 'y', 0]", "must be a number")]:
        with pytest.raises(SlinkyError) as e:
            loader.load("resonance", [f"slinky.anchor.motion.rot_axis={value}"])
        assert words in str(e.value) and "rot_axis" in str(e.value)
    with pytest.raises(SlinkyError, match="axis other than z"):
        loader.load("resonance", [*ROTATED, "slinky.anchor.motion.rot_axis=[0, 1, 0]",
                                  "solver='planar'"])


def held_hanging():
    """The plastic Slinky hanging from its clamped top (no floor)."""
    return dropped(1e9)


def test_a_twisted_top_turns_the_hanging_slinky_about_the_vertical():
    """A hand twists the top slowly by 0.5 rad (0.2 rad/s) and holds it: the Slinky
    comes to hang as before, turned by 0.5 rad about the vertical through its top
    (gravity has no horizontal direction): measured 0.46 mm off after 3.5 s."""
    sc = held_hanging()
    sim = Simulation(sc, solver="3d")
    s = sim.slinkies[0]
    E0, H0 = s.ends().copy(), s.solver.H.copy()
    assert sim.twist_base(0, 0.2) == "" and s.driven
    sim.step(round(2.5 / sc.dt))
    assert sim.twist_base(0, 0.0) == ""
    sim.step(round(4.0 / sc.dt))
    beta = s.twist_state[0]
    assert beta == pytest.approx(0.5, abs=1e-12) and not s.driven
    T = chain3d.turn_about_vertical(beta)
    assert np.abs(s.solver.H - T @ H0).max() < 1e-14 and not s.solver.work.spin.any()
    assert np.abs(s.ends() - ((E0 - E0[0]) @ T.T + E0[0])).max() < 1.5e-3
    assert sim.rollbacks == 0


def test_a_twist_turned_with_the_scene_is_the_same_twist():
    T = chain3d.turn_about_vertical(math.radians(37.0))
    a, b = Simulation(held_hanging(), solver="3d"), Simulation(dropped(1e9, over=["rotate=37"]))
    for sim in (a, b):
        assert sim.twist_base(0, -1.5) == ""
        sim.step(60)
        sim.twist_base(0, 0.0)
        sim.step(100)
    assert np.abs(a.slinkies[0].ends() @ T.T - b.slinkies[0].ends()).max() < 1e-9


def test_a_twist_is_refused_in_one_line_where_it_cannot_be():
    from slinky3d.runtime.commands import TwistBase, apply

    planar = Simulation(loader.load("resonance"))
    sim, why = apply(planar, TwistBase(0, 1.0))
    assert "cannot twist" in why and "--solver 3d" in why and "\n" not in why
    space = Simulation(loader.load("resonance"), solver="3d")
    for bad, words in [(math.nan, "not finite"), (100.0, "faster than"), ("1", "not a number"),
                       (True, "not a number")]:
        assert words in apply(space, TwistBase(0, bad))[1]
    assert apply(space, TwistBase(1, 1.0))[1].startswith("twistbase ignored: Slinky 1")
    both = Simulation(with_far("u-hands", {"condition": "held", "release_time": None}),
                      solver="3d")
    assert "both ends are held" in both.twist_base(0, 1.0)
    assert space.let_go(0) == "" and space.twist_base(0, 1.0) == "the anchored end is not held"


def test_a_twist_replays_bit_for_bit_and_takes_over_a_scripted_end():
    """A logged twist (with a drive, on a scripted end turning about the vertical,
    which the hand takes over where it is) replays to the same bits, through a
    session's JSON."""
    from slinky3d.runtime.commands import DriveBase, TwistBase, replay
    from slinky3d.runtime.session import Session, session_from_json, session_json

    sc = loader.load("resonance", [*ROTATED, "slinky.anchor.motion.rot_axis=[0, 1, 0]",
                                   "slinky.anchor.motion.start=0.1"])
    log = [(40, TwistBase(0, 2.0)), (60, DriveBase(0, (0.0, 0.0, 0.1))),
           (90, TwistBase(0, 0.0)), (120, DriveBase(0, (0.0, 0.0)))]
    first = replay(sc, log, 200)
    s = first.slinkies[0]
    assert s.hand and first.rollbacks == 0 and abs(s.twist_state[0]) > 0.1
    back = session_from_json(session_json(Session(scene=sc, log=log, nsteps=200)), "test")
    assert replay(back.scene, back.log, back.nsteps).state_hash() == first.state_hash()


def test_a_motion_stops_where_it_is_and_both_solvers_hold_it_there():
    """`stop`: the top turned by 0.4 rad about the plane's normal, from rest to rest
    (phase -pi/2, stopped half a cycle on at 1 Hz), then held (no contact). The 3D
    solver's own error at 4 ms (against its 0.25 ms run): measured 1.8e-6 m at 1.2 s;
    the two solvers at 0.25 ms: 5.8e-5 m. (The planar solver's turned base converges
    to first order only: 1.9 mm at 4 ms, 0.45 mm at 1 ms, against its 0.25 ms run.)"""
    over = ["slinky.anchor.motion.rot_amplitude=0.2", "slinky.anchor.motion.frequency_rate=0",
            "slinky.anchor.motion.frequency=1.0", "slinky.anchor.motion.phase=-1.5707963267948966",
            "slinky.anchor.motion.start=0.2", "slinky.anchor.motion.stop=0.7",
            "slinky.anchor.motion.amplitude=[0, 0]", "slinky.contact.enabled=false"]
    sc = loader.load("resonance", over)
    m = sc.slinkies[0].anchor.motion
    for t in (0.71, 1.3):
        pose, vel, acc = m.at(t)
        assert np.array_equal(pose, m.at(0.7)[0]) and not vel.any() and not acc.any()
    assert m.at(0.7)[0][2] == pytest.approx(0.4)  # twice the amplitude: rest to rest
    ends = {}
    for solver, h in (("3d", 4e-3), ("3d", 2.5e-4), ("planar", 2.5e-4)):
        sim = Simulation(sc, h=h, solver=solver)
        sim.step(round(1.2 / h))
        ends[solver, h] = sim.slinkies[0].ends()[:, :2]
    assert np.abs(ends["3d", 4e-3] - ends["3d", 2.5e-4]).max() < 1e-5
    assert np.abs(ends["3d", 2.5e-4] - ends["planar", 2.5e-4]).max() < 2e-4
    with pytest.raises(SlinkyError, match="must be >= start"):
        loader.load("resonance", ["slinky.anchor.motion.stop=0.1",
                                  "slinky.anchor.motion.start=0.5"])


def test_the_top_turned_about_the_vertical_and_held():
    """A twist scene's motion: the hanging Slinky's top turned half a turn about the
    vertical (rest to rest) and held; the holder ends turned by pi exactly, and the
    twist, let go, runs down the Slinky: its bottom turns after the top has stopped."""
    over = ["slinky.anchor.motion.rot_amplitude=1.5707963267948966",
            "slinky.anchor.motion.rot_axis=[0, 1, 0]", "slinky.anchor.motion.frequency=0.5",
            "slinky.anchor.motion.frequency_rate=0",
            "slinky.anchor.motion.phase=-1.5707963267948966", "slinky.anchor.motion.start=0.2",
            "slinky.anchor.motion.stop=1.2", "slinky.anchor.motion.amplitude=[0, 0]"]
    sc = loader.load("resonance", over)
    sim = Simulation(sc)
    assert sim.solver == "3d"
    s = sim.slinkies[0]
    H0 = s.solver.H.copy()
    sim.step(round(1.3 / sc.dt))
    assert np.abs(s.solver.H - chain3d.turn_about_vertical(math.pi) @ H0).max() < 1e-12
    bottom = s.ends()[-1].copy()
    sim.step(round(0.5 / sc.dt))
    assert np.abs(s.ends()[-1] - bottom).max() > 1e-3 and sim.rollbacks == 0


# -- the soft contact law ------------------------------------------------------------
def test_the_soft_contact_law_is_the_planar_one():
    """3Pa with the soft law (1 N m/rad, its default; the step in 53 sub-steps): the 3D
    solver's law on the opening's angle is the planar law in a planar state (measured
    8.6e-15 m over 1.4 s; 4S at 20 N m/rad, 1.3e-14 m over 0.6 s); its contacts act
    (the run parts from one without contact); the 'paper' law is refused."""
    sc = loader.load("3Pa", ["slinky.contact.law='soft'"])
    seen = []
    assert side_by_side(sc, 0.5, lambda a, b: seen.append(b.slinkies[0].n_contacts)) < 1e-9
    assert max(seen) > 5
    soft = Simulation(sc, solver="3d")
    loose = Simulation(loader.load("3Pa", ["slinky.contact.enabled=false"]), solver="3d")
    for sim in (soft, loose):
        sim.step(round(0.5 / sc.dt))
    assert np.abs(soft.slinkies[0].ends() - loose.slinkies[0].ends()).max() > 1e-3
    with pytest.raises(SlinkyError, match="'paper' contact law"):
        Simulation(loader.load("3Pa", ["slinky.contact.law='paper'"]), solver="3d")


def test_a_conical_swing_moves_the_top_round_its_circle_on_the_3d_solver():
    """x and z a quarter turn apart (phase per axis): the held top goes round a circle
    of radius a, on the path to 1e-7 m at every step's end, and the bottom swings out
    of the plane too."""
    a = 0.01
    sc = loader.load("resonance", ["slinky.anchor.motion.amplitude=[0.01, 0.0, 0.01]",
                                   "slinky.anchor.motion.phase=[0.0, 0.0, 1.5707963267948966]",
                                   "slinky.anchor.motion.frequency_rate=0",
                                   "slinky.anchor.motion.frequency=1.0",
                                   "slinky.anchor.motion.start=0.0"])
    sim = Simulation(sc)
    assert sim.solver == "3d"
    s = sim.slinkies[0]
    E0 = s.ends()[0].copy()
    centre = E0 + np.array([0.0, 0.0, -a])
    for _ in range(100):
        sim.step(3)
        E1 = s.ends()[0]
        assert abs(np.hypot(*(E1 - centre)[[0, 2]]) - a) < 1e-7 and abs(E1[1] - E0[1]) < 1e-12
    assert abs(s.ends()[-1][2]) > 1e-3 and sim.rollbacks == 0


def hand_power(s):
    """(the hand's power into a twisted Slinky now, the holder's spring energy now less
    the solver's): joint 1's spring moment on half hoop 1 (world) against the holder
    turning at the twist's rate, the holder where the hand has it at this instant (the
    solver's is set at each step's middle)."""
    sv = s.solver
    angle, rate, _ = s.twist_state
    H = chain3d.turn_about_vertical(angle) @ s.holder
    R1 = sv.pose()[1][0]
    phi = chain3d.log_map((H @ chain3d.FLIP).T @ R1)
    moment = R1 @ (-chain3d.right_jacobian_inv(phi).T @ (sv.K * phi))
    spring = 0.5 * float(np.sum(sv.K * phi * phi) - np.sum(sv.K * sv.q[3:6] ** 2))
    return float(moment @ (rate * chain3d.UP)), spring


def test_a_twist_puts_in_the_hands_work():
    """Energy account: undamped, without contact, the hanging Slinky's top twisted
    toward 3 rad/s and braked: its mechanical energy grows by the hand's work, the
    integral of joint 1's moment times the holder's rate (trapezoid over the steps),
    to 8.8e-5 relative at 2 ms and 2.2e-5 at 1 ms (measured): second order."""
    gap = {}
    for h in (2e-3, 1e-3):
        sim = Simulation(dropped(1e9, contact=False, over=["slinky.C_D=0"]), h=h,
                         solver="3d")
        s = sim.slinkies[0]
        e0, work = s.energy(), 0.0
        assert s.twist(3.0) == ""
        p0, _ = hand_power(s)
        for k in range(round(0.4 / h)):
            if k == round(0.25 / h):
                s.twist(0.0)
            s.advance(1)
            p1, spring = hand_power(s)
            work += 0.5 * h * (p0 + p1)
            p0 = p1
        gap[h] = abs(s.energy() + spring - e0 - work) / work
    assert gap[1e-3] < 5e-5 and gap[2e-3] > 3 * gap[1e-3]


def test_the_holders_left_open_are_the_planar_solvers():
    """Where a holder let go of an end (the viewer draws it there, open): the U's far
    hand at its release, the anchored hand let go of, then a catch clears them; as the
    planar solver's, in 3D (z = 0 here) with the end half hoop's bulge."""
    sc = with_far("u-hands", {"release_time": 0.2}, contact=False)
    sims = [Simulation(sc), Simulation(sc, solver="3d")]
    for sim in sims:
        assert sim.snapshot().slinkies[0].far_held and sim.snapshot().slinkies[0].left == ()
        sim.step(60)
        assert sim.let_go(0) == ""
        sim.step(5)
    a, b = (sim.snapshot().slinkies[0] for sim in sims)
    assert not b.far_held and len(a.left) == len(b.left) == 2
    for x, y in zip(a.left, b.left, strict=True):
        assert x.t == y.t and x.sign == y.sign and np.abs(y.points[:, 2]).max() == 0.0
        assert np.abs(y.points[:, :2] - x.points).max() < 1e-12
        assert np.abs(y.bulge - [0.0, 0.0, y.sign]).max() < 1e-12
    for sim in sims:
        assert sim.take_hold(0, 0) == ""
        assert sim.snapshot().slinkies[0].left == ()


# -- a scripted end let go (a toss) ------------------------------------------------------
def test_a_scripted_end_let_go_flies_off_with_the_hands_momentum():
    """The hanging Slinky's top swung towards x, up and towards the viewer, from rest, and
    let go a quarter cycle on, at its fastest (`release_time` with a scripted end, the
    3D solver's; the planar solver refuses the scene in one line): held before, free
    after, it flies off the way the hand went, and in flight its momentum keeps its
    horizontal part and gains -M g t, to the impacts' placing inside a step (undamped)."""
    sets = ["slinky.anchor.motion.amplitude=[0.2, 0.1, 0.15]",
            "slinky.anchor.motion.phase=-1.5707963267948966",
            "slinky.anchor.motion.frequency=1.0", "slinky.anchor.motion.frequency_rate=0",
            "slinky.anchor.motion.start=0.1", "slinky.anchor.release_time=0.35",
            "slinky.C_D=0"]
    sc = loader.load("resonance", sets)
    assert sc.needs_3d and sc.solver == "3d"
    with pytest.raises(SlinkyError, match="scripted end let go"):
        Simulation(sc, solver="planar")
    sim = Simulation(sc)
    s = sim.slinkies[0]
    sim.advance_to(0.34)
    assert not s.free
    sim.advance_to(0.36)
    assert s.free and s.left and abs(s.left[-1].t - 0.35) < 1e-12

    def momentum():
        x, frames, v, omega = s.solver.pose()
        return chain3d.linear_momentum(s.p, frames, v, omega, "ring")

    P0, t0 = momentum(), sim.t
    assert P0[0] > 0 and P0[2] > 0  # off the way the hand went
    for k in range(1, 11):
        sim.advance_to(t0 + 0.03 * k)
        expect = P0 - s.p.mass * s.p.g * (sim.t - t0) * chain3d.UP
        assert np.abs(momentum() - expect).max() < 2e-5 * np.linalg.norm(P0)
    assert sim.rollbacks == 0


# -- a Slinky moving at the start ([slinky.start]) ------------------------------------------
START = ["slinky.anchor.condition='free'", "slinky.shape.kind='angles'",
         "slinky.shape.theta=0.5", "slinky.anchor.orientation=1.5707963267948966",
         "world.floor=-10"]


def test_a_slinky_set_moving_starts_as_one_rigid_body():
    """[slinky.start] velocity and spin: at t = 0 the whole Slinky moves rigidly, its
    momentum M V and every half hoop turning at the spin (turned with `rotate`); then in
    flight it gains -M g t. A held Slinky cannot start moving (one line), and the planar
    solver refuses it (it moves out of the plane)."""
    V, W = np.array([0.2, 0.5, -0.3]), np.array([1.0, -2.0, 3.0])
    sets = [*START, f"slinky.start.velocity={V.tolist()}", f"slinky.start.spin={W.tolist()}"]
    for degrees in (0.0, 37.0):
        sc = loader.load("hanging-plastic", [*sets, f"rotate={degrees}"])
        assert sc.needs_3d and sc.solver == "3d"
        sim = Simulation(sc)
        s = sim.slinkies[0]
        T = chain3d.turn_about_vertical(math.radians(degrees))
        x, frames, v, omega = s.solver.pose()
        P0 = chain3d.linear_momentum(s.p, frames, v, omega, "ring")
        assert np.allclose(P0, s.p.mass * (T @ V), rtol=0, atol=1e-12)
        assert np.allclose(omega, T @ W, rtol=0, atol=1e-12)
        sim.step(25)
        x, frames, v, omega = s.solver.pose()
        P = chain3d.linear_momentum(s.p, frames, v, omega, "ring")
        expect = P0 - s.p.mass * s.p.g * sim.t * chain3d.UP
        assert np.abs(P - expect).max() < 1e-3 * np.linalg.norm(P0) and sim.rollbacks == 0
    with pytest.raises(SlinkyError, match="moving at the start"):
        Simulation(loader.load("hanging-plastic", sets), solver="planar")
    with pytest.raises(SlinkyError, match="cannot start moving"):
        loader.load("hanging-plastic", ["slinky.start.velocity=[0, 0, 1]"])
