"""The 3D model and its dense reference integrator: the planar model as its restriction,
and the conservation laws of a 3D Slinky (docs/model.md section 12)."""

import math

import numpy as np
import pytest
from pieces3d import piece, planar_pose, pose_3d, stretched_swing

from slinky3d.model import chain, chain3d
from slinky3d.model.params import preset
from slinky3d.reference import integrator, three_d
from slinky3d.scene.spec import ContactSpec, EndSpec, SlinkySpec


def test_planar_pose_is_the_planar_model():
    """Geometry, joints and energies of a planar pose equal the planar model's: joint k's
    rotation is theta_k about b, the arc's centroid sits at the bar's midpoint in the
    plane, and its inertia about b is the paper's I."""
    p = piece(3)
    rng = np.random.default_rng(4)
    q = planar_pose(p, 4)
    qd = rng.normal(size=q.size)
    x, frames, holder = chain3d.from_planar(q, p.R)
    phi = chain3d.joint_rotations(frames, holder)
    assert np.abs(phi[:, [0, 2]]).max() < 1e-12
    assert np.abs(phi[:, 1] - q[chain.BASE:]).max() < 1e-12
    E = chain3d.end_points(x, frames, p.R)
    assert np.abs(E[:, :2] - chain.end_points(q, p.R)).max() < 1e-15
    assert np.abs(E[:, 2]).max() == 0.0
    c = chain3d.centroids(x, frames, p.R)
    assert np.abs(c[:, :2] - chain.centres(q, p.R)).max() < 1e-15
    assert np.abs(chain3d.inertia_centre(p)[1, 1] - p.I) < 1e-18
    # angular velocities about z at the composite rates; the base's velocity as given
    omega = np.zeros((p.N, 3))
    omega[:, 2] = chain.composite_rates(q, qd)
    v = np.array([qd[0], qd[1], 0.0])
    T3 = chain3d.kinetic_energy(p, frames, v, omega)
    assert T3 == pytest.approx(chain.kinetic_energy(p, q, qd), rel=1e-13)
    V3 = chain3d.potential_energy(p, x, frames, holder)
    assert V3 == pytest.approx(chain.potential_energy(p, q), rel=1e-13)


def _both_references(p, q, times, contact: ContactSpec, contact3d: bool):
    """The planar and the 3D reference (ring mass model, clamped at the planar pose q's
    anchor) sampled at `times`: the 3D one's end points the planar one's to 1e-6 m and
    in the plane at every sample. Returns the planar samples and run statistics, the 3D
    reference, and how far the end points moved."""
    spec = SlinkySpec(params=p, anchor=EndSpec("held", math.inf, (0.0, 0.0), q[2]),
                      far=EndSpec("free", 0.0), q0=q, contact=contact)
    planar, stats = integrator.simulate(spec, times)
    x, frames, holder = chain3d.from_planar(q, p.R)
    ref = three_d.Reference3D(p, three_d.State3D(x, frames, np.zeros(3), np.zeros((p.N, 3))),
                              "clamped", holder, mass="ring", contact=contact3d)
    spatial = three_d.simulate(ref, times)
    moved = 0.0
    for (_, qp, _, _), s in zip(planar, spatial, strict=True):
        E2 = chain.end_points(qp, p.R)
        E3 = chain3d.end_points(s.x, s.frames, p.R)
        assert np.abs(E3[:, :2] - E2).max() < 1e-6
        assert np.abs(E3[:, 2]).max() < 1e-9
        moved = max(moved, np.abs(E2 - chain.end_points(q, p.R)).max())
    return planar, stats, ref, moved


def test_planar_swing_agrees_with_the_planar_reference():
    """A damped planar swing without contacts: the 3D reference with the paper's mass
    model (the ring) gives the planar reference's end points (to 1e-6 m) and stays in
    the plane."""
    p = piece(C_D=2e-4)
    *_, moved = _both_references(p, planar_pose(p, 1), np.linspace(0.0, 0.2, 5),
                                 ContactSpec(enabled=False), contact3d=False)
    assert moved > 0.01  # it swings


def test_planar_impacts_agree_with_the_planar_reference():
    """Coil contact in the plane: a 2-coil piece falling shut from open joints, its coils
    hitting one after another, under the ring mass model. The 3D reference (three-axis
    locks, hits as events) gives the planar reference's end points (theta >= theta_min,
    its LCP) to 1e-6 m and stays in the plane."""
    p = piece(C_D=2e-4)
    planar, stats, ref, moved = _both_references(p, planar_pose(p, 1),
                                                 np.linspace(0.0, 0.2, 11),
                                                 ContactSpec(law="rigid"), contact3d=True)
    assert stats["impacts"] >= 3 and ref.events >= 3  # hits, located by both
    assert np.array_equal(ref.locked, planar[-1][3][chain.BASE:])
    assert moved > 0.01


