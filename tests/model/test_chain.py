"""Chain mechanics against finite differences of T and V."""

import numpy as np
import pytest

from slinky3d.model import chain
from slinky3d.model.params import preset


@pytest.fixture(params=["plastic", "steel"])
def p(request):
    return preset(request.param, C_D=1e-3)


def random_state(p, seed=0):
    rng = np.random.default_rng(seed)
    q = np.concatenate([rng.normal(size=3) * 0.1, p.theta_min + rng.uniform(0, 0.3, p.N)])
    qd = rng.normal(size=p.N + chain.BASE)
    return q, qd


def test_composite_roundtrip(p):
    q, _ = random_state(p)
    Th = chain.composite(q[chain.BASE:], q[2])
    assert np.allclose(chain.torsion(Th, q[2]), q[chain.BASE:])
    # theta_1 = Theta_1 - phi_A, theta_2 = -(Theta_2 - Theta_1)
    assert np.isclose(Th[0] - q[2], q[3])
    assert np.isclose(-(Th[1] - Th[0]), q[4])


def test_geometry(p):
    q, _ = random_state(p)
    E = chain.end_points(q, p.R)
    assert E.shape == (p.N + 1, 2)
    assert np.allclose(np.linalg.norm(np.diff(E, axis=0), axis=1), 2 * p.R)
    assert np.allclose(E[0], q[:2])
    # Collapsed: all theta = 0 folds every bar back onto the previous one.
    q0 = np.zeros(p.N + chain.BASE)
    E0 = chain.end_points(q0, p.R)
    assert np.allclose(E0[::2], 0) and np.allclose(E0[1::2], [-2 * p.R, 0])


def test_mass_matrix_is_hessian_of_T(p):
    q, qd = random_state(p, 1)
    M = chain.mass_matrix(p, q)
    assert np.allclose(M, M.T)
    assert np.isclose(0.5 * qd @ M @ qd, chain.kinetic_energy(p, q, qd), rtol=1e-12)
    # Polarisation: the bilinear form of T is M.
    a, b = random_state(p, 2)[1], random_state(p, 3)[1]
    Tab = (chain.kinetic_energy(p, q, a + b) - chain.kinetic_energy(p, q, a - b)) / 2
    assert np.isclose(Tab, a @ M @ b, rtol=1e-10)
    assert np.all(np.linalg.eigvalsh(M[3:, 3:]) > 0)


def test_potential_gradient_fd(p):
    q, _ = random_state(p, 4)
    for free in (False, True):
        g = chain.potential_gradient(p, q, free)
        h = 1e-6
        V = chain.potential_energy
        fd = np.array([(V(p, q + h * e, free) - V(p, q - h * e, free)) / (2 * h)
                       for e in np.eye(q.size)])
        assert np.allclose(g, fd, rtol=1e-6, atol=1e-9)


def test_velocity_products_match_lagrange(p):
    """Q_v = -(dM/dt) qd + dT/dq, both by finite differences of T."""
    q, qd = random_state(p, 5)
    Q = chain.bias_forces(p, q, qd) - chain.bias_forces(p, q, np.zeros_like(qd))
    h = 1e-6
    Mdot = (chain.mass_matrix(p, q + h * qd) - chain.mass_matrix(p, q - h * qd)) / (2 * h)
    dTdq = np.array([
        (chain.kinetic_energy(p, q + h * e, qd) - chain.kinetic_energy(p, q - h * e, qd)) / (2 * h)
        for e in np.eye(q.size)
    ])
    assert np.allclose(Q, -Mdot @ qd + dTdq, rtol=1e-5, atol=1e-7 * np.abs(Q).max())


def test_point_jacobian_fd(p):
    q, _ = random_state(p, 6)
    h = 1e-7
    for k in (1, 2, p.N // 2, p.N + 1):
        J = chain.point_jacobian(p, q, k)
        fd = np.array([
            (chain.end_points(q + h * e, p.R)[k - 1] - chain.end_points(q - h * e, p.R)[k - 1])
            / (2 * h)
            for e in np.eye(q.size)
        ]).T
        assert np.allclose(J, fd, atol=1e-7)


def test_end_velocities_are_the_rates_of_the_end_points(p):
    q, qd = random_state(p, 7)
    h = 1e-7
    fd = (chain.end_points(q + h * qd, p.R) - chain.end_points(q - h * qd, p.R)) / (2 * h)
    V = chain.end_velocities(q, qd, p.R)
    assert np.allclose(V, fd, atol=1e-6 * np.abs(fd).max())
    assert np.allclose(0.5 * (V[:-1] + V[1:]), chain.centre_velocities(q, qd, p.R))
