"""The O(N) articulated-body dynamics against the dense mass matrix, and the impact
law in its two independent implementations (recursive pivoting vs dense LCP)."""

import numpy as np
import pytest

from slinky3d.dynamics import articulated_body as aba
from slinky3d.dynamics.contacts import impact
from slinky3d.dynamics.solver import SlinkySolver
from slinky3d.model import chain
from slinky3d.model.chain import BASE
from slinky3d.model.params import preset
from slinky3d.reference import integrator as reference
from slinky3d.scene.spec import ContactSpec, EndSpec, SlinkySpec


def state(p, seed):
    rng = np.random.default_rng(seed)
    q = np.concatenate([rng.normal(size=BASE) * 0.1, p.theta_min + rng.uniform(0, 0.3, p.N)])
    return q, rng.normal(size=p.N + BASE), rng


def run_aba(p, q, qd, tau, presc, qdd_p, fext=None, arm=None, g=None):
    n = p.N
    out = np.zeros(n + BASE)
    joint_force = np.zeros(n + BASE)
    aba.aba(q, qd, tau, presc, qdd_p, np.zeros((n, 3)) if fext is None else fext,
            np.zeros(n + BASE) if arm is None else arm, p.m, p.I, p.R, p.g if g is None else g,
            out, joint_force, np.zeros((n + 1, 2)), np.zeros((n, 2)), aba.workspace(n))
    return out, joint_force


@pytest.fixture(params=["plastic", "steel"])
def p(request):
    return preset(request.param)


def test_clamped_anchor_matches_dense(p):
    q, qd, rng = state(p, 1)
    tau = rng.normal(size=p.N + BASE) * 1e-3
    tau[BASE:] -= p.k_coil * q[BASE:]
    presc = np.zeros(p.N + BASE, bool)
    presc[:BASE] = True
    acc = rng.normal(size=BASE)
    qdd_p = np.zeros(p.N + BASE)
    qdd_p[:BASE] = acc
    qdd, joint_force = run_aba(p, q, qd, tau, presc, qdd_p)
    M = chain.mass_matrix(p, q)
    Q = chain.bias_forces(p, q, qd) + tau
    Q[BASE:] += p.k_coil * q[BASE:]  # the springs are in tau here
    F, P = np.arange(BASE, p.N + BASE), np.arange(BASE)
    ref = np.linalg.solve(M[np.ix_(F, F)], Q[F] - M[np.ix_(F, P)] @ acc)
    assert np.allclose(qdd[F], ref, rtol=1e-9, atol=1e-9 * np.abs(ref).max())
    # the anchor reaction: what the prescribed joints must supply
    full = np.concatenate([acc, ref])
    reaction = (M @ full - (Q - tau))[P]
    assert np.allclose(joint_force[P], reaction, rtol=1e-8, atol=1e-10)


def test_free_slinky_and_point_force_match_dense(p):
    q, qd, rng = state(p, 2)
    presc = np.zeros(p.N + BASE, bool)
    presc[BASE] = True  # theta_1 frozen: no holder
    tau = np.zeros(p.N + BASE)
    tau[BASE + 1:] = -p.k_coil * q[BASE + 1:]
    fext = np.zeros((p.N, 3))
    E = chain.end_points(q, p.R)
    k = p.N // 3
    aba.point_force(E, k, 0.3, -0.2, fext)
    qdd, _ = run_aba(p, q, qd, tau, presc, np.zeros(p.N + BASE), fext=fext)
    M = chain.mass_matrix(p, q)
    Q = chain.bias_forces(p, q, qd, free_anchor=True)
    Q += chain.point_jacobian(p, q, k + 1).T @ np.array([0.3, -0.2])
    F = np.r_[0:BASE, BASE + 1:p.N + BASE]
    ref = np.linalg.solve(M[np.ix_(F, F)], Q[F])
    assert np.allclose(qdd[F], ref, rtol=1e-9, atol=1e-9 * np.abs(ref).max())