def test_contact_takes_energy_only_at_impacts():
    """Undamped, a piece springing shut while it swings and spins out of the plane on a
    pivot: the energy plus what the impulses took stays constant (to the integrator's
    tolerance), the energy never rises, and no coil goes inside the next."""
    p, x, frames, _, omega = stretched_swing(3, 6.0, 0.3, 2.0, C_D=0.0)
    ref = three_d.Reference3D(p, three_d.State3D(x, frames, np.zeros(3), omega), "pivot",
                              contact=True)
    E0 = ref.energy()
    account, energy = [], []
    for t in np.linspace(0.02, 0.3, 15):
        ref.advance_to(t)
        energy.append(ref.energy())
        account.append(energy[-1] + ref.impact_loss)
        assert ref.openings(ref.s.frames).min() > -three_d.TOUCH
    assert ref.impacts >= 1 and ref.impact_loss > 1e-3 * abs(E0)
    assert ref.passed == 0
    assert np.abs(np.array(account) - E0).max() < 1e-8 * abs(E0)
    assert np.all(np.diff(energy) <= 1e-9 * abs(E0))
    assert energy[0] < E0


def test_closed_coils_stay_closed_and_push():
    """Every joint locked in a 3D swing with contact sits at its bound, and its contact
    moment pushes (c >= 0, the model's sign) at every sample."""
    p, x, frames, holder, omega = stretched_swing(3, 4.0, 0.3, 1.0)
    ref = three_d.Reference3D(p, three_d.State3D(x, frames, np.zeros(3), omega), "clamped",
                              holder, contact=True)
    seen = 0
    for t in np.linspace(0.01, 0.2, 20):
        ref.advance_to(t)
        s = ref.s
        M, rhs = ref.equations(s.x, s.frames, s.v, s.omega)
        _, lam = ref._constrained(M, rhs, ref.locked, None)
        c = ref.contact_moments(s.frames, lam)
        opening = ref.openings(s.frames)
        assert np.abs(opening[ref.locked]).max(initial=0.0) < three_d.TOUCH
        assert opening.min() > -three_d.TOUCH
        assert np.all(c[ref.locked] >= -three_d.PULL * np.abs(c).max())
        seen += int(ref.locked.sum())
    assert seen > 0 and ref.events >= 4


def test_the_arc_leaves_the_plane():
    """With the arc's true centroid, 2R/pi off the diameter along b, gravity has a moment
    about the coil's axis: a planar start does not stay planar (docs/model.md section 12)."""
    p = piece(soft=10)
    x, frames, holder = chain3d.from_planar(planar_pose(p, 1), p.R)
    ref = three_d.Reference3D(p, three_d.State3D(x, frames, np.zeros(3), np.zeros((p.N, 3))),
                              "clamped", holder)
    end = three_d.simulate(ref, np.array([0.0, 0.05]))[-1]
    assert np.abs(chain3d.end_points(end.x, end.frames, p.R)[:, 2]).max() > 1e-3


def test_energy_conserved_in_a_3d_swing():
    """Undamped, no contacts, anchor clamped: the mechanical energy of a swing out of the
    plane (opening, torsion and twist all moving) is conserved."""
    p = piece(soft=10)
    x, frames, holder, omega = pose_3d(p, 2)
    ref = three_d.Reference3D(p, three_d.State3D(x, frames, np.zeros(3), omega), "clamped",
                              holder)
    states = three_d.simulate(ref, np.linspace(0.0, 0.1, 3))
    E = np.array([ref.energy(s) for s in states])
    T = [chain3d.kinetic_energy(p, s.frames, s.v, s.omega) for s in states]
    phi = np.array([chain3d.joint_rotations(s.frames, holder) for s in states])
    assert np.ptp(phi, axis=0).min() > 0.01  # every joint turns about every axis
    assert max(T) > 0.1 * abs(E[0])
    assert np.abs(E - E[0]).max() < 1e-8 * max(T)


def test_damping_only_takes_energy():
    p = piece(C_D=2e-5, soft=10)
    x, frames, holder, omega = pose_3d(p, 3)
    ref = three_d.Reference3D(p, three_d.State3D(x, frames, np.zeros(3), omega), "clamped",
                              holder)
    E = np.array([ref.energy(s) for s in three_d.simulate(ref, np.linspace(0.0, 0.05, 6))])
    assert np.all(np.diff(E) < 0)


def test_free_slinky_in_flight():
    """Thrown spinning: horizontal momentum constant, vertical momentum gains -M g t,
    angular momentum about the centre of mass conserved, energy conserved."""
    p = piece(soft=10)
    x, frames, _, omega = pose_3d(p, 5)
    v = np.array([0.7, 1.5, -0.4])
    ref = three_d.Reference3D(p, three_d.State3D(x, frames, v, omega), "free")
    times = np.linspace(0.0, 0.1, 3)
    states = three_d.simulate(ref, times)
    P0 = chain3d.linear_momentum(p, frames, v, omega)
    L0 = chain3d.angular_momentum(p, x, frames, v, omega, chain3d.centre_of_mass(p, x, frames))
    E0 = ref.energy(states[0])
    scale_P = np.linalg.norm(P0)
    for t, s in zip(times, states, strict=True):
        P = chain3d.linear_momentum(p, s.frames, s.v, s.omega)
        assert np.abs(P - (P0 - p.mass * p.g * t * chain3d.UP)).max() < 1e-8 * scale_P
        com = chain3d.centre_of_mass(p, s.x, s.frames)
        L = chain3d.angular_momentum(p, s.x, s.frames, s.v, s.omega, com)
        assert np.linalg.norm(L - L0) < 1e-8 * np.linalg.norm(L0)
        assert abs(ref.energy(s) - E0) < 1e-8 * abs(E0)