def test_armature_solves_implicit_damping(p):
    """(M + h C) x = f with the damping's h C_D on each joint's diagonal."""
    q, _, rng = state(p, 3)
    presc = np.zeros(p.N + BASE, bool)
    presc[:BASE] = True
    f = rng.normal(size=p.N + BASE) * 1e-4
    arm = np.zeros(p.N + BASE)
    arm[BASE:] = 0.7e-3 * 2e-3
    x, _ = run_aba(p, q, np.zeros(p.N + BASE), f, presc, np.zeros(p.N + BASE), arm=arm, g=0.0)
    M = chain.mass_matrix(p, q)[BASE:, BASE:] + np.diag(arm[BASE:])
    assert np.allclose(M @ x[BASE:], f[BASE:], rtol=1e-9, atol=1e-12)


def test_compiled_energy_matches_chain(p):
    q, qd, _ = state(p, 4)
    n = p.N
    for free in (False, True):
        e = aba.energy(q, qd, p.m, p.I, p.R, p.g, p.k_coil, BASE + 1 if free else BASE,
                       np.zeros((n + 1, 2)), np.zeros((n, 2)), aba.workspace(n))
        assert np.isclose(e, chain.energy(p, q, qd, free), rtol=1e-12)


def touching_state(p, free: bool, seed: int):
    """Random velocities with a block of coils touching, several of them closing."""
    q, qd, rng = state(p, seed)
    n = p.N
    idx = BASE + np.arange(n // 2, n // 2 + 12)
    q[idx] = p.theta_min
    qd[idx] = rng.normal(size=idx.size) - 0.5
    if free:
        qd[BASE] = 0.0
    else:
        qd[:BASE] = 0.0
    return q, qd, idx


def spec_for(p, free, q):
    return SlinkySpec(params=p, anchor=EndSpec("free" if free else "held", 0.0 if free else
                                               float("inf")),
                      far=EndSpec("free", 0.0), q0=q, contact=ContactSpec())


@pytest.mark.parametrize("free", [False, True])
def test_impact_law_both_implementations(p, free):
    """e = 0 impact over a block of touching coils, solved together: no closing rate
    afterwards, zero rate where the impulse acts, energy lost not gained, a free
    Slinky's momentum unchanged; the recursive solve equals the dense LCP."""
    q, qd, idx = touching_state(p, free, 7)
    before_T = chain.kinetic_energy(p, q, qd)
    # compiled solver
    s = SlinkySolver(spec_for(p, free, q), 1e-3)
    s.q[:], s.qd[:] = q, qd
    s.locked[:] = False
    impact(s.q, s.qd, s.locked, s.par, s.modes, s.work, s.cnt)
    # dense reference
    r = reference.ReferenceSolver(spec_for(p, free, q))
    r.s.q, r.s.qd = q.copy(), qd.copy()
    r.s.locked[:] = False
    r._impact()
    for v in (s.qd, r.s.qd):
        assert v[idx].min() >= -1e-9, "a touching coil still closes"
        assert chain.kinetic_energy(p, q, v) <= before_T + 1e-15
        dv = v - qd
        # the velocity jump is M^-1 G^T lam with lam >= 0 on the touching joints only
        M = chain.mass_matrix(p, q)
        F = ~r._prescribed()
        imp = (M @ dv)[F]
        joints = np.flatnonzero(F)
        off = ~np.isin(joints, idx)
        assert np.abs(imp[off]).max() < 1e-9 * max(np.abs(imp).max(), 1e-30)
        lam = imp[~off]
        assert lam.min() >= -1e-12
        # complementarity: impulse only where the rate ends at zero
        rates = v[joints[~off]]
        assert np.abs(lam * rates).max() < 1e-12
    assert np.allclose(s.qd, r.s.qd, atol=1e-9)
    if free:
        # linear momentum of the whole Slinky
        mom = [p.m * chain.centre_velocities(q, v, p.R).sum(axis=0) for v in (qd, s.qd)]
        assert np.allclose(mom[0], mom[1], atol=1e-12)
    assert s.impacts == 1


def test_branch_free_sincos_matches_libm():
    """The vectorizable cos/sin used by the kinematics agrees with libm to rounding
    over the angles a spun Slinky can reach."""
    x = np.random.default_rng(7).uniform(-1e4, 1e4, 20000)
    x[:9] = [0.0, np.pi / 4, np.pi / 2, np.pi, -np.pi / 2, 1e-300, -0.7853981633974483,
             2.356194490192345, 3.9269908169872414]
    c, s = aba._sincos_many(x)
    assert np.max(np.abs(c - np.cos(x))) < 5e-16
    assert np.max(np.abs(s - np.sin(x))) < 5e-16