def test_pivot_conserves_angular_momentum_about_the_vertical():
    """Top held on a string (free to turn about E_1): gravity and the pivot's force have
    no moment about the vertical through E_1."""
    p = piece(soft=10)
    x, frames, _, omega = pose_3d(p, 6)
    ref = three_d.Reference3D(p, three_d.State3D(x, frames, np.zeros(3), omega), "pivot")
    states = three_d.simulate(ref, np.linspace(0.0, 0.1, 3))
    L = np.array([chain3d.angular_momentum(p, s.x, s.frames, s.v, s.omega, x) for s in states])
    assert np.ptp(L[:, 0]) > 1e-3 * np.abs(L).max()  # the horizontal part does change
    assert np.abs(L[:, 1] - L[0, 1]).max() < 1e-8 * np.abs(L).max()


def test_turned_about_the_vertical_gives_the_motion_turned():
    """Frame invariance: a clamped swing turned by 37 degrees about the vertical."""
    p = piece(soft=10)
    x, frames, holder, omega = pose_3d(p, 7)
    x = np.array([0.02, 0.01, -0.03])
    Rz = chain3d.turn_about_vertical(math.radians(37.0))
    times = np.linspace(0.0, 0.06, 3)

    def run(x, frames, holder, omega):
        ref = three_d.Reference3D(p, three_d.State3D(x, frames, np.zeros(3), omega),
                                  "clamped", holder)
        return [chain3d.end_points(s.x, s.frames, p.R) for s in three_d.simulate(ref, times)]

    plain = run(x, frames, holder, omega)
    turned = run(Rz @ x, Rz @ frames, Rz @ holder, omega @ Rz.T)
    assert np.abs(plain[-1] - plain[0]).max() > 0.005
    for a, b in zip(plain, turned, strict=True):
        assert np.abs(a @ Rz.T - b).max() < 1e-9


def test_bad_anchor_is_a_clear_error():
    p = piece()
    x, frames, holder, omega = pose_3d(p, 8)
    s = three_d.State3D(x, frames, np.zeros(3), omega)
    with pytest.raises(three_d.Integration3DError, match="unknown anchor"):
        three_d.Reference3D(p, s, "glued")
    with pytest.raises(three_d.Integration3DError, match="holder"):
        three_d.Reference3D(p, s, "clamped")


def test_joint_stiffness_is_round_and_sourced():
    """k_d = k_b = k_coil (a round stack); the twist about a is stiffer than torsion
    when the ribbon is wider than thick, as both presets' ribbons are."""
    for name in ("plastic", "steel"):
        p = preset(name)
        w, t = chain3d.ribbon(p)
        assert w > t
        K = chain3d.joint_stiffness(p)
        assert K[0] == K[1] == p.k_coil
        assert K[2] > p.k_coil


def test_joint_stiffness_is_the_half_hoops_compliance():
    """The ratio k_a / k_b is that of a flat ribbon bent into half a turn under an end
    moment, its compliance integrated along the wire (torsion GJ along the tangent,
    bending E I_1 about the radius, E I_2 about the axis); about d and b it is the same."""
    for name in ("plastic", "steel"):
        p = preset(name)
        w, t = chain3d.ribbon(p)
        nu, _ = chain3d.MATERIALS[name]
        G, E = 1.0, 2 * (1 + nu)
        r = t / w
        J = w * t**3 * (1 / 3 - 0.21 * r * (1 - r**4 / 12))  # Roark, a rectangle w x t
        stiff = np.array([G * J, E * w * t**3 / 12, E * t * w**3 / 12])  # t, n, a
        alpha = np.linspace(0.0, math.pi, 2001)
        d, b = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
        tang = np.sin(alpha)[:, None] * d + np.cos(alpha)[:, None] * b
        rad = -np.cos(alpha)[:, None] * d + np.sin(alpha)[:, None] * b
        axis = np.broadcast_to([0.0, 0.0, 1.0], tang.shape)
        dirs = np.stack([tang, rad, axis], axis=1)  # (s, 3 local, 3 in (d, b, a))
        C = np.einsum("sia,sib,i->sab", dirs, dirs, 1.0 / stiff)
        C = np.trapezoid(C, alpha, axis=0) * p.R
        assert abs(C[0, 1]) < 1e-9 * C[0, 0] and C[0, 0] == pytest.approx(C[1, 1], rel=1e-9)
        K = chain3d.joint_stiffness(p)
        assert K[2] / K[1] == pytest.approx(C[1, 1] / C[2, 2], rel=1e-9)
